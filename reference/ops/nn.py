"""Neural-net kernels: conv2d, maxpool2d, avgpool2d (R7), layernorm (wire.md §1.8), batchnorm (R31)."""
from math import isqrt

from ..numeric.int32 import isqrt_floor, rdiv, tdiv, wrap32
from ..tensor import Tensor, shape_text
from .broadcast import broadcast_map, int_param, map_lines, need_rank
from ..catalogue import OpContext
from ..failures import OpError


def _channels(x: Tensor, what: str) -> tuple[int, int, int]:
    """x as (C, H, W): [H,W] is one channel."""
    need_rank(x, (2, 3), what)
    return (1, *x.shape) if x.rank == 2 else x.shape


def _out_size(n: int, k: int, s: int, what: str) -> int:
    """⌊(n − k)/s⌋ + 1 positions; a window larger than the (padded) input is refused."""
    if n < k:
        raise OpError(f"{what}: window {k} is larger than the input extent {n}")
    return (n - k) // s + 1


def conv_params(stride=1, padding=0) -> tuple[int, int]:
    """(stride, padding) of conv2d: an absent or 0 stride means 1; negatives are refused."""
    s = int_param("stride", stride) or 1
    p = int_param("padding", padding)
    if s < 0 or p < 0:
        raise OpError(f"conv2d: stride {s} and padding {p} must not be negative")
    return s, p


def pool_params(kernel_size, stride, what: str) -> tuple[int, int]:
    """(kernel, stride) of a pool: the kernel is required, the stride defaults to it, and
    both must be at least 1."""
    if kernel_size is None:
        raise OpError(f"{what} needs {{kernel_size: k}}")
    k = int_param("kernel_size", kernel_size)
    s = k if stride is None else int_param("stride", stride)
    if k < 1 or s < 1:
        raise OpError(f"{what}: kernel_size {k} and stride {s} must be at least 1")
    return k, s


def conv2d(ctx: OpContext, x: Tensor, kernel: Tensor, stride=1, padding=0) -> Tensor:
    """Cross-correlation with zero padding: out[o,y,x] = Σ_c,i,j xpad[c, y·s+i, x·s+j]·k[o,c,i,j] exact."""
    s, p = conv_params(stride, padding)
    cin, h, w = _channels(x, "conv2d input")
    need_rank(kernel, (2, 4), "conv2d kernel")
    cout, kcin, kh, kw = (1, 1, *kernel.shape) if kernel.rank == 2 else kernel.shape
    if kcin != cin:
        raise OpError(f"conv2d: kernel {shape_text(kernel.shape)} expects {kcin} input channel(s), "
                      f"input {shape_text(x.shape)} has {cin}")
    oh, ow = _out_size(h + 2 * p, kh, s, "conv2d"), _out_size(w + 2 * p, kw, s, "conv2d")

    def at(c, r, q):
        r, q = r - p, q - p
        return x.data[(c * h + r) * w + q] if 0 <= r < h and 0 <= q < w else 0

    def k(o, c, i, j):
        return kernel.data[((o * kcin + c) * kh + i) * kw + j]

    data = tuple(
        sum(at(c, y * s + i, xx * s + j) * k(o, c, i, j)
            for c in range(cin) for i in range(kh) for j in range(kw))
        for o in range(cout) for y in range(oh) for xx in range(ow))
    return Tensor((cout, oh, ow), data)


def _pool(x: Tensor, kernel_size, stride, f, what: str) -> Tensor:
    """f over each k×k window (stride defaults to k, no padding); x's rank is kept."""
    k, s = pool_params(kernel_size, stride, what)
    c, h, w = _channels(x, what)
    oh, ow = _out_size(h, k, s, what), _out_size(w, k, s, what)
    data = tuple(
        f([x.data[(ch * h + y * s + i) * w + xx * s + j] for i in range(k) for j in range(k)])
        for ch in range(c) for y in range(oh) for xx in range(ow))
    return Tensor((oh, ow) if x.rank == 2 else (c, oh, ow), data)


def maxpool2d(ctx: OpContext, x: Tensor, kernel_size=None, stride=None) -> Tensor:
    """Maximum of each k×k window."""
    return _pool(x, kernel_size, stride, max, "maxpool2d")


def avgpool2d(ctx: OpContext, x: Tensor, kernel_size=None, stride=None) -> Tensor:
    """tdiv(exact window sum, k²)."""
    return _pool(x, kernel_size, stride, lambda vs: tdiv(sum(vs), len(vs)), "avgpool2d")


def layernorm_group(xs: list[int], m: int) -> list[int]:
    """S = Σx, c_i = N·x_i − S, R = isqrt((N·Σc²) << 20), out_i = rdiv(c_i·M·N·2^10, R); R = 0 gives 0s."""
    n, total = len(xs), sum(xs)
    c = [n * v - total for v in xs]
    r = isqrt((n * sum(ci * ci for ci in c)) << 20)
    return [rdiv(ci * m * n * 2 ** 10, r) if r else 0 for ci in c]


def layernorm(ctx: OpContext, x: Tensor) -> Tensor:
    """Normalise each line along the last axis (gamma 1, beta 0), exact integers; rank 0 is one line."""
    return map_lines(x, None, lambda line: layernorm_group(line, ctx.scale))


def batchnorm(ctx: OpContext, x: Tensor, mean: Tensor, var: Tensor, gamma: Tensor,
              beta: Tensor) -> Tensor:
    """tdiv(w32(w32(x−mean)·gamma), isqrt(w32(var·10^q))) + beta, each step wrapped (R31)."""
    def one(xv, mv, vv, gv, bv):
        num = wrap32(wrap32(xv - mv) * gv)
        return wrap32(tdiv(num, isqrt_floor(wrap32(vv * ctx.scale)))) + bv

    return broadcast_map(one, x, mean, var, gamma, beta)
