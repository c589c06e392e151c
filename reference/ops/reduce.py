"""Reductions: tensor_sum/mean/max/min (whole tensor or {axis}) and argmax/argmin."""
from ..numeric.int32 import tdiv
from ..tensor import Tensor
from .broadcast import axis_groups, check_axis
from ..catalogue import OpContext
from ..failures import OpError


def _reduce(x: Tensor, axis, f) -> Tensor:
    """f over the whole tensor -> [1]; with an axis, f per line, rank kept and dim axis := 1."""
    if x.size == 0:
        raise OpError("cannot reduce a tensor with no elements")
    if axis is None:
        return Tensor((1,), (f(list(x.data)),))
    axis = check_axis(axis, x.rank)
    groups = axis_groups(x.shape, axis)
    shape = x.shape[:axis] + (1,) + x.shape[axis + 1:]
    return Tensor(shape, tuple(f([x.data[i] for i in g]) for g in groups))


def tensor_sum(ctx: OpContext, x: Tensor, axis=None) -> Tensor:
    """Exact sum."""
    return _reduce(x, axis, sum)


def tensor_mean(ctx: OpContext, x: Tensor, axis=None) -> Tensor:
    """tdiv(exact sum, count)."""
    return _reduce(x, axis, lambda vs: tdiv(sum(vs), len(vs)))


def tensor_max(ctx: OpContext, x: Tensor, axis=None) -> Tensor:
    """Maximum."""
    return _reduce(x, axis, max)


def tensor_min(ctx: OpContext, x: Tensor, axis=None) -> Tensor:
    """Minimum."""
    return _reduce(x, axis, min)


def argmax(ctx: OpContext, x: Tensor) -> Tensor:
    """[1]: the flat row-major index of the maximum, lowest index on ties."""
    return _reduce(x, None, lambda vs: vs.index(max(vs)))


def argmin(ctx: OpContext, x: Tensor) -> Tensor:
    """[1]: the flat row-major index of the minimum, lowest index on ties."""
    return _reduce(x, None, lambda vs: vs.index(min(vs)))
