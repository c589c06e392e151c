"""The benchmark families in report order, and one run of them with its context (date,
cores, the yardstick), at the `smoke` scale (seconds, inside the test command) or `full`."""
import datetime
import os
import platform

from . import chains, kernels, metg, roundtrip, stages, sweeps

FAMILIES = {"roundtrip": roundtrip.measure, "rounds": stages.measure,
            "chain": chains.measure, "sweep": sweeps.measure, "kernel": kernels.measure,
            "metg": metg.measure}
SCALES = ("smoke", "full")


def context(scale: str) -> dict:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"date": datetime.date.today().isoformat(), "scale": scale, "cores": cores,
            "cpu_count": os.cpu_count(), "python": platform.python_version(),
            "machine": platform.machine()}


def yardstick_of(figures) -> float | None:
    return next((f.value for f in figures if f.name == "sweep/yardstick"), None)
