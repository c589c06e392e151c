"""How many steps a Tier A round flow holds (DESIGN D10, R13, R42). Never changes a number."""
from bark_vm.wire.constants import MAX_TENSORS
from bark_vm.wire.ir import const_fits

from ..graph.flow_graph import FlowGraph
from ..numeric.int32 import fits32
from ..failures import Refused
from .base import Start


def wire_inputs(graph: FlowGraph) -> int:
    """Parameters plus the constants a v2 instruction cannot carry (hoisted to inputs, D4)."""
    hoisted = sum(1 for n in graph.nodes if n.kind == "const"
                  and (n.value.shape != () or not const_fits(n.value.data[0], 2)))
    return len(graph.params) + hoisted


def steps_per_round(module, name: str, start: Start, cfg: dict, q: int, build=None) -> int:
    """k = ⌊(budget − fixed)/per⌋ from the value counts of 1- and 2-step round graphs, then
    shrunk until the round's inputs and outputs fit the 16-tensor caps. `build(first,
    count)` gives round graphs (a run's RoundGraphs, which keeps them for the rounds)."""
    if build is None:
        build = (lambda first, count: module.round_graph(name, first, count, start, cfg, q))
    budget = cfg["budget"]
    v1 = len(build(0, 1).nodes)
    v2 = len(build(0, 2).nodes) if start.steps > 1 else 2 * v1
    per = max(v2 - v1, 1)
    fixed = v1 - per
    k = (budget - fixed) // per
    if k < 1:
        raise Refused(f"one step of a round flow needs {v1} values, but budget is {budget}; "
                        "raise budget:")
    k = min(k, start.steps)
    while True:
        g = build(0, k)
        if wire_inputs(g) <= MAX_TENSORS and len(g.outputs) <= MAX_TENSORS:
            return k
        if k == 1:
            raise Refused(f"a round flow needs {wire_inputs(g)} inputs and {len(g.outputs)} "
                            f"outputs, over the {MAX_TENSORS}-tensor wire limit")
        k -= 1


def sync_steps(build, k: int, size, limit: int) -> int:
    """The most steps per round, at most k, whose round request stays under `limit` bytes
    (DESIGN D10: a default-budget round to a CDP worker travels synchronously). `size(graph)`
    is a round's request size. It grows by about the same bytes per step, which gives a
    first guess from the 1- and 2-step rounds; the guess is then checked, and moved a step at
    a time, against real sizes (so the round that is kept is the one its job will send). A
    guess whose size is exactly the straight line's is the largest (one more step is over
    by construction) and needs no look upward. k stands when even one step is over the
    limit: every round goes submit-and-poll whatever the budget."""
    if k == 1:
        return k
    one = size(build(0, 1))
    if one >= limit:
        return k
    per = max(size(build(0, 2)) - one, 1)
    guess = max(1, min(k, 1 + (limit - 1 - one) // per))
    at = size(build(0, guess))
    if at == one + per * (guess - 1) and at < limit:
        return guess
    while guess > 1 and at >= limit:
        guess -= 1
        at = size(build(0, guess))
    while guess < k and size(build(0, guess + 1)) < limit:
        guess += 1
    return guess


def round_count(steps: int, k: int) -> int:
    """How many rounds round_spans(steps, k) holds, without building them."""
    return -(-steps // k)


def round_spans(steps: int, k: int) -> list[tuple[int, int]]:
    """Round r holds steps [r·k, min((r+1)·k, steps)): (first, count) per round."""
    return [(first, min(k, steps - first)) for first in range(0, steps, k)]


def fits_int32(values) -> bool:
    return all(fits32(v) for v in values)
