"""Reductions tensor_sum/mean/max/min: whole tensor → [1], or per axis with rank kept (W8)."""
import numpy as np

from .ints import I32, I64, check_axis, dims, failed, tdiv, wrap32


def _reduce(x: np.ndarray, axis, f, what: str) -> np.ndarray:
    """f(x, axis, keepdims) over everything (→ [1]) or along one axis (dim axis := 1)."""
    if x.size == 0:
        raise failed(f"{what} of a tensor with no elements {dims(x.shape)}")
    if axis is None:
        return np.asarray(f(x.reshape(-1), 0)).reshape(1)
    check_axis(axis, x.ndim, what, x.shape)
    return f(x, axis)


def _sum(x, axis):
    # int64 sums of int32 are exact below 2^32 elements.
    return x.astype(I64).sum(axis=axis, keepdims=True, dtype=I64)


def tensor_sum(q, x, axis=None):
    """Exact sum, wrapped."""
    return wrap32(_reduce(x, axis, _sum, "tensor_sum"))


def tensor_mean(q, x, axis=None):
    """tdiv(exact sum, count)."""
    count = x.size if axis is None else (x.shape[axis] if 0 <= axis < x.ndim else 1)
    total = _reduce(x, axis, _sum, "tensor_mean")
    return wrap32(tdiv(total, np.full(total.shape, count, dtype=I64)))


def tensor_max(q, x, axis=None):
    """Maximum."""
    return _reduce(x, axis, lambda v, a: v.max(axis=a, keepdims=True), "tensor_max").astype(I32)


def tensor_min(q, x, axis=None):
    """Minimum."""
    return _reduce(x, axis, lambda v, a: v.min(axis=a, keepdims=True), "tensor_min").astype(I32)
