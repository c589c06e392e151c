"""A benchmark's result: named figures, each a value with its unit, which way is better,
and whether it measures parallelism (gated only when the machine gave two cores)."""
from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Figure:
    name: str                  # "family/what", unique in a run
    value: float | None       # None: not reached (a crossover that never happens)
    unit: str                  # "x" for a ratio, "ms", "s", "rows", ...
    about: str
    better: str | None = None  # "lower" or "higher" for a gated-worthy figure, else None
    parallel: bool = False     # needs two cores to mean anything (a speed-up)
    sides: dict = field(default_factory=dict)  # side -> {"min": s, "median": s}

    def to_json(self) -> dict:
        return asdict(self)


def sides_of(samples: dict) -> dict:
    """The Samples of a measurement as plain numbers for the record."""
    return {n: {"min": s.min, "median": s.median} for n, s in samples.items()}
