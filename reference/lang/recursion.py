"""Call-graph checks on parsed flows: self-recursion needs @unroll, mutual recursion never."""
from ..diagnostics import Diagnostic
from .ast import FlowDef


def check_recursion(items, calls: dict[int, list]) -> list[Diagnostic]:
    """EPARSE for each unbounded self-call and for each cycle of two or more flows."""
    flows: dict[str, FlowDef] = {}
    for item in items:
        if isinstance(item, FlowDef) and item.name not in flows:
            flows[item.name] = item
    diags = []
    edges = {}
    for name, flow in flows.items():
        called = calls.get(id(flow), [])
        selfcalls = [c for c in called if c.name == name]
        if selfcalls and flow.unroll is None:
            diags.append(Diagnostic("EPARSE", f"recursion in '{name}' needs @unroll(n) on the "
                                    "line before its definition", selfcalls[0].pos))
        edges[name] = {c.name for c in called if c.name != name and c.name in flows}
    reach = {name: _reachable(name, edges) for name in flows}
    seen = set()
    for name, flow in flows.items():  # script order
        if name in seen:
            continue
        cycle = [m for m in flows if m != name and m in reach[name] and name in reach[m]]
        if cycle:
            members = [name, *cycle]
            seen.update(members)
            listed = ", ".join(f"'{m}'" for m in members[:6])
            if len(members) > 6:
                listed += f" and {len(members) - 6} more"
            diags.append(Diagnostic("EPARSE", f"mutual recursion between flows {listed}: a "
                                    "cycle of calls is never allowed (only a flow calling "
                                    "itself, under @unroll(n))", flow.pos))
    return diags


def _reachable(start: str, edges) -> set[str]:
    out, todo = set(), list(edges.get(start, ()))
    while todo:
        n = todo.pop()
        if n not in out:
            out.add(n)
            todo.extend(edges.get(n, ()))
    return out
