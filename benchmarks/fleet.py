"""A simulated fleet: N real bark-worker processes, each holding every job to a round time
(`--hold-ms`, a sleep: a slower machine elsewhere that costs this one no CPU), and a sweep
of 2N configurations fanned over them (configuration i on alias i mod N), so every worker
runs two chains back to back. What limits such a fleet is the coordinator's cost per round,
and that is what this family shows, at two round times:

    efficiency = ideal / measured, ideal = the rounds one worker runs x the round time
    the coordinator's CPU per round = its user + system time (getrusage) / the rounds
    the workers' CPU per round = theirs (/proc/PID/stat) / the rounds

On this machine the workers' CPU is real (each still decodes and runs its job before it
sleeps out the hold): coordinator and workers together may need more than its cores at
the larger N, which the two CPU figures show."""
import os
import resource
import statistics
from contextlib import ExitStack

from bark_vm.container import worker_process

from . import data
from .figures import Figure, share, sides_of
from .sweeps import http_devices, password_in_env
from .timing import alternate
from .workers import USER

ALGO = "linear_regression"
ROWS = 8
CHAINS_PER_WORKER = 2
WARMUP = 1  # untimed runs of each side before the timed ones
PLAN = {"smoke": {"workers": (1, 2, 4), "holds_ms": (10,), "reps": 1},
        "full": {"workers": (1, 2, 4, 8, 16, 32, 64), "holds_ms": (10, 2), "reps": 3}}
# iterations per configuration at `budget: 64`: about half a second of rounds per chain
# pair at either round time (10 ms: 24 rounds a chain; 2 ms: 116), a few in the smoke run
ITERS = {"smoke": {10: 40}, "full": {10: 160, 2: 800}}


def fleet_source(k: int, iters: int, aliases: tuple[str, ...], devices: str) -> str:
    """The sweep of k learning rates, `iters` iterations each, fanned over `aliases`."""
    returns = ", ".join(f"m{i}, l{i}" for i in range(k))
    lr = "lr: [" + ", ".join(str(1 + i % 9) for i in range(k)) + "]"
    text = data.script(ALGO, aliases, returns=returns)
    text = text.replace("lr: 5", lr).replace("iters: 400", f"iters: {iters}")
    return text.replace("features: 2", "features: 2, budget: 64") + devices


class Side:
    """One fleet size's run, timed by `alternate`; it keeps the coordinator's CPU of each
    run and the round jobs it made (checked: every one on its alias, configuration i on
    alias i mod N)."""

    def __init__(self, source: str, inputs, aliases: tuple[str, ...], pids: list[int]):
        self.source, self.inputs, self.aliases, self.pids = source, inputs, aliases, pids
        self.cpu: list[float] = []
        self.worker_cpu: list[float] = []
        self.rounds = 0

    def __call__(self) -> None:
        from maned.ml.round_graphs import config_of

        workers = _cpu_of(self.pids)
        before = resource.getrusage(resource.RUSAGE_SELF)
        rounds = data.checked_run(self.source, self.inputs)
        after = resource.getrusage(resource.RUSAGE_SELF)
        self.worker_cpu.append(_cpu_of(self.pids) - workers)
        wrong = [j for j in rounds if j.target != self.aliases[config_of(j.flow) % len(
            self.aliases)]]
        if wrong:
            raise RuntimeError(f"a fleet run put {wrong[0].flow} on {wrong[0].target}")
        self.rounds = len(rounds)
        self.cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)


def _cpu_of(pids: list[int]) -> float:
    """The user + system seconds these processes have used (Linux /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rpartition(b")")[2].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
    return total / ticks


def measure(scale: str) -> list[Figure]:
    plan = PLAN[scale]
    inputs = data.inputs(ALGO, ROWS)
    figures = []
    for hold in plan["holds_ms"]:
        with ExitStack() as stack:
            password = password_in_env(stack)
            workers = [stack.enter_context(worker_process(f"w{i}", USER, password,
                                                          ("--hold-ms", str(hold))))
                       for i in range(max(plan["workers"]))]
            sides = {}
            for n in plan["workers"]:
                aliases = tuple(w.alias for w in workers[:n])
                source = fleet_source(CHAINS_PER_WORKER * n, ITERS[scale][hold], aliases,
                                      http_devices(workers[:n]))
                sides[f"x{n}"] = Side(source, inputs, aliases,
                                      [w.handle.pid for w in workers[:n]])
            samples = alternate(sides, plan["reps"], WARMUP)
            for side in sides.values():  # the CPU of the untimed warm-up run is not a sample
                side.cpu, side.worker_cpu = side.cpu[WARMUP:], side.worker_cpu[WARMUP:]
        figures += _figures(hold, plan["workers"], sides, samples)
    return figures


def _figures(hold: int, ns, sides: dict, samples: dict) -> list[Figure]:
    out = []
    for n in ns:
        side, s = sides[f"x{n}"], samples[f"x{n}"]
        per_chain = side.rounds // (CHAINS_PER_WORKER * n)
        ideal = CHAINS_PER_WORKER * per_chain * hold / 1000
        out.append(share(f"fleet/h{hold}/x{n}/efficiency", ideal / s.median,
                         f"{n} workers holding each round {hold} ms, {CHAINS_PER_WORKER * n} "
                         f"configurations of {per_chain} rounds: ideal ({ideal:.3g} s, each "
                         "worker busy all the time) / measured (1 = no coordinator cost)",
                         "the ideal is the time the holds alone take"))
        out[-1] = Figure(**{**out[-1].to_json(), "better": "higher",
                            "sides": sides_of({f"x{n}": s})})
        out.append(Figure(f"fleet/h{hold}/x{n}/cpu_per_round",
                          statistics.median(side.cpu) / side.rounds * 1e6, "us", f"{n} workers, {hold} ms rounds: the coordinator's CPU "
                          "(user + system, this process) per round job", "lower"))
        out.append(Figure(f"fleet/h{hold}/x{n}/worker_cpu_per_round",
                          statistics.median(side.worker_cpu) / side.rounds * 1e6, "us",
                          f"{n} workers, {hold} ms rounds: the workers' CPU (user + system, "
                          "all of them) per round job, which a real fleet spends elsewhere"))
    return out
