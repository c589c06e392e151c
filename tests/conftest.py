"""Shared helpers: run maned-run / maned-lint in-process on a script file or inline text."""
import io
import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

from maned.cli import lint as lint_cli
from maned.cli import run as run_cli

from support.scripts import FIT_DATA, H0, H2, HML

# No example database, and hypothesis's caches in a temporary folder: a run writes nothing
# into the checkout, and each run draws afresh.
settings.register_profile("suite", database=None)
settings.load_profile("suite")
set_hypothesis_home_dir(tempfile.mkdtemp(prefix="maned-hypothesis-"))

# A suite started in the background (`cmd &` in a script) inherits SIGINT ignored, and so
# would every tool it starts, whose Ctrl-C the tests send: they start as from a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
# placeholders a test's source text may hold: the preambles (their last newline is the
# source's own) and the §6 fit's preamble and inputs
HEADERS = {"{H0}": H0.rstrip("\n"), "{H2}": H2.rstrip("\n"), "{LR}": HML + FIT_DATA}


# What DESIGN §6's sweep says on stderr (issue 23, point 8): which lr each configuration had,
# its loss (§6's 1, 0, 0) and which reach the lowest.
SEED_SWEEP_NOTE = ("note: sweep 'fit' over lr: m0, l0 had lr 2 (loss 1); m1, l1 had lr 5 (loss "
                   "0); m2, l2 had lr 10 (loss 0); the lowest loss, 0: m1 (lr 5), m2 (lr 10)\n")


def only_sweep_notes(err: str) -> bool:
    """stderr holds sweep notes and nothing else: no error, no other note."""
    lines = err.splitlines()
    return bool(lines) and all(ln.startswith("note: sweep '") for ln in lines)


def expand(source: str) -> str:
    for key, text in HEADERS.items():
        source = source.replace(key, text)
    return source


def run_tool(tool, argv):
    out, err = io.StringIO(), io.StringIO()
    code = tool.main(argv, out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A scratch copy of examples/ as the working directory (scripts may write out:: files)."""
    dst = tmp_path / "examples"
    shutil.copytree(EXAMPLES, dst)
    monkeypatch.chdir(dst)
    return dst


@pytest.fixture
def maned_run(workdir):
    def run(*argv, source=None, before=()):
        argv = list(before) + list(argv)
        if source is not None:
            path = workdir / "inline.mnd"
            path.write_text(expand(source), encoding="utf-8")
            argv = list(before) + [str(path)] + list(argv[len(before):])
        return run_tool(run_cli, argv)
    return run


@pytest.fixture
def maned_lint(workdir):
    def lint(source):
        path = workdir / "inline.mnd"
        path.write_text(expand(source), encoding="utf-8")
        return run_tool(lint_cli, [os.fspath(path)])
    return lint


def pytest_terminal_summary(terminalreporter):
    """Each fuzz target's case count (tests/fuzzing.py), whatever else the run printed."""
    from fuzzing import summary
    for line in summary():
        terminalreporter.write_line(line)
