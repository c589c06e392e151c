"""Shape ops: reshape, split, concat and slice (row-major; data is never changed)."""
from math import prod

from bark_vm.wire.constants import MAX_DIM, MAX_RANK

from ..tensor import Tensor, shape_text
from .broadcast import check_axis, int_param
from ..catalogue import OpContext
from ..failures import OpError


def _target_shape(rows, cols, shape) -> tuple[int, ...]:
    """{rows, cols} or {shape: [d1..dk]} (k 1..MAX_RANK), never both; each dim 1..MAX_DIM."""
    if shape is not None:
        if rows is not None or cols is not None:
            raise OpError("reshape takes {rows, cols} or {shape}, not both")
        dims = (shape,) if isinstance(shape, int) else tuple(shape)
    elif rows is not None and cols is not None:
        dims = (rows, cols)
    else:
        raise OpError("reshape needs {rows: R, cols: C} or {shape: [d1, ...]}")
    dims = tuple(int_param("shape", d) for d in dims)
    if not 1 <= len(dims) <= MAX_RANK:
        raise OpError(f"reshape target must have 1 to {MAX_RANK} dims, got {len(dims)}")
    for d in dims:
        if not 1 <= d <= MAX_DIM:
            raise OpError(f"reshape dim {d} is outside 1..{MAX_DIM}")
    return dims


def reshape(ctx: OpContext, x: Tensor, rows=None, cols=None, shape=None) -> Tensor:
    """Row-major reinterpretation; the element count must match."""
    dims = _target_shape(rows, cols, shape)
    if prod(dims) != x.size:
        raise OpError(f"cannot reshape {shape_text(x.shape)} ({x.size} elements) "
                      f"to {shape_text(dims)} ({prod(dims)} elements)")
    return Tensor(dims, x.data)


def _lines(x: Tensor, axis: int, start: int, count: int) -> Tensor:
    """Indices start..start+count−1 along axis (rank kept)."""
    inner = prod(x.shape[axis + 1:])
    block = x.shape[axis] * inner
    data = []
    for base in range(0, x.size, block):
        data.extend(x.data[base + start * inner: base + (start + count) * inner])
    return Tensor(x.shape[:axis] + (count,) + x.shape[axis + 1:], tuple(data))


def split(ctx: OpContext, x: Tensor, axis=0, sections=None, index=0) -> Tensor:
    """Section `index` of `sections` equal parts along axis (rank kept)."""
    axis = check_axis(axis, x.rank)
    if sections is None:
        raise OpError("split needs {sections: n}")
    n, i = int_param("sections", sections), int_param("index", index)
    if n < 1 or x.shape[axis] % n:
        raise OpError(f"split: {n} sections do not divide axis {axis} of length {x.shape[axis]}")
    if not 0 <= i < n:
        raise OpError(f"split: index {i} is outside 0..{n - 1}")
    size = x.shape[axis] // n
    return _lines(x, axis, i * size, size)


def concat(ctx: OpContext, a: Tensor, b: Tensor, axis=0) -> Tensor:
    """a then b along axis: equal rank, equal dims except on the axis."""
    axis = check_axis(axis, a.rank)
    if a.rank != b.rank or a.shape[:axis] + a.shape[axis + 1:] != b.shape[:axis] + b.shape[axis + 1:]:
        raise OpError(f"concat along axis {axis}: shapes {shape_text(a.shape)} and "
                      f"{shape_text(b.shape)} do not match off the axis")
    inner = prod(a.shape[axis + 1:])
    ablock, bblock = a.shape[axis] * inner, b.shape[axis] * inner
    data = []
    for o in range(prod(a.shape[:axis])):
        data.extend(a.data[o * ablock:(o + 1) * ablock])
        data.extend(b.data[o * bblock:(o + 1) * bblock])
    shape = a.shape[:axis] + (a.shape[axis] + b.shape[axis],) + a.shape[axis + 1:]
    return Tensor(shape, tuple(data))


def slice_axis(ctx: OpContext, x: Tensor, axis=None, index=None) -> Tensor:
    """Take `index` along `axis` and drop that axis (rank R -> R−1; rank 1 gives rank 0)."""
    if axis is None or index is None:
        raise OpError("slice needs {axis: a, index: i}")
    axis = check_axis(axis, x.rank)
    i = int_param("index", index)
    if not 0 <= i < x.shape[axis]:
        raise OpError(f"slice index {i} is outside 0..{x.shape[axis] - 1} of axis {axis}")
    line = _lines(x, axis, i, 1)
    return Tensor(x.shape[:axis] + x.shape[axis + 1:], line.data)
