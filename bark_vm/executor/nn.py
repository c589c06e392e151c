"""conv2d, maxpool2d, avgpool2d (R7, docs/ops.md §5.1-5.2), layernorm (§5.3), batchnorm (§5.4, R31)."""
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .ints import (I32, I64, U64, broadcast_shape, dims, failed, isqrt0, mismatch, rdiv,
                   spread, tdiv, wrap32)
from .linalg import matmul_mod32


def _channels(x: np.ndarray, what: str) -> np.ndarray:
    """x as [C,H,W]: a rank-2 [H,W] is one channel."""
    if x.ndim == 2:
        return x.reshape(1, *x.shape)
    if x.ndim == 3:
        return x
    raise mismatch(f"{what} {dims(x.shape)}: needs [H, W] or [C, H, W]")


def _extent(n: int, k: int, s: int, what: str, shape) -> int:
    """⌊(n − k)/s⌋ + 1 positions; a window larger than the (padded) input is refused."""
    if n < k:
        raise mismatch(f"{what}: window {k} is larger than the input extent {n} of {dims(shape)}")
    return (n - k) // s + 1


def _windows(x3: np.ndarray, kh: int, kw: int, s: int, oh: int, ow: int) -> np.ndarray:
    """[C, OH, OW, KH, KW] view of the kh×kw windows at stride s."""
    w = sliding_window_view(x3, (kh, kw), axis=(1, 2))
    return w[:, : (oh - 1) * s + 1 : s, : (ow - 1) * s + 1 : s]


def conv2d(q, x, kernel, stride=1, padding=0):
    """Cross-correlation with zero padding, out[o,y,x] = Σ_c,i,j xp[c,y·s+i,x·s+j]·k[o,c,i,j],
    always [Cout, OH, OW]; the exact sum is wrapped (a pure sum, R36), so it runs as an
    im2col matmul on the exact limb product."""
    s = stride or 1
    p = padding
    if s < 0 or p < 0:
        raise failed(f"conv2d: stride {s} and padding {p} must not be negative")
    x3 = _channels(x, "conv2d input")
    cin, h, w = x3.shape
    if kernel.ndim == 2:
        k4 = kernel.reshape(1, 1, *kernel.shape)
    elif kernel.ndim == 4:
        k4 = kernel
    else:
        raise mismatch(f"conv2d kernel {dims(kernel.shape)}: needs [KH, KW] or [Cout, Cin, KH, KW]")
    cout, kcin, kh, kw = k4.shape
    if kcin != cin:
        raise mismatch(f"conv2d {dims(x.shape)} x {dims(kernel.shape)}: "
                       f"kernel expects {kcin} input channel(s), input has {cin}")
    oh = _extent(h + 2 * p, kh, s, "conv2d", x.shape)
    ow = _extent(w + 2 * p, kw, s, "conv2d", x.shape)
    xp = np.pad(x3.astype(I32), ((0, 0), (p, p), (p, p))) if p else x3.astype(I32)
    if cout == 0 or cin * kh * kw == 0 or oh * ow == 0:
        return np.zeros((cout, oh, ow), dtype=I32)
    cols = _windows(xp, kh, kw, s, oh, ow)                     # [Cin, OH, OW, KH, KW]
    cols = cols.transpose(0, 3, 4, 1, 2).reshape(cin * kh * kw, oh * ow)
    out = matmul_mod32(k4.reshape(cout, cin * kh * kw).astype(I32), np.ascontiguousarray(cols))
    return out.reshape(cout, oh, ow)


def _pool(x, kernel_size, stride, what):
    if kernel_size is None:
        raise failed(f"{what} needs a kernel size")
    k = kernel_size
    s = k if stride is None else stride
    if k < 1 or s < 1:
        raise failed(f"{what}: kernel_size {k} and stride {s} must be at least 1")
    x3 = _channels(x, what)
    c, h, w = x3.shape
    oh, ow = _extent(h, k, s, what, x.shape), _extent(w, k, s, what, x.shape)
    shape = (oh, ow) if x.ndim == 2 else (c, oh, ow)
    return _windows(x3.astype(I32), k, k, s, oh, ow), k, shape


def maxpool2d(q, x, kernel_size=None, stride=None):
    """Maximum of each k×k window (stride defaults to k, no padding)."""
    win, _, shape = _pool(x, kernel_size, stride, "maxpool2d")
    if win.size == 0:
        return np.zeros(shape, dtype=I32)
    return win.max(axis=(-2, -1)).astype(I32).reshape(shape)


def avgpool2d(q, x, kernel_size=None, stride=None):
    """tdiv(exact k×k window sum, k²)."""
    win, k, shape = _pool(x, kernel_size, stride, "avgpool2d")
    total = win.sum(axis=(-2, -1), dtype=I64)
    return wrap32(tdiv(total, np.full(total.shape, k * k, dtype=I64))).reshape(shape)


def _quant_scale(q: int, what: str) -> int:
    if q < 0:
        raise failed(f"{what} needs quantres >= 0, got {q}")
    return 10 ** q


def layernorm(q, x):
    """Per line along the last axis, exact: S = Σx, c = N·x − S, R = isqrt(N·Σc²·2^20),
    out = rdiv(c·M·N·2^10, R), all 0 when R = 0 (gamma 1, beta 0)."""
    m = _quant_scale(q, "layernorm")
    if x.size == 0:
        return x.astype(I32)
    n = x.shape[-1] if x.ndim else 1
    lines = x.astype(I64).reshape(-1, n)
    c = I64(n) * lines - lines.sum(axis=1, keepdims=True, dtype=I64)   # |c| ≤ N·2^32
    cmax = int(np.abs(c).max())
    k = m * n * 2 ** 10
    if k < 2 ** 60 and cmax * cmax * n < 2 ** 62 and cmax * k < 2 ** 60 and n < 2 ** 20:
        ss = (c * c).sum(axis=1, dtype=I64)                  # < 2^62: exact in int64
        r = np.array([math.isqrt((n * int(v)) << 20) for v in ss], dtype=I64)  # < 2^52
        num = c * I64(k)
        rr = np.where(r == I64(0), I64(1), r)[:, None]
        out = np.where(r[:, None] == I64(0), I64(0), rdiv(num, rr))
        return wrap32(out).reshape(x.shape)
    # Beyond int64: Python integers (R36, docs/ops.md §5.3).
    co = c.astype(object)
    ss = (co * co).sum(axis=1)
    r = [math.isqrt((n * int(v)) << 20) for v in ss]
    out = []
    for row, rv in zip(co.tolist(), r):
        for ci in row:
            if rv == 0:
                out.append(0)
            else:
                qv = (2 * abs(ci) * k + rv) // (2 * rv)
                out.append(qv if ci >= 0 else -qv)
    return wrap32(np.array(out, dtype=object)).reshape(x.shape)


def batchnorm(q, x, mean, var, gamma, beta):
    """x, mean, var, gamma, beta broadcast together (§2); each step wrapped (R31):
    d = w32(x − mean); n = w32(d·gamma); r = isqrt₀(w32(var·M)); t = w32(tdiv(n, r)); w32(t + beta)."""
    m = _quant_scale(q, "batchnorm")
    ops = (x, mean, var, gamma, beta)
    shape = x.shape
    for t in ops[1:]:
        shape = broadcast_shape(shape, t.shape, "batchnorm")
    xv, mv, vv, gv, bv = (spread(t, shape).astype(I64) for t in ops)

    def u(v):
        return v.astype(U64)

    d = wrap32(u(xv) - u(mv)).astype(I64)
    n = wrap32(u(d) * u(gv)).astype(I64)
    scaled = wrap32(u(vv) * U64(m % 2 ** 32)).astype(I64)   # w32(var·M) = w32(var·w32(M))
    r = isqrt0(scaled)
    t = wrap32(tdiv(n, r)).astype(I64)
    return wrap32(t + bv)
