"""Decision tree classifier (spec/ml-exact.md §8): greedy splits on floor midpoints, a Q20
Gini-style purity, a preorder node table; raw feature units, never standardized."""
from collections import Counter

from ..numeric.int32 import tdiv, wrap32
from ..tensor import Tensor
from . import descriptor
from ..failures import Refused
from .exact import check_xy, matrix_rows

ALGO = "decision_tree"
ALGO_ID = descriptor.ALGO_IDS[ALGO]
Q20 = 2 ** 20
LEAF = -1


def purity(labels: list[int]) -> int:
    """tdiv(2^20 · Σ_label count(label)², |rows|)."""
    return tdiv(Q20 * sum(c * c for c in Counter(labels).values()), len(labels))


def majority(labels: list[int]) -> int:
    """The most frequent label, ties → the smallest label."""
    counts = Counter(labels)
    best = max(counts.values())
    return min(label for label, c in counts.items() if c == best)


def best_split(rows, labels):
    """(s, f, thr, left, right) of the purest candidate: for each feature f, each pair of
    consecutive distinct values, thr = floor((v_i + v_{i+1}) / 2); s = purity(L) + purity(R);
    the first strict maximum wins. None when no feature has two distinct values."""
    best = None
    for f in range(len(rows[0])):
        values = sorted({r[f] for r in rows})
        for lo, hi in zip(values, values[1:]):
            thr = (lo + hi) // 2  # fdiv: lo <= thr < hi
            left = [i for i, r in enumerate(rows) if r[f] <= thr]
            right = [i for i, r in enumerate(rows) if r[f] > thr]
            s = purity([labels[i] for i in left]) + purity([labels[i] for i in right])
            if best is None or s > best[0]:
                best = (s, f, thr, left, right)
    return best


def build(rows, labels, depth: int, cfg: dict, nodes: list) -> int:
    """Append the node for these rows (preorder, left subtree first) and return its id. A leaf
    at max_depth, below min_samples, when pure, or when no split is strictly purer."""
    node_id = len(nodes)
    nodes.append([LEAF, 0, LEAF, LEAF, majority(labels)])
    if depth >= cfg["max_depth"] or len(rows) < cfg["min_samples"] or len(set(labels)) == 1:
        return node_id
    best = best_split(rows, labels)
    if best is None or best[0] <= purity(labels):
        return node_id
    _, f, thr, left, right = best
    nodes[node_id][0:2] = [f, thr]
    nodes[node_id][2] = build([rows[i] for i in left], [labels[i] for i in left],
                              depth + 1, cfg, nodes)
    nodes[node_id][3] = build([rows[i] for i in right], [labels[i] for i in right],
                              depth + 1, cfg, nodes)
    return node_id


def fit(X: Tensor, y: Tensor | None, cfg: dict, q: int) -> Tensor:
    """Descriptor: [M] + node_0 + … + node_{M−1}, node = (feature, threshold, left, right,
    majority label); header outputs = #distinct labels, flags 0."""
    rows, labels = check_xy(X, y)
    if labels is None:
        raise Refused("decision_tree needs labels y")
    nodes: list[list[int]] = []
    build(rows, labels, 0, cfg, nodes)
    return descriptor.pack(ALGO_ID, q, len(rows[0]), len(set(labels)), 0,
                           [len(nodes), *(v for node in nodes for v in node)])


def classify(nodes, x) -> int:
    """From node 0, while feature ≠ −1: left if x[feature] ≤ threshold else right."""
    node = nodes[0]
    while node[0] != LEAF:
        f, thr, left, right, _ = node
        node = nodes[left if x[f] <= thr else right]
    return node[4]


def predict(slots: tuple[int, ...], X: Tensor, q: int) -> Tensor:
    """The label of the leaf each row reaches."""
    p = descriptor.payload(slots)
    nodes = [p[1 + 5 * i:6 + 5 * i] for i in range(p[0])]
    out = [wrap32(classify(nodes, r)) for r in matrix_rows(X)]
    return Tensor((len(out), 1), tuple(out))
