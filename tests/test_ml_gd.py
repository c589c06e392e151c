"""Tier A training: the gradient-descent family's goldens (spec/ml-exact.md §4), its
wire-only round flow and properties on generated data; chunking invariance for every
Tier A algorithm (R13)."""
import pytest
from hypothesis import given, settings, strategies as st

from maned.ml import descriptor
from maned.failures import Refused
from maned.ml.gd import MODULES
from maned.ml.hyper import configurations
from maned.catalogue import BY_NAME
from maned.tensor import Tensor
from support.ml_chain import train_local

LR_X = Tensor((8, 2), (100, 200, 200, 100, 300, 500, 400, 200, 500, 800, 600, 300, 0, 100,
                       200, 700))
LR_Y = Tensor((8, 1), (300, 600, 400, 900, 500, 1200, 200, 0))
CLS_X = Tensor((8, 2), (100, 100, 100, 200, 200, 100, 200, 200, 700, 700, 700, 800, 800, 700,
                        800, 800))


def cfg(algo, **keys):
    return configurations(algo, list(keys.items()), 2, False)[0]


def test_linear_weights_after_one_two_three_iterations():
    """ml-exact §4.6: lr 5 gives (111, −39, 205), (183, −81, 328), (233, −118, 401)."""
    got = [train_local(MODULES["linear_regression"], LR_X, LR_Y,
                       cfg("linear_regression", features=2, lr=5, iters=i), 2)[0].data[8:11]
           for i in (1, 2, 3)]
    assert got == [(111, -39, 205), (183, -81, 328), (233, -118, 401)]


@pytest.mark.parametrize("algo, keys, y, slots", [
    ("logistic_regression", dict(iters=300, lr=10), (0,) * 4 + (100,) * 4,
     (2, 2, 2, 1, 3, 7, 224, 224, 0, 450, 450, 304, 304)),
    ("svm", dict(iters=200, lr=5, l2=10), (-100,) * 4 + (100,) * 4,
     (3, 2, 2, 1, 3, 7, 78, 78, 0, 450, 450, 304, 304)),
])
def test_classifier_fixture_descriptors(algo, keys, y, slots):
    model, loss = train_local(MODULES[algo], CLS_X, Tensor((8, 1), y),
                              cfg(algo, features=2, **keys), 2)
    assert model.data == (descriptor.MAGIC, 1) + slots and loss == Tensor((1,), (0,))


@pytest.mark.parametrize("per_round", [1, 3, 64, None])
def test_chunking_never_changes_a_number(per_round):
    c = cfg("linear_regression", features=2, lr=5, iters=40, l2=3)
    base = train_local(MODULES["linear_regression"], LR_X, LR_Y, c, 2, per_round=400)
    assert train_local(MODULES["linear_regression"], LR_X, LR_Y, c, 2, per_round) == base


@given(steps=st.integers(0, 500), k=st.integers(1, 50))
def test_round_spans_tile_the_steps_and_round_count_counts_them(steps, k):
    from maned.ml.chunking import round_count, round_spans
    spans = round_spans(steps, k)
    assert len(spans) == round_count(steps, k)
    assert [f for f, _ in spans] == list(range(0, steps, k))
    assert sum(c for _, c in spans) == steps and all(1 <= c <= k for _, c in spans)


def test_budget_sizes_rounds_by_the_r13_formula():
    """per = v(2) − v(1), fixed = v(1) − per, k = ⌊(budget − fixed)/per⌋."""
    gd = MODULES["linear_regression"]
    c = cfg("linear_regression", features=2, budget=64)
    start = gd.init(LR_X, LR_Y, c, 2)
    v1 = len(gd.round_graph("f", 0, 1, start, c, 2).nodes)
    v2 = len(gd.round_graph("f", 0, 2, start, c, 2).nodes)
    from maned.ml.chunking import steps_per_round
    per = v2 - v1
    assert steps_per_round(gd, "f", start, c, 2) == (64 - (v1 - per)) // per > 1


@pytest.mark.parametrize("lr, travels", [(-128, True), (127, True), (5, True), (128, False),
                                        (20000, False)])
def test_lr_travels_as_an_input_exactly_when_it_fits_int8(lr, travels):
    """An int8-sized lr is a round input (a sweep over it sends one program, and any
    envelope carries it); a larger one stays a literal. Either way the value count, so the
    R13 chunking, and the model are those of the literal arrangement."""
    from maned.ml.gd import lr_travels
    from maned.ml.round_graphs import RoundGraphs
    gd = MODULES["linear_regression"]
    c = cfg("linear_regression", features=2, lr=max(lr, 1), iters=3)
    c["lr"] = lr  # the round arrangement is what is checked, any int32 lr included
    start = gd.init(LR_X, LR_Y, c, 2)
    g = gd.round_graph("f", 0, 2, start, c, 2)
    assert lr_travels(lr) == travels == ("lr" in g.params) == ("lr" in start.constants)
    other = dict(c, lr=lr + 1 if lr < 127 or lr > 128 else lr - 1)
    graphs = RoundGraphs(gd, "fit", 2)
    same = graphs.build(0, start, c, 0, 2, 0).nodes is graphs.build(1, start, other, 0, 2, 0).nodes
    assert same == (travels and lr_travels(other["lr"]))


def test_configurations_differing_in_lr_share_round_programs_not_numbers():
    """A sweep over lr: one program per round length, each configuration its own model."""
    gd = MODULES["linear_regression"]
    models = [train_local(gd, LR_X, LR_Y, cfg("linear_regression", features=2, lr=lr,
                                               iters=40), 2, per_round=7)[0] for lr in (2, 5)]
    alone = [train_local(gd, LR_X, LR_Y, cfg("linear_regression", features=2, lr=lr,
                                              iters=40), 2, per_round=40)[0] for lr in (2, 5)]
    assert models == alone and models[0] != models[1]


def test_sync_steps_keep_a_round_request_under_the_limit():
    """D10: the most steps whose request is under the limit; k itself when it fits, or when
    even one step does not (the request size here: 1,000 bytes and 300 per step)."""
    from maned.ml.chunking import sync_steps
    built = []

    def build(first, count):
        built.append(count)
        return count
    size = (lambda count: 1000 + 300 * count)
    assert sync_steps(build, 511, size, 65536) == (65536 - 1 - 1000) // 300 == 215
    assert size(215) < 65536 <= size(216)
    assert sync_steps(build, 100, size, 65536) == 100
    assert sync_steps(build, 50, size, 1200) == 50  # one step is 1,300 bytes: k stands
    assert sync_steps(build, 1, size, 10) == 1
    nonlinear = (lambda count: 1000 + 300 * count + (5000 if count > 100 else 0))
    assert sync_steps(build, 511, nonlinear, 65536) == 198 and nonlinear(198) < 65536


@pytest.mark.parametrize("algo", sorted(MODULES))
def test_round_flows_use_wire_ops_only(algo):
    gd = MODULES[algo]
    c = cfg(algo, features=2, l2=1)
    y = LR_Y if algo == "linear_regression" else Tensor((8, 1), (0,) * 4 + (100,) * 4)
    graph = gd.round_graph("fit#c0#r0", 0, 3, gd.init(LR_X, y, c, 2), c, 2)
    assert all(BY_NAME[n.op].wire for n in graph.nodes if n.kind == "op")


@pytest.mark.parametrize("x, y, keys, reason", [
    (Tensor((2,), (1, 2)), LR_Y, {}, "X must be a non-empty rank-2 tensor"),
    (LR_X, Tensor((7, 1), (0,) * 7), {}, "y must be [8x1] or [8]"),
    (LR_X, LR_Y, {"features": 3}, "features is 3 but X has 2 columns"),
])
def test_data_refusals(x, y, keys, reason):
    c = cfg("linear_regression", **{"features": 2, **keys})
    with pytest.raises(Refused) as e:
        MODULES["linear_regression"].init(x, y, c, 2)
    assert reason in e.value.reason


def test_constant_column_keeps_a_zero_weight_and_predicts():
    x = Tensor((4, 2), (5, 100, 5, 200, 5, 300, 5, 400))
    y = Tensor((4, 1), (100, 200, 300, 400))
    gd = MODULES["linear_regression"]
    model, _ = train_local(gd, x, y, cfg("linear_regression", features=2, iters=50), 2)
    assert model.data[8] == 0 and model.data[13] == 0  # w_1 = 0 and sd_1 = 0 stored
    assert gd.predict(model.data, x, 2).shape == (4, 1)


small = st.integers(-300, 300)


@settings(max_examples=40, deadline=None)
@given(algo=st.sampled_from(sorted(MODULES)), n=st.integers(1, 6), d=st.integers(1, 3),
       data=st.data(), standardize=st.booleans(), intercept=st.booleans(),
       lr=st.integers(1, 20), l2=st.integers(0, 5))
def test_random_fits_validate_and_predict_like_the_epilogue(algo, n, d, data, standardize,
                                                            intercept, lr, l2):
    x = Tensor((n, d), tuple(data.draw(st.lists(small, min_size=n * d, max_size=n * d))))
    y = Tensor((n, 1), tuple(data.draw(st.lists(small, min_size=n, max_size=n))))
    c = cfg(algo, features=d, iters=7, lr=lr, l2=l2, standardize=standardize,
            fit_intercept=intercept)
    gd = MODULES[algo]
    model, loss = train_local(gd, x, y, c, 2)
    assert descriptor.validate(model.data) is None and loss.shape == (1,)
    assert train_local(gd, x, y, c, 2, per_round=2) == (model, loss)
    pred = gd.predict(model.data, x, 2)
    if algo == "linear_regression" and standardize is False:
        # predict mirrors the epilogue's forward pass: its residuals give the loss back
        e = [p - t for p, t in zip(pred.data, y.data)]
        from maned.numeric.int32 import tdiv, wrap32
        assert loss.data[0] == wrap32(tdiv(tdiv(sum(wrap32(v) ** 2 for v in e), n), 100))


def _smallest_budget_for_one_step(module, x, y, c, q):
    start = module.init(x, y, c, q)
    return len(module.round_graph("f", 0, 1, start, c, q).nodes)


HMM_O = Tensor((6, 8), (0, 100, 0, 100, 200, 200, 200, 200, 100, 0, 100, 0, 200, 200, 100, 200,
                        0, 0, 100, 200, 200, 200, 200, 200, 100, 100, 0, 0, 0, 200, 200, 200,
                        0, 100, 100, 0, 200, 100, 200, 200, 100, 0, 0, 100, 200, 200, 200, 0))


@pytest.mark.parametrize("algo, x, y, keys", [
    ("linear_regression", LR_X, LR_Y, dict(features=2, iters=30)),
    ("xgboost", CLS_X, Tensor((8, 1), (0,) * 4 + (100,) * 4),
     dict(features=2, rounds=4, depth=2, bins=4, eta=30, l2=100, min_child_hess=75)),
    ("hmm", HMM_O, None, dict(states=2, symbols=3, steps=8, iters=3)),
])
def test_the_smallest_one_step_budget_gives_the_default_model(algo, x, y, keys):
    """R13: the budget that forces one step per round trains the same model as 4096."""
    from maned.ml.algorithms import module_for
    from maned.ml.chunking import steps_per_round
    module = module_for(algo)
    c = cfg(algo, **keys)
    small = dict(c, budget=_smallest_budget_for_one_step(module, x, y, c, 2))
    assert steps_per_round(module, "f", module.init(x, y, small, 2), small, 2) == 1
    with pytest.raises(Refused):
        tight = dict(c, budget=small["budget"] - 1)
        steps_per_round(module, "f", module.init(x, y, tight, 2), tight, 2)
    assert train_local(module, x, y, small, 2) == train_local(module, x, y, c, 2)
