"""The op catalogue, below the language: one row per op (name, spellings, arity, object
params, where it runs), and the OpContext every op takes and the OpError it raises. A
leaf: the lexer, the linter, the graph and the lowering read it without importing any op's
implementation (a row names its function's module under maned, loaded when first called).

`kind` says where an op executes:
  both  - the local interpreter and a Bark worker (has a binary-IR opcode)
  local - the local interpreter only
  none  - registered, parses, but executable nowhere (lint W011, refused at run time, R26)
  ctor  - host constructor, valid only in an `in::` initializer
  scope - out of this implementation's scope, refused with E025 (R11, R40)
Opcode numbers come from `bark_vm.wire.opcodes`, their one home.
"""
from dataclasses import dataclass
from importlib import import_module

from bark_vm.wire.opcodes import opcode_for


@dataclass(frozen=True)
class OpContext:
    """What an op may know beyond its operands: the script's quantres q (scale 10^q)."""

    quantres: int

    @property
    def scale(self) -> int:
        return 10 ** self.quantres


class OpError(Exception):
    """An op refusing its operands (shape mismatch, bad parameter); becomes ERUN.
    `terse` errors print as `<op>: <reason>`, without the value id (R41)."""

    terse = False


@dataclass(frozen=True)
class OpSpec:
    name: str
    spellings: tuple[str, ...]
    arity: int
    params: tuple[str, ...]
    kind: str
    impl: str | None  # "module.function" under maned (ops.elementwise.add, ml.predict...)

    @property
    def mnemonic(self) -> str | None:
        return self.name if self.kind == "both" else None

    @property
    def opcode(self) -> int | None:
        return opcode_for(self.name) if self.kind == "both" else None

    @property
    def family(self) -> str:
        """The family of its implementation: its module under maned.ops (elementwise, nn,
        ...), or the package it lives in otherwise (ml); "other" when it has none."""
        if not self.impl:
            return "other"
        parts = self.impl.split(".")
        return parts[1] if parts[0] == "ops" else parts[0]

    @property
    def wire(self) -> bool:
        return self.kind == "both"

    @property
    def local(self) -> bool:
        return self.kind in ("both", "local")

    def function(self):
        """The pure-Python implementation: fn(ctx, *operands, **params) -> raw Tensor."""
        module, fn = self.impl.rsplit(".", 1)
        return getattr(import_module(f"{__package__}.{module}"), fn)


def _op(name, arity, kind, impl=None, params=(), spellings=()):
    return OpSpec(name, (name, *spellings), arity, tuple(params), kind, impl)


_AXIS = ("axis",)

OPS: tuple[OpSpec, ...] = (
    # both: local interpreter and Bark worker
    _op("add", 2, "both", "ops.elementwise.add", spellings=("elemwise_add",)),
    _op("sub", 2, "both", "ops.elementwise.sub", spellings=("elemwise_sub",)),
    _op("mul", 2, "both", "ops.elementwise.mul", spellings=("elemwise_mul",)),
    _op("div", 2, "both", "ops.elementwise.div", spellings=("elemwise_div",)),
    _op("scalar_mul", 2, "both", "ops.linalg.scalar_mul"),
    _op("matmul", 2, "both", "ops.linalg.matmul"),
    _op("transpose", 1, "both", "ops.linalg.transpose"),
    _op("tensor_sum", 1, "both", "ops.reduce.tensor_sum", _AXIS),
    _op("tensor_mean", 1, "both", "ops.reduce.tensor_mean", _AXIS),
    _op("tensor_max", 1, "both", "ops.reduce.tensor_max", _AXIS),
    _op("tensor_min", 1, "both", "ops.reduce.tensor_min", _AXIS),
    _op("gt", 2, "both", "ops.elementwise.gt", spellings=(">",)),
    _op("lt", 2, "both", "ops.elementwise.lt", spellings=("<",)),
    _op("eq", 2, "both", "ops.elementwise.eq", spellings=("==",)),
    _op("ge", 2, "both", "ops.elementwise.ge", spellings=(">=",)),
    _op("le", 2, "both", "ops.elementwise.le", spellings=("<=",)),
    _op("ne", 2, "both", "ops.elementwise.ne", spellings=("!=",)),
    _op("and", 2, "both", "ops.elementwise.logical_and"),
    _op("or", 2, "both", "ops.elementwise.logical_or"),
    _op("xor", 2, "both", "ops.elementwise.logical_xor"),
    _op("not", 1, "both", "ops.elementwise.logical_not"),
    _op("relu", 1, "both", "ops.activation.relu"),
    _op("sigmoid", 1, "both", "ops.activation.sigmoid"),
    _op("tanh", 1, "both", "ops.activation.tanh"),
    _op("softmax", 1, "both", "ops.activation.softmax", _AXIS),
    _op("conv2d", 2, "both", "ops.nn.conv2d", ("stride", "padding")),
    _op("maxpool2d", 1, "both", "ops.nn.maxpool2d", ("kernel_size", "stride")),
    _op("avgpool2d", 1, "both", "ops.nn.avgpool2d", ("kernel_size", "stride")),
    _op("layernorm", 1, "both", "ops.nn.layernorm"),
    _op("batchnorm", 5, "both", "ops.nn.batchnorm"),
    _op("reshape", 1, "both", "ops.shape.reshape", ("rows", "cols", "shape")),
    _op("split", 1, "both", "ops.shape.split", ("axis", "sections", "index")),
    _op("concat", 2, "both", "ops.shape.concat", _AXIS),
    # local only (no binary-IR opcode)
    _op("slice", 1, "local", "ops.shape.slice_axis", ("axis", "index")),
    _op("abs", 1, "local", "ops.unary.absolute"),
    _op("sqrt", 1, "local", "ops.unary.sqrt"),
    _op("isqrt", 1, "local", "ops.unary.isqrt"),
    _op("clip", 1, "local", "ops.unary.clip", ("min", "max")),
    _op("argmax", 1, "local", "ops.reduce.argmax"),
    _op("argmin", 1, "local", "ops.reduce.argmin"),
    _op("determinant", 1, "local", "ops.linalg.determinant"),
    _op("adjugate", 1, "local", "ops.linalg.adjugate"),
    # host constructors (in:: initializers only)
    _op("zeros", 2, "ctor", "ops.construct.zeros"),
    _op("ones", 2, "ctor", "ops.construct.ones"),
    _op("full", 3, "ctor", "ops.construct.full"),
    _op("eye", 1, "ctor", "ops.construct.eye"),
    _op("diag", 1, "ctor", "ops.construct.diag"),
    _op("range", 1, "ctor", "ops.construct.range_"),
    _op("tridiag", 4, "ctor", "ops.construct.tridiag"),
    # out of scope (E025)
    _op("random", 2, "scope"),
    _op("band", 4, "scope"),
    _op("from_spectrum", 1, "scope"),
    _op("synth", 0, "scope"),
    _op("profile_vector", 1, "scope"),
    _op("packed_matmul", 2, "scope"),
    _op("pack_rows", 1, "scope", params=("bits",)),
    # ML: predict with a model descriptor; ml_fit is the internal Tier B kernel, not callable
    _op("ml_predict", 2, "local", "ml.predict.ml_predict"),
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
