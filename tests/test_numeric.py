"""Properties of the numeric core: wrap32, tdiv, wrapping sums, the R4 rule, the activation LUTs."""
import hashlib

import pytest
from hypothesis import given, strategies as st

from bark_vm.wire import lut
from bark_vm.wire.digits import whole_number
from maned.numeric import activation
from maned.numeric.int32 import INT32_MAX, INT32_MIN, rdiv, tdiv, wrap32
from maned.ops.broadcast import broadcast_shape
from maned.failures import OpError

int32s = st.integers(INT32_MIN, INT32_MAX)
big_ints = st.integers(-(2 ** 80), 2 ** 80)


@given(big_ints)
def test_wrap32_is_the_mod_formula_lands_in_range_and_is_idempotent(x):
    w = wrap32(x)
    assert w == ((x + 2 ** 31) % 2 ** 32) - 2 ** 31
    assert INT32_MIN <= w <= INT32_MAX
    assert wrap32(w) == w
    assert (w - x) % 2 ** 32 == 0


def _tdiv_reference(a, b):
    """Truncation toward zero, spelled with the sign of the true quotient."""
    if b == 0:
        return 0
    sign = -1 if (a < 0) != (b < 0) else 1
    return sign * (abs(a) // abs(b))


@given(st.integers(-(2 ** 40), 2 ** 40), st.integers(-(2 ** 20), 2 ** 20))
def test_tdiv_truncates_toward_zero_for_every_sign(a, b):
    q = tdiv(a, b)
    assert q == _tdiv_reference(a, b)
    if b:
        r = a - q * b
        assert abs(r) < abs(b) and (r == 0 or (r < 0) == (a < 0))


@given(int32s)
def test_tdiv_by_zero_is_zero(a):
    assert tdiv(a, 0) == 0


def test_int32_min_over_minus_one_is_2_31_raw_and_wraps_to_int32_min():
    assert tdiv(INT32_MIN, -1) == 2 ** 31
    assert wrap32(tdiv(INT32_MIN, -1)) == INT32_MIN
    assert (tdiv(7, 2), tdiv(-7, 2), tdiv(7, -2), tdiv(-7, -2)) == (3, -3, -3, 3)


@given(st.lists(int32s, max_size=30), st.randoms(use_true_random=False))
def test_wrapping_sums_agree_in_any_order(values, rnd):
    shuffled = values[:]
    rnd.shuffle(shuffled)
    step = 0
    for v in shuffled:
        step = wrap32(step + v)
    assert step == wrap32(sum(values))


@given(big_ints, st.integers(1, 2 ** 40))
def test_rdiv_rounds_half_away_from_zero(a, b):
    q = rdiv(a, b)
    assert abs(2 * a - 2 * q * b) <= b
    if abs(2 * a - 2 * q * b) == b:
        assert abs(q * b) > abs(a)
    assert rdiv(-a, b) == -q


shapes = st.lists(st.integers(1, 4), max_size=4).map(tuple)
singles = st.sampled_from([(), (1,)])


@given(shapes)
def test_r4_equal_shapes_combine(s):
    assert broadcast_shape(s, s) == s


@given(singles, shapes)
def test_r4_a_single_element_broadcasts_either_way(one, s):
    expected = (1,) if s in ((), (1,)) and one != s else s
    assert broadcast_shape(one, s) == expected
    assert broadcast_shape(s, one) == expected


@given(shapes, shapes)
def test_r4_any_other_pair_is_refused(a, b):
    if a == b or a in ((), (1,)) or b in ((), (1,)):
        return
    with pytest.raises(OpError):
        broadcast_shape(a, b)


def test_r4_fixed_cases():
    assert broadcast_shape((), ()) == ()
    assert broadcast_shape((), (1,)) == (1,)
    assert broadcast_shape((1,), ()) == (1,)
    with pytest.raises(OpError):
        broadcast_shape((1, 1), (2, 2))
    with pytest.raises(OpError):
        broadcast_shape((2, 1), (1, 1))


def test_sigmoid_table_check_values():
    values = lut.SIGMOID.values
    assert len(values) == 501 and lut.SIGMOID.lo == -16000 and lut.STEP == 64
    assert sum(values) == 250_500_000
    digest = hashlib.sha256(",".join(str(v) for v in values).encode()).hexdigest()
    assert digest == "fff65ef8a051ec95febc1e0733d58a9ee3a7088c3fd6415af85af71bc4326798"


def test_tanh_and_exp_tables_shape_and_ends():
    assert (len(lut.TANH.values), lut.TANH.lo, lut.TANH.hi) == (251, -8000, 8000)
    assert lut.TANH.values[125] == 0
    assert lut.TANH.values[0] == -1_000_000 and lut.TANH.values[-1] == 1_000_000
    assert (len(lut.EXP.values), lut.EXP.lo, lut.EXP.hi) == (251, -16000, 0)
    assert lut.EXP.values[-1] == 1_000_000 and lut.EXP.values[0] == 0
    for table in (lut.SIGMOID, lut.TANH, lut.EXP):
        assert list(table.values) == sorted(table.values)


@pytest.mark.parametrize("x, expected", [
    (-98, 27), (-78, 31), (-71, 33), (-56, 36), (-30, 43), (0, 50), (98, 73),
    (500, 99), (-500, 1), (2000, 100), (-2000, 0),
])
def test_sigmoid_at_q2(x, expected):
    assert activation.sigmoid(x, 2) == expected


def test_sigmoid_at_q3():
    assert [activation.sigmoid(x, 3) for x in (0, 1000, 2000, -2000)] == [500, 731, 881, 119]


@given(int32s, st.integers(0, 9))
def test_sigmoid_and_tanh_stay_in_range(x, q):
    m = 10 ** q
    s = activation.sigmoid(x, q)
    assert 0 <= s <= m
    t = activation.tanh(x, q)
    assert -m <= t <= m


@given(st.lists(int32s, min_size=1, max_size=8), st.integers(0, 9))
def test_softmax_group_is_bounded_and_its_max_is_largest(group, q):
    out = activation.softmax(group, q)
    assert all(0 <= v <= 10 ** q for v in out)
    assert out[group.index(max(group))] == max(out)


@pytest.mark.parametrize("q", [-1, 10])
def test_lut_quantres_outside_0_9_is_refused(q):
    with pytest.raises(OpError):
        activation.sigmoid(0, q)


def test_lut_module_imports_neither_maned_nor_numpy():
    import subprocess
    import sys
    code = ("import sys, bark_vm.wire.lut; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('maned', 'numpy')]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


@given(st.integers(0, 10 ** 30), st.integers(0, 10 ** 30), st.integers(0, 3))
def test_whole_number_reads_digits_like_int_within_its_range(v, hi, zeros):
    assert whole_number("0" * zeros + str(v), 0, hi) == (v if v <= hi else None)


@pytest.mark.parametrize("text", ["", "-1", "+1", "1.0", " 1", "1_0", "²", "٣", None, 5,
                                  "9" * 5000])
def test_whole_number_refuses_what_is_not_plain_digits_in_range(text):
    assert whole_number(text, 0, 10 ** 18) is None
