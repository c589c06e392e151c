"""The named malformations of a well-formed request, one or more per validation rule of
spec/wire-golden.md (§6.1, the check order, and §1.4, the field rules).

`MALFORMATIONS` is the table: each entry makes the broken bytes from the well-formed pieces
(the lowered module, the quant block, the input entries, the ABIs), says the rule, the §6.1
step that must refuse it and the code. Instructions are changed structurally and re-encoded
(`encode_module` checks only field widths); bytes are patched only where no encoder would
write them.
"""
import struct
from dataclasses import dataclass, replace
from typing import Callable

from bark_vm.wire import ir
from bark_vm.wire.constants import (
    ABSENT_DIM, MAX_LEVEL, MAX_RANK, MAX_TENSORS, MNPK_HEADER_BYTES, RF_SLOTS,
)
from bark_vm.wire.dtypes import ELEM_FORMAT
from bark_vm.wire.envelope import Entry, QuantBlock, encode_entry, encode_request
from bark_vm.wire.ir import Instr, Module, encode_module
from bark_vm.wire.opcodes import BY_NUMBER, numbers


# --- the well-formed pieces -----------------------------------------------------------------
@dataclass(frozen=True)
class Pieces:
    """A well-formed request taken apart: the module (its version is the module's ABI), the
    quant block, the input entries, and the ABI of the worker it goes to."""

    module: Module
    quant: QuantBlock
    entries: tuple[Entry, ...]
    worker_abi: int
    max_payload: int | None = None  # the worker's, where a malformation needs it

    def blobs(self) -> list[bytes]:
        """Each entry's bytes, in order."""
        return [encode_entry(k, e, self.quant.dtype) for k, e in enumerate(self.entries)]

    def request(self, module: Module | None = None, ir_bytes: bytes | None = None,
                blobs: list[bytes] | None = None) -> bytes:
        """The MNPK with the module, its bytes or the entry blobs replaced; ir_size and
        tensor_count follow what is sent."""
        if ir_bytes is None:
            ir_bytes = encode_module(module or self.module)
        blobs = self.blobs() if blobs is None else blobs
        head = encode_request(self.quant, ir_bytes, [])  # header + IR, tensor_count 0
        return head[:12] + len(blobs).to_bytes(4, "little") + head[16:] + b"".join(blobs)


def _patch(raw: bytes, at: int, data: bytes) -> bytes:
    """`raw` with `data` written over it at `at` (what no encoder would write)."""
    return raw[:at] + data + raw[at + len(data):]


# --- envelope malformations (step 2) ---------------------------------------------------------
def _header(at: int, data: bytes) -> Callable[[Pieces], bytes]:
    """Overwrite the MNPK header at `at`."""
    return lambda p: _patch(p.request(), at, data)


def _ir_size_past_end(p: Pieces) -> bytes:
    """ir_size one byte more than the buffer holds after the header."""
    raw = p.request()
    return _patch(raw, 8, (len(raw) - MNPK_HEADER_BYTES + 1).to_bytes(4, "little"))


def _entry(which: int, change: Callable[[Pieces, bytes, Entry], bytes]):
    """Replace entry `which` (0 first, -1 last) with `change(pieces, its blob, its entry)`."""
    def make(p: Pieces) -> bytes:
        blobs = p.blobs()
        blobs[which] = change(p, blobs[which], p.entries[which])
        return p.request(blobs=blobs)
    return make


def _head(index: int, dtype: int, dims: tuple[int, ...], reserved: int = 0) -> bytes:
    """An entry header written as given (rank from `dims`), no field checked."""
    return bytes((index, dtype, len(dims), reserved)) + struct.pack(f"<{len(dims)}I", *dims)


def _values(dtype: int, values) -> bytes:
    """Element data in `dtype` (ValueError when a value does not fit it)."""
    try:
        return struct.pack(f"<{len(values)}{ELEM_FORMAT[dtype]}", *values)
    except struct.error as e:
        raise ValueError(f"the input does not fit dtype {dtype}: {e}") from None


def _other_dtype(p: Pieces, blob: bytes, e: Entry) -> bytes:
    """The entry in the other dtype, framed consistently (its data in that dtype)."""
    other = 1 if p.quant.dtype == 2 else 2
    return _head(blob[0], other, e[0]) + _values(other, e[1])


def _rank0(p: Pieces, blob: bytes, e: Entry) -> bytes:
    """Rank 0: no dims, one element (what a rank-0 entry would frame)."""
    return _head(blob[0], p.quant.dtype, ()) + _values(p.quant.dtype, e[1][:1])


def _rank_past_max(p: Pieces, blob: bytes, e: Entry) -> bytes:
    """Rank MAX_RANK + 1: the dims padded with 1s, the data as it was."""
    dims = tuple(e[0]) + (1,) * (MAX_RANK + 1 - len(e[0]))
    return _head(blob[0], p.quant.dtype, dims) + _values(p.quant.dtype, e[1])


def _zero_dim(p: Pieces, blob: bytes, e: Entry) -> bytes:
    """The last dim 0 and no data (an empty tensor, framed consistently)."""
    return _head(blob[0], p.quant.dtype, tuple(e[0][:-1]) + (0,))


def _cut(keep: Callable[[Pieces, bytes], int]) -> Callable[[Pieces], bytes]:
    """The request cut after `keep(pieces, request)` bytes."""
    def make(p: Pieces) -> bytes:
        raw = p.request()
        return raw[:keep(p, raw)]
    return make


def _inside_last_dims(p: Pieces, raw: bytes) -> int:
    """Two bytes into the last entry's first dim."""
    return len(raw) - len(p.blobs()[-1]) + 4 + 2


def _inside_last_header(p: Pieces, raw: bytes) -> int:
    """Three bytes into the last entry's 4-byte header (index, dtype, rank; no reserved)."""
    return len(raw) - len(p.blobs()[-1]) + 3


def _trailing_to_max_payload(p: Pieces) -> bytes:
    """Zero bytes after the last entry until the request is exactly the worker's
    max_payload: not too large (step 1 refuses only a request over it), but trailing bytes."""
    raw = p.request()
    if p.max_payload is None or p.max_payload <= len(raw):
        raise ValueError("the worker's max_payload leaves no room for trailing bytes")
    return raw + bytes(p.max_payload - len(raw))


def _high_byte(p: Pieces, blob: bytes, e: Entry) -> bytes:
    """The entry's first dim with its high byte set (2^24 more), data untouched."""
    return blob[:4] + (int.from_bytes(blob[4:8], "little") + (1 << 24)).to_bytes(4, "little") \
        + blob[8:]


def _plus_2_24(at: int) -> Callable[[Pieces], bytes]:
    """The u32 LE header field at `at` 2^24 more (its high byte set)."""
    def make(p: Pieces) -> bytes:
        raw = p.request()
        value = int.from_bytes(raw[at:at + 4], "little") + (1 << 24)
        return _patch(raw, at, value.to_bytes(4, "little"))
    return make


def _no_tensors(module: Callable[[int], Module], dtype: int | None = None):
    """A request carrying no tensor, its module made at the pieces' ABI, the quant dtype
    `dtype` where given (patched: no encoder writes it)."""
    def make(p: Pieces) -> bytes:
        raw = p.request(module=module(p.module.version), blobs=[])
        return raw if dtype is None else _patch(raw, 17, bytes((dtype,)))
    return make


def _const_only(version: int) -> Module:
    """CONST 0 returned: a module reading no tensor."""
    return Module(version, (Instr(CONST), Instr(RETURN)), (0,))


def _const_quantize(version: int) -> Module:
    """CONST 0, QUANTIZE of it (reserved), returned."""
    return Module(version, (Instr(CONST), Instr(ir.QUANTIZE, dst=1), Instr(RETURN, dst=1)),
                  (1,))


def _seventeen_tensors(p: Pieces) -> bytes:
    """17 well-formed [1] entries and a module of 17 PARAMs returning the first: the
    tensor_count rule alone is broken."""
    n = MAX_TENSORS + 1
    module = Module(p.module.version, tuple(Instr(PARAM, dst=k) for k in range(n))
                    + (Instr(RETURN),), (0,))
    blobs = [encode_entry(k, ((1,), (k,)), p.quant.dtype) for k in range(n)]
    return p.request(module=module, blobs=blobs)


# --- IR header malformations (step 3) --------------------------------------------------------
def _ir(change: Callable[[bytes], bytes]) -> Callable[[Pieces], bytes]:
    """The module's bytes changed by `change`; ir_size follows."""
    return lambda p: p.request(ir_bytes=change(encode_module(p.module)))


def _newer_than_worker(p: Pieces) -> bytes:
    """The module labelled one version above the worker's ABI: a genuine v2 module for a v1
    worker, the v2 bytes labelled version 3 for a v2 worker."""
    version = p.worker_abi + 1
    if version == 2:
        return p.request(module=replace(p.module, version=2))
    return p.request(ir_bytes=_patch(encode_module(p.module), 4, version.to_bytes(2, "little")))


def _ir_plus_2_24(at: int) -> Callable[[Pieces], bytes]:
    """The module's u32 LE header field at `at` 2^24 more (its high byte set); ir_size
    follows the bytes, which are otherwise untouched."""
    def change(b: bytes) -> bytes:
        return _patch(b, at, (int.from_bytes(b[at:at + 4], "little") + (1 << 24))
                      .to_bytes(4, "little"))
    return _ir(change)


# --- instruction malformations (steps 3-7) --------------------------------------------------
def _is(*opcodes: int) -> Callable[[Instr], bool]:
    """Selects the instructions of these opcodes."""
    return lambda i: i.opcode in opcodes


def _compute(i: Instr) -> bool:
    """A compute instruction (one with a worker mnemonic)."""
    op = BY_NUMBER.get(i.opcode)
    return bool(op and op.mnemonic)


def _index(module: Module, which: Callable[[Instr], bool]) -> int:
    """The first instruction `which` selects (ValueError: the flow has none, a case bug)."""
    k = next((k for k, i in enumerate(module.instrs) if which(i)), None)
    if k is None:
        raise ValueError("the case's flow has no instruction this malformation changes")
    return k


def _with(module: Module, instrs) -> Module:
    """The module with these instructions."""
    return replace(module, instrs=tuple(instrs))


def _edit(which: Callable[[Instr], bool], change: Callable[[Instr], Instr]):
    """The first instruction `which` selects, changed by `change`."""
    def make(p: Pieces) -> bytes:
        instrs = list(p.module.instrs)
        k = _index(p.module, which)
        instrs[k] = change(instrs[k])
        return p.request(module=_with(p.module, instrs))
    return make


def _set(**fields) -> Callable[[Instr], Instr]:
    """Sets these fields of an instruction."""
    return lambda i: replace(i, **fields)


def _src(k: int, value: int) -> Callable[[Instr], Instr]:
    """Sets src`k` of an instruction."""
    return lambda i: replace(i, srcs=i.srcs[:k] + (value,) + i.srcs[k + 1:])


def _dims(*dims: int) -> Callable[[Instr], Instr]:
    """RESHAPE target dims in src1..src3 and imm, as given."""
    return lambda i: replace(i, srcs=(i.srcs[0], *dims[:3]), imm=dims[3])


def _insert_before_return(extra: Instr):
    """`extra` inserted just before RETURN."""
    def make(p: Pieces) -> bytes:
        instrs = list(p.module.instrs)
        return p.request(module=_with(p.module, instrs[:-1] + [extra] + instrs[-1:]))
    return make


def _module(change: Callable[[Module], Module]) -> Callable[[Pieces], bytes]:
    """The module changed as a whole by `change`."""
    return lambda p: p.request(module=change(p.module))


def _reads(i: Instr) -> tuple[int, ...]:
    """The registers a value-defining instruction reads."""
    return ir.registers(i) if ir.defines_value(i.opcode) and i.opcode != ir.RETURN else ()


def renumber(module: Module, new_id: Callable[[int], int]) -> Module:
    """Every register id (dst, operands, RETURN, output table) mapped by `new_id`; object
    fields (reshape dims, split selector) untouched."""
    def one(i: Instr) -> Instr:
        if i.opcode == ir.RETURN or ir.defines_value(i.opcode):
            i = replace(i, dst=new_id(i.dst))
        if i.opcode == ir.BATCHNORM:
            return replace(i, srcs=tuple(map(new_id, i.srcs)), imm=new_id(i.imm))
        n = len(_reads(i))
        return replace(i, srcs=tuple(map(new_id, i.srcs[:n])) + i.srcs[n:])
    return Module(module.version, tuple(map(one, module.instrs)),
                  tuple(map(new_id, module.outputs)))


def _dst_gap(m: Module) -> Module:
    """Every value from the first compute one on renumbered one higher: a consistent program
    whose ids skip one register."""
    first = m.instrs[_index(m, _compute)].dst
    return renumber(m, lambda r: r + 1 if r >= first else r)


def _param_after_compute(m: Module) -> Module:
    """The last PARAM moved after the first compute instruction, every id renumbered in the
    new definition order: only the PARAM-first rule is broken."""
    instrs = list(m.instrs)
    k = max(j for j, i in enumerate(instrs) if i.opcode == ir.PARAM)
    param = instrs.pop(k)
    c = _index(_with(m, instrs), _compute)
    instrs.insert(c + 1, param)
    order = [i.dst for i in instrs if ir.defines_value(i.opcode)]
    ids = {old: new for new, old in enumerate(order)}
    return renumber(_with(m, instrs), ids.__getitem__)


def _read_later(m: Module) -> Module:
    """The first compute instruction reads the value defined right after it."""
    k = _index(m, _compute)
    i = m.instrs[k]
    return _with(m, m.instrs[:k] + (_src(0, i.dst + 1)(i),) + m.instrs[k + 1:])


def pad_values(m: Module, total: int) -> Module:
    """CONST 0 instructions before RETURN until the module defines `total` values (a register
    id wraps to its field's width, as a v1 u8 register does)."""
    n = sum(1 for i in m.instrs if ir.defines_value(i.opcode))
    mask = 0xFF if m.version == 1 else 0xFFFF
    consts = [Instr(ir.CONST, dst=d & mask) for d in range(n, total)]
    return _with(m, m.instrs[:-1] + tuple(consts) + m.instrs[-1:])


def as_v1(m: Module) -> Module:
    """A (v2) module re-encoded as ABI v1: src2, src3 and flags dropped, imm kept."""
    return Module(1, tuple(replace(i, srcs=(*i.srcs[:2], 0, 0), flags=0) for i in m.instrs),
                  m.outputs)


def _first_output_undefined(m: Module) -> Module:
    """The last output table entry names the value after the last one defined."""
    n = sum(1 for i in m.instrs if ir.defines_value(i.opcode))
    return replace(m, outputs=m.outputs[:-1] + (n,))


# --- binding and execution malformations (steps 6-7) ---------------------------------------
def _unknown_and_quantize(p: Pieces) -> bytes:
    """The RELU made a QUANTIZE (reserved: step 4) and the compute instruction after it
    opcode 0x16 (not in the table: step 3)."""
    instrs = list(p.module.instrs)
    k = _index(p.module, RELU)
    instrs[k] = replace(instrs[k], opcode=ir.QUANTIZE)
    j = next((j for j in range(k + 1, len(instrs)) if _compute(instrs[j])), None)
    if j is None:
        raise ValueError("the case's flow has no compute instruction after its RELU")
    instrs[j] = replace(instrs[j], opcode=0x16)
    return p.request(module=_with(p.module, instrs))


def _one_tensor_less(p: Pieces) -> bytes:
    """The last entry left out (tensor_count follows)."""
    return p.request(blobs=p.blobs()[:-1])


def _one_tensor_more(p: Pieces) -> bytes:
    """One well-formed `[1]` entry more (tensor_count follows)."""
    blobs = p.blobs()
    return p.request(blobs=blobs + [encode_entry(len(blobs), ((1,), (0,)), p.quant.dtype)])


def _flat_first(p: Pieces, blob: bytes, e: Entry) -> bytes:
    """wire-golden §6.2 bad_shape: a rank-2 [A, B] becomes [1, A·B] ([A·B, 1] when A = 1)."""
    a, b = e[0]
    if a * b == 1:
        raise ValueError("the first input must be rank 2 with more than one element")
    return _head(blob[0], p.quant.dtype, (a * b, 1) if a == 1 else (1, a * b)) + blob[12:]


def _at_limit_bad_shape(change: Callable[[Module], Module]) -> Callable[[Pieces], bytes]:
    """The module changed by `change` (right at a limit, so still valid), and the first
    input's dims contradicting the matmul as in `entry_shape_contradicts`: refused at step
    7, never at step 5."""
    def make(p: Pieces) -> bytes:
        blobs = p.blobs()
        blobs[0] = _flat_first(p, blobs[0], p.entries[0])
        return p.request(module=change(p.module), blobs=blobs)
    return make


def _level_max(m: Module) -> Module:
    """The first compute instruction at the highest level of its ABI (255 v1, 65535 v2)."""
    k = _index(m, _compute)
    return _with(m, m.instrs[:k] + (replace(m.instrs[k], level=MAX_LEVEL[m.version]),)
                 + m.instrs[k + 1:])


# --- the table ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Malformation:
    make: Callable[[Pieces], bytes]
    rule: str                     # the rule broken, with its wire-golden section
    cdp: str                      # the worker's answer (§6.1)
    step: int                     # the §6.1 step that refuses it
    cdp_abi1: str | None = None   # an ABI-1 worker's answer, where it differs
    step_abi1: int | None = None
    abis: tuple[int, ...] = (1, 2)  # module ABIs the malformation can be made in

    def code_for(self, worker_abi: int) -> str:
        return self.cdp_abi1 if worker_abi == 1 and self.cdp_abi1 else self.cdp

    def step_for(self, worker_abi: int) -> int:
        return self.step_abi1 if worker_abi == 1 and self.step_abi1 else self.step


BAD, UNSUPPORTED, SHAPE = "BAD_ENVELOPE", "UNSUPPORTED_OP", "SHAPE_MISMATCH"
V2 = (2,)


def _m(make, rule, step, cdp=BAD, **kw) -> Malformation:
    """One table entry (BAD_ENVELOPE unless told)."""
    return Malformation(make, rule, cdp, step, **kw)


def _s2(make, rule):
    return _m(make, f"{rule} (wire-golden §6.1 step 2, §1.6, §2)", 2)


def _s3(make, rule):
    return _m(make, f"{rule} (wire-golden §6.1 step 3, §2.1)", 3)


def _s5(make, rule, abis=(1, 2)):
    return _m(make, f"{rule} (wire-golden §6.1 step 5, §1.4)", 5, abis=abis)


def _v1_only_op(name: str) -> Malformation:
    return _m(_module(as_v1), f"a v1 module holding {name}, which ABI v1 cannot encode: an "
              f"ABI-2 worker refuses it at step 5, an ABI-1 worker does not advertise {name} "
              "and answers UNSUPPORTED_OP at step 4 (wire-golden §6.1 steps 4-5, §1.4, §8)",
              5, cdp_abi1=UNSUPPORTED, step_abi1=4, abis=V2)


SYNC, RETURN, PARAM, CONST = ir.SYNC, ir.RETURN, ir.PARAM, ir.CONST
BINARY = _is(*ir.BINARY)
RELU = _is(*numbers("RELU"))
REDUCTION = _is(*ir.REDUCTIONS)

MALFORMATIONS: dict[str, Malformation] = {
    # step 2: the MNPK envelope
    "mnpk_magic": _s2(_header(0, b"XNPK"), "MNPK magic not 'MNPK'"),
    "mnpk_version": _s2(_header(4, b"\x02\x00"), "MNPK envelope version 2, not 1"),
    "mnpk_flags": _s2(_header(6, b"\x01\x00"), "MNPK flags not 0"),
    "quant_reserved": _s2(_header(18, b"\x01"), "quant block reserved byte not 0"),
    "quant_dtype_0": _s2(_header(17, b"\x00"), "quant dtype 0, not 1 (int8) or 2 (int32)"),
    "quant_dtype_3": _s2(_header(17, b"\x03"), "quant dtype 3, not 1 (int8) or 2 (int32)"),
    "tensor_count_17": _s2(_header(12, (MAX_TENSORS + 1).to_bytes(4, "little")),
                           "tensor_count 17, over 16"),
    "ir_size_past_end": _s2(_ir_size_past_end, "ir_size runs one byte past the buffer"),
    "entry_index_first": _s2(_entry(0, lambda p, b, e: bytes((1,)) + b[1:]),
                             "entry 0 has param_index 1, not its position"),
    "entry_index_last": _s2(_entry(-1, lambda p, b, e: bytes((b[0] - 1,)) + b[1:]),
                            "the last entry repeats the previous param_index, not its position"),
    "entry_dtype": _s2(_entry(0, _other_dtype), "an entry's dtype differs from the quant "
                       "dtype (its data framed in its own dtype) [W13]"),
    "entry_rank_0": _s2(_entry(0, _rank0), "an entry of rank 0 (no dims, one element), "
                        f"not 1..{MAX_RANK}"),
    "entry_rank_5": _s2(_entry(0, _rank_past_max), f"an entry of rank {MAX_RANK + 1} (dims "
                        f"padded with 1s), not 1..{MAX_RANK}"),
    "entry_reserved": _s2(_entry(0, lambda p, b, e: b[:3] + b"\x01" + b[4:]),
                          "an entry's reserved byte not 0"),
    "entry_zero_dim": _s2(_entry(0, _zero_dim), "an entry with a zero dim (and no data)"),
    "entry_dims_truncated": _s2(_cut(_inside_last_dims),
                                "the buffer ends inside the last entry's dims"),
    "entry_data_truncated": _s2(_cut(lambda p, raw: len(raw) - 1),
                                "the last entry's data runs one byte past the buffer"),
    "trailing_bytes": _s2(lambda p: p.request() + b"\0", "one byte after the last entry"),
    "ir_size_high_byte": _s2(_plus_2_24(8), "ir_size with its high byte set (2^24 more): "
                             "a u32, read whole, runs past the buffer"),
    "tensor_count_high_byte": _s2(_plus_2_24(12), "tensor_count with its high byte set "
                                  "(2^24 + 3): a u32, read whole, over 16"),
    "tensor_count_17_whole": _s2(_seventeen_tensors, "17 well-formed tensors for a module of "
                                 "17 PARAMs: tensor_count over 16, though every entry is there"),
    "quant_dtype_0_no_tensors": _s2(_no_tensors(_const_only, 0), "quant dtype 0 in a request "
                                    "carrying no tensor (a module of one CONST): the quant "
                                    "dtype is checked by itself, not only against entries"),
    "entry_dim_high_byte": _s2(_entry(0, _high_byte), "the first entry's first dim with its "
                               "high byte set (2^24 more), data untouched: a u32, read whole, "
                               "so the data runs past the buffer"),
    "entry_header_truncated": _s2(_cut(_inside_last_header),
                                  "the buffer ends three bytes into the last entry's header"),
    "trailing_to_max_payload": _s2(_trailing_to_max_payload, "trailing bytes that make the "
                                   "request exactly max_payload long: not over it, so not "
                                   "TOO_LARGE at step 1, but refused at step 2"),
    # step 3: the IR module header
    "ir_short": _s3(_ir(lambda b: b[:15]), "an IR module of 15 bytes, shorter than its header"),
    "ir_magic": _s3(_ir(lambda b: _patch(b, 0, b"XNIR")), "IR magic not 'MNIR'"),
    "ir_version_0": _s3(_ir(lambda b: _patch(b, 4, b"\x00\x00")), "IR version 0, not 1 or 2"),
    "ir_version_3": _s3(_ir(lambda b: _patch(b, 4, b"\x03\x00")), "IR version 3, not 1 or 2"),
    "ir_newer_than_worker": _s3(_newer_than_worker, "an IR version above the worker's own ABI "
                                "(a v2 module to a v1 worker)"),
    "ir_flags": _s3(_ir(lambda b: _patch(b, 6, b"\x01\x00")), "IR header flags not 0"),
    "ir_size_too_small": _s3(_ir(lambda b: b[:-1]), "the IR is one byte shorter than 16 + "
                             "count × isize + outputs × osize"),
    "ir_size_too_large": _s3(_ir(lambda b: b + b"\0"), "the IR is one byte longer than 16 + "
                             "count × isize + outputs × osize"),
    "opcode_unknown": _s3(_edit(_compute, _set(opcode=0x16)),
                          "opcode 0x16, not in the opcode table of §1.4"),
    "opcode_ff": _s3(_edit(_compute, _set(opcode=0xFF)),
                     "opcode 0xff (UNKNOWN), not in the opcode table of §1.4"),
    "ir_count_high_byte": _s3(_ir_plus_2_24(8), "the IR header's instruction count with its "
                              "high byte set (2^24 more): a u32, read whole, so the module is "
                              "far shorter than its header says"),
    "ir_outputs_high_byte": _s3(_ir_plus_2_24(12), "the IR header's output count with its "
                                "high byte set (2^24 more): a u32, read whole, so the module "
                                "is far shorter than its header says"),
    "opcode_unknown_after_quantize": _s3(_unknown_and_quantize, "a QUANTIZE (reserved, step 4) "
                                         "and, after it, opcode 0x16 (not in the opcode table "
                                         "of §1.4): the opcode table is checked for the whole "
                                         "module before the capability"),
    "v1_opcode_unknown_after_quantize": _m(_unknown_and_quantize, "a v1 module holding a "
                                            "QUANTIZE (reserved, step 4) and, after it, opcode "
                                            "0x16 (not in the opcode table of §1.4), sent to "
                                            "every worker: a v1 module's opcode table is "
                                            "checked before the capability too (wire-golden "
                                            "§6.1 step 3, §2.1)", 3, abis=(1,)),
    # step 4: capability
    "reserved_quantize": _m(_edit(RELU, _set(opcode=ir.QUANTIZE)), "QUANTIZE (0x50), reserved "
                            "and advertised by no worker of ours (wire-golden §6.1 step 4, "
                            "§1.4 [W10])", 4, UNSUPPORTED),
    "no_tensors_reserved_op": _m(_no_tensors(_const_quantize), "a request carrying no "
                                 "tensor, its IR running to the buffer's end (ir_size = all "
                                 "after the header is valid), holding a QUANTIZE (wire-golden "
                                 "§6.1 steps 2 and 4)", 4, UNSUPPORTED),
    "reserved_dequantize": _m(_edit(RELU, _set(opcode=ir.DEQUANTIZE)), "DEQUANTIZE (0x51), "
                              "reserved and advertised by no worker of ours (wire-golden §6.1 "
                              "step 4, §1.4 [W10])", 4, UNSUPPORTED),
    "v1_module_reshape": _v1_only_op("reshape"),
    "v1_module_split": _v1_only_op("split"),
    "v1_module_batchnorm": _v1_only_op("batchnorm"),
    # step 5: instructions
    "dst_gap": _s5(_module(_dst_gap), "the first compute value has dst n + 1, not n (its ids "
                   "skip a register; the program is otherwise consistent)"),
    "param_after_compute": _s5(_module(_param_after_compute), "a PARAM after a compute "
                               "instruction (ids renumbered densely)"),
    "read_later_value": _s5(_module(_read_later), "an operand reads the value defined after "
                            "it (src > dst)"),
    "read_self": _s5(_edit(_compute, lambda i: _src(0, i.dst)(i)),
                     "an operand reads its own dst (src = dst)"),
    "param_unused_imm": _s5(_edit(_is(PARAM), _set(imm=1)), "a PARAM with imm 1 [W7]"),
    "param_level": _s5(_edit(_is(PARAM), _set(level=1)), "a PARAM at level 1, not 0"),
    "const_unused_src": _s5(_edit(_is(CONST), _src(0, 1)), "a CONST with src0 1 [W7]"),
    "const_level": _s5(_edit(_is(CONST), _set(level=1)), "a CONST at level 1, not 0"),
    "v1_const_nonzero": _s5(_edit(_is(CONST), _set(imm=5)), "a v1 CONST holding 5: a v1 CONST "
                            "holds only 0 [W3]", abis=(1,)),
    "sync_dst": _s5(_edit(_is(SYNC), _set(dst=1)), "a SYNC with dst 1: SYNC carries only a level"),
    "sync_src": _s5(_edit(_is(SYNC), _src(0, 1)), "a SYNC with src0 1: SYNC carries only a level"),
    "sync_imm": _s5(_edit(_is(SYNC), _set(imm=1)), "a SYNC with imm 1: SYNC carries only a level"),
    "return_unused_src": _s5(_edit(_is(RETURN), _src(0, 1)), "a RETURN with src0 1 [W7]"),
    "return_level": _s5(_edit(_is(RETURN), _set(level=1)), "a RETURN at level 1 [W7]"),
    "v1_return_level": _s5(_edit(_is(RETURN), _set(level=1)), "a v1 RETURN at level 1 (its "
                           "byte 6), sent to every worker [W7]", abis=(1,)),
    "binary_unused_imm": _s5(_edit(BINARY, _set(imm=1)), "an ADD with imm 1 [W7]"),
    "binary_unused_src2": _s5(_edit(BINARY, _src(2, 1)), "an ADD with src2 1 [W7]", V2),
    "unary_unused_src1": _s5(_edit(RELU, _src(1, 1)), "a RELU with src1 1 [W7]"),
    "unary_unused_imm": _s5(_edit(RELU, _set(imm=1)), "a RELU with imm 1 [W7]"),
    "split_unused_imm": _s5(_edit(_is(ir.SPLIT), _set(imm=1)), "a SPLIT with imm 1 [W7, W9]", V2),
    "concat_axis_5": _s5(_edit(_is(ir.CONCAT), _set(imm=5)),
                         "a CONCAT axis immediate 5 (axis 4), over 4 [W11]"),
    "softmax_axis_5": _s5(_edit(_is(ir.SOFTMAX), _set(imm=5)),
                          "a SOFTMAX axis immediate 5 (axis 4), over 4 [W11]"),
    "reduction_axis_5": _s5(_edit(REDUCTION, _set(imm=5)),
                            "a TENSOR_SUM axis immediate 5 (axis 4), over 4 [W8, W11]"),
    "conv2d_stride_0": _s5(_edit(_is(ir.CONV2D), _set(imm=0x0100)),
                           "a CONV2D immediate with stride byte 0 (padding 1) [W11]"),
    "v1_conv2d_imm_high": _s5(_edit(_is(ir.CONV2D), _set(imm=0x010101)), "a v1 CONV2D "
                              "immediate with byte 7 set, over stride | padding << 8 [W11]",
                              abis=(1,)),
    "pool_kernel_0": _s5(_edit(_is(ir.MAXPOOL2D), _set(imm=0x0100)),
                         "a MAXPOOL2D kernel of 0 (stride 1) [W11]"),
    "pool_stride_0": _s5(_edit(_is(ir.AVGPOOL2D), _set(imm=0x0002)),
                         "an AVGPOOL2D stride of 0 (kernel 2) [W11]"),
    "pool_stride_0_kernel_128": _s5(_edit(_is(ir.AVGPOOL2D), _set(imm=0x0080)),
                                    "an AVGPOOL2D stride of 0 with kernel 128 (bit 7 of the "
                                    "kernel byte set, the stride byte 0) [W11]"),
    "v1_pool_kernel_over_input": _m(_edit(_is(ir.MAXPOOL2D), _set(imm=0x0104)), "a v1 "
                                    "MAXPOOL2D of kernel 4 (byte 4), stride 1 (byte 5) on a "
                                    "3x3 input, sent to every worker: the kernel does not fit "
                                    "(wire-golden §6.1 step 7, §1.3 the v1 immediate, [W11])",
                                    7, SHAPE, abis=(1,)),
    "v1_conv2d_kernel_over_padded_input": _m(_edit(_is(ir.CONV2D), _set(imm=0x0102)), "a v1 "
                                             "CONV2D of stride 2 (byte 4), padding 1 (byte 5): "
                                             "its 4x4 kernel does not fit the 1x1 input padded "
                                             "to 3x3, sent to every worker (wire-golden §6.1 "
                                             "step 7, §1.3 the v1 immediate, [W11])", 7, SHAPE,
                                             abis=(1,)),
    "v1_pool_imm_high": _s5(_edit(_is(ir.MAXPOOL2D), _set(imm=0x010102)), "a v1 MAXPOOL2D "
                            "immediate with byte 7 set, over kernel | stride << 8 [W11]",
                            abis=(1,)),
    "reshape_no_dims": _s5(_edit(_is(ir.RESHAPE), _dims(*(ABSENT_DIM,) * 4)),
                           "a RESHAPE with no target dim [W9]", V2),
    "reshape_dims_gap": _s5(_edit(_is(ir.RESHAPE), _dims(3, ABSENT_DIM, 2, ABSENT_DIM)),
                            "RESHAPE dims with a gap (3, absent, 2): not leading dims [W9]", V2),
    "reshape_dim_0": _s5(_edit(_is(ir.RESHAPE), _dims(0, 6, ABSENT_DIM, ABSENT_DIM)),
                         "a RESHAPE target dim 0, not 1..65534 [W9]", V2),
    "reshape_imm_after_absent": _s5(_edit(_is(ir.RESHAPE), _dims(3, 2, ABSENT_DIM, 1)),
                                    "RESHAPE dims 3, 2, absent, then imm 1: a dim after an "
                                    "absent one, not leading dims [W9]", V2),
    "reshape_last_dim_0": _s5(_edit(_is(ir.RESHAPE), _dims(6, 0, ABSENT_DIM, ABSENT_DIM)),
                              "a RESHAPE whose last target dim is 0 (6, 0), not 1..65534 [W9]",
                              V2),
    "split_axis_4": _s5(_edit(_is(ir.SPLIT), _src(1, 4)), "a SPLIT axis 4, not 0..3 [W9]", V2),
    "split_sections_0": _s5(_edit(_is(ir.SPLIT), lambda i: replace(
        i, srcs=(i.srcs[0], i.srcs[1], 0, 0))), "a SPLIT of 0 sections [W9]", V2),
    "split_index_over": _s5(_edit(_is(ir.SPLIT), lambda i: _src(3, i.srcs[2])(i)),
                            "a SPLIT section index equal to the section count [W9]", V2),
    "return_not_last": _s5(_module(lambda m: _with(m, m.instrs + m.instrs[-1:])),
                           "RETURN twice: the first RETURN is not the last instruction"),
    "last_not_return": _s5(_module(lambda m: _with(m, m.instrs[:-1])),
                           "no RETURN: the last instruction is a compute one"),
    "return_other_value": _s5(_edit(_is(RETURN), _set(dst=0)),
                              "RETURN holds r0, not the first output"),
    "nop_present": _s5(_insert_before_return(Instr(ir.NOP)), "a NOP before RETURN [W7]"),
    "input_present": _s5(_insert_before_return(Instr(ir.INPUT)), "an INPUT before RETURN [W1]"),
    "flags_bit1": _s5(_edit(RELU, _set(flags=0x02)), "a RELU with flags bit 1 (reserved) [W6]",
                      V2),
    "flags_bit3": _s5(_edit(RELU, _set(flags=0x08)), "a RELU with flags bit 3 (reserved) [W6]",
                      V2),
    "flags_bit4": _s5(_edit(RELU, _set(flags=0x10)), "a RELU with flags bit 4 (a multi-output "
                      "instruction) [W6]", V2),
    "flags_bit7": _s5(_edit(RELU, _set(flags=0x80)), "a RELU with flags bit 7 (a multi-output "
                      "instruction) [W6]", V2),
    "batchnorm_no_flag": _s5(_edit(_is(ir.BATCHNORM), _set(flags=0)),
                             "a BATCHNORM without flags bit 0 (its fifth register) [W9]", V2),
    "flag_bit0_other_op": _s5(_edit(RELU, _set(flags=0x01)),
                              "a RELU with flags bit 0, which only BATCHNORM carries [W6, W9]",
                              V2),
    "values_over_rf_slots": _s5(_module(lambda m: pad_values(m, RF_SLOTS[2] + 1)),
                                "a v2 module of 4097 values, over a v2 worker's rf_slots 4096 "
                                "[§1.2]", V2),
    "v1_values_257": _s5(_module(lambda m: pad_values(m, RF_SLOTS[1] + 1)),
                         "a v1 module of 257 values: the 257th value's u8 dst wraps to r0, "
                         "since v1 names only 256 registers [§1.2]", abis=(1,)),
    "outputs_0": _s5(_module(lambda m: replace(m, outputs=())),
                     "an output table of 0 entries, not 1..16"),
    "outputs_17": _s5(_module(lambda m: replace(m, outputs=m.outputs[:1] * 17)),
                      "an output table of 17 entries, not 1..16"),
    "output_undefined": _s5(_module(_first_output_undefined),
                            "the last output names a value the module does not define"),
    "values_at_rf_slots_bad_shape": _m(_at_limit_bad_shape(
        lambda m: pad_values(m, RF_SLOTS[m.version])), "a module of exactly rf_slots values "
        "(4096 v2, 256 v1: at the limit, valid) whose first input's dims contradict the "
        "matmul: SHAPE_MISMATCH at step 7, not refused at step 5 (wire-golden §6.1 steps 5 "
        "and 7, §1.2)", 7, SHAPE),
    "level_max_bad_shape": _m(_at_limit_bad_shape(_level_max), "the matmul at the highest "
                              "level of its ABI (65535 v2, 255 v1: valid) and the first "
                              "input's dims contradicting it: SHAPE_MISMATCH at step 7, not "
                              "refused at step 5 (wire-golden §6.1 steps 5 and 7, §1.3)", 7,
                              SHAPE),
    # step 6: binding
    "tensor_missing": _m(_one_tensor_less, "one tensor fewer than the module's PARAMs "
                         "(wire-golden §6.1 step 6)", 6),
    "tensor_extra": _m(_one_tensor_more, "one tensor more than the module's PARAMs "
                       "(wire-golden §6.1 step 6)", 6),
    # step 7: execution
    "entry_shape_contradicts": _m(_entry(0, _flat_first), "the first input's dims [A, B] sent "
                                  "as [1, A·B], data untouched: the matmul's inner dims differ "
                                  "(wire-golden §6.1 step 7, §6.2 bad_shape [W17])", 7, SHAPE),
    "reshape_size_mismatch": _m(_edit(_is(ir.RESHAPE), _dims(4, 2, ABSENT_DIM, ABSENT_DIM)),
                                "a RESHAPE to [4, 2] of a 6-element input (wire-golden §6.1 "
                                "step 7, §1.4 [W9])", 7, SHAPE, abis=V2),
    "split_uneven": _m(_edit(_is(ir.SPLIT), lambda i: replace(i, srcs=(*i.srcs[:2], 4, 0))),
                       "a SPLIT of an axis of 6 into 4 sections (wire-golden §6.1 step 7, "
                       "§1.4 [W9])", 7, SHAPE, abis=V2),
    "split_axis_past_rank": _m(_edit(_is(ir.SPLIT), _src(1, 2)), "a SPLIT along axis 2 of "
                               "a rank-2 input: an axis of the wire (0..3) past the operand's "
                               "rank (wire-golden §6.1 step 7, §1.4 [W9, W11])", 7, SHAPE,
                               abis=V2),
    "quantres_10_table": _m(_header(16, b"\x0a"), "a sigmoid at quantres 10: the activation "
                            "tables are defined for quantres 0..9 only, so the op fails "
                            "(spec/language.md, the preamble; docs/ops.md §3; wire-golden "
                            "§6.1 step 7)", 7, "EXEC_FAILED"),
}


# --- equivalent encodings: bytes unlike the compiler's that every decoder reads the same ----
@dataclass(frozen=True)
class Equivalent:
    """A well-formed request re-encoded as the compiler never does but the wire allows: the
    worker must answer what the reference computes for the case's script."""
    make: Callable[[Pieces], bytes]
    rule: str
    abis: tuple[int, ...] = (1, 2)


EQUIVALENTS: dict[str, Equivalent] = {
    "concat_imm_0": Equivalent(_edit(_is(ir.CONCAT), _set(imm=0)), "a CONCAT axis immediate "
                               "0, which a decoder reads as axis 0, as the compiler's 1 "
                               "(wire-golden §1.4)"),
}
