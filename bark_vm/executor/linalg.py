"""matmul (exact mod 2^32 by float64 BLAS products on 16-bit limbs, DESIGN §5) and transpose."""
import numpy as np

from ..wire.constants import MAX_RANK
from .ints import I32, I64, U32, dims, mismatch, wrap32

# Each limb product sums at most K terms below 2^32 in magnitude; float64 holds every
# partial sum exactly while K·2^32 < 2^53, i.e. K < 2^21. Longer inner dims are chunked.
LIMB_CHUNK = 1 << 20
# Which exact path is the cheaper, by shape (measured: docs/economics.md): the limbs cost
# about 12 us a call, then about 1.5 ns for each element of a, b and the product (split,
# converted, recombined) and 0.16 ns a multiply-add in two or three float64 BLAS products;
# numpy's uint32 loop costs about 0.65 ns a multiply-add. So the loop wins below LIMBS_FROM
# multiply-adds and while m·k·n ≤ LOOP_RATIO·(m·k + k·n + m·n): a skinny product (gradient
# descent's [rows, features]·[features, 1]) never pays for limbs.
LOOP_RATIO = 6
LIMBS_FROM = 30_000


def uses_limbs(m: int, k: int, n: int) -> bool:
    """Whether [m,k]·[k,n] takes the limbs (BLAS) path, not numpy's uint32 loop."""
    work = m * k * n
    return work >= LIMBS_FROM and work > LOOP_RATIO * (m * k + k * n + m * n)


# With a taken whole (|a| ≤ 2^31) against b's signed 16-bit digits (|digit| ≤ 2^15), a
# product's terms stay within 2^46, so K terms sum exactly in float64 while K ≤ 2^7: two
# products, not three.
WHOLE_A_UP_TO = 128


def _carve(*shapes) -> list[np.ndarray]:
    """Float64 arrays of these shapes cut from one allocation (one mmap, not one each: fresh
    pages are what a large product's temporaries mostly cost; numpy gives ≥ 4 MiB huge pages)."""
    room = np.empty(sum(r * c for r, c in shapes), np.float64)
    parts, start = [], 0
    for r, c in shapes:
        parts.append(room[start:start + r * c].reshape(r, c))
        start += r * c
    return parts


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Σ_k a[i,k]·b[k,j] mod 2^32 as int32, K ≤ LIMB_CHUNK, by exact float64 products.

    For K ≤ WHOLE_A_UP_TO, b ≡ bhi·2^16 + blo (mod 2^32) in signed digits, blo and bhi in
    [−2^15, 2^15), and a·b ≡ a·blo + 2^16·(a·bhi): two products, each sum within 2^53.
    Otherwise both split into limbs, lo in [0, 2^16) and hi in [−2^15, 2^15), and a·b =
    alo·blo + 2^16·(ahi·blo + alo·bhi) + 2^32·ahi·bhi, whose last term vanishes mod 2^32:
    three products, each sum below 2^52. Either way only the middle sum mod 2^16 matters:
    mid/2^16 less its ceiling, times 2^32, in (−2^32, 0], so low + that stays within 2^53.
    """
    (m, k), n = a.shape, b.shape[1]
    whole = k <= WHOLE_A_UP_TO
    left = [(m, k)] if whole else [(m, k), (m, k)]
    *alimbs, blo, bhi, mid, low, spare = _carve(*left, (k, n), (k, n), (m, n), (m, n), (m, n))
    if whole:
        shifted = b + I32(1 << 15)                          # wraps; bhi is needed mod 2^16
        np.bitwise_and(shifted, I32(0xFFFF), out=blo)
        blo -= 2.0 ** 15
        np.right_shift(shifted, I32(16), out=bhi)
        np.copyto(alimbs[0], a)
        np.matmul(alimbs[0], bhi, out=mid)                  # |.| ≤ 2^7·2^46
        np.matmul(alimbs[0], blo, out=low)                  # in [−2^53 + 2^38, 2^53]
    else:
        alo, ahi = alimbs
        np.bitwise_and(b, I32(0xFFFF), out=blo)
        np.right_shift(b, I32(16), out=bhi)
        np.bitwise_and(a, I32(0xFFFF), out=alo)
        np.right_shift(a, I32(16), out=ahi)
        np.matmul(ahi, blo, out=mid)
        np.matmul(alo, bhi, out=low)
        mid += low                                          # |.| < 2^20·2^32
        np.matmul(alo, blo, out=low)                        # in [0, 2^20·2^32)
    mid *= 2.0 ** -16
    np.ceil(mid, out=spare)
    mid -= spare                                            # (mid mod 2^16) / 2^16 − 1 or 0
    mid *= 2.0 ** 32
    low += mid
    wide = spare.view(I64)
    np.copyto(wide, low, casting="unsafe")
    return wrap32(wide)


def matmul_mod32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Σ_k a[i,k]·b[k,j] mod 2^32 as int32, for int32 matrices [M,K] and [K,N]: one exact
    product while K ≤ LIMB_CHUNK (the float64 bound), one per chunk of K past it. What it
    allocates is bounded in footprint.py's _matmul: change the two together."""
    return _product(a, b) if a.shape[1] <= LIMB_CHUNK else _chunked(a, b)


def _chunked(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The sum mod 2^32 of one exact product per LIMB_CHUNK terms of K."""
    total = np.zeros((a.shape[0], b.shape[1]), dtype=I64)
    for start in range(0, a.shape[1], LIMB_CHUNK):
        total += _product(a[:, start:start + LIMB_CHUNK], b[start:start + LIMB_CHUNK, :])
    return wrap32(total)


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
