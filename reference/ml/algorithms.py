"""Which module implements each calc::ml:: algorithm, and what its definition takes."""
from importlib import import_module

from .hyper import GD, TIER_A

# Parameters each definition takes: supervised (X, y), unsupervised (X), hmm (O).
UNSUPERVISED = ("kmeans", "isolation_forest", "hmm")


def param_count(algo: str) -> int:
    return 1 if algo in UNSUPERVISED else 2


def is_tier_a(algo: str) -> bool:
    return algo in TIER_A


def module_for(algo: str):
    """The algorithm's module (or, for the GD family, its module object)."""
    if algo in GD:
        from .gd import MODULES
        return MODULES[algo]
    return import_module(f"{__package__}.{algo}")
