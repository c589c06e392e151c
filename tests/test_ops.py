"""The ops against golden vectors (language.md §4.5, TV-10, TV-14, wire.md §8) and refusals.

Cases are data: (op, operands, params, quantres, expected shape, expected raw data). Operands are
written as nested lists (an int is rank 0); expected data is the RAW op result, before wrap32.
"""
import inspect

import pytest
from hypothesis import given, settings, strategies as st

from maned.numeric.int32 import INT32_MAX, INT32_MIN, wrap32
from maned.ops.linalg import bareiss
from maned.catalogue import OPS, OpContext
from maned.failures import OpError
from maned.interp.kernels import KERNELS
from maned.tensor import Tensor


def tensor(value) -> Tensor:
    """A Tensor from an int (rank 0) or nested lists (row-major)."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, int):
        return Tensor.scalar(value)
    shape, level = [], [value]
    while isinstance(level[0], list):
        shape.append(len(level[0]))
        level = [x for sub in level for x in sub]
    return Tensor(tuple(shape), tuple(level))


def run(op, operands, params=None, q=2):
    fn = KERNELS[op]
    return fn(OpContext(q), *(tensor(v) for v in operands), **(params or {}))


M22 = [[10, 20], [30, 40]]
R23 = [[1, 2, 3], [4, 5, 6]]
A = [[600, 200], [100, 400]]

GOLDEN = [
    # language.md §4.5 worked checks
    ("matmul", [M22, M22], {}, 2, (2, 2), [700, 1000, 1500, 2200]),
    ("tensor_sum", [R23], {"axis": 0}, 2, (1, 3), [5, 7, 9]),
    ("tensor_sum", [R23], {"axis": 1}, 2, (2, 1), [6, 15]),
    ("tensor_mean", [R23], {"axis": 0}, 2, (1, 3), [2, 3, 4]),
    ("tensor_max", [R23], {"axis": 1}, 2, (2, 1), [3, 6]),
    ("tensor_sum", [R23], {}, 2, (1,), [21]),
    ("tensor_mean", [R23], {}, 2, (1,), [3]),
    ("tensor_min", [R23], {"axis": 0}, 2, (1, 3), [1, 2, 3]),
    ("determinant", [A], {}, 2, (1,), [220000]),
    ("adjugate", [A], {}, 2, (2, 2), [400, -200, -100, 600]),
    ("gt", [M22, [[99, 1], [7, 77]]], {}, 2, (2, 2), [0, 1, 1, 0]),
    ("lt", [M22, [[99, 1], [7, 77]]], {}, 2, (2, 2), [1, 0, 0, 1]),
    ("eq", [M22, M22], {}, 2, (2, 2), [1, 1, 1, 1]),
    ("ge", [M22, 20], {}, 2, (2, 2), [0, 1, 1, 1]),
    ("le", [15, M22], {}, 2, (2, 2), [0, 1, 1, 1]),
    ("ne", [M22, [20]], {}, 2, (2, 2), [1, 0, 1, 1]),
    # TV-11, TV-12
    ("matmul", [R23, [[1, 0], [0, 1], [1, 1]]], {}, 2, (2, 2), [4, 5, 10, 11]),
    ("transpose", [R23], {}, 2, (3, 2), [1, 4, 2, 5, 3, 6]),
    ("div", [[[10000, 20000], [30000, 10000]], [[100, 100], [100, 100]]], {}, 2, (2, 2),
     [100, 200, 300, 100]),
    # TV-14 exact solve
    ("reshape", [[220000]], {"rows": 1, "cols": 1}, 2, (1, 1), [220000]),
    ("matmul", [[[1], [1]], [[220000]]], {}, 2, (2, 1), [220000, 220000]),
    ("matmul", [[[400, -200], [-100, 600]], [[800], [900]]], {}, 2, (2, 1), [140000, 460000]),
    ("scalar_mul", [[[140000], [460000]], 100], {}, 2, (2, 1), [14000000, 46000000]),
    ("div", [[[14000000], [46000000]], [[220000], [220000]]], {}, 2, (2, 1), [63, 209]),
    ("matmul", [A, [[63], [209]]], {}, 2, (2, 1), [79600, 89900]),
    ("div", [[[140000], [460000]], [[220000], [220000]]], {}, 2, (2, 1), [0, 2]),
    # wire.md §8 kernel vectors
    ("softmax", [[[1000, 2000], [3000, 4000]]], {"axis": 0}, 3, (2, 2), [119, 119, 881, 881]),
    ("sigmoid", [[0, 1000, 2000, -2000]], {}, 3, (4,), [500, 731, 881, 119]),
    ("maxpool2d", [[list(range(r, r + 4)) for r in (1, 5, 9, 13)]],
     {"kernel_size": 2, "stride": 2}, 2, (2, 2), [6, 8, 14, 16]),
    ("conv2d", [[[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[1, 0], [0, 1]]], {"stride": 1, "padding": 0},
     2, (1, 2, 2), [6, 8, 12, 14]),
    ("conv2d", [[[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[1, 0], [0, 1]]], {}, 2, (1, 2, 2),
     [6, 8, 12, 14]),
    ("concat", [[[1, 2], [3, 4]], [[5, 6], [7, 8]]], {"axis": 1}, 2, (2, 4),
     [1, 2, 5, 6, 3, 4, 7, 8]),
    ("layernorm", [[10, 20, 30, 40]], {}, 1, (4,), [-13, -4, 4, 13]),
    # TV-10 constructors
    ("eye", [4], {}, 2, (4, 4), [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]),
    ("diag", [[2, 3, 5]], {}, 2, (3, 3), [2, 0, 0, 0, 3, 0, 0, 0, 5]),
    ("range", [6], {}, 2, (6,), [0, 1, 2, 3, 4, 5]),
    ("tridiag", [5, 1, 2, 1], {}, 2, (5, 5),
     [2, 1, 0, 0, 0, 1, 2, 1, 0, 0, 0, 1, 2, 1, 0, 0, 0, 1, 2, 1, 0, 0, 0, 1, 2]),
    ("tridiag", [3, 7, 2, 9], {}, 2, (3, 3), [2, 9, 0, 7, 2, 9, 0, 7, 2]),
    ("zeros", [2, 3], {}, 2, (2, 3), [0] * 6),
    ("ones", [2, 2], {}, 2, (2, 2), [1] * 4),
    ("full", [2, 2, 7], {}, 2, (2, 2), [7] * 4),
    # edge cases: division, abs, overflow is left raw for the interpreter's wrap
    ("div", [[7, -7, 7, -7, 5], [2, 2, -2, -2, 0]], {}, 2, (5,), [3, -3, -3, 3, 0]),
    ("div", [INT32_MIN, -1], {}, 2, (), [2 ** 31]),
    ("abs", [[INT32_MIN, -5, 5]], {}, 2, (3,), [2 ** 31, 5, 5]),
    ("add", [INT32_MAX, 1], {}, 2, (), [2 ** 31]),
    ("mul", [[INT32_MAX], [INT32_MAX]], {}, 2, (1,), [INT32_MAX ** 2]),
    ("tensor_sum", [[INT32_MAX, INT32_MAX]], {}, 2, (1,), [2 * INT32_MAX]),
    # R4 broadcast shapes
    ("add", [1, 2], {}, 2, (), [3]),
    ("add", [1, [2]], {}, 2, (1,), [3]),
    ("sub", [[5], 2], {}, 2, (1,), [3]),
    ("sub", [1, [[1, 2], [3, 4]]], {}, 2, (2, 2), [0, -1, -2, -3]),
    ("mul", [[[1, 2]], [3]], {}, 2, (1, 2), [3, 6]),
    # R6 logic
    ("and", [[0, 3, 0, -1], [0, 0, 5, 7]], {}, 2, (4,), [0, 0, 0, 1]),
    ("or", [[0, 3, 0, -1], [0, 0, 5, 7]], {}, 2, (4,), [0, 1, 1, 1]),
    ("xor", [[0, 3, 0, -1], [0, 0, 5, 7]], {}, 2, (4,), [0, 1, 1, 0]),
    ("not", [[0, 3, -1]], {}, 2, (3,), [1, 0, 0]),
    ("and", [[2, 0], 1], {}, 2, (2,), [1, 0]),
    # scalar_mul either order
    ("scalar_mul", [3, [[1, 2], [3, 4]]], {}, 2, (2, 2), [3, 6, 9, 12]),
    ("scalar_mul", [[-2], 4], {}, 2, (1,), [-8]),
    ("scalar_mul", [5, 6], {}, 2, (), [30]),
    # transpose of higher ranks
    ("transpose", [[[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]]], {}, 2, (2, 3, 2),
     [1, 4, 2, 5, 3, 6, 7, 10, 8, 11, 9, 12]),
    # argmax / argmin: flat index, lowest on ties
    ("argmax", [[[1, 9], [9, 2]]], {}, 2, (1,), [1]),
    ("argmin", [[[4, 0], [0, 0]]], {}, 2, (1,), [1]),
    ("argmax", [7], {}, 2, (1,), [0]),
    # activations
    ("relu", [[[-3, 0], [4, INT32_MIN]]], {}, 2, (2, 2), [0, 0, 4, 0]),
    ("sigmoid", [[-98, -71, 0, 98, 500, -500, 2000, -2000]], {}, 2, (8,),
     [27, 33, 50, 73, 99, 1, 100, 0]),
    ("sigmoid", [0], {}, 0, (), [1]),
    ("tanh", [[0, 100000, -100000, 50]], {}, 2, (4,), [0, 100, -100, 46]),
    ("softmax", [[[1000, 2000], [3000, 4000]]], {}, 3, (2, 2), [269, 731, 269, 731]),
    ("softmax", [[[1000, 2000], [3000, 4000]]], {"axis": 1}, 3, (2, 2), [269, 731, 269, 731]),
    ("softmax", [[0, 0, 0, 0]], {}, 2, (4,), [25, 25, 25, 25]),
    ("softmax", [5], {}, 2, (), [100]),
    # conv2d: channels, stride, padding
    ("conv2d", [[[1, 2], [3, 4]], [[1]]], {"padding": 1}, 2, (1, 4, 4),
     [0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 0]),
    ("conv2d", [[[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[1]]], {"stride": 2}, 2, (1, 2, 2),
     [1, 3, 7, 9]),
    ("conv2d", [[[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[1]]], {"stride": 0}, 2, (1, 3, 3),
     list(range(1, 10))),
    ("conv2d", [[[[1, 2], [3, 4]], [[10, 20], [30, 40]]], [[[[1]], [[1]]], [[[1]], [[-1]]]]],
     {}, 2, (2, 2, 2), [11, 22, 33, 44, -9, -18, -27, -36]),
    # pools
    ("avgpool2d", [[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, -16]]],
     {"kernel_size": 2}, 2, (2, 2), [3, 5, 11, 5]),
    ("avgpool2d", [[[-1, -2], [-2, -2]]], {"kernel_size": 2}, 2, (1, 1), [-1]),
    ("maxpool2d", [[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]]], {"kernel_size": 2, "stride": 1}, 2,
     (1, 2, 2), [5, 6, 8, 9]),
    # layernorm: constant line gives 0, rows are independent
    ("layernorm", [[[5, 5], [0, 10]]], {}, 2, (2, 2), [0, 0, -100, 100]),
    # batchnorm: tdiv(w32(w32(x−mean)·gamma), isqrt(w32(var·10^q))) + beta
    ("batchnorm", [[150, 50, -50], 50, 100, 2, 10], {}, 2, (3,), [12, 10, 8]),
    ("batchnorm", [[150], [50], [0], [2], [10]], {}, 2, (1,), [10]),
    ("batchnorm", [[150], [50], [-4], [2], [10]], {}, 2, (1,), [10]),
    ("batchnorm", [INT32_MIN, 1, 1, 1, INT32_MAX], {}, 0, (), [INT32_MAX + INT32_MAX]),
    # reshape / split / concat / slice
    ("reshape", [R23], {"shape": (3, 2)}, 2, (3, 2), [1, 2, 3, 4, 5, 6]),
    ("reshape", [R23], {"shape": (6,)}, 2, (6,), [1, 2, 3, 4, 5, 6]),
    ("reshape", [R23], {"shape": (1, 2, 1, 3)}, 2, (1, 2, 1, 3), [1, 2, 3, 4, 5, 6]),
    ("split", [R23], {"axis": 1, "sections": 3, "index": 2}, 2, (2, 1), [3, 6]),
    ("split", [R23], {"axis": 0, "sections": 2, "index": 1}, 2, (1, 3), [4, 5, 6]),
    ("split", [[1, 2, 3, 4]], {"sections": 2}, 2, (2,), [1, 2]),
    ("concat", [[[1, 2]], [[3, 4], [5, 6]]], {}, 2, (3, 2), [1, 2, 3, 4, 5, 6]),
    ("concat", [[1], [2, 3]], {"axis": 0}, 2, (3,), [1, 2, 3]),
    ("slice", [R23], {"axis": 1, "index": 2}, 2, (2,), [3, 6]),
    ("slice", [R23], {"axis": 0, "index": 1}, 2, (3,), [4, 5, 6]),
    ("slice", [[7, 8, 9]], {"axis": 0, "index": 1}, 2, (), [8]),
    # local-only unaries
    ("isqrt", [[0, 1, 15, 16, INT32_MAX]], {}, 2, (5,), [0, 1, 3, 4, 46340]),
    ("sqrt", [[200, 400, 0]], {}, 2, (3,), [141, 200, 0]),
    ("sqrt", [[2]], {}, 0, (1,), [1]),
    ("clip", [[-5, 0, 5, 50]], {"min": 0, "max": 10}, 2, (4,), [0, 0, 5, 10]),
    ("clip", [[-5, 50]], {"min": 0}, 2, (2,), [0, 50]),
    ("clip", [[-5, 50]], {"max": 0}, 2, (2,), [-5, 0]),
    # determinant / adjugate
    ("determinant", [[[7]]], {}, 2, (1,), [7]),
    ("determinant", [[[0, 1], [1, 0]]], {}, 2, (1,), [-1]),
    ("determinant", [[[2, 0, 0], [0, 3, 0], [0, 0, 4]]], {}, 2, (1,), [24]),
    ("determinant", [[[1, 2], [2, 4]]], {}, 2, (1,), [0]),
    ("adjugate", [[[5]]], {}, 2, (1, 1), [1]),
    ("adjugate", [[[1, 2, 3], [0, 1, 4], [5, 6, 0]]], {}, 2, (3, 3),
     [-24, 18, 5, 20, -15, -4, -5, 4, 1]),
]


@pytest.mark.parametrize("op, operands, params, q, shape, data", GOLDEN,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(GOLDEN)])
def test_golden(op, operands, params, q, shape, data):
    result = run(op, operands, params, q)
    assert (result.shape, list(result.data)) == (shape, data)


REFUSED = [
    ("add", [[1, 2], [1, 2, 3]], {}, 2),
    ("add", [[[1]], [[1, 2], [3, 4]]], {}, 2),          # [1x1] does not broadcast
    ("eq", [[1, 2], [[1, 2]]], {}, 2),
    ("scalar_mul", [[1, 2], [3, 4]], {}, 2),
    ("scalar_mul", [[[2]], [3, 4]], {}, 2),
    ("matmul", [[[1, 2]], [[1, 2]]], {}, 2),
    ("matmul", [[1, 2], [[1], [2]]], {}, 2),
    ("transpose", [[1, 2]], {}, 2),
    ("tensor_sum", [R23], {"axis": 2}, 2),
    ("tensor_max", [R23], {"axis": -1}, 2),
    ("tensor_mean", [5], {"axis": 0}, 2),
    ("softmax", [R23], {"axis": 2}, 2),
    ("sigmoid", [[1]], {}, 10),
    ("tanh", [[1]], {}, -1),
    ("softmax", [[1]], {}, 10),
    ("conv2d", [[1, 2, 3], [[1]]], {}, 2),
    ("conv2d", [[[1, 2], [3, 4]], [[1, 1, 1], [1, 1, 1], [1, 1, 1]]], {}, 2),
    ("conv2d", [[[[1]], [[2]]], [[1]]], {}, 2),              # 2 channels, 1-channel kernel
    ("conv2d", [[[1, 2], [3, 4]], [[1]]], {"padding": -1}, 2),
    ("maxpool2d", [[[1, 2], [3, 4]]], {}, 2),
    ("avgpool2d", [[[1, 2], [3, 4]]], {"kernel_size": 3}, 2),
    ("maxpool2d", [[[1, 2], [3, 4]]], {"kernel_size": 0}, 2),
    ("maxpool2d", [[1, 2, 3, 4]], {"kernel_size": 2}, 2),
    ("batchnorm", [[1, 2], [1, 2, 3], 1, 1, 1], {}, 2),
    ("reshape", [R23], {"rows": 4, "cols": 2}, 2),
    ("reshape", [R23], {"rows": 6}, 2),
    ("reshape", [R23], {}, 2),
    ("reshape", [R23], {"shape": (1, 1, 1, 2, 3)}, 2),
    ("reshape", [R23], {"shape": (6, 1), "rows": 6, "cols": 1}, 2),
    ("reshape", [[0] * 65535], {"shape": (65535,)}, 2),
    ("split", [R23], {"axis": 1, "sections": 2, "index": 0}, 2),
    ("split", [R23], {"axis": 0, "sections": 2, "index": 2}, 2),
    ("split", [R23], {"axis": 0, "sections": 0, "index": 0}, 2),
    ("split", [R23], {"axis": 2, "sections": 1, "index": 0}, 2),
    ("split", [R23], {"axis": 0}, 2),
    ("concat", [[[1, 2]], [[1, 2, 3]]], {}, 2),
    ("concat", [[1, 2], [[1, 2]]], {}, 2),
    ("concat", [1, 2], {}, 2),
    ("slice", [R23], {"axis": 0, "index": 2}, 2),
    ("slice", [R23], {"axis": 2, "index": 0}, 2),
    ("slice", [R23], {"axis": 0}, 2),
    ("slice", [5], {"axis": 0, "index": 0}, 2),
    ("isqrt", [[4, -1]], {}, 2),
    ("sqrt", [[-4]], {}, 2),
    ("clip", [[1]], {}, 2),
    ("clip", [[1]], {"min": 5, "max": 1}, 2),
    ("determinant", [[[1] * 9] * 9], {}, 2),
    ("determinant", [R23], {}, 2),
    ("adjugate", [[1, 2]], {}, 2),
    ("zeros", [0, 3], {}, 2),
    ("ones", [[2, 2], 2], {}, 2),
    ("full", [2, -1, 7], {}, 2),
    ("eye", [0], {}, 2),
    ("range", [-3], {}, 2),
    ("diag", [[[1, 2]]], {}, 2),
    ("tridiag", [0, 1, 2, 1], {}, 2),
]


@pytest.mark.parametrize("op, operands, params, q", REFUSED,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(REFUSED)])
def test_refused(op, operands, params, q):
    with pytest.raises(OpError):
        run(op, operands, params, q)


def test_determinant_refusal_names_n():
    with pytest.raises(OpError, match="9"):
        run("determinant", [[[1] * 9] * 9])


@pytest.mark.parametrize("spec", [op for op in OPS if op.kind in ("both", "local", "ctor")],
                         ids=lambda op: op.name)
def test_every_executable_registry_row_has_a_documented_function(spec):
    fn = KERNELS[spec.name]
    assert callable(fn) and fn.__doc__


def test_only_executable_rows_have_a_function():
    assert sorted(KERNELS) == sorted(op.name for op in OPS
                                     if op.kind in ("both", "local", "ctor"))


@pytest.mark.parametrize("spec", [op for op in OPS if op.name in KERNELS],
                         ids=lambda op: op.name)
def test_row_params_and_defaults_are_its_functions(spec):
    """The catalogue's object params and their defaults (read by the parser, the linter and
    lowering/compiled) are exactly the function's keyword parameters and defaults."""
    keywords = [p for p in inspect.signature(KERNELS[spec.name]).parameters.values()
                if p.default is not inspect.Parameter.empty]
    assert spec.defaults == tuple((p.name, p.default) for p in keywords)


def test_docs_ops_has_one_row_per_registry_op():
    from pathlib import Path
    doc = (Path(__file__).parents[1] / "docs" / "ops.md").read_text()
    catalogue = doc.split("## 4. Catalogue")[1].split("\n## ")[0]
    rows = [line.split("|")[1].strip().strip("`") for line in catalogue.splitlines()
            if line.startswith("| `")]
    assert sorted(rows) == sorted(op.name for op in OPS)


def test_every_wire_row_has_an_opcode():
    for spec in OPS:
        assert (spec.opcode is not None) == (spec.kind == "both"), spec.name


# properties of the exact linear algebra
small = st.integers(-50, 50)


def _leibniz(a):
    n = len(a)
    if n == 1:
        return a[0][0]
    return sum((-1) ** j * a[0][j] * _leibniz([row[:j] + row[j + 1:] for row in a[1:]])
               for j in range(n))


@settings(max_examples=60)
@given(st.integers(1, 5).flatmap(lambda n: st.lists(st.lists(small, min_size=n, max_size=n),
                                                      min_size=n, max_size=n)))
def test_bareiss_equals_cofactor_expansion_and_adjugate_inverts(a):
    assert bareiss(a) == _leibniz(a)
    adj = run("adjugate", [a]).rows()
    n = len(a)
    product = [[sum(a[i][k] * adj[k][j] for k in range(n)) for j in range(n)] for i in range(n)]
    det = bareiss(a)
    assert product == [[det if i == j else 0 for j in range(n)] for i in range(n)]


@settings(max_examples=60)
@given(st.lists(st.integers(INT32_MIN, INT32_MAX), min_size=1, max_size=12))
def test_wrapped_op_results_land_in_int32(values):
    result = run("mul", [values, values])
    assert all(INT32_MIN <= wrap32(v) <= INT32_MAX for v in result.data)
    assert run("tensor_sum", [values]).data == (sum(values),)
