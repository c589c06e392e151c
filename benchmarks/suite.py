"""The benchmark families in report order, and one run of them with its context (date,
cores, the yardstick), at the `smoke` scale (seconds, inside the test command) or `full`."""
import datetime
import os
import platform

from bark_vm.blas import BLAS_THREADS

from . import BLAS_PINNED_IN_TIME, chains, fleet, kernels, metg, roundtrip, stages, sweeps

FAMILIES = {"roundtrip": roundtrip.measure, "rounds": stages.measure,
            "chain": chains.measure, "sweep": sweeps.measure, "kernel": kernels.measure,
            "metg": metg.measure, "fleet": fleet.measure}
SCALES = ("smoke", "full")


def context(scale: str) -> dict:
    """The run's circumstances: the date, the cores, and the BLAS threads of the executor
    timed in-process (whether the pin came before numpy's import, so took effect)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"date": datetime.date.today().isoformat(), "scale": scale, "cores": cores,
            "cpu_count": os.cpu_count(), "python": platform.python_version(),
            "machine": platform.machine(),
            "blas_threads": {n: os.environ.get(n) for n in BLAS_THREADS},
            "blas_pinned_before_numpy": BLAS_PINNED_IN_TIME}


def yardstick_of(figures) -> float | None:
    return next((f.value for f in figures if f.name == "sweep/yardstick"), None)
