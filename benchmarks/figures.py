"""A benchmark's result: named figures, each a value with its unit, which way is better,
whether it measures parallelism, and the machine's load while it was measured (the gate
judges a figure only on a quiet machine); a share (an efficiency) above 1 is flagged with
the reason, never reported."""
from dataclasses import asdict, dataclass, field

from .contention import Load


@dataclass(frozen=True)
class Figure:
    name: str                  # "family/what", unique in a run
    value: float | None       # None: not reached (a crossover that never happens)
    unit: str                  # "x" for a ratio, "ms", "s", "rows", ...
    about: str
    better: str | None = None  # "lower" or "higher" for a gated-worthy figure, else None
    parallel: bool = False     # needs two cores to mean anything (a speed-up)
    sides: dict = field(default_factory=dict)  # side -> {"min": s, "median": s}
    flag: str | None = None    # why value is None although measured: a sample not to trust
    load: Load | None = None   # the machine while its family ran (suite.measure), or None

    def to_json(self) -> dict:
        return asdict(self)


def sides_of(samples: dict) -> dict:
    """The Samples of a measurement as plain numbers for the record."""
    return {n: {"min": s.min, "median": s.median} for n, s in samples.items()}


def share(name: str, value: float, about: str, why_at_most_one: str) -> Figure:
    """A figure that is a share of a whole (an efficiency, 1.0 = all of it). Above 1, which
    it cannot be, the paired samples it divides disagree: no value, and a flag saying so."""
    if value <= 1:
        return Figure(name, value, "x", about)
    return Figure(name, None, "x", about, flag=(
        f"flagged: came out {value:.3g}, above 1, which it cannot be ({why_at_most_one}): the "
        "sample is not trustworthy, e.g. the machine's load changed between the paired runs"))
