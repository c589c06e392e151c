"""The syntax tree of a `.mnd` script. Every node carries its 1-based source position.

Bodies hold RPN terms already classified by the parser (R34): an identifier is an op, a
stack op, a flow call, or else an operand (`Ref`). Object parameters `{k: v}` attach to
the op or call that follows them.
"""
from ..diagnostics import Pos


class Node:
    """A syntax-tree value, as a frozen dataclass is one: made from its annotated fields
    (by position or name, a default from the class body), equal and hashed by type and
    fields, never changed. A plain class, so a start-up defines its 31 kinds without
    generating and compiling six methods for each (issue 35)."""

    _fields: tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._fields = tuple(cls.__dict__.get("__annotations__", ()))
        cls.__match_args__ = cls._fields

    def __init__(self, *args, **kwargs):
        kind, names = type(self).__name__, self._fields
        if len(args) > len(names):
            raise TypeError(f"{kind} takes {len(names)} fields, {len(args)} given")
        given = dict(zip(names, args))
        for name, value in kwargs.items():
            if name not in names or name in given:
                raise TypeError(f"{kind} got an unexpected or repeated field {name!r}")
            given[name] = value
        for name in names:
            value = given.get(name, getattr(type(self), name, _MISSING))
            if value is _MISSING:
                raise TypeError(f"{kind} is missing the field {name!r}")
            object.__setattr__(self, name, value)

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self):
        return hash(self._values())

    def __repr__(self):
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({inner})"

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r}: a syntax-tree value is frozen")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete field {name!r}: a syntax-tree value is frozen")


_MISSING = object()

# --- values -----------------------------------------------------------------------------


class EnvRef(Node):
    """`env("NAME")`: resolved when the plan runs, never at parse time (D13)."""

    pos: Pos
    var: str


class ObjEntry(Node):
    """One `key: value` of an object parameter. value: int | str (a name) | tuple (a list)."""

    pos: Pos
    key: str
    value: object


# --- RPN terms ----------------------------------------------------------------------------


class Num(Node):
    pos: Pos
    value: int


class TensorLit(Node):
    pos: Pos
    shape: tuple[int, ...]
    data: tuple[int, ...]


class Ref(Node):
    """An operand: a parameter, a name bound earlier in the body, or a global (`in::`)."""

    pos: Pos
    name: str


class OpCall(Node):
    """A catalogue op. `name` is its canonical name, `spelling` what was written."""

    pos: Pos
    name: str
    spelling: str
    params: tuple[ObjEntry, ...] = ()

    def param_dict(self) -> dict:
        """Object parameters by key, last one winning (a duplicate key is W003)."""
        return {e.key: e.value for e in self.params}


class FlowCall(Node):
    pos: Pos
    name: str


class StackOp(Node):
    """dup, drop, swap, over, rot, -rot: compile-time permutations, no graph node."""

    pos: Pos
    name: str


Term = Num | TensorLit | Ref | OpCall | FlowCall | StackOp

# --- body items ---------------------------------------------------------------------------


class Target(Node):
    pos: Pos
    name: str


class Decorator(Node):
    """`@name(args)` or `@name{...}`; args are ints or names as written."""

    pos: Pos
    name: str
    args: tuple = ()
    obj: tuple[ObjEntry, ...] = ()


class Statement(Node):
    """`terms targets [annotation] =`. `leftover` counts values below the bound top (W017)."""

    pos: Pos
    terms: tuple[Term, ...]
    targets: tuple[Target, ...]
    annotation: str | None = None
    decorators: tuple[Decorator, ...] = ()
    leftover: int = 0


class Repeat(Node):
    """`repeat(n): ... end`, simultaneous update (R8): reads see the previous iteration."""

    pos: Pos
    count: int
    body: tuple[Statement, ...]


class InertPrint(Node):
    """`return(...)` or `memory::write` inside a flow body: parsed, never executed (W010)."""

    pos: Pos
    kind: str  # "return" | "memory::write"


BodyItem = Statement | Repeat | InertPrint

# --- top-level items ----------------------------------------------------------------------


class Quant(Node):
    quantmax: int
    quantmin: int
    quantres: int


class Directive(Node):
    """Any `mnd::key = value;` (the quantization keys included)."""

    pos: Pos
    key: str
    value: object


class LiteralInput(Node):
    pos: Pos
    shape: tuple[int, ...]
    data: tuple[int, ...]


class FileInput(Node):
    """`csv("path")`, `model("path")`; path None for empty parens (filled by --in)."""

    pos: Pos
    kind: str
    path: str | None


class CtorInput(Node):
    """Host constructor in RPN: `3 3 zeros`, `[2,3,5] diag`."""

    pos: Pos
    operands: tuple[Num | TensorLit, ...]
    ctor: str
    ctor_pos: Pos


InputValue = LiteralInput | FileInput | CtorInput


class InputDecl(Node):
    pos: Pos
    name: str
    value: InputValue


class OutputDecl(Node):
    pos: Pos
    name: str
    kind: str
    path: str


class DeviceField(Node):
    """value: str | int | bool | EnvRef."""

    pos: Pos
    key: str
    value: object


class DeviceDecl(Node):
    pos: Pos
    alias: str
    fields: tuple[DeviceField, ...]


class StatusDecl(Node):
    pos: Pos
    alias: str


class Param(Node):
    pos: Pos
    name: str


class DeviceRef(Node):
    pos: Pos
    alias: str


class FlowDef(Node):
    pos: Pos
    name: str
    params: tuple[Param, ...]
    devices: tuple[DeviceRef, ...]
    body: tuple[BodyItem, ...]
    returns: tuple[Target, ...]
    decorators: tuple[Decorator, ...] = ()
    unroll: int | None = None


class Hyper(Node):
    """`key: value`; value is int, bool, or a tuple of ints (a sweep list)."""

    pos: Pos
    key: str
    value: object


class MLDef(Node):
    pos: Pos
    algo: str
    name: str
    params: tuple[Param, ...]
    devices: tuple[DeviceRef, ...]
    hypers: tuple[Hyper, ...]
    returns: tuple[Target, ...]
    decorators: tuple[Decorator, ...] = ()


class TopStatement(Node):
    """A top-level binding statement: binds a global, prints nothing (R28)."""

    stmt: Statement


class PrintStatement(Node):
    """`return(rpn);` at top level: prints `return@<line> : <shape> = <values>` (R9)."""

    pos: Pos
    terms: tuple[Term, ...]


Item = (Directive | InputDecl | OutputDecl | DeviceDecl | StatusDecl | FlowDef | MLDef
        | TopStatement | PrintStatement)


class Program(Node):
    quant: Quant
    items: tuple[Item, ...] = ()

    def of(self, kind) -> list:
        return [i for i in self.items if isinstance(i, kind)]

    @property
    def flows(self) -> list[FlowDef]:
        return self.of(FlowDef)

    @property
    def inputs(self) -> list[InputDecl]:
        return self.of(InputDecl)
