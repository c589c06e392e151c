"""Tier B algorithms (spec/ml-exact.md §5–§9) and descriptor validity (§3): the documented
goldens, the run-time refusals (§2.2), and properties on small random datasets."""
import pytest
from hypothesis import assume, given, settings, strategies as st

from maned.ml import decision_tree, descriptor, isolation_forest, kmeans, knn, naive_bayes
from maned.failures import Refused
from maned.ml.exact import apply_std_block, check_xy
from maned.tensor import Tensor

from bounded import bounded

M = descriptor.MAGIC


def mat(rows) -> Tensor:
    return Tensor((len(rows), len(rows[0])), tuple(v for r in rows for v in r))


def col(values, flat=False) -> Tensor:
    return Tensor((len(values),) if flat else (len(values), 1), tuple(values))


# §15's classifier fixture, §7's three-class data, TV-22's isolation-forest data.
CLS_X = mat([[100, 100], [100, 200], [200, 100], [200, 200],
             [700, 700], [700, 800], [800, 700], [800, 800]])
CLS_Y = col([0, 0, 0, 0, 100, 100, 100, 100])
THREE_X = mat([[100, 300], [120, 310], [90, 280], [500, 520], [530, 480], [490, 500],
               [900, 100], [880, 130], [910, 90]])
THREE_Y = col([1, 1, 1, 2, 2, 2, 3, 3, 3], flat=True)
THREE_PROBES = mat([[300, 400], [700, 300], [110, 290]])  # (3, 4), (7, 3), (1.1, 2.9)
IF_X = mat(CLS_X.rows() + [(1500, 100)])

KM = {"k": 2, "iters": 10, "standardize": True}
KNN = {"k": 3, "standardize": False}
NB = {"standardize": False}
DT = {"max_depth": 8, "min_samples": 2}
IF = {"trees": 50, "max_depth": 8, "seed": 7}

# (name, module, X, y, cfg, full descriptor or documented prefix, probes, predictions)
GOLDENS = [
    ("kmeans", kmeans, CLS_X, None, KM,
     [M, 1, 4, 2, 2, 2, 2, 9, 2, -98, -98, 98, 98, 450, 450, 304, 304],
     CLS_X, [0, 0, 0, 0, 1, 1, 1, 1]),
    ("kmeans probes", kmeans, CLS_X, None, KM, None,
     mat([[150, 150], [750, 750]]), [0, 1]),
    ("knn", knn, CLS_X, CLS_Y, KNN,
     [M, 1, 5, 2, 2, 2, 0, 26, 3, 8, 100, 100, 100, 200, 200, 100, 200, 200, 700, 700, 700,
      800, 800, 700, 800, 800, 0, 0, 0, 0, 100, 100, 100, 100],
     CLS_X, [0] * 4 + [100] * 4),
    ("naive_bayes", naive_bayes, CLS_X, CLS_Y, NB,
     [M, 1, 6, 2, 2, 2, 0, 13, 2, 0, 100, 4, 4, 150, 150, 750, 750, 2501, 2501, 2501, 2501],
     mat([[150, 150], [750, 750], [450, 450], [460, 460]]), [0, 100, 0, 100]),
    ("naive_bayes three classes", naive_bayes, THREE_X, THREE_Y, NB,
     [M, 1, 6, 2, 2, 3, 0, 19, 3, 1, 2, 3, 3, 3, 3, 103, 296, 506, 500, 896, 106, 156, 157,
      290, 267, 157, 290],
     THREE_PROBES, [2, 2, 1]),
    ("decision_tree", decision_tree, CLS_X, CLS_Y, DT,
     [M, 1, 7, 2, 2, 2, 0, 16, 3, 0, 450, 1, 2, 0, -1, 0, -1, -1, 0, -1, 0, -1, -1, 100],
     mat([[150, 150], [750, 750], [450, 450], [451, 100]]), [0, 100, 0, 100]),
    ("decision_tree three classes", decision_tree, THREE_X, THREE_Y,
     {"max_depth": 3, "min_samples": 2},
     [M, 1, 7, 2, 2, 3, 0, 26, 5, 0, 305, 1, 2, 1, -1, 0, -1, -1, 1, 0, 705, 3, 4, 2, -1, 0,
      -1, -1, 2, -1, 0, -1, -1, 3],
     THREE_PROBES, [1, 2, 1]),
    ("isolation_forest TV-22", isolation_forest, IF_X, None, IF, [M, 1, 8, 2, 2, 1, 0],
     IF_X, [366, 354, 380, 370, 382, 366, 382, 368, 196]),
]


@pytest.mark.parametrize("name, module, X, y, cfg, slots, probes, expected", GOLDENS,
                         ids=[g[0] for g in GOLDENS])
def test_documented_descriptor_and_predictions(name, module, X, y, cfg, slots, probes,
                                               expected):
    model = module.fit(X, y, cfg, 2)
    assert model.wide and model.rank == 1
    if slots is not None:
        assert list(model.data[:len(slots)]) == slots
        if len(slots) > 8:
            assert len(model.data) == len(slots)
    assert descriptor.validate(model.data) is None
    out = module.predict(model.data, probes, 2)
    assert out.shape == (probes.shape[0], 1) and not out.wide
    assert list(out.data) == expected


def test_knn_documented_prefix_and_length():
    model = knn.fit(CLS_X, CLS_Y, KNN, 2)
    assert len(model.data) == 34
    assert list(model.data[:12]) == [1296974925, 1, 5, 2, 2, 2, 0, 26, 3, 8, 100, 100]


def test_ln_q20_check_values():
    assert [naive_bayes.ln_q20(x) for x in (1, 2, 3, 10, 100)] == [
        0, 726817, 1151978, 2414435, 4828870]
    assert naive_bayes.log2_q20(1) == 0 and naive_bayes.log2_q20(2 ** 40) == 40 * 2 ** 20


def test_c_s_check_values_at_q2():
    assert [isolation_forest.c_s(m, 100) for m in range(1, 8)] == [
        0, 100, 166, 216, 256, 290, 318]
    assert isolation_forest.c_s(0, 100) == 0


def test_xor_data_has_no_strictly_purer_split():
    """§8: no single split is strictly purer than its parent, so the root is a leaf."""
    model = decision_tree.fit(mat([[0, 0], [0, 1], [1, 0], [1, 1]]), col([0, 1, 1, 0]), DT, 2)
    assert list(model.data[8:]) == [1, -1, 0, -1, -1, 0]


def test_duplicate_rows_with_different_labels_make_a_leaf():
    model = decision_tree.fit(mat([[5, 5], [5, 5]]), col([7, 3]), DT, 2)
    assert list(model.data[8:]) == [1, -1, 0, -1, -1, 3]


def test_kmeans_empty_cluster_keeps_its_centroid():
    # duplicates: C_0 = C_1 = row 0, every row goes to the lowest index, cluster 1 stays
    model = kmeans.fit(mat([[1], [1], [1], [1]]), None, {"k": 2, "iters": 3,
                                                          "standardize": False}, 0)
    assert list(model.data[8:]) == [2, 1, 1]


def test_isolation_forest_all_constant_rows_are_one_leaf():
    model = isolation_forest.fit(mat([[3, 4]] * 5), None, {"trees": 2, "max_depth": 10,
                                                           "seed": 1}, 2)
    assert list(model.data[8:]) == [2, 1, -1, 0, -1, -1, 5, 1, -1, 0, -1, -1, 5]
    assert isolation_forest.predict(model.data, mat([[0, 0]]), 2).data == (256,)


# --- run-time refusals (§2.2) ----------------------------------------------------------

SUPERVISED = [(knn, KNN), (naive_bayes, NB), (decision_tree, DT)]
ALL = [(kmeans, KM)] + SUPERVISED + [(isolation_forest, IF)]


@pytest.mark.parametrize("module, cfg", ALL, ids=[m.ALGO for m, _ in ALL])
@pytest.mark.parametrize("X", [Tensor((3,), (1, 2, 3)), Tensor((), (1,)), Tensor((0, 2), ()),
                               Tensor((2, 0), ()), Tensor((1, 1, 1), (1,))],
                         ids=["rank1", "scalar", "no rows", "no columns", "rank3"])
def test_x_not_a_non_empty_matrix_is_refused(module, cfg, X):
    with pytest.raises(Refused, match="X must be a non-empty rank-2 tensor"):
        module.fit(X, None if module in (kmeans, isolation_forest) else CLS_Y, cfg, 2)


@pytest.mark.parametrize("module, cfg", SUPERVISED, ids=[m.ALGO for m, _ in SUPERVISED])
@pytest.mark.parametrize("y", [col([0] * 7), Tensor((8, 2), (0,) * 16), Tensor((1, 8), (0,) * 8),
                               Tensor((), (0,))], ids=["7 rows", "8x2", "1x8", "scalar"])
def test_y_of_the_wrong_shape_is_refused(module, cfg, y):
    with pytest.raises(Refused, match=r"y must be \[8x1\] or \[8\] for the 8 rows of X"):
        module.fit(CLS_X, y, cfg, 2)


@pytest.mark.parametrize("module, cfg", SUPERVISED, ids=[m.ALGO for m, _ in SUPERVISED])
def test_missing_labels_are_refused(module, cfg):
    with pytest.raises(Refused, match="needs labels y"):
        module.fit(CLS_X, None, cfg, 2)


@pytest.mark.parametrize("module, cfg", [(kmeans, {"k": 5, "iters": 1, "standardize": False}),
                                         (knn, {"k": 5, "standardize": False})])
def test_k_more_than_rows_is_refused(module, cfg):
    X = mat(CLS_X.rows()[:4])
    with pytest.raises(Refused) as e:
        module.fit(X, col([0, 0, 1, 1]), cfg, 2)
    assert e.value.reason == "k 5 is more than the 4 rows of X"


def test_check_xy_returns_rows_and_labels():
    assert check_xy(mat([[1, 2], [3, 4]]), col([5, 6], flat=True)) == ([[1, 2], [3, 4]], [5, 6])
    assert check_xy(mat([[1, 2]]), None) == ([[1, 2]], None)


def test_slot_outside_int64_is_refused_at_fit():
    with pytest.raises(Refused, match="outside int64"):
        descriptor.pack(6, 2, 1, 1, 0, [2 ** 63])
    # standardized classes at ±S have variance S² + 1 = 10^20 + 1 at q = 10
    with pytest.raises(Refused, match="outside int64"):
        naive_bayes.fit(mat([[0], [2], [0], [2]]), col([0, 0, 1, 1]), {"standardize": True}, 10)


# --- descriptor validity (§3) ---------------------------------------------------------

LINEAR = [M, 1, 1, 2, 2, 1, 3, 7, 377, -251, 512, 287, 362, 189, 254]
HMM = [M, 1, 11, 2, 8, 2, 0, 14, 2, 3, 83, 16, 69, 30, 13, 86, 42, 37, 20, 17, 18, 64]
XGB = [M, 1, 10, 2, 2, 1, 0, 42, 4, 2] + [
    v for leaves in ([-30, 0, 30, 0], [-26, 0, 26, 0], [-22, 0, 22, 0], [-20, 0, 20, 0])
    for v in [0, 240, -1, 0, -1, 0] + leaves]


def fixture_descriptors() -> dict[str, list[int]]:
    fitted = {g[0]: list(g[1].fit(g[2], g[3], g[4], 2).data) for g in GOLDENS}
    fitted["knn standardized"] = list(knn.fit(CLS_X, CLS_Y, {"k": 3, "standardize": True},
                                              2).data)
    fitted["naive_bayes standardized"] = list(naive_bayes.fit(CLS_X, CLS_Y,
                                                              {"standardize": True}, 2).data)
    return {**fitted, "linear": LINEAR, "hmm": HMM, "xgboost": XGB}


FIXTURES = fixture_descriptors()


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_descriptors_are_valid(name):
    assert descriptor.validate(FIXTURES[name]) is None
    assert descriptor.validate(tuple(FIXTURES[name])) is None


def with_slot(slots, i, v):
    out = list(slots)
    out[i] = v
    return out


@pytest.mark.parametrize("name", FIXTURES)
def test_mutated_descriptors_are_invalid(name):
    s = FIXTURES[name]
    assert descriptor.validate(s[:-1]).startswith("slot 7 gives payload length")
    assert descriptor.validate(s[:7]) == (
        "not a model descriptor: 7 slots, a descriptor has at least 8")
    assert descriptor.validate(with_slot(s, 0, 5)) == (
        "not a model descriptor: slot 0 is 5, not the magic 1296974925")
    assert "version" in descriptor.validate(with_slot(s, 1, 2))
    for algo_id in (0, 9, 12, -1):
        assert "not an algorithm id" in descriptor.validate(with_slot(s, 2, algo_id))
    shorter = with_slot(s[:-1], 7, s[7] - 1)  # slot 7 agrees, the table does not
    assert descriptor.validate(shorter) is not None
    longer = with_slot(s + [0], 7, s[7] + 1)
    assert descriptor.validate(longer) is not None
    assert "feature count" in descriptor.validate(with_slot(s, 4, 0))


@pytest.mark.parametrize("name", [n for n in FIXTURES if n != "linear"])
@pytest.mark.parametrize("count", [2 ** 40, -(2 ** 40), -1, 0, 2 ** 63 - 1])
def test_absurd_counts_give_a_reason_without_work_in_proportion(name, count):
    """A count of 2^40 is refused after a few dozen lines, allocating nothing like it."""
    s = FIXTURES[name]
    positions = [8, 9] if s[2] in (5, 8, 10, 11) else [8]  # iforest 9: first tree's M
    if s[2] == 5 and count > 0:
        positions = [9]  # knn's k is not a length: a k above n only means "every row"
    for i in positions:
        with bounded(lines=2000, peak_bytes=1 << 20):
            reason = descriptor.validate(with_slot(s, i, count))
        assert isinstance(reason, str) and reason


def test_gd_wrong_length_reason():
    reason = descriptor.validate(with_slot(LINEAR, 4, 3))
    assert reason == ("linear_regression descriptor: payload length 7 does not match "
                      "3d + 1 with d 3 = 10")


def test_unfollowable_tree_references_are_invalid():
    tree = FIXTURES["decision_tree"]
    assert "children" in descriptor.validate(with_slot(tree, 11, 0))   # root's left → itself
    assert "children" in descriptor.validate(with_slot(tree, 12, 3))   # beyond M
    assert "feature" in descriptor.validate(with_slot(tree, 9, 2))     # d is 2
    assert "feature" in descriptor.validate(with_slot(XGB, 10, 5))


def test_xgboost_absurd_depth_is_not_allocated():
    for depth in (63, 2 ** 40, 2 ** 63 - 1):
        assert "depth" in descriptor.validate(with_slot(XGB, 9, depth))
    assert descriptor.validate(with_slot(XGB, 9, 10 ** 30)) == (
        "slot 9 is outside int64 (a descriptor's slots are int64)")


@given(st.sampled_from(sorted(descriptor.ALGO_IDS.values())),
       st.lists(st.one_of(st.integers(-3, 12), st.sampled_from([2 ** 40, -(2 ** 62)])),
                max_size=40),
       st.integers(-2, 5), st.integers(0, 3))
@settings(max_examples=300, deadline=None)
def test_validate_never_raises(algo_id, payload, d, flags):
    slots = [M, 1, algo_id, 2, d, 1, flags, len(payload), *payload]
    reason = descriptor.validate(slots)
    assert reason is None or isinstance(reason, str)


# --- properties on small random datasets --------------------------------------------

@st.composite
def datasets(draw, labels=st.sampled_from([-3, 0, 7, 100])):
    n = draw(st.integers(2, 12))
    d = draw(st.integers(1, 3))
    rows = draw(st.lists(st.lists(st.integers(-50, 50), min_size=d, max_size=d),
                         min_size=n, max_size=n))
    return rows, draw(st.lists(labels, min_size=n, max_size=n))


def distinct(rows) -> bool:
    return len({tuple(r) for r in rows}) == len(rows)


def check_model(module, model, rows, outputs):
    s = model.data
    assert descriptor.validate(s) is None
    assert (s[2], s[4], s[5]) == (module.ALGO_ID, len(rows[0]), outputs)
    out = module.predict(s, mat(rows), 2)
    assert out.shape == (len(rows), 1)
    return list(out.data)


@given(datasets(), st.integers(1, 12), st.integers(1, 5), st.booleans())
@settings(max_examples=60, deadline=None)
def test_kmeans_fits_and_assigns_to_the_nearest_stored_centroid(data, k, iters, std):
    rows, _ = data
    assume(k <= len(rows))
    model = kmeans.fit(mat(rows), None, {"k": k, "iters": iters, "standardize": std}, 2)
    assign = check_model(kmeans, model, rows, k)
    s, d = model.data, len(rows[0])
    centroids = [s[9 + c * d:9 + (c + 1) * d] for c in range(k)]
    z = apply_std_block(rows, s[9 + k * d:], 100) if std else rows
    for r, a in zip(z, assign):
        dist = [sum((x - c) ** 2 for x, c in zip(r, cen)) for cen in centroids]
        assert a == dist.index(min(dist))


@given(datasets(), st.integers(1, 12), st.booleans())
@settings(max_examples=60, deadline=None)
def test_knn_fits_and_predicts_one_of_the_labels(data, k, std):
    rows, labels = data
    assume(k <= len(rows))
    model = knn.fit(mat(rows), col(labels), {"k": k, "standardize": std}, 2)
    assert set(check_model(knn, model, rows, len(set(labels)))) <= set(labels)


@given(datasets())
@settings(max_examples=60, deadline=None)
def test_knn_k1_returns_the_label_of_a_distinct_training_row(data):
    rows, labels = data
    assume(distinct(rows))
    model = knn.fit(mat(rows), col(labels), {"k": 1, "standardize": False}, 2)
    assert check_model(knn, model, rows, len(set(labels))) == labels


@given(datasets(), st.booleans())
@settings(max_examples=60, deadline=None)
def test_naive_bayes_fits_and_predicts_one_of_the_labels(data, std):
    rows, labels = data
    model = naive_bayes.fit(mat(rows), col(labels), {"standardize": std}, 2)
    assert set(check_model(naive_bayes, model, rows, len(set(labels)))) <= set(labels)


def leaf_of(nodes, x) -> int:
    i = 0
    while nodes[i][0] != -1:
        i = nodes[i][2] if x[nodes[i][0]] <= nodes[i][1] else nodes[i][3]
    return i


@given(datasets(), st.integers(1, 8), st.integers(1, 4))
@settings(max_examples=80, deadline=None)
def test_decision_tree_predicts_the_majority_of_each_leaf(data, max_depth, min_samples):
    """What §8 guarantees in general: every leaf stores the majority label (ties → smallest)
    of the training rows that reach it. (It does not guarantee a perfect fit: XOR-like data
    has no strictly purer split.)"""
    rows, labels = data
    model = decision_tree.fit(mat(rows), col(labels),
                              {"max_depth": max_depth, "min_samples": min_samples}, 2)
    pred = check_model(decision_tree, model, rows, len(set(labels)))
    s = model.data
    nodes = [s[9 + 5 * i:14 + 5 * i] for i in range(s[8])]
    reached: dict[int, list[int]] = {}
    for r, lab in zip(rows, labels):
        reached.setdefault(leaf_of(nodes, r), []).append(lab)
    for r, p in zip(rows, pred):
        labs = reached[leaf_of(nodes, r)]
        best = max(labs.count(v) for v in labs)
        assert p == min(v for v in labs if labs.count(v) == best)


@given(datasets())
@settings(max_examples=60, deadline=None)
def test_decision_tree_on_one_distinct_column_fits_the_training_labels(data):
    """With one column of distinct values, the first prefix split always has class
    proportions unlike its parent's, so (Gini being strictly concave, and the Q20 margin
    far above the truncation for n <= 12) a mixed node always splits: a tree without a
    depth limit reproduces every training label."""
    rows, labels = data
    rows = [r[:1] for r in rows]
    assume(distinct(rows))
    model = decision_tree.fit(mat(rows), col(labels), {"max_depth": 64, "min_samples": 2}, 2)
    assert check_model(decision_tree, model, rows, len(set(labels))) == labels


@given(datasets(), st.integers(1, 4), st.integers(1, 10), st.integers(-(2 ** 70), 2 ** 70))
@settings(max_examples=60, deadline=None)
def test_isolation_forest_fits_and_scores(data, trees, max_depth, seed):
    rows, _ = data
    model = isolation_forest.fit(mat(rows), None,
                                 {"trees": trees, "max_depth": max_depth, "seed": seed}, 2)
    scores = check_model(isolation_forest, model, rows, 1)
    assert all(s >= 0 for s in scores)
    s = model.data
    assert s[8] == trees and s[9 + 5] == len(rows)  # the first root's size is n
