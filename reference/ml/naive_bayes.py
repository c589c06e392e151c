"""Gaussian naive Bayes (spec/ml-exact.md §7): per-class counts, means and +1-smoothed
variances; predict compares twice the log-posterior in Q20 with a fixed-point logarithm."""
from ..numeric.int32 import tdiv, wrap32
from ..tensor import Tensor
from . import descriptor
from ..failures import Refused
from .exact import apply_std_block, check_xy, matrix_rows, standardized

ALGO = "naive_bayes"
ALGO_ID = descriptor.ALGO_IDS[ALGO]
Q20 = 2 ** 20
LN2_Q30 = 744261118  # round(ln 2 · 2^30)


def log2_q20(x: int) -> int:
    """log2(x)·2^20 for x >= 1, floor-shifted (§7.1): e = bitlength(x) − 1, a mantissa in
    [2^30, 2^31), then 20 squarings, each yielding one fraction bit."""
    e = x.bit_length() - 1
    y = x << (30 - e) if e <= 30 else x >> (e - 30)
    f = 0
    for _ in range(20):
        y = (y * y) >> 30
        f = 2 * f
        if y >= 2 ** 31:
            y >>= 1
            f += 1
    return e * Q20 + f


def ln_q20(x: int) -> int:
    """ln(x)·2^20 = (log2_q20(x)·744261118) >> 30."""
    return (log2_q20(x) * LN2_Q30) >> 30


def fit(X: Tensor, y: Tensor | None, cfg: dict, q: int) -> Tensor:
    """Classes = distinct labels ascending; per class: count, mean = tdiv(Σ z, cnt),
    var = tdiv(Σ (z − mean)², cnt) + 1. Descriptor: [C] + labels + counts + means + vars
    (class-major) + [std block]."""
    rows, labels = check_xy(X, y)
    if labels is None:
        raise Refused("naive_bayes needs labels y")
    d = len(rows[0])
    block = []
    if cfg["standardize"]:
        rows, block = standardized(rows, 10 ** q)
    classes = sorted(set(labels))
    members = [[r for r, lab in zip(rows, labels) if lab == c] for c in classes]
    means = [[tdiv(sum(r[j] for r in m), len(m)) for j in range(d)] for m in members]
    varis = [[tdiv(sum((r[j] - mean[j]) ** 2 for r in m), len(m)) + 1 for j in range(d)]
             for m, mean in zip(members, means)]
    flags = descriptor.FLAG_STANDARDIZED if cfg["standardize"] else 0
    return descriptor.pack(ALGO_ID, q, d, len(classes), flags,
                           [len(classes), *classes, *(len(m) for m in members),
                            *(v for r in means for v in r), *(v for r in varis for v in r),
                            *block])


def score(z, count: int, mean, var) -> int:
    """2·ln_q20(cnt) − Σ_j ln_q20(var_j) − Σ_j tdiv((z_j − mean_j)²·2^20, var_j), exact."""
    return (2 * ln_q20(count) - sum(ln_q20(v) for v in var)
            - sum(tdiv((x - m) ** 2 * Q20, v) for x, m, v in zip(z, mean, var)))


def predict(slots: tuple[int, ...], X: Tensor, q: int) -> Tensor:
    """The label of the largest score; ties → the smallest label (labels are ascending)."""
    h, p = descriptor.header(slots), descriptor.payload(slots)
    d, c = h.features, p[0]
    labels, counts = p[1:1 + c], p[1 + c:1 + 2 * c]
    at = 1 + 2 * c
    means = [p[at + i * d:at + (i + 1) * d] for i in range(c)]
    at += c * d
    varis = [p[at + i * d:at + (i + 1) * d] for i in range(c)]
    rows = matrix_rows(X)
    if h.standardized:
        rows = apply_std_block(rows, p[at + c * d:], 10 ** q)
    out = []
    for z in rows:
        scores = [score(z, counts[i], means[i], varis[i]) for i in range(c)]
        best = max(scores)
        out.append(wrap32(min(lab for lab, s in zip(labels, scores) if s == best)))
    return Tensor((len(out), 1), tuple(out))
