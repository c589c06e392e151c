"""One case on one target, judged (DESIGN §8). The target's run is the script through
`maned.run()` with every routable flow sent to the target's device (`--require-vm`), or on
the local exact engine, and `--verify`, so the expected values are the reference's,
computed in the same run; the `reference` target runs it on the reference alone. The
documented goldens of a case are checked as well. Statuses:

    pass           every output equal, slot for slot (or refused with the expected code)
    fail           an output differs (the first differing flow, output and slot, both
                   values, and the first job, a round of an ML definition, whose outputs
                   differ), a golden differs, or the target refused what it should run
    not_supported  the target does not advertise an op the case needs, its ABI cannot encode
                   one, or its register file is too small for the case (never a pass)
    timeout        the target did not answer a job within its deadline, or the whole case
                   did not end within the case's deadline
    error          the target crashed, answered garbage or lied in its status
"""
import threading
from dataclasses import replace

import maned

from .cases import Case
from .outcome import BROKEN, NOT_ASKED, Outcome, Status
from .targets import CASE_DEADLINE_S, LOCAL_TARGETS, ROUTE

ABORT_GRACE_S = 5.0  # after an abort, how long the case's run gets to wind down


def run_case(case: Case, target, deadline_s: float = CASE_DEADLINE_S) -> Outcome:
    """Run and judge within `deadline_s` for the whole case (every job and round of it);
    whatever goes wrong is an outcome, never an exception. On expiry the target is aborted
    (its device stops; the next case gets a fresh one) and the case is a `timeout`."""
    try:
        device = target.device()  # here, so that an abort stops the device the run uses
    except Exception as e:
        return Outcome(case.id, target.name, "error", f"{type(e).__name__}: {e}")
    box: list[Outcome] = []
    runner = threading.Thread(target=lambda: box.append(_run(case, target.name, device)),
                              name=f"case {case.id}", daemon=True)
    runner.start()
    try:
        runner.join(deadline_s)
    except BaseException:  # Ctrl-C: the target stops before the interrupt goes on
        target.abort()
        raise
    if runner.is_alive():
        target.abort()
        runner.join(ABORT_GRACE_S)
        return Outcome(case.id, target.name, "timeout", f"the case did not end within its "
                       f"deadline of {deadline_s:g} s (every job of it together)")
    return box[0]


def _run(case: Case, target: str, device) -> Outcome:
    try:
        if case.mutation is not None:  # a request case: its bytes go to the worker as made
            from .requests import run_request
            return run_request(case, target, device)
        reference = target == "reference"  # the local target: the engine, whatever the size
        report = maned.run(source=case.script, base_dir=case.folder, inputs=case.inputs,
                           require_vm=device is not None, verify=not reference,
                           reference=reference,
                           devices={ROUTE: device} if device is not None else None)
        outcome = judge(case, target, report)
        if outcome.status == "fail" and report.verify and report.verify.status == "MISMATCH":
            first = first_differing_job(case, report)
            if first:
                outcome = replace(outcome, detail=f"{outcome.detail} (first differing job: "
                                  f"{first})")
        return outcome
    except BaseException as e:  # a bug of ours or of the target: reported, the others go on
        return Outcome(case.id, target, "error", f"{type(e).__name__}: {e}")


def first_differing_job(case: Case, routed: maned.Report) -> str | None:
    """The first job of the routed run (a round flow `fit#c0#r3`, or a flow) whose outputs
    differ from the same job in a reference run, by the jobs' output digests."""
    local = maned.run(source=case.script, base_dir=case.folder, inputs=case.inputs,
                      reference=True)
    reference = {j.flow: j.digest for j in local.jobs}
    for job in sorted(routed.jobs, key=lambda j: j.end):
        if job.digest is not None and reference.get(job.flow) not in (None, job.digest):
            return job.flow
    return None


def judge(case: Case, target: str, report: maned.Report) -> Outcome:
    outputs = {f.flow: {v.name: list(v.values) for v in f.outputs} for f in report.flows}
    errors = [d for d in report.diagnostics if d.severity == "error"]
    first = errors[0] if errors else None
    causes = [d.cause for d in errors if d.cause]
    who = {"local": "engine", "reference": "reference"}.get(target, "worker")

    def outcome(status: Status, detail: str = "", outs=None) -> Outcome:
        return Outcome(case.id, target, status, detail, outputs if outs is None else outs)
    unadvertised = [d for d in errors if d.code == "EPLAN"
                    and d.cause in ("UNSUPPORTED_OP", "rf_slots")]
    if unadvertised:  # before sending: an op its status (or ABI) lacks, too few registers
        return outcome("not_supported", f"[{unadvertised[0].code}] {unadvertised[0].message}")
    if "UNSUPPORTED_OP" in causes:  # advertised, then refused: the status lied
        return outcome("error", "the worker refused an op its status advertises: "
                       + _line(errors, "UNSUPPORTED_OP"))
    if "timeout" in causes:
        return outcome("timeout", _line(errors, "timeout"))
    if any(c in BROKEN for c in causes):
        return outcome("error", _line(errors, *BROKEN))
    if any(c in NOT_ASKED for c in causes):
        return outcome("error", "the worker was not asked the case: "
                       + _line(errors, *NOT_ASKED))
    if case.refused:
        return _refusal(case, target, report, first, outcome)
    if first is not None:
        return outcome("fail", f"[{first.code}] {first.message}")
    if report.verify is not None and report.verify.status == "MISMATCH":
        m = report.verify.mismatches[0]
        where = f"flow '{m.flow}' output '{m.output}'"
        if m.kind == "slot":
            return outcome("fail", f"{where} differs at slot {m.slot}: reference {m.local}, "
                                   f"{who} {m.routed}")
        if m.kind == "shape":
            return outcome("fail", f"{where} has shape {list(m.routed_shape)} on the {who}, "
                                   f"{list(m.local_shape)} in the reference")
        return outcome("fail", f"flow '{m.flow}' was not produced by the reference")
    for key, want in case.golden:
        flow, _, out = key.partition(".")
        got = outputs.get(flow, {}).get(out)
        if got != list(want):
            return outcome("fail", f"golden {key}: documented {list(want)}, got {got}")
    return outcome("pass")


def _refusal(case: Case, target: str, report: maned.Report, first, outcome) -> Outcome:
    """A refusal case: the expected code, given by the expected side. The reference refuses
    with the code; on a routed target the worker answers the CDP code to a request it was
    sent, or planning refuses before anything is sent. A worker that answers another CDP
    code fails; a refusal of any other cause is an error, never a pass."""
    want = case.refused
    expected = want.words(target)
    if first is None:
        return outcome("fail", f"expected {expected}, but it ran (exit 0)")
    got = f"[{first.code}] {first.message}"
    sent = [j for j in report.jobs if j.target != "local"]
    if target in LOCAL_TARGETS or want.by == "planning":
        if first.code == want.code and first.cause is None and not sent:
            return outcome("pass", f"refused [{first.code}]", {"refused": first.code})
        if sent and target not in LOCAL_TARGETS:
            return outcome("fail", f"expected {expected}, but a request was sent: {got}")
        return outcome("error", f"expected {expected}, got another cause: {got}")
    if first.code == want.code and first.cause == want.cdp:
        return outcome("pass", f"refused [{first.code}] by the worker with {first.cause}",
                       {"refused": first.cause})
    if first.cause is not None and not sent:
        return outcome("error", f"expected {expected}, got another cause: {got}")
    if first.cause is not None:
        return outcome("fail", f"expected {expected}, the worker answered {first.cause}: {got}")
    return outcome("error", f"expected {expected}, got another cause: {got}")


def _line(errors, *causes) -> str:
    d = next(d for d in errors if d.cause in causes)
    return f"[{d.code}] {d.message}"
