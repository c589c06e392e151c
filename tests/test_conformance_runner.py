"""The conformance runner's judgement (conformance/runner.py): each status from the report
fields that decide it, and a case file that is not a case refused by name."""
import hashlib
import json
import re
import sys

import pytest
from hypothesis import given, strategies as st

import maned
from bark_vm.container import worker_process
from gates import FAKES, Gate, launcher
from maned.pipeline.report import DiagnosticRecord, FlowOutputs, Value
from maned.dispatch.trace import JobRecord, outputs_digest
from maned.tensor import Tensor
from maned_conformance.cases import CASES, Case, CaseError, Refusal, load
from maned_conformance.runner import judge, run_case
from maned_conformance.targets import LocalUnderTest, VmUnderTest, WorkerUnderTest
from support.scripts import H0
from support.status import status_of

SCRIPT = H0 + "calc::lambda_flow f(a) {\n    a a add r =\n} return r;\n"


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


def sent(target: str = "vm") -> JobRecord:
    return JobRecord("f", target, None, 0.0, 0.1, "ERUN")


BY_PLANNING = Case("c", "x", SCRIPT, refused=Refusal("ERUN", "planning"))
BY_WORKER = Case("c", "x", SCRIPT, refused=Refusal("ERUN", "worker", "SHAPE_MISMATCH"))


@pytest.mark.parametrize("case, target, diags, jobs, status", [
    (BY_PLANNING, "vm", [error("ERUN")], [], "pass"),
    (BY_PLANNING, "local", [error("ERUN")], [sent("local")], "pass"),
    (BY_PLANNING, "vm", [error("ERUN", "SHAPE_MISMATCH")], [sent()], "fail"),  # was sent
    (BY_PLANNING, "vm", [error("EPLAN")], [], "error"),  # another refusal
    (BY_PLANNING, "vm", [], [], "fail"),  # it ran
    (BY_WORKER, "vm", [error("ERUN", "SHAPE_MISMATCH")], [sent()], "pass"),
    (BY_WORKER, "local", [error("ERUN")], [sent("local")], "pass"),  # the reference refuses
    (BY_WORKER, "vm", [error("ERUN", "EXEC_FAILED")], [sent()], "fail"),  # the wrong code
    (BY_WORKER, "vm", [error("ERUN")], [], "error"),  # planning refused: the worker unasked
    # issue 22, point 1: a login or transport failure is never the expected refusal
    (BY_WORKER, "hardware", [error("ERUN", "AUTH_FAILED")], [sent("hardware")], "error"),
    (BY_PLANNING, "vm", [error("ERUN", "AUTH_REQUIRED")], [sent()], "error"),
    (BY_WORKER, "hardware", [error("ERUN", "connect_failed")], [sent("hardware")], "error"),
    (BY_WORKER, "hardware", [error("ERUN", "BUSY")], [sent("hardware")], "error"),
])
def test_a_refusal_passes_only_for_its_code_and_its_refuser(case, target, diags, jobs, status):
    r = maned.Report(exit_code=1 if diags else 0, diagnostics=tuple(diags), jobs=tuple(jobs))
    outcome = judge(case, target, r)
    assert outcome.status == status, outcome.detail
    assert outcome.detail.startswith("refused [ERUN]") if status == "pass" else outcome.detail


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
                                       ('about = "x"\nscript = "y"\nrefused = "ERUN"\n',
                                        "refused must be a table"),
                                       ('about = "x"\nscript = "y"\nrefused = { code = "ERUN",'
                                        ' by = "worker" }\n', "names its CDP code"),
                                       ('about = "x"\nscript = "y"\nrefused = { code = "ERUN",'
                                        ' by = "planning" }\n', "leave `hardware` out"),
                                       ('about = "x"\nscript = "y"\nmutation = "m"\n',
                                        "a request case"),
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


def _overrun_then_pass(target, gate: Gate):
    """A case held past its (short) case deadline, far inside its job deadline, is a
    timeout; once the hold is gone, the same case on the same target passes (the aborted
    device was replaced)."""
    case = load(CASES / "flows/design_6_sweep.toml")  # many jobs: the deadline spans them
    held = run_case(case, target, deadline_s=0.5)
    assert held.status == "timeout"
    assert held.detail.startswith("the case did not end within its deadline of 0.5 s")
    gate.open()
    again = run_case(case, target)
    assert (again.status, again.detail) == ("pass", "")


def test_a_case_overrunning_its_deadline_on_a_vm_is_a_timeout(tmp_path, monkeypatch):
    gate = Gate(tmp_path / "hold").close()
    monkeypatch.setenv("MANED_TEST_HOLD", str(gate.path))
    vm = VmUnderTest([str(launcher(tmp_path, "gated_vm"))], deadline_s=600)
    try:
        vm.status()  # the child is up before the clock of the case starts
        _overrun_then_pass(vm, gate)
    finally:
        gate.open()
        vm.close()


class OpensOnAbort(WorkerUnderTest):
    """A worker target that lifts the gate the moment the case is aborted: its held job
    then ends, and the abort reads its result back (the slot is freed, not left held)."""

    def __init__(self, gate: Gate, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.gate = gate

    def abort(self) -> None:
        self.gate.open()
        super().abort()


def test_a_case_overrunning_its_deadline_on_a_worker_is_a_timeout(tmp_path):
    gate = Gate(tmp_path / "hold").close()
    command = [sys.executable, str(FAKES / "gated_worker.py"), str(gate.path)]
    with worker_process("bob", "test", "pw-case-deadline", command=command) as w:
        hw = OpensOnAbort(gate, f"http://{w.host}:{w.port}", "test", "pw-case-deadline",
                          deadline_s=600)
        try:
            case = load(CASES / "ops/maxpool2d/k255.toml")  # 260 KB: an async job
            held = run_case(case, hw, deadline_s=0.5)
            assert held.status == "timeout"
            assert held.detail.startswith("the case did not end within its deadline of 0.5 s")
            assert status_of(w)["jobs_running"] == 0  # no slot left held
            again = run_case(case, hw)
            assert (again.status, again.detail) == ("pass", "")
        finally:
            gate.open()
            hw.close()


def test_the_slot_boundary_case_is_the_boundary():
    """envelopes/slots_256 fills an ABI-1 register file exactly: it passes at ABI 1, and the
    same flow with one more value is refused there before sending (not supported)."""
    from dataclasses import replace

    from maned.lowering.compiled import Compiler
    from maned.failures import Refused
    from maned.pipeline.intake import compile_script

    case = load(CASES / "envelopes/slots_256.toml")
    graph = compile_script(case.script).graphs["f"]
    assert len(Compiler().lowered(graph, 1)[0].graph.nodes) == 256
    longer = replace(case, script=case.script.replace("} return v254;",
                                                      "    v254 a add v255 =\n} return v255;"))
    more = compile_script(longer.script).graphs["f"]
    assert len(Compiler().lowered(more, 2)[0].graph.nodes) == 257
    with pytest.raises(Refused, match="257 values, but the target register file has 256"):
        Compiler().lowered(more, 1)
    vm = VmUnderTest(abi=1)
    try:
        assert run_case(case, vm).status == "pass"
        over = run_case(longer, vm)
    finally:
        vm.close()
    assert over.status == "not_supported" and "256 slots" in over.detail


# refused by the interpreter before a job is sent: the routed words are the local ones (a
# window larger than its input is the worker's refusal, SHAPE_MISMATCH, in its own words)
SAME_WORDS = [c for c in map(load, sorted(CASES.rglob("*_refused.toml")))
              if c.refused and c.refused.code == "ERUN" and c.refused.by == "planning"]


@pytest.mark.parametrize("case", SAME_WORDS, ids=[c.id for c in SAME_WORDS])
def test_a_refusal_before_sending_is_in_the_interpreters_words(case):
    from maned.devices.vm import VmDevice

    local = maned.run(source=case.script, inputs=case.inputs)
    device = VmDevice("vm", [sys.executable, "-m", "bark_vm.vm", "--alias", "vm"], 30)
    try:
        routed = maned.run(source=case.script, inputs=case.inputs, require_vm=True,
                           devices={"vm": device})
    finally:
        device.close()
    words = [[(d.code, d.message) for d in r.diagnostics if d.severity == "error"]
             for r in (local, routed)]
    assert words[0] and words[0] == words[1]
    assert not routed.jobs  # refused before a job was sent


_TENSORS = st.lists(st.integers(-2**63, 2**63), min_size=1, max_size=6).map(
    lambda v: Tensor((len(v),), tuple(v)))


@given(st.dictionaries(st.text(min_size=1, max_size=8), _TENSORS | st.integers(
    -9, 9).map(Tensor.scalar), max_size=4))
def test_a_job_digest_is_the_sha256_of_the_canonical_json_of_its_outputs(outputs):
    """docs/api.md: `digest` is the SHA-256 of the canonical JSON of {name: [shape, values]},
    names sorted and escaped as JSON escapes them, no spaces."""
    doc = {name: [list(t.shape), list(t.data)] for name, t in outputs.items()}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    assert outputs_digest(outputs) == hashlib.sha256(text.encode()).hexdigest()


def test_a_protocol_check_that_outwaits_its_limit_is_a_timeout_not_a_fail(tmp_path,
                                                                         monkeypatch):
    """Issue 33, point 5: a worker that holds its async jobs (slow, not wrong) past the
    protocol checks' poll limit (maned-certify's --case-timeout): the wait runs out as
    OutOfTime, which the protocol run reports as a timeout, never a fail, and the checks
    after it are not run."""
    import time

    from maned_conformance import protocol

    def held_job(probe, state) -> None:  # a check that waits on one async job
        job = protocol._submit(probe, protocol._heavy(2, 1 << 20))
        protocol._wait_done(probe, job, time.monotonic() + probe.poll_limit_s)

    monkeypatch.setattr(protocol, "_CHECKS", protocol._CHECKS[:1] + [("held", held_job)])
    gate = Gate(tmp_path / "hold").close()
    command = [sys.executable, str(FAKES / "gated_worker.py"), str(gate.path)]
    try:
        with worker_process("bob", "test", "pw-poll-limit", command=command) as w:
            outcomes = protocol.run_protocol(w.host, w.port, "test", "pw-poll-limit", 30,
                                             poll_limit_s=0.5)
    finally:
        gate.open()
    (status, held), rest = outcomes[:2], outcomes[2:]
    assert (status.case, status.status) == ("protocol/status", "pass"), status
    assert (held.case, held.status) == ("protocol/held", "timeout"), held
    assert re.fullmatch(r"job \d+ was not done within 0.5 s \(--case-timeout\)", held.detail)
    assert rest and {o.detail for o in rest} == {"not run: an earlier check timed out"}


def test_each_target_gives_its_devices_the_job_deadline_it_was_given():
    """The deadline a certification asks for (--job-timeout) is its devices' own: issue 36
    made `open_device`'s deadline a keyword after it was once taken for the discovery,
    leaving every job of a certification the default 30 s (a stalled mutant cost 30 s a
    case instead of 2)."""
    from maned_conformance.targets import VmUnderTest, WorkerUnderTest
    vm, worker = VmUnderTest(deadline_s=4.0), WorkerUnderTest("http://127.0.0.1:9",
                                                              deadline_s=3.0)
    try:
        assert (vm.device().deadline_s, worker.device().deadline_s) == (4.0, 3.0)
    finally:
        vm.close()
        worker.close()
