"""Isolation forest (spec/ml-exact.md §9): T random trees grown from one splitmix64 stream on
all rows; the score is the mean leaf depth plus the exact average-path correction c_S."""
from fractions import Fraction
from functools import lru_cache

from ..numeric.int32 import tdiv, wrap32
from ..tensor import Tensor
from . import descriptor
from .exact import SplitMix64, check_xy, matrix_rows

ALGO = "isolation_forest"
ALGO_ID = descriptor.ALGO_IDS[ALGO]
LEAF = -1


def constant(rows, f: int) -> bool:
    return len({r[f] for r in rows}) == 1


def grow(rows, depth: int, max_depth: int, rng: SplitMix64, nodes: list) -> int:
    """Append the node for these rows (preorder, left subtree first), return its id. A leaf
    when |rows| <= 1, at max_depth, or when every column is constant (no draw consumed);
    else f = next mod d until column f is not constant, thr = lo + next mod (hi − lo)."""
    node_id = len(nodes)
    nodes.append([LEAF, 0, LEAF, LEAF, len(rows)])
    d = len(rows[0])
    if len(rows) <= 1 or depth >= max_depth or all(constant(rows, f) for f in range(d)):
        return node_id
    f = rng.next() % d
    while constant(rows, f):
        f = rng.next() % d
    lo, hi = min(r[f] for r in rows), max(r[f] for r in rows)
    thr = lo + rng.next() % (hi - lo)
    nodes[node_id][0:2] = [f, thr]
    nodes[node_id][2] = grow([r for r in rows if r[f] <= thr], depth + 1, max_depth, rng, nodes)
    nodes[node_id][3] = grow([r for r in rows if r[f] > thr], depth + 1, max_depth, rng, nodes)
    return node_id


def fit(X: Tensor, y: Tensor | None, cfg: dict, q: int) -> Tensor:
    """Descriptor: [T] + per tree [M_t] + nodes (feature, threshold, left, right, size)."""
    rows, _ = check_xy(X, None)
    rng = SplitMix64(cfg["seed"])
    forest = []
    for _ in range(cfg["trees"]):
        nodes: list[list[int]] = []
        grow(rows, 0, cfg["max_depth"], rng, nodes)
        forest += [len(nodes), *(v for node in nodes for v in node)]
    return descriptor.pack(ALGO_ID, q, len(rows[0]), 1, 0, [cfg["trees"], *forest])


@lru_cache(maxsize=None)
def harmonic(k: int) -> Fraction:
    """H(k) = Σ_{i=1..k} 1/i, exact."""
    return sum((Fraction(1, i) for i in range(1, k + 1)), Fraction(0))


def c_s(m: int, scale: int) -> int:
    """c_S(m) = 0 if m <= 1 else floor(S·(2·H(m−1) − 2(m−1)/m)), exact rationals."""
    if m <= 1:
        return 0
    exact = scale * (2 * harmonic(m - 1) - Fraction(2 * (m - 1), m))
    return exact.numerator // exact.denominator


def path(nodes, x, scale: int) -> int:
    """depth_of_leaf(x)·S + c_S(size_of_leaf); root depth 0, x[f] <= thr goes left."""
    node, depth = nodes[0], 0
    while node[0] != LEAF:
        f, thr, left, right, _ = node
        node, depth = nodes[left if x[f] <= thr else right], depth + 1
    return depth * scale + c_s(node[4], scale)


def trees(p) -> list[list]:
    """The node tables of the payload [T, M_1, nodes…, M_2, …]."""
    out, at = [], 1
    for _ in range(p[0]):
        m = p[at]
        out.append([p[at + 1 + 5 * i:at + 6 + 5 * i] for i in range(m)])
        at += 1 + 5 * m
    return out


def predict(slots: tuple[int, ...], X: Tensor, q: int) -> Tensor:
    """score(x) = tdiv(Σ_trees path, T)."""
    forest, scale = trees(descriptor.payload(slots)), 10 ** q
    out = [wrap32(tdiv(sum(path(t, r, scale) for t in forest), len(forest)))
           for r in matrix_rows(X)]
    return Tensor((len(out), 1), tuple(out))
