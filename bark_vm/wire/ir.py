"""The binary IR module (spec/wire.md §1.2-1.4, spec/wire-golden.md §1.3-1.4, DESIGN D4).

An `Instr` keeps the raw fields of one instruction. Which fields are registers depends on
the opcode (wire-golden §1.4 [W7]): `srcs` holds src0..src3 (v1: src0, src1, then aux0 and
aux1 share the 24-bit immediate with byte 7); RESHAPE keeps target dims in src1..src3 and
imm (0xffff absent), SPLIT (axis, sections, index) in src1..src3, BATCHNORM its fifth
register in imm with flags bit 0 set.

Decoding is split as the worker's check order needs it (wire-golden §6.1 [W15]):
`parse_module` is step 3 (header and opcode table), `compute_mnemonics` feeds step 4
(capability), `validate_module` is step 5 (instruction rules). Every problem with the
bytes is `WorkerError("BAD_ENVELOPE", detail)`; nothing else escapes. `encode_module`
refuses a module it cannot encode with ValueError. The field accessors at the end
(`registers`, `reshape_dims`, `split_selector`, `pool_params`, `conv_params`,
`axis_param`) are what an executor reads an instruction through.
"""
import struct
from dataclasses import dataclass

from .constants import (
    ABIS, ABSENT_DIM, INSTR_BYTES, IR_HEADER_BYTES, IR_MAGIC, MAX_DIM, MAX_LEVEL,
    MAX_RANK, MAX_TENSORS, OUTPUT_ID_BYTES, RF_SLOTS,
)
from .header import bad as _bad, read_head
from .opcodes import BY_NUMBER, numbers


@dataclass(frozen=True)
class Instr:
    opcode: int
    dst: int = 0
    srcs: tuple[int, int, int, int] = (0, 0, 0, 0)
    imm: int = 0
    level: int = 0
    flags: int = 0  # v2 only


@dataclass(frozen=True)
class Module:
    version: int  # 1 or 2
    instrs: tuple[Instr, ...]
    outputs: tuple[int, ...]


# --- opcode classes (wire-golden §1.4 [W7]); the numbers are opcodes.py's ----------------
NOP, PARAM, CONST, INPUT = numbers("NOP", "PARAM", "CONST", "INPUT")
MATMUL, CONV2D, MAXPOOL2D, AVGPOOL2D = numbers("MATMUL", "CONV2D", "MAXPOOL2D", "AVGPOOL2D")
SOFTMAX, CONCAT, RESHAPE, SPLIT, BATCHNORM = numbers("SOFTMAX", "CONCAT", "RESHAPE", "SPLIT",
                                                     "BATCHNORM")
QUANTIZE, DEQUANTIZE = numbers("QUANTIZE", "DEQUANTIZE")
SYNC, RETURN, UNKNOWN = numbers("SYNC", "RETURN", "UNKNOWN")
REDUCTIONS = frozenset(numbers("TENSOR_SUM", "TENSOR_MEAN", "TENSOR_MAX", "TENSOR_MIN"))

BINARY = frozenset(numbers("MATMUL", "ADD", "SUB", "MUL", "DIV", "SCALAR_MUL",
                           "GT", "LT", "EQ", "GE", "LE", "NE", "AND", "OR", "XOR",
                           "CONV2D", "CONCAT"))
UNARY = frozenset(numbers("RELU", "SIGMOID", "TANH", "SOFTMAX", "TRANSPOSE", "LAYERNORM", "NOT",
                          "MAXPOOL2D", "AVGPOOL2D", "RESHAPE", "SPLIT")) | REDUCTIONS
V2_ONLY = frozenset({RESHAPE, SPLIT, BATCHNORM})
RESERVED = frozenset({QUANTIZE, DEQUANTIZE})
STRUCTURAL = frozenset({NOP, PARAM, CONST, INPUT, SYNC, RETURN})
# Opcodes that pass the header check (step 3): the table of §1.4, UNKNOWN excluded.
KNOWN = frozenset(n for n in BY_NUMBER if n != UNKNOWN)


def defines_value(opcode: int) -> bool:
    """PARAM, CONST and every compute opcode define the value `dst`."""
    return opcode not in (NOP, INPUT, SYNC, RETURN, UNKNOWN)


def mnemonic(opcode: int) -> str:
    op = BY_NUMBER.get(opcode)
    return op.mnemonic or op.name.lower() if op else f"0x{opcode:02x}"


# --- field accessors (shared with the executor) ---------------------------------------------
def registers(instr: Instr, version: int = 2) -> tuple[int, ...]:
    """The value ids an instruction reads, in operand order (RETURN reads its dst)."""
    op = instr.opcode
    if op in BINARY:
        return instr.srcs[:2]
    if op in UNARY:
        return instr.srcs[:1]
    if op == BATCHNORM:
        return (*instr.srcs, instr.imm)
    if op == RETURN:
        return (instr.dst,)
    return ()


def const_value(instr: Instr) -> int:
    """A CONST's literal: the 16-bit imm sign-extended (v1 CONST is always 0)."""
    return instr.imm - 0x10000 if instr.imm >= 0x8000 else instr.imm


def const_fits(value: int, abi: int) -> bool:
    """Whether a CONST instruction can carry this scalar literal (§1.2): under v2 an int16
    in its imm, under v1 only 0. Anything else travels as an input tensor (D4)."""
    return value == 0 if abi == 1 else -0x8000 <= value <= 0x7FFF


def int16_imm(value: int) -> int:
    """The imm field holding an int16 literal (ValueError outside −32768..32767)."""
    if not const_fits(value, 2):
        raise ValueError(f"{value} does not fit int16")
    return value & 0xFFFF


def axis_param(imm: int) -> int | None:
    """softmax / reductions: imm 0 = none (last axis, or whole tensor), else axis = imm − 1."""
    return None if imm == 0 else imm - 1


def concat_axis(imm: int) -> int:
    """concat: imm = axis + 1; a decoder reads 0 as axis 0."""
    return max(imm - 1, 0)


def conv_params(imm: int) -> tuple[int, int]:
    """conv2d: (stride, padding); imm 0 is bare conv2d = (1, 0)."""
    if imm == 0:
        return 1, 0
    return imm & 0xFF, (imm >> 8) & 0xFF


def pool_params(imm: int) -> tuple[int, int]:
    """maxpool2d / avgpool2d: (kernel, stride)."""
    return imm & 0xFF, (imm >> 8) & 0xFF


def reshape_dims(instr: Instr) -> tuple[int, ...]:
    """RESHAPE target dims: src1, src2, src3, imm up to the first 0xffff."""
    dims = []
    for d in (*instr.srcs[1:], instr.imm):
        if d == ABSENT_DIM:
            break
        dims.append(d)
    return tuple(dims)


def split_selector(instr: Instr) -> tuple[int, int, int]:
    """SPLIT (axis, section count, section index)."""
    return instr.srcs[1], instr.srcs[2], instr.srcs[3]


# --- encoding -------------------------------------------------------------------------------
def _u(value: int, nbytes: int, what: str) -> bytes:
    if not 0 <= value < 1 << (8 * nbytes):
        raise ValueError(f"{what} {value} does not fit {8 * nbytes} bits")
    return value.to_bytes(nbytes, "little")


# A v2 instruction: opcode, flags, dst, src0..src3, imm, level (wire-golden §1.3).
V2_INSTR = struct.Struct("<BBH4HHH")


def _v2_instr(i: Instr) -> bytes:
    """One v2 instruction's 16 bytes; a field that does not fit is named (ValueError)."""
    try:
        return V2_INSTR.pack(i.opcode, i.flags, i.dst, *i.srcs, i.imm, i.level)
    except struct.error:
        return (_u(i.opcode, 1, "opcode") + _u(i.flags, 1, "flags") + _u(i.dst, 2, "register")
                + b"".join(_u(s, 2, "register") for s in i.srcs) + _u(i.imm, 2, "immediate")
                + _u(i.level, 2, "level"))


def encode_module(module: Module) -> bytes:
    """The bytes of a module (v1 8-byte or v2 16-byte instructions). ValueError when a field
    does not fit its ABI: v1 registers over 255, srcs 2-3 or flags used, imm over 24 bits."""
    v = module.version
    if v not in ABIS:
        raise ValueError(f"IR version {v} is not 1 or 2")
    out = bytearray(IR_MAGIC + _u(v, 2, "version") + b"\0\0"
                    + _u(len(module.instrs), 4, "instruction count")
                    + _u(len(module.outputs), 4, "output count"))
    for i in module.instrs:
        if v == 1:
            if i.flags or i.srcs[2] or i.srcs[3]:
                raise ValueError(f"{mnemonic(i.opcode)}: ABI v1 has no src2, src3 or flags")
            imm = _u(i.imm, 3, "v1 immediate")
            out += (_u(i.opcode, 1, "opcode") + _u(i.dst, 1, "v1 register")
                    + _u(i.srcs[0], 1, "v1 register") + _u(i.srcs[1], 1, "v1 register")
                    + imm[:2] + _u(i.level, 1, "v1 level") + imm[2:])
        else:
            out += _v2_instr(i)
    for o in module.outputs:
        out += _u(o, OUTPUT_ID_BYTES[v], "output id")
    return bytes(out)


# --- decoding, step 3: header and opcode table ----------------------------------------------
def parse_module(raw: bytes, max_version: int = 2) -> Module:
    """Step 3 of wire-golden §6.1: length, magic, version (1..2, ≤ max_version), flags 0,
    exact total size, every opcode in the table. BAD_ENVELOPE on any failure."""
    raw = bytes(raw)
    version = read_head(raw, "IR module", IR_MAGIC, IR_HEADER_BYTES)
    if version not in ABIS:
        raise _bad(f"IR version {version} is not 1 or 2")
    if version > max_version:
        raise _bad(f"IR version {version} is newer than this worker's ABI {max_version}")
    if raw[6:8] != b"\0\0":
        raise _bad("IR header flags are not 0")
    count = int.from_bytes(raw[8:12], "little")
    n_out = int.from_bytes(raw[12:16], "little")
    isize, osize = INSTR_BYTES[version], OUTPUT_ID_BYTES[version]
    want = IR_HEADER_BYTES + count * isize + n_out * osize
    if len(raw) != want:
        raise _bad(f"IR module is {len(raw)} bytes, its header says {want}")
    base = IR_HEADER_BYTES + count * isize
    instrs = []
    if version == 1:
        for k in range(count):
            b = raw[IR_HEADER_BYTES + k * isize: IR_HEADER_BYTES + (k + 1) * isize]
            if b[0] not in KNOWN:
                raise _bad(f"instruction {k}: opcode 0x{b[0]:02x} is not in the opcode table")
            instrs.append(Instr(b[0], b[1], (b[2], b[3], 0, 0), b[4] | b[5] << 8 | b[7] << 16,
                                b[6], 0))
    else:
        for k, (op, flags, dst, s0, s1, s2, s3, imm, level) in enumerate(
                V2_INSTR.iter_unpack(raw[IR_HEADER_BYTES:base])):
            if op not in KNOWN:
                raise _bad(f"instruction {k}: opcode 0x{op:02x} is not in the opcode table")
            instrs.append(Instr(op, dst, (s0, s1, s2, s3), imm, level, flags))
    outputs = tuple(int.from_bytes(raw[base + j * osize: base + (j + 1) * osize], "little")
                    for j in range(n_out))
    return Module(version, tuple(instrs), outputs)


def compute_mnemonics(module: Module) -> list[str]:
    """The compute mnemonics a module uses, each once, in first-use order (step 4)."""
    seen: list[str] = []
    for i in module.instrs:
        op = BY_NUMBER.get(i.opcode)
        if op is not None and op.mnemonic and op.mnemonic not in seen:
            seen.append(op.mnemonic)
    return seen


def missing_ops(module: Module, ops) -> list[str]:
    """The module's compute mnemonics a worker advertising `ops` lacks, in first-use order."""
    have = set(ops)
    return [m for m in compute_mnemonics(module) if m not in have]


# --- decoding, step 5: instruction rules ----------------------------------------------------
class _Where:
    """`instruction K (mnemonic)` for a refusal, spelled only when one is raised."""

    __slots__ = ("k", "opcode")

    def __init__(self, k: int, opcode: int):
        self.k, self.opcode = k, opcode

    def __str__(self) -> str:
        return f"instruction {self.k} ({mnemonic(self.opcode)})"


def validate_module(module: Module, rf_slots: int | None = None) -> None:
    """Step 5 of wire-golden §6.1 (wire.md §1.10 made strict). BAD_ENVELOPE on any failure."""
    v = module.version
    slots = RF_SLOTS[v] if rf_slots is None else rf_slots
    instrs = module.instrs
    if not instrs or instrs[-1].opcode != RETURN:
        raise _bad("the last instruction is not RETURN")
    n = 0  # values defined so far
    params_done = False
    for k, i in enumerate(instrs):
        where = _Where(k, i.opcode)
        if i.opcode in (NOP, INPUT):
            raise _bad(f"{where} is never valid on the wire")
        if i.opcode == RETURN and k != len(instrs) - 1:
            raise _bad(f"{where}: RETURN is not the last instruction")
        if i.opcode in V2_ONLY and v == 1:
            raise _bad(f"{where} cannot be encoded in ABI v1")
        if i.flags & 0xF0:
            raise _bad(f"{where}: multi-output instructions are not accepted")
        want_flags = 1 if i.opcode == BATCHNORM else 0
        if i.flags != want_flags:
            raise _bad(f"{where}: flags 0x{i.flags:02x}, expected 0x{want_flags:02x}")
        if i.level > MAX_LEVEL[v]:
            raise _bad(f"{where}: level {i.level} is over {MAX_LEVEL[v]}")
        if i.opcode == PARAM:
            if params_done:
                raise _bad(f"{where}: a PARAM follows a non-PARAM instruction")
        else:
            params_done = True
        if defines_value(i.opcode):
            if i.dst != n:
                raise _bad(f"{where}: dst r{i.dst}, expected r{n}")
            n += 1
            if n > slots:
                raise _bad(f"the module defines more than {slots} values (rf_slots)")
            for r in registers(i, v):
                if r >= i.dst:
                    raise _bad(f"{where}: reads r{r}, not defined before r{i.dst}")
        _check_fields(i, v, where)
    outs = module.outputs
    if not 1 <= len(outs) <= MAX_TENSORS:
        raise _bad(f"the output table has {len(outs)} entries, not 1..{MAX_TENSORS}")
    for o in outs:
        if o >= n:
            raise _bad(f"output r{o} is not defined ({n} values)")
    if instrs[-1].dst != outs[0]:
        raise _bad(f"RETURN holds r{instrs[-1].dst}, the first output is r{outs[0]}")


def _zero(where: _Where, what: str, *values: int) -> None:
    if any(values):
        raise _bad(f"{where}: unused field {what} is not 0")


def _check_fields(i: Instr, v: int, where: _Where) -> None:
    """[W7] every unused field 0; [W11] immediates in range."""
    op, (_, s1, s2, s3), imm = i.opcode, i.srcs, i.imm
    if op == PARAM:
        _zero(where, "src/imm/level", *i.srcs, imm, i.level)
    elif op == CONST:
        _zero(where, "src/level", *i.srcs, i.level)
        if v == 1 and imm:
            raise _bad(f"{where}: a v1 CONST must be 0, got {imm}")
    elif op == SYNC:
        _zero(where, "dst/src/imm", i.dst, *i.srcs, imm)
    elif op == RETURN:
        _zero(where, "src/imm/level", *i.srcs, imm, i.level)
    elif op == BATCHNORM:
        pass  # five registers, checked by the caller; flags checked by the caller
    elif op == RESHAPE:
        dims = (s1, s2, s3, imm)
        k = next((j for j, d in enumerate(dims) if d == ABSENT_DIM), 4)
        if k == 0 or any(d != ABSENT_DIM for d in dims[k:]):
            raise _bad(f"{where}: target dims {list(dims)} are not 1..4 leading dims")
        if any(not 1 <= d <= MAX_DIM for d in dims[:k]):
            raise _bad(f"{where}: a target dim is outside 1..{MAX_DIM}")
    elif op == SPLIT:
        _zero(where, "imm", imm)
        if not (s1 < MAX_RANK and s2 >= 1 and s3 < s2):
            raise _bad(f"{where}: selector axis {s1}, {s2} sections, index {s3} is out of range")
    elif op in BINARY:
        _zero(where, "src2/src3", s2, s3)
        if op == CONCAT:
            if imm > MAX_RANK:
                raise _bad(f"{where}: axis immediate {imm} is out of range")
        elif op == CONV2D:
            if imm and not (imm <= 0xFFFF and imm & 0xFF):
                raise _bad(f"{where}: conv2d immediate 0x{imm:x} is out of range")
        else:
            _zero(where, "imm", imm)
    elif op in UNARY:
        _zero(where, "src1..src3", s1, s2, s3)
        if op in REDUCTIONS or op == SOFTMAX:
            if imm > MAX_RANK:
                raise _bad(f"{where}: axis immediate {imm} is out of range")
        elif op in (MAXPOOL2D, AVGPOOL2D):
            if not (imm <= 0xFFFF and imm & 0xFF and imm >> 8):
                raise _bad(f"{where}: pool immediate 0x{imm:x} is out of range")
        else:
            _zero(where, "imm", imm)
    else:  # reserved opcodes: never reach here behind the capability check
        raise _bad(f"{where} has no field rules")
