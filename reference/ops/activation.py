"""Activations: relu, and the LUT-based sigmoid, tanh and softmax at scale 10^q (shape kept)."""
from ..numeric import activation as lut
from ..tensor import Tensor
from .broadcast import check_axis, map_data, map_lines
from ..catalogue import OpContext


def relu(ctx: OpContext, x: Tensor) -> Tensor:
    """max(x, 0)."""
    return map_data(lambda v: max(v, 0), x)


def sigmoid(ctx: OpContext, x: Tensor) -> Tensor:
    """rdiv(σ_lut(rdiv(x·1000, M))·M, 10^6), M = 10^q, 0 <= q <= 9 (numeric.activation)."""
    lut.check_quantres(ctx.quantres)
    return map_data(lambda v: lut.sigmoid(v, ctx.quantres), x)


def tanh(ctx: OpContext, x: Tensor) -> Tensor:
    """The same evaluation on the tanh table."""
    lut.check_quantres(ctx.quantres)
    return map_data(lambda v: lut.tanh(v, ctx.quantres), x)


def softmax(ctx: OpContext, x: Tensor, axis=None) -> Tensor:
    """Per line along axis (default last): e_j = exp_lut(rdiv((x_j−max)·1000, M)), out_j = rdiv(e_j·M, Σe)."""
    lut.check_quantres(ctx.quantres)
    if axis is not None:
        axis = check_axis(axis, x.rank)
    return map_lines(x, axis, lambda line: lut.softmax(line, ctx.quantres))
