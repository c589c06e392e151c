"""The syntax tree of a `.mnd` script. Every node carries its 1-based source position.

Bodies hold RPN terms already classified by the parser (R34): an identifier is an op, a
stack op, a flow call, or else an operand (`Ref`). Object parameters `{k: v}` attach to
the op or call that follows them.
"""
from dataclasses import dataclass, field

from ..diagnostics import Pos

# --- values -----------------------------------------------------------------------------


@dataclass(frozen=True)
class EnvRef:
    """`env("NAME")`: resolved when the plan runs, never at parse time (D13)."""

    pos: Pos
    var: str


@dataclass(frozen=True)
class ObjEntry:
    """One `key: value` of an object parameter. value: int | str (a name) | tuple (a list)."""

    pos: Pos
    key: str
    value: object


# --- RPN terms ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Num:
    pos: Pos
    value: int


@dataclass(frozen=True)
class TensorLit:
    pos: Pos
    shape: tuple[int, ...]
    data: tuple[int, ...]


@dataclass(frozen=True)
class Ref:
    """An operand: a parameter, a name bound earlier in the body, or a global (`in::`)."""

    pos: Pos
    name: str


@dataclass(frozen=True)
class OpCall:
    """A catalogue op. `name` is its canonical name, `spelling` what was written."""

    pos: Pos
    name: str
    spelling: str
    params: tuple[ObjEntry, ...] = ()

    def param_dict(self) -> dict:
        """Object parameters by key, last one winning (a duplicate key is W003)."""
        return {e.key: e.value for e in self.params}


@dataclass(frozen=True)
class FlowCall:
    pos: Pos
    name: str


@dataclass(frozen=True)
class StackOp:
    """dup, drop, swap, over, rot, -rot: compile-time permutations, no graph node."""

    pos: Pos
    name: str


Term = Num | TensorLit | Ref | OpCall | FlowCall | StackOp

# --- body items ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    pos: Pos
    name: str


@dataclass(frozen=True)
class Decorator:
    """`@name(args)` or `@name{...}`; args are ints or names as written."""

    pos: Pos
    name: str
    args: tuple = ()
    obj: tuple[ObjEntry, ...] = ()


@dataclass(frozen=True)
class Statement:
    """`terms targets [annotation] =`. `leftover` counts values below the bound top (W017)."""

    pos: Pos
    terms: tuple[Term, ...]
    targets: tuple[Target, ...]
    annotation: str | None = None
    decorators: tuple[Decorator, ...] = ()
    leftover: int = 0


@dataclass(frozen=True)
class Repeat:
    """`repeat(n): ... end`, simultaneous update (R8): reads see the previous iteration."""

    pos: Pos
    count: int
    body: tuple[Statement, ...]


@dataclass(frozen=True)
class InertPrint:
    """`return(...)` or `memory::write` inside a flow body: parsed, never executed (W010)."""

    pos: Pos
    kind: str  # "return" | "memory::write"


BodyItem = Statement | Repeat | InertPrint

# --- top-level items ----------------------------------------------------------------------


@dataclass(frozen=True)
class Quant:
    quantmax: int
    quantmin: int
    quantres: int


@dataclass(frozen=True)
class Directive:
    """Any `mnd::key = value;` (the quantization keys included)."""

    pos: Pos
    key: str
    value: object


@dataclass(frozen=True)
class LiteralInput:
    pos: Pos
    shape: tuple[int, ...]
    data: tuple[int, ...]


@dataclass(frozen=True)
class FileInput:
    """`csv("path")`, `model("path")`; path None for empty parens (filled by --in)."""

    pos: Pos
    kind: str
    path: str | None


@dataclass(frozen=True)
class CtorInput:
    """Host constructor in RPN: `3 3 zeros`, `[2,3,5] diag`."""

    pos: Pos
    operands: tuple[Num | TensorLit, ...]
    ctor: str
    ctor_pos: Pos


InputValue = LiteralInput | FileInput | CtorInput


@dataclass(frozen=True)
class InputDecl:
    pos: Pos
    name: str
    value: InputValue


@dataclass(frozen=True)
class OutputDecl:
    pos: Pos
    name: str
    kind: str
    path: str


@dataclass(frozen=True)
class DeviceField:
    """value: str | int | bool | EnvRef."""

    pos: Pos
    key: str
    value: object


@dataclass(frozen=True)
class DeviceDecl:
    pos: Pos
    alias: str
    fields: tuple[DeviceField, ...]


@dataclass(frozen=True)
class StatusDecl:
    pos: Pos
    alias: str


@dataclass(frozen=True)
class Param:
    pos: Pos
    name: str


@dataclass(frozen=True)
class DeviceRef:
    pos: Pos
    alias: str


@dataclass(frozen=True)
class FlowDef:
    pos: Pos
    name: str
    params: tuple[Param, ...]
    devices: tuple[DeviceRef, ...]
    body: tuple[BodyItem, ...]
    returns: tuple[Target, ...]
    decorators: tuple[Decorator, ...] = ()
    unroll: int | None = None


@dataclass(frozen=True)
class Hyper:
    """`key: value`; value is int, bool, or a tuple of ints (a sweep list)."""

    pos: Pos
    key: str
    value: object


@dataclass(frozen=True)
class MLDef:
    pos: Pos
    algo: str
    name: str
    params: tuple[Param, ...]
    devices: tuple[DeviceRef, ...]
    hypers: tuple[Hyper, ...]
    returns: tuple[Target, ...]
    decorators: tuple[Decorator, ...] = ()


@dataclass(frozen=True)
class TopStatement:
    """A top-level binding statement: binds a global, prints nothing (R28)."""

    stmt: Statement


@dataclass(frozen=True)
class PrintStatement:
    """`return(rpn);` at top level: prints `return@<line> : <shape> = <values>` (R9)."""

    pos: Pos
    terms: tuple[Term, ...]


Item = (Directive | InputDecl | OutputDecl | DeviceDecl | StatusDecl | FlowDef | MLDef
        | TopStatement | PrintStatement)


@dataclass(frozen=True)
class Program:
    quant: Quant
    items: tuple[Item, ...] = field(default_factory=tuple)

    def of(self, kind) -> list:
        return [i for i in self.items if isinstance(i, kind)]

    @property
    def flows(self) -> list[FlowDef]:
        return self.of(FlowDef)

    @property
    def inputs(self) -> list[InputDecl]:
        return self.of(InputDecl)
