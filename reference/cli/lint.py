"""maned-lint: every diagnostic of a script as `FILE:L:C: severity[CODE]: message`, or with
`--format json` as one JSON list of {file, line, col, severity, code, message}."""
import json
import sys

from ..check import check
from ..diagnostics import Diagnostic, MnError
from ..diagnostics.printer import lint_line, mask, run_line, sort_diagnostics
from ..io.files import read_script
from .version import version_text

USAGE = """usage: maned-lint <file.mnd> [--format text|json]
       maned-lint --version | --help
"""


def main(argv: list[str], out=None, err=None) -> int:
    """Exit 1 on any error finding (EPARSE included), 2 for usage or an unreadable file."""
    out, err = out or sys.stdout, err or sys.stderr
    if argv in (["--help"], ["-h"]):
        out.write(USAGE)
        return 0
    if argv == ["--version"]:
        out.write(version_text("maned-lint"))
        return 0
    path, fmt = _args(argv)
    if path is None:
        err.write(USAGE)
        return 2
    try:
        diags = sort_diagnostics(check(read_script(path)).diagnostics)
    except MnError as e:
        d = e.diagnostics[0]
        if d.code in ("EIO", "EUSAGE"):  # no finding in the script: the file or the setting
            err.write(run_line(d) + "\n")
            if fmt == "json":
                out.write(json.dumps([finding(path, d)]) + "\n")
            return 2
        diags = [d]
    if fmt == "json":
        out.write(json.dumps([finding(path, d) for d in diags]) + "\n")
    else:
        for d in diags:
            out.write(lint_line(path, d) + "\n")
    return 1 if any(d.is_error for d in diags) else 0


def _args(argv: list[str]) -> tuple[str | None, str]:
    """(script path, "text" or "json"); path None when the command line is not usable."""
    path, fmt, args = None, "text", list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--format" and args:
            fmt = args.pop(0)
        elif arg.startswith("--format="):
            fmt = arg.partition("=")[2]
        elif arg.startswith("-") or path is not None:
            return None, fmt
        else:
            path = arg
    return (path, fmt) if fmt in ("text", "json") else (None, fmt)


def finding(path: str, d: Diagnostic) -> dict:
    """One finding as JSON fields (the message masked, like every printed line)."""
    return {"file": path, "line": d.pos.line if d.pos else None,
            "col": d.pos.col if d.pos else None, "severity": d.severity, "code": d.code,
            "message": mask(d.message)}


def console_main() -> None:
    sys.exit(main(sys.argv[1:]))
