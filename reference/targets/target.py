"""The one interface every target implements (DESIGN §7); how they fail is `maned.failures`,
what a routed one drives is a `maned.devices.Device`.

    open()                   -> the target's Status (None for the local interpreter)
    spawn()                  -> start its process now without waiting for it (D7), if any
    prepare(graph, inputs)   -> compile a flow ahead of its job (nothing to do locally)
    sync_limit               -> the request size from which it answers asynchronously, if any
    request_size(graph, ins) -> the bytes a job of this flow would send (0 locally)
    run(graph, inputs, ...)  -> Ran (outputs, and the bytes sent and received; None
                                locally), or TargetFailure; calls on_start() the moment
                                the job is sent (after any refusal before it)
    close() / abort()        -> done with it / stop at once (Ctrl-C)

`name` is the alias a job is routed to ("local" for the interpreter), `pid` the process
that runs the job where there is one. A failure is a value with a code (a Diagnostic);
only the printer makes it text."""
from typing import Literal, NamedTuple, Protocol

from bark_vm.wire.status import Status

from ..graph.flow_graph import FlowGraph
from ..tensor import Tensor

LOCAL = "local"  # the local interpreter's target name
# what a target runs on: the local interpreter, a device block's Bark VM child or CDP worker
# (a DeviceSpec's kind), or a device the caller lent the run (`maned.run(devices=...)`)
TargetKind = Literal["local", "vm", "remote", "lent"]
Io = tuple[int, int | None]  # bytes sent, bytes received (None: no answer came)


class Ran(NamedTuple):
    """A job's answer: its outputs by name, and what travelled (None when nothing did)."""
    outputs: dict[str, Tensor]
    io: Io | None = None


class Target(Protocol):
    name: str
    kind: TargetKind

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
            on_start=None) -> Ran: ...

    def close(self) -> None: ...

    def abort(self) -> None: ...
