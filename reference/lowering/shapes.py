"""Which values of a flow graph are rank-0 locally (R5): a routed `[1]` result is turned back
into rank-0 exactly where the local interpreter would have produced a scalar.

A param is rank-0 when its actual input is; a constant when its literal is; an op result
when the op keeps a rank-0 operand rank-0 (elementwise, logic, activations, scalar_mul,
layernorm, batchnorm) and every operand is rank-0 (R4: rank-0 with `[1]` gives `[1]`).
Every other op (reductions included, which give `[1]`) yields rank ≥ 1.
"""
from ..graph.flow_graph import FlowGraph
from ..tensor import Tensor

RANK_KEEPING = frozenset({
    "add", "sub", "mul", "div", "gt", "lt", "eq", "ge", "le", "ne", "and", "or", "xor", "not",
    "relu", "sigmoid", "tanh", "softmax", "layernorm", "scalar_mul", "batchnorm",
})


def rank0_values(graph: FlowGraph, inputs: dict[str, Tensor]) -> list[bool]:
    """Per graph node: is its local value rank-0? `inputs` maps param name -> tensor."""
    out: list[bool] = []
    for n in graph.nodes:
        if n.kind == "param":
            out.append(inputs[n.name].rank == 0)
        elif n.kind == "const":
            out.append(n.value.rank == 0)
        elif n.kind == "op":
            out.append(n.op in RANK_KEEPING and all(out[s] for s in n.srcs))
        else:  # a global: never routed
            out.append(False)
    return out


def rank0_outputs(graph: FlowGraph, inputs: dict[str, Tensor]) -> tuple[bool, ...]:
    """Per returned name, in return order: is the local result rank-0?"""
    r0 = rank0_values(graph, inputs)
    return tuple(r0[i] for _, i in graph.outputs)
