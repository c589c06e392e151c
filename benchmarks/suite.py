"""The benchmark families in report order, one family measured with the machine's load
beside it, and a run's context (date, cores, the yardstick), at the `smoke` scale (seconds,
inside the test command) or `full`."""
import datetime
import os
import platform
from dataclasses import replace

from bark_vm.blas import BLAS_THREADS

from . import (BLAS_PINNED_IN_TIME, chains, fleet, kernels, local, metg, roundtrip, stages,
               survival, sweeps)
from .contention import Probe
from .figures import Figure
from .timing import slowed

FAMILIES = {"local": local.measure, "roundtrip": roundtrip.measure, "rounds": stages.measure,
            "chain": chains.measure, "sweep": sweeps.measure, "kernel": kernels.measure,
            "metg": metg.measure, "fleet": fleet.measure, "survive": survival.measure}
SCALES = ("smoke", "full")
SLOW_HOOK = "MANED_BENCH_SLOW"  # FAMILY/SIDE=FACTOR[,...]: a side slowed on purpose (timing)


def measure(family: str, scale: str) -> list[Figure]:
    """One family's figures, each stamped with the machine's load while the family ran."""
    with Probe() as probe, slowed(slowed_sides(family)):
        figures = FAMILIES[family](scale)
    return [replace(f, load=probe.load) for f in figures]


def slowed_sides(family: str) -> dict[str, float]:
    """The sides of `family` that MANED_BENCH_SLOW slows, with their factors (a malformed
    entry is a ValueError naming it)."""
    out = {}
    for entry in filter(None, os.environ.get(SLOW_HOOK, "").split(",")):
        where, _, factor = entry.partition("=")
        fam, _, side = where.partition("/")
        try:
            value = float(factor)
        except ValueError:
            value = 0.0
        if not (fam and side and value >= 1):
            raise ValueError(f"{SLOW_HOOK}: '{entry}' is not FAMILY/SIDE=FACTOR (a factor of "
                             "at least 1)")
        if fam == family:
            out[side] = value
    return out


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
