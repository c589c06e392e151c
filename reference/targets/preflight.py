"""Pre-flight (spec/wire.md §3.7, R17): checks against the worker's advertised status before
a job is sent. A failure sends nothing: it is Refused, its cause the CDP code the worker
would have answered, or `rf_slots` for a flow over the worker's register file."""
from bark_vm.wire.constants import PROTO
from bark_vm.wire.status import Status

from ..failures import Refused
from ..lowering.compiled import Compiled


def preflight(alias: str, status: Status, compiled: Compiled, request_size: int,
              round_flow: bool) -> None:
    """proto, ops coverage, payload cap and register budget, in that order; the flow is
    known only through its compiled record."""
    mnemonics, values = compiled.mnemonics, compiled.values
    if status.proto != PROTO:
        raise Refused(f"pre-flight failed (PROTO_VERSION): device '{alias}' speaks "
                               f"proto {status.proto}, this controller requires proto "
                               f"{PROTO}; not sending the job", "PROTO_VERSION")
    missing = [m for m in mnemonics if m not in status.ops]
    if missing:
        raise Refused(f"pre-flight failed (UNSUPPORTED_OP): device '{alias}' does not "
                               f"support: {', '.join(missing)}; not sending the job",
                               "UNSUPPORTED_OP")
    cap = status.max_payload
    if request_size > cap:
        raise Refused(f"pre-flight failed (TOO_LARGE): the request is {request_size} "
                               f"bytes, device '{alias}' accepts at most {cap}; not sending "
                               "the job", "TOO_LARGE")
    slots = status.rf_slots
    if values > slots:
        advice = (f"; set budget: {slots} (or less) on the calc::ml:: definition" if round_flow
                  else "; split the flow or reduce intermediates")
        raise Refused(f"pre-flight failed: the flow compiles to {values} values, but "
                               f"device '{alias}' has {slots} register slots (ABI "
                               f"v{status.ir} RF_SLOTS){advice}", "rf_slots")
