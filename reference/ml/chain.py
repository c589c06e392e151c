"""Train one Tier A configuration on the local interpreter, round by round, in the order the
scheduler's MlRun runs the expanded flows (init, the chain of rounds, the epilogue): the
direct path that tests and tools use without a plan."""
from ..graph.flow_graph import FlowGraph
from ..interp.evaluate import FlowFailure, evaluate
from ..catalogue import OpContext
from ..tensor import Tensor
from .base import Start
from .chunking import round_spans, steps_per_round
from .round_graphs import RoundGraphs, round_name


def run_round(module, name: str, first: int, count: int, start: Start, state: dict,
              cfg: dict, q: int) -> tuple[dict[str, Tensor], list[Tensor]]:
    """One round flow: returns the next state and this round's extras, in output order."""
    return run_graph(module.round_graph(name, first, count, start, cfg, q), start, state, q)


def run_graph(graph: FlowGraph, start: Start, state: dict,
              q: int) -> tuple[dict[str, Tensor], list[Tensor]]:
    """One round flow's graph on the interpreter: the next state and the round's extras."""
    try:
        out = evaluate(graph, {**start.constants, **state}, {}, OpContext(q))
    except FlowFailure as e:
        e.flow = graph.flow  # errors about a round name it (R38)
        raise
    new_state = {k: out[k] for k in start.state}
    extras = [out[n] for n, _ in graph.outputs if n not in start.state]
    return new_state, extras


def train_local(module, X: Tensor, y: Tensor | None, cfg: dict, q: int,
                per_round: int | None = None, definition: str = "fit", config: int = 0):
    """(descriptor, second output) of one configuration. `per_round` forces the chunk size."""
    start = module.init(X, y, cfg, q)
    graphs = RoundGraphs(module, definition, q)

    def build(first: int, count: int, round_: int = 0):
        return graphs.build(config, start, cfg, first, count, round_)
    k = per_round or steps_per_round(module, round_name(definition, config, 0), start, cfg, q,
                                     build)
    state, extras = dict(start.state), []
    for r, (first, count) in enumerate(round_spans(start.steps, k)):
        state, more = run_graph(build(first, count, r), start, state, q)
        extras.extend(more)
    return module.epilogue(start, state, extras, cfg, q)
