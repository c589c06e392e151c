"""Static diagnostics: every code of tests/cases/diagnostics_static.py fires where it says,
warnings come out as warnings, and a realistic clean script draws nothing at all."""
import pytest

from cases.diagnostics_static import CASES, CLEAN, HEADER, flow
from maned.diagnostics import Pos
from maned.diagnostics.ledger import LEDGER
from maned.lang.lint import RULES, lint
from maned.lang.parser import parse
from support.scripts import H8

# Codes found statically: by the parser or the linter (R2's parse, ml and lint stages).
STATIC = {c for c, row in LEDGER.items()
          if row.stage in ("parse", "ml", "lint") and row.status == "active"}
# Static-stage codes that need more than parse + lint: ELIMIT comes from graph building
# (maned.static_check); E027 is the ML desugar's, E028 the ML fit's at run time; E031 is the
# limits' of maned.static_check and of a run (tests/test_cli.py); W020 runs a routed flow in
# maned.static_check (below); E029 and the run codes need files or a run.
NOT_PARSE_OR_LINT = {"ELIMIT", "E027", "E028", "E031", "W020"}


def check_source(text: str):
    """Parse, then lint when the parse had no error: what maned-lint reports."""
    program, diags = parse(text)
    if program is None or any(d.is_error for d in diags):
        return list(diags)
    return list(diags) + lint(program)


def _id(case):
    code, _, line, col, _ = case
    return f"{code}@{line}:{col}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_code_fires_at_its_anchor(case):
    code, snippet, line, col, text = case
    diags = check_source(HEADER + snippet)
    found = [d for d in diags if d.code == code]
    seen = [(d.code, str(d.pos), d.message) for d in diags]
    assert any(d.pos == Pos(line, col) for d in found), seen
    d = next(d for d in found if d.pos == Pos(line, col))
    if text is not None:
        assert text in d.message
    assert d.severity == LEDGER[code].severity
    if code.startswith("W"):
        assert d.severity == "warning" and not d.is_error


def test_every_static_code_has_a_case():
    assert sorted(STATIC - NOT_PARSE_OR_LINT - {c for c, *_ in CASES}) == []


def test_clean_script_draws_nothing():
    assert [(d.code, str(d.pos), d.message) for d in check_source(CLEAN)] == []


def test_lint_output_is_sorted():
    program, _ = parse(HEADER + flow("  x gelu z =\n  x xx add y ="))
    diags = lint(program)
    assert [d.sort_key() for d in diags] == sorted(d.sort_key() for d in diags)
    assert [d.code for d in diags] == ["W011", "W004", "E003"]


def test_rules_are_a_table_of_functions():
    assert all(callable(r) and r.__doc__ for r in RULES)


def codes(snippet: str) -> list[str]:
    return [d.code for d in check_source(HEADER + snippet)]


@pytest.mark.parametrize("snippet", [
    # a repeat reading a name bound before the loop: simultaneous update, no W002/E003
    flow("  x y =\n  repeat(3):\n    y 1 add y =\n  end"),
    # a parameter rebound by the body, the loop idiom on a parameter
    "calc::lambda_flow f(w) {\n  repeat(5):\n    w 2 mul w =\n  end\n} return w;\n",
    # a global read inside a flow, a top-level target too
    "in::g = 3;\ng 1 add h =\n" + flow("  x g add h add y ="),
    # a returned parameter counts as used
    "calc::lambda_flow f(x, u) {\n  x 1 add y =\n} return y, u;\n",
    # @unroll self-call whose arguments change
    "@unroll(4)\ncalc::lambda_flow f(x) {\n  x 1 sub z =\n  z f y =\n} return y;\n",
    # @unroll self-call: a parameter past the returned positions may pass unchanged
    "@unroll(2)\ncalc::lambda_flow f(x, n) {\n  x 1 add n f y =\n} return y;\n",
    # env() credentials
    "device::bob { host = \"h\"; user = \"u\"; pass = env(\"P\"); token = env(\"T\"); }\n",
    # working decorators
    "device::rex { host = \"local\"; }\n@unroll(2)\n"
    "calc::lambda_flow f(x) @device(rex) {\n  x 1 add y =\n} return y;\n",
])
def test_absent(snippet):
    assert codes(snippet) == []


def test_literal_credential_never_shows_the_secret():
    diags = check_source(HEADER + "device::bob { host = \"h\"; pass = \"hunter2\"; }\n")
    assert [d.code for d in diags] == ["W014"]
    assert "hunter2" not in diags[0].message


def test_unroll_rebound_parameter_is_changed():
    snippet = "@unroll(2)\ncalc::lambda_flow f(x) {\n  x 1 add x =\n  x f y =\n} return y;\n"
    assert "W016" not in codes(snippet)


@pytest.mark.parametrize("body, count", [
    ("  n x swap f y, m =", 2),        # swap puts both back in place
    ("  x n 7 drop f y, m =", 2),       # drop removes the 7
    ("  n x over drop swap f y, m =", 2),
    ("  n x 1 -rot drop f y, m =", 1),  # -rot gives 1 n x; f(1, n): only n passes
    ("  n 1 x rot drop f y, m =", 0),   # rot gives 1 x n; f(1, x): nothing in place
])
def test_unroll_pass_through_through_stack_ops(body, count):
    snippet = f"@unroll(2)\ncalc::lambda_flow f(x, n) {{\n{body}\n}} return y, m;\n"
    assert codes(snippet).count("W016") == count


def test_repeat_is_not_a_rebinding_but_a_later_statement_is():
    snippet = flow("  x 1 add z =\n  repeat(2):\n    z 1 add z =\n    z 2 add z =\n  end\n"
                   "  z 5 add z =\n  z y =")
    diags = check_source(HEADER + snippet)
    assert [(d.code, d.pos) for d in diags] == [("W002", Pos(10, 11))]


def test_w008_never_fires():
    every = [d.code for _, s, *_ in CASES for d in check_source(HEADER + s)]
    assert "W008" not in every + [d.code for d in check_source(CLEAN)]


def test_a_misspelt_op_is_suggested_and_draws_no_w017():
    """Issue 15: `matmull` reads as a name; E003 suggests the op, and the stack count that
    the misspelling makes a guess is not reported as W017."""
    diags = check_source(HEADER + flow("  x x matmull y ="))
    assert [(d.code, d.message) for d in diags] == [
        ("E003", "flow 'f': undefined variable 'matmull' (did you mean the op 'matmul'?)")]


INT8 = H8 + "device::vm1 { host = \"local\"; }\nin::a = [100, 50];\n"


@pytest.mark.parametrize("body, routed, found", [
    ("a a add r =", True, "'r' holds 200"),     # an output leaves int8
    ("a a add r =", False, None),                # local: every value is int32
    ("a 2 div r =", True, None),                 # stays inside
    ("a a add s = s 4 div r =", True, None),  # an intermediate is an int32 register
])
def test_w020_a_routed_value_outside_the_int8_envelope(body, routed, found):
    """Issue 23, point 6: maned-lint (maned.static_check) runs a routed flow on its in:: literals
    and warns when a value cannot travel as int8; the run refuses the same flow."""
    import maned
    from maned.static_check import check
    device = " @device(vm1)" if routed else ""
    text = INT8 + f"calc::lambda_flow f(a){device} {{\n    {body}\n}} return r;\n"
    w020 = [d for d in check(text).diagnostics if d.code == "W020"]
    assert [found in d.message for d in w020] == ([True] if found else [])
    run = maned.run(source=text)
    assert (run.exit_code == 1) == (found == "'r' holds 200" and routed)
    if run.exit_code:  # the worker's refusal says how to widen it, as the lint does
        assert run.diagnostics[0].message.endswith(
            "[worker: output 0 holds 200, outside the int8 envelope [-128, 127] that quantmin "
            "-100, quantmax 100 and quantres 0 choose for routed values; widen mnd::quantmin/"
            "mnd::quantmax (a range over 8 bits travels as int32) to route it]")
