"""A Bark VM child or a CDP worker as a target: the flow compiled at the device's ABI (once
per run, `lowering.compiled`), pre-flight against its status, the MNPK sent through the
device, the MNRS decoded. Every failure is a coded TargetFailure naming the flow."""
from bark_vm.wire.constants import DEFAULT_ABI
from bark_vm.wire.status import Status

from ..diagnostics import Diagnostic
from ..graph.flow_graph import FlowGraph
from ..lang.ast import Quant
from ..failures import DeviceFailure, Refused, TargetFailure, internal_error
from ..lowering.compiled import Compiled, Compiler
from ..lowering.envelopes import RequestTemplate, decode_result
from ..tensor import Tensor
from .preflight import preflight
from .target import Io, Ran, TargetKind


class RoutedTarget:
    def __init__(self, device, kind: TargetKind, quant: Quant, compiler: Compiler):
        """device: a VmDevice or CdpDevice (start, run, pid, alias, abort, close)."""
        self.device, self.kind, self.quant, self.compiler = device, kind, quant, compiler
        self.name = device.alias
        self._templates: dict[int, tuple[Compiled, RequestTemplate]] = {}

    @property
    def pid(self) -> int | None:
        return self.device.pid

    def open(self) -> Status:
        """The device's status (a VM child spawned, a worker probed: once per run)."""
        return self.device.start()

    def spawn(self) -> None:
        """Start the device's process now (a VM child), without waiting for its status."""
        self.device.spawn()

    def prepare(self, graph: FlowGraph, inputs: dict[str, Tensor]) -> None:
        """Compile a flow this target will run, ahead of its job: at the device's ABI, or
        the default one while the device is still starting (a refusal waits for the job)."""
        status = self.device.status
        self.compiler.warm(graph, status.ir if status is not None else DEFAULT_ABI, inputs)

    @property
    def sync_limit(self) -> int | None:
        """The request size from which the device answers asynchronously (CDP), if any."""
        return self.device.sync_limit

    def request_size(self, graph: FlowGraph, inputs: dict[str, Tensor]) -> int:
        """The bytes of the request that would carry this flow (0 when it would be refused
        before sending, which its job will say)."""
        status = self.device.status
        try:
            compiled = self.compiler.compile(graph, status.ir if status is not None
                                             else DEFAULT_ABI, inputs)
            if compiled.refusal:
                return 0
            return len(self._request(compiled, graph, inputs))
        except Refused:
            return 0

    def run(self, graph: FlowGraph, inputs: dict[str, Tensor],
            globals_: dict[str, Tensor] | None = None, round_flow: bool = False,
            on_start=None) -> Ran:
        flow = graph.flow
        if self.device.status is None:  # while the device starts, its job is lowered
            self.prepare(graph, inputs)
        try:
            status = self.open()
            compiled = self.compiler.compile(graph, status.ir, inputs)
            if compiled.refusal:  # refused here exactly as the interpreter refuses it
                raise TargetFailure(Diagnostic("ERUN", f"flow '{flow}': {compiled.refusal}"))
            request = self._request(compiled, graph, inputs)
            preflight(self.name, status, compiled, len(request), round_flow)
        except Refused as e:  # by the lowering, the encoding or the pre-flight
            raise TargetFailure(Diagnostic("EPLAN", f"flow '{flow}': {e}", cause=e.cause)) \
                from None
        except DeviceFailure as e:
            raise _failed(flow, e) from None
        if on_start:
            on_start()
        sent = len(request)
        try:
            answer = self.device.run(request)
        except DeviceFailure as e:
            raise _failed(flow, e, (sent, None)) from None
        except Exception as e:  # a bug, or a device lying past what was foreseen
            raise TargetFailure(internal_error(flow, self.name, e), io=(sent, None)) from None
        io = (sent, len(answer))
        try:
            return Ran(decode_result(answer, compiled, self.quant), io)
        except DeviceFailure as e:  # an answer that does not decode
            raise _failed(flow, e.at(self.device.where), io) from None
        except Exception as e:
            raise TargetFailure(internal_error(flow, self.name, e), io=io) from None

    def _request(self, compiled: Compiled, graph: FlowGraph, inputs: dict[str, Tensor]) -> bytes:
        """The job's MNPK from its program's template, built once per run (`encode_job`'s
        bytes); the compiled record is held so that its id is not reused meanwhile."""
        held = self._templates.get(id(compiled))
        if held is None:
            held = self._templates[id(compiled)] = (compiled, RequestTemplate(compiled.lowered,
                                                                              self.quant))
        return held[1].encode([inputs[p] for p in graph.params])

    def close(self) -> None:
        self.device.close()

    def abort(self) -> None:
        self.device.abort()


def _failed(flow: str, e: DeviceFailure, io: Io | None = None) -> TargetFailure:
    """A device's failure as the job's: ERUN, its cause the CDP code or transport name."""
    return TargetFailure(Diagnostic("ERUN", f"flow '{flow}': {e.message}", cause=e.cause),
                         e.code or "ERUN", io)
