"""Static checks of a calc::ml:: definition (before anything trains): its hyperparameters
(E027), its parameter count (E027) and its return list (E022, R41)."""
from ..diagnostics import Diagnostic
from ..lang import ast
from ..ml_catalogue import algorithm
from ..failures import Refused
from .hyper import configurations, expected_returns


def check_definition(d: ast.MLDef, q: int) -> tuple[list[dict] | None, list[Diagnostic]]:
    """(configurations, []) for a usable definition, else (None, its diagnostics)."""
    head = f"ml definition '{d.name}' ({d.algo}): "
    try:
        configs = configurations(d.algo, [(h.key, h.value) for h in d.hypers], q,
                                 routed=bool(d.devices))
    except Refused as r:
        return None, [Diagnostic("E027", head + r.reason, d.pos)]
    want = algorithm(d.algo).params
    if len(d.params) != len(want):
        form = f"({', '.join(want)})"
        return None, [Diagnostic("E027", head + f"takes {form}, got {len(d.params)} "
                                 "parameter(s)", d.pos)]
    legal = expected_returns(d.algo, len(configs))
    if len(d.returns) not in legal:
        expect = " or ".join(str(n) for n in legal)
        return None, [Diagnostic("E022", head + f"the return list names {len(d.returns)} "
                                 f"value(s); expected {expect} ({len(configs)} "
                                 "configuration(s))", d.pos)]
    return configs, []
