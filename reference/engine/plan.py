"""Which kernel runs each node of a program: the executor's, with the parameters a worker
would decode from the node's instruction, or the reference's where the executor has no
kernel or the wire cannot carry the node's parameters (its own value or refusal, then)."""
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable

from bark_vm.executor.table import BY_NAME as EXECUTOR_KERNELS

from ..catalogue import BY_NAME, axis_of
from ..failures import Refused
from ..graph.flow_graph import FlowGraph, Node
from ..lowering.lower import instruction
from ..lowering.shapes import RANK_KEEPING

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


class Programs:
    """The steps of the programs run last, by their nodes' identity (the graph is held, so
    the id stays its own): a round chain's program is planned once."""

    def __init__(self, size: int = PROGRAMS_KEPT):
        self.size, self._lock, self._known = size, threading.Lock(), OrderedDict()
        # a forked pool process gets its own lock: another thread may hold this one
        os.register_at_fork(after_in_child=self._fresh_lock)

    def _fresh_lock(self) -> None:
        self._lock = threading.Lock()

    def of(self, graph: FlowGraph) -> tuple[Step, ...]:
        key = id(graph.nodes)
        with self._lock:
            held = self._known.get(key)
            if held is not None and held[0] is graph.nodes:
                self._known.move_to_end(key)
                return held[1]
        made = tuple(step_of(graph.flow, n) for n in graph.nodes)
        with self._lock:
            self._known[key] = (graph.nodes, made)
            if len(self._known) > self.size:
                self._known.popitem(last=False)
        return made


PROGRAMS = Programs()
