"""reshape, split, concat (docs/ops.md §5.5): row-major, the data is never changed."""
import math

import numpy as np

from ..wire.constants import MAX_DIM, MAX_RANK
from .ints import I32, check_axis, dims, failed, mismatch


def reshape(q, x, shape):
    """Row-major reinterpretation as `shape` (1..MAX_RANK dims of 1..MAX_DIM; counts must match)."""
    target = tuple(int(d) for d in shape)
    if not 1 <= len(target) <= MAX_RANK or any(not 1 <= d <= MAX_DIM for d in target):
        raise failed(f"reshape target {dims(target)}: 1 to {MAX_RANK} dims, each 1..{MAX_DIM}")
    if math.prod(target) != x.size:
        raise mismatch(f"reshape {dims(x.shape)} ({x.size} elements) to {dims(target)}")
    return np.ascontiguousarray(x).astype(I32, copy=False).reshape(target)


def split(q, x, axis=0, sections=None, index=0):
    """Section `index` of `sections` equal parts along `axis`, rank kept."""
    if sections is None or sections < 1 or not 0 <= index < sections:
        raise failed(f"split: section {index} of {sections} is not a valid selector")
    check_axis(axis, x.ndim, "split", x.shape)
    length = x.shape[axis]
    if length % sections:
        raise mismatch(f"split {dims(x.shape)}: {sections} sections do not divide axis {axis}")
    size = length // sections
    part = np.take(x, np.arange(index * size, (index + 1) * size), axis=axis)
    return np.ascontiguousarray(part).astype(I32, copy=False)


def concat(q, a, b, axis=0):
    """a then b along `axis`: equal rank, equal dims off the axis."""
    check_axis(axis, a.ndim, "concat", a.shape)
    if a.ndim != b.ndim or a.shape[:axis] + a.shape[axis + 1:] != b.shape[:axis] + b.shape[axis + 1:]:
        raise mismatch(f"concat {dims(a.shape)} x {dims(b.shape)} along axis {axis}")
    return np.concatenate((a.astype(I32), b.astype(I32)), axis=axis)
