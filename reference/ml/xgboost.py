"""xgboost (spec/ml-exact.md §10): gradient-boosted depth-`depth` trees on a logistic
objective. Init and epilogue are exact and local; a round flow runs k boosting rounds of
§10.2 as wire ops; predict mirrors the flow's wrapping.

How a boosting round is laid out on the wire (candidate column 0 is a pseudo-candidate
"everything goes left": its gain is always exactly 0, so it never wins over a positive
gain, and it is what a node without a split selects; real candidate c sits in column c + 1):

    p = σ(F); g = p − y; h = (p·(S − p)) / S                          [n,1]
    gL = left ⊙ (g·1ᵀ), hL = left ⊙ (h·1ᵀ), gA = g·1ᵀ, hA = h·1ᵀ       [n, C+1]
    per level, with Mt [K, n] the 0/1 node membership (heap order, K = 2^level):
        GL, HL, G, H = Mt·gL, Mt·hL, Mt·gA, Mt·hA                        [K, C+1]
        GR, HR = G − GL, H − HL
        gain = GL²/(HL+λ) + GR²/(HR+λ) − G²/(H+λ)
        mg = (HL ≥ mch ∧ HR ≥ mch) · gain       (column 0: always 0, so rowmax(mg) ≥ 0)
        hit = (mg = rowmax(mg))    rowmax > 0: the valid candidates of maximal gain (> 0);
                                   rowmax = 0: includes column 0, so "none" wins the tie-break
        first = the lowest hit: (hit · rank = rowmax(hit · rank)), rank = C+1 − column
        splits = first · cand  (cand row 0 = (−1, 0), row c+1 = (f, thr))
        goes-left = first · leftᵀ; children interleaved 2j+1, 2j+2 by concat + reshape
    leaves = ((−G·S)/(H+λ)·eta)/S;  F += Mᵀ·leaves
Every comparison, division and sigmoid sees exactly the §14 named value; the rest is ring
arithmetic (matmul, mul by 0/1 masks, add, sub).
"""
from bark_vm.wire.constants import MAX_DIM

from ..graph.flow_graph import FlowGraph
from ..graph.writer import GraphWriter
from ..numeric.activation import sigmoid
from ..numeric.int32 import tdiv, wrap32
from ..tensor import Tensor
from . import descriptor
from ..failures import Refused
from .base import Start
from .round_graphs import hyper_key
from .exact import check_xy

ALGO = "xgboost"
ALGO_ID = descriptor.ALGO_IDS[ALGO]


# --- init (local, exact) ---------------------------------------------------------------

def thresholds(rows: list[list[int]], bins: int) -> list[list[int]]:
    """thr[f][b] = lo_f + tdiv((hi_f − lo_f)·(b + 1), bins + 1) over all training rows."""
    out = []
    for f in range(len(rows[0])):
        col = [r[f] for r in rows]
        lo, hi = min(col), max(col)
        out.append([lo + tdiv((hi - lo) * (b + 1), bins + 1) for b in range(bins)])
    return out


def goes_left(rows: list[list[int]], cands: list[tuple[int, int]]) -> tuple[int, ...]:
    """The [n, C+1] goes-left mask, row-major: column 0 all ones, column c+1 = [x_f ≤ thr]
    of candidate c = (f, thr)."""
    return tuple(v for r in rows for v in [1] + [1 if r[f] <= t else 0 for f, t in cands])


def init(X: Tensor, y: Tensor, cfg: dict, q: int, left_mask=goes_left) -> Start:
    """§10.1: thresholds, candidates feature-major, the goes-left masks, F = 0.

    constants: left [n, C+1] (column 0 all ones, column c+1 = [x_f ≤ thr] of candidate c),
    y [n,1], cand [C+1, 2] (row 0 = (−1, 0), row c+1 = (f, thr)), rank [1, C+1] = C+1 − column.
    `left_mask` computes the mask (the local engine passes its numpy one, equal to it).
    """
    if y is None:
        raise Refused("xgboost needs labels y")
    rows, labels = check_xy(X, y)
    n, d = len(rows), len(rows[0])
    if cfg["features"] != d:
        raise Refused(f"features is {cfg['features']} but X has {d} columns")
    if cfg.get("rows") is not None and cfg["rows"] != n:
        raise Refused(f"rows is {cfg['rows']} but X has {n} rows")
    if n > MAX_DIM:
        raise Refused(f"X has {n} rows; a round flow routes its rows through a reshape, "
                        f"whose dimensions stop at {MAX_DIM}")
    bins = cfg["bins"]
    thr = thresholds(rows, bins)
    cands = [(f, thr[f][b]) for f in range(d) for b in range(bins)]
    c1 = len(cands) + 1
    return Start(
        constants={
            "left": Tensor((n, c1), left_mask(rows, cands)),
            "y": Tensor((n, 1), tuple(wrap32(v) for v in labels)),
            "cand": Tensor((c1, 2), (-1, 0) + tuple(v for c in cands for v in c)),
            "rank": Tensor((1, c1), tuple(range(c1, 0, -1))),
        },
        state={"F": Tensor((n, 1), (0,) * n)},
        steps=cfg["rounds"],
        extra={"thresholds": thr, "candidates": cands})


# --- the round flow (wire ops only) ----------------------------------------------------

def round_key(first: int, count: int, cfg: dict) -> tuple:
    """Each round names its trees' outputs by boosting round, so no two rounds of one
    configuration share a graph."""
    return first, count, hyper_key(cfg)


def round_graph(name: str, first: int, count: int, start: Start, cfg: dict,
                q: int) -> FlowGraph:
    """Boosting rounds [first, first+count): outputs F, then splits{r} and leaves{r} per round."""
    w = GraphWriter(name, wire_only=True)
    left, y, cand, rank, f = (w.param(p) for p in ("left", "y", "cand", "rank", "F"))
    n = start.state["F"].shape[0]
    k = {"S": w.const(10 ** q), "lam": w.const(cfg["l2"]), "mch": w.const(cfg["min_child_hess"]),
         "eta": w.const(cfg["eta"]), "negS": w.const(-(10 ** q))}
    ones_row = w.op("eq", rank, rank)                          # [1, C+1]
    left_t = w.op("transpose", left)                           # [C+1, n]
    yt = w.op("transpose", y)
    mt0 = w.op("eq", yt, yt)                                   # [1, n] all ones: the root
    outputs = []
    for r in range(first, first + count):
        f, splits, leaves = _boost(w, k, cfg, n, f, left, left_t, y, cand, rank, ones_row, mt0)
        outputs += [(f"splits{r}", splits), (f"leaves{r}", leaves)]
    return w.finish([("F", f)] + outputs)


def _boost(w, k, cfg, n, f, left, left_t, y, cand, rank, ones_row, mt0):
    p = w.op("sigmoid", f)
    g = w.op("sub", p, y)
    h = w.op("div", w.op("mul", p, w.op("sub", k["S"], p)), k["S"])
    g_all = w.op("matmul", g, ones_row)
    h_all = w.op("matmul", h, ones_row)
    g_left = w.op("mul", left, g_all)
    h_left = w.op("mul", left, h_all)
    mt, level_splits = mt0, []
    for level in range(cfg["depth"]):
        first, split = _choose(w, k, mt, g_left, h_left, g_all, h_all, cand, rank, ones_row)
        level_splits.append(split)
        mt = _route(w, mt, first, left_t, 2 ** level, n)
    splits = level_splits[0]
    for s in level_splits[1:]:
        splits = w.op("concat", splits, s, axis=0)
    gs, hs = w.op("matmul", mt, g), w.op("matmul", mt, h)      # [2^depth, 1] leaf sums
    quotient = w.op("div", w.op("mul", gs, k["negS"]), w.op("add", hs, k["lam"]))
    leaves = w.op("div", w.op("mul", quotient, k["eta"]), k["S"])
    f = w.op("add", f, w.op("matmul", w.op("transpose", mt), leaves))
    return f, splits, leaves


def _term(w, k, gsum, hsum):
    """tdiv(w32(G·G), w32(H + λ))."""
    return w.op("div", w.op("mul", gsum, gsum), w.op("add", hsum, k["lam"]))


def _choose(w, k, mt, g_left, h_left, g_all, h_all, cand, rank, ones_row):
    """One level's split choice: (first [K, C+1] one-hot, splits [K, 2])."""
    gl, hl = w.op("matmul", mt, g_left), w.op("matmul", mt, h_left)
    g_tot, h_tot = w.op("matmul", mt, g_all), w.op("matmul", mt, h_all)
    gr, hr = w.op("sub", g_tot, gl), w.op("sub", h_tot, hl)
    split_terms = w.op("add", _term(w, k, gl, hl), _term(w, k, gr, hr))
    gain = w.op("sub", split_terms, _term(w, k, g_tot, h_tot))
    valid = w.op("and", w.op("ge", hl, k["mch"]), w.op("ge", hr, k["mch"]))
    masked = w.op("mul", valid, gain)                          # valid gain, else 0
    best = w.op("tensor_max", masked, axis=1)                  # [K,1]: max(0, valid gains)
    hit = w.op("eq", masked, w.op("matmul", best, ones_row))
    ranks = w.op("matmul", w.op("eq", best, best), rank)       # [K, C+1]: C+1 − column
    score = w.op("mul", hit, ranks)
    top = w.op("tensor_max", score, axis=1)
    first = w.op("eq", score, w.op("matmul", top, ones_row))   # exactly one 1 per row
    return first, w.op("matmul", first, cand)


def _route(w, mt, first, left_t, nodes, n):
    """Membership of the next level: node j's rows to 2j+1 (goes left) or 2j+2, interleaved."""
    goes_left = w.op("mul", mt, w.op("matmul", first, left_t))  # [K, n]
    goes_right = w.op("sub", mt, goes_left)
    both = w.op("concat", goes_left, goes_right, axis=1)          # [K, 2n]
    return w.op("reshape", both, rows=2 * nodes, cols=n)          # rows L0, R0, L1, R1, …


# --- epilogue (local, exact) -----------------------------------------------------------

def squared_errors(F: Tensor, y: Tensor, q: int) -> int:
    """Σ w32(σ(F_i) − y_i)², exact (a Python int)."""
    e = [wrap32(sigmoid(fi, q) - yi) for fi, yi in zip(F.data, y.data)]
    return sum(v * v for v in e)


def epilogue(start: Start, state: dict, extras: list, cfg: dict, q: int,
             errors=squared_errors):
    """§10.3: loss = w32(tdiv(tdiv(Σ w32(σ(F) − y)², n), S)); descriptor of every round.
    `errors` computes the sum (the local engine passes its numpy one, equal to it)."""
    s = 10 ** q
    y = start.constants["y"]
    loss = wrap32(tdiv(tdiv(errors(state["F"], y, q), y.size), s))
    rounds, depth = cfg["rounds"], cfg["depth"]
    if len(extras) != 2 * rounds:
        raise ValueError(f"xgboost epilogue expects {2 * rounds} round outputs, got {len(extras)}")
    payload = [rounds, depth]
    for r in range(rounds):
        payload += list(extras[2 * r].data) + list(extras[2 * r + 1].data)
    d = len(start.extra["thresholds"])
    model = descriptor.pack(ALGO_ID, q, d, 1, 0, payload)
    return model, Tensor((1,), (loss,))


# --- predict (mirrors the flow) ----------------------------------------------------------

def predict(slots, X: Tensor, q: int) -> Tensor:
    """§10.4: descend each tree on x[f] ≤ thr (f = −1 goes left), F = w32(F + leaf), σ(F)."""
    h, p = descriptor.header(slots), descriptor.payload(slots)
    d = h.features
    if X.rank != 2 or X.size == 0 or X.shape[1] != d:
        raise Refused(f"X must be rank 2 with {d} columns, its shape is {list(X.shape)}")
    (rounds, depth), nodes = p[:2], p[2:]  # payload: rounds, depth, then each round's tree
    inner = 2 ** depth - 1
    per = 3 * 2 ** depth - 2
    trees = []
    for r in range(rounds):
        base = r * per
        splits = [(nodes[base + 2 * j], nodes[base + 2 * j + 1]) for j in range(inner)]
        trees.append((splits, nodes[base + 2 * inner: base + per]))
    out = []
    for row in X.rows():
        f = 0
        for splits, leaves in trees:
            j = 0
            for _ in range(depth):
                feat, thr = splits[j]
                j = 2 * j + 1 if feat == -1 or row[feat] <= thr else 2 * j + 2
            f = wrap32(f + leaves[j - inner])
        out.append(wrap32(sigmoid(f, q)))
    return Tensor((len(out), 1), tuple(out))
