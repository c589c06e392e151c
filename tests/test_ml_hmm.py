"""hmm (spec/ml-exact.md §12): the TV-23 fixture, initial parameters, chunking, the wire round
graph against the plain-Python EM transcription, predict, refusals."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maned.interp.evaluate import evaluate
from maned.ml import hmm
from maned.failures import Refused
from maned.ml.chunking import steps_per_round, wire_inputs
from maned.ml.hyper import configurations
from maned.catalogue import BY_NAME, OpContext
from maned.tensor import Tensor
from support.ml_chain import run_round, train_local

FIXTURE = [[0, 100, 0, 100, 200, 200, 200, 200],
           [100, 0, 100, 0, 200, 200, 100, 200],
           [0, 0, 100, 200, 200, 200, 200, 200],
           [100, 100, 0, 0, 0, 200, 200, 200],
           [0, 100, 100, 0, 200, 100, 200, 200],
           [100, 0, 0, 100, 200, 200, 200, 0]]
DESCRIPTOR = [1296974925, 1, 11, 2, 8, 2, 0, 14, 2, 3, 83, 16, 69, 30, 13, 86, 42, 37, 20, 17,
              18, 64]
STATES = [[0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 1, 1, 1, 1, 1],
          [0, 0, 0, 0, 0, 1, 1, 1], [0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 0, 1, 1, 1, 1]]


def tensor(rows) -> Tensor:
    return Tensor((len(rows), len(rows[0])), tuple(v for r in rows for v in r))


def config(**over) -> dict:
    cfg = dict(symbols=3, steps=8, states=2, iters=3, seed=0, rows=None, budget=4096)
    cfg.update(over)
    return cfg


O = tensor(FIXTURE)


# --- TV-23 -----------------------------------------------------------------------------------
def test_fixture_score_and_descriptor():
    descriptor, score = train_local(hmm, O, None, config(), 2)
    assert list(descriptor.data) == DESCRIPTOR
    assert descriptor.shape == (22,) and descriptor.wide
    assert score.shape == (1, 1) and score.data == (355,)


def test_fixture_per_iteration_scores():
    scores = [train_local(hmm, O, None, config(iters=i), 2)[1].data[0] for i in range(1, 6)]
    assert scores == [336, 344, 355, 385, 428]


def test_fixture_predict_states():
    descriptor, _ = train_local(hmm, O, None, config(), 2)
    states = hmm.predict(descriptor, O, 2)
    assert states.shape == (6, 8)
    assert [list(r) for r in states.rows()] == STATES
    assert hmm.predict(list(descriptor.data), O, 2) == states


def test_initial_parameters():
    assert hmm.initial_parameters(2, 3, 0) == ([50, 50], [[75, 25], [25, 75]],
                                               [[40, 30, 30], [30, 30, 40]])
    assert hmm.initial_parameters(2, 3, 1)[2] == [[41, 30, 29], [30, 30, 40]]
    assert hmm.initial_parameters(2, 3, 2)[2] == [[39, 30, 31], [31, 31, 38]]
    assert hmm.initial_parameters(2, 3, 2 ** 64)[2] == [[40, 30, 30], [30, 30, 40]]  # ≡ 0
    pi, A, B = hmm.initial_parameters(3, 4, 0)  # remainders: π_0, diagonal, home symbol
    assert pi == [34, 33, 33] and A == [[76, 12, 12], [12, 76, 12], [12, 12, 76]]
    assert B == [[34, 22, 22, 22], [22, 34, 22, 22], [22, 22, 22, 34]]


def test_start_layout():
    start = hmm.init(O, None, config(), 2)
    assert list(start.constants) == ["O"] and start.constants["O"] == O
    assert list(start.state) == ["pi", "A", "B", "score"]
    assert [t.shape for t in start.state.values()] == [(1, 2), (2, 2), (2, 3), (1, 1)]
    assert start.steps == 3


# --- chunking --------------------------------------------------------------------------------
def test_chunking_never_changes_a_number():
    cfg = config(iters=5)
    results = [train_local(hmm, O, None, cfg, 2, per_round=k) for k in (1, 2, 3, None)]
    assert all(r[0] == results[0][0] and r[1] == results[0][1] for r in results)
    assert results[0][1].data == (428,)


def test_round_graph_sizes_and_caps():
    cfg = config()
    start = hmm.init(O, None, cfg, 2)
    g1 = hmm.round_graph("fit#c0#r0", 0, 1, start, cfg, 2)
    g2 = hmm.round_graph("fit#c0#r0", 0, 2, start, cfg, 2)
    assert g1.params == ("O", "pi", "A", "B", "score")
    assert [n for n, _ in g1.outputs] == ["pi", "A", "B", "score"]
    assert wire_inputs(g1) <= 16 and len(g1.outputs) <= 16
    per, fixed = len(g2.nodes) - len(g1.nodes), 2 * len(g1.nodes) - len(g2.nodes)
    assert steps_per_round(hmm, "fit#c0#r0", start, cfg, 2) == min(3, (4096 - fixed) // per)
    small = config(budget=len(g1.nodes) + per)  # room for exactly two iterations
    assert steps_per_round(hmm, "fit#c0#r0", start, small, 2) == 2
    with pytest.raises(Refused, match="budget"):
        steps_per_round(hmm, "fit#c0#r0", start, config(budget=len(g1.nodes) - 1), 2)


def test_every_op_is_a_wire_op():
    cfg = config(symbols=5, states=3, steps=4)
    o = tensor([[0, 100, 400, 300], [200, 200, 0, 100]])
    start = hmm.init(o, None, cfg, 2)
    g = hmm.round_graph("fit#c0#r0", 0, 2, start, cfg, 2)
    assert {n.kind for n in g.nodes} <= {"param", "const", "op"}
    assert all(BY_NAME[n.op].wire for n in g.nodes if n.kind == "op")


# --- the wire graph against the plain-Python transcription -----------------------------------
@st.composite
def problems(draw):
    n, t = draw(st.integers(2, 4)), draw(st.integers(2, 5))
    v, k = draw(st.integers(2, 4)), draw(st.integers(2, 3))
    q = draw(st.sampled_from([2, 3]))
    obs = draw(st.lists(st.lists(st.integers(0, v - 1), min_size=t, max_size=t),
                        min_size=n, max_size=n))
    seed = draw(st.one_of(st.just(0), st.integers(-2 ** 70, 2 ** 70)))
    return q, obs, config(symbols=v, states=k, steps=t, seed=seed, iters=2)


def _plain(pi, A, B, obs, q, iters):
    score = None
    for _ in range(iters):
        pi, A, B, score = hmm.em_iteration(pi, A, B, obs, q)
    return pi, A, B, score


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_round_graph_matches_plain_em(problem):
    q, obs, cfg = problem
    o = tensor([[s * 10 ** q for s in row] for row in obs])
    start = hmm.init(o, None, cfg, q)
    state, _ = run_round(hmm, "fit#c0#r0", 0, 2, start, dict(start.state), cfg, q)
    pi, A, B = hmm.initial_parameters(cfg["states"], cfg["symbols"], cfg["seed"])
    pi, A, B, score = _plain(pi, A, B, obs, q, 2)
    assert state["pi"] == tensor([pi]) and state["A"] == tensor(A) and state["B"] == tensor(B)
    assert state["score"] == Tensor((1, 1), (score,))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), st.data())
def test_round_graph_matches_plain_em_with_wrapping_parameters(problem, data):
    """Arbitrary int32 parameters (negative, huge) exercise every wrap and x/0 = 0."""
    q, obs, cfg = problem
    k, v = cfg["states"], cfg["symbols"]
    big = st.one_of(st.integers(-2 ** 31, 2 ** 31 - 1), st.integers(-200, 200))

    def mat(r, c):
        return data.draw(st.lists(st.lists(big, min_size=c, max_size=c), min_size=r,
                                  max_size=r))
    pi, A, B = mat(1, k)[0], mat(k, k), mat(k, v)
    o = tensor([[s * 10 ** q for s in row] for row in obs])
    start = hmm.init(o, None, cfg, q)
    state0 = {"pi": tensor([pi]), "A": tensor(A), "B": tensor(B),
              "score": Tensor((1, 1), (0,))}
    state, _ = run_round(hmm, "fit#c0#r0", 0, 1, start, state0, cfg, q)
    pi2, A2, B2, score = hmm.em_iteration(pi, A, B, obs, q)
    assert state["pi"] == tensor([pi2]) and state["A"] == tensor(A2)
    assert state["B"] == tensor(B2) and state["score"] == Tensor((1, 1), (score,))


def test_q3_fixture_wraps_identically():
    """At q = 3 the fixture leaves int32 inside the M-step (§12.6); flow and mirror agree."""
    o = tensor([[v * 10 for v in r] for r in FIXTURE])
    cfg = config()
    descriptor, score = train_local(hmm, o, None, cfg, 3, per_round=2)
    pi, A, B, s = _plain(*hmm.initial_parameters(2, 3, 0), hmm.symbols(o, 3, 3), 3, 3)
    assert list(descriptor.data[10:]) == [*pi, *sum(A, []), *sum(B, [])]
    assert score.data == (s,)


# --- predict ---------------------------------------------------------------------------------
def test_predict_any_column_count():
    descriptor, _ = train_local(hmm, O, None, config(), 2)
    one = hmm.predict(descriptor, tensor([[0], [200]]), 2)
    assert one.shape == (2, 1)
    es = hmm.e_step([83, 16], [[69, 30], [13, 86]], [[42, 37, 20], [17, 18, 64]], [[0], [2]], 2)
    assert es["gamma"] == es["alpha"]  # T = 1: γ_0 = α̂_0
    assert one.data == tuple(max(range(2), key=lambda k: (g[k], -k)) for g in es["gamma"][0])
    assert hmm.predict(descriptor, tensor([r[:3] for r in FIXTURE]), 2).shape == (6, 3)


def test_predict_ties_pick_lowest_state():
    slots = [1296974925, 1, 11, 2, 2, 2, 0, 14, 2, 3, 50, 50, 50, 50, 50, 50, 30, 30, 40, 30,
             30, 40]
    assert hmm.predict(slots, tensor([[0, 100, 200]]), 2).data == (0, 0, 0)


def test_predict_refuses_non_symbols():
    descriptor, _ = train_local(hmm, O, None, config(), 2)
    with pytest.raises(Refused, match="not a symbol"):
        hmm.predict(descriptor, tensor([[0, 300]]), 2)  # stored V = 3
    with pytest.raises(Refused, match="rank-2"):
        hmm.predict(descriptor, Tensor((3,), (0, 100, 200)), 2)


# --- refusals --------------------------------------------------------------------------------
@pytest.mark.parametrize("cell", [150, 300, -100, 1])
def test_init_refuses_a_cell_that_is_not_a_symbol(cell):
    rows = [list(r) for r in FIXTURE]
    rows[2][5] = cell
    with pytest.raises(Refused, match=rf"O\[2\]\[5\] = {cell} is not a symbol"):
        hmm.init(tensor(rows), None, config(), 2)


def test_init_refuses_wrong_steps_rows_and_shape():
    with pytest.raises(Refused, match="steps is 7 but O has 8 columns"):
        hmm.init(O, None, config(steps=7), 2)
    with pytest.raises(Refused, match="rows is 5 but O has 6 rows"):
        hmm.init(O, None, config(rows=5), 2)
    hmm.init(O, None, config(rows=6), 2)
    with pytest.raises(Refused, match="rank-2"):
        hmm.init(Tensor((8,), FIXTURE[0]), None, config(), 2)
    with pytest.raises(Refused, match="rank-2"):
        hmm.init(Tensor((0, 8), ()), None, config(), 2)


def test_rows_guard_in_hyper():
    def cfgs(rows, q):
        return configurations("hmm", [("symbols", 3), ("steps", 8), ("rows", rows)], q, False)
    cfgs(30, 2)
    cfgs(3, 3)
    with pytest.raises(Refused, match="overflow"):
        cfgs(31, 2)
    with pytest.raises(Refused, match="overflow"):
        cfgs(4, 3)


def test_graph_evaluates_with_interpreter_directly():
    """The round graph needs nothing but its params (no globals)."""
    cfg = config(iters=1)
    start = hmm.init(O, None, cfg, 2)
    g = hmm.round_graph("fit#c0#r0", 0, 1, start, cfg, 2)
    out = evaluate(g, {**start.constants, **start.state}, {}, OpContext(2))
    assert out["score"].data == (336,)
