"""A script taken in by whatever runs it (maned.run, mnpk-gen, the conformance cases, the
benchmarks): its file read, its text checked by `static_check` (an error refuses it) and its
`--in` values parsed and matched against its names. A refusal is an MnError carrying its
diagnostics."""
import os

from ..static_check import Checked, check
from ..diagnostics import Diagnostic, MnError
from ..diagnostics.printer import sort_diagnostics
from ..io.cli_values import check_value
from ..io.files import read_script
from ..io.inputs import parse_overrides
from ..lang import ast
from ..lang.names import suggest
from ..tensor import Tensor


def script_source(path: str | os.PathLike) -> tuple[str, str]:
    """(text, folder) of a script file: its `csv()` and `model()` paths resolve there."""
    path = os.fspath(path)
    return read_script(path), os.path.dirname(os.path.abspath(path))


def compile_script(text: str) -> Checked:
    """The checked script, or MnError with every error found (warnings are lint-only, R3)."""
    checked = check(text)
    if not checked.ok:
        raise MnError(*sort_diagnostics(d for d in checked.diagnostics if d.is_error))
    return checked


def input_values(program: ast.Program, inputs) -> dict[str, object]:
    """`--in` values as overrides: (name, text) pairs, or a mapping; a text is parsed as
    `--in` parses it (a path for a csv() input), a Tensor taken as it is. Last one wins."""
    pairs = list(inputs.items()) if hasattr(inputs, "items") else list(inputs or ())
    file_names = {d.name for d in program.inputs if isinstance(d.value, ast.FileInput)}
    out: dict[str, object] = {}
    for name, value in pairs:
        if isinstance(value, Tensor):
            try:
                out[name] = check_value(value)
            except ValueError as e:
                raise MnError(Diagnostic("EUSAGE", f"bad input {name}: {e}")) from None
        else:
            out.update(parse_overrides([(name, str(value))], file_names))
    return out


def check_input_names(program: ast.Program, overrides: dict) -> None:
    """An `--in` must name an in:: input or a flow parameter."""
    known = {d.name for d in program.inputs} | {p.name for f in program.flows for p in f.params}
    for name in overrides:
        if name not in known:
            raise MnError(Diagnostic("EUSAGE", f"--in {name}: the script has no in::{name} and "
                                     f"no flow parameter '{name}'" + suggest(name, known)))
