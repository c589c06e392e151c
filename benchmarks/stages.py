"""Per-round overhead inside a run: a linear_regression fit whose tiny `budget:` makes one
round per iteration, per target, divided by its round count, and split into stages. The
coordinator's stages (graph build, lowering, encoding: built and compiled as a run does,
once per distinct program) and the worker's (decode and validate, execute: with the
worker's program cache) are timed in-process on the very rounds and requests of the fit (no
timing travels on the wire); transit is a device's round trip less the worker's stages;
the scheduler's share is what a whole routed run costs per round beyond all of them (the
child's start and the local init and epilogue, amortised, included)."""
import time
from contextlib import ExitStack

from bark_vm.request_handling import WorkerConfig, check_request, execute_request
from maned.interp.evaluate import evaluate
from maned.lang import ast
from maned.lowering.envelopes import encode_job
from maned.lowering.compiled import Compiler
from maned.ml.algorithms import module_for
from maned.ml.round_graphs import RoundGraphs, round_name
from maned.ml.chunking import round_spans, steps_per_round
from maned.ml.hyper import configurations
from maned.catalogue import OpContext
from maned.pipeline.intake import compile_script

from . import data
from .figures import Figure, sides_of
from .timing import alternate
from .workers import http_device, vm_device

ALGO, ROWS, BUDGET = "linear_regression", 8, 16
REPS = {"smoke": 3, "full": 5}


def rounds_of(source: str, inputs: dict):
    """(module, start, cfg, q, quant, [(first, count, graph, inputs)]) of configuration 0,
    each round's inputs the state the previous round left (as the scheduler chains them)."""
    checked = compile_script(source)
    d = checked.program.of(ast.MLDef)[0]
    q = checked.program.quant.quantres
    cfg = configurations(d.algo, [(h.key, h.value) for h in d.hypers], q, True)[0]
    module = module_for(d.algo)
    start = module.init(inputs["X"], inputs["y"], cfg, q)
    state, rounds = dict(start.state), []
    k = steps_per_round(module, round_name("fit", 0, 0), start, cfg, q)
    graphs = RoundGraphs(module, "fit", q)
    for r, (first, count) in enumerate(round_spans(start.steps, k)):
        graph = graphs.build(0, start, cfg, first, count, r)
        given = {**start.constants, **state}
        out = evaluate(graph, given, {}, OpContext(q))
        state = {key: out[key] for key in start.state}
        rounds.append((first, count, graph, given))
    return module, start, cfg, q, checked.program.quant, rounds


def _per_round(fn, n: int, reps: int) -> float:
    """Median seconds of fn() over reps (after one untimed warm-up), divided by n rounds."""
    fn()
    taken = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        taken.append(time.perf_counter() - t0)
    return sorted(taken)[len(taken) // 2] / n


def measure(scale: str) -> list[Figure]:
    reps = REPS[scale]
    inputs = data.inputs(ALGO, ROWS)
    source = data.script(ALGO, extra=f"budget: {BUDGET}")
    module, start, cfg, q, quant, rounds = rounds_of(source, inputs)
    n = len(rounds)
    graphs = [g for _, _, g, _ in rounds]
    lowered = [Compiler().lowered(g, 2)[0] for g in graphs]
    requests = [encode_job(lo, [given[p] for p in g.params], quant)
                for lo, (_, _, g, given) in zip(lowered, rounds)]
    checked = [check_request(r, WorkerConfig()) for r in requests]

    def build_all():  # as a run builds them: one RoundGraphs, each distinct program once
        shared = RoundGraphs(module, "fit", q)
        return [shared.build(0, start, cfg, f, c, i) for i, (f, c, _, _) in enumerate(rounds)]

    def compile_all():  # as a run compiles them: one Compiler, each program lowered once
        compiler = Compiler()
        return [compiler.compile(g, 2, given) for _, _, g, given in rounds]
    stage = {
        "graph build": _per_round(build_all, n, reps),
        "lowering": _per_round(compile_all, n, reps),
        "encoding": _per_round(lambda: [encode_job(lo, [given[p] for p in g.params], quant)
                                        for lo, (_, _, g, given) in zip(lowered, rounds)],
                               n, reps),
        "worker decode and validate": _per_round(
            lambda: [check_request(r, WorkerConfig()) for r in requests], n, reps),
        "execute": _per_round(lambda: [execute_request(*c) for c in checked], n, reps),
    }
    worker_side = stage["worker decode and validate"] + stage["execute"]
    coordinator = stage["graph build"] + stage["lowering"] + stage["encoding"]
    figures = [Figure("rounds/count", n, "rounds", f"{ALGO}, {ROWS} rows, budget: {BUDGET}")]
    figures += [Figure(f"rounds/stage/{name.replace(' ', '_')}", t * 1e6, "us",
                       f"per round: {name} (in-process)") for name, t in stage.items()]
    with ExitStack() as stack:
        devices = {"vm": stack.enter_context(vm_device()),
                   "http": stack.enter_context(http_device("http"))}
        sides = {"local": lambda: data.checked_run(source, inputs, {"local"}, n)}
        for target, device in devices.items():
            # the block names the alias; the lent device runs it
            routed = data.script(ALGO, (target,), extra=f"budget: {BUDGET}") + \
                data.vm_devices([target])
            sides[f"{target} run"] = (lambda routed=routed, target=target, device=device:
                                      data.checked_run(routed, inputs, {target}, n,
                                                       devices={target: device}))
            sides[f"{target} trip"] = lambda device=device: [device.run(r) for r in requests]
        s = alternate(sides, REPS[scale])
    local = s["local"].median / n
    figures.append(Figure("rounds/local/total", local * 1e6, "us",
                          "a whole local run per round (the interpreter)"))
    for target in devices:
        total, trip = s[f"{target} run"].median / n, s[f"{target} trip"].median / n
        figures += [
            Figure(f"rounds/{target}/total", total * 1e6, "us",
                   f"a whole routed run per round, {target} (the device lent, warm)"),
            Figure(f"rounds/{target}/round_trip", trip * 1e6, "us",
                   f"per round: the request through the {target} device and back"),
            Figure(f"rounds/{target}/transit", max(trip - worker_side, 0) * 1e6, "us",
                   f"per round: {target} round trip less the worker's own stages"),
            Figure(f"rounds/{target}/scheduler", max(total - coordinator - trip, 0) * 1e6,
                   "us", f"per round: the rest of a routed run on {target} (scheduling, "
                   "results, init and epilogue amortised)"),
            Figure(f"rounds/{target}/over_local", total / local, "x",
                   f"per round: routed to {target} / local", "lower",
                   sides=sides_of({f"{target} run": s[f"{target} run"], "local": s["local"]}))]
    return figures
