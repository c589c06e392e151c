"""What the scheduler needs around a definition's training: the Tier B fit and binding the
return list configuration-major (R13)."""
import sys

from ..lang import ast
from ..tensor import Tensor
from ..failures import Refused


TREE_LEVELS = 10000


def bind_returns(d: ast.MLDef, results: list[tuple] | dict[int, tuple],
                 configs: int | None = None) -> dict[str, Tensor]:
    """(model, second) per configuration -> the return list, configuration-major (R13); a
    dict binds only the configurations it holds (by index, of `configs` in all)."""
    if not isinstance(results, dict):
        results = dict(enumerate(results))
    per = len(d.returns) // (configs or len(results))
    out = {}
    for i, (model, second) in sorted(results.items()):
        names = d.returns[i * per:(i + 1) * per]
        out[names[0].name] = model
        if per == 2:
            out[names[1].name] = second
    return out


def fit_tier_b(module, x, y, cfg: dict, q: int):
    """Tree builders recurse once per level (at most max_depth, at most the row count)."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, TREE_LEVELS + 200))
    try:
        return module.fit(x, y, cfg, q)
    except RecursionError:
        raise Refused(f"the tree grew deeper than this implementation's {TREE_LEVELS} "
                        "levels; set a smaller max_depth") from None
    finally:
        sys.setrecursionlimit(old)
