"""The one interface every target implements (DESIGN §7), and its two failures.

    open()                   -> the target's Status (None for the local interpreter)
    spawn()                  -> start its process now without waiting for it (D7), if any
    prepare(graph, inputs)   -> compile a flow ahead of its job (nothing to do locally)
    sync_limit               -> the request size from which it answers asynchronously, if any
    request_size(graph, ins) -> the bytes a job of this flow would send (0 locally)
    run(graph, inputs, ...)  -> {output name: Tensor}, or TargetFailure; calls on_start()
                                the moment the job is sent (after any refusal before it)
    last_io                  -> (bytes sent, bytes received) of its last job, None locally
    close() / abort()        -> done with it / stop at once (Ctrl-C)

`name` is the alias a job is routed to ("local" for the interpreter), `pid` the process
that runs the job where there is one. A failure is a value with a code (a Diagnostic);
only the printer makes it text."""
from typing import Literal, Protocol, get_args

from bark_vm.wire.status import Status

from ..diagnostics import Diagnostic
from ..graph.flow_graph import FlowGraph
from ..tensor import Tensor

LOCAL = "local"  # the local interpreter's target name
# How a device failed when the worker gave no CDP code: the one list of stable names.
FailureKind = Literal["timeout", "connect_failed", "malformed_response", "too_large", "died"]
FAILURE_KINDS: tuple[str, ...] = get_args(FailureKind)


class DeviceFailure(Exception):
    """A job a device could not answer. `code` is the worker's CDP code, or None when the
    device itself failed (the child died, the channel broke, a deadline passed); `kind`
    then says which, by a stable name (timeout, connect_failed, malformed_response,
    too_large, died)."""

    def __init__(self, message: str, code: str | None = None, detail: str = "",
                 kind: FailureKind | None = None):
        super().__init__(message)
        self.message, self.code, self.detail, self.kind = message, code, detail, kind

    @property
    def cause(self) -> str | None:
        return self.code or self.kind


class TargetFailure(Exception):
    """A job that ended without outputs: its coded diagnostic (EPLAN or ERUN, naming the
    flow) and the code its trace record ends with."""

    def __init__(self, diagnostic: Diagnostic, trace_code: str | None = None):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic
        self.trace_code = trace_code or diagnostic.code


class Device(Protocol):
    """What a routed target drives (a Bark VM child, a CDP worker): `status` once started,
    `run(request bytes) -> result bytes` or DeviceFailure."""
    alias: str
    status: Status | None
    sync_limit: int | None

    @property
    def pid(self) -> int | None: ...

    def spawn(self) -> None: ...

    def start(self) -> Status: ...

    def run(self, request: bytes) -> bytes: ...

    def abort(self) -> None: ...

    def close(self) -> None: ...


class Target(Protocol):
    name: str
    kind: str  # "local", "vm" or "remote"
    last_io: tuple[int, int | None] | None

    @property
    def pid(self) -> int | None: ...

    @property
    def sync_limit(self) -> int | None: ...

    def open(self) -> Status | None: ...

    def spawn(self) -> None: ...

    def prepare(self, graph: FlowGraph, inputs: dict[str, Tensor]) -> None: ...

    def request_size(self, graph: FlowGraph, inputs: dict[str, Tensor]) -> int: ...

    def run(self, graph: FlowGraph, inputs: dict[str, Tensor],
            globals_: dict[str, Tensor] | None = None, round_flow: bool = False,
            on_start=None) -> dict[str, Tensor]: ...

    def close(self) -> None: ...

    def abort(self) -> None: ...
