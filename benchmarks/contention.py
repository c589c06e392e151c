"""How much of this process's CPUs other work took while a family was measured: the busy
time of the CPUs this process may run on (Linux /proc/stat) less the CPU time of this
process and its descendants, over the wall time. The gate reads it to tell a busy machine
from a regression (gate.py); where /proc is not there it is not measured (None)."""
import os
import time
from dataclasses import dataclass
from pathlib import Path

from maned.interrupts import descendants

TICK_S = 1 / os.sysconf("SC_CLK_TCK")
BUSY_FIELDS = (0, 1, 2, 5, 6, 7)  # user nice system irq softirq steal (guest is in user)


@dataclass(frozen=True)
class Load:
    cores: int      # the CPUs this process may run on
    others: float   # the cores that other processes took, on average, while it measured

    @property
    def free(self) -> float:
        return self.cores - self.others


class Probe:
    """`with Probe() as p:` ... `p.load`: the Load of the block (None without /proc)."""

    def __enter__(self) -> "Probe":
        self.cpus = sorted(os.sched_getaffinity(0))
        self.load: Load | None = None
        self._start = _reading(self.cpus)
        return self

    def __exit__(self, *exc) -> None:
        end = _reading(self.cpus)
        if self._start is None or end is None:
            return
        (t0, busy0, ours0), (t1, busy1, ours1) = self._start, end
        others = max(0.0, (busy1 - busy0) - (ours1 - ours0)) / max(t1 - t0, 1e-9)
        self.load = Load(len(self.cpus), min(others, float(len(self.cpus))))


def _reading(cpus: list[int]) -> tuple[float, float, float] | None:
    """(wall, busy seconds of `cpus`, CPU seconds of this process tree), or None."""
    try:
        busy = _busy(cpus)
    except (OSError, ValueError, IndexError):
        return None
    return time.monotonic(), busy, _tree_cpu(os.getpid())


def _busy(cpus: list[int]) -> float:
    wanted = {f"cpu{c}" for c in cpus}
    total = 0
    for line in Path("/proc/stat").read_text().splitlines():
        name, *fields = line.split()
        if name in wanted:
            total += sum(int(fields[i]) for i in BUSY_FIELDS)
    return total * TICK_S


def _tree_cpu(pid: int) -> float:
    """utime + stime + the reaped children's (cutime + cstime) of `pid` and every process
    below it, in seconds."""
    total = 0
    for p in (pid, *descendants(pid, living=False)):
        try:
            fields = Path(f"/proc/{p}/stat").read_bytes().rpartition(b")")[2].split()
            total += sum(int(fields[i]) for i in (11, 12, 13, 14))
        except (OSError, ValueError, IndexError):  # it ended meanwhile
            continue
    return total * TICK_S
