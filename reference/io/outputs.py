"""`out::NAME = csv("path")` / `model("path")`: write each declared output after the run
(R45); all writes are attempted, failures reported together."""
import os
from dataclasses import dataclass

from ..diagnostics import Diagnostic
from ..lang import ast
from ..tensor import Tensor
from .csvfile import format_csv
from .files import open_for_writing
from .mnm import encode, model_problem


def makers(name: str, program: ast.Program) -> list[str]:
    """The flows and ML definitions that return NAME, in script order."""
    return [d.name for d in program.items if isinstance(d, (ast.FlowDef, ast.MLDef))
            and any(t.name == name for t in d.returns)]


def find_value(name: str, program: ast.Program, outputs: dict[str, dict[str, Tensor]],
               inputs: dict[str, Tensor]) -> Tensor | str:
    """The tensor an out:: names (a flow output shadows an input), or why it has none."""
    makers_ = makers(name, program)
    for flow in makers_:
        if flow in outputs and name in outputs[flow]:
            return outputs[flow][name]
        if flow in outputs:  # a sweep whose configuration of NAME failed
            return f"'{name}' was not produced (its configuration of '{flow}' failed)"
    if makers_:
        return f"'{name}' was not produced (flow '{makers_[0]}' did not run)"
    if name in inputs:
        return inputs[name]
    return f"'{name}' was not produced"


@dataclass(frozen=True)
class Writes:
    """Where out:: files go: relative paths into out_dir (`--out-dir`) when given, else into
    the script's folder, where in:: paths resolve too (so a script that writes a model and
    one that reads it agree from any working folder)."""

    script_dir: str
    out_dir: str | None = None

    def place(self, path: str) -> tuple[str, str]:
        """The file's real path, and the path its `out::NAME -> PATH` line shows: as written
        in the script (R45), or joined to --out-dir when one is given."""
        if self.out_dir is None:
            return os.path.join(self.script_dir, path), path
        joined = os.path.join(self.out_dir, path)
        return joined, joined


def unplanned(name: str, program: ast.Program, planned) -> str | None:
    """The flow that makes out::NAME when the plan (`--flow`) does not run any flow that
    does; None when one runs, or NAME is no flow's output."""
    found = makers(name, program)
    return found[0] if found and not set(found) & set(planned) else None


def write_outputs(program: ast.Program, outputs, inputs, quantres: int, writes: Writes,
                  planned=None) -> tuple[list[tuple[str, str]], list[Diagnostic], list[str]]:
    """Returns the (name, path shown) of each file written, the errors, and a note for each
    out:: skipped because the flow making it was not selected (`planned`: the flows run)."""
    lines, errors, notes = [], [], []
    for decl in program.of(ast.OutputDecl):
        maker = unplanned(decl.name, program, planned) if planned is not None else None
        if maker is not None:
            notes.append(f"out::{decl.name} not written: flow '{maker}' is not part of this "
                         "run (--flow)")
            continue
        value = find_value(decl.name, program, outputs, inputs)
        if isinstance(value, str):
            errors.append(Diagnostic("ERUN", f"out::{decl.name}: {value}"))
            continue
        if decl.kind == "model":
            why = model_problem(value)
            if why:
                errors.append(Diagnostic("E029", f"out::{decl.name}: model() {why}",
                                         stage="run"))
                continue
            data = encode(value.data)
        elif value.rank > 2:
            errors.append(Diagnostic("E018", f"out::{decl.name}: csv() writes rank 0 to 2; "
                                     f"'{decl.name}' has rank {value.rank}", stage="run"))
            continue
        else:
            data = format_csv(value, quantres).encode("utf-8")
        real, shown = writes.place(decl.path)
        try:
            with open_for_writing(real) as f:
                f.write(data)
        except (OSError, ValueError) as e:
            why = f"it {e}" if isinstance(e, ValueError) else e.strerror or e
            errors.append(Diagnostic("EIO", f"out::{decl.name}: cannot write '{shown}': {why}"))
            continue
        lines.append((decl.name, shown))
    return lines, errors, notes
