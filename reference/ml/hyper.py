"""Hyperparameters (spec/ml-exact.md §2): a definition's keys resolved against its
catalogue row (ml_catalogue: the keys each algorithm accepts, defaults, ranges), the sweep
lists (one upstream; several make a grid, this implementation's extension: DESIGN §13), the
`rows:` guards, and the refusals raised before training (E027)."""
import itertools
import math

from ..numeric.int32 import INT32_MAX, tdiv
from ..lang.names import suggest
from ..failures import Refused
from ..ml_catalogue import ABSENT, REQUIRED, Key, algorithm

SWEEPABLE = ("lr", "l2", "iters", "k", "max_depth", "min_samples", "trees", "seed", "rounds",
             "eta", "min_child_hess")

TIER_B_DEVICE = ("is coordinator-only (ml_fit has no binary-IR opcode, it cannot cross the "
                 "wire); drop the @device decorator")
PCA = ("deferred behind a symmetric eigensolver - eigendecomp is registered but has no "
       "evaluator")


class LargerThan(Refused):
    """A grid of more configurations than the definition can return: `size` of them."""

    def __init__(self, size: int):
        super().__init__(f"{size:,} configurations")
        self.size = size


def configurations(algo: str, hypers: list[tuple[str, object]], q: int,
                   routed: bool, most: int | None = None) -> list[dict]:
    """Validate a definition's hyperparameters; one resolved dict per configuration: a sweep
    list's values in their written order, a grid's the product of its lists, the keys in
    their written order and the last varying fastest (configuration i of an A x B grid
    has the first list's value i // B and the second's i mod B). Raises Refused (E027), and
    LargerThan, before building one, when the lists make more than `most`."""
    if algorithm(algo).tier == "deferred":  # pca (§13)
        raise Refused(PCA)
    if routed and algorithm(algo).tier == "B":
        raise Refused(TIER_B_DEVICE)
    keys = {k.name: k for k in algorithm(algo).keys}
    given: dict[str, object] = {}
    for name, value in hypers:
        if name not in keys:
            raise Refused(f"unknown hyperparameter '{name}'" + suggest(name, keys)
                            + f"; {algo} takes {', '.join(keys)}")
        given[name] = value
    lists = swept(hypers)
    for n in lists:
        if n not in SWEEPABLE:
            raise Refused(f"'{n}' cannot be a sweep list (sweepable: {', '.join(SWEEPABLE)})")
        if not given[n]:
            raise Refused(f"'{n}' has an empty sweep list")
    scale = 10 ** q
    base = {}
    for key in algorithm(algo).keys:
        if key.name in given:
            values = given[key.name] if isinstance(given[key.name], tuple) else (given[key.name],)
            for v in values:
                _check(key, v)
            base[key.name] = given[key.name]
        elif key.default == REQUIRED:
            raise Refused(f"needs '{key.name}'")
        elif key.default == ABSENT:
            base[key.name] = None
        else:
            base[key.name] = key.default(scale) if callable(key.default) else key.default
    _check_quantres(algo, q)
    size = math.prod(len(given[n]) for n in lists)
    if most is not None and size > most:
        raise LargerThan(size)
    configs = [dict(base, **dict(zip(lists, values)))
               for values in itertools.product(*(base[n] for n in lists))]
    for cfg in configs:
        _rows_guard(algo, cfg, q)
    return configs


def _check(key: Key, v) -> None:
    if key.is_bool:
        if not isinstance(v, bool):
            raise Refused(f"'{key.name}' takes true or false, not {v}")
        return
    if isinstance(v, bool):
        raise Refused(f"'{key.name}' takes an integer, not {str(v).lower()}")
    if (key.lo is not None and v < key.lo) or (key.hi is not None and v > key.hi):
        span = f"{key.lo}..{key.hi}" if key.hi is not None else f">= {key.lo}"
        raise Refused(f"'{key.name}' must be {span}, got {v}")


def _check_quantres(algo: str, q: int) -> None:
    if algo == "hmm" and q not in (2, 3):
        raise Refused(f"hmm needs quantres 2 or 3, the script declares {q}")


def _rows_guard(algo: str, cfg: dict, q: int) -> None:
    """Only when `rows:` is given: refuse a fit whose accumulators would leave int32."""
    rows = cfg.get("rows")
    if rows is None:
        return
    if algo == "xgboost":
        t = tdiv(10 ** q * rows, 8)
        if t * t > INT32_MAX:
            raise Refused(f"rows {rows} at quantres {q} would overflow int32 "
                            f"((10^q·rows/8)^2 = {t * t} > {INT32_MAX})")
    elif algo == "hmm":
        size = rows * (cfg["steps"] - 1) * 10 ** (q + 1) * 100 ** 2
        if size > INT32_MAX:
            raise Refused(f"rows {rows} with steps {cfg['steps']} at quantres {q} would "
                            f"overflow int32 (rows·(steps−1)·10^(q+1)·100^2 = {size} > "
                            f"{INT32_MAX})")


def swept(hypers) -> list[str]:
    """The keys whose value is a sweep list, in their written order (more than one: a
    grid); a key given twice counts once, with its last value, as training takes it."""
    given = dict(hypers)
    return [name for name, value in given.items() if isinstance(value, tuple)]


def expected_returns(algo: str, configs: int) -> tuple[int, ...]:
    """The legal return-list lengths (R41): 1 or 2 names per configuration (Tier B: 1)."""
    return tuple(n * configs for n in algorithm(algo).returns)
