"""The local target: a flow graph evaluated in this process (or, through `evaluate_job`, in
a pool worker process), on the exact engine (DESIGN §14) or, with `reference`, on the
pure-Python reference alone (`--reference`, and every `--verify` re-run)."""
import pickle
import threading
from collections import OrderedDict
from dataclasses import replace

from ..diagnostics import Diagnostic
from ..graph.flow_graph import FlowGraph
from ..interp import evaluate as interp
from ..interp.evaluate import FAILED
from ..catalogue import OpContext
from ..tensor import Tensor
from ..failures import TargetFailure
from .target import LOCAL, Ran, TargetKind


def evaluate_job(graph: FlowGraph, inputs, globals_, quantres: int, trap: bool,
                 reference: bool = False):
    """One local job, picklable for a process pool: ('ok', outputs) or ('err', message)."""
    if reference:
        evaluate = interp.evaluate
    else:  # numpy and the executor load with the first job on the engine
        from ..engine.evaluate import evaluate
    try:
        return "ok", evaluate(graph, inputs, globals_, OpContext(quantres), trap)
    except FAILED as e:
        return "err", e.message


class PickledPrograms:
    """The coordinator's side of `evaluate_program`: each program (a graph's nodes,
    parameters and outputs; not its name) pickled once per run, with a token naming it."""

    def __init__(self):
        self._known: dict[tuple, tuple[FlowGraph, int, bytes]] = {}
        self._lock = threading.Lock()  # the scheduler's thread and the pool's (a chain's
        # next round) both ask: one token per program, never two programs per token

    def of(self, graph: FlowGraph) -> tuple[int, bytes]:
        key = (id(graph.nodes), graph.params, graph.outputs)
        with self._lock:
            if key not in self._known:  # the graph is held, so its nodes' id stays its own
                self._known[key] = (graph, len(self._known), pickle.dumps(graph))
            _, token, blob = self._known[key]
        return token, blob


_PROGRAMS: OrderedDict = OrderedDict()  # in a pool process: token -> graph
PROGRAMS_KEPT = 64


def evaluate_program(run_id: str, token: int, blob: bytes, flow: str, inputs, globals_,
                     quantres: int, trap: bool, reference: bool = False):
    """`evaluate_job` in a pool process that keeps each program it has unpickled (a round
    chain sends one program many times): the graph is `blob`, named `flow` for this job."""
    key = (run_id, token)
    graph = _PROGRAMS.get(key)
    if graph is None:
        graph = _PROGRAMS[key] = pickle.loads(blob)
        if len(_PROGRAMS) > PROGRAMS_KEPT:
            _PROGRAMS.popitem(last=False)
    else:
        _PROGRAMS.move_to_end(key)
    return evaluate_job(replace(graph, flow=flow), inputs, globals_, quantres, trap, reference)


def local_result(flow: str, got) -> dict[str, Tensor]:
    """The outputs of an `evaluate_job` answer, or its TargetFailure."""
    status, value = got
    if status == "ok":
        return value
    raise TargetFailure(Diagnostic("ERUN", f"flow '{flow}': {value}"))


ENGINE_FROM = 1_000  # values a run's data must hold for its local flows to go to the engine


def engine_chosen(values: dict[str, Tensor], reference: bool | None) -> bool:
    """Whether a run's local flows go to the exact engine: never with `--reference` (True),
    always with `--engine` (False), else when the run's data (its in:: values, csv() and
    --in inputs) hold at least ENGINE_FROM values. Below that the reference finishes such
    a run before numpy would have loaded, and the numbers are the same either way."""
    if reference is not None:
        return not reference
    return sum(t.size for t in values.values()) >= ENGINE_FROM


class LocalTarget:
    name = LOCAL
    kind: TargetKind = "local"
    pid = None
    sync_limit = None  # answers in the same call, whatever the size

    def __init__(self, quantres: int, trap: bool = False, reference: bool = False):
        self.quantres, self.trap, self.reference = quantres, trap, reference

    def open(self) -> None:
        return None

    def spawn(self) -> None:
        pass

    def prepare(self, graph: FlowGraph, inputs: dict[str, Tensor]) -> None:
        pass  # the interpreter takes the graph as it is

    def request_size(self, graph: FlowGraph, inputs: dict[str, Tensor]) -> int:
        return 0

    def run(self, graph: FlowGraph, inputs: dict[str, Tensor],
            globals_: dict[str, Tensor] | None = None, round_flow: bool = False,
            on_start=None) -> Ran:
        if on_start:
            on_start()
        got = evaluate_job(graph, inputs, globals_ or {}, self.quantres, self.trap,
                           self.reference)
        return Ran(local_result(graph.flow, got))  # nothing travels

    def close(self) -> None:
        pass

    def abort(self) -> None:
        pass
