"""Run the plan's flows in order on the local interpreter; a failed flow poisons its
dependents (R38) while independent flows still run."""
from dataclasses import dataclass, field

from ..diagnostics import Diagnostic
from ..graph.model import FlowGraph
from ..interp.evaluate import FlowFailure, evaluate
from ..lang import ast
from ..ml.train import MlRefusal, RoundFailed, train_definition
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
             ctx: OpContext, trap_overflow: bool = False,
             ml: dict[str, tuple[ast.MLDef, list[dict]]] | None = None) -> RunResult:
    """graphs: each flow's graph; ml: each ML definition with its configurations."""
    ml = ml or {}
    result = RunResult()
    for name in plan.order:
        deps = plan.deps[name]
        bad = next(((p, f) for p, f in deps.items() if f in result.failed), None)
        if bad:
            result.failed.add(name)
            result.errors.append(_err(f"flow '{name}' not run: its input '{bad[0]}' comes "
                                      f"from failed flow '{bad[1]}'"))
            continue
        params = ml[name][0].params if name in ml else graphs[name].params
        inputs = {}
        for p in (getattr(p, "name", p) for p in params):
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
            error = _run_one(name, graphs, ml, inputs, values, ctx, trap_overflow, result)
            if error:
                result.failed.add(name)
                result.errors.append(error)
    return result


def _run_one(name, graphs, ml, inputs, values, ctx, trap, result) -> Diagnostic | None:
    """Run one flow or ML definition; its outputs land in result, its failure is returned."""
    if name not in ml:
        try:
            result.outputs[name] = evaluate(graphs[name], inputs, values, ctx, trap)
        except FlowFailure as e:
            return _err(f"flow '{name}': {e.message}")
        return None
    definition, configs = ml[name]
    try:
        result.outputs[name] = train_definition(definition, configs, inputs, ctx.quantres)
    except MlRefusal as r:
        return Diagnostic("E028", f"ml definition '{name}' ({definition.algo}): {r.reason}",
                          definition.pos)
    except RoundFailed as f:
        return _err(f"flow '{f.flow}': {f.message}")
    return None
