"""How every figure is timed (DESIGN §9): the compared sides alternate within one run, each
repeated, and a side is summarised by its minimum and median; a figure is a ratio. A side
can be slowed on purpose (`slowed`, the MANED_BENCH_SLOW hook of suite.measure): each of
its samples then really takes FACTOR times as long, to show that the gate catches it."""
import statistics
import time
from contextlib import contextmanager
from dataclasses import dataclass

_slowed: dict[str, float] = {}  # side name -> factor, while `slowed` is in force


@contextmanager
def slowed(factors: dict[str, float]):
    """Within: every sample of a side named in `factors` takes that factor of its time (it
    sleeps the rest, inside the timed span)."""
    global _slowed
    before, _slowed = _slowed, dict(factors)
    try:
        yield
    finally:
        _slowed = before


@dataclass(frozen=True)
class Samples:
    seconds: tuple[float, ...]

    @property
    def min(self) -> float:
        return min(self.seconds)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def alternate(sides: dict, reps: int, warmup: int = 1,
              clock=time.perf_counter) -> dict[str, Samples]:
    """Each side (a callable) once per repetition, in turn, the order rotated every
    repetition so no side always runs first; `warmup` untimed rounds before. `clock` reads
    the seconds a side takes (wall time; the children's CPU time for process sides)."""
    names = list(sides)
    for _ in range(warmup):
        for name in names:
            sides[name]()
    taken: dict[str, list[float]] = {n: [] for n in names}
    for r in range(reps):
        for name in names[r % len(names):] + names[:r % len(names)]:
            t0, w0 = clock(), time.perf_counter()
            sides[name]()
            if name in _slowed:  # slept inside the span: wall time; CPU time is charged
                spent = clock() - t0
                time.sleep((_slowed[name] - 1) * (time.perf_counter() - w0))
                taken[name].append(spent * _slowed[name])
            else:
                taken[name].append(clock() - t0)
    return {n: Samples(tuple(s)) for n, s in taken.items()}


def ratio(top: Samples, bottom: Samples) -> float:
    """median(top) / median(bottom)."""
    return top.median / bottom.median
