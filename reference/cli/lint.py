"""maned-lint: every diagnostic of a script as `FILE:L:C: severity[CODE]: message`."""
import sys

from ..check import check
from ..diagnostics import MnError
from ..diagnostics.printer import lint_line, run_line, sort_diagnostics
from ..io.files import read_script
from .version import version_text

USAGE = """usage: maned-lint <file.mnd>
       maned-lint --version | --help
"""


def main(argv: list[str], out=None, err=None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    if argv in (["--help"], ["-h"]):
        out.write(USAGE)
        return 0
    if argv == ["--version"]:
        out.write(version_text("maned-lint"))
        return 0
    if len(argv) != 1 or argv[0].startswith("-"):
        err.write(USAGE)
        return 2
    path = argv[0]
    try:
        text = read_script(path)
    except MnError as e:
        d = e.diagnostics[0]
        if d.code == "EIO":
            err.write(run_line(d) + "\n")
            return 2
        out.write(lint_line(path, d) + "\n")
        return 1
    diags = sort_diagnostics(check(text).diagnostics)
    for d in diags:
        out.write(lint_line(path, d) + "\n")
    return 1 if any(d.is_error for d in diags) else 0


def console_main() -> None:
    sys.exit(main(sys.argv[1:]))
