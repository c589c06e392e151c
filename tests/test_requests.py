"""Request cases (conformance/requests.py, malformations.py, cases/malformed/ and invalid/):
every named malformation has its case file; each breaks exactly the rule it names, at the
§6.1 step it names (bark_vm's own decoder passes every earlier step, and says why it
refuses); a worker with one rule removed fails the case for that rule; and every answer is
judged, never raised."""
import re
from dataclasses import replace

import pytest

from bark_vm import request_handling
from bark_vm.request_handling import Programs, WorkerConfig, execute_request, handle
from bark_vm.wire import ir
from bark_vm.wire.constants import WorkerError
from bark_vm.wire.envelope import decode_request
from bark_vm.wire.ir import Module, missing_ops, parse_module, validate_module
from maned.failures import coded, died, timed_out, unreachable
from maned_conformance.cases import CASES, all_cases
from maned_conformance.generate_requests import case_text, folder
from maned_conformance.malformations import EQUIVALENTS, MALFORMATIONS, pad_values
from maned_conformance.requests import NotBuilt, build, build_pieces, run_request, runs_on
from maned_conformance.targets import VmUnderTest

from gates import HANG_GUARD_S

REQUEST_CASES = {c.mutation: c for c in all_cases() if c.mutation in MALFORMATIONS}
ENCODING_CASES = {c.mutation: c for c in all_cases() if c.mutation in EQUIVALENTS}

# What bark_vm says when it refuses each malformation: the refusal is for the rule named,
# not for an accidental neighbour at the same step.
DETAIL = {
    "mnpk_magic": r"MNPK magic is wrong", "mnpk_version": r"MNPK version 2 is not 1",
    "mnpk_flags": r"MNPK flags are not 0", "quant_reserved": r"quant reserved bytes",
    "quant_dtype_0": r"quant dtype 0 is not", "quant_dtype_3": r"quant dtype 3 is not",
    "tensor_count_17": r"tensor_count 17 is over 16",
    "ir_size_past_end": r"ir_size \d+ runs past the end",
    "entry_index_first": r"entry 0 has param_index 1",
    "entry_index_last": r"entry 2 has param_index 1",
    "entry_dtype": r"entry 0 dtype 1 differs", "entry_rank_0": r"entry 0 rank 0 is not",
    "entry_rank_5": r"entry 0 rank 5 is not", "entry_reserved": r"entry 0 reserved byte",
    "entry_zero_dim": r"entry 0 has a zero dim",
    "entry_dims_truncated": r"entry 2 dims are truncated",
    "entry_data_truncated": r"entry 2 data is truncated", "trailing_bytes": r"1 trailing bytes",
    "entry_header_truncated": r"entry 2 header is truncated",
    "ir_size_high_byte": r"ir_size 1677\d+ runs past the end",
    "tensor_count_high_byte": r"tensor_count 16777219 is over 16",
    "tensor_count_17_whole": r"tensor_count 17 is over 16",
    "quant_dtype_0_no_tensors": r"quant dtype 0 is not",
    "entry_dim_high_byte": r"entry 0 data is truncated",
    "no_tensors_reserved_op": r"support: quantize$",
    "trailing_to_max_payload": r"^MNPK has \d+ trailing bytes$",
    "ir_short": r"IR module is 15 bytes, shorter", "ir_magic": r"IR module magic is wrong",
    "ir_version_0": r"IR version 0 is not 1 or 2", "ir_version_3": r"IR version 3 is not 1 or 2",
    "ir_newer_than_worker": r"IR version (3 is not 1 or 2|2 is newer than this worker's ABI 1)",
    "ir_flags": r"IR header flags are not 0",
    "ir_size_too_small": r"IR module is (96|177) bytes, its header says (97|178)",
    "ir_size_too_large": r"IR module is (98|179) bytes, its header says (97|178)",
    "opcode_unknown": r"opcode 0x16 is not in the opcode table",
    "opcode_ff": r"opcode 0xff is not in the opcode table",
    "ir_count_high_byte": r"IR module is (97|178) bytes, its header says \d{9}",
    "ir_outputs_high_byte": r"IR module is (97|178) bytes, its header says \d{8}",
    "opcode_unknown_after_quantize": r"instruction \d: opcode 0x16 is not in the opcode table",
    "v1_opcode_unknown_after_quantize": r"instruction 5: opcode 0x16 is not in the "
    r"opcode table",
    "reserved_quantize": r"support: quantize$", "reserved_dequantize": r"support: dequantize$",
    "v1_module_reshape": r"\(reshape\) cannot be encoded in ABI v1|support: reshape$",
    "v1_module_split": r"\(split\) cannot be encoded in ABI v1|support: split$",
    "v1_module_batchnorm": r"\(batchnorm\) cannot be encoded in ABI v1|support: batchnorm$",
    "dst_gap": r"\(relu\): dst r3, expected r2",
    "param_after_compute": r"\(param\): a PARAM follows a non-PARAM",
    "read_later_value": r"\(relu\): reads r3, not defined before r2",
    "read_self": r"\(relu\): reads r2, not defined before r2",
    "param_unused_imm": r"0 \(param\): unused field", "param_level": r"0 \(param\): unused field",
    "const_unused_src": r"\(const\): unused field src/level",
    "const_level": r"\(const\): unused field src/level",
    "v1_const_nonzero": r"v1 CONST must be 0, got 5",
    "sync_dst": r"\(sync\): unused field dst/src/imm",
    "sync_src": r"\(sync\): unused field dst/src/imm",
    "sync_imm": r"\(sync\): unused field dst/src/imm",
    "return_unused_src": r"\(return\): unused field src/imm/level",
    "return_level": r"\(return\): unused field src/imm/level",
    "v1_return_level": r"\(return\): unused field src/imm/level",
    "v1_pool_kernel_over_input": r"maxpool2d: window 4 is larger than the input extent 3 ",
    "v1_conv2d_kernel_over_padded_input": r"conv2d: window 4 is larger than the input "
    r"extent 3 of \[1, 1\]",
    "values_at_rf_slots_bad_shape": r"matmul \[1, 4\] x \[2, 2\]",
    "level_max_bad_shape": r"matmul \[1, 4\] x \[2, 2\]",
    "binary_unused_imm": r"\(add\): unused field imm is not 0",
    "binary_unused_src2": r"\(add\): unused field src2/src3",
    "unary_unused_src1": r"\(relu\): unused field src1..src3",
    "unary_unused_imm": r"\(relu\): unused field imm", "split_unused_imm": r"\(split\): unused "
    r"field imm", "concat_axis_5": r"\(concat\): axis immediate 5",
    "softmax_axis_5": r"\(softmax\): axis immediate 5",
    "reduction_axis_5": r"\(tensor_sum\): axis immediate 5",
    "conv2d_stride_0": r"\(conv2d\): conv2d immediate 0x100 ",
    "v1_conv2d_imm_high": r"\(conv2d\): conv2d immediate 0x10101 ",
    "pool_kernel_0": r"\(maxpool2d\): pool immediate 0x100 ",
    "pool_stride_0": r"\(avgpool2d\): pool immediate 0x2 ",
    "pool_stride_0_kernel_128": r"\(avgpool2d\): pool immediate 0x80 ",
    "v1_pool_imm_high": r"\(maxpool2d\): pool immediate 0x10102 ",
    "reshape_no_dims": r"target dims \[65535, 65535, 65535, 65535\] are not",
    "reshape_dims_gap": r"target dims \[3, 65535, 2, 65535\] are not",
    "reshape_dim_0": r"\(reshape\): a target dim is outside",
    "reshape_imm_after_absent": r"target dims \[3, 2, 65535, 1\] are not",
    "reshape_last_dim_0": r"\(reshape\): a target dim is outside",
    "split_axis_4": r"selector axis 4, 2 sections, index 1",
    "split_sections_0": r"selector axis 1, 0 sections, index 0",
    "split_index_over": r"selector axis 1, 2 sections, index 2",
    "return_not_last": r"RETURN is not the last instruction",
    "last_not_return": r"the last instruction is not RETURN",
    "return_other_value": r"RETURN holds r0, the first output is r3",
    "nop_present": r"\(nop\) is never valid", "input_present": r"\(input\) is never valid",
    "flags_bit1": r"\(relu\): flags 0x02, expected 0x00",
    "flags_bit3": r"\(relu\): flags 0x08, expected 0x00",
    "flags_bit4": r"\(relu\): multi-output", "flags_bit7": r"\(relu\): multi-output",
    "batchnorm_no_flag": r"\(batchnorm\): flags 0x00, expected 0x01",
    "flag_bit0_other_op": r"\(relu\): flags 0x01, expected 0x00",
    "values_over_rf_slots": r"more than 4096 values",
    "v1_values_257": r"instruction 257 \(const\): dst r0, expected r256",
    "outputs_0": r"output table has 0 entries", "outputs_17": r"output table has 17 entries",
    "output_undefined": r"output r3 is not defined",
    "tensor_missing": r"3 PARAMs but the request carries 2 tensors",
    "tensor_extra": r"3 PARAMs but the request carries 4 tensors",
    "entry_shape_contradicts": r"matmul \[1, 4\] x \[2, 2\]",
    "reshape_size_mismatch": r"reshape \[2, 3\] \(6 elements\) to \[4, 2\]",
    "split_uneven": r"split \[2, 6\]: 4 sections do not divide axis 1",
    "split_axis_past_rank": r"split: axis 2 is out of range for \[2, 6\]",
    "quantres_10_table": r"activation LUTs need 0 <= quantres <= 9, got 10",
}


def test_every_malformation_has_its_case_file_as_generated():
    assert set(REQUEST_CASES) == set(MALFORMATIONS) == set(DETAIL)
    for name, case in REQUEST_CASES.items():
        m = MALFORMATIONS[name]
        assert case.id == f"{folder(m)}/{name}.toml"
        assert (case.refused.cdp, case.refused.cdp_abi1) == (m.cdp, m.cdp_abi1), name
        assert (CASES / case.id).read_text() == case_text(name, m), f"{name}: regenerate"


def test_every_equivalent_encoding_has_its_case_file_and_is_read_as_the_compilers():
    """Issue 33, point 8: bytes the compiler never makes but the wire allows (CONCAT imm 0):
    each has its generated case, and a worker of either ABI answers them with the very MNRS
    it gives the compiler's bytes."""
    assert set(ENCODING_CASES) == set(EQUIVALENTS) and EQUIVALENTS
    assert {c.mutation for c in all_cases() if c.mutation} == set(MALFORMATIONS) | set(
        EQUIVALENTS)
    for name, case in ENCODING_CASES.items():
        e = EQUIVALENTS[name]
        assert case.id == f"encodings/{name}.toml" and case.refused is None
        assert (CASES / case.id).read_text() == case_text(name, e), f"{name}: regenerate"
        for abi in e.abis:
            config = WorkerConfig(abi=abi)
            pieces = build_pieces(case, config.status())
            raw = build(case, config.status())
            assert raw != pieces.request()  # other bytes ...
            assert handle(raw, config) == handle(pieces.request(), config)  # ... one answer


def first_refusal(raw: bytes, config: WorkerConfig) -> tuple[int, str | None, str | None]:
    """(§6.1 step, code, detail) of the first check that refuses `raw`, bark_vm's functions
    taken one step at a time; (8, None, None) when it runs."""
    steps = [lambda r: decode_request(r, buffers=True),
             lambda req: (req, parse_module(req.ir, config.abi)), _capability(config),
             lambda rm: validate_module(rm[1], config.rf_slots) or rm, _binding,
             lambda rm: execute_request(*rm)]
    value = raw
    for step, check in enumerate(steps, start=2):
        try:
            value = check(value)
        except WorkerError as e:
            return step, e.code, e.detail
    return 8, None, None


def _capability(config):
    def check(rm):
        missing = missing_ops(rm[1], config.ops)
        if missing:
            raise WorkerError("UNSUPPORTED_OP", "this worker does not support: "
                              + ", ".join(missing))
        return rm
    return check


def _binding(rm):
    params = sum(1 for i in rm[1].instrs if i.opcode == ir.PARAM)
    if params != len(rm[0].entries):
        raise WorkerError("BAD_ENVELOPE", f"the module has {params} PARAMs but the request "
                          f"carries {len(rm[0].entries)} tensors")
    return rm


PAIRS = [(name, abi) for name, case in REQUEST_CASES.items() for abi in (2, 1)
         if runs_on(case, WorkerConfig(abi=abi).status())]


@pytest.mark.parametrize("name, abi", PAIRS, ids=[f"{n}@abi{a}" for n, a in PAIRS])
def test_each_malformation_breaks_only_its_rule(name, abi):
    case, m, config = REQUEST_CASES[name], MALFORMATIONS[name], WorkerConfig(abi=abi)
    pieces = build_pieces(case, config.status())
    if pieces.module.version <= abi:  # the well-formed request runs on this worker
        assert first_refusal(pieces.request(), config) == (8, None, None)
    raw = build(case, config.status())
    step, code, detail = first_refusal(raw, config)
    assert (step, code) == (m.step_for(abi), case.refused.cdp_for(abi)), detail
    assert re.search(DETAIL[name], detail), detail
    with pytest.raises(WorkerError) as worker:  # the request handling says the same
        handle(raw, config)
    assert (worker.value.code, worker.value.detail) == (code, detail)


def test_the_abi1_worker_runs_every_case_its_modules_can_express():
    at_abi1 = {n for n, a in PAIRS if a == 1}
    v2_only = {n for n, m in MALFORMATIONS.items() if m.abis == (2,) and n not in at_abi1}
    assert {"v1_module_reshape", "v1_module_split", "v1_module_batchnorm",
            "v1_values_257", "v1_const_nonzero", "ir_newer_than_worker"} <= at_abi1
    assert all(REQUEST_CASES[n].abi is None for n in v2_only)


@pytest.mark.parametrize("name, change", [
    ("values_over_rf_slots", lambda m: pad_values(m, 4096)),
    ("v1_values_257", lambda m: pad_values(m, 256)),
    ("outputs_17", lambda m: Module(m.version, m.instrs, m.outputs[:1] * 16)),
])
def test_the_limits_themselves_are_valid(name, change):
    """Right at each limit the module is valid: the malformations are one past it."""
    pieces = build_pieces(REQUEST_CASES[name], WorkerConfig().status())
    assert first_refusal(pieces.request(module=change(pieces.module)),
                         WorkerConfig()) == (8, None, None)


# --- in-process workers: strict, lax, and devices that misbehave -----------------------------
class InProcess:
    """bark_vm's request handling in this process behind the device interface (start, run)."""

    def __init__(self, abi: int = 2):
        self.config = WorkerConfig(abi=abi)

    def start(self):
        return self.config.status()

    def run(self, raw: bytes) -> bytes:
        try:
            return handle(raw, self.config)
        except WorkerError as e:
            raise coded("device 'hardware' (127.0.0.1:1)", e.code, e.code, e.detail) from None


def _lax_trailing(raw, buffers=False):
    """A decoder that ignores trailing bytes."""
    try:
        return decode_request(raw, buffers)
    except WorkerError as e:
        if "trailing" not in e.detail:
            raise
        return decode_request(raw[:-int(e.detail.split()[2])], buffers)


LAX = {  # case -> (the rule removed, where)
    "values_over_rf_slots": ("validate_module",
                             lambda m, rf_slots=None: validate_module(m, 1 << 20)),
    "binary_unused_imm": ("_check_fields", lambda *a: None),
    "reserved_quantize": ("missing_ops", lambda m, ops: []),
    "trailing_bytes": ("decode_request", _lax_trailing),
}


@pytest.mark.parametrize("name", sorted(LAX))
def test_a_worker_without_the_rule_fails_its_case(name, monkeypatch):
    case = REQUEST_CASES[name]
    assert run_request(case, "hardware", InProcess()).status == "pass"
    where, lax = LAX[name]
    monkeypatch.setattr(request_handling, "PROGRAMS", Programs())  # nothing lax stays cached
    monkeypatch.setattr(ir if where == "_check_fields" else request_handling, where, lax)
    outcome = run_request(case, "hardware", InProcess())
    assert outcome.status == "fail", outcome
    assert "worker" in outcome.detail and "hardware" not in outcome.detail


@pytest.mark.parametrize("abi, code", [(2, "BAD_ENVELOPE"), (1, "UNSUPPORTED_OP")])
def test_a_v1_module_with_a_v2_op_is_refused_by_each_abi_with_its_code(abi, code):
    outcome = run_request(REQUEST_CASES["v1_module_split"], "vm", InProcess(abi))
    assert (outcome.status, outcome.outputs) == ("pass", {"refused": code})


class Scripted:
    """A device whose start and run answer as told."""

    def __init__(self, run=None, start=None):
        self._run, self._start = run, start

    def start(self):
        if self._start:
            raise self._start
        return WorkerConfig().status()

    def run(self, raw):
        if isinstance(self._run, BaseException):
            raise self._run
        return self._run


WHERE = "device 'hardware' (127.0.0.1:9)"


@pytest.mark.parametrize("device, status, words", [
    (Scripted(coded(WHERE, "x", "BAD_ENVELOPE", "no")), "pass", "with BAD_ENVELOPE"),
    (Scripted(coded(WHERE, "x", "SHAPE_MISMATCH", "matmul")), "fail",
     "refuse with BAD_ENVELOPE (MNPK magic not 'MNPK'"),
    (Scripted(b"MNRS\x01\x00\x00\x00\x00\x00\x00\x00"), "fail", "ran a malformed request"),
    (Scripted(timed_out(WHERE, "no answer", 20)), "timeout",
     "(timeout): no answer within the 20 s deadline"),
    (Scripted(died(WHERE, "killed by signal 9")), "error", "(died): killed by signal 9"),
    (Scripted(coded(WHERE, "x", "AUTH_FAILED", "locked")), "error", "not asked"),
    (Scripted(coded(WHERE, "x", "BUSY", "full")), "error", "not asked"),
    (Scripted(start=unreachable(WHERE, "refused")), "error",
     "(connect_failed): refused"),
    (Scripted(RuntimeError("a bug")), "error", "RuntimeError: a bug"),
])
def test_every_answer_is_judged(device, status, words):
    outcome = run_request(REQUEST_CASES["mnpk_magic"], "hardware", device)
    assert (outcome.status, words in outcome.detail) == (status, True), outcome.detail
    assert "hardware" not in outcome.detail


def test_a_case_that_cannot_be_built_is_reported_not_raised():
    case = REQUEST_CASES["mnpk_magic"]
    broken = replace(case, mutation="no_such_rule")
    assert run_request(broken, "vm", InProcess()).status == "error"
    with pytest.raises(NotBuilt):
        build(broken, WorkerConfig().status())
    flags = run_request(REQUEST_CASES["flags_bit1"], "vm", InProcess(abi=1))
    assert (flags.status, "ABI v2" in flags.detail) == ("not_supported", True)


def test_a_broken_vm_child_does_not_poison_the_next_case():
    target = VmUnderTest()
    try:
        target.device().start()
        target.device().proc.kill()
        target.device().proc.wait(timeout=HANG_GUARD_S)  # dead, not only told to die
        case = REQUEST_CASES["entry_zero_dim"]
        first = run_request(case, "vm", target.device())
        assert first.status == "error" and "died" in first.detail
        assert run_request(case, "vm", target.device()).status == "pass"
    finally:
        target.close()
