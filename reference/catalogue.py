"""The op catalogue, below the language: one row per op (name, spellings, arity, object
params with their defaults, where it runs), and the OpContext every op takes (its trap,
OpError, lives in `failures`). A leaf: the lexer, the linter, the graph and the lowering
read it without importing any op's implementation; the interpreter's table of functions,
one per op that runs locally, is `interp.kernels`.

`kind` says where an op executes:
  both  - the local interpreter and a Bark worker (has a binary-IR opcode)
  local - the local interpreter only
  none  - registered, parses, but executable nowhere (lint W011, refused at run time, R26)
  ctor  - host constructor, valid only in an `in::` initializer
  scope - out of this implementation's scope, refused with E025 (R11, R40)
Opcode numbers come from `bark_vm.wire.opcodes`, their one home.
"""
from dataclasses import dataclass
from typing import Literal

from bark_vm.wire.opcodes import opcode_for

OpKind = Literal["both", "local", "none", "ctor", "scope"]  # where an op executes (above)


@dataclass(frozen=True)
class OpContext:
    """What an op may know beyond its operands: the script's quantres q (scale 10^q)."""

    quantres: int

    @property
    def scale(self) -> int:
        return 10 ** self.quantres


@dataclass(frozen=True)
class OpSpec:
    name: str
    spellings: tuple[str, ...]
    arity: int
    defaults: tuple[tuple[str, object], ...]  # (object param, its value when left out)
    kind: OpKind

    @property
    def mnemonic(self) -> str | None:
        return self.name if self.kind == "both" else None

    @property
    def opcode(self) -> int | None:
        return opcode_for(self.name) if self.kind == "both" else None

    @property
    def params(self) -> tuple[str, ...]:
        """The object parameters it takes (`{axis: 1}`), in order."""
        return tuple(name for name, _ in self.defaults)

    def default(self, param: str):
        """The value `param` has when a call leaves it out (its function's default)."""
        return dict(self.defaults)[param]

    @property
    def wire(self) -> bool:
        return self.kind == "both"

    @property
    def local(self) -> bool:
        return self.kind in ("both", "local")


def _op(name, arity, kind, params=None, spellings=()):
    return OpSpec(name, (name, *spellings), arity, tuple((params or {}).items()), kind)


_WHOLE = {"axis": None}  # along no axis: the whole value

OPS: tuple[OpSpec, ...] = (
    # both: local interpreter and Bark worker
    _op("add", 2, "both", spellings=("elemwise_add",)),
    _op("sub", 2, "both", spellings=("elemwise_sub",)),
    _op("mul", 2, "both", spellings=("elemwise_mul",)),
    _op("div", 2, "both", spellings=("elemwise_div",)),
    _op("scalar_mul", 2, "both"),
    _op("matmul", 2, "both"),
    _op("transpose", 1, "both"),
    _op("tensor_sum", 1, "both", _WHOLE),
    _op("tensor_mean", 1, "both", _WHOLE),
    _op("tensor_max", 1, "both", _WHOLE),
    _op("tensor_min", 1, "both", _WHOLE),
    _op("gt", 2, "both", spellings=(">",)),
    _op("lt", 2, "both", spellings=("<",)),
    _op("eq", 2, "both", spellings=("==",)),
    _op("ge", 2, "both", spellings=(">=",)),
    _op("le", 2, "both", spellings=("<=",)),
    _op("ne", 2, "both", spellings=("!=",)),
    _op("and", 2, "both"),
    _op("or", 2, "both"),
    _op("xor", 2, "both"),
    _op("not", 1, "both"),
    _op("relu", 1, "both"),
    _op("sigmoid", 1, "both"),
    _op("tanh", 1, "both"),
    _op("softmax", 1, "both", _WHOLE),
    _op("conv2d", 2, "both", {"stride": 1, "padding": 0}),
    _op("maxpool2d", 1, "both", {"kernel_size": None, "stride": None}),
    _op("avgpool2d", 1, "both", {"kernel_size": None, "stride": None}),
    _op("layernorm", 1, "both"),
    _op("batchnorm", 5, "both"),
    _op("reshape", 1, "both", {"rows": None, "cols": None, "shape": None}),
    _op("split", 1, "both", {"axis": 0, "sections": None, "index": 0}),
    _op("concat", 2, "both", {"axis": 0}),
    # local only (no binary-IR opcode)
    _op("slice", 1, "local", {"axis": None, "index": None}),
    _op("abs", 1, "local"),
    _op("sqrt", 1, "local"),
    _op("isqrt", 1, "local"),
    _op("clip", 1, "local", {"min": None, "max": None}),
    _op("argmax", 1, "local"),
    _op("argmin", 1, "local"),
    _op("determinant", 1, "local"),
    _op("adjugate", 1, "local"),
    # host constructors (in:: initializers only)
    _op("zeros", 2, "ctor"),
    _op("ones", 2, "ctor"),
    _op("full", 3, "ctor"),
    _op("eye", 1, "ctor"),
    _op("diag", 1, "ctor"),
    _op("range", 1, "ctor"),
    _op("tridiag", 4, "ctor"),
    # out of scope (E025)
    _op("random", 2, "scope"),
    _op("band", 4, "scope"),
    _op("from_spectrum", 1, "scope"),
    _op("synth", 0, "scope"),
    _op("profile_vector", 1, "scope"),
    _op("packed_matmul", 2, "scope"),
    _op("pack_rows", 1, "scope", {"bits": None}),
    # ML: predict with a model descriptor; ml_fit is the internal Tier B kernel, not callable
    _op("ml_predict", 2, "local"),
    _op("ml_fit", 2, "none"),
    # registered, executable nowhere (W011); exp has no published integer semantics (R7)
    *(_op(n, a, "none") for n, a in (
        ("exp", 1), ("quantize", 1), ("dequantize", 1),
        ("tensor.init", 2), ("txt.read", 1), ("adaptive_avgpool2d", 1), ("cholesky", 1),
        ("clip_gradient", 1), ("conv1d", 2), ("conv3d", 2), ("cross_entropy", 2),
        ("eigendecomp", 1), ("embedding_lookup", 2), ("fft", 1), ("fft2d", 1), ("gelu", 1),
        ("get_timestamp", 0), ("groupnorm", 1), ("ifft", 1), ("instancenorm", 1),
        ("inverse", 1), ("lu", 1), ("multihead_attention", 3), ("qr", 1), ("s4_layer", 1),
        ("scaled_dot_attention", 3), ("selective_scan", 1), ("silu", 1), ("softplus", 1),
        ("svd", 1),
    )),
)

BY_SPELLING: dict[str, OpSpec] = {s: op for op in OPS for s in op.spellings}
BY_NAME: dict[str, OpSpec] = {op.name: op for op in OPS}


def lookup(spelling: str) -> OpSpec | None:
    """The op a source spelling names (`elemwise_add`, `>`, `tensor.init`), or None."""
    return BY_SPELLING.get(spelling)


def axis_of(op: str, params: dict):
    """The axis an op works along: its `axis` parameter, else its catalogue default (concat
    and split default to 0; the reductions and softmax to None, the whole value)."""
    spec = BY_NAME[op]
    return params.get("axis", spec.default("axis")) if "axis" in spec.params else None
