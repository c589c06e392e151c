"""Run the plan's flows in order on the local interpreter; a failed flow poisons its
dependents (R38) while independent flows still run."""
from dataclasses import dataclass, field

from ..diagnostics import Diagnostic
from ..graph.model import FlowGraph
from ..interp.evaluate import FlowFailure, evaluate
from ..ops.registry import OpContext
from ..tensor import Tensor
from .plan import Plan


@dataclass
class RunResult:
    outputs: dict[str, dict[str, Tensor]] = field(default_factory=dict)
    errors: list[Diagnostic] = field(default_factory=list)
    failed: set[str] = field(default_factory=set)


def _err(msg: str) -> Diagnostic:
    return Diagnostic("ERUN", msg)


def run_plan(plan: Plan, graphs: dict[str, FlowGraph], values: dict[str, Tensor],
             ctx: OpContext, trap_overflow: bool = False) -> RunResult:
    result = RunResult()
    for name in plan.order:
        deps = plan.deps[name]
        bad = next(((p, f) for p, f in deps.items() if f in result.failed), None)
        if bad:
            result.failed.add(name)
            result.errors.append(_err(f"flow '{name}' not run: its input '{bad[0]}' comes "
                                      f"from failed flow '{bad[1]}'"))
            continue
        graph = graphs[name]
        inputs = {}
        for p in graph.params:
            if p in deps:
                inputs[p] = result.outputs[deps[p]][p]
            elif p in values:
                inputs[p] = values[p]
            else:
                result.failed.add(name)
                result.errors.append(_err(
                    f"flow '{name}': parameter '{p}' has no value (no flow returns '{p}', and "
                    f"there is no in::{p} and no --in {p}=...)"))
                break
        else:
            try:
                result.outputs[name] = evaluate(graph, inputs, values, ctx, trap_overflow)
            except FlowFailure as e:
                result.failed.add(name)
                result.errors.append(_err(f"flow '{name}': {e.message}"))
    return result
