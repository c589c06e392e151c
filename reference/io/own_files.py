"""The files a run reads and writes (its script, its csv()/model() inputs, its out:: files),
so that no out:: file is one it reads (`out::y = csv("h.mnd")` would replace the script) or
writes twice, and a file the run only reports on, its trace, is none of them: `--trace h.mnd`
would otherwise replace the script, as `gcc -o x.c x.c` would (refused there too)."""
from ..diagnostics import Diagnostic, MnError
from ..lang import ast
from .files import overwrites
from .inputs import file_of
from .outputs import Writes


def read_files(program: ast.Program, script: str | None, overrides: dict,
               script_dir: str) -> list[tuple[str, str]]:
    """(path, what it is) for every file the run reads, script first."""
    files = [(script, "the script")] if script is not None else []
    for decl in program.inputs:
        found = file_of(decl, overrides.get(decl.name), script_dir)
        if found is not None:
            files.append((found[0], f"the {decl.value.kind}() input in::{decl.name}"))
    return files


def written_files(program: ast.Program, writes: Writes) -> list[tuple[str, str]]:
    """(path, what it is) for every out:: file the run writes."""
    return [(writes.place(decl.path)[0], f"the out::{decl.name} file")
            for decl in program.of(ast.OutputDecl)]


def refuse_overwrites(reads: list[tuple[str, str]], written: list[tuple[str, str]]) -> None:
    """EUSAGE when an out:: file is one the run reads or another out:: file: before anything
    runs, so no input is lost."""
    why = overwrites(written, reads)
    if why:
        raise MnError(Diagnostic("EUSAGE", f"{why}: give the out:: another path"))


def refuse_clash(path: str, flag: str, files: list[tuple[str, str]]) -> None:
    """EUSAGE when `path` (given to `flag`) is one of `files`: checked before anything runs."""
    why = overwrites([(path, flag)], files)
    if why:
        raise MnError(Diagnostic("EUSAGE", f"{why}: give {flag} another file"))