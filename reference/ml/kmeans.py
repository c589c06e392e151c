"""kmeans (spec/ml-exact.md §5): Lloyd iterations from evenly spaced initial rows, exact
integers; predict is the index of the nearest stored centroid."""
from ..numeric.int32 import tdiv, wrap32
from ..tensor import Tensor
from . import descriptor
from .exact import apply_std_block, check_k, check_xy, matrix_rows, standardized

ALGO = "kmeans"
ALGO_ID = descriptor.ALGO_IDS[ALGO]


def fit(X: Tensor, y: Tensor | None, cfg: dict, q: int) -> Tensor:
    """Z = z(X) if standardize else X; C_i = Z[floor(i·n/k)]; `iters` assign-then-update
    passes. Descriptor: [k] + C_0 + … + C_{k−1} + [std block]."""
    rows, _ = check_xy(X, None)
    n, d, k = len(rows), len(rows[0]), cfg["k"]
    check_k(k, n)
    block = []
    if cfg["standardize"]:
        rows, block = standardized(rows, 10 ** q)
    centroids = [list(rows[i * n // k]) for i in range(k)]
    for _ in range(cfg["iters"]):
        assign = [nearest(r, centroids) for r in rows]
        centroids = [update(c, [r for r, a in zip(rows, assign) if a == i])
                     for i, c in enumerate(centroids)]
    flags = descriptor.FLAG_STANDARDIZED if cfg["standardize"] else 0
    return descriptor.pack(ALGO_ID, q, d, k, flags,
                           [k, *(v for c in centroids for v in c), *block])


def distance(a, b) -> int:
    """Squared Euclidean distance, exact."""
    return sum((x - c) ** 2 for x, c in zip(a, b))


def nearest(row, centroids) -> int:
    """argmin_c (distance, c): ties go to the lowest index."""
    return min(range(len(centroids)), key=lambda c: (distance(row, centroids[c]), c))


def update(centroid: list[int], members: list[list[int]]) -> list[int]:
    """C[j] = tdiv(Σ member[j], |members|); a cluster without members keeps its centroid."""
    if not members:
        return centroid
    return [tdiv(sum(r[j] for r in members), len(members)) for j in range(len(centroid))]


def predict(slots: tuple[int, ...], X: Tensor, q: int) -> Tensor:
    """Standardize with the stored block if flagged, then the nearest centroid's index."""
    h, p = descriptor.header(slots), descriptor.payload(slots)
    d, k = h.features, p[0]
    centroids = [p[1 + i * d:1 + (i + 1) * d] for i in range(k)]
    rows = matrix_rows(X)
    if h.standardized:
        rows = apply_std_block(rows, p[1 + k * d:], 10 ** q)
    out = [wrap32(nearest(r, centroids)) for r in rows]
    return Tensor((len(out), 1), tuple(out))
