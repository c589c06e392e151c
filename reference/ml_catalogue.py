"""The calc::ml:: catalogue, below the language: one row per algorithm, in descriptor-id
order (spec/ml-exact.md §2, §3, §13), the one home of every per-algorithm fact the code
branches on. A leaf, like the op catalogue: the parser, the hyperparameter checks, the
descriptor, `maned-model` and the conformance generator read it without importing any
algorithm (a row names its module under maned.ml, loaded when first used).

Adding an algorithm is one row here and one module under ml/; a new descriptor payload
layout adds its check (ml/descriptor.py) and its view (cli/model_view.py), each registered
under the layout's name.
"""
from dataclasses import dataclass
from typing import Literal

from bark_vm.wire.constants import RF_SLOTS

from .numeric.int32 import tdiv

# A: init, round flows (routable to workers) and epilogue; B: a coordinator-only kernel;
# deferred: a reserved name refused before training (E027), with no descriptor.
Tier = Literal["A", "B", "deferred"]

BOOL = "bool"
ANY = None  # no range
REQUIRED, ABSENT = "required", "absent"
BUDGET = RF_SLOTS[2]  # the `budget:` default: the ABI v2 register file


@dataclass(frozen=True)
class Key:
    """One hyperparameter. default: a value, a function of S, or REQUIRED/ABSENT; lo/hi bound
    integer keys (lo BOOL: a true/false key)."""

    name: str
    default: object
    lo: int | str | None = ANY
    hi: int | None = ANY

    @property
    def is_bool(self) -> bool:
        return self.lo == BOOL


@dataclass(frozen=True)
class Algorithm:
    """One calc::ml:: algorithm.

    algo_id: its descriptor's slot 2 (a deferred algorithm's id never appears).
    params: the parameters its definition takes, in order.
    keys: its hyperparameters, in the order messages list them.
    second: what a second return name per configuration holds ("loss", lower is better, or
        "score"), or None when a configuration returns its model alone.
    module: the module under maned.ml that implements it (one implementing several exposes
        MODULES, name -> module object).
    layout: its descriptor payload's layout, the name its check and its view are under.
    std_block: whether a standardized model's payload ends with mu_1..mu_d, sd_1..sd_d.
    labels: a binary classifier's two y labels in units of S = 10^quantres (§4.2, §10.2),
        or None.
    """

    name: str
    algo_id: int
    tier: Tier
    params: tuple[str, ...] = ()
    keys: tuple[Key, ...] = ()
    second: Literal["loss", "score"] | None = None
    module: str | None = None
    layout: str | None = None
    std_block: bool = False
    labels: tuple[int, int] | None = None

    @property
    def returns(self) -> tuple[int, ...]:
        """The legal counts of return names per configuration (R41)."""
        return (1, 2) if self.second else (1,)


_GD_KEYS = (Key("features", REQUIRED, 1), Key("iters", 200, 1),
            Key("lr", lambda s: max(1, tdiv(s, 20)), 1), Key("l2", 0, 0),
            Key("fit_intercept", True, BOOL), Key("standardize", True, BOOL),
            Key("budget", BUDGET, 1))
_XY, _X = ("X", "y"), ("X",)


def _gd(name: str, algo_id: int, labels=None) -> Algorithm:
    """A gradient-descent algorithm (§4): one module, one layout for the three."""
    return Algorithm(name, algo_id, "A", _XY, _GD_KEYS, "loss", "gd", "gd", labels=labels)


def _own(name: str, algo_id: int, tier: Tier, params, keys, second=None,
         std_block: bool = False, labels=None) -> Algorithm:
    """An algorithm with its own module and its own layout, both under its name."""
    return Algorithm(name, algo_id, tier, params, keys, second, name, name, std_block, labels)


ALGORITHMS: tuple[Algorithm, ...] = (
    _gd("linear_regression", 1),
    _gd("logistic_regression", 2, labels=(0, 1)),
    _gd("svm", 3, labels=(-1, 1)),
    _own("kmeans", 4, "B", _X, (Key("k", 3, 1), Key("iters", 20, 1),
                                 Key("standardize", False, BOOL)), std_block=True),
    _own("knn", 5, "B", _XY, (Key("k", 3, 1), Key("standardize", False, BOOL)),
         std_block=True),
    _own("naive_bayes", 6, "B", _XY, (Key("standardize", False, BOOL),), std_block=True),
    _own("decision_tree", 7, "B", _XY, (Key("max_depth", 8, 1), Key("min_samples", 2, 1))),
    _own("isolation_forest", 8, "B", _X, (Key("trees", 50, 1), Key("max_depth", 10, 1),
                                          Key("seed", 42))),
    Algorithm("pca", 9, "deferred"),  # refused before its keys are looked at (§13)
    _own("xgboost", 10, "A", _XY, (
        Key("features", REQUIRED, 1), Key("rounds", 8, 1), Key("depth", 3, 1, 6),
        Key("bins", 8, 2, 16), Key("eta", lambda s: max(1, tdiv(3 * s, 10)), 1),
        Key("l2", lambda s: s, 0), Key("min_child_hess", lambda s: tdiv(3 * s, 4), 0),
        Key("rows", ABSENT, 1), Key("budget", BUDGET, 1)), "loss", labels=(0, 1)),
    _own("hmm", 11, "A", ("O",), (
        Key("symbols", REQUIRED, 2, 90), Key("steps", REQUIRED, 2), Key("states", 2, 2, 16),
        Key("iters", 4, 1), Key("seed", 0), Key("rows", ABSENT, 1),
        Key("budget", BUDGET, 1)), "score"),
)

BY_NAME: dict[str, Algorithm] = {a.name: a for a in ALGORITHMS}
NAMES = tuple(BY_NAME)  # the closed set of calc::ml:: names (E021 otherwise)
TRAINED = tuple(a.name for a in ALGORITHMS if a.tier != "deferred")  # each has a descriptor


def by_layout(table: dict):
    """A decorator factory filling `table` (layout name -> function): the payload checks
    of ml.descriptor and the views of cli.model_view are each one such table."""
    def named(layout: str):
        def register(function):
            table[layout] = function
            return function
        return register
    return named


def algorithm(name: str) -> Algorithm:
    """The row of a known calc::ml:: name."""
    return BY_NAME[name]


def implemented_by(module: str) -> tuple[str, ...]:
    """The algorithms one module under maned.ml implements, in catalogue order."""
    return tuple(a.name for a in ALGORITHMS if a.module == module)
