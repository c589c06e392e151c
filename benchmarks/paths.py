"""Where a benchmark run reads and writes (docs/economics.md, "Where a run writes"): the
results folder and the baseline are the working directory's (`benchmarks/results`,
`benchmarks/baseline.json`, as in a checkout); the baseline installed with the package is
read when the working directory has none, and never rewritten unless named."""
from pathlib import Path

OUT = Path("benchmarks") / "results"        # relative to the working directory
LOCAL_BASELINE = Path("benchmarks") / "baseline.json"
INSTALLED = Path(__file__).resolve().parent / "baseline.json"
SUMMARY, TABLE, PYTEST_JSON = "summary.json", "results.md", "pytest-benchmark.json"


def plot_file(out: Path, plot: str) -> Path:
    """Where a run writes the plot named `plot`."""
    return out / f"{plot}.png"


def written(out: Path, plots) -> list[tuple[str, str]]:
    """(path, what it is) of every file a run may write into `out` (the plots by name)."""
    return [(str(path), f"the run's {path.name}") for path in
            [out / SUMMARY, out / TABLE, out / PYTEST_JSON, *(plot_file(out, p) for p in plots)]]


def default_baseline() -> Path:
    """The working directory's benchmarks/baseline.json when it has one, else the installed."""
    local = Path.cwd() / LOCAL_BASELINE
    return local if local.is_file() else INSTALLED


def rebaseline_refusal(path: Path, given: bool) -> str | None:
    """Why --rebaseline must not write `path` (the installed copy, chosen by default), or None:
    a rebaseline is meant to be committed, and a package's files are not the user's."""
    if given or Path(path).resolve() != INSTALLED:
        return None
    return (f"--rebaseline will not write the baseline installed with the package "
            f"({INSTALLED}); pass --baseline FILE (your checkout's benchmarks/baseline.json, "
            "or a copy of it)")
