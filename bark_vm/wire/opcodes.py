"""The binary-IR opcode table (spec/wire.md §1.6): one home for opcode numbers and mnemonics.

Numbers are a protocol constant; never renumber. `mnemonic` is the string a worker lists
in `/api/status` `ops`; structural opcodes have none and are not capability-gated.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Opcode:
    number: int
    name: str
    mnemonic: str | None  # None for structural opcodes


_TABLE = (
    (0x00, "NOP", None),
    (0x01, "PARAM", None),
    (0x02, "CONST", None),
    (0x03, "INPUT", None),
    (0x10, "MATMUL", "matmul"),
    (0x11, "ADD", "add"),
    (0x12, "SUB", "sub"),
    (0x13, "MUL", "mul"),
    (0x14, "DIV", "div"),
    (0x15, "SCALAR_MUL", "scalar_mul"),
    (0x20, "RELU", "relu"),
    (0x21, "SIGMOID", "sigmoid"),
    (0x22, "TANH", "tanh"),
    (0x23, "SOFTMAX", "softmax"),
    (0x30, "CONV2D", "conv2d"),
    (0x31, "MAXPOOL2D", "maxpool2d"),
    (0x32, "AVGPOOL2D", "avgpool2d"),
    (0x40, "TRANSPOSE", "transpose"),
    (0x41, "CONCAT", "concat"),
    (0x42, "RESHAPE", "reshape"),
    (0x43, "SPLIT", "split"),
    (0x50, "QUANTIZE", "quantize"),
    (0x51, "DEQUANTIZE", "dequantize"),
    (0x52, "LAYERNORM", "layernorm"),
    (0x53, "BATCHNORM", "batchnorm"),
    (0x60, "TENSOR_SUM", "tensor_sum"),
    (0x61, "TENSOR_MEAN", "tensor_mean"),
    (0x62, "TENSOR_MAX", "tensor_max"),
    (0x63, "TENSOR_MIN", "tensor_min"),
    (0x70, "GT", "gt"),
    (0x71, "LT", "lt"),
    (0x72, "EQ", "eq"),
    (0x73, "GE", "ge"),
    (0x74, "LE", "le"),
    (0x75, "NE", "ne"),
    (0x80, "AND", "and"),
    (0x81, "OR", "or"),
    (0x82, "XOR", "xor"),
    (0x83, "NOT", "not"),
    (0xF0, "SYNC", None),
    (0xFE, "RETURN", None),
    (0xFF, "UNKNOWN", None),
)

OPCODES: tuple[Opcode, ...] = tuple(Opcode(n, name, m) for n, name, m in _TABLE)
BY_NUMBER: dict[int, Opcode] = {o.number: o for o in OPCODES}
BY_NAME: dict[str, Opcode] = {o.name: o for o in OPCODES}
BY_MNEMONIC: dict[str, Opcode] = {o.mnemonic: o for o in OPCODES if o.mnemonic}

# Kept in the table for their numbers, but never emitted nor advertised (DESIGN §2).
RESERVED_MNEMONICS = frozenset({"quantize", "dequantize"})

# The 33 compute opcodes a worker of ours executes and advertises (wire-golden §1.4).
COMPUTE_MNEMONICS: tuple[str, ...] = tuple(
    o.mnemonic for o in OPCODES if o.mnemonic and o.mnemonic not in RESERVED_MNEMONICS
)


def numbers(*names: str) -> tuple[int, ...]:
    """The numbers of table names ("MATMUL", "PARAM", ...), in order; KeyError if unknown."""
    return tuple(BY_NAME[n].number for n in names)


def opcode_for(mnemonic: str) -> int | None:
    """The opcode number of a worker mnemonic, or None when it has no binary-IR opcode."""
    op = BY_MNEMONIC.get(mnemonic)
    return op.number if op else None
