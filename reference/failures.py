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
from the socket to the report; no message is parsed back. A device failure is made by one
of the factories below (`timed_out`, `died`, ...), one wording per kind."""
from typing import Literal, get_args

from .diagnostics import Diagnostic

# How a device failed when the worker gave no CDP code: the one list of stable names.
FailureKind = Literal["timeout", "connect_failed", "malformed_response", "too_large", "died"]
FAILURE_KINDS: tuple[str, ...] = get_args(FailureKind)
# How a job may fail that another worker would not fail the same way: a sweep's chain then
# moves on to another worker. DOWN: the worker itself failed (it died, stalled, or lied about
# its bytes) and gets no more work in the run; a worker that restarted and lost the job
# (NO_SUCH_JOB) answers again. A refusal every worker would give (a login, a pre-flight
# refusal, a malformed request, a payload too large) is none of these.
DOWN = frozenset({"connect_failed", "timeout", "malformed_response", "died"})
MOVABLE = DOWN | {"NO_SUCH_JOB"}
# --replicas: an alias whose answer the others outvoted (it gets no more work in the run),
# and a round whose answers gave no majority (its configuration fails)
OUTVOTED, NO_MAJORITY = "outvoted", "no_majority"


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
    then says which, by a stable name (FailureKind). `what` is the failure in a few words,
    `where` the device it names (`Device.where`), given by whichever layer knows it: the
    message is written from them in one shape (below), never by hand."""

    def __init__(self, what: str, code: str | None = None, detail: str = "",
                 kind: FailureKind | None = None, where: str = ""):
        super().__init__(what)
        self.what, self.code, self.detail, self.kind, self.where = what, code, detail, kind, where

    @property
    def message(self) -> str:
        """`<where>: <kind>: <what>`; a worker's coded answer `<where>: <what>`, its code in
        the text already (`worker_errors`)."""
        head = f"{self.where}: " if self.where else ""
        return head + (f"{self.kind}: " if self.kind and not self.code else "") + self.what

    def __str__(self) -> str:
        return self.message

    @property
    def cause(self) -> str | None:
        return self.code or self.kind

    def at(self, where: str) -> "DeviceFailure":
        """This failure naming the device `where` (a transport's failure, met by a device)."""
        return DeviceFailure(self.what, self.code, self.detail, self.kind, where)


# One wording per failure kind: every device and transport makes its failures with these.
def timed_out(where: str, what: str, waited_s: float, then: str = "") -> DeviceFailure:
    """`<what> within the <N> s deadline[; <then>]`: a wait that passed its deadline."""
    return DeviceFailure(f"{what} within the {waited_s:g} s deadline"
                         + (f"; {then}" if then else ""), kind="timeout", where=where)


def died(where: str, how: str) -> DeviceFailure:
    """The device's process ended, or stopped answering for good: `how`."""
    return DeviceFailure(how, kind="died", where=where)


def unreachable(where: str, why: str) -> DeviceFailure:
    """No exchange could be made (no connection, the run interrupted, no child spawned)."""
    return DeviceFailure(why, kind="connect_failed", where=where)


def malformed(where: str, what: str) -> DeviceFailure:
    """An answer that breaks the protocol: `what` it was."""
    return DeviceFailure(what, kind="malformed_response", where=where)


def too_large(where: str, what: str) -> DeviceFailure:
    """An answer over this client's size cap."""
    return DeviceFailure(what, kind="too_large", where=where)


def coded(where: str, text: str, code: str, detail: str = "") -> DeviceFailure:
    """The worker's own answer, a CDP code: `text` is its line (`worker_errors`)."""
    return DeviceFailure(text, code, detail, where=where)


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
