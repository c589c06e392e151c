"""The interpreter's op table: op name -> its pure-Python function, for every op of the
catalogue that runs locally (kind both, local or ctor). A function is called
fn(ctx, *operands, **params) and returns the raw Tensor, before wrap32 (D1). The catalogue
keeps the language's facts about an op; this table alone imports the implementations."""
from ..ml.predict import ml_predict
from ..ops import activation, construct, elementwise, linalg, nn, reduce, shape, unary

KERNELS = {
    # elementwise
    "add": elementwise.add,
    "sub": elementwise.sub,
    "mul": elementwise.mul,
    "div": elementwise.div,
    "gt": elementwise.gt,
    "lt": elementwise.lt,
    "eq": elementwise.eq,
    "ge": elementwise.ge,
    "le": elementwise.le,
    "ne": elementwise.ne,
    "and": elementwise.logical_and,
    "or": elementwise.logical_or,
    "xor": elementwise.logical_xor,
    "not": elementwise.logical_not,
    # linalg
    "scalar_mul": linalg.scalar_mul,
    "matmul": linalg.matmul,
    "transpose": linalg.transpose,
    "determinant": linalg.determinant,
    "adjugate": linalg.adjugate,
    # reduce
    "tensor_sum": reduce.tensor_sum,
    "tensor_mean": reduce.tensor_mean,
    "tensor_max": reduce.tensor_max,
    "tensor_min": reduce.tensor_min,
    "argmax": reduce.argmax,
    "argmin": reduce.argmin,
    # activation
    "relu": activation.relu,
    "sigmoid": activation.sigmoid,
    "tanh": activation.tanh,
    "softmax": activation.softmax,
    # nn
    "conv2d": nn.conv2d,
    "maxpool2d": nn.maxpool2d,
    "avgpool2d": nn.avgpool2d,
    "layernorm": nn.layernorm,
    "batchnorm": nn.batchnorm,
    # shape
    "reshape": shape.reshape,
    "split": shape.split,
    "concat": shape.concat,
    "slice": shape.slice_axis,
    # unary
    "abs": unary.absolute,
    "sqrt": unary.sqrt,
    "isqrt": unary.isqrt,
    "clip": unary.clip,
    # host constructors (in:: initializers only)
    "zeros": construct.zeros,
    "ones": construct.ones,
    "full": construct.full,
    "eye": construct.eye,
    "diag": construct.diag,
    "range": construct.range_,
    "tridiag": construct.tridiag,
    # ML: predict with a model descriptor
    "ml_predict": ml_predict,
}


def family(op: str) -> str:
    """The family of an op's function: its module under ops (elementwise, nn, ...), or the
    package it lives in otherwise (ml); "other" for an op with no function."""
    fn = KERNELS.get(op)
    if fn is None:
        return "other"
    parts = fn.__module__.split(".")[1:]  # maned.ops.nn -> ops, nn
    return parts[1] if parts[0] == "ops" else parts[0]
