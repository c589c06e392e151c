"""knn (spec/ml-exact.md §6): the training rows are the model; predict votes among the k
nearest stored rows, ties → the smallest label."""
from collections import Counter

from ..numeric.int32 import wrap32
from ..tensor import Tensor
from . import descriptor
from ..failures import Refused
from .exact import apply_std_block, check_k, check_xy, matrix_rows, standardized

ALGO = "knn"
ALGO_ID = descriptor.ALGO_IDS[ALGO]


def fit(X: Tensor, y: Tensor | None, cfg: dict, q: int) -> Tensor:
    """Stored rows are z(X) (exact) when standardized, else X; labels verbatim in row order.
    Descriptor: [k, n] + rows + labels + [std block]; output count = #distinct labels."""
    rows, labels = check_xy(X, y)
    if labels is None:
        raise Refused("knn needs labels y")
    n, d, k = len(rows), len(rows[0]), cfg["k"]
    check_k(k, n)
    block = []
    if cfg["standardize"]:
        rows, block = standardized(rows, 10 ** q)
    flags = descriptor.FLAG_STANDARDIZED if cfg["standardize"] else 0
    return descriptor.pack(ALGO_ID, q, d, len(set(labels)), flags,
                           [k, n, *(v for r in rows for v in r), *labels, *block])


def vote(row, stored, labels, k: int) -> int:
    """The first k stored rows by (squared distance, row index); the label with the most
    votes, ties → the smallest label."""
    order = sorted(range(len(stored)),
                   key=lambda i: (sum((a - b) ** 2 for a, b in zip(row, stored[i])), i))
    votes = Counter(labels[i] for i in order[:k])
    best = max(votes.values())
    return min(label for label, count in votes.items() if count == best)


def predict(slots: tuple[int, ...], X: Tensor, q: int) -> Tensor:
    """Per new row (standardized first if flagged): the vote of its k nearest stored rows."""
    h, p = descriptor.header(slots), descriptor.payload(slots)
    d, (k, n) = h.features, p[:2]
    stored = [p[2 + i * d:2 + (i + 1) * d] for i in range(n)]
    labels = p[2 + n * d:2 + n * d + n]
    rows = matrix_rows(X)
    if h.standardized:
        rows = apply_std_block(rows, p[2 + n * d + n:], 10 ** q)
    out = [wrap32(vote(r, stored, labels, k)) for r in rows]
    return Tensor((len(out), 1), tuple(out))
