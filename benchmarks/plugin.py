"""The pytest plugin of a benchmark run (`-p maned_bench.plugin`, which maned-bench and
`tox -e bench` pass): the scale and output options, the figures each family adds, and at
the end of the session the results folder and the gate. The baseline is checked when the
session starts (a bad one is pytest's usage error, before anything is measured); at the end
the figures are written whatever became of the gate, and a gate that failed, checked
nothing or could not run (one coded line on stderr) fails the run."""
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from . import baseline_file, gate, paths, results
from .suite import SCALES, context

FIGURES = pytest.StashKey[list]()
LAST: list = []  # (Conclusion, families failed) of each session that measured, for maned-bench


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
    try:
        baseline_file.load(baseline_of(config), config.getoption("--bench-scale"))
    except baseline_file.BaselineError as e:
        raise pytest.UsageError(f"{e} [{e.code}]") from None


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


@dataclass(frozen=True)
class Conclusion:
    """The end of a run: what to print on stdout and (coded lines) on stderr, the files
    written, and whether the run fails because of its gate or its results."""
    outcome: gate.Outcome
    written: list
    stdout: list
    stderr: list

    @property
    def failed(self) -> bool:
        return bool(self.stderr) or not self.outcome.passed


def _gate(figures, scale: str, baseline: Path, rebaseline: bool) -> gate.Outcome:
    """The gate of a run, "not run" with the reason when the baseline (read again: it may
    have changed while the run measured) cannot be read, checked or rewritten."""
    try:
        tables = baseline_file.load(baseline, scale)
        table = tables[scale]
        busy = [v for v in gate.check(figures, table) if v.status == "inconclusive"]
        if rebaseline and busy:  # a baseline measured under load would hide regressions
            return gate.not_run(f"this run cannot be a baseline (kept {baseline} as it "
                                f"was): {busy[0].text}")
        if rebaseline:
            table = baseline_file.rebaselined(figures, table)
            try:
                baseline_file.check_table(table, scale)
            except baseline_file.BaselineError as e:
                raise baseline_file.BaselineError(f"this run's values cannot be a baseline (kept "
                                         f"{baseline} as it was): {e}") from None
            baseline_file.save(baseline, {**tables, scale: table})
        return gate.judge(gate.check(figures, table))
    except baseline_file.BaselineError as e:
        return gate.not_run(str(e))
    except OSError as e:
        return gate.not_run(f"cannot write the baseline {baseline}: {e.strerror or e}")


def conclude(figures, scale: str, out: Path, baseline: Path, rebaseline: bool) -> Conclusion:
    """Gate the figures, then write them (whatever the gate became), and say so."""
    outcome = _gate(figures, scale, baseline, rebaseline)
    stdout, stderr, written = [], [], []
    try:
        written = results.write(out, figures, context(scale), outcome.verdicts, outcome)
        stdout.append(f"maned-bench: {len(figures)} figures; written: "
                      + ", ".join(p.name for p in written))
    except OSError as e:
        stderr.append(f"maned-bench: cannot write the results to {out}: {e.strerror or e} "
                      "[EUSAGE]")
    stdout += [f"  gate {v.status}: {v.text}" for v in outcome.verdicts if v.status != "pass"]
    if outcome.status == "not run":
        stderr.append(f"{outcome.line()} [{baseline_file.BaselineError.code}]")
    else:
        stdout.append(outcome.line())
    return Conclusion(outcome, written, stdout, stderr)


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    figures = config.stash.get(FIGURES, [])
    if not figures:
        return
    done = conclude(figures, config.getoption("--bench-scale"),
                    Path(config.getoption("--bench-out")), baseline_of(config),
                    config.getoption("--bench-rebaseline"))
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    for line in done.stdout:
        if reporter:
            reporter.write_line(line)
    for line in done.stderr:
        sys.stderr.write(line + "\n")
    LAST.append((done, session.testsfailed > 0))
    if done.failed and session.exitstatus == 0:
        session.exitstatus = 1
