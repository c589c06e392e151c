"""maned-lint: every diagnostic of one or more scripts as `FILE:L:C: severity[CODE]: message`,
or with `--format json` as one JSON list of {file, line, col, severity, code, message}."""
import json
import sys

from ..static_check import check
from ..diagnostics import Diagnostic, MnError
from ..diagnostics.printer import lint_line, mask, run_line, sort_diagnostics
from ..io.files import read_script
from .args import shown_argument
from .version import help_or_version

USAGE = """usage: maned-lint <file.mnd>... [--format text|json]
       maned-lint --version | --help

Every finding of each script, as FILE:L:C: severity[CODE]: message, sorted by position
then code; with --format json, one JSON list of {file, line, col, severity, code, message}
for every file. One exit code for the whole run: 2 when a command line or a file could not
be used, else 1 when any file has an error finding, else 0.

examples:
  maned-lint examples/sweep.mnd
  maned-lint examples/*.mnd --format json

environment:
  MANED_MAX_SOURCE_BYTES, MANED_MAX_STEPS, MANED_MAX_ROUNDS  the script limits (E031)
"""


def main(argv: list[str], out=None, err=None) -> int:
    """Exit 1 on any error finding (EPARSE included), 2 for usage or an unreadable file."""
    out, err = out or sys.stdout, err or sys.stderr
    if help_or_version(argv, USAGE, "maned-lint", out):
        return 0
    try:
        paths, fmt = _args(argv)
    except MnError as e:
        err.write(run_line(e.diagnostics[0]) + "\n")
        return 2
    code, found = 0, []
    for path in paths:
        file_code, diags = _lint(path, err)
        code = max(code, file_code)
        if fmt == "json":
            found += [finding(path, d) for d in diags]
        elif file_code < 2:  # an unusable file was said on stderr, in the run's words
            for d in diags:
                out.write(lint_line(path, d) + "\n")
    if fmt == "json":
        out.write(json.dumps(found) + "\n")
    return code


def _lint(path: str, err) -> tuple[int, list[Diagnostic]]:
    """One file's exit code and findings (an unreadable file or a bad limit setting: 2,
    said on stderr and listed as its one finding)."""
    try:
        diags = sort_diagnostics(check(read_script(path)).diagnostics)
    except MnError as e:
        d = e.diagnostics[0]
        if d.code in ("EIO", "EUSAGE"):  # no finding in the script: the file or the setting
            err.write(run_line(d) + "\n")
            return 2, [d]
        diags = [d]
    return (1 if any(d.is_error for d in diags) else 0), diags


def _args(argv: list[str]) -> tuple[list[str], str]:
    """(script paths, "text" or "json"); MnError (EUSAGE) saying what is wrong."""
    paths, fmt, args = [], "text", list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--format":
            if not args:
                raise _usage("--format needs a value: text or json")
            fmt = args.pop(0)
        elif arg.startswith("--format="):
            fmt = arg.partition("=")[2]
        elif arg.startswith("-") and arg != "-":
            raise _usage(f"unknown option {shown_argument(arg)}")
        else:
            paths.append(arg)
    if fmt not in ("text", "json"):
        raise _usage(f"--format {fmt}: choose text or json")
    if not paths:
        raise _usage("no script given")
    return paths, fmt


def _usage(why: str) -> MnError:
    return MnError(Diagnostic("EUSAGE", f"maned-lint: {why} (usage: maned-lint <file.mnd>... "
                              "[--format text|json]; see --help)"))


def finding(path: str, d: Diagnostic) -> dict:
    """One finding as JSON fields (the message masked, like every printed line)."""
    return {"file": path, "line": d.pos.line if d.pos else None,
            "col": d.pos.col if d.pos else None, "severity": d.severity, "code": d.code,
            "message": mask(d.message)}
