"""xgboost (spec/ml-exact.md §10): the documented fixture, a straight transcription of §10.2
against the wire round flow, chunking invariance, wire-only round graphs, refusals."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maned.interp.evaluate import evaluate
from maned.ml import descriptor
from maned.ml import xgboost as xg
from maned.failures import OpError, Refused
from maned.ml.chunking import MAX_TENSORS, steps_per_round, wire_inputs
from maned.ml.hyper import configurations
from maned.numeric.activation import sigmoid
from maned.numeric.int32 import tdiv, wrap32 as w32
from maned.catalogue import BY_NAME, OpContext
from maned.ml.predict import ml_predict
from maned.tensor import Tensor
from support.ml_chain import train_local

FIXTURE_X = [[100, 100], [100, 200], [200, 100], [200, 200],
             [700, 700], [700, 800], [800, 700], [800, 800]]
FIXTURE_Y = [0, 0, 0, 0, 100, 100, 100, 100]
DOC = [("features", 2), ("rounds", 4), ("depth", 2), ("bins", 4), ("eta", 30), ("l2", 100),
       ("min_child_hess", 75), ("rows", 8)]


def matrix(rows):
    return Tensor((len(rows), len(rows[0])), tuple(v for r in rows for v in r))


def column(values):
    return Tensor((len(values), 1), tuple(values))


def cfg_of(hypers, q=2):
    return configurations("xgboost", hypers, q, False)[0]


def fixture():
    return matrix(FIXTURE_X), column(FIXTURE_Y), cfg_of(DOC)


# --- a straight transcription of §10.1 and §10.2 ---------------------------------------

def spec_init(X, bins):
    d = len(X[0])
    thr = []
    for f in range(d):
        lo, hi = min(r[f] for r in X), max(r[f] for r in X)
        thr.append([lo + tdiv((hi - lo) * (b + 1), bins + 1) for b in range(bins)])
    cands = [(f, thr[f][b]) for f in range(d) for b in range(bins)]
    left = [[1 if r[f] <= t else 0 for f, t in cands] for r in X]
    return thr, cands, left


def spec_round(cands, left, y, F, cfg, q):
    """One boosting round of §10.2, written as the spec writes it: (F, splits, leaves)."""
    S, lam, mch, eta, depth = 10 ** q, cfg["l2"], cfg["min_child_hess"], cfg["eta"], cfg["depth"]
    n = len(F)
    p = [sigmoid(f, q) for f in F]
    g = [w32(p[i] - y[i]) for i in range(n)]
    h = [tdiv(w32(p[i] * w32(S - p[i])), S) for i in range(n)]
    node = [0] * n
    splits = []
    for level in range(depth):
        for j in range(2 ** level - 1, 2 ** (level + 1) - 1):
            rows = [i for i in range(n) if node[i] == j]
            G, H = w32(sum(g[i] for i in rows)), w32(sum(h[i] for i in rows))
            base = tdiv(w32(G * G), w32(H + lam))
            valid, gain = [], []
            for c in range(len(cands)):
                GL = w32(sum(g[i] for i in rows if left[i][c]))
                HL = w32(sum(h[i] for i in rows if left[i][c]))
                GR, HR = w32(G - GL), w32(H - HL)
                valid.append(HL >= mch and HR >= mch)
                gain.append(w32(tdiv(w32(GL * GL), w32(HL + lam))
                                + tdiv(w32(GR * GR), w32(HR + lam)) - base))
            chosen = None
            if any(valid):
                top = max(gn for v, gn in zip(valid, gain) if v)
                if top > 0:
                    chosen = min(c for c in range(len(cands)) if valid[c] and gain[c] == top)
            splits.append(cands[chosen] if chosen is not None else (-1, 0))
            for i in rows:
                node[i] = 2 * j + 1 if chosen is None or left[i][chosen] else 2 * j + 2
    first_leaf = 2 ** depth - 1
    leaves = []
    for j in range(first_leaf, 2 * first_leaf + 1):
        rows = [i for i in range(n) if node[i] == j]
        G, H = w32(sum(g[i] for i in rows)), w32(sum(h[i] for i in rows))
        leaves.append(tdiv(w32(tdiv(w32(-G * S), w32(H + lam)) * eta), S))
    F = [w32(F[i] + leaves[node[i] - first_leaf]) for i in range(n)]
    return F, splits, leaves


def spec_fit(X, y, cfg, q):
    """§10.1–10.3 end to end: (descriptor slots, loss)."""
    thr, cands, left = spec_init(X, cfg["bins"])
    F = [0] * len(X)
    payload = [cfg["rounds"], cfg["depth"]]
    for _ in range(cfg["rounds"]):
        F, splits, leaves = spec_round(cands, left, y, F, cfg, q)
        payload += [v for s in splits for v in s] + leaves
    e = [w32(sigmoid(f, q) - yi) for f, yi in zip(F, y)]
    loss = w32(tdiv(tdiv(sum(v * v for v in e), len(e)), 10 ** q))
    header = [1296974925, 1, 10, q, len(X[0]), 1, 0, len(payload)]
    return header + payload, loss


# --- the documented fixture (§10.4, §15) -------------------------------------------------

def test_fixture_thresholds_and_constants():
    X, y, cfg = fixture()
    start = xg.init(X, y, cfg, 2)
    assert start.extra["thresholds"] == [[240, 380, 520, 660]] * 2
    assert start.steps == 4
    assert start.state["F"] == Tensor((8, 1), (0,) * 8)
    assert start.constants["left"].shape == (8, 9)
    assert start.constants["cand"].data[:4] == (-1, 0, 0, 240)


def test_fixture_descriptor_loss_predict():
    X, y, cfg = fixture()
    model, loss = train_local(xg, X, y, cfg, 2)
    slots = list(model.data)
    assert model.wide and len(slots) == 50 and descriptor.validate(slots) is None
    assert slots[:20] == [1296974925, 1, 10, 2, 2, 1, 0, 42, 4, 2,
                          0, 240, -1, 0, -1, 0, -30, 0, 30, 0]
    per = 3 * 4 - 2
    rounds = [slots[10 + r * per: 10 + (r + 1) * per] for r in range(4)]
    assert [r[:6] for r in rounds] == [[0, 240, -1, 0, -1, 0]] * 4
    assert [r[6:] for r in rounds] == [[-30, 0, 30, 0], [-26, 0, 26, 0],
                                       [-22, 0, 22, 0], [-20, 0, 20, 0]]
    assert loss == Tensor((1,), (7,))
    assert xg.predict(model.data, X, 2) == column([27] * 4 + [73] * 4)
    probes = matrix([[150, 150], [750, 750]])
    assert xg.predict(model.data, probes, 2) == column([27, 73])
    assert ml_predict(OpContext(2), model, probes) == column([27, 73])
    assert spec_fit(FIXTURE_X, FIXTURE_Y, cfg, 2) == (slots, 7)


def test_fixture_round_graph_shape():
    X, y, cfg = fixture()
    start = xg.init(X, y, cfg, 2)
    g = xg.round_graph("fit#c0#r0", 0, 1, start, cfg, 2)
    assert g.params == ("left", "y", "cand", "rank", "F")
    assert [n for n, _ in g.outputs] == ["F", "splits0", "leaves0"]
    out = evaluate(g, {**start.constants, **start.state}, {}, OpContext(2))
    assert out["splits0"] == Tensor((3, 2), (0, 240, -1, 0, -1, 0))
    assert out["leaves0"] == column([-30, 0, 30, 0])
    assert out["F"] == column([-30] * 4 + [30] * 4)


# --- wire-only round graphs, the 16-tensor caps ------------------------------------------

@pytest.mark.parametrize("depth,bins,count", [(1, 2, 1), (2, 4, 3), (3, 8, 2), (6, 16, 1)])
def test_round_graph_is_wire_only_and_fits(depth, bins, count):
    X, y, _ = fixture()
    cfg = cfg_of([("features", 2), ("depth", depth), ("bins", bins), ("rounds", 3)])
    start = xg.init(X, y, cfg, 2)
    g = xg.round_graph("r", 0, count, start, cfg, 2)
    assert all(BY_NAME[n.op].kind == "both" for n in g.nodes if n.kind == "op")
    assert wire_inputs(g) <= MAX_TENSORS and len(g.outputs) == 1 + 2 * count
    out = evaluate(g, {**start.constants, **start.state}, {}, OpContext(2))
    assert out[f"splits{count - 1}"].shape == (2 ** depth - 1, 2)
    assert out[f"leaves{count - 1}"].shape == (2 ** depth, 1)


def test_large_quantres_still_fits_one_round():
    X, y, _ = fixture()
    cfg = cfg_of([("features", 2), ("depth", 6), ("bins", 16), ("rounds", 20)], q=9)
    start = xg.init(X, y, cfg, 9)
    k = steps_per_round(xg, "r", start, cfg, 9)
    g = xg.round_graph("r", 0, k, start, cfg, 9)
    assert 1 <= k and wire_inputs(g) <= MAX_TENSORS and len(g.outputs) <= MAX_TENSORS


# --- the transcription agrees with the wire round graph ----------------------------------

@st.composite
def datasets(draw, wild=True):
    """Small X, y, a carried F, q and hyperparameters. wild: values that wrap int32 anywhere;
    tame: 0/S labels, small F, l2 and min_child_hess, so splits happen at every level."""
    n = draw(st.integers(1, 10) if wild else st.integers(4, 12))
    d = draw(st.integers(1, 3))
    q = draw(st.integers(0, 3) if wild else st.integers(2, 3))
    s = 10 ** q
    cell = st.integers(0, 4) | st.integers(-300, 300)
    label, logit = st.sampled_from([0, s]), st.integers(-3 * s, 3 * s)
    if wild:
        big = st.integers(-2 ** 31, 2 ** 31 - 1)
        cell, label, logit = cell | big, label | big, logit | big
    X = [[draw(cell) for _ in range(d)] for _ in range(n)]
    y = [draw(label) for _ in range(n)]
    F = [draw(logit) for _ in range(n)]
    hypers = [("features", d), ("depth", draw(st.integers(1, 3))),
              ("bins", draw(st.integers(2, 4))), ("rounds", draw(st.integers(1, 4))),
              ("eta", draw(st.integers(1, 2 * s))),
              ("l2", draw(st.integers(0, 2 * s) if wild else st.integers(0, s // 10))),
              ("min_child_hess", draw(st.sampled_from([0, 1]) | st.integers(0, s if wild
                                                                            else s // 20)))]
    return X, y, F, q, hypers


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(datasets(wild=True) | datasets(wild=False), st.integers(1, 2))
def test_wire_round_matches_transcription(data, count):
    X, y, F, q, hypers = data
    cfg = cfg_of(hypers, q)
    start = xg.init(matrix(X), column(y), cfg, q)
    thr, cands, left = spec_init(X, cfg["bins"])
    assert start.extra["thresholds"] == thr
    g = xg.round_graph("r", 5, count, start, cfg, q)
    out = evaluate(g, {**start.constants, "F": column(F)}, {}, OpContext(q))
    for r in range(5, 5 + count):
        F, splits, leaves = spec_round(cands, left, y, F, cfg, q)
        assert out[f"splits{r}"].data == tuple(v for s in splits for v in s)
        assert out[f"leaves{r}"].data == tuple(leaves)
    assert out["F"].data == tuple(F)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(datasets(wild=True) | datasets(wild=False))
def test_chunking_never_changes_a_number(data):
    X, y, _, q, hypers = data
    cfg = cfg_of(hypers, q)
    Xt, yt = matrix(X), column(y)
    results = [train_local(xg, Xt, yt, cfg, q, per_round=k) for k in (1, None, 3)]
    assert results[0] == results[1] == results[2]
    model, loss = results[0]
    assert (list(model.data), loss.data[0]) == spec_fit(X, y, cfg, q)
    assert descriptor.validate(model.data) is None
    assert xg.predict(model.data, Xt, q).data == tuple(
        sigmoid(f, q) for f in _flow_F(model.data, X))


def _flow_F(slots, X):
    """F of the training rows, replayed from the descriptor the way §10.4 descends."""
    rounds, depth = slots[8], slots[9]
    inner, per = 2 ** depth - 1, 3 * 2 ** depth - 2
    out = []
    for row in X:
        f = 0
        for r in range(rounds):
            base, j = 10 + r * per, 0
            for _ in range(depth):
                feat, thr = slots[base + 2 * j], slots[base + 2 * j + 1]
                j = 2 * j + 1 if feat == -1 or row[feat] <= thr else 2 * j + 2
            f = w32(f + slots[base + 2 * inner + j - inner])
        out.append(f)
    return out


def test_fixture_chunking():
    X, y, cfg = fixture()
    results = [train_local(xg, X, y, cfg, 2, per_round=k) for k in (1, None, 3)]
    assert results[0] == results[1] == results[2]


def test_predict_reproduces_epilogue_probabilities():
    X = [[5, 1], [3, 9], [7, 7], [1, 2], [9, 4], [2, 8]]
    y = [0, 100, 100, 0, 100, 0]
    cfg = cfg_of([("features", 2), ("rounds", 3), ("depth", 2), ("bins", 3),
                  ("min_child_hess", 0), ("l2", 10)])
    model, loss = train_local(xg, matrix(X), column(y), cfg, 2)
    p = xg.predict(model.data, matrix(X), 2).data
    assert loss.data[0] == tdiv(tdiv(sum((a - b) ** 2 for a, b in zip(p, y)), 6), 100)


# --- refusals ---------------------------------------------------------------------------

@pytest.mark.parametrize("X,y,hypers,why", [
    (Tensor((4,), (1, 2, 3, 4)), column([0, 0, 0, 0]), DOC, "rank-2"),
    (Tensor((0, 2), ()), Tensor((0, 1), ()), DOC, "rank-2"),
    (matrix(FIXTURE_X), column(FIXTURE_Y[:7]), DOC, "y must be"),
    (matrix(FIXTURE_X), Tensor((1, 8), tuple(FIXTURE_Y)), DOC, "y must be"),
    (matrix(FIXTURE_X), column(FIXTURE_Y), [("features", 3)], "features is 3"),
    (matrix(FIXTURE_X), column(FIXTURE_Y), [("features", 2), ("rows", 9)], "rows is 9"),
])
def test_init_refusals(X, y, hypers, why):
    with pytest.raises(Refused, match=why):
        xg.init(X, y, cfg_of(hypers), 2)


def test_y_as_rank1_is_accepted():
    X, _, cfg = fixture()
    model, loss = train_local(xg, X, Tensor((8,), tuple(FIXTURE_Y)), cfg, 2)
    assert loss.data == (7,) and len(model.data) == 50


def test_predict_refuses_wrong_column_count():
    X, y, cfg = fixture()
    model, _ = train_local(xg, X, y, cfg, 2)
    with pytest.raises(Refused):
        xg.predict(model.data, Tensor((1, 3), (1, 2, 3)), 2)
    with pytest.raises(OpError, match="3 columns") as refused:
        ml_predict(OpContext(2), model, Tensor((1, 3), (1, 2, 3)))
    assert refused.value.terse  # printed as `ml_predict: <reason>` (R41)
