"""maned-run and maned-lint run in this process on a script file or inline text, and what
their output is held to: the examples folder, the preamble placeholders a test's source
may hold, the §6 sweep's note."""
import io
from pathlib import Path

from support.scripts import FIT_DATA, H0, H2, HML

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLES = ROOT / "examples"
# placeholders a test's source text may hold: the preambles (their last newline is the
# source's own) and the §6 fit's preamble and inputs
HEADERS = {"{H0}": H0.rstrip("\n"), "{H2}": H2.rstrip("\n"), "{LR}": HML + FIT_DATA}


# What DESIGN §6's sweep says on stderr (issue 23, point 8): which lr each configuration had,
# its loss (§6's 1, 0, 0) and which reach the lowest.
SEED_SWEEP_NOTE = ("note: sweep 'fit' over lr: m0, l0 had lr 2 (loss 1); m1, l1 had lr 5 (loss "
                   "0); m2, l2 had lr 10 (loss 0); the lowest loss, 0: m1 (lr 5), m2 (lr 10)\n")


def only_sweep_notes(err: str) -> bool:
    """stderr holds sweep notes and nothing else: no error, no other note."""
    lines = err.splitlines()
    return bool(lines) and all(ln.startswith("note: sweep '") for ln in lines)


def expand(source: str) -> str:
    for key, text in HEADERS.items():
        source = source.replace(key, text)
    return source


def run_tool(tool, argv):
    """(exit code, stdout, stderr) of a console tool's `main` run here."""
    out, err = io.StringIO(), io.StringIO()
    code = tool.main(argv, out, err)
    return code, out.getvalue(), err.getvalue()
