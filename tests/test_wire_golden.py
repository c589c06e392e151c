"""Every fixture of spec/wire-golden.md, reproduced byte for byte (R14).

A data table: each example's script, inputs and expected IR / MNPK / MNRS sizes and SHA-256,
plus the full hex dumps the spec gives. For each: lowering + encoding gives the bytes, the
decoders round-trip them, the MNRS built from the local interpreter matches, and the worker
pipeline answers the request with that MNRS. Then the §7 HELO frames, the §2.3 stdio session
through a real `bark-vm` child, and the four `mnpk-gen` mutations (§6.2) on both ABIs.
"""
import hashlib
import io
import subprocess
from dataclasses import dataclass, field

import pytest

from bark_vm.wire import ir as wire_ir
from bark_vm.wire.constants import WorkerError
from bark_vm.wire.envelope import (
    decode_request, decode_result, encode_request, encode_result, wire_dtype,
)
from bark_vm.wire.frames import frame_bytes, read_frame
from bark_vm.wire.status import encode_status, parse_status
from bark_vm.request_handling import WorkerConfig, handle, ops_for
from maned.static_check import check
from maned.interp.evaluate import evaluate
from maned.io.cli_values import parse_value
from maned.catalogue import OpContext
from maned.lowering.envelopes import decode_result as decode_job_result
from maned.lowering.envelopes import encode_job, result_entries
from maned.lowering.compiled import Compiler
from maned.lowering.lower import lower

from support.processes import MNPK_GEN, command, run
from support.scripts import H0
from support.wire_golden import (  # spec/wire-golden.md's full hex dumps
    A_IR_V1, A_IR_V2, A_MNPK_V1, A_MNPK_V2, A_MNRS, B_MNPK_V1, B_MNPK_V2, B_MNRS, C_MNPK_V1,
    C_MNPK_V2, C_MNRS, D_MNPK_V1, D_MNRS)

H = H0 + "\n"

SCRIPT_A = H + """calc::lambda_flow layer(x, w, bias) {
    x w matmul product =
    product bias elemwise_add shifted =
    shifted relu result =
} return result;
"""
SCRIPT_B = H + """calc::lambda_flow hoist(a) {
    a 3 scalar_mul b =
    b 100000 add c =
} return c;
"""
SCRIPT_C = H + """in::a = 2;
in::b = 3;
in::c = 4;

calc::lambda_flow arithmetic(a, b, c) {
    a b add c mul sum_then_scale =
    b c mul a add scale_then_sum =
} return sum_then_scale, scale_then_sum;
"""
SCRIPT_D = H + """calc::lambda_flow consts(a) {
    a [[1,0],[0,1]] mul d =
    d 0 add e =
    e -5 add f =
    f 3 mul g =
    a 7 sub unused =
    g 3 sub h =
} return h, d;
"""

CANONICAL = {"x": "2x2:1,2,3,4", "w": "2x2:5,6,7,8", "bias": "2x2:0,0,-100,0"}


@dataclass(frozen=True)
class Fixture:
    name: str
    abi: int
    script: str
    inputs: dict
    ir: tuple[int, str]      # (size, SHA-256)
    mnpk: tuple[int, str]
    mnrs: tuple[int, str]
    outputs: dict            # name -> (shape, data), the local (rank-0-aware) result
    ir_dump: bytes | None = None
    mnpk_dump: bytes | None = None
    mnrs_dump: bytes | None = None
    hoisted: tuple = field(default=())  # the hoisted constants' data, in order


MNRS_A = (40, "6a59c18a4cc39d2ff10a74b838ba1195068fa08481615d284fdec98855608d1a")
MNRS_B = (40, "b78c9dd2e213b3226488752fc11a9fb7e2e474fafa2f420b3629cf5486acf17d")
MNRS_C = (36, "64a5a2862728ae6a194d254dad05a76bb10322b3d85d4eae8ec7ca6714b1abf8")
MNRS_D = (68, "8f810a5b8d43cc0166233c68836827adef2449d9615240a6a0822f8bf15afea7")
OUT_A = {"result": ((2, 2), (19, 22, 0, 50))}
OUT_B = {"c": ((2, 2), (100003, 100006, 100009, 100012))}
OUT_C = {"sum_then_scale": ((), (20,)), "scale_then_sum": ((), (14,))}
OUT_D = {"h": ((2, 2), (12, -18, -18, 102)), "d": ((2, 2), (10, 0, 0, 40))}

FIXTURES = [
    Fixture("A-v1", 1, SCRIPT_A, CANONICAL,
            (97, "f6ebbceaf3863e13192601b34f8c3fc5a727d96bd2da4c02aaf2d99a378d4777"),
            (205, "953f646cbd5cd4402300009c34e860ff0c5c841980eb767ca50fa26a07928d7a"),
            MNRS_A, OUT_A, A_IR_V1, A_MNPK_V1, A_MNRS),
    Fixture("A-v2", 2, SCRIPT_A, CANONICAL,
            (178, "2c79a35e2717dc8d9890c56049198557364f7aadfd932304d32538006727be64"),
            (286, "f790538ad9c077f22b73b2d9e23110d117b5e3f13632d7f3b7152970cc37a03e"),
            MNRS_A, OUT_A, A_IR_V2, A_MNPK_V2, A_MNRS),
    Fixture("B-v2", 2, SCRIPT_B, {"a": "2x2:1,2,3,4"},
            (146, "86422e5fd5bae7f56b29707d8c9cbd3c91ab300e9737fcc3b32558e4916baf81"),
            (210, "75c34460fb4f3ddee7e7632aba17cdba2a60fbd54cb02f70903b57400f8f4997"),
            MNRS_B, OUT_B, None, B_MNPK_V2, B_MNRS, ((100000,),)),
    Fixture("B-v1", 1, SCRIPT_B, {"a": "2x2:1,2,3,4"},
            (81, "cf666ffc897a675171656318a78ded183a2c67e1601c2a3117ab8d23c59c0501"),
            (157, "ff1c7ccf063311a322ea56fe76047bc4ac3fbea7fc3bc219fe572b416fec017e"),
            MNRS_B, OUT_B, None, B_MNPK_V1, B_MNRS, ((3,), (100000,))),
    Fixture("C-v1", 1, SCRIPT_C, {"a": "2", "b": "3", "c": "4"},
            (98, "3734f26c9a9f7bc2b4ddb2968d88cc052806e47343df4634295e9be65963d541"),
            (158, "17ff8914fc17fb66b691124a300e2ab8e077dc8b04b5d3796e6997919583a516"),
            MNRS_C, OUT_C, None, C_MNPK_V1, C_MNRS),
    Fixture("C-v2", 2, SCRIPT_C, {"a": "2", "b": "3", "c": "4"},
            (180, "65799d18b32374def7658775cba0fab8d051e0f10613b05573ddfc79bdb6f38e"),
            (240, "8efc4da82ec7c6752108ed4bfcb049315fe68c648edbaaf9396093a3d44897bb"),
            MNRS_C, OUT_C, None, C_MNPK_V2, C_MNRS),
    Fixture("D-v2", 2, SCRIPT_D, {"a": "2x2:10,20,30,40"},
            (276, "ec2fac052f68a7b5ee18e9ea857c9d8634bd42713dee6c6238871fdb7e9d691d"),
            (356, "91498a927bb8f88afc3910686389e33de248d46c33e3365bc015e962089df82c"),
            MNRS_D, OUT_D, None, None, D_MNRS, ((1, 0, 0, 1),)),
    Fixture("D-v1", 1, SCRIPT_D, {"a": "2x2:10,20,30,40"},
            (146, "6f93e179a9b672ff4f2b302d097b2401a7b6d5cb32043f31e5477306e11b2726"),
            (250, "4b2581e2c0dfbd22b0fd84676a196bc0fc3e0cf4e5ee18656623932f41ebbfa3"),
            MNRS_D, OUT_D, None, D_MNPK_V1, D_MNRS, ((1, 0, 0, 1), (-5,), (3,))),
]

# Instruction bytes given per row in the spec's tables for fixtures without an IR dump.
V2_ROWS_D = [
    "01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
    "01 00 01 00 00 00 00 00 00 00 00 00 00 00 00 00",
    "f0 00 00 00 00 00 00 00 00 00 00 00 00 00 01 00",
    "13 00 02 00 00 00 01 00 00 00 00 00 00 00 01 00",
    "02 00 03 00 00 00 00 00 00 00 00 00 00 00 00 00",
    "f0 00 00 00 00 00 00 00 00 00 00 00 00 00 02 00",
    "11 00 04 00 02 00 03 00 00 00 00 00 00 00 02 00",
    "02 00 05 00 00 00 00 00 00 00 00 00 fb ff 00 00",
    "f0 00 00 00 00 00 00 00 00 00 00 00 00 00 03 00",
    "11 00 06 00 04 00 05 00 00 00 00 00 00 00 03 00",
    "02 00 07 00 00 00 00 00 00 00 00 00 03 00 00 00",
    "f0 00 00 00 00 00 00 00 00 00 00 00 00 00 04 00",
    "13 00 08 00 06 00 07 00 00 00 00 00 00 00 04 00",
    "f0 00 00 00 00 00 00 00 00 00 00 00 00 00 05 00",
    "12 00 09 00 08 00 07 00 00 00 00 00 00 00 05 00",
    "fe 00 09 00 00 00 00 00 00 00 00 00 00 00 00 00",
]


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def compile_fixture(fx: Fixture):
    checked = check(fx.script)
    assert checked.ok, checked.diagnostics
    graph = checked.graphs[checked.program.flows[0].name]
    inputs = [parse_value(fx.inputs[p]) for p in graph.params]
    lowered = lower(graph, fx.abi)
    return checked.program, graph, inputs, lowered


@pytest.fixture(scope="module", params=FIXTURES, ids=lambda f: f.name)
def built(request):
    fx = request.param
    program, graph, inputs, lowered = compile_fixture(fx)
    mnpk = encode_job(lowered, inputs, program.quant)
    local = evaluate(graph, dict(zip(graph.params, inputs)), {}, OpContext(0))
    mnrs = encode_result(result_entries(lowered, local), 2)
    return fx, graph, inputs, lowered, mnpk, mnrs, local


def test_lowering_and_encoding_reproduce_the_bytes(built):
    fx, _, _, lowered, mnpk, _, _ = built
    ir_bytes = lowered.ir
    assert (len(ir_bytes), sha(ir_bytes)) == fx.ir
    assert (len(mnpk), sha(mnpk)) == fx.mnpk
    assert mnpk[24:24 + len(ir_bytes)] == ir_bytes
    if fx.ir_dump is not None:
        assert ir_bytes == fx.ir_dump
    if fx.mnpk_dump is not None:
        assert mnpk == fx.mnpk_dump
    assert [t.data for t in lowered.hoisted] == list(fx.hoisted)


def test_v2_instruction_rows_of_example_d():
    fx = next(f for f in FIXTURES if f.name == "D-v2")
    ir_bytes = compile_fixture(fx)[3].ir
    rows = [ir_bytes[16 + 16 * k:32 + 16 * k].hex(" ") for k in range(len(V2_ROWS_D))]
    assert rows == V2_ROWS_D
    assert ir_bytes[16 + 16 * len(V2_ROWS_D):] == bytes.fromhex("09000200")


def test_decoders_round_trip(built):
    fx, _, _, lowered, mnpk, mnrs, _ = built
    module = wire_ir.parse_module(lowered.ir, 2)
    assert module == lowered.module
    wire_ir.validate_module(module)
    assert wire_ir.encode_module(module) == lowered.ir
    req = decode_request(mnpk)
    assert req.ir == lowered.ir
    assert encode_request(req.quant, req.ir, req.entries) == mnpk
    assert req.quant.dtype == 2 and (req.quant.quantmin, req.quant.quantmax) == (-1000, 1000)
    res = decode_result(mnrs, 2)
    assert res.status == 0 and encode_result(res.entries, 2) == mnrs


def test_mnrs_from_the_local_interpreter(built):
    fx, graph, inputs, lowered, _, mnrs, local = built
    assert (len(mnrs), sha(mnrs)) == fx.mnrs
    if fx.mnrs_dump is not None:
        assert mnrs == fx.mnrs_dump
    assert {n: (t.shape, t.data) for n, t in local.items()} == fx.outputs
    compiled = Compiler().compile(graph, fx.abi, dict(zip(graph.params, inputs)))
    back = decode_job_result(mnrs, compiled)
    assert {n: (t.shape, t.data) for n, t in back.items()} == fx.outputs  # rank-0 restored


def test_the_worker_pipeline_answers_with_the_expected_mnrs(built):
    fx, _, _, _, mnpk, mnrs, _ = built
    assert handle(mnpk, WorkerConfig(abi=2)) == mnrs  # a v2 worker runs v1 modules too
    if fx.abi == 1:
        assert handle(mnpk, WorkerConfig(abi=1)) == mnrs
    else:
        with pytest.raises(WorkerError) as e:
            handle(mnpk, WorkerConfig(abi=1))
        assert e.value.code == "BAD_ENVELOPE"


def test_quant_block_dtype_rule():
    assert wire_dtype(0, -1000, 1000) == 2
    assert wire_dtype(0, -100, 100) == 1
    assert wire_dtype(0, -128, 127) == 1
    assert wire_dtype(0, -128, 128) == 2
    assert wire_dtype(0, 0, 255) == 2  # span fits 8 bits, but 255 needs a signed 9th
    assert wire_dtype(2, -1, 1) == 1 and wire_dtype(3, -1, 1) == 2


# --- §7 HELO and §8 status ---------------------------------------------------------------------
HELO_V2 = (442, "8fa1b64606b18104c333c89095453546387eb5fbf3f882df4aab996da77990b2")
HELO_V1 = (411, "fe303d27b79eac8affbc446b33fc5fdb251a92a8aed9048c8dd121384d5f7f84")
BOB_V2 = ('{"proto":1,"alias":"bob","kind":"x86","uptime_s":12,"requests":3,"jobs_running":0,'
          '"jobs_capacity":4,"ops":["matmul","add","sub","mul","div","scalar_mul","relu",'
          '"sigmoid","tanh","softmax","conv2d","maxpool2d","avgpool2d","transpose","concat",'
          '"reshape","split","layernorm","batchnorm","tensor_sum","tensor_mean","tensor_max",'
          '"tensor_min","gt","lt","eq","ge","le","ne","and","or","xor","not"],'
          '"max_payload":33554432,"ir":2,"rf_slots":4096,"jobs_sync":0,"jobs_async":0,'
          '"jobs_done":0}')


@pytest.mark.parametrize("abi,want", [(2, HELO_V2), (1, HELO_V1)])
def test_helo_frame(abi, want):
    payload = WorkerConfig(alias="vm1", abi=abi).status_json()
    frame = frame_bytes(b"HELO", payload)
    assert (len(frame), sha(frame)) == want
    assert parse_status(payload).ops == ops_for(abi)


def test_status_json_of_bark_worker():
    cfg = WorkerConfig(alias="bob", kind="x86", abi=2, capacity=4)
    body = cfg.status_json(uptime_s=12, requests=3, jobs_sync=0, jobs_async=0, jobs_done=0)
    assert body.decode() == BOB_V2
    v1 = WorkerConfig(alias="bob", kind="x86", abi=1, capacity=4).status_json(
        uptime_s=12, requests=3, jobs_sync=0, jobs_async=0, jobs_done=0)
    assert b'"ir":1,"rf_slots":256' in v1 and b"reshape" not in v1 and b"batchnorm" not in v1
    assert len(ops_for(2)) == 33 and len(ops_for(1)) == 30
    s = parse_status(body)
    assert encode_status(s) == body
    old = parse_status(b'{"proto":1,"alias":"a","kind":"x86","uptime_s":1,"requests":0,'
                       b'"jobs_running":0,"jobs_capacity":4,"ops":["add"],"max_payload":9,'
                       b'"extra":{"x":1.5}}')
    assert (old.ir, old.rf_slots) == (1, 256)


# --- child processes ---------------------------------------------------------------------------
def run_vm(stdin: bytes, *args: str) -> subprocess.CompletedProcess:
    return run(command("bark-vm", "bark_vm.vm"), *args, input=stdin, text=False, timeout=60)


def frames_of(raw: bytes) -> list[tuple[bytes, bytes]]:
    s, out = io.BytesIO(raw), []
    while (f := read_frame(s)) is not None:
        out.append((f.type, f.payload))
    return out


SESSION = (490, "13b578cd17edfd0e394057c9ae6d4266169f558224ee96a4b3992e9307a62423")


def test_stdio_session_of_section_2_3():
    p = run_vm(frame_bytes(b"MNPK", A_MNPK_V1), "--alias", "vm1")
    assert p.returncode == 0, p.stderr
    assert (len(p.stdout), sha(p.stdout)) == SESSION
    assert p.stdout[442:] == frame_bytes(b"MNRS", A_MNRS)


MUTATIONS = {  # name: (v1 size, v1 sha, v2 size, v2 sha, answer)
    "bad_magic": (205, "e8172a140d82d4aa6b8ad663cec84dd03327ebf1e7e79c7bd2a342361f636433",
                  286, "8a90229d99666388eda576728829830c7b86c9c935a2fa4af7f51423654c79a9",
                  "BAD_ENVELOPE"),
    "bad_truncated": (197, "bb9fb85d6d1f9972346636f9c6d6e6953d1d853bba0e36351ce2c4e2989e755c",
                      278, "3cdf671e336f610028745cce1816cd650c8f996da9bd1f596b3fd926499b6690",
                      "BAD_ENVELOPE"),
    "bad_shape": (205, "9e3d09b913ad25a177e8f7ba5fcc270973163bb4b0e68c50a9bf8b0d7bf277a0",
                  286, "be0399cd9e42ea38053f2683a537a23ddf0d6f9551b9db8a532c75c59ba8de46",
                  "SHAPE_MISMATCH"),
    "unsupported_op": (205, "56691ca109374408a06af822b6c02114a663a65366a2ff91b79135677831ae34",
                       286, "6507cf538f2e7db5ff42b6d508b2effba33793b59873169f094df28e3127cda9",
                       "UNSUPPORTED_OP"),
}


@pytest.mark.parametrize("abi", [1, 2])
def test_mnpk_gen_mutations_and_the_vm_answers(tmp_path, abi):
    script = tmp_path / "matmul_relu.mnd"
    script.write_text(SCRIPT_A)
    out = tmp_path / "out"
    p = run(MNPK_GEN, script, "--out", out, "--abi", str(abi), timeout=60)
    assert p.returncode == 0, p.stderr
    good = FIXTURES[0] if abi == 1 else FIXTURES[1]
    mnpk = (out / "matmul_relu.mnpk").read_bytes()
    assert (len(mnpk), sha(mnpk)) == good.mnpk
    assert (out / "matmul_relu.mnrs").read_bytes() == A_MNRS
    assert (out / "matmul_relu.json").exists()
    stdin = b""
    for name, (s1, h1, s2, h2, _) in MUTATIONS.items():
        data = (out / f"{name}.mnpk").read_bytes()
        assert (len(data), sha(data)) == ((s1, h1) if abi == 1 else (s2, h2)), name
        stdin += frame_bytes(b"MNPK", data)
    vm = run_vm(stdin, "--alias", "vm1", "--abi", str(abi))
    assert vm.returncode == 0, vm.stderr
    frames = frames_of(vm.stdout)
    assert frames[0][0] == b"HELO" and len(frames) == 5
    for (ftype, payload), (name, spec) in zip(frames[1:], MUTATIONS.items()):
        assert ftype == b"ERRJ", name
        assert parse_error(payload) == spec[4], name


def parse_error(payload: bytes) -> str:
    import json
    return json.loads(payload)["error"]


def test_mnpk_gen_single_mutation(tmp_path):
    script = tmp_path / "m.mnd"
    script.write_text(SCRIPT_A)
    p = run(MNPK_GEN, script, "--out", tmp_path / "o", "--mutate", "bad_shape", timeout=60)
    assert p.returncode == 0, p.stderr
    assert [f.name for f in (tmp_path / "o").iterdir()] == ["bad_shape.mnpk"]


@pytest.mark.parametrize("name", ["m.json", "m.mnpk", "m.mnrs"])
def test_mnpk_gen_never_writes_a_fixture_over_its_script(tmp_path, name):
    """Issue 34, K4: a script named as one of the fixtures it would write into --out (its
    stem's .json, .mnpk or .mnrs): refused, one coded line, the script unchanged."""
    script = tmp_path / name
    script.write_text(SCRIPT_A)
    p = run(MNPK_GEN, script, "--out", tmp_path, timeout=60)
    assert p.returncode == 2 and p.stdout == "", p
    assert p.stderr.endswith(f"' is the script: writing it would replace it: give --out "
                             "another folder [EUSAGE]\n") and p.stderr.count("\n") == 1
    assert script.read_text() == SCRIPT_A and [f.name for f in tmp_path.iterdir()] == [name]


def test_mnpk_gen_refuses_a_script_named_as_a_mutation(tmp_path):
    """A script whose stem is a mutation's name: its own .mnpk would be lost under the
    mutation's, so it is refused before anything is written."""
    script = tmp_path / "bad_shape.mnd"
    script.write_text(SCRIPT_A)
    p = run(MNPK_GEN, script, "--out", tmp_path / "o", timeout=60)
    assert p.returncode == 2 and "is mutation bad_shape's: rename the script" in p.stderr, p
    assert not (tmp_path / "o").exists()
