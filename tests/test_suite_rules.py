"""The suite's own rules, checked on its source: no test asserts a wall-clock threshold
(docs/testing.md; a clock may only be compared with a `deadline`, the hang guard of a wait),
and no module imports from a conftest.py (fixtures are plugins, helpers tests/support/)."""
import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
CLOCKS = {"monotonic", "perf_counter", "time", "monotonic_ns", "perf_counter_ns", "process_time"}
TIMING_WORDS = ("took", "elapsed", "waited", "latenc", "duration", "seconds")


def _names(node: ast.AST) -> set[str]:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
    return out


def _timed(node: ast.AST) -> bool:
    names = _names(node)
    return bool(names & CLOCKS) or any(w in n.lower() for n in names for w in TIMING_WORDS)


def wall_clock_asserts(source: str) -> list[int]:
    """Lines of asserts that order a clock reading (or a duration) against something other
    than a deadline."""
    bad = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Assert):
            continue
        for cmp in (n for n in ast.walk(node.test) if isinstance(n, ast.Compare)):
            if not any(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for op in cmp.ops):
                continue
            sides = [cmp.left, *cmp.comparators]
            if "deadline" in set().union(*map(_names, sides)):
                continue
            if any(_timed(side) for side in sides):
                bad.append(node.lineno)
    return bad


@pytest.mark.parametrize("path", sorted(TESTS.rglob("*.py")), ids=lambda p: p.name)
def test_no_wall_clock_assertion(path):
    assert wall_clock_asserts(path.read_text()) == []


@pytest.mark.parametrize("source, lines", [
    ("assert took >= 2.0", [1]),
    ("assert max(latencies) < 1.0", [1]),
    ("assert time.perf_counter() - start < 0.5", [1]),
    ("assert IO_TIMEOUT - 0.5 < waited < IO_TIMEOUT + 2", [1]),
    ("assert time.monotonic() < deadline", []),
    ("assert len(rows) > 100", []),
    ("assert took == 3", []),
])
def test_the_rule_catches_what_it_should(source, lines):
    assert wall_clock_asserts(source) == lines


def conftest_imports(source: str) -> list[int]:
    """Lines that import from a conftest.py: the suite's fixtures are plugins of
    tests/support/ (conftest.py's `pytest_plugins`), its helpers modules there."""
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.ImportFrom) and node.module == "conftest"
            or isinstance(node, ast.Import) and any(a.name == "conftest" for a in node.names)]


@pytest.mark.parametrize("path", sorted(TESTS.rglob("*.py")), ids=lambda p: p.name)
def test_no_module_imports_from_conftest(path):
    assert conftest_imports(path.read_text()) == []


@pytest.mark.parametrize("source, lines", [
    ("from conftest import run_tool", [1]),
    ("import os\nimport conftest", [2]),
    ("from support.cli import run_tool\nfrom conftests import x", []),
])
def test_the_conftest_rule_catches_what_it_should(source, lines):
    assert conftest_imports(source) == lines
