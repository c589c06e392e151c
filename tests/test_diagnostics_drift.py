"""R25 drift test: the ledger, docs/diagnostics.md and the codes the source emits agree.

The source scan reads every string literal under reference/ and bark_vm/ whose whole text
is a code (`E001`, `W011`, `EPARSE`); docstrings and comments never match because they are
not a bare code. ledger.py itself is excluded: it is the table being checked.
"""
import ast
import re
from pathlib import Path

import pytest

from maned.diagnostics import Diagnostic, Pos
from maned.diagnostics.ledger import LEDGER
from maned.diagnostics.printer import lint_line, run_line

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "diagnostics.md"
CODE_RE = re.compile(r"E\d{3}|W\d{3}|E[A-Z]{2,}")  # EIO has two letters
# Literals that look like un-numbered codes but are not diagnostics (a wire frame tag,
# the lexer's end-of-file token kind).
NOT_CODES = frozenset({"ERRJ", "EOF"})


def documented_codes() -> set[str]:
    """Codes in the first column of a table row or in a heading of docs/diagnostics.md."""
    found = set()
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("|"):
            cell = line.strip("|").split("|")[0].strip().strip("`*")
        elif line.startswith("#"):
            cell = line.lstrip("#").strip().split()[0].strip("`*") if line.strip("# ") else ""
        else:
            continue
        if CODE_RE.fullmatch(cell):
            found.add(cell)
    return found


def emitted_codes() -> dict[str, list[str]]:
    """Code -> the files whose string literals name it."""
    out: dict[str, list[str]] = {}
    ledger_file = ROOT / "reference" / "diagnostics" / "ledger.py"
    for folder in ("reference", "bark_vm"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == ledger_file:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                        and CODE_RE.fullmatch(node.value) and node.value not in NOT_CODES):
                    out.setdefault(node.value, []).append(str(path.relative_to(ROOT)))
    return out


def ledger_codes(*statuses) -> set[str]:
    return {c for c, row in LEDGER.items() if not statuses or row.status in statuses}


def test_docs_list_exactly_the_ledger():
    docs = documented_codes()
    assert sorted(ledger_codes() - docs) == [], "ledger codes missing from docs/diagnostics.md"
    assert sorted(docs - ledger_codes()) == [], "docs/diagnostics.md invents codes"


def test_source_emits_only_ledger_codes():
    unknown = {c: f for c, f in emitted_codes().items() if c not in LEDGER}
    assert unknown == {}, "the source emits codes the ledger does not list"


def test_every_active_code_is_emitted():
    """`planned` rows are exempt until their feature lands; W008 is retired."""
    missing = ledger_codes("active") - set(emitted_codes())
    assert sorted(missing) == [], "active ledger codes nothing emits (mark them planned?)"


def test_planned_codes_are_not_yet_emitted():
    """A planned code that the source emits must be flipped to active in the ledger."""
    assert sorted(ledger_codes("planned") & set(emitted_codes())) == []


def test_w008_is_retired_and_never_emitted():
    assert LEDGER["W008"].status == "retired"
    assert "W008" not in emitted_codes()


@pytest.mark.parametrize("code, pos, line", [
    ("EPARSE", Pos(3, 7), "parse error [3:7] bad [EPARSE]"),
    ("E017", Pos(6, 7), "parse error [6:7] bad [E017]"),
    ("E021", Pos(41, 1), "ml error [41:1] bad [E021]"),
    ("E003", Pos(2, 5), "lint error [2:5] bad [E003]"),
    ("ELIMIT", Pos(5, 1), "lint error [5:1] bad [ELIMIT]"),
    ("EPLAN", None, "error: bad [EPLAN]"),
    ("ERUN", Pos(9, 9), "error: bad [ERUN]"),
    ("EUSAGE", None, "error: bad [EUSAGE]"),
])
def test_run_line_shapes(code, pos, line):
    assert run_line(Diagnostic(code, "bad", pos)) == line


def test_run_line_stage_override():
    d = Diagnostic("E026", "cell 3000000000 is outside int32", None, stage="run")
    assert run_line(d) == "error: cell 3000000000 is outside int32 [E026]"


@pytest.mark.parametrize("code, severity", [("W011", "warning"), ("E003", "error"),
                                            ("EPARSE", "error")])
def test_lint_line_shape(code, severity):
    line = lint_line("s.mnd", Diagnostic(code, "msg", Pos(6, 7)))
    assert line == f"s.mnd:6:7: {severity}[{code}]: msg"


def test_documented_examples_use_the_r2_shapes():
    """Each example cell is a maned-run line ending in its code, or a maned-lint line."""
    shapes = {
        "parse": re.compile(r"^parse error \[\d+:\d+\] .+ \[(\w+)\]$"),
        "ml": re.compile(r"^ml error \[\d+:\d+\] .+ \[(\w+)\]$"),
        "lint": re.compile(r"^lint error \[\d+:\d+\] .+ \[(\w+)\]$"),
        "run": re.compile(r"^error: .+ \[(\w+)\]$"),
    }
    lint_shape = re.compile(r"^\S+:\d+:\d+: (error|warning)\[(\w+)\]: .+$")
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or not CODE_RE.fullmatch(cells[0]) or cells[-1] == "-":
            continue
        code, example = cells[0], cells[-1].strip("`")
        row = LEDGER[code]
        if row.severity == "warning":
            m = lint_shape.match(example)
            assert m and m.group(2) == code, example
        else:
            m = shapes[row.stage].match(example)
            assert m and m.group(1) == code, example
