"""Local-only elementwise ops: abs, isqrt, sqrt at scale q, clip (shape kept)."""
from math import isqrt as _isqrt

from ..tensor import Tensor
from .broadcast import int_param, map_data
from ..catalogue import OpContext
from ..failures import OpError


def absolute(ctx: OpContext, x: Tensor) -> Tensor:
    """|x|; abs(INT32_MIN) is 2^31 raw, which wraps back to INT32_MIN."""
    return map_data(abs, x)


def _no_negatives(x: Tensor, what: str) -> None:
    bad = next((v for v in x.data if v < 0), None)
    if bad is not None:
        raise OpError(f"{what} of a negative value ({bad}) is refused")


def isqrt(ctx: OpContext, x: Tensor) -> Tensor:
    """⌊√x⌋; a negative element is refused."""
    _no_negatives(x, "isqrt")
    return map_data(_isqrt, x)


def sqrt(ctx: OpContext, x: Tensor) -> Tensor:
    """√ at scale q: ⌊√(x·10^q)⌋ (x and the result both at scale 10^q); negatives refused."""
    _no_negatives(x, "sqrt")
    return map_data(lambda v: _isqrt(v * ctx.scale), x)


def clip(ctx: OpContext, x: Tensor, min=None, max=None) -> Tensor:  # noqa: A002 (the op's keys)
    """Clamp into [min, max]; either bound may be absent but not both; min > max is refused."""
    if min is None and max is None:
        raise OpError("clip needs {min: lo} and/or {max: hi}")
    lo = None if min is None else int_param("min", min)
    hi = None if max is None else int_param("max", max)
    if lo is not None and hi is not None and lo > hi:
        raise OpError(f"clip bounds are reversed: min {lo} > max {hi}")

    def clamp(v):
        if lo is not None and v < lo:
            return lo
        return hi if hi is not None and v > hi else v

    return map_data(clamp, x)
