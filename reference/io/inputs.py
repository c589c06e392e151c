"""Load every `in::` value (literal, csv, host constructor) and apply `--in` overrides (R9).
Everything loads before anything runs: a bad input fails the run up front."""
import os
from dataclasses import dataclass
from math import prod

from ..diagnostics import Diagnostic, MnError
from ..lang import ast
from ..catalogue import OpContext
from ..failures import OpError
from ..tensor import Tensor
from .cli_values import MAX_ELEMENTS, parse_value
from .csvfile import parse_csv, read_text


@dataclass
class Loaded:
    values: dict[str, Tensor]
    notes: list[str]


def _usage(msg: str) -> MnError:
    return MnError(Diagnostic("EUSAGE", msg))


def parse_overrides(pairs: list[tuple[str, str]], file_names: set[str]) -> dict[str, object]:
    """`--in` pairs -> name: Tensor (raw integers), or name: str, a path for a file input."""
    out: dict[str, object] = {}
    for name, text in pairs:  # the last binding of a name wins
        if name in file_names:
            out[name] = text
            continue
        try:
            out[name] = parse_value(text)
        except ValueError as e:
            raise _usage(f"bad --in {name}={text}: {e}" + _not_a_file_input(name, text,
                                                                          file_names)) from None
    return out


def _not_a_file_input(name: str, text: str, file_names: set[str]) -> str:
    """What to say when a value that looks like a file path goes to a non-file input."""
    if not any(c in text for c in "/\\") and not text.lower().endswith((".csv", ".mnm")):
        return ""
    files = f" (this script's: {', '.join(sorted(file_names))})" if file_names else ""
    return (f"; '{name}' is not a csv() input, so --in {name}= takes raw integers (5, 3:1,2,3, "
            f"2x2:1,2,3,4); a path fills only an input declared csv() or model(){files}")


def load_inputs(program: ast.Program, overrides: dict[str, object], script_dir: str) -> Loaded:
    loaded = Loaded({}, [])
    for decl in program.inputs:  # a repeated name: the last declaration wins (W006)
        if decl.name in overrides and not isinstance(overrides[decl.name], str):
            loaded.values[decl.name] = overrides[decl.name]
        else:
            loaded.values[decl.name] = _load(decl, overrides.get(decl.name), script_dir, loaded,
                                             OpContext(program.quant.quantres), program.quant)
    for name, value in overrides.items():
        if name not in loaded.values:
            loaded.values[name] = value
    return loaded


def _load(decl: ast.InputDecl, override, script_dir, loaded: Loaded, ctx, quant) -> Tensor:
    v = decl.value
    if isinstance(v, ast.LiteralInput):
        return Tensor(v.shape, v.data)
    if isinstance(v, ast.CtorInput):
        return _construct(decl.name, v, ctx)
    found = file_of(decl, override, script_dir)
    if found is None:
        raise _usage(f"in::{decl.name} = {v.kind}() has no default file; pass --in "
                     f"{decl.name}=PATH")
    path, shown = found
    try:
        if v.kind == "model":
            from .mnm import read_model  # the model descriptor's reader, for a model() input
            return read_model(path, shown)
        got = parse_csv(read_text(path, shown), shown, quant)
    except MnError as e:
        raise MnError(*(_prefixed(d, decl.name) for d in e.diagnostics)) from None
    loaded.notes.extend(f"in::{decl.name}: {n}" for n in got.notes)
    return got.tensor


def file_of(decl: ast.InputDecl, override, script_dir: str) -> tuple[str, str] | None:
    """(path, path as shown) of the file a csv()/model() input reads: the `--in` path, else
    the script's, relative to the script's folder; None for other inputs or no file."""
    v = decl.value
    if isinstance(v, (ast.LiteralInput, ast.CtorInput)) or not (
            override is None or isinstance(override, str)):
        return None
    if override is not None:
        return override, override
    return (os.path.join(script_dir, v.path), v.path) if v.path is not None else None


def _prefixed(d: Diagnostic, name: str) -> Diagnostic:
    return Diagnostic(d.code, f"in::{name}: {d.message}", d.pos, d.stage)


# Elements each constructor builds, from its operand values (checked before building).
_SIZES = {
    "zeros": lambda a: a[0] * a[1], "ones": lambda a: a[0] * a[1],
    "full": lambda a: a[0] * a[1], "eye": lambda a: a[0] * a[0], "range": lambda a: a[0],
    "tridiag": lambda a: a[0] * a[0],
}


def _construct(name: str, v: ast.CtorInput, ctx: OpContext) -> Tensor:
    operands = [Tensor.scalar(o.value) if isinstance(o, ast.Num) else Tensor(o.shape, o.data)
                for o in v.operands]
    if v.ctor == "diag":
        size = prod(operands[0].shape) ** 2 if operands else 0
    else:
        size = _SIZES[v.ctor]([abs(o.data[0]) for o in operands])
    if size > MAX_ELEMENTS:
        raise MnError(Diagnostic("E026", f"in::{name}: '{v.ctor}' would build {size} elements, "
                                 f"over the limit of {MAX_ELEMENTS}", v.ctor_pos))
    try:
        from ..interp.kernels import KERNELS  # the ops, for a host constructor only
        return KERNELS[v.ctor](ctx, *operands)
    except OpError as e:
        raise MnError(Diagnostic("ERUN", f"in::{name}: {v.ctor}: {e}")) from None
