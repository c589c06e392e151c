"""The pytest plugin of a benchmark run (`-p maned_bench.plugin`, which maned-bench and
`tox -e bench` pass): the scale and output options, the figures each family adds, and at
the end of the session the results folder and the gate (a failing gate fails the run)."""
from pathlib import Path

import pytest

from . import gate, paths, results
from .suite import SCALES, context, yardstick_of

FIGURES = pytest.StashKey[list]()


def pytest_addoption(parser):
    group = parser.getgroup("maned-bench")
    group.addoption("--bench-scale", choices=SCALES, default="full",
                    help="smoke (seconds) or full (the figures of docs/economics.md)")
    group.addoption("--bench-out", default=str(paths.OUT), metavar="DIR",
                    help=f"the results folder (default {paths.OUT} in the working directory)")
    group.addoption("--bench-baseline", default=None, metavar="FILE",
                    help=f"the gate's baseline (default {paths.LOCAL_BASELINE} in the working "
                    "directory if there is one, else the installed one, read only)")
    group.addoption("--bench-rebaseline", action="store_true",
                    help="write this run's values into the baseline (margins kept)")


def pytest_configure(config):
    config.stash[FIGURES] = []
    if config.getoption("--bench-rebaseline"):
        why = paths.rebaseline_refusal(baseline_of(config),
                                       config.getoption("--bench-baseline") is not None)
        if why:
            raise pytest.UsageError(why)


def baseline_of(config) -> Path:
    """The baseline this run reads (and --bench-rebaseline writes)."""
    given = config.getoption("--bench-baseline")
    return Path(given) if given is not None else paths.default_baseline()


@pytest.fixture(scope="session")
def bench_scale(request) -> str:
    return request.config.getoption("--bench-scale")


@pytest.fixture(scope="session")
def bench_figures(request) -> list:
    return request.config.stash[FIGURES]


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    figures = config.stash.get(FIGURES, [])
    if not figures:
        return
    scale = config.getoption("--bench-scale")
    path = baseline_of(config)
    tables = gate.load(path)
    if config.getoption("--bench-rebaseline"):
        tables[scale] = gate.rebaselined(figures, tables.get(scale, {}))
        gate.save(path, tables)
    baseline = tables.get(scale, {})
    verdicts = gate.check(figures, baseline, yardstick_of(figures))
    written = results.write(Path(config.getoption("--bench-out")), figures, context(scale),
                            verdicts)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    lines = [f"maned-bench: {len(figures)} figures; written: "
             + ", ".join(p.name for p in written)]
    lines += [f"  gate {v.status}: {v.text}" for v in verdicts if v.status != "pass"]
    failed = [v for v in verdicts if v.status == "fail"]
    lines.append(f"maned-bench: gate {'FAILED' if failed else 'passed'}: "
                 f"{sum(v.status == 'pass' for v in verdicts)} pass, {len(failed)} fail, "
                 f"{sum(v.status == 'skip' for v in verdicts)} skipped")
    for line in lines:
        if reporter:
            reporter.write_line(line)
    if failed and session.exitstatus == 0:
        session.exitstatus = 1
