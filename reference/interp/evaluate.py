"""Evaluate a flow graph node by node. Every op result goes through the one wrap32 (D1);
with trap_overflow the first raw result outside int32 fails the flow instead (R12)."""
from ..graph.flow_graph import FlowGraph, Node
from ..numeric.int32 import fits32, wrap32
from ..catalogue import BY_NAME, OpContext
from ..failures import OpError, Refused
from ..tensor import Tensor

# A flow that cannot run (Refused) or failed while running (OpError): its message omits the
# flow's name, which the caller knows.
FAILED = (Refused, OpError)


def refusal(graph: FlowGraph) -> str | None:
    """Why this graph cannot run locally at all (checked before it runs, R26), or None."""
    for node in graph.nodes:
        if node.kind != "op":
            continue
        kind = BY_NAME[node.op].kind
        if kind == "none":
            return f"op '{node.op}' is registered but not executable on any path"
    return None


def evaluate(graph: FlowGraph, inputs: dict[str, Tensor], globals_: dict[str, Tensor],
             ctx: OpContext, trap_overflow: bool = False) -> dict[str, Tensor]:
    """Run the graph; returns output name -> tensor. Raises Refused or OpError (FAILED)."""
    why = refusal(graph)
    if why:
        raise Refused(why)
    values: list[Tensor] = []
    for node in graph.nodes:
        if node.kind == "param":
            values.append(inputs[node.name])
        elif node.kind == "global":
            values.append(globals_[node.name])
        elif node.kind == "const":
            values.append(node.value)
        else:
            values.append(run_op(node, [values[s] for s in node.srcs], ctx, trap_overflow))
    return {name: values[i] for name, i in graph.outputs}


def run_op(node: Node, args: list[Tensor], ctx: OpContext, trap: bool) -> Tensor:
    from .kernels import KERNELS  # every op's function, loaded when the reference first runs one
    try:
        raw = KERNELS[node.op](ctx, *args, **dict(node.params))
    except OpError as e:
        raise OpError(f"{node.op if e.terse else describe(node)}: {e}") from None
    if all(fits32(v) for v in raw.data):
        return raw
    if trap:
        i, v = next((i, v) for i, v in enumerate(raw.data) if not fits32(v))
        raise OpError(f"overflow trap: {trap_site(node)} element {i} is {v}")
    return Tensor(raw.shape, tuple(wrap32(v) for v in raw.data))


def describe(node: Node) -> str:
    """How a failure names an op node, by the user's names: `op 'NAME' -> 'OUTPUT'`, or
    `op 'NAME' at LINE:COL` for an intermediate value no name binds."""
    if node.name:
        return f"op '{node.op}' -> '{node.name}'"
    if node.pos is not None:
        return f"op '{node.op}' at {node.pos}"
    return f"op '{node.op}'"


def trap_site(node: Node) -> str:
    """The overflow trap's fixed upstream form: `op 'NAME' (value vID -> 'OUTPUT')`."""
    named = f" -> '{node.name}'" if node.name else ""
    return f"op '{node.op}' (value v{node.id}{named})"
