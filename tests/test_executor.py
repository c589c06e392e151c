"""The Bark executor against the reference, differentially (DESIGN R7, STYLE: byterun).

For every compute opcode, generated operands (edge values INT32_MIN, INT32_MAX, −1, 0, zero
divisors, broadcast and mismatched shapes) run through the reference op (its raw result
wrapped by w32, as the interpreter does) and through the executor kernel; the two must give
the same shape and data, or both refuse (OpError ⇔ SHAPE_MISMATCH / EXEC_FAILED). A
reference rank-0 operand is a `[1]` register on the worker; shapes compare modulo that.
"""
import os
import subprocess
import sys
from math import prod

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bark_vm.executor import BY_NAME as KERNELS_BY_NAME, KERNELS, execute
from bark_vm.executor import linalg as ex_linalg
from bark_vm.wire import ir
from bark_vm.wire.constants import WorkerError
from bark_vm.wire.ir import Instr, Module
from bark_vm.wire.opcodes import BY_MNEMONIC, COMPUTE_MNEMONICS
from maned.numeric.int32 import INT32_MAX, INT32_MIN, wrap32
from maned.catalogue import BY_NAME, OpContext
from maned.failures import OpError
from maned.interp.kernels import KERNELS as REFERENCE_KERNELS
from maned.tensor import Tensor

EDGES = [INT32_MIN, INT32_MIN + 1, INT32_MAX, INT32_MAX - 1, -1, 0, 1, 2, -2, 1000, -1000]
# EXECUTOR_EXAMPLES=2000 is the opt-in long mode (R33); the default keeps the file < 40 s.
EXAMPLES = int(os.environ.get("EXECUTOR_EXAMPLES", "120"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

values = st.one_of(st.sampled_from(EDGES), st.integers(-1000, 1000),
                   st.integers(INT32_MIN, INT32_MAX))
small_values = st.one_of(st.sampled_from([0, 1, -1, 2, -2]), st.integers(-3000, 3000))
dims = st.integers(1, 4)
quantres = st.one_of(st.integers(0, 9), st.sampled_from([10, 12, 19, 20, 64, 255]))  # wire: u8
shapes = st.lists(dims, min_size=1, max_size=4).map(tuple)


def data_for(draw, shape, elems=values):
    return draw(st.lists(elems, min_size=prod(shape), max_size=prod(shape)))


@st.composite
def arrays(draw, shape=None, elems=values, rank=None):
    if shape is None:
        shape = draw(st.lists(dims, min_size=rank or 1, max_size=rank or 4).map(tuple))
    return np.array(data_for(draw, shape, elems), dtype=np.int32).reshape(shape)


# --- the two sides -------------------------------------------------------------------------
def reference(name, q, operands, params, rank0=()):
    """('ok', shape, data) with the result wrapped, or ('refused', message)."""
    tensors = []
    for k, a in enumerate(operands):
        shape = () if k in rank0 else a.shape
        tensors.append(Tensor(tuple(shape), tuple(int(v) for v in a.reshape(-1))))
    try:
        out = REFERENCE_KERNELS[name](OpContext(q), *tensors, **params)
    except OpError as exc:
        return ("refused", str(exc))
    return ("ok", out.shape, tuple(wrap32(v) for v in out.data))


def executor(name, q, operands, params):
    """('ok', shape, data) or ('refused', code); anything but a WorkerError is a failure."""
    try:
        out = KERNELS_BY_NAME[name].fn(q, *operands, **params)
    except WorkerError as exc:
        assert exc.code in ("SHAPE_MISMATCH", "EXEC_FAILED"), exc
        return ("refused", exc.code)
    assert isinstance(out, np.ndarray) and out.dtype == np.int32 and out.ndim >= 1, out
    return ("ok", out.shape, tuple(int(v) for v in out.reshape(-1)))


def same(name, q, operands, params=None, rank0=()):
    """Run both sides and compare whole; returns the executor's answer."""
    params = params or {}
    ref = reference(name, q, operands, params, rank0)
    got = executor(name, q, operands, params)
    detail = (name, q, [a.tolist() for a in operands], params, rank0)
    if ref[0] == "refused":
        assert got[0] == "refused", (detail, ref, got)
        return got
    assert got[0] == "ok", (detail, ref, got)
    want_shape = ref[1] if ref[1] != () else (1,)
    assert got[1] == want_shape, (detail, ref, got)
    assert got[2] == ref[2], (detail, ref, got)
    return got


# --- elementwise binary ops, comparisons, logic, scalar_mul ---------------------------------
BINARY = ["add", "sub", "mul", "div", "gt", "lt", "eq", "ge", "le", "ne", "and", "or", "xor",
          "scalar_mul"]


@st.composite
def pairs(draw):
    """Equal shapes, a [1] on either side, or two unrelated shapes (often refused)."""
    kind = draw(st.sampled_from(["equal", "left1", "right1", "both1", "any"]))
    a_shape = draw(shapes)
    b_shape = {"equal": a_shape, "left1": a_shape, "right1": (1,), "both1": (1,),
               "any": draw(shapes)}[kind]
    if kind in ("left1", "both1"):
        a_shape = (1,)
    a = draw(arrays(a_shape))
    b = draw(arrays(b_shape, elems=st.one_of(st.just(0), st.just(-1), values)))
    rank0 = tuple(k for k, x in enumerate((a, b)) if x.shape == (1,) and draw(st.booleans()))
    return a, b, rank0


@pytest.mark.parametrize("name", BINARY)
@SETTINGS
@given(case=pairs())
def test_binary_ops_match_reference(name, case):
    a, b, rank0 = case
    same(name, 2, [a, b], rank0=rank0)


@pytest.mark.parametrize("name", ["div", "mul", "add", "sub"])
@given(a=st.sampled_from(EDGES), b=st.sampled_from(EDGES))
@settings(max_examples=150, deadline=None)
def test_edge_value_table(name, a, b):
    same(name, 0, [np.array([a], np.int32), np.array([b], np.int32)])


def test_div_rules():
    a = np.array([INT32_MIN, 7, -7, 7, -7, 5, INT32_MIN], np.int32)
    b = np.array([-1, 2, 2, -2, -2, 0, 0], np.int32)
    out = KERNELS_BY_NAME["div"].fn(0, a, b)
    assert out.tolist() == [INT32_MIN, 3, -3, -3, 3, 0, 0]


def test_broadcast_shapes():
    one, m11 = np.array([5], np.int32), np.array([[3]], np.int32)
    m22 = np.arange(4, dtype=np.int32).reshape(2, 2)
    assert KERNELS_BY_NAME["add"].fn(0, one, m22).shape == (2, 2)
    assert KERNELS_BY_NAME["add"].fn(0, m22, one).shape == (2, 2)
    assert KERNELS_BY_NAME["add"].fn(0, m11, one).shape == (1, 1)  # b single → a (R4)
    for a, b in ((m11, m22), (np.zeros((2, 1), np.int32), np.zeros((1, 2), np.int32))):
        with pytest.raises(WorkerError) as err:
            KERNELS_BY_NAME["add"].fn(0, a, b)
        assert err.value.code == "SHAPE_MISMATCH"
    with pytest.raises(WorkerError) as err:
        KERNELS_BY_NAME["scalar_mul"].fn(0, m22, m22)
    assert err.value.code == "SHAPE_MISMATCH"


# --- unary elementwise and activations ------------------------------------------------------
@pytest.mark.parametrize("name", ["not", "relu"])
@SETTINGS
@given(x=arrays(), scalar=st.booleans())
def test_unary_ops_match_reference(name, x, scalar):
    same(name, 2, [x], rank0=(0,) if scalar and x.shape == (1,) else ())


@pytest.mark.parametrize("name", ["sigmoid", "tanh"])
@SETTINGS
@given(x=arrays(), q=st.one_of(st.integers(0, 9), st.integers(-2, 12)))
def test_lut_activations_match_reference(name, x, q):
    same(name, q, [x])


@pytest.mark.parametrize("name", ["sigmoid", "tanh"])
@given(q=st.integers(0, 9), data=st.data())
@settings(max_examples=60, deadline=None)
def test_lut_activations_near_table_domain(name, q, data):
    """Inputs around the table ends and grid points, at every scale."""
    m = 10 ** q
    xs = data.draw(st.lists(st.integers(-17000, 17000), min_size=1, max_size=20))
    x = np.array([wrap32(v * m // 1000) for v in xs], np.int32)
    same(name, q, [x])


def test_sigmoid_check_values():
    sig = KERNELS_BY_NAME["sigmoid"].fn
    x = np.array([-98, -71, 0, 98, 500, -500, 2000, -2000], np.int32)
    assert sig(2, x).tolist() == [27, 33, 50, 73, 99, 1, 100, 0]
    assert sig(3, np.array([0, 1000, 2000, -2000], np.int32)).tolist() == [500, 731, 881, 119]
    with pytest.raises(WorkerError) as err:
        sig(10, np.array([1], np.int32))
    assert err.value.code == "EXEC_FAILED"


@SETTINGS
@given(x=arrays(), q=st.one_of(st.integers(0, 9), st.just(10)),
       axis=st.one_of(st.none(), st.integers(0, 4)))
def test_softmax_matches_reference(x, q, axis):
    same("softmax", q, [x], {"axis": axis})


# --- linear algebra -------------------------------------------------------------------------
@st.composite
def matmul_pairs(draw):
    m, k, n = draw(dims), draw(st.integers(1, 6)), draw(dims)
    k2 = k if draw(st.integers(0, 5)) else draw(st.integers(1, 6))
    a_shape = (m, k) if draw(st.integers(0, 9)) else draw(shapes)
    return draw(arrays(a_shape)), draw(arrays((k2, n)))


@SETTINGS
@given(case=matmul_pairs())
def test_matmul_matches_reference(case):
    same("matmul", 2, list(case))


def plain_matmul(a, b):
    """The definition: exact Python-int dot products, wrapped."""
    exact = a.astype(object) @ b.astype(object)
    return np.array([[wrap32(int(v)) for v in row] for row in exact], dtype=np.int64)


LIMB_EDGES = np.array([INT32_MIN, INT32_MAX, -1, 0, 1, 65535, 65536, -65536, -32768, 32767],
                      np.int32)


def edge_matrix(rng, shape, edge_share):
    """Random int32 entries, a share of them replaced by limb-boundary and extreme values."""
    x = rng.integers(INT32_MIN, INT32_MAX, shape, dtype=np.int64, endpoint=True).astype(np.int32)
    mask = rng.random(shape) < edge_share
    x[mask] = rng.choice(LIMB_EDGES, int(mask.sum()))
    return x


@settings(max_examples=80, deadline=None)
@given(m=st.integers(1, 6), k=st.integers(1, 400), n=st.integers(1, 6),
       seed=st.integers(0, 2 ** 32 - 1), edge_share=st.sampled_from([0.0, 0.3, 1.0]))
def test_limb_matmul_against_definition(m, k, n, seed, edge_share):
    rng = np.random.default_rng(seed)
    a, b = edge_matrix(rng, (m, k), edge_share), edge_matrix(rng, (k, n), edge_share)
    assert ex_linalg.matmul_mod32(a, b).tolist() == plain_matmul(a, b).tolist()


def test_limb_matmul_extremes_and_chunking(monkeypatch):
    rng = np.random.default_rng(7)
    for fill in (INT32_MIN, INT32_MAX, -1):
        a = np.full((3, 257), fill, np.int32)
        assert ex_linalg.matmul_mod32(a, a.T.copy()).tolist() == plain_matmul(a, a.T).tolist()
    # the two-product path's bounds: at K = 128 a whole by b's signed digits sums to ±2^53
    # exactly (INT32_MIN by a digit of ±2^15: 32768 rounds down, 98304 up), and one more
    # term takes the three products, whose digits reach ±2^15 the same way
    whole = ex_linalg.WHOLE_A_UP_TO
    for k in (whole - 1, whole, whole + 1):
        for fa, fb in ((INT32_MIN, 32768), (INT32_MIN, -32768), (INT32_MIN, 98304),
                       (INT32_MIN + 1, -32767), (INT32_MAX, INT32_MAX), (INT32_MIN, INT32_MAX),
                       (98304, -98304)):
            a, b = np.full((2, k), fa, np.int32), np.full((k, 3), fb, np.int32)
            assert ex_linalg.matmul_mod32(a, b).tolist() == plain_matmul(a, b).tolist()
    a = rng.integers(INT32_MIN, INT32_MAX, (4, 50), dtype=np.int64, endpoint=True).astype(np.int32)
    b = rng.integers(INT32_MIN, INT32_MAX, (50, 3), dtype=np.int64, endpoint=True).astype(np.int32)
    monkeypatch.setattr(ex_linalg, "LIMB_CHUNK", 7)
    assert ex_linalg.matmul_mod32(a, b).tolist() == plain_matmul(a, b).tolist()


def test_limb_matmul_keeps_no_result_in_its_scratch_and_each_thread_its_own():
    """A thread reuses its last room for its next product of that shape (KEEP_BYTES): no
    result aliases it, shapes alternate freely (both paths), and threads keep their own."""
    from concurrent.futures import ThreadPoolExecutor
    rng = np.random.default_rng(11)
    shapes = [(32, 40, 36), (32, 129, 36), (20, 40, 36)]
    pairs = [(edge_matrix(rng, (m, k), 0.3), edge_matrix(rng, (k, n), 0.3)) for m, k, n in shapes]
    wants = [plain_matmul(a, b).tolist() for a, b in pairs]
    first = ex_linalg.matmul_mod32(*pairs[0])
    for _ in range(2):
        for (a, b), want in zip(pairs, wants):
            assert ex_linalg.matmul_mod32(a, b).tolist() == want
    assert first.tolist() == wants[0]  # the later products of its shape left it alone
    a, b = edge_matrix(rng, (96, 100), 0.3), edge_matrix(rng, (100, 96), 0.3)
    want = plain_matmul(a, b).tolist()
    with ThreadPoolExecutor(4) as pool:  # one shape: a room shared by threads would be torn
        got = list(pool.map(lambda _: ex_linalg.matmul_mod32(a, b).tolist(), range(40)))
    assert got == [want] * 40


def test_limb_matmul_beyond_2_to_21():
    """An inner dimension past the float64-exact bound is chunked; checked mod 2^64 in uint64."""
    k = (1 << 21) + 3
    rng = np.random.default_rng(1)
    a = rng.integers(INT32_MIN, INT32_MAX, (1, k), dtype=np.int64, endpoint=True).astype(np.int32)
    b = rng.integers(INT32_MIN, INT32_MAX, (k, 1), dtype=np.int64, endpoint=True).astype(np.int32)
    a[0, :5] = INT32_MIN
    b[:5, 0] = INT32_MIN
    want = (a.astype(np.int64).astype(np.uint64)[0] * b.astype(np.int64).astype(np.uint64)[:, 0]).sum(
        dtype=np.uint64)
    assert int(ex_linalg.matmul_mod32(a, b)[0, 0]) == wrap32(int(want))


@settings(max_examples=60, deadline=None)
@given(m=st.integers(1, 40), k=st.integers(1, 40), n=st.integers(1, 40),
       seed=st.integers(0, 2 ** 32 - 1), edge_share=st.sampled_from([0.0, 0.3, 1.0]))
def test_both_matmul_paths_give_the_definition(m, k, n, seed, edge_share):
    """The kernel picks numpy's uint32 loop or the limbs by shape (uses_limbs); whichever
    it picks, and the other one too, gives the wrapped exact product."""
    rng = np.random.default_rng(seed)
    a, b = edge_matrix(rng, (m, k), edge_share), edge_matrix(rng, (k, n), edge_share)
    want = plain_matmul(a, b).tolist()
    assert KERNELS_BY_NAME["matmul"].fn(2, a, b).tolist() == want
    assert ex_linalg.matmul_mod32(a, b).tolist() == want


def test_the_matmul_kernel_takes_each_path(monkeypatch):
    """Shapes either side of the rule reach the path they should (the limbs are counted):
    a cube of 31 is the last the loop takes (31^3 < LIMBS_FROM ≤ 32^3), 32 the first for
    limbs; [1000, 12]·[12, 12] is the last by the ratio (144,000 ≤ 6·24,144), [1000, 13]·[13,
    13] the first; a skinny product of any length stays on the loop (issue 35: gradient
    descent's X·w)."""
    seen = []
    real = ex_linalg.matmul_mod32
    monkeypatch.setattr(ex_linalg, "matmul_mod32", lambda a, b: seen.append(a.shape) or real(a, b))
    assert 31 ** 3 < ex_linalg.LIMBS_FROM <= 32 ** 3
    shapes = ((31, 31, 31), (32, 32, 32), (1000, 12, 12), (1000, 13, 13), (20000, 3, 1),
              (1, 5000, 3))
    for m, k, n in shapes:
        a = np.full((m, k), INT32_MIN, np.int32)
        b = np.full((k, n), INT32_MIN + 1, np.int32)
        assert ex_linalg.matmul(2, a, b).tolist() == plain_matmul(a, b).tolist()
    assert seen == [(32, 32), (1000, 13)]


@SETTINGS
@given(a=arrays((6,)), b=arrays((6,), st.one_of(st.sampled_from([0, -1, 1]), values)))
def test_tdiv_with_and_without_zero_divisors(a, b):
    """The quotient of the zero-free fast path equals the general one's, element by element;
    a zero anywhere in b takes the general path, and x/0 = 0."""
    from bark_vm.executor.ints import tdiv
    got = tdiv(a, b).tolist()
    for x, y, q in zip(a.tolist(), b.tolist(), got):
        want = 0 if y == 0 else abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        assert q == want
    nonzero = np.where(b == 0, 1, b)
    assert tdiv(a, nonzero).tolist() == [q if y else x for x, y, q in
                                         zip(a.tolist(), b.tolist(), got)]


def test_matmul_large_is_fast_and_exact():
    rng = np.random.default_rng(3)
    a = rng.integers(INT32_MIN, INT32_MAX, (256, 256), dtype=np.int64, endpoint=True).astype(np.int32)
    b = rng.integers(INT32_MIN, INT32_MAX, (256, 256), dtype=np.int64, endpoint=True).astype(np.int32)
    got = ex_linalg.matmul_mod32(a, b)
    assert np.array_equal(got, np.matmul(a, b))  # numpy's int32 matmul wraps (slow but right)


@SETTINGS
@given(x=arrays())
def test_transpose_matches_reference(x):
    same("transpose", 2, [x])


# --- reductions -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["tensor_sum", "tensor_mean", "tensor_max", "tensor_min"])
@SETTINGS
@given(x=arrays(), axis=st.one_of(st.none(), st.integers(0, 4)))
def test_reductions_match_reference(name, x, axis):
    same(name, 2, [x], {"axis": axis} if axis is not None else {})


def test_mean_is_exact_before_dividing():
    x = np.array([INT32_MAX, INT32_MAX, INT32_MIN + 1], np.int32)
    assert KERNELS_BY_NAME["tensor_mean"].fn(0, x).tolist() == [(2 ** 31 - 1) // 3]
    x = np.array([INT32_MIN, INT32_MIN + 1], np.int32)
    assert KERNELS_BY_NAME["tensor_mean"].fn(0, x).tolist() == [-(2 ** 31 - 1)]  # tdiv(−2^32+1, 2)


# --- neural-net kernels ---------------------------------------------------------------------
@st.composite
def conv_cases(draw):
    cin = draw(st.integers(1, 3))
    h, w = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    x_shape = draw(st.sampled_from([(h, w), (cin, h, w), (cin, h, w), (h,)]))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    cout = draw(st.integers(1, 3))
    kcin = cin if draw(st.integers(0, 5)) else draw(st.integers(1, 3))
    k_shape = draw(st.sampled_from([(kh, kw), (cout, kcin, kh, kw), (cout, kcin, kh, kw), (kh,)]))
    params = {"stride": draw(st.integers(0, 3)), "padding": draw(st.integers(0, 2))}
    return draw(arrays(x_shape)), draw(arrays(k_shape)), params


@SETTINGS
@given(case=conv_cases())
def test_conv2d_matches_reference(case):
    x, k, params = case
    same("conv2d", 2, [x, k], params)


@pytest.mark.parametrize("name", ["maxpool2d", "avgpool2d"])
@SETTINGS
@given(x=st.one_of(arrays(rank=2), arrays(rank=3), arrays(rank=1)),
       k=st.integers(1, 3), s=st.one_of(st.none(), st.integers(1, 3)))
def test_pools_match_reference(name, x, k, s):
    same(name, 2, [x], {"kernel_size": k, "stride": s})


@SETTINGS
@given(x=st.one_of(arrays(), arrays(elems=small_values)), q=quantres)
def test_layernorm_matches_reference(x, q):
    same("layernorm", q, [x])


def test_layernorm_vector_and_paths():
    ln = KERNELS_BY_NAME["layernorm"].fn
    assert ln(1, np.array([10, 20, 30, 40], np.int32)).tolist() == [-13, -4, 4, 13]
    big = np.array([[INT32_MIN, INT32_MAX, 0, -1, 7]] * 3, np.int32)     # Python-int path
    same("layernorm", 9, [big])
    long_line = np.arange(-500, 500, dtype=np.int32).reshape(2, 500)     # int64 path
    same("layernorm", 3, [long_line])


@st.composite
def batchnorm_cases(draw):
    shape = draw(shapes)
    ops = []
    for k in range(5):
        kind = draw(st.sampled_from(["same", "same", "one", "any"])) if k else "same"
        s = {"same": shape, "one": (1,), "any": draw(shapes)}[kind]
        ops.append(draw(arrays(s)))
    rank0 = tuple(k for k, a in enumerate(ops) if a.shape == (1,) and draw(st.booleans()))
    return ops, draw(quantres), rank0


@SETTINGS
@given(case=batchnorm_cases())
def test_batchnorm_matches_reference(case):
    ops, q, rank0 = case
    same("batchnorm", q, ops, rank0=rank0)


# --- shape ops ------------------------------------------------------------------------------
@SETTINGS
@given(x=arrays(), target=shapes, exact=st.booleans())
def test_reshape_matches_reference(x, target, exact):
    if exact:
        target = (x.size,) if len(target) == 1 else (1, x.size)
    same("reshape", 2, [x], {"shape": target})


@SETTINGS
@given(x=arrays(), axis=st.integers(0, 4), sections=st.integers(1, 4), data=st.data())
def test_split_matches_reference(x, axis, sections, data):
    index = data.draw(st.integers(0, sections - 1))
    same("split", 2, [x], {"axis": axis, "sections": sections, "index": index})


@st.composite
def concat_cases(draw):
    a = draw(arrays())
    axis = draw(st.integers(0, 4))
    b_shape = list(a.shape)
    if axis < a.ndim:
        b_shape[axis] = draw(dims)
    if not draw(st.integers(0, 5)):
        b_shape = list(draw(shapes))
    return a, draw(arrays(tuple(b_shape))), axis


@SETTINGS
@given(case=concat_cases())
def test_concat_matches_reference(case):
    a, b, axis = case
    same("concat", 2, [a, b], {"axis": axis})


# --- coverage of the table ------------------------------------------------------------------
def test_every_compute_opcode_has_a_kernel():
    assert set(COMPUTE_MNEMONICS) == set(KERNELS_BY_NAME)
    assert len(KERNELS) == 33
    for number, kernel in KERNELS.items():
        assert BY_MNEMONIC[kernel.name].number == number
        assert BY_NAME[kernel.name].kind == "both"


def test_differential_tests_cover_every_compute_opcode():
    covered = set(BINARY) | {"not", "relu", "sigmoid", "tanh", "softmax", "matmul", "transpose",
                             "tensor_sum", "tensor_mean", "tensor_max", "tensor_min", "conv2d",
                             "maxpool2d", "avgpool2d", "layernorm", "batchnorm", "reshape",
                             "split", "concat"}
    assert covered == set(COMPUTE_MNEMONICS)


# --- whole programs -------------------------------------------------------------------------
def op(name, dst, *srcs, imm=0, level=1, flags=0):
    srcs = tuple(srcs) + (0,) * (4 - len(srcs))
    return Instr(BY_MNEMONIC[name].number, dst, srcs, imm, level, flags)


def module(instrs, outputs, version=2):
    m = Module(version, tuple(instrs) + (Instr(ir.RETURN, outputs[0]),), tuple(outputs))
    ir.validate_module(m)
    return m


def test_program_matmul_relu_with_consts():
    m = module([
        Instr(ir.PARAM, 0), Instr(ir.PARAM, 1),
        Instr(ir.CONST, 2, imm=ir.int16_imm(-3)),
        Instr(ir.SYNC, 0, level=1),
        op("matmul", 3, 0, 1),
        op("scalar_mul", 4, 3, 2),
        Instr(ir.SYNC, 0, level=2),
        op("relu", 5, 4, level=2),
    ], (5, 3, 5))
    a = np.array([[1, -2], [3, 4]], np.int32)
    b = np.array([[5, 6], [7, 8]], np.int32)
    out = execute(m, [a, b], 2)
    assert [o.tolist() for o in out] == [[[27, 30], [0, 0]], (a @ b).tolist(), [[27, 30], [0, 0]]]
    assert all(o.dtype == np.int32 for o in out)


def test_program_consts_v1_and_v2():
    prog = [Instr(ir.PARAM, 0), Instr(ir.CONST, 1, imm=0), op("add", 2, 0, 1)]
    assert execute(module(prog, (2,), version=1), [np.array([4], np.int32)], 0)[0].tolist() == [4]
    for literal in (-32768, -1, 0, 1, 32767):
        prog = [Instr(ir.PARAM, 0), Instr(ir.CONST, 1, imm=ir.int16_imm(literal)), op("add", 2, 0, 1)]
        out = execute(module(prog, (2, 1)), [np.array([[10, 20]], np.int32)], 0)
        assert out[0].tolist() == [[10 + literal, 20 + literal]]
        assert out[1].shape == (1,) and out[1].tolist() == [literal]


def test_program_immediates_reach_the_kernels():
    x = np.arange(-12, 12, dtype=np.int32).reshape(2, 3, 4) * 1000003
    prog = [
        Instr(ir.PARAM, 0),
        op("tensor_sum", 1, 0, imm=2),                    # axis 1
        op("softmax", 2, 0, imm=0),                       # last axis
        op("concat", 3, 0, 0, imm=3),                     # axis 2
        op("reshape", 4, 0, 4, 6, 0xFFFF, imm=0xFFFF),
        op("split", 5, 0, 2, 3, 1),                       # 3 sections of length 4: refused
    ]
    with pytest.raises(WorkerError) as err:
        execute(module(prog, (5,)), [x], 2)
    assert err.value.code == "SHAPE_MISMATCH"
    prog[-1] = op("split", 5, 0, 2, 2, 1)                 # axis 2, 2 sections, index 1
    prog += [op("maxpool2d", 6, 0, imm=2 | 1 << 8), op("avgpool2d", 7, 0, imm=2 | 2 << 8),
             op("transpose", 8, 0),
             op("tensor_mean", 9, 0, imm=0)]
    out = execute(module(prog, tuple(range(1, 10))), [x], 2)
    want = [
        reference("tensor_sum", 2, [x], {"axis": 1}),
        reference("softmax", 2, [x], {}),
        reference("concat", 2, [x, x], {"axis": 2}),
        reference("reshape", 2, [x], {"shape": (4, 6)}),
        reference("split", 2, [x], {"axis": 2, "sections": 2, "index": 1}),
        reference("maxpool2d", 2, [x], {"kernel_size": 2, "stride": 1}),
        reference("avgpool2d", 2, [x], {"kernel_size": 2, "stride": 2}),
        reference("transpose", 2, [x], {}),
        reference("tensor_mean", 2, [x], {}),
    ]
    for got, ref in zip(out, want):
        assert ref[0] == "ok" and got.shape == ref[1] and tuple(got.reshape(-1).tolist()) == ref[2]


def test_program_conv2d_and_batchnorm():
    x = np.arange(2 * 5 * 5, dtype=np.int32).reshape(2, 5, 5) - 25
    k = np.array([1, -2, 3, 0, 5, -1, 2, 2] * 3, np.int32).reshape(3, 2, 2, 2)
    prog = [Instr(ir.PARAM, 0), Instr(ir.PARAM, 1),
            op("conv2d", 2, 0, 1, imm=2 | 1 << 8), op("conv2d", 3, 0, 1, imm=0)]
    out = execute(module(prog, (2, 3)), [x, k], 2)
    for got, params in zip(out, ({"stride": 2, "padding": 1}, {})):
        ref = reference("conv2d", 2, [x, k], params)
        assert got.shape == ref[1] and tuple(got.reshape(-1).tolist()) == ref[2]
    ops = [np.array([[100, -250], [INT32_MIN, 7]], np.int32), np.array([10], np.int32),
           np.array([[4, 0], [-9, 250]], np.int32), np.array([3], np.int32),
           np.array([[1, 2], [3, INT32_MAX]], np.int32)]
    prog = [Instr(ir.PARAM, i) for i in range(5)]
    prog.append(Instr(ir.BATCHNORM, 5, (0, 1, 2, 3), 4, 1, 1))
    got = execute(module(prog, (5,)), ops, 2)[0]
    ref = reference("batchnorm", 2, ops, {})
    assert got.shape == ref[1] and tuple(got.reshape(-1).tolist()) == ref[2]


@pytest.mark.parametrize("inputs, prog, code", [
    ([np.zeros((2, 3), np.int32), np.zeros((2, 2), np.int32)],
     [Instr(ir.PARAM, 0), Instr(ir.PARAM, 1), op("matmul", 2, 0, 1)], "SHAPE_MISMATCH"),
    ([np.zeros((2, 3), np.int32), np.zeros((3, 2), np.int32)],
     [Instr(ir.PARAM, 0), Instr(ir.PARAM, 1), op("add", 2, 0, 1)], "SHAPE_MISMATCH"),
    ([np.zeros((2, 3), np.int32)], [Instr(ir.PARAM, 0), op("tensor_sum", 1, 0, imm=4)],
     "SHAPE_MISMATCH"),
    ([np.zeros((6,), np.int32)], [Instr(ir.PARAM, 0), op("reshape", 1, 0, 4, 0xFFFF, 0xFFFF,
                                                         imm=0xFFFF)], "SHAPE_MISMATCH"),
    ([np.zeros((2, 3), np.int32)], [Instr(ir.PARAM, 0), op("sigmoid", 1, 0)], "EXEC_FAILED"),
])
def test_program_refusals(inputs, prog, code):
    with pytest.raises(WorkerError) as err:
        execute(module(prog, (len(prog) - 1,)), inputs, 12)
    assert err.value.code == code


def test_program_never_leaks_other_exceptions():
    bad = Module(2, (Instr(ir.PARAM, 0), op("relu", 1, 7), Instr(ir.RETURN, 1)), (1,))
    with pytest.raises(WorkerError) as err:
        execute(bad, [np.zeros(2, np.int32)], 0)
    assert err.value.code == "EXEC_FAILED"
    with pytest.raises(WorkerError) as err:
        execute(module([Instr(ir.PARAM, 0)], (0,)), [np.zeros(2, np.float64)], 0)
    assert err.value.code == "EXEC_FAILED"
    with pytest.raises(WorkerError) as err:
        execute(module([Instr(ir.PARAM, 0)], (0,)), [], 0)
    assert err.value.code == "EXEC_FAILED"


def test_a_plan_fails_where_the_instruction_loop_would():
    """Failures the module's text decides (an undefined read) wait for their instruction: a
    shape refusal before one is still the answer, and one before a shape refusal wins."""
    from bark_vm.executor.interpreter import PLANS, plan
    x = np.zeros((2, 3), np.int32)
    shape_first = Module(2, (Instr(ir.PARAM, 0), op("matmul", 1, 0, 0), op("relu", 2, 9),
                             Instr(ir.RETURN, 2)), (2,))
    undefined_first = Module(2, (Instr(ir.PARAM, 0), op("relu", 1, 9), op("matmul", 2, 0, 0),
                                 Instr(ir.RETURN, 2)), (2,))
    for m, code, detail in ((shape_first, "SHAPE_MISMATCH", "matmul [2, 3] x [2, 3]"),
                            (undefined_first, "EXEC_FAILED", "reads undefined value 9")):
        for _ in range(2):  # the second run is the kept plan's
            with pytest.raises(WorkerError) as err:
                execute(m, [x], 2)
            assert err.value.code == code and detail in err.value.detail
        assert PLANS.of(m, plan) is PLANS.of(m, plan)


def test_an_unvalidated_param_after_an_op_still_binds_its_input():
    """The plan counts PARAMs apart from the ops' fields (a module the executor is handed
    directly need not have passed validation's PARAM-first rule)."""
    m = Module(2, (Instr(ir.PARAM, 0), op("relu", 1, 0), Instr(ir.PARAM, 2),
                   op("add", 3, 1, 2), Instr(ir.RETURN, 3)), (3,))
    x, y = np.array([-5, 7], np.int32), np.array([1, 1], np.int32)
    assert execute(m, [x, y], 0)[0].tolist() == [1, 8]


def test_a_kept_plan_gives_the_same_answer_again():
    """CONST registers are shared by every run of a plan: nothing may write into them."""
    prog = [Instr(ir.PARAM, 0), Instr(ir.CONST, 1, imm=7), op("add", 2, 0, 1),
            op("mul", 3, 2, 1)]
    m = module(prog, (3, 1))
    x = np.array([[1, -2], [INT32_MAX, INT32_MIN]], np.int32)
    first = [r.tolist() for r in execute(m, [x], 0)]
    assert first == [[[56, 35], [wrap32((INT32_MAX + 7) * 7), wrap32((INT32_MIN + 7) * 7)]], [7]]
    assert [r.tolist() for r in execute(m, [x], 0)] == first


def test_program_int8_inputs_become_int32():
    prog = [Instr(ir.PARAM, 0), Instr(ir.PARAM, 1), op("mul", 2, 0, 1)]
    out = execute(module(prog, (2,)), [np.array([127, -128], np.int8), np.array([127, 127], np.int8)], 0)
    assert out[0].dtype == np.int32 and out[0].tolist() == [16129, -16256]


# --- isolation ------------------------------------------------------------------------------
def test_worker_never_imports_maned():
    code = ("import sys, bark_vm, bark_vm.executor, bark_vm.executor.interpreter\n"
            "bad = [m for m in sys.modules if m == 'maned' or m.startswith('maned.')]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
