"""matmul (exact mod 2^32 by float64 BLAS products on 16-bit limbs, DESIGN §5) and transpose."""
import numpy as np

from ..wire.constants import MAX_RANK
from .ints import I32, I64, U32, dims, mismatch, wrap32

# Each limb product sums at most K terms below 2^32 in magnitude; float64 holds every
# partial sum exactly while K·2^32 < 2^53, i.e. K < 2^21. Longer inner dims are chunked.
LIMB_CHUNK = 1 << 20
# Which exact path is the cheaper, by shape (measured: docs/economics.md): the limbs cost
# about 9 ns for each element of a, b and the product (split, converted, recombined), then
# 0.16 ns a multiply-add in three float64 BLAS products; numpy's uint32 loop costs about
# 0.7 ns a multiply-add. So the loop wins while m·k·n ≤ LOOP_RATIO·(m·k + k·n + m·n): a
# skinny product (gradient descent's [rows, features]·[features, 1]) never pays for limbs.
LOOP_RATIO = 16


def uses_limbs(m: int, k: int, n: int) -> bool:
    """Whether [m,k]·[k,n] takes the limbs (BLAS) path, not numpy's uint32 loop."""
    return m * k * n > LOOP_RATIO * (m * k + k * n + m * n)


def _limbs(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x = hi·2^16 + lo with lo in [0, 2^16) and hi in [−2^15, 2^15), both as float64."""
    x = x.astype(I64)
    lo = x & I64(0xFFFF)
    hi = x >> I64(16)
    return lo.astype(np.float64), hi.astype(np.float64)


def matmul_mod32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Σ_k a[i,k]·b[k,j] mod 2^32 as int32, for int32 matrices [M,K] and [K,N].

    a·b = lo·lo + 2^16·(hi·lo + lo·hi) + 2^32·hi·hi; the last term vanishes mod 2^32 and only
    the low 16 bits of the middle sum matter. Three float64 products, each exact (K < 2^21).
    What it allocates is bounded in footprint.py's _matmul: change the two together.
    """
    m, k = a.shape
    n = b.shape[1]
    acc = np.zeros((m, n), dtype=I64)
    for start in range(0, k, LIMB_CHUNK):
        alo, ahi = _limbs(a[:, start:start + LIMB_CHUNK])
        blo, bhi = _limbs(b[start:start + LIMB_CHUNK, :])
        low = (alo @ blo).astype(I64)                       # |.| < 2^52
        mid = (ahi @ blo).astype(I64) + (alo @ bhi).astype(I64)
        acc = (acc + low + ((mid & I64(0xFFFF)) << I64(16))) & I64(0xFFFFFFFF)
    return wrap32(acc)


def matmul(q, a, b):
    """[M,K]·[K,N] → [M,N], c[i,j] = Σ_k a[i,k]·b[k,j] (wrapped: a pure sum, R36). Skinny
    and small products run on uint32 views, whose C loop wraps mod 2^32 exactly; the others
    on BLAS (uses_limbs)."""
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise mismatch(f"matmul {dims(a.shape)} x {dims(b.shape)}")
    a, b = a.astype(I32, copy=False), b.astype(I32, copy=False)
    if not uses_limbs(a.shape[0], a.shape[1], b.shape[1]):
        return np.matmul(a.view(U32), b.view(U32)).view(I32)
    return matmul_mod32(a, b)


def transpose(q, x):
    """Swap the last two axes, [..,R,C] → [..,C,R], ranks 2 to the wire's MAX_RANK."""
    if not 2 <= x.ndim <= MAX_RANK:
        raise mismatch(f"transpose {dims(x.shape)}: needs rank 2 to {MAX_RANK}")
    return np.ascontiguousarray(np.swapaxes(x, -1, -2)).astype(I32, copy=False)
