"""Which module implements each calc::ml:: algorithm, and what its definition takes: the
rows of ml_catalogue, read for the code under ml/ and dispatch/."""
from importlib import import_module

from ..ml_catalogue import algorithm


def is_tier_a(algo: str) -> bool:
    return algorithm(algo).tier == "A"


def module_for(algo: str):
    """The algorithm's module, or its module object when its module implements several (the
    gradient-descent family's MODULES)."""
    module = import_module(f"{__package__}.{algorithm(algo).module}")
    return getattr(module, "MODULES", {algo: module})[algo]
