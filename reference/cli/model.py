"""maned-model: read a model descriptor as a person would (docs/models.md).

    maned-model show FILE [--json]

FILE is a `.mnm` model file, or text holding descriptors as maned-run prints them
(`m0 : [15] = [1296974925, 1, ...]`: every printed list that starts with the descriptor
magic, each shown under its name, so a sweep's output shows every model; text with no such
list is read by its first bracketed list of integers). It prints the algorithm, the fit's
header (scale, features (an hmm's steps), outputs, flags), the fitted numbers in real units
(a value at scale q divided by 10^q), and whether the descriptor validates; exit 0 when
every one does, 1 when one does not, 2 for a bad command line or a file that cannot be
read."""
import json
import re
import sys

from ..diagnostics import Diagnostic, MnError
from ..diagnostics.printer import run_line
from ..io import mnm
from ..io.cli_values import MAX_ELEMENTS
from ..io.files import read_bytes
from ..ml import descriptor
from .model_view import fitted
from .version import help_or_version

USAGE = """usage: maned-model show FILE [--json]
       maned-model --version | --help

Shows a model descriptor: its algorithm, scale, feature and output counts, flags, the
fitted numbers in real units, and whether it validates (exit 0 valid, 1 not, 2 for a bad
command line or an unreadable file). FILE is a .mnm model file (out::m = model("f.mnm")),
or text holding a descriptor as maned-run prints it.

examples:
  maned-run examples/linear_regression.mnd > fit.txt && maned-model show fit.txt
  maned-model show model.mnm --json
"""
READ_MAX = 64 << 20  # bytes of FILE read: a descriptor, not a stream
INTEGER = re.compile(r"-?[0-9]+")
INT64_DIGITS = len(str(descriptor.INT64_MAX))  # a longer cell is no int64 (nor parsed)


# A printed output line, `name : [shape] = [...]` (D2), whose list starts with the magic.
PRINTED = re.compile(r"^(\S+) : \S+ = (?=\[" + str(descriptor.MAGIC) + r"[,\]])", re.M)


def models_of(path: str) -> list[tuple[str | None, tuple[int, ...]]]:
    """The descriptors in FILE, each with its printed name: a model file's one (no name),
    every printed descriptor line of a text, else the text's first list."""
    raw = read_bytes(path, path, READ_MAX)
    if len(raw) > READ_MAX:
        raise MnError(Diagnostic("E029", f"{path}: over {READ_MAX} bytes, too large for a "
                                 "descriptor", stage="run"))
    got = mnm.decode(raw)
    if not isinstance(got, str):
        return [(None, got)]
    text = raw.decode("utf-8", "replace")
    printed = [(m.group(1), _slots(path, first_list(text[m.end():])))
               for m in PRINTED.finditer(text)]
    if printed:
        return printed
    cells = first_list(text.split("=", 1)[-1])
    if cells is None:
        raise MnError(Diagnostic("E029", f"{path}: neither a model file ({got}) nor text "
                                 "holding a descriptor list", stage="run"))
    return [(None, _slots(path, cells))]


def _slots(path: str, cells: list[str]) -> tuple[int, ...]:
    """A list's cells as int64 slots (E029 for a cell no int64 can be)."""
    for i, v in enumerate(cells):
        if len(v.lstrip("-")) > INT64_DIGITS:
            raise MnError(Diagnostic("E029", f"{path}: slot {i} is {len(v.lstrip('-')):,} "
                                     f"digits long; an int64 slot has at most {INT64_DIGITS}",
                                     stage="run"))
    return tuple(int(v) for v in cells)


def first_list(text: str) -> list[str] | None:
    """The cells of the first `[i, j, ...]` of integers in text (at most MAX_ELEMENTS), in
    one pass: each `]` is paired with the last `[` before it."""
    at = 0
    while (close := text.find("]", at)) >= 0:
        open_ = text.rfind("[", at, close)
        at = close + 1
        if open_ < 0 or text.count(",", open_, close) >= MAX_ELEMENTS:
            continue
        cells = [c.strip() for c in text[open_ + 1:close].split(",")]
        if all(INTEGER.fullmatch(c) for c in cells):
            return cells
    return None


HEADER_KEYS = ("algorithm", "quantres", "features", "outputs", "intercept", "standardized",
               "payload_length")


def describe(slots: tuple[int, ...]) -> tuple[dict, list[str]]:
    """What a person reads in a descriptor: the --json data and the text form's lines."""
    why = descriptor.validate(slots)
    info: dict = {"valid": why is None, "problem": why, "slots": len(slots)}
    lines = [f"valid: {'yes' if why is None else 'no, ' + why}"]
    if len(slots) < descriptor.HEADER_SLOTS:
        return info, lines
    h = descriptor.header(slots)
    p = descriptor.payload(slots)
    algorithm = descriptor.ALGO_NAMES.get(h.algo_id, f"unknown id {h.algo_id}")
    count = "steps" if algorithm == "hmm" else "features"  # an hmm's slot 4 counts steps
    info.update(algorithm=algorithm, quantres=h.q, **{count: h.features}, outputs=h.outputs,
                intercept=bool(h.flags & descriptor.FLAG_INTERCEPT),
                standardized=h.standardized, payload_length=h.length)
    for key in HEADER_KEYS:
        key = count if key == "features" else key
        value = info[key]
        lines.append(f"{key}: {('yes' if value else 'no') if isinstance(value, bool) else value}")
    if why is None:
        view = fitted(h, p)
        info.update(view.data)
        info["payload"] = list(p)
        lines += view.lines
    return info, lines


def main(argv: list[str] | None = None, out=None, err=None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    argv = sys.argv[1:] if argv is None else argv
    if help_or_version(argv, USAGE, "maned-model", out):
        return 0
    args = [a for a in argv if a != "--json"]
    if len(args) != 2 or args[0] != "show" or args[1].startswith("-"):
        err.write(run_line(Diagnostic("EUSAGE", "maned-model: expected 'show FILE' (usage: "
                                      "maned-model show FILE [--json]; see --help)")) + "\n")
        return 2
    try:
        models = [(name, *describe(slots)) for name, slots in models_of(args[1])]
    except MnError as e:
        err.write(run_line(e.diagnostics[0]) + "\n")
        return 2
    if len(models) == 1:  # one model: its fields alone, as always
        _, info, lines = models[0]
        out.write(json.dumps(info) + "\n" if "--json" in argv else "\n".join(lines) + "\n")
    elif "--json" in argv:
        out.write(json.dumps({"models": [{"name": n, **info} for n, info, _ in models]}) + "\n")
    else:
        out.write("\n".join(f"model {n}:\n" + "\n".join(f"  {ln}" for ln in lines)
                             for n, _, lines in models) + "\n")
    return 0 if all(info["valid"] for _, info, _ in models) else 1
