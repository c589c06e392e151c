"""Lowering a flow graph to the binary IR (spec/wire-golden.md §1.1-1.4): hoisting,
numbering, SYNC, the immediates table, every refusal, and the rank-0 restore (R5)."""
import pytest
from hypothesis import given, settings, strategies as st

from bark_vm.wire.ir import Instr
from maned.static_check import check
from maned.lang.ast import Quant
from maned.tensor import Tensor
from maned.failures import DeviceFailure, Refused
from maned.lowering.envelopes import RequestTemplate, decode_result, encode_job, job_quant
from maned.lowering.lower import lower
from maned.lowering.compiled import Compiler
from maned.lowering.shapes import rank0_outputs
from bark_vm.wire.envelope import encode_request, encode_result

from support.scripts import H0 as H
from support.scripts import H8, preamble


def graph(body: str, params="x", returns="r", header=H, extra=""):
    checked = check(f"{header}{extra}calc::lambda_flow f({params}) {{\n{body}\n}} return {returns};\n")
    assert checked.ok, [d.message for d in checked.diagnostics]
    return checked.graphs["f"], checked.program


def compute(lowered) -> list[Instr]:
    return [i for i in lowered.module.instrs if i.opcode not in (0x01, 0x02, 0xF0, 0xFE)]


@pytest.mark.parametrize("body,opcode,imm", [
    ("x {axis: 0} softmax r =", 0x23, 1),
    ("x softmax r =", 0x23, 0),
    ("x {axis: 1} tensor_sum r =", 0x60, 2),
    ("x tensor_max r =", 0x62, 0),
    ("x {kernel_size: 2, stride: 2} maxpool2d r =", 0x31, 0x0202),
    ("x {kernel_size: 3} avgpool2d r =", 0x32, 0x0303),
    ("x x {axis: 1} concat r =", 0x41, 2),
    ("x x concat r =", 0x41, 1),
    ("x x {stride: 1, padding: 0} conv2d r =", 0x30, 1),
    ("x x {padding: 2} conv2d r =", 0x30, 0x0201),
    ("x x conv2d r =", 0x30, 0),
    ("x relu r =", 0x20, 0),
])
@pytest.mark.parametrize("abi", [1, 2])
def test_immediates(body, opcode, imm, abi):
    lowered = lower(graph(body)[0], abi)
    (i,) = compute(lowered)
    assert (i.opcode, i.imm) == (opcode, imm)


def test_v2_layout_fields():
    (i,) = compute(lower(graph("x {rows: 2, cols: 3} reshape r =")[0], 2))
    assert (i.srcs, i.imm) == ((0, 2, 3, 0xFFFF), 0xFFFF)
    (i,) = compute(lower(graph("x {shape: [1, 2, 3, 4]} reshape r =")[0], 2))
    assert (i.srcs, i.imm) == ((0, 1, 2, 3), 4)
    (i,) = compute(lower(graph("x {axis: 1, sections: 3, index: 2} split r =")[0], 2))
    assert (i.srcs, i.imm) == ((0, 1, 3, 2), 0)
    (i,) = compute(lower(graph("x m v g b batchnorm r =", "x, m, v, g, b")[0], 2))
    assert (i.opcode, i.flags, i.srcs, i.imm) == (0x53, 1, (0, 1, 2, 3), 4)


def test_hoisting_and_numbering():
    g, _ = graph("x [5, 6] add 40000 mul 7 sub 0 add r =")
    v2 = lower(g, 2)
    assert [t.data for t in v2.hoisted] == [(5, 6), (40000,)]
    ops = [i.opcode for i in v2.module.instrs]
    # params, hoisted (r1 tensor, r2 40000), then the rest in graph order
    assert ops[:3] == [1, 1, 1]
    assert [i.imm for i in v2.module.instrs if i.opcode == 0x02] == [7, 0]
    v1 = lower(g, 1)
    assert [t.data for t in v1.hoisted] == [(5, 6), (40000,), (7,)]
    assert [i.imm for i in v1.module.instrs if i.opcode == 0x02] == [0]
    assert len([i for i in v1.module.instrs if i.opcode != 0xF0]) == \
        len([i for i in v2.module.instrs if i.opcode != 0xF0])  # same value count


def test_negative_and_int16_edges():
    g, _ = graph("x -32768 add 32767 add 32768 add r =")
    v2 = lower(g, 2)
    assert [i.imm for i in v2.module.instrs if i.opcode == 0x02] == [0x8000, 0x7FFF]
    assert [t.data for t in v2.hoisted] == [(32768,)]


def test_sync_only_when_the_level_rises():
    g, _ = graph("x x add a =\n a relu b =\n x relu c =\n c b add r =")
    instrs = lower(g, 2).module.instrs
    syncs = [(k, i.level) for k, i in enumerate(instrs) if i.opcode == 0xF0]
    assert [lv for _, lv in syncs] == [1, 2, 3]
    c = next(i for i in instrs if i.opcode == 0x20 and i.srcs[0] == 0)
    assert c.level == 1  # no SYNC before it: the running maximum is 2
    assert instrs[-1] == Instr(0xFE, dst=instrs[-2].dst)


def test_outputs_twice_bound():
    g, _ = graph("x relu a =\n a b =", returns="a, b")
    m = lower(g, 1).module
    assert m.outputs == (1, 1)


REFUSALS = [
    ("x abs r =", "x", "r", 2, "flow 'f': op 'abs' has no binary-IR opcode; it cannot be routed",
     False),
    ("x g add r =", "x", "r", 2, "flow 'f' reads in::g; a routed flow receives only its "
     "parameters - make it a parameter", False),
    ("x {rows: 1, cols: 4} reshape r =", "x", "r", 1, "flow 'f': op 'reshape' cannot be "
     "encoded in ABI v1; it needs a worker of ABI v2", False),
    ("x {sections: 2} split r =", "x", "r", 1, "split' cannot be encoded in ABI v1", False),
    ("x m v g b batchnorm r =", "x, m, v, g, b", "r", 1, "batchnorm' cannot be encoded", False),
    ("x maxpool2d r =", "x", "r", 2, "op 'maxpool2d' needs {kernel_size: k}", False),
    ("x {kernel_size: 256} maxpool2d r =", "x", "r", 2, "'kernel_size' is 256, outside 1..255",
     False),
    ("x {kernel_size: 2, stride: 0} avgpool2d r =", "x", "r", 2, "'stride' is 0", False),
    ("x x {padding: 300} conv2d r =", "x", "r", 2, "'padding' is 300, outside 0..255", False),
    ("x {axis: 4} softmax r =", "x", "r", 2, "'axis' is 4, outside 0..3", False),
    ("x {axis: -1} tensor_sum r =", "x", "r", 2, "'axis' is -1", False),
    ("x {rows: 70000, cols: 1} reshape r =", "x", "r", 2, "outside 1..65534", False),
    ("x {sections: 2, index: 2} split r =", "x", "r", 2, "'index' is 2, outside 0..1", False),
]


@pytest.mark.parametrize("body,params,returns,abi,message,limit", REFUSALS)
def test_refusals(body, params, returns, abi, message, limit):
    g, _ = graph(body, params, returns, extra="in::g = 1;\n")
    with pytest.raises(Refused) as e:
        lower(g, abi)
    assert message in e.value.message and e.value.message.startswith("flow 'f'")
    assert e.value.limit is limit


def test_input_limit_counts_hoisted_constants():
    body = "x " + " ".join(f"{k} add" for k in range(1, 17)) + " r ="
    g, _ = graph(body)
    lower(g, 2)  # CONSTs under v2
    with pytest.raises(Refused) as e:
        lower(g, 1)  # 1 param + 16 hoisted
    assert e.value.limit and "17 input tensors" in e.value.message
    params = ", ".join(f"p{k}" for k in range(17))
    g, _ = graph("p0 relu r =", params)
    with pytest.raises(Refused) as e:
        lower(g, 2)
    assert e.value.limit


def test_output_limit():
    names = ", ".join(f"o{k}" for k in range(17))
    body = "\n".join(f"x relu o{k} =" for k in range(17))
    g, _ = graph(body, returns=names)
    with pytest.raises(Refused) as e:
        lower(g, 2)
    assert e.value.limit and "17 values" in e.value.message


def test_register_file_limit():
    body = "x " + " ".join("relu" for _ in range(300)) + " r ="
    g, _ = graph(body)
    lower(g, 2)
    with pytest.raises(Refused) as e:
        lower(g, 1)
    assert e.value.limit
    assert e.value.message == ("flow 'f' compiles to 301 values, but the target register file "
                               "has 256 slots (ABI v1 RF_SLOTS); split the flow or reduce "
                               "intermediates")


def test_rank0_restore():
    g, program = graph("x y add a =\n x relu b =\n a tensor_sum c =\n x 2 mul d =",
                       "x, y", "a, b, c, d")
    scalar, vec = Tensor.scalar(3), Tensor((1,), (3,))
    assert rank0_outputs(g, {"x": scalar, "y": scalar}) == (True, True, False, True)
    assert rank0_outputs(g, {"x": scalar, "y": vec}) == (False, True, False, True)
    compiled = Compiler().compile(g, 2, {"x": scalar, "y": scalar})
    raw = encode_result([((1,), (6,)), ((1,), (3,)), ((1,), (6,)), ((1,), (6,))], 2)
    out = decode_result(raw, compiled)
    assert [out[n].shape for n in "abcd"] == [(), (), (1,), ()]


def test_encode_job_promotes_rank0_and_refuses_int8_misfits():
    g, program = graph("x 200 add r =", header=H8)
    encode_job(lower(g, 2), [Tensor.scalar(1)], program.quant)  # a v2 CONST is no entry [W13]
    lowered = lower(g, 1)
    with pytest.raises(Refused) as e:
        encode_job(lowered, [Tensor.scalar(1)], program.quant)
    assert "constant 200" in e.value.message
    assert "mnd::quantmin=-100, mnd::quantmax=100" in e.value.message
    g, program = graph("x 2 add r =", header=H8)
    lowered = lower(g, 1)
    raw = encode_job(lowered, [Tensor.scalar(1)], program.quant)
    assert raw[17] == 1  # int8
    with pytest.raises(Refused) as e:
        encode_job(lowered, [Tensor((2,), (1, 300))], program.quant)
    assert "parameter 'x' holds 300" in e.value.message
    assert job_quant(program.quant).dtype == 1


_VALUES = st.lists(st.integers(-1000, 1000), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["same", "equal", "new"]), _VALUES, _VALUES),
                min_size=1, max_size=6))
def test_a_template_sends_the_bytes_of_a_fresh_encoding_job_after_job(jobs):
    """A chain's rounds share one template (DESIGN §7): whether a param is the very tensor
    the last job sent, an equal one (its bytes reused) or another, each request is byte for
    byte the wire encoder's, hoisted constant [3, 4] included."""
    g, program = graph("x y add [3, 4] mul r =", params="x, y")
    lowered = lower(g, 2)
    template, last = RequestTemplate(lowered, program.quant), None
    for reuse, xs, ys in jobs:
        x = Tensor((len(xs),), tuple(xs))
        if last is not None and reuse != "new":
            x = last if reuse == "same" else Tensor(last.shape, last.data)
        y = Tensor((len(ys),), tuple(ys))
        last = x
        want = encode_request(job_quant(program.quant), lowered.ir,
                              [(x.shape, x.data), (y.shape, y.data), ((2,), (3, 4))])
        assert template.encode([x, y]) == want


def test_a_template_says_a_parameter_that_cannot_travel_before_a_constant():
    g, program = graph("x 200 add r =", header=H8)
    template = RequestTemplate(lower(g, 1), program.quant)
    with pytest.raises(Refused, match="parameter 'x' holds 300"):
        template.encode([Tensor((2,), (1, 300))])
    with pytest.raises(Refused, match="constant 200") as first:
        template.encode([Tensor.scalar(1)])
    with pytest.raises(Refused, match="constant 200") as again:
        template.encode([Tensor.scalar(1)])
    assert again.value is not first.value  # a fresh refusal: no traceback piles onto one
    # the arity is said before the quant block, as a whole request's encoding said it
    with pytest.raises(Refused, match="the flow takes 1 parameters, got 0"):
        encode_job(lower(g, 1), [], Quant(40000, -1000, 0))


def test_decode_result_checks():
    g, _ = graph("x relu r =")
    compiled = Compiler().compile(g, 2, {"x": Tensor((1,), (1,))})
    with pytest.raises(DeviceFailure, match="malformed") as e:
        decode_result(b"MNRS", compiled)
    assert e.value.kind == "malformed_response"
    with pytest.raises(DeviceFailure, match="status 3"):
        decode_result(encode_result([], 2, status=3), compiled)
    with pytest.raises(DeviceFailure, match="returned 2 output"):
        decode_result(encode_result([((1,), (1,))] * 2, 2), compiled)
    raw = bytearray(encode_result([((1,), (1,))], 2))
    raw[12] = 1
    with pytest.raises(DeviceFailure, match="out of order"):
        decode_result(bytes(raw), compiled)


def checked_text() -> str:
    return preamble(1, -1, 0) + "calc::lambda_flow f(x) {\n    x x add y =\n} return y;\n"


def test_a_value_outside_the_int8_envelope_says_which_directives_chose_it():
    """Issue 15: the refusal names mnd::quantmax and the others, and how to widen them."""
    checked = check(checked_text())
    lowered = lower(checked.graphs["f"], 2)
    with pytest.raises(Refused) as e:
        encode_job(lowered, [Tensor((2,), (1, 300))], checked.program.quant)
    why = ("parameter 'x' holds 300, outside the int8 envelope (-128..127) that "
           "mnd::quantmin=-1, mnd::quantmax=1 and mnd::quantres=0 choose for routed values; "
           "widen mnd::quantmin/mnd::quantmax (a range over 8 bits travels as int32) to route "
           "it")
    assert e.value.message == why
    # the run names the flow once (issue 23, point 7: it said `flow 'f': flow 'f':`)
    import maned
    report = maned.run(source=checked_text(), inputs={"x": "2:1,300"}, require_vm=True)
    assert [d.message for d in report.diagnostics] == [f"flow 'f': {why}"]
