"""Static checks of a calc::ml:: definition (before anything trains): its hyperparameters
(E027), its parameter count (E027) and its return list (E022, R41)."""
from ..diagnostics import Diagnostic
from ..lang import ast
from ..ml_catalogue import algorithm
from ..failures import Refused
from .hyper import LargerThan, configurations, expected_returns


def check_definition(d: ast.MLDef, q: int) -> tuple[list[dict] | None, list[Diagnostic]]:
    """(configurations, []) for a usable definition, else (None, its diagnostics)."""
    head = f"ml definition '{d.name}' ({d.algo}): "
    try:
        configs = configurations(d.algo, [(h.key, h.value) for h in d.hypers], q,
                                 routed=bool(d.devices), most=len(d.returns))
    except LargerThan as g:  # a grid larger than its return list: refused unbuilt
        return None, [_returns(d, head, g.size)]
    except Refused as r:
        return None, [Diagnostic("E027", head + r.reason, d.pos)]
    want = algorithm(d.algo).params
    if len(d.params) != len(want):
        form = f"({', '.join(want)})"
        return None, [Diagnostic("E027", head + f"takes {form}, got {len(d.params)} "
                                 "parameter(s)", d.pos)]
    if len(d.returns) not in expected_returns(d.algo, len(configs)):
        return None, [_returns(d, head, len(configs))]
    return configs, []


def _returns(d: ast.MLDef, head: str, configs: int) -> Diagnostic:
    """E022: a return list that does not name 1 (or 2) values per configuration."""
    expect = " or ".join(f"{n:,}" for n in expected_returns(d.algo, configs))
    return Diagnostic("E022", head + f"the return list names {len(d.returns)} value(s); "
                      f"expected {expect} ({configs:,} configuration(s))", d.pos)
