"""Train one ML definition: every configuration (a Tier A chain of rounds, or a Tier B fit),
then bind the return list configuration-major (R13)."""
import sys

from ..interp.evaluate import FlowFailure
from ..lang import ast
from ..tensor import Tensor
from .algorithms import is_tier_a, module_for
from .base import MlRefusal
from .chain import train_local


TREE_LEVELS = 10000


class RoundFailed(Exception):
    """A generated flow failed while running; `flow` is its generated name (fit#c0#r2)."""

    def __init__(self, flow: str, message: str):
        super().__init__(message)
        self.flow, self.message = flow, message


def train_definition(d: ast.MLDef, configs: list[dict], inputs: dict[str, Tensor],
                     q: int) -> dict[str, Tensor]:
    """Raises MlRefusal (unfit data, E028) or RoundFailed."""
    module = module_for(d.algo)
    args = [inputs[p.name] for p in d.params]
    x, y = args[0], (args[1] if len(args) > 1 else None)
    results = []
    for i, cfg in enumerate(configs):
        if is_tier_a(d.algo):
            try:
                results.append(train_local(module, x, y, cfg, q, definition=d.name, config=i))
            except FlowFailure as e:
                raise RoundFailed(getattr(e, "flow", f"{d.name}#c{i}"), e.message) from None
        else:
            results.append((fit_tier_b(module, x, y, cfg, q), None))
    return bind_returns(d, results)


def bind_returns(d: ast.MLDef, results: list[tuple]) -> dict[str, Tensor]:
    """(model, second) per configuration -> the return list, configuration-major (R13)."""
    per = len(d.returns) // len(results)
    out = {}
    for i, (model, second) in enumerate(results):
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
        raise MlRefusal(f"the tree grew deeper than this implementation's {TREE_LEVELS} "
                        "levels; set a smaller max_depth") from None
    finally:
        sys.setrecursionlimit(old)


__all__ = ["train_definition", "RoundFailed", "MlRefusal"]
