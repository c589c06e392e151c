"""How a run fails: the taxonomy every layer raises from (after the WebAssembly reference
interpreter's four classes). With `diagnostics.MnError` (a stage aborted with coded,
positioned diagnostics) these are all the exception classes of `maned`:

    Refused        refused before running: a flow that cannot be lowered, encoded or
                   pre-flighted, ML data unfit for its algorithm, a malformed probe target
    OpError        a trap in an op while running: a refused operand, an overflow trap
    DeviceFailure  a device that could not answer: its CDP code, or a FailureKind (an
                   answer that does not decode is malformed_response)
    TargetFailure  a job that ended without outputs, as its coded diagnostic

Anything else that escapes is an internal bug. The kind of a failure travels as a field
from the socket to the report; no message is parsed back."""
from typing import Literal, get_args

from .diagnostics import Diagnostic

# How a device failed when the worker gave no CDP code: the one list of stable names.
FailureKind = Literal["timeout", "connect_failed", "malformed_response", "too_large", "died"]
FAILURE_KINDS: tuple[str, ...] = get_args(FailureKind)


class Refused(Exception):
    """Refused before running. `cause` is the code the refusal is known by (a CDP code such
    as UNSUPPORTED_OP or TOO_LARGE, `rf_slots`), or None; `limit` marks a refusal by one of
    the script limits (lang/limits.py)."""

    def __init__(self, message: str, cause: str | None = None, limit: bool = False):
        super().__init__(message)
        self.message, self.cause, self.limit = message, cause, limit

    @property
    def reason(self) -> str:
        return self.message


class OpError(Exception):
    """A trap in an op: it refuses its operands (shape mismatch, bad parameter), or a raw
    result leaves int32 under trap_overflow; becomes ERUN. A `terse` trap prints as
    `<op>: <reason>`, without the value id (R41)."""

    def __init__(self, message: str = "", terse: bool = False):
        super().__init__(message)
        self.message, self.terse = message, terse


class DeviceFailure(Exception):
    """A job a device could not answer. `code` is the worker's CDP code, or None when the
    device itself failed (the child died, the channel broke, a deadline passed); `kind`
    then says which, by a stable name (FailureKind)."""

    def __init__(self, message: str, code: str | None = None, detail: str = "",
                 kind: FailureKind | None = None):
        super().__init__(message)
        self.message, self.code, self.detail, self.kind = message, code, detail, kind

    @property
    def cause(self) -> str | None:
        return self.code or self.kind


def internal_error(flow: str, target: str, e: Exception) -> Diagnostic:
    """A bug, or a device that lies in a way nothing above foresaw, met while running a job:
    the job still gets its coded answer, naming the exception."""
    return Diagnostic("ERUN", f"flow '{flow}': device '{target}': internal error "
                      f"{type(e).__name__}: {e}")


class TargetFailure(Exception):
    """A job that ended without outputs: its coded diagnostic (EPLAN or ERUN, naming the
    flow), the code its trace record ends with, and what travelled once the job was sent
    (bytes sent, bytes received or None), else None."""

    def __init__(self, diagnostic: Diagnostic, trace_code: str | None = None,
                 io: tuple[int, int | None] | None = None):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic
        self.trace_code = trace_code or diagnostic.code
        self.io = io
