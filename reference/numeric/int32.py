"""32-bit two's complement arithmetic of the reference (D1, spec/ml-exact.md §1.1)."""

INT32_MIN = -(2 ** 31)
INT32_MAX = 2 ** 31 - 1


def wrap32(v: int) -> int:
    """Reduce v modulo 2^32 into [INT32_MIN, INT32_MAX] (never saturate, never fail)."""
    return ((v + 2 ** 31) % 2 ** 32) - 2 ** 31


def fits32(v: int) -> bool:
    return INT32_MIN <= v <= INT32_MAX


def tdiv(a: int, b: int) -> int:
    """Quotient truncated toward zero; tdiv(a, 0) = 0. INT32_MIN / -1 is 2^31 before wrapping."""
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def rdiv(a: int, b: int) -> int:
    """a / b (b > 0) rounded half away from zero."""
    q = (2 * abs(a) + b) // (2 * b)
    return q if a >= 0 else -q


def isqrt_floor(v: int) -> int:
    """Floor square root for v >= 0, and 0 for v <= 0 (ml-exact's internal helper)."""
    from math import isqrt
    return isqrt(v) if v > 0 else 0
