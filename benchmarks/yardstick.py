"""The parallelism the machine gave at the moment of a run (DESIGN §9): the same pure-Python
loops in a 1-process and a 2-process pool. About 2.0 on two free cores, 1.0 on one."""
from concurrent.futures import ProcessPoolExecutor

from .timing import alternate

LOOP = 2_000_000


def spin(n: int = LOOP) -> int:
    """A CPU-bound loop the interpreter cannot shortcut."""
    total = 0
    for i in range(n):
        total = (total + i * i) % 1_000_003
    return total


def parallelism(reps: int = 3, loop: int = LOOP) -> float:
    """Two loops' worth of work in one process versus two: t(1 process) / t(2 processes)."""
    with ProcessPoolExecutor(1) as one, ProcessPoolExecutor(2) as two:
        samples = alternate({
            "one": lambda: list(one.map(spin, [loop, loop])),
            "two": lambda: list(two.map(spin, [loop, loop]))}, reps)
    return samples["one"].median / samples["two"].median


TWO_CORES = 1.6  # a yardstick at least this high: the run had two cores to give
