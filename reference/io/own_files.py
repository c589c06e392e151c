"""The files a run reads and writes (its script, its csv()/model() inputs, its out:: files),
so that a file the run only reports on, its trace, is never one of them: `--trace h.mnd`
would otherwise replace the script, as `gcc -o x.c x.c` would (refused there too)."""
from ..diagnostics import Diagnostic, MnError
from ..lang import ast
from .files import same_file
from .inputs import file_of
from .outputs import Writes


def own_files(program: ast.Program, script: str | None, overrides: dict, script_dir: str,
              writes: Writes) -> list[tuple[str, str]]:
    """(path, what it is) for every file the run reads or writes, script first."""
    files = [(script, "the script")] if script is not None else []
    for decl in program.inputs:
        found = file_of(decl, overrides.get(decl.name), script_dir)
        if found is not None:
            files.append((found[0], f"the {decl.value.kind}() input in::{decl.name}"))
    for decl in program.of(ast.OutputDecl):
        files.append((writes.place(decl.path)[0], f"the out::{decl.name} file"))
    return files


def refuse_clash(path: str, flag: str, files: list[tuple[str, str]]) -> None:
    """EUSAGE when `path` (given to `flag`) is one of `files`: checked before anything runs."""
    for other, what in files:
        if same_file(path, other):
            raise MnError(Diagnostic("EUSAGE", f"{flag} '{path}' is {what}; writing the "
                                     f"trace there would replace it: give {flag} another "
                                     "file"))
