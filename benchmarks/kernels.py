"""The worker's numpy executor against the pure-Python reference, per op family, on the same
one-op flow and the same integers: matmul, elementwise, reductions, conv2d. The reference
is sized down where it would take minutes (matmul above 128 runs on the executor alone).
And the exact matmul against its floors: a skinny product against numpy's uint32 loop, a
square one against the limb scheme's three float64 BLAS products."""
import random
import time

import numpy as np

from bark_vm.executor import execute
from bark_vm.executor.linalg import matmul as matmul_kernel
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


SKINNY = {"smoke": (10_000,), "full": (10_000, 100_000)}  # rows of [rows, 3]·[3, 1]
FLOOR_FROM = 64  # square matmuls from this size are measured against the limb scheme's floor


def _floors(scale: str) -> list[Figure]:
    """The exact matmul against its floors, one run (issue 35): a skinny product (gradient
    descent's X·w) against numpy's uint32 loop alone, and a square one against the three
    float64 BLAS products the limb scheme cannot do without."""
    figures = []
    rng = np.random.default_rng(35)
    shapes = [("skinny", rows, (rows, 3, 1)) for rows in SKINNY[scale]] + [
        ("matmul", n, (n, n, n)) for n in SIZES[scale]["matmul"] if n >= FLOOR_FROM]
    for family, size, (m, k, n) in shapes:
        a = rng.integers(-2 ** 31, 2 ** 31, (m, k)).astype(np.int32)
        b = rng.integers(-2 ** 31, 2 ** 31, (k, n)).astype(np.int32)
        kernel = lambda a=a, b=b: matmul_kernel(0, a, b)  # noqa: E731
        if family == "skinny":
            floor = lambda a=a, b=b: np.matmul(a.view(np.uint32), b.view(np.uint32))  # noqa
            what = "numpy's uint32 loop"
        else:
            fa, fb = a.astype(np.float64), b.astype(np.float64)
            floor = lambda fa=fa, fb=fb: [fa @ fb for _ in range(3)]  # noqa: E731
            what = "three float64 BLAS products"
        (run, times), (low, low_times) = batched(kernel), batched(floor)
        s = alternate({"executor": run, "floor": low}, REPS[scale])
        figures.append(Figure(f"kernel/{family}/{size}/over_floor",
                              (s["executor"].median / times) / (s["floor"].median / low_times),
                              "x", f"[{m},{k}]·[{k},{n}] on the executor / {what}",
                              sides=sides_of(s)))
    return figures


def measure(scale: str) -> list[Figure]:
    figures = _floors(scale)
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
                # not gated (DESIGN §14): it would grow as the reference got slower
                figures.append(Figure(f"kernel/{family}/{n}/speedup",
                                      ratio(s["reference"], s["executor"]), "x",
                                      f"{family} at n={n}: reference / executor",
                                      sides=sides_of(s)))
    return figures
