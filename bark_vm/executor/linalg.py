"""matmul (exact mod 2^32 by float64 BLAS products on 16-bit limbs, DESIGN §5) and transpose."""
import threading

import numpy as np

from ..wire.constants import MAX_RANK
from .ints import I32, I64, U32, U64, dims, mismatch, wrap32

# Each limb product sums at most K terms below 2^32 in magnitude; float64 holds every
# partial sum exactly while K·2^32 < 2^53, i.e. K < 2^21. Longer inner dims are chunked.
LIMB_CHUNK = 1 << 20
# Which exact path is the cheaper, by shape (measured: docs/economics.md): the limbs cost
# about 12 us a call, then about 1.5 ns for each element of a, b and the product (split,
# converted, recombined) and 0.16 ns a multiply-add in two or three float64 BLAS products;
# numpy's uint32 loop costs about 0.65 ns a multiply-add. So the loop wins below LIMBS_FROM
# multiply-adds and while m·k·n ≤ LOOP_RATIO·(m·k + k·n + m·n): a skinny product (gradient
# descent's [rows, features]·[features, 1]) never pays for limbs. (Measured on the three-
# product limbs; the two-product ones since win from about 26^3 multiply-adds and at
# [10000, 30]·[30, 2], so the rule leaves some speed to the loop: docs/economics.md.)
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
# Adding it to a float64 within 2^67 rounds that float to the nearest multiple of 2^16: the
# sum lies in [2^68, 2^69], where float64s are 2^(68−52) = 2^16 apart.
TO_2_16 = 1.5 * 2.0 ** 68
SHIFT_16 = U64(16)


def _digits(x: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> None:
    """x = hi·2^16 + lo exactly, in float64, hi = x/2^16 rounded to nearest: both digits
    in [−2^15, 2^15] (five float passes over x: cheaper than the four integer ones of
    signed digits, two of them casting)."""
    np.copyto(lo, x)
    np.add(lo, TO_2_16, out=hi)
    hi -= TO_2_16                                   # x rounded to a multiple of 2^16
    lo -= hi
    hi *= 2.0 ** -16


def _limbs(x: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> None:
    """x = hi·2^16 + lo exactly, in float64: lo = x mod 2^16 in [0, 2^16), hi = x >> 16 in
    [−2^15, 2^15) (two integer passes)."""
    np.bitwise_and(x, I32(0xFFFF), out=lo)
    np.right_shift(x, I32(16), out=hi)


# A thread's last room and its views, kept for its next product of the same shape when the
# room is at most KEEP_BYTES: a repeated product then pays neither the allocation nor the
# dozen views (3 us of 38 at 64^2). Every value a product reads from it is written first;
# what a thread keeps (at most KEEP_BYTES) is outside any job's footprint.
_kept = threading.local()
KEEP_BYTES = 1 << 20


def _room(m: int, k: int, n: int) -> tuple:
    """Every float64 temporary of an [m,k]·[k,n] product, cut from one allocation: fresh
    pages, not arithmetic, are what a large product's temporaries mostly cost, and separate
    ones cost them again on every call. (a's one or two arrays; b's two, stacked and each;
    the two sums, stacked and each; their uint64 copy, stacked and each.)"""
    if getattr(_kept, "shape", None) == (m, k, n):
        return _kept.views
    left, right, both = m * k * (1 if k <= WHOLE_A_UP_TO else 2), 2 * k * n, 2 * m * n
    room = np.empty(left + right + 2 * both, np.float64)
    bdigits = room[left:left + right].reshape(2, k, n)
    sums = room[left + right:left + right + both].reshape(2, m, n)
    wide = room[left + right + both:].reshape(2, m, n).view(U64)
    views = (tuple(room[:left].reshape(-1, m, k)), bdigits, *bdigits, sums, *sums, wide, *wide)
    if room.nbytes <= KEEP_BYTES:
        _kept.shape, _kept.views = (m, k, n), views
    return views


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Σ_k a[i,k]·b[k,j] mod 2^32 as int32, K ≤ LIMB_CHUNK, by exact float64 products.

    For K ≤ WHOLE_A_UP_TO, a is taken whole against b's signed digits (_digits): a·b =
    2^16·(a·bhi) + a·blo, two products, each term within 2^31·2^15 = 2^46, each sum within
    2^53. Past it both split into limbs (_limbs), and a·b ≡ 2^16·(ahi·blo + alo·bhi) +
    alo·blo (mod 2^32), the term 2^32·ahi·bhi vanishing: three products, each term below
    2^32, each sum below 2^52. Either way the two sums [mid, low] are exact integers within
    2^53, so int64 holds them, and 2^16·mid + low mod 2^32 is read from their uint64 bits,
    where overflow wraps.
    """
    (m, k), n = a.shape, b.shape[1]
    alimbs, bdigits, bhi, blo, sums, mid, low, wide, shifted, low_bits = _room(m, k, n)
    if k <= WHOLE_A_UP_TO:
        _digits(b, bhi, blo)
        np.copyto(alimbs[0], a)
        np.matmul(alimbs[0], bdigits, out=sums)             # [a·bhi, a·blo]
    else:
        ahi, alo = alimbs
        _limbs(a, ahi, alo)
        _limbs(b, bhi, blo)
        np.matmul(ahi, blo, out=mid)
        np.matmul(alo, bhi, out=low)
        mid += low
        np.matmul(alo, blo, out=low)
    np.copyto(wide, sums, casting="unsafe")                 # exact: integers within 2^53
    shifted <<= SHIFT_16
    shifted += low_bits
    return shifted.astype(U32).view(I32)                    # unsigned narrowing: mod 2^32


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
    """[M,K]·[K,N] → [M,N], c[i,j] = Σ_k a[i,k]·b[k,j] (wrapped: a pure sum, R36), on
    int32 registers (the interpreter casts every input). Skinny and small products run on
    uint32 views, whose C loop wraps mod 2^32 exactly; the others on BLAS (uses_limbs)."""
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise mismatch(f"matmul {dims(a.shape)} x {dims(b.shape)}")
    if not uses_limbs(a.shape[0], a.shape[1], b.shape[1]):
        return np.matmul(a.view(U32), b.view(U32)).view(I32)
    return matmul_mod32(a, b)


def transpose(q, x):
    """Swap the last two axes, [..,R,C] → [..,C,R], ranks 2 to the wire's MAX_RANK."""
    if not 2 <= x.ndim <= MAX_RANK:
        raise mismatch(f"transpose {dims(x.shape)}: needs rank 2 to {MAX_RANK}")
    return np.ascontiguousarray(np.swapaxes(x, -1, -2)).astype(I32, copy=False)
