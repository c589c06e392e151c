"""A valid descriptor's fitted numbers in real units, one view per payload layout (the
layout its catalogue row names; docs/models.md's layout table): the data `maned-model show
--json` prints and the lines of its text form."""
from dataclasses import dataclass, field

from ..io.quant import decode
from ..ml import descriptor
from ..ml.hmm import PS
from ..ml_catalogue import TRAINED, algorithm, by_layout

MAX_SCALE = 18  # digits an int64 slot holds; a variance's scale 2q goes to twice that
PS_DIGITS = len(str(PS)) - 1  # π, A and B are at scale PS = 10^PS_DIGITS


@dataclass
class Fitted:
    """One view, built once for both forms: the --json data and the text lines."""

    data: dict = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)

    def put(self, key: str, value) -> None:
        """One named value: in the data as is, in the text as `key: value` (a list comma
        separated)."""
        self.data[key] = value
        shown = ", ".join(map(str, value)) if isinstance(value, list) else value
        self.lines.append(f"{key}: {shown}")


def real(v: int, q: int) -> str:
    """A scale-q integer in real units, exactly (q decimals); as stored when q is outside
    what an int64 descriptor can mean (a forged scale must not build a huge string)."""
    return decode(v, q) if 0 <= q <= 2 * MAX_SCALE else str(v)


def reals(values, q: int) -> list[str]:
    return [real(v, q) for v in values]


def fitted(h: descriptor.Header, p) -> Fitted:
    """The view of a valid descriptor's payload `p` (header `h`)."""
    algo = descriptor.ALGO_NAMES[h.algo_id]
    f = Fitted()
    _VIEW[algo](f, h.features, h.q, p)
    if h.std_block:
        d = h.features
        f.put("feature_means", reals(p[-2 * d:-d], h.q))
        f.put("feature_sds", reals(p[-d:], h.q))
    if h.std_block or (algorithm(algo).layout == "gd" and h.standardized):
        f.lines.append("(the fitted numbers act on standardized features: (x - mean) / sd)")
    return f


VIEWS = {}  # layout name (a catalogue row's `layout`) -> its view
_view = by_layout(VIEWS)


@_view("gd")
def _gd(f: Fitted, d: int, q: int, p) -> None:
    f.put("weights", reals(p[:d], q))
    f.put("bias", real(p[d], q))
    f.put("feature_means", reals(p[d + 1:2 * d + 1], q))
    f.put("feature_sds", reals(p[2 * d + 1:3 * d + 1], q))


@_view("kmeans")
def _kmeans(f: Fitted, d: int, q: int, p) -> None:
    k = p[0]
    f.put("clusters", k)
    cs = [reals(p[1 + i * d:1 + (i + 1) * d], q) for i in range(k)]
    f.data["centroids"] = cs
    f.lines += [f"centroid {i}: {', '.join(c)}" for i, c in enumerate(cs)]


@_view("knn")
def _knn(f: Fitted, d: int, q: int, p) -> None:
    k, n = p[0], p[1]
    f.put("neighbours", k)
    f.put("stored_rows", n)
    f.data["rows"] = [reals(p[2 + i * d:2 + (i + 1) * d], q) for i in range(n)]
    f.put("labels", list(p[2 + n * d:2 + n * d + n]))
    f.lines.append("(the stored rows, in real units, are in --json)")


@_view("naive_bayes")
def _naive_bayes(f: Fitted, d: int, q: int, p) -> None:
    """Means at scale q; variances at scale 2q (squares of scale-q values, +1 smoothed)."""
    c = p[0]
    f.put("classes", c)
    at = 1 + 2 * c
    classes = []
    for i in range(c):
        means = reals(p[at + i * d:at + (i + 1) * d], q)
        var_at = at + c * d + i * d
        variances = reals(p[var_at:var_at + d], 2 * q)
        classes.append({"label": p[1 + i], "count": p[1 + c + i], "means": means,
                        "variances": variances})
        f.lines.append(f"class {p[1 + i]}: {p[1 + c + i]} rows, means {', '.join(means)}, "
                       f"variances {', '.join(variances)}")
    f.data["class_table"] = classes


def _node(feature: int, thr: int, q: int) -> str:
    return f"x[{feature}] <= {real(thr, q)}"


@_view("decision_tree")
def _decision_tree(f: Fitted, d: int, q: int, p) -> None:
    m = p[0]
    nodes = [p[1 + 5 * i:6 + 5 * i] for i in range(m)]
    f.put("nodes", m)
    f.put("leaves", sum(n[0] == -1 for n in nodes))
    f.data["tree"] = []
    for i, (feat, thr, left, right, label) in enumerate(nodes):
        if feat == -1:
            f.data["tree"].append({"node": i, "label": label})
            f.lines.append(f"node {i}: label {label}")
        else:
            f.data["tree"].append({"node": i, "feature": feat, "threshold": real(thr, q),
                                   "left": left, "right": right})
            f.lines.append(f"node {i}: {_node(feat, thr, q)} ? node {left} : node {right}")


@_view("isolation_forest")
def _isolation_forest(f: Fitted, d: int, q: int, p) -> None:
    trees, at = [], 1
    for _ in range(p[0]):
        m = p[at]
        nodes = [p[at + 1 + 5 * i:at + 6 + 5 * i] for i in range(m)]
        trees.append([{"feature": n[0], "threshold": real(n[1], q), "left": n[2],
                       "right": n[3], "size": n[4]} for n in nodes])
        at += 1 + 5 * m
    f.put("trees", p[0])
    f.put("nodes_per_tree", [len(t) for t in trees])
    f.data["forest"] = trees
    f.lines.append("(the random splits, in real units, are in --json)")


@_view("xgboost")
def _xgboost(f: Fitted, d: int, q: int, p) -> None:
    """Thresholds at scale q; leaves are logit steps at scale q (F adds them, σ(F))."""
    rounds, depth = p[0], p[1]
    f.put("rounds", rounds)
    f.put("depth", depth)
    m, at, table = 2 ** depth - 1, 2, []
    for r in range(rounds):
        splits = [(p[at + 2 * j], p[at + 2 * j + 1]) for j in range(m)]
        leaves = reals(p[at + 2 * m:at + 3 * m + 1], q)
        table.append({"splits": [{"feature": s, "threshold": real(t, q)} for s, t in splits],
                      "leaves": leaves})
        shown = ", ".join("left" if s == -1 else _node(s, t, q) for s, t in splits)
        f.lines.append(f"round {r + 1}: splits {shown}; leaves {', '.join(leaves)}")
        at += 3 * m + 1
    f.data["boosting"] = table


@_view("hmm")
def _hmm(f: Fitted, d: int, q: int, p) -> None:
    """π, A and B are probabilities at scale PS, whatever the script's q."""
    k, v = p[0], p[1]
    f.put("states", k)
    f.put("symbols", v)
    f.put("start", reals(p[2:2 + k], PS_DIGITS))
    a = [reals(p[2 + k + i * k:2 + k + (i + 1) * k], PS_DIGITS) for i in range(k)]
    b_at = 2 + k + k * k
    b = [reals(p[b_at + i * v:b_at + (i + 1) * v], PS_DIGITS) for i in range(k)]
    f.data.update(transitions=a, emissions=b)
    f.lines += [f"transitions from {i}: {', '.join(r)}" for i, r in enumerate(a)]
    f.lines += [f"emissions of {i}: {', '.join(r)}" for i, r in enumerate(b)]


# Each algorithm's view; a row naming a layout without one fails here, at import.
_VIEW = {a: VIEWS[algorithm(a).layout] for a in TRAINED}
