"""The element types a tensor travels as (spec/wire.md §2.1): which one a script's quant
range picks, and each one's byte width, struct code, range and name."""
from .constants import DTYPE_INT8, DTYPE_INT32

ELEM_BYTES = {DTYPE_INT8: 1, DTYPE_INT32: 4}
ELEM_FORMAT = {DTYPE_INT8: "b", DTYPE_INT32: "i"}  # their struct codes (little-endian, signed)
DTYPE_RANGE = {DTYPE_INT8: (-128, 127), DTYPE_INT32: (-2 ** 31, 2 ** 31 - 1)}
DTYPE_NAME = {DTYPE_INT8: "int8", DTYPE_INT32: "int32"}


def _signed_width(v: int) -> int:
    return (v if v >= 0 else -v - 1).bit_length() + 1


def wire_dtype(quantres: int, quantmin: int, quantmax: int) -> int:
    """wire.md §2.1: with min/max scaled by 10^q, the width is the larger of
    ceil(log2(span + 1)) and the signed width holding both ends; ≤ 8 bits is int8, else int32."""
    lo, hi = quantmin * 10 ** quantres, quantmax * 10 ** quantres
    span_bits = max(hi - lo, 0).bit_length()  # == ceil(log2(span + 1))
    width = max(span_bits, _signed_width(lo), _signed_width(hi))
    return DTYPE_INT8 if width <= 8 else DTYPE_INT32
