"""Integer helpers of the executor: dtypes, wrapping, truncating and rounding division,
floor square roots, the R4 broadcast rule and the two refusal kinds (DESIGN D1, R36, R37).

Every helper takes and returns arrays of an explicit dtype; constants are made with the
array's own dtype, so numpy 1.24's value-based casting and numpy 2's NEP 50 agree.
"""
import numpy as np

from ..wire.constants import WorkerError

I32, I64, U32, U64 = np.int32, np.int64, np.uint32, np.uint64
INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1


def dims(shape) -> str:
    """A shape as `[2, 3]`, for refusal details."""
    return "[" + ", ".join(str(int(d)) for d in shape) + "]"


def mismatch(detail: str) -> WorkerError:
    """An operand shape the op cannot take (wire-golden §6.1 step 7)."""
    return WorkerError("SHAPE_MISMATCH", detail)


def failed(detail: str) -> WorkerError:
    """Any other runtime failure."""
    return WorkerError("EXEC_FAILED", detail)


def i64(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(I64, copy=False)


def wrap32(x: np.ndarray) -> np.ndarray:
    """An int64 array reduced modulo 2^32 into int32 (two's complement, never saturating)."""
    x = np.asarray(x)
    if x.dtype == I32:
        return x
    if x.dtype == U64 or x.dtype == U32:
        return (x & x.dtype.type(0xFFFFFFFF)).astype(U32).view(I32)
    if x.dtype == object:
        flat = [((int(v) + 2 ** 31) % 2 ** 32) - 2 ** 31 for v in x.reshape(-1)]
        return np.array(flat, dtype=I32).reshape(x.shape)
    # a signed integer converted to an unsigned type is taken modulo 2^32 (C11 6.3.1.3)
    return x.astype(I64, copy=False).astype(U32).view(I32)


def tdiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """int64 quotient truncated toward zero; x/0 = 0. The caller wraps (INT32_MIN/−1 → 2^31)."""
    a, b = i64(a), i64(b)
    if b.all():  # no zero divisor: a − fmod(a, b) is an exact multiple of b
        return (a - np.fmod(a, b)) // b
    zero = b == I64(0)
    safe = np.where(zero, I64(1), b)
    q = np.abs(a) // np.abs(safe)
    q = np.where((a < I64(0)) != (safe < I64(0)), -q, q)
    return np.where(zero, I64(0), q)


def rdiv(a: np.ndarray, b) -> np.ndarray:
    """int64 a / b (b > 0, scalar or array) rounded half away from zero:
    sign(a)·⌊(2|a| + b)/(2b)⌋. The caller keeps 2|a| + b below 2^63."""
    a = i64(a)
    b = i64(b)
    q = (I64(2) * np.abs(a) + b) // (I64(2) * b)
    return np.where(a < I64(0), -q, q)


def isqrt0(v: np.ndarray) -> np.ndarray:
    """Floor square root of an int64 array whose values are below 2^52; 0 where v ≤ 0."""
    v = i64(v)
    pos = np.where(v > I64(0), v, I64(0))
    r = np.floor(np.sqrt(pos.astype(np.float64))).astype(I64)
    r = np.where(r * r > pos, r - I64(1), r)            # float rounding up, never expected
    r = np.where((r + I64(1)) * (r + I64(1)) <= pos, r + I64(1), r)
    return r


def is_single(shape) -> bool:
    """R4's single element on the worker: shape `[1]` (registers never have rank 0)."""
    return tuple(shape) in ((), (1,))


def broadcast_shape(a, b, what: str) -> tuple[int, ...]:
    """R4 / W12: equal shapes, or one single element against anything (result: the other)."""
    a, b = tuple(a), tuple(b)
    if a == b:
        return a
    if is_single(a) and is_single(b):
        return (1,)
    if is_single(a):
        return b
    if is_single(b):
        return a
    raise mismatch(f"{what} {dims(a)} x {dims(b)}: incompatible shapes")


def spread(x: np.ndarray, shape) -> np.ndarray:
    """x (the common shape or a single element) viewed at the broadcast shape."""
    if x.shape == tuple(shape):
        return x
    return np.broadcast_to(x.reshape(-1)[:1].reshape((1,) * len(shape)), shape)


def check_axis(axis: int, rank: int, what: str, shape) -> int:
    """An axis must be 0..rank−1 (W11: refused, never masked)."""
    if not 0 <= axis < rank:
        raise mismatch(f"{what}: axis {axis} is out of range for {dims(shape)}")
    return axis
