"""Evaluate a flow graph on the exact engine: each node on the executor's kernel where its
plan has one, else on the reference's op. Anything the engine does not answer as a worker
would (a kernel that refuses its operands, an axis op on a rank-0 value, an overflow trap)
is the reference's to answer: the whole graph runs there, so every failure is worded and
positioned exactly as the reference words it."""
import numpy as np

from bark_vm.executor.ints import I32

from ..catalogue import OpContext
from ..graph.flow_graph import FlowGraph
from ..interp import evaluate as reference
from ..tensor import Tensor
from .plan import steps_of
from .values import register, tensor


class _Reference(Exception):
    """The graph is the reference's to run."""


def evaluate(graph: FlowGraph, inputs: dict[str, Tensor], globals_: dict[str, Tensor],
             ctx: OpContext, trap_overflow: bool = False) -> dict[str, Tensor]:
    """As `maned.interp.evaluate.evaluate`, with the same outputs and the same failures."""
    if trap_overflow or reference.refusal(graph):
        return reference.evaluate(graph, inputs, globals_, ctx, trap_overflow)
    try:
        return _run(graph, inputs, globals_, ctx)
    except _Reference:
        return reference.evaluate(graph, inputs, globals_, ctx)


def _run(graph: FlowGraph, inputs, globals_, ctx: OpContext) -> dict[str, Tensor]:
    q = ctx.quantres
    values: list = []  # per node: (np.ndarray | Tensor, is it rank 0 in the reference)
    for step in steps_of(graph):
        node = step.node
        if node.kind in ("param", "global", "const"):
            t = (inputs[node.name] if node.kind == "param" else
                 globals_[node.name] if node.kind == "global" else node.value)
            values.append((t, t.rank == 0))
            continue
        args = [values[s] for s in node.srcs]
        registers = None if step.kernel is None else _registers(args)
        if registers is None:
            values.append(_on_reference(node, args, ctx))
            continue
        rank0 = [r for _, r in args]
        if step.axis_op and any(rank0):
            raise _Reference  # docs/ops.md §5.0: the reference refuses it
        try:
            out = step.kernel(q, *registers, **step.params)
        except Exception:  # a refusal, or worse: the reference says what it is
            raise _Reference from None
        if out.dtype != I32 or out.ndim == 0:
            raise _Reference
        values.append((out, step.keeps_rank0 and all(rank0)))
    return {name: _tensor(values[i]) for name, i in graph.outputs}


def _registers(args) -> list[np.ndarray] | None:
    """The operands as registers, or None when one cannot be (it stays the reference's)."""
    out = []
    for value, _ in args:
        arr = register(value) if isinstance(value, Tensor) else value
        if arr is None:
            return None
        out.append(arr)
    return out


def _on_reference(node, args, ctx: OpContext) -> tuple[Tensor, bool]:
    try:
        t = reference.run_op(node, [_tensor(a) for a in args], ctx, False)
    except reference.FAILED:
        raise _Reference from None
    return t, t.rank == 0


def _tensor(value) -> Tensor:
    v, rank0 = value
    return v if isinstance(v, Tensor) else tensor(v, rank0)
