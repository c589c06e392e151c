"""The conformance runner's judgement (conformance/runner.py): each status from the report
fields that decide it, and a case file that is not a case refused by name."""
import pytest

import maned
from gates import launcher
from maned.pipeline.report import DiagnosticRecord, FlowOutputs, Value
from maned_conformance.cases import CASES, Case, CaseError, load
from maned_conformance.runner import judge, run_case
from maned_conformance.targets import LocalUnderTest, VmUnderTest

SCRIPT = "mnd::quantmax=1000;\nmnd::quantmin=-1000;\nmnd::quantres=0;\n" \
         "calc::lambda_flow f(a) {\n    a a add r =\n} return r;\n"


def report(*diags, flows=(), verify=None) -> maned.Report:
    return maned.Report(exit_code=1 if diags else 0, diagnostics=tuple(diags),
                        flows=tuple(flows), verify=verify)


def error(code: str, cause: str | None = None) -> DiagnosticRecord:
    return DiagnosticRecord(code, "error", "run", None, None, f"flow 'f': something [{code}]",
                            cause)


@pytest.mark.parametrize("diag, status", [
    (error("EPLAN", "UNSUPPORTED_OP"), "not_supported"),
    (error("ERUN", "UNSUPPORTED_OP"), "error"),  # advertised, then refused: a lie
    (error("ERUN", "timeout"), "timeout"),
    (error("ERUN", "died"), "error"),
    (error("ERUN", "malformed_response"), "error"),
    (error("ERUN", "connect_failed"), "error"),
    (error("ERUN", "EXEC_FAILED"), "fail"),
    (error("ERUN"), "fail"),
])
def test_status_from_the_first_cause(diag, status):
    assert judge(Case("c", "x", SCRIPT), "vm", report(diag)).status == status


def test_refusals_must_carry_the_expected_code():
    case = Case("c", "x", SCRIPT, refused="ERUN")
    assert judge(case, "vm", report(error("ERUN"))).status == "pass"
    ran = judge(case, "vm", report())
    assert (ran.status, ran.detail) == ("fail", "expected a refusal [ERUN], got it ran (exit 0)")
    other = judge(case, "vm", report(error("EPLAN")))
    assert other.status == "fail" and other.detail.startswith("expected a refusal [ERUN], got "
                                                              "[EPLAN]")


def test_a_wrong_golden_fails_naming_it():
    case = Case("c", "x", SCRIPT, golden=(("f.r", (2, 4)),))
    good = report(flows=[FlowOutputs("f", (Value("r", (2,), (2, 4)),))])
    bad = report(flows=[FlowOutputs("f", (Value("r", (2,), (2, 5)),))])
    assert judge(case, "local", good).status == "pass"
    assert judge(case, "local", bad).detail == "golden f.r: documented [2, 4], got [2, 5]"


def test_a_real_case_on_the_reference():
    outcome = run_case(Case("c", "x", SCRIPT, inputs=(("a", "2:1,2"),),
                            golden=(("f.r", (2, 4)),)), LocalUnderTest())
    assert (outcome.status, outcome.outputs) == ("pass", {"f": {"r": [2, 4]}})


@pytest.mark.parametrize("text, why", [('about = "x"\n', "needs `about` and `script`"),
                                       ('about = "x"\nscript = "y"\nlevel = 3\n', "unknown"),
                                       ('about = "x"\nscript = "y"\ntargets = ["gpu"]\n',
                                        "targets must be among"),
                                       ("not toml = = =\n", "")])
def test_a_bad_case_file_is_refused_by_name(tmp_path, text, why):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(CaseError) as e:
        load(path, tmp_path)
    assert why in str(e.value) and "bad.toml" in str(e.value)


def test_a_differing_round_is_named(tmp_path):
    """A VM whose first output slot is off by one: the failure names the output, the slot,
    both values and the first round whose outputs differ."""
    vm = VmUnderTest([str(launcher(tmp_path, "skewed_vm"))])
    try:
        outcome = run_case(load(CASES / "flows/design_6_sweep.toml"), vm)
    finally:
        vm.close()
    assert outcome.status == "fail"
    assert outcome.detail.startswith("flow 'fit' output 'm")
    assert outcome.detail.endswith("(first differing job: fit#c0#r0)")
