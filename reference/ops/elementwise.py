"""Elementwise binary arithmetic, comparisons and logic (R4 broadcast, R6 logic)."""
from ..numeric.int32 import tdiv
from ..tensor import Tensor
from .broadcast import broadcast_map, map_data
from ..catalogue import OpContext


def add(ctx: OpContext, a: Tensor, b: Tensor) -> Tensor:
    """a + b elementwise (R4 broadcast)."""
    return broadcast_map(lambda x, y: x + y, a, b)


def sub(ctx: OpContext, a: Tensor, b: Tensor) -> Tensor:
    """a − b elementwise, left minus right (R4 broadcast)."""
    return broadcast_map(lambda x, y: x - y, a, b)


def mul(ctx: OpContext, a: Tensor, b: Tensor) -> Tensor:
    """a · b elementwise, exact product (R4 broadcast)."""
    return broadcast_map(lambda x, y: x * y, a, b)


def div(ctx: OpContext, a: Tensor, b: Tensor) -> Tensor:
    """tdiv(a, b): truncated toward zero, x/0 = 0, INT32_MIN/−1 = 2^31 raw (R4 broadcast)."""
    return broadcast_map(tdiv, a, b)


def gt(ctx: OpContext, a: Tensor, b: Tensor) -> Tensor:
    """1 where a > b else 0."""
    return broadcast_map(lambda x, y: int(x > y), a, b)


def lt(ctx: OpContext, a: Tensor, b: Tensor) -> Tensor:
    """1 where a < b else 0."""
    return broadcast_map(lambda x, y: int(x < y), a, b)


def eq(ctx: OpContext, a: Tensor, b: Tensor) -> Tensor:
    """1 where a == b else 0."""
    return broadcast_map(lambda x, y: int(x == y), a, b)


def ge(ctx: OpContext, a: Tensor, b: Tensor) -> Tensor:
    """1 where a >= b else 0."""
    return broadcast_map(lambda x, y: int(x >= y), a, b)


def le(ctx: OpContext, a: Tensor, b: Tensor) -> Tensor:
    """1 where a <= b else 0."""
    return broadcast_map(lambda x, y: int(x <= y), a, b)


def ne(ctx: OpContext, a: Tensor, b: Tensor) -> Tensor:
    """1 where a != b else 0."""
    return broadcast_map(lambda x, y: int(x != y), a, b)


def logical_and(ctx: OpContext, a: Tensor, b: Tensor) -> Tensor:
    """(a ≠ 0) and (b ≠ 0), as 0/1 (R6)."""
    return broadcast_map(lambda x, y: int(x != 0 and y != 0), a, b)


def logical_or(ctx: OpContext, a: Tensor, b: Tensor) -> Tensor:
    """(a ≠ 0) or (b ≠ 0), as 0/1 (R6)."""
    return broadcast_map(lambda x, y: int(x != 0 or y != 0), a, b)


def logical_xor(ctx: OpContext, a: Tensor, b: Tensor) -> Tensor:
    """(a ≠ 0) xor (b ≠ 0), as 0/1 (R6)."""
    return broadcast_map(lambda x, y: int((x != 0) != (y != 0)), a, b)


def logical_not(ctx: OpContext, x: Tensor) -> Tensor:
    """1 where x == 0 else 0 (R6); the shape is kept."""
    return map_data(lambda v: int(v == 0), x)
