"""Elementwise binary ops (R4 broadcast), comparisons, logic (R6) and scalar_mul (docs/ops.md §2).

Each kernel is `fn(q, a, b) -> int32 array`; q (the quantres) is unused here.
"""
import numpy as np

from .ints import I32, U32, broadcast_shape, dims, is_single, mismatch, tdiv, wrap32


def _pair(a: np.ndarray, b: np.ndarray, what: str) -> tuple[np.ndarray, np.ndarray]:
    """The operands, once R4 allows their shapes (numpy's broadcasting of a single element
    then gives exactly R4's result shape)."""
    broadcast_shape(a.shape, b.shape, what)
    return a, b


def _u32(x: np.ndarray) -> np.ndarray:
    """x mod 2^32 as uint32 (a view of an int32 register)."""
    return (x if x.dtype == I32 else wrap32(x)).view(U32)


def _ring(a, b, what, f):
    """f on uint32 views: unsigned arithmetic wraps mod 2^32, which is the int32 ring."""
    a, b = _pair(a, b, what)
    return f(_u32(a), _u32(b)).view(I32)


def add(q, a, b):
    """a + b."""
    return _ring(a, b, "add", np.add)


def sub(q, a, b):
    """a − b (left minus right)."""
    return _ring(a, b, "sub", np.subtract)


def mul(q, a, b):
    """a · b."""
    return _ring(a, b, "mul", np.multiply)


def div(q, a, b):
    """tdiv(a, b): truncated toward zero, x/0 = 0, INT32_MIN/−1 = INT32_MIN."""
    a, b = _pair(a, b, "div")
    if b.size == 1 and a.dtype == I32 and b.dtype == I32 and b.reshape(-1)[0] > 0:
        # a positive divisor, in int32: a − fmod(a, b) lies between 0 and a, and b divides it
        return (a - np.fmod(a, b)) // b
    return wrap32(tdiv(a, b))


def scalar_mul(q, a, b):
    """a · b where at least one operand is the single element `[1]` (R36)."""
    if not (is_single(a.shape) or is_single(b.shape)):
        raise mismatch(f"scalar_mul {dims(a.shape)} x {dims(b.shape)}: "
                       "one operand must be a single element [1]")
    return _ring(a, b, "scalar_mul", np.multiply)


def _compare(what, f):
    def kernel(q, a, b):
        a, b = _pair(a, b, what)
        return f(a, b).astype(I32)
    kernel.__name__ = what
    kernel.__doc__ = f"1 where `{what}` holds (int32 operands compared exactly), else 0."
    return kernel


gt = _compare("gt", np.greater)
lt = _compare("lt", np.less)
eq = _compare("eq", np.equal)
ge = _compare("ge", np.greater_equal)
le = _compare("le", np.less_equal)
ne = _compare("ne", np.not_equal)


def _logic(what, f):
    def kernel(q, a, b):
        a, b = _pair(a, b, what)
        zero = I32(0)
        return f(a.astype(I32) != zero, b.astype(I32) != zero).astype(I32)
    kernel.__name__ = what
    kernel.__doc__ = f"(a ≠ 0) {what} (b ≠ 0) as 0/1 (R6)."
    return kernel


logical_and = _logic("and", np.logical_and)
logical_or = _logic("or", np.logical_or)
logical_xor = _logic("xor", np.logical_xor)


def logical_not(q, x):
    """1 where x == 0 else 0; shape kept."""
    return (x.astype(I32) == I32(0)).astype(I32)
