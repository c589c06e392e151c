"""`out::NAME = csv("path")` / `model("path")`: write each declared output after the run
(R45); all writes are attempted, failures reported together."""
import os

from ..diagnostics import Diagnostic
from ..lang import ast
from ..tensor import Tensor
from .csvfile import format_csv
from .mnm import encode, model_problem


def find_value(name: str, program: ast.Program, outputs: dict[str, dict[str, Tensor]],
               inputs: dict[str, Tensor]) -> Tensor | str:
    """The tensor an out:: names (a flow output shadows an input), or why it has none."""
    makers = [d.name for d in program.items if isinstance(d, (ast.FlowDef, ast.MLDef))
              and any(t.name == name for t in d.returns)]
    for flow in makers:
        if flow in outputs:
            return outputs[flow][name]
    if makers:
        return f"'{name}' was not produced (flow '{makers[0]}' did not run)"
    if name in inputs:
        return inputs[name]
    return f"'{name}' was not produced"


def write_outputs(program: ast.Program, outputs, inputs, quantres: int,
                  script_dir: str) -> tuple[list[tuple[str, str]], list[Diagnostic]]:
    """Returns the (name, path as written) of each file written, and the errors."""
    lines, errors = [], []
    for decl in program.of(ast.OutputDecl):
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
        try:
            with open(os.path.join(script_dir, decl.path), "wb") as f:
                f.write(data)
        except OSError as e:
            errors.append(Diagnostic("EIO", f"out::{decl.name}: cannot write '{decl.path}': "
                                     f"{e.strerror or e}"))
            continue
        lines.append((decl.name, decl.path))
    return lines, errors
