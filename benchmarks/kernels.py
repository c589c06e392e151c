"""The worker's numpy executor against the pure-Python reference, per op family, on the same
one-op flow and the same integers: matmul, elementwise, reductions, conv2d. The reference
is sized down where it would take minutes (matmul above 128 runs on the executor alone)."""
import random
import time

import numpy as np

from bark_vm.executor import execute
from bark_vm.wire.envelope import decode_request
from bark_vm.wire.ir import parse_module
from maned.interp.evaluate import evaluate
from maned.lowering.envelopes import encode_job
from maned.lowering.lower import lower
from maned.catalogue import OpContext
from maned.pipeline.intake import compile_script
from maned.tensor import Tensor

from .figures import Figure, sides_of
from .timing import alternate, ratio

HEAD = "mnd::quantmax=1000;\nmnd::quantmin=-1000;\nmnd::quantres=0;\n"
FAMILIES = {  # name -> (flow body, operand shapes by size n)
    "matmul": ("a b matmul r =", lambda n: [(n, n), (n, n)]),
    "elementwise": ("a b add c = c b mul r =", lambda n: [(n, n), (n, n)]),
    "reduction": ("a {axis: 1} tensor_sum r =", lambda n: [(n, n)]),
    "conv2d": ("a b {stride: 1, padding: 1} conv2d r =", lambda n: [(n, n), (3, 3)]),
}
SIZES = {"smoke": {"matmul": (16,), "elementwise": (64,), "reduction": (64,), "conv2d": (16,)},
         "full": {"matmul": (16, 32, 64, 128, 256, 512, 1024), "elementwise": (64, 256),
                  "reduction": (64, 256), "conv2d": (16, 64)}}
REFERENCE_UP_TO = {"matmul": 128}  # larger: the executor alone (the reference takes minutes)
REPS = {"smoke": 3, "full": 5}
BATCH_S = 0.005


def one_op(family: str, n: int):
    """(graph, operand names, tensors, MNPK request) of the one-op flow at size n."""
    body, shapes = FAMILIES[family]
    names = ["a", "b"][:len(shapes(n))]
    checked = compile_script(HEAD + f"calc::lambda_flow f({', '.join(names)}) {{\n    {body}\n}}"
                             " return r;\n")
    graph = checked.graphs["f"]
    rng = random.Random(n)
    tensors = [Tensor(s, tuple(rng.randint(-50, 50) for _ in range(s[0] * s[1])))
               for s in shapes(n)]
    return graph, names, tensors, encode_job(lower(graph, 2), tensors, checked.program.quant)


def executor_of(mnpk: bytes):
    """Run the request's module on the numpy executor (no decoding in the timed call)."""
    request = decode_request(mnpk)
    module = parse_module(request.ir, 2)
    arrays = [np.array(d, dtype=np.int32).reshape(s) for s, d in request.entries]
    return lambda: execute(module, arrays, request.quant.quantres)


def _one_op(family: str, n: int):
    """(run the executor, run the reference) on one one-op flow at size n, each checked
    once to give the same integers as the other."""
    graph, names, tensors, mnpk = one_op(family, n)
    executor = executor_of(mnpk)
    reference = lambda: evaluate(graph, dict(zip(names, tensors)), {}, OpContext(0))  # noqa: E731
    if n <= REFERENCE_UP_TO.get(family, n):
        got, want = executor()[0], reference()["r"]
        if tuple(int(v) for v in got.reshape(-1)) != want.data:
            raise RuntimeError(f"{family} at n={n}: the executor and the reference differ")
    return executor, reference


def batched(fn, at_least_s: float = BATCH_S):
    """fn repeated enough times per call to take about `at_least_s` (a sample of a 10 us
    kernel is then not one timer tick); (the batch, its size)."""
    t0 = time.perf_counter()
    fn()
    times = max(1, int(at_least_s / max(time.perf_counter() - t0, 1e-7)))

    def batch():
        for _ in range(times):
            fn()
    return batch, times


def measure(scale: str) -> list[Figure]:
    figures = []
    for family, sizes in SIZES[scale].items():
        for n in sizes:
            executor, reference = _one_op(family, n)
            with_reference = n <= REFERENCE_UP_TO.get(family, n)
            (run, k) = batched(executor)
            sides = {"executor": run}
            if with_reference:  # the same number of calls on both sides
                sides["reference"] = lambda reference=reference, k=k: [reference()
                                                                       for _ in range(k)]
            s = alternate(sides, REPS[scale] if with_reference else 3)
            figures.append(Figure(f"kernel/{family}/{n}/executor",
                                  s["executor"].median / k * 1000, "ms",
                                  f"{family} at n={n} on the numpy executor (median)",
                                  sides=sides_of(s)))
            if with_reference:
                figures.append(Figure(f"kernel/{family}/{n}/speedup",
                                      ratio(s["reference"], s["executor"]), "x",
                                      f"{family} at n={n}: reference / executor", "higher",
                                      sides=sides_of(s)))
    return figures
