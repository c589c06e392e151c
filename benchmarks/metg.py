"""METG(50 %) per transport (Task Bench's metric): the smallest per-job compute at which a
routed job still spends half its time computing. A job is an n×n matmul; its compute is
the executor's time in-process, its cost the device's round trip; efficiency = compute /
round trip. METG is the compute of the smallest n measured that reaches 50 %. Both sides
run BLAS on one thread (maned_bench pins its own, bark-worker and the VM theirs), and an
efficiency above 1, which cannot be, is flagged, never reported."""
from contextlib import ExitStack

from bark_vm.request_handling import WorkerConfig, handle
from bark_vm.wire.constants import SYNC_LIMIT

from .figures import Figure, share
from .kernels import batched, executor_of, one_op
from .timing import alternate
from .workers import http_device, vm_device

SIZES = {"smoke": (8, 64), "full": (8, 16, 32, 64, 128, 256, 384, 512)}
REPS = {"smoke": 3, "full": 7}


def measure(scale: str) -> list[Figure]:
    with ExitStack() as stack:
        devices = {"vm": stack.enter_context(vm_device()),
                   "http": stack.enter_context(http_device())}
        points = {t: [] for t in devices}
        for n in SIZES[scale]:
            mnpk = one_op("matmul", n)[3]
            answer = handle(mnpk, WorkerConfig())
            compute, k = batched(executor_of(mnpk))
            sides = {"compute": compute}
            sides.update({t: (lambda d=d: d.run(mnpk)) for t, d in devices.items()})
            for t in devices:  # each answers what the worker's pipeline answers, first
                if sides[t]() != answer:
                    raise RuntimeError(f"{t} answered a {n}x{n} matmul differently")
            s = alternate(sides, REPS[scale])
            for t in devices:
                points[t].append((n, s["compute"].median / k, s[t].median, len(mnpk)))
    return figures_of(points)


def figures_of(points: dict) -> list[Figure]:
    """Each transport's efficiency per size and its METG(50%), from rows (n, compute s,
    round trip s, request bytes); an efficiency above 1 is flagged, never reported."""
    figures = []
    for t, rows in points.items():
        for n, compute, trip, size in rows:
            figures.append(_efficiency(t, n, compute, trip, size))
        reached = next(((n, c) for n, c, trip, _ in rows if 0.5 <= c / trip <= 1), None)
        figures.append(Figure(f"metg/{t}/metg50", reached[1] * 1e6 if reached else None, "us",
                              f"{t}: METG(50%), the compute of the smallest matmul reaching 50% "
                              f"efficiency (n={reached[0] if reached else 'none measured'})",
                              "lower" if reached else None))
    return figures


def _efficiency(t: str, n: int, compute: float, trip: float, size: int) -> Figure:
    """compute / round trip, flagged above 1 (the trip holds the compute)."""
    mode = ("; async (over the 64 KiB sync limit): submit, poll, read"
            if t == "http" and size >= SYNC_LIMIT else "")
    return share(f"metg/{t}/efficiency/{n}", compute / trip,
                 f"{t}: a {n}x{n} matmul's compute ({compute * 1e6:.0f} us) / its round trip "
                 f"({trip * 1e6:.0f} us, {size} bytes{mode})",
                 "the round trip holds the compute; or the two sides ran BLAS on different "
                 "thread counts")
