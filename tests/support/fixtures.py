"""The suite's fixtures, a plugin every test module has (tests/conftest.py's
`pytest_plugins`): a scratch copy of the examples as the working directory, and maned-run
and maned-lint on it; and the fuzz targets' case counts at the end of a run."""
import os
import shutil

import pytest

from maned.cli import lint as lint_cli
from maned.cli import run as run_cli

from support.cli import EXAMPLES, expand, run_tool


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
