"""How much memory one instruction may allocate, from its operands' shapes, before it runs
(issue 13, DESIGN §10): an upper bound per kernel family, in bytes. The executor adds it to
what the job already holds and refuses (TOO_LARGE) an instruction that would take the job
over its budget, before the kernel allocates anything."""
from math import prod

from ..wire.constants import DTYPE_INT32
from ..wire.dtypes import ELEM_BYTES
from .linalg import uses_limbs

REGISTER_BYTES = ELEM_BYTES[DTYPE_INT32]  # an int32 result element
WIDE_BYTES = 8      # an int64 or float64 element of a kernel's intermediates


def _size(x) -> int:
    return int(prod(x.shape))


def _matmul(args, params) -> int:
    a, b = args
    if a.ndim != 2 or b.ndim != 2:
        return 0  # the kernel refuses it (SHAPE_MISMATCH)
    m, k, n = a.shape[0], a.shape[1], b.shape[1]
    if not uses_limbs(m, k, n):
        return m * n * REGISTER_BYTES
    # float64 digits and two sums, their int64 copy, the chunks' int64 total, the int32 result
    return (m * n * 5 + (m * k + k * n) * 2) * WIDE_BYTES + m * n * REGISTER_BYTES


def _conv2d(args, params) -> int:
    x, kernel = args
    if x.ndim not in (2, 3) or kernel.ndim not in (2, 4):
        return 0  # the kernel refuses it (SHAPE_MISMATCH)
    cin, h, w = x.shape if x.ndim == 3 else (1, *x.shape)  # [H, W] is one channel
    cout, _, kh, kw = kernel.shape if kernel.ndim == 4 else (1, 1, *kernel.shape)
    s, p = max(params.get("stride", 1), 1), params.get("padding", 0)
    oh, ow = max((h + 2 * p - kh) // s + 1, 0), max((w + 2 * p - kw) // s + 1, 0)
    padded = cin * (h + 2 * p) * (w + 2 * p)
    cols = cin * kh * kw * oh * ow
    return (padded + 2 * cols + 2 * cout * oh * ow) * WIDE_BYTES


def _concat(args, params) -> int:
    return (_size(args[0]) + _size(args[1])) * REGISTER_BYTES


def _elementwise(args, params) -> int:
    """Every other kernel: its result is no larger than its largest operand, and its
    intermediates are a few int64 copies of that (the LUT activations hold the most)."""
    return max((_size(a) for a in args), default=0) * (REGISTER_BYTES + 4 * WIDE_BYTES)


SHAPERS = {"matmul": _matmul, "conv2d": _conv2d, "concat": _concat}


def footprint(name: str, args, params) -> int:
    """The bytes kernel `name` may allocate on these operands (an upper bound)."""
    return SHAPERS.get(name, _elementwise)(args, params)
