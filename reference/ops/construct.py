"""Host constructors (`in::` initializers only): zeros, ones, full, eye, diag, range, tridiag.

Size operands are single-element tensors (rank 0 or [1]) holding a value >= 1; the caller
enforces the 2^22-element cap (R8).
"""
from ..tensor import Tensor, shape_text
from .broadcast import is_single
from ..catalogue import OpContext
from ..failures import OpError


def _value(t: Tensor, what: str) -> int:
    """The integer a single-element operand holds."""
    if not is_single(t.shape):
        raise OpError(f"{what} must be a scalar, got {shape_text(t.shape)}")
    return t.data[0]


def _size(t: Tensor, what: str) -> int:
    n = _value(t, what)
    if n < 1:
        raise OpError(f"{what} must be at least 1, got {n}")
    return n


def _matrix(rows: int, cols: int, at) -> Tensor:
    return Tensor((rows, cols), tuple(at(i, j) for i in range(rows) for j in range(cols)))


def zeros(ctx: OpContext, rows: Tensor, cols: Tensor) -> Tensor:
    """[rows, cols] of 0."""
    return _matrix(_size(rows, "zeros rows"), _size(cols, "zeros cols"), lambda i, j: 0)


def ones(ctx: OpContext, rows: Tensor, cols: Tensor) -> Tensor:
    """[rows, cols] of 1."""
    return _matrix(_size(rows, "ones rows"), _size(cols, "ones cols"), lambda i, j: 1)


def full(ctx: OpContext, rows: Tensor, cols: Tensor, value: Tensor) -> Tensor:
    """[rows, cols] of value."""
    v = _value(value, "full value")
    return _matrix(_size(rows, "full rows"), _size(cols, "full cols"), lambda i, j: v)


def eye(ctx: OpContext, n: Tensor) -> Tensor:
    """The n×n identity."""
    size = _size(n, "eye n")
    return _matrix(size, size, lambda i, j: int(i == j))


def diag(ctx: OpContext, vector: Tensor) -> Tensor:
    """Square matrix with the rank-1 vector on its diagonal."""
    if vector.rank != 1:
        raise OpError(f"diag needs a rank-1 vector, got {shape_text(vector.shape)}")
    n = vector.size
    return _matrix(n, n, lambda i, j: vector.data[i] if i == j else 0)


def range_(ctx: OpContext, n: Tensor) -> Tensor:
    """Rank-1 [n] holding 0..n−1."""
    size = _size(n, "range n")
    return Tensor((size,), tuple(range(size)))


def tridiag(ctx: OpContext, n: Tensor, sub: Tensor, diagonal: Tensor, sup: Tensor) -> Tensor:
    """n×n: `diag` on the diagonal, `sub` just below it, `super` just above it, 0 elsewhere."""
    size = _size(n, "tridiag n")
    values = {-1: _value(sub, "tridiag sub"), 0: _value(diagonal, "tridiag diag"),
              1: _value(sup, "tridiag super")}
    return _matrix(size, size, lambda i, j: values.get(j - i, 0))
