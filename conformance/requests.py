"""Request cases (cases.py `mutation`): a well-formed request, broken by one named
malformation (`malformations.py`), sent to the worker as it is; the worker must refuse it
with the CDP code of the rule it breaks. Or re-encoded by one named equivalent encoding
(`malformations.EQUIVALENTS`): the worker must answer what the reference computes for the
script. `run_request` builds, sends and judges one case; nothing escapes it.
"""
import re

from bark_vm.wire import ir
from bark_vm.wire.constants import WorkerError
from bark_vm.wire.envelope import decode_request, decode_result
from bark_vm.wire.ir import Module
from maned.diagnostics import MnError
from maned.io.cli_values import parse_value
from maned.lowering.envelopes import encode_job
from maned.lowering.fixtures import build_fixture
from maned.lowering.lower import lower
from maned.pipeline.intake import compile_script
from maned.failures import DeviceFailure, Refused

from .malformations import (EQUIVALENTS, MALFORMATIONS, Equivalent, Malformation,
                            Pieces)
from .outcome import NOT_ASKED, Outcome, Status


# --- one case: built for a worker, sent, judged ---------------------------------------------
class NotBuilt(Exception):
    """The case's request cannot be made for this worker: `status` is not_supported (the
    worker's ABI, ops, registers or payload limit) or error (the case itself is wrong)."""

    def __init__(self, status: Status, detail: str):
        super().__init__(detail)
        self.status, self.detail = status, detail


def malformation(case) -> Malformation | Equivalent:
    """The case's malformation or equivalent encoding (NotBuilt error: neither table has
    one of that name; a case file's pairing with `refused` is checked when it loads)."""
    m = MALFORMATIONS.get(case.mutation) or EQUIVALENTS.get(case.mutation)
    if m is None:
        raise NotBuilt("error", f"no malformation or equivalent encoding is named "
                       f"{case.mutation!r}")
    return m


def _flow(case):
    """(graph, program) of the case's one flow."""
    try:
        checked = compile_script(case.script)
    except MnError as e:
        raise NotBuilt("error", f"the case's script does not compile: {e}") from None
    if len(checked.graphs) != 1:
        raise NotBuilt("error", f"a request case has one flow, this one {len(checked.graphs)}")
    return next(iter(checked.graphs.values())), checked.program


def _inputs(case, graph) -> list:
    """The flow's parameters from the case's `inputs`, parsed as --in parses them."""
    given = dict(case.inputs)
    try:
        return [parse_value(given[p]) for p in graph.params]
    except KeyError as e:
        raise NotBuilt("error", f"the case gives no input {e}") from None
    except ValueError as e:
        raise NotBuilt("error", f"a case input is not a value: {e}") from None


def build_pieces(case, status) -> Pieces:
    """The well-formed request of the case for a worker with `status`: its flow lowered at
    the case's `abi`, else at the worker's (then it must be a program the worker runs)."""
    m = malformation(case)
    abi = case.abi or status.ir
    if abi not in m.abis:
        raise NotBuilt("not_supported", f"{case.mutation} is a rule of ABI "
                       f"v{'/v'.join(map(str, m.abis))} modules; the module sent to this worker is "
                       f"ABI v{abi}")
    graph, program = _flow(case)
    inputs = _inputs(case, graph)
    try:
        lowered = lower(graph, abi)
    except Refused as e:
        raise NotBuilt("not_supported" if e.cause == "UNSUPPORTED_OP" else "error",
                       e.message) from None
    if case.abi is None:
        _runnable(lowered.module, status)
    try:
        mnpk = encode_job(lowered, inputs, program.quant)
    except Refused as e:
        raise NotBuilt("error", e.message) from None
    request = decode_request(mnpk)
    return Pieces(lowered.module, request.quant, request.entries, status.ir, status.max_payload)


def _runnable(module: Module, status) -> None:
    """The well-formed program is one the worker advertises it runs."""
    missing = ir.missing_ops(module, status.ops)
    if missing:
        raise NotBuilt("not_supported", "the worker does not advertise "
                       f"{', '.join(missing)}, which the case's well-formed program needs")
    values = sum(1 for i in module.instrs if ir.defines_value(i.opcode))
    if values > status.rf_slots:
        raise NotBuilt("not_supported", f"the case's well-formed program has {values} values, "
                       f"over the worker's rf_slots {status.rf_slots}")


def build(case, status) -> bytes:
    """The malformed request of the case for a worker with `status` (NotBuilt if none)."""
    pieces = build_pieces(case, status)
    try:
        raw = malformation(case).make(pieces)
    except ValueError as e:
        raise NotBuilt("error", f"{case.mutation} cannot be made from the case's flow: "
                       f"{e}") from None
    if len(raw) > status.max_payload:
        raise NotBuilt("not_supported", f"the {len(raw)}-byte request is over the worker's "
                       f"max_payload {status.max_payload}")
    return raw


def runs_on(case, status) -> bool:
    """Whether the case is run on a worker with `status` (not reported not_supported)."""
    try:
        build(case, status)
    except NotBuilt as e:
        return e.status != "not_supported"
    return True


def run_request(case, target: str, device) -> Outcome:
    """Build the case's request for the device's worker, send it, judge the answer: the
    expected CDP code passes (an equivalent encoding: the reference's MNRS, byte for byte);
    another code, or an MNRS where a refusal is due, fails; a transport failure or a
    login or protocol refusal is an error (a timeout a timeout). Never raises."""
    try:
        return _run(case, target, device)
    except BaseException as e:  # a bug of ours or of the device: reported, the others go on
        return Outcome(case.id, target, "error", f"{type(e).__name__}: {e}")


def _run(case, target: str, device) -> Outcome:
    def outcome(status: Status, detail: str, outputs=None) -> Outcome:
        return Outcome(case.id, target, status, detail, outputs or {})
    try:
        status = device.start()
        raw = build(case, status)
    except DeviceFailure as e:
        return outcome(*_unasked(e))
    except NotBuilt as e:
        return outcome(e.status, e.detail)
    want = case.refused.cdp_for(status.ir) if case.refused else None
    rule = malformation(case).rule
    try:
        answer = device.run(raw)
    except DeviceFailure as e:
        if e.code is None:
            return outcome(*_unasked(e))
        if e.code == want:
            return outcome("pass", f"refused by the worker with {want}", {"refused": want})
        if e.code in NOT_ASKED:
            return outcome("error", f"the worker was not asked the case: it answered "
                           f"{e.code}: {e.detail}")
        if want is None:
            return outcome("fail", f"the worker refused a well-formed request ({rule}): it "
                           f"answered {e.code}: {e.detail}")
        return outcome("fail", f"expected the worker to refuse with {want} ({rule}); it "
                       f"answered {e.code}: {e.detail}")
    if want is None:
        return _as_the_reference(case, status, answer, rule, outcome)
    return outcome("fail", f"the worker ran a malformed request: it answered a {len(answer)}"
                   f"-byte MNRS where it must refuse with {want} ({rule})")


def _as_the_reference(case, status, answer: bytes, rule: str, outcome) -> Outcome:
    """An equivalent encoding's answer: byte for byte the MNRS the reference gives the
    script's flow (its status, dtype, output order and every slot)."""
    graph, program = _flow(case)
    try:
        _, _, want, _, local = build_fixture(program, graph, _inputs(case, graph),
                                             case.abi or status.ir)
    except MnError as e:
        return outcome("error", f"the reference refuses the case's flow: {e}")
    outputs = {graph.flow: {name: list(local[name].data) for name, _ in graph.outputs}}
    if answer == want:
        return outcome("pass", f"answered as the reference ({rule})", outputs)
    try:
        got = decode_result(answer)
        said = (f"status {got.status}, entries {[(list(sh), list(d)) for sh, d in got.entries]}"
                f" in dtype {got.dtype}")
    except WorkerError as e:
        said = f"no MNRS ({e.detail})"
    expected = [(list(local[n].shape or (1,)), list(local[n].data)) for n, _ in graph.outputs]
    return outcome("fail", f"the worker answered {said} where the reference gives {expected} "
                   f"({rule})")


def _unasked(e: DeviceFailure) -> tuple[str, str]:
    """A device that could not ask the worker: (status, detail) in the worker's words."""
    if e.code is not None:  # refused at the start (a login)
        return "error", f"the worker was not asked the case: it answered {e.code}: {e.detail}"
    return ("timeout" if e.kind == "timeout" else "error",
            f"the worker could not be asked the case ({e.kind}): {e.what}")
