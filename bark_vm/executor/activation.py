"""relu and the LUT activations sigmoid, tanh, softmax at scale M = 10^q (docs/ops.md §3).

The tables are `bark_vm.wire.lut`'s (R35); the evaluation below is the executor's own, vectorized
in int64 (every intermediate stays far below 2^63 for 0 ≤ q ≤ 9).
"""
import numpy as np

from ..wire import lut
from ..wire.constants import MAX_QUANTRES
from .ints import I32, I64, check_axis, failed, rdiv, wrap32

_TABLES = {t.name: np.array(t.values, dtype=I64) for t in (lut.SIGMOID, lut.TANH, lut.EXP)}


def scale(q: int) -> np.int64:
    """M = 10^q, 0 ≤ q ≤ 9; any other quantres fails the op."""
    if not 0 <= q <= MAX_QUANTRES:
        raise failed(f"activation LUTs need 0 <= quantres <= {MAX_QUANTRES}, got {q}")
    return I64(10 ** q)


def lookup(table: lut.Table, xf: np.ndarray) -> np.ndarray:
    """T at xf thousandths: the end entries outside (lo, hi), else T[k] + rdiv(ΔT·frac, 64)."""
    values = _TABLES[table.name]
    xf = xf.astype(I64)
    off = np.clip(xf - I64(table.lo), I64(0), I64(table.hi - table.lo))
    step = I64(lut.STEP)
    k = np.minimum(off // step, I64(len(values) - 2))   # off = hi uses the last pair, frac 64
    frac = off - k * step
    v0, v1 = values[k], values[k + 1]
    return v0 + rdiv((v1 - v0) * frac, step)


def relu(q, x):
    """max(x, 0)."""
    x = x.astype(I32)
    return np.maximum(x, np.zeros_like(x))


def _evaluate(table: lut.Table, q: int, x: np.ndarray) -> np.ndarray:
    m = scale(q)
    xf = rdiv(x.astype(I64) * I64(lut.XSCALE), m)
    return wrap32(rdiv(lookup(table, xf) * m, I64(lut.VSCALE)))


def sigmoid(q, x):
    """rdiv(σ_lut(rdiv(x·1000, M))·M, 10^6)."""
    return _evaluate(lut.SIGMOID, q, x)


def tanh(q, x):
    """rdiv(tanh_lut(rdiv(x·1000, M))·M, 10^6)."""
    return _evaluate(lut.TANH, q, x)


def softmax(q, x, axis=None):
    """Per line along axis (None: last): e = exp_lut(rdiv((x − max)·1000, M)), out = rdiv(e·M, Σe)."""
    m = scale(q)
    if axis is None:
        axis = x.ndim - 1
    check_axis(axis, x.ndim, "softmax", x.shape)
    if x.size == 0:
        return x.astype(I32)
    v = x.astype(I64)
    d = v - v.max(axis=axis, keepdims=True)                    # exact, in [−(2^32−1), 0]
    e = lookup(lut.EXP, rdiv(d * I64(lut.XSCALE), m))
    total = e.sum(axis=axis, keepdims=True, dtype=I64)         # ≥ 10^6
    return wrap32(rdiv(e * m, total))
