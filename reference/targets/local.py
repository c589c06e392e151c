"""The local interpreter as a target: a flow graph evaluated with maned.ops in this process
(or, through `evaluate_job`, in a pool worker process)."""
from ..diagnostics import Diagnostic
from ..graph.model import FlowGraph
from ..interp.evaluate import FlowFailure, evaluate
from ..ops.registry import OpContext
from ..tensor import Tensor
from .target import LOCAL, TargetFailure


def evaluate_job(graph: FlowGraph, inputs, globals_, quantres: int, trap: bool):
    """One local job, picklable for a process pool: ('ok', outputs) or ('err', message)."""
    try:
        return "ok", evaluate(graph, inputs, globals_, OpContext(quantres), trap)
    except FlowFailure as e:
        return "err", e.message


def local_result(flow: str, got) -> dict[str, Tensor]:
    """The outputs of an `evaluate_job` answer, or its TargetFailure."""
    status, value = got
    if status == "ok":
        return value
    raise TargetFailure(Diagnostic("ERUN", f"flow '{flow}': {value}"))


class LocalTarget:
    name = LOCAL
    kind = "local"
    pid = None

    def __init__(self, quantres: int, trap: bool = False):
        self.quantres, self.trap = quantres, trap

    def open(self) -> None:
        return None

    def run(self, graph: FlowGraph, inputs: dict[str, Tensor],
            globals_: dict[str, Tensor] | None = None, round_flow: bool = False,
            on_start=None) -> dict[str, Tensor]:
        if on_start:
            on_start()
        got = evaluate_job(graph, inputs, globals_ or {}, self.quantres, self.trap)
        return local_result(graph.flow, got)

    def close(self) -> None:
        pass

    def abort(self) -> None:
        pass
