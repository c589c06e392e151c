"""The plan: which flows run (every top-level flow, or `--flow NAME` and its producers), the
dependency edges (a parameter named like another flow's output, D9) and a run order."""
from dataclasses import dataclass

from ..diagnostics import Diagnostic, MnError
from ..lang import ast
from ..lang.names import suggest


@dataclass(frozen=True)
class Plan:
    order: tuple[str, ...]  # dependency order, script order among equals
    deps: dict[str, dict[str, str]]  # flow -> {param: producing flow}
    printed: tuple[str, ...]  # blocks to print, in script order


def _plan_error(msg: str) -> MnError:
    return MnError(Diagnostic("EPLAN", msg))


def statements(item) -> tuple:
    """The statements of one body item (a repeat holds several, an inert print none)."""
    if isinstance(item, ast.Repeat):
        return item.body
    return (item,) if isinstance(item, ast.Statement) else ()


def helpers(program: ast.Program) -> set[str]:
    """Flows another flow calls: inlined, never scheduled on their own."""
    return {t.name for flow in program.flows for item in flow.body
            for s in statements(item) for t in s.terms
            if isinstance(t, ast.FlowCall) and t.name != flow.name}


def definitions(program: ast.Program) -> dict[str, ast.FlowDef | ast.MLDef]:
    """Every flow and ML definition by name, in script order."""
    return {d.name: d for d in program.items if isinstance(d, (ast.FlowDef, ast.MLDef))}


def make_plan(program: ast.Program, selected: str | None) -> Plan:
    """Plan flows and ML definitions alike: a parameter named like another top-level
    definition's output is an edge from it."""
    flows = definitions(program)
    called = helpers(program)
    tops = [n for n in flows if n not in called]
    if selected is not None and selected not in flows:
        raise MnError(Diagnostic("EUSAGE", f"--flow {selected}: no such flow"
                                 + suggest(selected, flows) + "; the script's flows: "
                                 + ", ".join(flows)))
    producers: dict[str, list[str]] = {}
    for name in tops:
        for t in flows[name].returns:
            producers.setdefault(t.name, []).append(name)
    deps: dict[str, dict[str, str]] = {}
    for name in set(tops) | ({selected} if selected else set()):
        deps[name] = {}
        for p in flows[name].params:
            makers = [m for m in producers.get(p.name, []) if m != name]
            if len(makers) > 1:
                raise _plan_error(f"flow '{name}': parameter '{p.name}' is returned by several "
                                  f"flows ({', '.join(makers)}); rename one output")
            if makers:
                deps[name][p.name] = makers[0]
    run = _closure(selected, deps) if selected else set(tops)
    order = _order([n for n in flows if n in run], deps)
    printed = (selected,) if selected else tuple(n for n in flows if n in run)
    return Plan(tuple(order), {n: deps[n] for n in order}, printed)


def _closure(selected: str, deps) -> set[str]:
    run, todo = set(), [selected]
    while todo:
        n = todo.pop()
        if n not in run:
            run.add(n)
            todo.extend(deps.get(n, {}).values())
    return run


def _order(names: list[str], deps) -> list[str]:
    """Kahn's order with script order breaking ties; a cycle is refused naming it."""
    done: list[str] = []
    left = list(names)
    while left:
        ready = [n for n in left if all(d in done for d in deps[n].values())]
        if not ready:
            raise _plan_error("circular flow dependency: " + _cycle(left, deps))
        done.append(ready[0])
        left.remove(ready[0])
    return done


def _cycle(left: list[str], deps) -> str:
    path, n = [], left[0]
    while n not in path:
        path.append(n)
        n = next(d for d in deps[n].values() if d in left)
    return " -> ".join(path[path.index(n):] + [n])
