"""Hyperparameters (spec/ml-exact.md §2): the keys each algorithm accepts, defaults, ranges,
the one sweepable list, the `rows:` guards, and the refusals raised before training (E027)."""
from dataclasses import dataclass

from bark_vm.wire.constants import RF_SLOTS

from ..numeric.int32 import INT32_MAX, tdiv
from ..lang.names import suggest
from .base import MlRefusal

GD = ("linear_regression", "logistic_regression", "svm")
TIER_A = GD + ("xgboost", "hmm")
TIER_B = ("kmeans", "knn", "naive_bayes", "decision_tree", "isolation_forest")
SWEEPABLE = ("lr", "l2", "iters", "k", "max_depth", "min_samples", "trees", "seed", "rounds",
             "eta", "min_child_hess")
BOOL = "bool"
ANY = None  # no range


@dataclass(frozen=True)
class Key:
    """default: a value, a function of S, or REQUIRED/ABSENT; lo/hi bound integer keys."""

    name: str
    default: object
    lo: int | None = ANY
    hi: int | None = ANY

    @property
    def is_bool(self) -> bool:
        return self.lo == BOOL


REQUIRED, ABSENT = "required", "absent"
BUDGET = RF_SLOTS[2]  # the `budget:` default: the ABI v2 register file


def _gd_keys():
    return (Key("features", REQUIRED, 1), Key("iters", 200, 1),
            Key("lr", lambda s: max(1, tdiv(s, 20)), 1), Key("l2", 0, 0),
            Key("fit_intercept", True, BOOL), Key("standardize", True, BOOL),
            Key("budget", BUDGET, 1))


KEYS: dict[str, tuple[Key, ...]] = {
    "linear_regression": _gd_keys(), "logistic_regression": _gd_keys(), "svm": _gd_keys(),
    "kmeans": (Key("k", 3, 1), Key("iters", 20, 1), Key("standardize", False, BOOL)),
    "knn": (Key("k", 3, 1), Key("standardize", False, BOOL)),
    "naive_bayes": (Key("standardize", False, BOOL),),
    "decision_tree": (Key("max_depth", 8, 1), Key("min_samples", 2, 1)),
    "isolation_forest": (Key("trees", 50, 1), Key("max_depth", 10, 1), Key("seed", 42)),
    "xgboost": (Key("features", REQUIRED, 1), Key("rounds", 8, 1), Key("depth", 3, 1, 6),
                Key("bins", 8, 2, 16), Key("eta", lambda s: max(1, tdiv(3 * s, 10)), 1),
                Key("l2", lambda s: s, 0), Key("min_child_hess", lambda s: tdiv(3 * s, 4), 0),
                Key("rows", ABSENT, 1), Key("budget", BUDGET, 1)),
    "hmm": (Key("symbols", REQUIRED, 2, 90), Key("steps", REQUIRED, 2), Key("states", 2, 2, 16),
            Key("iters", 4, 1), Key("seed", 0), Key("rows", ABSENT, 1), Key("budget", BUDGET, 1)),
}

# Return names per configuration (R41): a model, optionally its loss or score.
RETURNS = {**{a: (1, 2) for a in GD + ("xgboost", "hmm")}, **{a: (1,) for a in TIER_B}}
LOSS = GD + ("xgboost",)  # whose second return is a loss (lower is better); hmm's a score

TIER_B_DEVICE = ("is coordinator-only (ml_fit has no binary-IR opcode, it cannot cross the "
                 "wire); drop the @device decorator")
PCA = ("deferred behind a symmetric eigensolver - eigendecomp is registered but has no "
       "evaluator")


def configurations(algo: str, hypers: list[tuple[str, object]], q: int,
                   routed: bool) -> list[dict]:
    """Validate a definition's hyperparameters; one resolved dict per configuration, in the
    sweep list's written order. Raises MlRefusal (E027)."""
    if algo == "pca":
        raise MlRefusal(PCA)
    if routed and algo in TIER_B:
        raise MlRefusal(TIER_B_DEVICE)
    keys = {k.name: k for k in KEYS[algo]}
    given: dict[str, object] = {}
    for name, value in hypers:
        if name not in keys:
            raise MlRefusal(f"unknown hyperparameter '{name}'" + suggest(name, keys)
                            + f"; {algo} takes {', '.join(keys)}")
        given[name] = value
    lists = [n for n, v in given.items() if isinstance(v, tuple)]
    if len(lists) > 1:
        raise MlRefusal(f"only one hyperparameter may be a sweep list; {', '.join(lists)} are")
    for n in lists:
        if n not in SWEEPABLE:
            raise MlRefusal(f"'{n}' cannot be a sweep list (sweepable: {', '.join(SWEEPABLE)})")
        if not given[n]:
            raise MlRefusal(f"'{n}' has an empty sweep list")
    scale = 10 ** q
    base = {}
    for key in KEYS[algo]:
        if key.name in given:
            values = given[key.name] if isinstance(given[key.name], tuple) else (given[key.name],)
            for v in values:
                _check(key, v)
            base[key.name] = given[key.name]
        elif key.default == REQUIRED:
            raise MlRefusal(f"needs '{key.name}'")
        elif key.default == ABSENT:
            base[key.name] = None
        else:
            base[key.name] = key.default(scale) if callable(key.default) else key.default
    _check_quantres(algo, q)
    sweep = lists[0] if lists else None
    configs = [dict(base, **{sweep: v}) for v in base[sweep]] if sweep else [base]
    for cfg in configs:
        _rows_guard(algo, cfg, q)
    return configs


def _check(key: Key, v) -> None:
    if key.is_bool:
        if not isinstance(v, bool):
            raise MlRefusal(f"'{key.name}' takes true or false, not {v}")
        return
    if isinstance(v, bool):
        raise MlRefusal(f"'{key.name}' takes an integer, not {str(v).lower()}")
    if (key.lo is not None and v < key.lo) or (key.hi is not None and v > key.hi):
        span = f"{key.lo}..{key.hi}" if key.hi is not None else f">= {key.lo}"
        raise MlRefusal(f"'{key.name}' must be {span}, got {v}")


def _check_quantres(algo: str, q: int) -> None:
    if algo == "hmm" and q not in (2, 3):
        raise MlRefusal(f"hmm needs quantres 2 or 3, the script declares {q}")


def _rows_guard(algo: str, cfg: dict, q: int) -> None:
    """Only when `rows:` is given: refuse a fit whose accumulators would leave int32."""
    rows = cfg.get("rows")
    if rows is None:
        return
    if algo == "xgboost":
        t = tdiv(10 ** q * rows, 8)
        if t * t > INT32_MAX:
            raise MlRefusal(f"rows {rows} at quantres {q} would overflow int32 "
                            f"((10^q·rows/8)^2 = {t * t} > {INT32_MAX})")
    elif algo == "hmm":
        size = rows * (cfg["steps"] - 1) * 10 ** (q + 1) * 100 ** 2
        if size > INT32_MAX:
            raise MlRefusal(f"rows {rows} with steps {cfg['steps']} at quantres {q} would "
                            f"overflow int32 (rows·(steps−1)·10^(q+1)·100^2 = {size} > "
                            f"{INT32_MAX})")


def expected_returns(algo: str, configs: int) -> tuple[int, ...]:
    """The legal return-list lengths (R41): 1 or 2 names per configuration (Tier B: 1)."""
    return tuple(n * configs for n in RETURNS[algo])
