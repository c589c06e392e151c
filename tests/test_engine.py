"""The local exact engine (DESIGN §14) against the reference it must equal: every example,
and hypothesis's random flows over every op family, rank-0 values, int32's edges and bad
operands, give the same outputs and the same diagnostics on both; what each node runs on is
the plan's, checked; `--verify` of a local run compares the engine with the reference."""
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import maned
from maned.engine.plan import step_of
from maned.graph.flow_graph import Node

from support.scripts import preamble

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.mnd"))
NEEDS_INPUTS = {"matmul_relu.mnd": {"x": "2x2:1,2,3,4", "w": "2x2:5,6,7,8",
                                    "bias": "2x2:0,0,-100,0"}}


def _seen(report: maned.Report) -> tuple:
    """What a user sees of a run, but for the verdict."""
    return (report.exit_code, report.flows, report.prints, report.sweeps,
            [(d.code, d.message) for d in report.diagnostics])


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_gives_the_references_outputs_and_verify_passes(path, tmp_path):
    inputs = NEEDS_INPUTS.get(path.name)
    engine = maned.run(path, inputs=inputs, verify=True, out_dir=tmp_path, reference=False)
    reference = maned.run(path, inputs=inputs, reference=True, out_dir=tmp_path)
    assert _seen(engine) == _seen(reference)
    if engine.exit_code == 0:
        assert engine.verify.status == "PASS" and engine.verify.compared


# --- random flows ---------------------------------------------------------------------------
EDGES = st.sampled_from([0, 1, -1, 2, 7, -100, 2 ** 31 - 1, -2 ** 31, 2 ** 30, 46341])
VALUES = st.one_of(st.integers(-1000, 1000), EDGES)
SHAPES = st.one_of(st.just(()), st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple))
# (object parameters, op): a call is `operands {params} op`
BINARY = [("", op) for op in ("add", "sub", "mul", "div", "gt", "lt", "eq", "ge", "le", "ne",
                              "and", "or", "xor", "scalar_mul", "matmul", "concat")] + [
    ("{axis: 1}", "concat")]
UNARY = [("", op) for op in ("not", "relu", "sigmoid", "tanh", "softmax", "layernorm",
                             "transpose", "tensor_sum", "tensor_max")] + [
    ("{axis: 1}", "softmax"), ("{axis: 0}", "tensor_sum"), ("{axis: 1}", "tensor_mean"),
    ("{axis: 2}", "tensor_min"), ("{shape: [2, 2]}", "reshape"),
    ("{rows: 1, cols: 4}", "reshape"), ("{axis: 1, sections: 2}", "split"),
    ("{axis: 0, sections: 1, index: 0}", "split"), ("{axis: 9}", "tensor_sum"),
    ("{kernel_size: 0}", "maxpool2d"),
    # the reference's alone, between the executor's
    ("", "abs"), ("", "argmax"), ("{min: -5, max: 5}", "clip")]


def _literal(shape: tuple[int, ...], values: list[int]) -> str:
    if not shape:
        return str(values[0])
    step = len(values) // shape[0]
    return "[" + ",".join(_literal(shape[1:], values[i * step:(i + 1) * step])
                          for i in range(shape[0])) + "]"


@st.composite
def inputs(draw):
    shape = draw(SHAPES)
    size = 1
    for d in shape:
        size *= d
    return shape, draw(st.lists(VALUES, min_size=size, max_size=size))


@st.composite
def flows(draw):
    """A script: three inputs, a flow of random ops over them and their results."""
    names = ["a", "b", "c"]
    lines, body = [], []
    for name in names:
        shape, values = draw(inputs())
        lines.append(f"in::{name} = {_literal(shape, values)};")
    for k in range(draw(st.integers(1, 6))):
        binary = draw(st.booleans())
        operands = draw(st.lists(st.sampled_from(names), min_size=1 + binary,
                                 max_size=1 + binary))
        params, op = draw(st.sampled_from(BINARY if binary else UNARY))
        body.append(f"    {' '.join(operands)} {params} {op} r{k} =")
        names.append(f"r{k}")
    returned = ", ".join(names[3:])
    return (preamble(2 ** 31 - 1, -2 ** 31, draw(st.integers(0, 3))) + "\n".join(lines)
            + "\ncalc::lambda_flow f(a, b, c) {\n" + "\n".join(body) + f"\n}} return {returned};\n")


@settings(max_examples=150, deadline=None)
@given(flows())
def test_a_random_flow_gives_the_references_outputs_and_failures(source):
    engine = maned.run(source=source, verify=True, reference=False)
    reference = maned.run(source=source, reference=True)
    assert _seen(engine) == _seen(reference), source
    if engine.exit_code == 0:
        assert engine.verify.status == "PASS"


def test_rank0_results_keep_the_references_form_through_mixed_nodes():
    """A rank-0 value through the executor's kernels and the reference's (determinant, a
    local-only op, gives `[1]`) comes back in the reference's form."""
    source = (preamble() + "in::a = 5;\nin::b = [[1,2],[3,4]];\n"
              "calc::lambda_flow f(a, b) {\n    a a add s =\n    b determinant d =\n"
              "    d s mul e =\n    b a scalar_mul m =\n} return s, d, e, m;\n")
    engine = maned.run(source=source, reference=False)
    reference = maned.run(source=source, reference=True)
    assert _seen(engine) == _seen(reference)
    shapes = {v.name: v.shape for v in engine.flows[0].outputs}
    assert shapes == {"s": (), "d": (1,), "e": (1,), "m": (2, 2)}


# --- which kernel runs each node ------------------------------------------------------------
def _op(op: str, **params) -> Node:
    return Node(2, "op", 1, op=op, srcs=(0, 1), params=tuple(params.items()))


@pytest.mark.parametrize("node, executor", [
    (_op("matmul"), True),
    (_op("softmax", axis=1), True),
    (_op("reshape", rows=2, cols=3), True),
    (_op("determinant"), False),           # a local-only op: the reference's
    (_op("tensor_sum", axis=9), False),    # an axis the wire cannot carry: the reference's
    (_op("maxpool2d", kernel_size=0), False),
])
def test_each_node_runs_on_the_executor_where_a_worker_would(node, executor):
    step = step_of("f", node)
    assert (step.kernel is not None) == executor


def test_the_executor_gets_the_parameters_a_worker_decodes():
    assert step_of("f", _op("softmax")).params == {"axis": None}
    assert step_of("f", _op("conv2d", stride=0)).params == {"stride": 1, "padding": 0}
    assert step_of("f", _op("reshape", rows=2, cols=3)).params["shape"] == (2, 3)


def test_a_local_run_verifies_the_engine_and_reference_runs_skip(tmp_path):
    hello = Path(__file__).resolve().parent.parent / "examples" / "hello.mnd"
    engine = maned.run(hello, verify=True, reference=False)
    assert (engine.verify.status, engine.verify.routed) == ("PASS", ())
    assert engine.verify.compared == ("arithmetic",)
    assert maned.run(hello, verify=True, reference=True).verify.status == "SKIPPED"
    assert maned.run(hello, verify=True).verify.status == "SKIPPED"  # three values: small


# --- the ML coordinator's loops on numpy ----------------------------------------------------
from maned.engine import ml as engine_ml  # noqa: E402
from maned.ml import xgboost  # noqa: E402
from maned.tensor import Tensor  # noqa: E402

INT32 = st.integers(-2 ** 31, 2 ** 31 - 1)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 6), st.integers(1, 3), st.data())
def test_xgboost_goes_left_on_numpy_is_the_references(n, d, data):
    rows = [data.draw(st.lists(INT32, min_size=d, max_size=d)) for _ in range(n)]
    cands = data.draw(st.lists(st.tuples(st.integers(0, d - 1), INT32), max_size=6))
    assert engine_ml.goes_left(rows, cands) == xgboost.goes_left(rows, cands)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(INT32, INT32), min_size=1, max_size=40), st.integers(0, 4))
def test_xgboost_squared_errors_on_numpy_are_the_references(pairs, q):
    F = Tensor((len(pairs), 1), tuple(f for f, _ in pairs))
    y = Tensor((len(pairs), 1), tuple(v for _, v in pairs))
    assert engine_ml.squared_errors(F, y, q) == xgboost.squared_errors(F, y, q)


def test_a_fit_on_the_engine_uses_the_numpy_loops_and_gives_the_references_model():
    source = (Path(__file__).resolve().parent.parent / "examples" / "xgboost.mnd").read_text()
    engine = maned.run(source=source, base_dir=str(EXAMPLES[0].parent), reference=False)
    reference = maned.run(source=source, base_dir=str(EXAMPLES[0].parent), reference=True)
    assert _seen(engine) == _seen(reference) and engine.exit_code == 0
    assert engine_ml.on_engine("xgboost", xgboost).init is not xgboost.init
