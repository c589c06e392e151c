"""Sweep fan-out: k configurations (configuration i on alias i mod N) over 1, 2 and 4
workers, Bark VMs and bark-worker processes, and locally with --threads 1 and 2; beside
them in the same run, what a user would do instead (the same configurations through a
ProcessPoolExecutor on maned.run) and the yardstick of the parallelism the machine gave.
Then the sweep of DESIGN §6's data that issue 12's goals name (`sweep/s6/`): four learning
rates, 3,000 iterations, locally with 1 and 2 threads, on 1 and 2 VMs and 2 workers."""
import os
import secrets
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import replace

from bark_vm.container import worker_process

from . import data
from .figures import Figure, share, sides_of
from .timing import alternate
from .workers import USER
from .yardstick import parallelism

ALGO = "linear_regression"
PLAN = {"smoke": {"configs": (2,), "workers": (1, 2), "kinds": ("vm",), "rows": 8, "reps": 3},
        "full": {"configs": (2, 4, 8), "workers": (1, 2, 4), "kinds": ("vm", "http"),
                 "rows": 200, "reps": 3}}
PASS_VAR = "MANED_BENCH_PASS"
S6 = {"smoke": {"iters": 300, "reps": 1}, "full": {"iters": 3000, "reps": 5}}
S6_HEAD = (data.HEAD + "in::X = [[100,200],[200,100],[300,500],[400,200],[500,800],[600,300],"
           "[0,100],[200,700]];\nin::y = [[300],[600],[400],[900],[500],[1200],[200],[0]];\n")
S6_RATES = (1, 2, 5, 10)


def rates(k: int) -> list[int]:
    return [2 + 3 * i for i in range(k)]


def sweep_source(k: int, aliases=(), devices: str = "") -> str:
    returns = ", ".join(f"m{i}, l{i}" for i in range(k))
    lr = "lr: [" + ", ".join(map(str, rates(k))) + "]"
    base = data.script(ALGO, aliases, returns=returns).replace("lr: 5", lr)
    return base + devices


def s6_source(iters: int, aliases=(), devices: str = "") -> str:
    """DESIGN §6's script with four learning rates and `iters` iterations."""
    route = f" @device({', '.join(aliases)})" if aliases else ""
    returns = ", ".join(f"m{i}, l{i}" for i in range(len(S6_RATES)))
    return (S6_HEAD + devices + f"calc::ml::linear_regression fit(X, y){route} {{\n"
            f"    iters: {iters},\n    lr: [{', '.join(map(str, S6_RATES))}],\n"
            f"    features: 2\n}} return {returns};\n")


def measure_s6(scale: str, http) -> list[Figure]:
    """The §6 sweep's sides, and the ratios issue 12 sets goals on."""
    plan = S6[scale]
    iters = plan["iters"]
    run = (lambda source, targets, threads=1: lambda: data.checked_run(
        source, {}, targets, threads=threads))
    vm = (lambda n: s6_source(iters, tuple(f"w{i}" for i in range(n)),
                              data.vm_devices([f"w{i}" for i in range(n)])))
    sides = {"local t1": run(s6_source(iters), {"local"}),
             "local t2": run(s6_source(iters), {"local"}, 2),
             "vm x1": run(vm(1), {"w0"}), "vm x2": run(vm(2), {"w0", "w1"})}
    if len(http) >= 2:
        sides["http x2"] = run(s6_source(iters, ("w0", "w1"), http_devices(http[:2])),
                               {"w0", "w1"})
    s = alternate(sides, plan["reps"])
    pairs = [("local_t2/over_local_t1", "local t1", "local t2", "--threads 2 over 1"),
             ("vm_x1/over_local_t1", "local t1", "vm x1", "one VM over local --threads 1"),
             ("vm_x2/over_local_t1", "local t1", "vm x2", "two VMs over local --threads 1"),
             ("vm_x2/over_vm_x1", "vm x1", "vm x2", "two VMs over one")]
    if "http x2" in s:
        pairs.append(("http_x2/over_vm_x2", "vm x2", "http x2",
                      "two bark-worker processes against two VMs (1 = as fast)"))
    return [Figure(f"sweep/s6/{name}", s[slow].median / s[fast].median, "x",
                   f"DESIGN §6's data, lr {list(S6_RATES)}, {iters} iterations: {about} "
                   f"(speed-up, higher is better)", "higher", parallel=True,
                   sides=sides_of({slow: s[slow], fast: s[fast]}))
            for name, slow, fast, about in pairs]


def password_in_env(stack) -> str:
    """A fresh password in PASS_VAR, which the scripts' devices read (`env(...)`); the
    variable is put back as it was when `stack` closes."""
    password, before = secrets.token_hex(16), os.environ.get(PASS_VAR)
    os.environ[PASS_VAR] = password
    stack.callback(lambda: os.environ.pop(PASS_VAR, None) if before is None
                   else os.environ.__setitem__(PASS_VAR, before))
    return password


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


def of_yardstick(speedups, yardstick: float) -> list[Figure]:
    """Each (k, kind, n, speed-up over one worker) as a share of the yardstick, flagged
    above 1 (the yardstick is taken before and after the sweeps, not with them)."""
    return [replace(share(f"sweep/{k}/{kind}_x{n}/of_yardstick", speedup / yardstick,
                          f"{k} configurations: the speed-up of {n} {kind} workers over one, "
                          "as a share of the yardstick (1.0 = all the parallelism the machine "
                          "gave)", "the yardstick is all the parallelism the machine gave"),
                    parallel=True) for k, kind, n, speedup in speedups]


def measure(scale: str) -> list[Figure]:
    plan = PLAN[scale]
    inputs = data.inputs(ALGO, plan["rows"])
    yardstick = parallelism(1 if scale == "smoke" else 3)
    figures, speedups = [], []
    with ExitStack() as stack:
        http = []
        if "http" in plan["kinds"]:
            password = password_in_env(stack)
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
        figures += measure_s6(scale, http)
    yardstick = min(yardstick, parallelism(1 if scale == "smoke" else 3))  # and after
    figures += of_yardstick(speedups, yardstick)
    figures.append(Figure("sweep/yardstick", yardstick, "x",
                          "the parallelism the machine gave: pure-Python loops, 1 process / "
                          "2 processes, the lower of before and after the sweeps (2.0 = two "
                          "free cores)"))
    return figures
