"""`--in name=VALUE` values (R9): raw integers `5`, `3:1,2,3`, `2x2:1,2,3,4`, `AxBxC:...`."""
import re
from math import prod

from bark_vm.wire.constants import MAX_RANK

from ..numeric.int32 import fits32
from ..tensor import Tensor

MAX_ELEMENTS = 2 ** 22
_INT = re.compile(r"[+-]?\d+")
_DIMS = re.compile(r"\d+(x\d+){0,3}")


def parse_value(text: str) -> Tensor:
    """The tensor a `--in` value names; ValueError says what is wrong with it."""
    if ":" not in text:
        return Tensor.scalar(_int(text))
    dims_text, _, values_text = text.partition(":")
    if not _DIMS.fullmatch(dims_text):
        raise ValueError(f"'{dims_text}' is not a shape like 3 or 2x2")
    shape = tuple(int(d) for d in dims_text.split("x"))
    if 0 in shape:
        raise ValueError("a dimension is 0")
    if prod(shape) > MAX_ELEMENTS:
        raise ValueError(f"{prod(shape)} elements is over the limit of {MAX_ELEMENTS}")
    values = tuple(_int(v) for v in values_text.split(",")) if values_text else ()
    if len(values) != prod(shape):
        raise ValueError(f"shape {dims_text} needs {prod(shape)} values, got {len(values)}")
    return Tensor(shape, values)


def check_value(t: Tensor) -> Tensor:
    """A tensor given as an input directly (the API) meets the rules of a parsed one: rank
    0..4, no zero dimension, at most MAX_ELEMENTS, every value in int32 (a wide model
    descriptor's int64 slots excepted, R30). ValueError otherwise."""
    if t.rank > MAX_RANK or 0 in t.shape:
        raise ValueError(f"shape {list(t.shape)} is not rank 0..{MAX_RANK} with dimensions of 1 "
                         "or more")
    if t.size > MAX_ELEMENTS:
        raise ValueError(f"{t.size} elements is over the limit of {MAX_ELEMENTS}")
    if all(type(v) is int for v in t.data) and (t.wide or not t.data or (
            fits32(min(t.data)) and fits32(max(t.data)))):
        return t  # plain ints in range: checked without a step per value
    bad = next((v for v in t.data if isinstance(v, bool) or not isinstance(v, int)
                or not (t.wide or fits32(v))), None)
    if bad is not None:
        raise ValueError(f"{bad!r} does not fit int32")
    return t


def _int(text: str) -> int:
    if not _INT.fullmatch(text):
        raise ValueError(f"'{text}' is not an integer")
    v = int(text)
    if not fits32(v):
        raise ValueError(f"{v} does not fit int32")
    return v
