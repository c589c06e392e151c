"""Malformed input for every rule of the worker's check order (spec/wire-golden.md §6.1
steps 1-6) and the stdio session rules (§7). That no bytes make the decoders raise anything
but WorkerError is tests/test_fuzz_wire.py's."""
import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bark_vm.vm import serve
from bark_vm.wire import fork_socket
from bark_vm.wire import ir as wire_ir
from bark_vm.wire import strict_json
from bark_vm.wire.constants import WorkerError
from bark_vm.wire.envelope import QuantBlock, decode_request, decode_result, encode_request
from bark_vm.wire.frames import frame_bytes, read_frame
from bark_vm.wire.ir import Instr, Module
from bark_vm.wire.status import parse_status
from bark_vm.request_handling import WorkerConfig, check_request, handle

from support.wire_golden import A_MNPK_V1, A_MNPK_V2, A_MNRS, B_MNPK_V1, C_MNPK_V2, D_MNPK_V1

GOLDEN = [A_MNPK_V1, A_MNPK_V2, B_MNPK_V1, C_MNPK_V2, D_MNPK_V1]
V2 = WorkerConfig(abi=2)
V1 = WorkerConfig(abi=1)
Q = QuantBlock(0, 2, -1000, 1000)
X22 = ((2, 2), (1, 2, 3, 4))


def code_of(raw: bytes, config: WorkerConfig = V2) -> str | None:
    try:
        check_request(raw, config)
    except WorkerError as e:
        return e.code
    return None


def bad(raw: bytes, config: WorkerConfig = V2) -> None:
    assert code_of(raw, config) == "BAD_ENVELOPE"


def patched(raw: bytes, at: int, new: bytes) -> bytes:
    return raw[:at] + new + raw[at + len(new):]


# --- step 1: size ------------------------------------------------------------------------------
def test_over_max_payload_is_too_large():
    assert code_of(A_MNPK_V1, WorkerConfig(max_payload=204)) == "TOO_LARGE"
    assert code_of(A_MNPK_V1, WorkerConfig(max_payload=205)) is None


# --- step 2: envelope --------------------------------------------------------------------------
@pytest.mark.parametrize("raw", GOLDEN, ids=["A1", "A2", "B1", "C2", "D1"])
def test_truncation_at_every_byte_boundary(raw):
    for n in range(len(raw)):
        bad(raw[:n])


@pytest.mark.parametrize("raw", GOLDEN, ids=["A1", "A2", "B1", "C2", "D1"])
def test_trailing_byte(raw):
    bad(raw + b"\0")


ENTRY0 = 24 + 97  # first entry of A-v1


@pytest.mark.parametrize("at,new", [
    (0, b"X"),                 # magic
    (4, b"\x02\x00"),          # envelope version 2
    (4, b"\x00\x00"),          # envelope version 0
    (6, b"\x01\x00"),          # flags
    (17, b"\x03"),             # quant dtype 3
    (17, b"\x00"),             # quant dtype 0
    (18, b"\x01"),             # quant reserved
    (12, b"\x11"),             # tensor_count 17 > 16
    (12, b"\x04"),             # tensor_count 4 > the 3 entries
    (12, b"\x02"),             # tensor_count 2 < the 3 entries: trailing bytes
    (8, b"\xff\x00"),          # ir_size past the end
    (ENTRY0, b"\x01"),         # param_index not dense
    (ENTRY0 + 1, b"\x07"),     # entry dtype 7
    (ENTRY0 + 1, b"\x01"),     # entry dtype differs from the quant dtype
    (ENTRY0 + 2, b"\x00"),     # rank 0
    (ENTRY0 + 2, b"\x05"),     # rank 5
    (ENTRY0 + 3, b"\x01"),     # entry reserved
    (ENTRY0 + 4, b"\x00"),     # a zero dim
    (ENTRY0 + 4, b"\xff\xff\xff\xff"),  # dims overflow: 2^32-1 x 2 elements
    (ENTRY0 + 4, b"\x03"),     # dims [3, 2]: 6 elements declared, 4 carried
])
def test_envelope_rules(at, new):
    bad(patched(A_MNPK_V1, at, new))


def test_decode_request_is_plain_data():
    req = decode_request(A_MNPK_V1)
    assert req.entries[2] == ((2, 2), (0, 0, -100, 0))
    assert isinstance(req.entries[0][1][0], int)


def test_mnrs_decoder_rules():
    res = decode_result(A_MNRS, 2)
    assert res.entries == (((2, 2), (19, 22, 0, 50)),)
    for n in range(len(A_MNRS)):
        with pytest.raises(WorkerError):
            decode_result(A_MNRS[:n])
    with pytest.raises(WorkerError):
        decode_result(A_MNRS, 1)  # dtype of another request
    with pytest.raises(WorkerError):
        decode_result(patched(A_MNRS, 12, b"\x01"))  # index out of order
    assert decode_result(patched(A_MNRS, 12, b"\x01"), dense=False).indexes == (1,)
    assert decode_result(b"MNRS\x01\x00\x05\x00\x00\x00\x00\x00").status == 5


# --- step 3: IR header -------------------------------------------------------------------------
def with_ir(ir_bytes: bytes, entries=(X22,)) -> bytes:
    return encode_request(Q, ir_bytes, list(entries))


GOOD_V2 = Module(2, (Instr(1, 0), Instr(0x20, 1, (0, 0, 0, 0), 0, 1), Instr(0xFE, 1)), (1,))
GOOD_V1 = Module(1, GOOD_V2.instrs, (1,))


def test_small_modules_are_good():
    assert code_of(with_ir(wire_ir.encode_module(GOOD_V2))) is None
    assert code_of(with_ir(wire_ir.encode_module(GOOD_V1)), V1) is None


@pytest.mark.parametrize("mutate", [
    lambda b: b[:15],                       # shorter than the header
    lambda b: b"MNIX" + b[4:],              # magic
    lambda b: patched(b, 4, b"\x03"),       # version 3
    lambda b: patched(b, 4, b"\x00"),       # version 0
    lambda b: patched(b, 6, b"\x01"),       # header flags
    lambda b: b + b"\0",                    # size: one byte too many
    lambda b: b[:-1],                       # size: one byte short
    lambda b: patched(b, 8, b"\x04"),       # instr_count disagrees with the size
    lambda b: patched(b, 12, b"\x02"),      # output_count disagrees with the size
    lambda b: patched(b, 16, b"\xff"),      # opcode 0xff (UNKNOWN) is not in the table
    lambda b: patched(b, 16, b"\x04"),      # opcode 0x04 does not exist
])
def test_ir_header_rules(mutate):
    bad(with_ir(mutate(wire_ir.encode_module(GOOD_V2))))


def test_v2_module_to_a_v1_worker():
    bad(A_MNPK_V2, V1)
    assert code_of(A_MNPK_V1, V1) is None


# --- step 4: capability ------------------------------------------------------------------------
def test_unsupported_ops_named_in_first_use_order():
    m = Module(2, (Instr(1, 0), Instr(0x51, 1, (0, 0, 0, 0), 0, 1), Instr(0x50, 2, (1, 0, 0, 0), 0, 2),
                   Instr(0x51, 3, (2, 0, 0, 0), 0, 3), Instr(0xFE, 3)), (3,))
    with pytest.raises(WorkerError) as e:
        check_request(with_ir(wire_ir.encode_module(m)), V2)
    assert e.value.code == "UNSUPPORTED_OP"
    assert e.value.detail == "this worker does not support: dequantize, quantize"
    assert wire_ir.compute_mnemonics(m) == ["dequantize", "quantize"]


def test_capability_before_instruction_rules():
    # A v1 module holding RESHAPE: a v1 worker lacks the op, which it says first.
    m = Module(1, (Instr(1, 0), Instr(0x42, 1, (0, 0, 0, 0), 0, 1), Instr(0xFE, 1)), (1,))
    assert code_of(with_ir(wire_ir.encode_module(m)), V1) == "UNSUPPORTED_OP"
    assert code_of(with_ir(wire_ir.encode_module(m)), V2) == "BAD_ENVELOPE"  # v1 cannot hold it


# --- step 5: instructions ----------------------------------------------------------------------
P0 = Instr(1, 0)
RET = Instr(0xFE, 1)


def mod(*instrs, outputs=(1,), version=2):
    return Module(version, tuple(instrs), outputs)


BAD_MODULES = {
    "nop": mod(P0, Instr(0x00, 1), RET),
    "input": mod(P0, Instr(0x03, 1), RET),
    "dst numbering": mod(P0, Instr(0x20, 2, (0, 0, 0, 0), 0, 1), Instr(0xFE, 2), outputs=(2,)),
    "operand >= dst": mod(P0, Instr(0x20, 1, (1, 0, 0, 0), 0, 1), RET),
    "binary operand >= dst": mod(P0, Instr(0x11, 1, (0, 5, 0, 0), 0, 1), RET),
    "unused src1": mod(P0, Instr(0x20, 1, (0, 1, 0, 0), 0, 1), RET),
    "unused imm": mod(P0, Instr(0x20, 1, (0, 0, 0, 0), 7, 1), RET),
    "unused src2 of add": mod(P0, Instr(0x11, 1, (0, 0, 3, 0), 0, 1), RET),
    "param level": mod(Instr(1, 0, level=1), Instr(0x20, 1, (0, 0, 0, 0), 0, 1), RET),
    "param field": mod(Instr(1, 0, imm=1), Instr(0x20, 1, (0, 0, 0, 0), 0, 1), RET),
    "param after compute": mod(Instr(2, 0), Instr(1, 1), Instr(0x11, 2, (0, 1, 0, 0), 0, 1),
                               Instr(0xFE, 2), outputs=(2,)),
    "const level": mod(P0, Instr(2, 1, level=1), RET),
    "v1 nonzero const": mod(P0, Instr(2, 1, imm=3), RET, version=1),
    "return not last": mod(P0, Instr(0xFE, 0), Instr(0x20, 1, (0, 0, 0, 0), 0, 1)),
    "no return": mod(P0, Instr(0x20, 1, (0, 0, 0, 0), 0, 1)),
    "return holds another": mod(P0, Instr(0x20, 1, (0, 0, 0, 0), 0, 1), Instr(0xFE, 0)),
    "return fields": mod(P0, Instr(0x20, 1, (0, 0, 0, 0), 0, 1), Instr(0xFE, 1, level=2)),
    "sync dst": mod(P0, Instr(0xF0, 3, level=1), Instr(0x20, 1, (0, 0, 0, 0), 0, 1), RET),
    "sync imm": mod(P0, Instr(0xF0, 0, imm=1, level=1), Instr(0x20, 1, (0, 0, 0, 0), 0, 1), RET),
    "outputs 0": mod(P0, Instr(0x20, 1, (0, 0, 0, 0), 0, 1), RET, outputs=()),
    "outputs 17": mod(P0, Instr(0x20, 1, (0, 0, 0, 0), 0, 1), RET, outputs=(1,) * 17),
    "output undefined": mod(P0, Instr(0x20, 1, (0, 0, 0, 0), 0, 1), RET, outputs=(1, 2)),
    "multi-output flags": mod(P0, Instr(0x20, 1, (0, 0, 0, 0), 0, 1, flags=0x10), RET),
    "reserved flags": mod(P0, Instr(0x20, 1, (0, 0, 0, 0), 0, 1, flags=0x02), RET),
    "batchnorm without flag": mod(P0, Instr(0x53, 1, (0, 0, 0, 0), 0, 1), RET),
    "softmax axis 4": mod(P0, Instr(0x23, 1, (0, 0, 0, 0), 5, 1), RET),
    "sum axis 9": mod(P0, Instr(0x60, 1, (0, 0, 0, 0), 9, 1), RET),
    "concat axis 5": mod(P0, Instr(0x41, 1, (0, 0, 0, 0), 5, 1), RET),
    "pool kernel 0": mod(P0, Instr(0x31, 1, (0, 0, 0, 0), 0x0200, 1), RET),
    "pool stride 0": mod(P0, Instr(0x31, 1, (0, 0, 0, 0), 0x0002, 1), RET),
    "conv stride 0": mod(P0, Instr(0x30, 1, (0, 0, 0, 0), 0x0100, 1), RET),
    "reshape no dims": mod(P0, Instr(0x42, 1, (0, 0xFFFF, 0xFFFF, 0xFFFF), 0xFFFF, 1), RET),
    "reshape dim 0": mod(P0, Instr(0x42, 1, (0, 4, 0, 0xFFFF), 0xFFFF, 1), RET),
    "reshape gap": mod(P0, Instr(0x42, 1, (0, 4, 0xFFFF, 1), 0xFFFF, 1), RET),
    "split axis 4": mod(P0, Instr(0x43, 1, (0, 4, 2, 0), 0, 1), RET),
    "split index >= count": mod(P0, Instr(0x43, 1, (0, 0, 2, 2), 0, 1), RET),
    "split count 0": mod(P0, Instr(0x43, 1, (0, 0, 0, 0), 0, 1), RET),
    "split imm": mod(P0, Instr(0x43, 1, (0, 0, 2, 0), 1, 1), RET),
    "v1 add immediate": mod(P0, Instr(0x11, 1, (0, 0, 0, 0), 1, 1), RET, version=1),
    "v1 relu immediate byte 7": mod(P0, Instr(0x20, 1, (0, 0, 0, 0), 1 << 16, 1), RET, version=1),
}


@pytest.mark.parametrize("name", list(BAD_MODULES))
def test_instruction_rules(name):
    m = BAD_MODULES[name]
    config = V1 if m.version == 1 else V2
    bad(with_ir(wire_ir.encode_module(m)), config)


def test_good_field_layouts_pass():
    for m in [
        mod(P0, Instr(0x53, 1, (0, 0, 0, 0), 0, 1, flags=1), RET),       # batchnorm, 5 regs
        mod(P0, Instr(0x42, 1, (0, 4, 0xFFFF, 0xFFFF), 0xFFFF, 1), RET),  # reshape [4]
        mod(P0, Instr(0x43, 1, (0, 1, 2, 1), 0, 1), RET),                 # split
        mod(P0, Instr(0x31, 1, (0, 0, 0, 0), 0x0101, 1), RET),           # pool 1, stride 1
        mod(P0, Instr(0x41, 1, (0, 0, 0, 0), 0, 1), RET),                 # concat imm 0 = axis 0
        mod(P0, Instr(2, 1, imm=0xFFFB), Instr(0x11, 2, (0, 1, 0, 0), 0, 1), Instr(0xFE, 2),
            outputs=(2, 1)),
    ]:
        wire_ir.validate_module(m)


def test_value_count_over_rf_slots():
    m = Module(2, tuple(Instr(2, k) for k in range(4097)) + (Instr(0xFE, 0),), (0,))
    bad(with_ir(wire_ir.encode_module(m), ()))
    ok = Module(2, m.instrs[:4096] + (Instr(0xFE, 0),), (0,))
    assert code_of(with_ir(wire_ir.encode_module(ok), ())) is None
    with pytest.raises(WorkerError):
        wire_ir.validate_module(GOOD_V2, rf_slots=1)


# --- step 6: binding ---------------------------------------------------------------------------
def test_param_count_must_equal_tensor_count():
    ir_bytes = wire_ir.encode_module(GOOD_V2)
    bad(with_ir(ir_bytes, (X22, X22)))
    bad(with_ir(ir_bytes, ()))


# --- step 7: execution -------------------------------------------------------------------------
def test_int8_output_out_of_range_is_exec_failed():
    q8 = QuantBlock(0, 1, -100, 100)
    add = Module(1, (Instr(1, 0), Instr(1, 1), Instr(0x11, 2, (0, 1, 0, 0), 0, 1),
                     Instr(0xFE, 2)), (2,))
    raw = encode_request(q8, wire_ir.encode_module(add), [((1,), (100,)), ((1,), (27,))])
    assert handle(raw, V1) == b"MNRS\x01\x00\x00\x00\x01\x00\x00\x00\x00\x01\x01\x00\x01\x00\x00\x00\x7f"
    raw = encode_request(q8, wire_ir.encode_module(add), [((1,), (100,)), ((1,), (28,))])
    with pytest.raises(WorkerError) as e:
        handle(raw, V1)
    assert e.value.code == "EXEC_FAILED"


def test_int8_entries_refuse_values_that_do_not_fit():
    with pytest.raises(ValueError):
        encode_request(QuantBlock(0, 1, -100, 100), b"", [((1,), (128,))])


# --- §7 stdio session rules (in-process) -------------------------------------------------------
def session(stdin: bytes, **kw):
    out, log = io.BytesIO(), io.StringIO()
    rc = serve(io.BytesIO(stdin), out, WorkerConfig(alias="t", **kw), log)
    out.seek(0)
    frames = []
    while (f := read_frame(out)) is not None:
        frames.append((f.type, f.payload))
    return rc, frames


def test_session_goes_on_after_a_wrong_frame_type_and_a_too_long_frame():
    stdin = (frame_bytes(b"HELO", b"{}") + frame_bytes(b"MNPK", b"x" * 300)
             + frame_bytes(b"MNPK", A_MNPK_V1))
    rc, frames = session(stdin, max_payload=250)
    assert rc == 0
    assert [t for t, _ in frames] == [b"HELO", b"ERRJ", b"ERRJ", b"MNRS"]
    assert json.loads(frames[1][1])["error"] == "BAD_ENVELOPE"
    assert json.loads(frames[2][1])["error"] == "TOO_LARGE"
    assert frames[3][1] == A_MNRS


@pytest.mark.parametrize("tail", [b"MNP", b"MNPK\x10\x00\x00\x00abc", b"MNPK\xff\xff\x00\x00a"])
def test_eof_inside_a_frame_exits_1_writing_nothing_more(tail):
    rc, frames = session(frame_bytes(b"MNPK", A_MNPK_V1) + tail, max_payload=1000)
    assert rc == 1
    assert [t for t, _ in frames] == [b"HELO", b"MNRS"]


def test_eof_at_a_boundary_exits_0():
    rc, frames = session(b"")
    assert rc == 0 and [t for t, _ in frames] == [b"HELO"]


# --- peer JSON (spec/wire.md §7: nesting capped at 16, no control characters, no surrogates)
STRICT_JSON = [  # (text, None when accepted, else the start of the refusal)
    ("[" * 16 + "]" * 16, None),
    ("[" * 17 + "]" * 17, "nesting deeper than 16"),
    ('{"a":' * 16 + "1" + "}" * 16, None),
    ('{"a":' * 17 + "1" + "}" * 17, "nesting deeper than 16"),
    ('"[[[[[[[[[[[[[[[[[["', None),  # brackets inside a string do not nest
    ('"\\\\ud800"', None),  # an escaped backslash, then the letters "ud800"
    ('"\\ud800"', "a surrogate escape"),
    ('"\\uDFFF"', "a surrogate escape"),
    ('"\\u00e9"', None),
    ('"a\tb"', "not JSON: Invalid control character"),
    ("{} {}", "not JSON: Extra data"),
    ("1" * 70000, "a JSON body of 70000 bytes is over 65536"),
]


@pytest.mark.parametrize("text, refusal", STRICT_JSON)
def test_strict_json(text, refusal):
    if refusal is None:
        assert strict_json.loads(text.encode()) == json.loads(text)
    else:
        with pytest.raises(ValueError) as e:
            strict_json.loads(text.encode())
        assert str(e.value).startswith(refusal)


@given(st.binary(max_size=300))
@settings(max_examples=300)
def test_strict_json_raises_only_value_error(raw):
    try:
        strict_json.loads(raw)
    except ValueError:
        pass


def test_a_status_with_an_unknown_field_nested_to_the_cap_is_accepted():
    body = json.loads(WorkerConfig(alias="vm1").status_json())
    text = json.dumps(body)[:-1] + ',"extra":' + "[" * 15 + "]" * 15 + "}"
    assert parse_status(text.encode()).alias == "vm1"
    with pytest.raises(ValueError, match="nesting deeper than 16"):
        parse_status((json.dumps(body)[:-1] + ',"extra":' + "[" * 16 + "]" * 16 + "}").encode())


# --- the warm parent's socket (bark_vm/wire/fork_socket.py) ------------------------------
@settings(max_examples=200)
@given(st.integers(0, 2**31), st.lists(st.text(st.characters(blacklist_characters="\0",
                                                             blacklist_categories=("Cs",)))))
def test_the_fork_socket_codec_reads_back_what_it_writes(number, argv):
    assert fork_socket.read_request(fork_socket.fork_request(number, argv)) == (
        "fork", number, argv)
    assert fork_socket.read_request(fork_socket.kill_request(number)) == ("kill", number, [])
    for verb, value in ((fork_socket.FORKED, 4242), (fork_socket.EXITED, -9),
                        (fork_socket.FAILED, "OSError: [Errno 24] Too many open files")):
        assert fork_socket.read_answer(fork_socket.answer(verb, number, value)) == (
            verb, number, str(value))


@pytest.mark.parametrize("data", [b"", b"spawn 1", b"kill x", b"fork", b"fork 1x\0a"])
def test_the_fork_socket_refuses_what_is_no_request(data):
    with pytest.raises(ValueError):
        fork_socket.read_request(data)
