"""Sweep fan-out: k configurations (configuration i on alias i mod N) over 1, 2 and 4
workers, Bark VMs and bark-worker processes, and locally with --threads 1 and 2; beside
them in the same run, what a user would do instead (the same configurations through a
ProcessPoolExecutor on maned.run) and the yardstick of the parallelism the machine gave."""
import os
import secrets
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack

from bark_vm.container import worker_process

from . import data
from .figures import Figure, sides_of
from .timing import alternate
from .workers import USER
from .yardstick import parallelism

ALGO = "linear_regression"
PLAN = {"smoke": {"configs": (2,), "workers": (1, 2), "kinds": ("vm",), "rows": 8, "reps": 1},
        "full": {"configs": (2, 4, 8), "workers": (1, 2, 4), "kinds": ("vm", "http"),
                 "rows": 200, "reps": 3}}
PASS_VAR = "MANED_BENCH_PASS"


def rates(k: int) -> list[int]:
    return [2 + 3 * i for i in range(k)]


def sweep_source(k: int, aliases=(), devices: str = "") -> str:
    returns = ", ".join(f"m{i}, l{i}" for i in range(k))
    lr = "lr: [" + ", ".join(map(str, rates(k))) + "]"
    base = data.script(ALGO, aliases, returns=returns).replace("lr: 5", lr)
    return base + devices


def http_devices(workers) -> str:
    return "".join(f'device::{w.alias} {{ host = "{w.host}"; port = {w.port}; user = "{USER}"; '
                   f'pass = env("{PASS_VAR}"); }}\n' for w in workers)


def one_config(args) -> None:
    """One configuration through the API (a ProcessPoolExecutor task)."""
    lr, rows = args
    source = data.script(ALGO).replace("lr: 5", f"lr: {lr}")
    data.checked_run(source, data.inputs(ALGO, rows), {"local"})


def _run(source: str, inputs, targets: set[str], threads: int = 1):
    return lambda: data.checked_run(source, inputs, targets, threads=threads)


def measure(scale: str) -> list[Figure]:
    plan = PLAN[scale]
    inputs = data.inputs(ALGO, plan["rows"])
    yardstick = parallelism(1 if scale == "smoke" else 3)
    figures, speedups = [], []
    with ExitStack() as stack:
        http = []
        if "http" in plan["kinds"]:
            password = secrets.token_hex(16)
            before = os.environ.get(PASS_VAR)
            os.environ[PASS_VAR] = password
            stack.callback(lambda: os.environ.pop(PASS_VAR, None) if before is None
                           else os.environ.__setitem__(PASS_VAR, before))
            http = [stack.enter_context(worker_process(f"w{i}", USER, password))
                    for i in range(max(plan["workers"]))]
        pool = stack.enter_context(ProcessPoolExecutor(2))
        for k in plan["configs"]:
            sides = {"local t1": _run(sweep_source(k), inputs, {"local"}),
                     "local t2": _run(sweep_source(k), inputs, {"local"}, threads=2),
                     "process pool": lambda k=k: list(pool.map(
                         one_config, [(lr, plan["rows"]) for lr in rates(k)]))}
            for n in plan["workers"]:
                aliases = tuple(f"w{i}" for i in range(n))
                used = set(aliases[:k])  # configuration i on alias i mod n
                if "vm" in plan["kinds"]:
                    sides[f"vm x{n}"] = _run(sweep_source(k, aliases, data.vm_devices(aliases)),
                                             inputs, used)
                if http:
                    sides[f"http x{n}"] = _run(sweep_source(k, aliases, http_devices(http[:n])),
                                               inputs, used)
            s = alternate(sides, plan["reps"])
            local = s["local t1"].median
            for name, v in s.items():
                figures.append(Figure(f"sweep/{k}/{name.replace(' ', '_')}/over_local",
                                      local / v.median, "x",
                                      f"{k} configurations: local --threads 1 / {name}",
                                      "higher", parallel=name != "local t1",
                                      sides=sides_of({name: v, "local t1": s["local t1"]})))
            for kind in plan["kinds"]:
                one = s[f"{kind} x1"].median
                for n in plan["workers"][1:]:
                    speedup = one / s[f"{kind} x{n}"].median
                    figures.append(Figure(
                        f"sweep/{k}/{kind}_x{n}/over_one", speedup, "x",
                        f"{k} configurations: one {kind} worker / {n}", "higher", parallel=True,
                        sides=sides_of({f"{kind} x1": s[f"{kind} x1"],
                                        f"{kind} x{n}": s[f"{kind} x{n}"]})))
                    speedups.append((k, kind, n, speedup))
    yardstick = min(yardstick, parallelism(1 if scale == "smoke" else 3))  # and after
    figures += [Figure(f"sweep/{k}/{kind}_x{n}/of_yardstick", speedup / yardstick, "x",
                       f"{k} configurations: the speed-up of {n} {kind} workers over one, as "
                       "a share of the yardstick (1.0 = all the parallelism the machine gave)",
                       parallel=True) for k, kind, n, speedup in speedups]
    figures.append(Figure("sweep/yardstick", yardstick, "x",
                          "the parallelism the machine gave: pure-Python loops, 1 process / "
                          "2 processes, the lower of before and after the sweeps (2.0 = two "
                          "free cores)"))
    return figures
