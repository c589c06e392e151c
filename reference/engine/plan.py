"""Which kernel runs each node of a program: the executor's, with the parameters a worker
would decode from the node's instruction, or the reference's where the executor has no
kernel or the wire cannot carry the node's parameters (its own value or refusal, then)."""
from dataclasses import dataclass
from typing import Callable

from bark_vm.executor.table import BY_NAME as EXECUTOR_KERNELS

from ..catalogue import BY_NAME, axis_of
from ..failures import Refused
from ..graph.flow_graph import FlowGraph, Node
from ..lowering.lower import instruction
from ..lowering.shapes import RANK_KEEPING
from bark_vm.kept import Kept

PROGRAMS_KEPT = 64


@dataclass(frozen=True)
class Step:
    """One node: `kernel(q, *registers, **params)` when the executor runs it, else None."""

    node: Node
    kernel: Callable | None = None
    params: dict | None = None
    keeps_rank0: bool = False  # a rank-0 result when every operand is rank 0 (R5)
    axis_op: bool = False      # works along an axis: the reference refuses a rank-0 operand


def step_of(flow: str, node: Node) -> Step:
    if node.kind != "op" or node.op not in EXECUTOR_KERNELS or BY_NAME[node.op].kind != "both":
        return Step(node)
    kernel = EXECUTOR_KERNELS[node.op]
    try:
        params = kernel.params(instruction(flow, node))
    except Refused:  # a parameter the wire cannot carry: the reference words its refusal
        return Step(node)
    return Step(node, kernel.fn, params, node.op in RANK_KEEPING,
                axis_of(node.op, dict(node.params)) is not None)


_PROGRAMS = Kept(PROGRAMS_KEPT)  # by a graph's nodes: a round chain's program is planned once


def steps_of(graph: FlowGraph) -> tuple[Step, ...]:
    """The steps of a graph's program (its nodes; not its name)."""
    return _PROGRAMS.of(graph.nodes, lambda nodes: tuple(step_of(graph.flow, n) for n in nodes))
