"""maned-model: read a model descriptor as a person would (docs/models.md).

    maned-model show FILE [--json]

FILE is a `.mnm` model file, or text holding a descriptor as maned-run prints it
(`m0 : [15] = [1296974925, 1, ...]`; the first bracketed list of integers is read). It
prints the algorithm, the fit's header (scale, features, outputs, flags), the fitted
numbers in real units (a value at scale q divided by 10^q), and whether the descriptor
validates; exit 0 when it does, 1 when it does not, 2 for a bad command line or a file
that cannot be read."""
import json
import re
import sys

from ..diagnostics import Diagnostic, MnError
from ..diagnostics.printer import run_line
from ..io import mnm
from ..io.files import read_bytes
from ..io.quant import decode
from ..ml import descriptor
from .version import version_text

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
GD = tuple(descriptor.ALGO_IDS[a] for a in ("linear_regression", "logistic_regression", "svm"))
MAX_SCALE = 18  # digits an int64 slot holds
READ_MAX = 64 << 20  # bytes of FILE read: a descriptor, not a stream


def slots_of(path: str) -> tuple[int, ...]:
    """The descriptor in FILE: a model file's slots, else the first printed list."""
    raw = read_bytes(path, path, READ_MAX)
    if len(raw) > READ_MAX:
        raise MnError(Diagnostic("E029", f"{path}: over {READ_MAX} bytes, too large for a "
                                 "descriptor", stage="run"))
    got = mnm.decode(raw)
    if not isinstance(got, str):
        return got
    text = raw.decode("utf-8", "replace")
    m = re.search(r"\[(-?\d+(?:\s*,\s*-?\d+)*)\]", text.split("=", 1)[-1] if "=" in text
                  else text)
    if not m:
        raise MnError(Diagnostic("E029", f"{path}: neither a model file ({got}) nor text "
                                 "holding a descriptor list", stage="run"))
    return tuple(int(v) for v in m.group(1).split(","))


def real(v: int, q: int) -> str:
    """A scale-q integer in real units, exactly (q decimals); as stored when q is outside
    what an int64 descriptor can mean (a forged scale must not build a huge string)."""
    return decode(v, q) if 0 <= q <= MAX_SCALE else str(v)


def describe(slots: tuple[int, ...]) -> dict:
    """What a person reads in a descriptor, as plain data (the text and --json forms)."""
    why = descriptor.validate(slots)
    out: dict = {"valid": why is None, "problem": why, "slots": len(slots)}
    if len(slots) < descriptor.HEADER_SLOTS:
        return out
    h = descriptor.header(slots)
    p = descriptor.payload(slots)
    out.update(algorithm=descriptor.ALGO_NAMES.get(h.algo_id, f"unknown id {h.algo_id}"),
               quantres=h.q, features=h.features, outputs=h.outputs,
               intercept=bool(h.flags & descriptor.FLAG_INTERCEPT),
               standardized=h.standardized, payload_length=h.length)
    if why is None and h.algo_id in GD:
        d, q = h.features, h.q
        out["weights"] = [real(w, q) for w in p[:d]]
        out["bias"] = real(p[d], q)
        out["feature_means"] = [real(v, q) for v in p[d + 1:2 * d + 1]]
        out["feature_sds"] = [real(v, q) for v in p[2 * d + 1:3 * d + 1]]
    elif why is None:
        out.update(_shape(h, p))
        out["payload"] = list(p)
    return out


def _shape(h, p) -> dict:
    """The counts a valid descriptor's payload holds (docs/models.md's layout table), and
    kmeans's centroids in real units."""
    d, q, algo = h.features, h.q, descriptor.ALGO_NAMES.get(h.algo_id)
    if algo == "kmeans":
        k = p[0]
        return {"clusters": k, "centroids": [[real(v, q) for v in p[1 + i * d:1 + (i + 1) * d]]
                                             for i in range(k)]}
    if algo == "knn":
        return {"neighbours": p[0], "stored_rows": p[1]}
    if algo == "naive_bayes":
        c = p[0]
        return {"classes": c, "labels": list(p[1:1 + c]),
                "class_counts": list(p[1 + c:1 + 2 * c])}
    if algo == "decision_tree":
        return {"nodes": p[0], "leaves": sum(p[1 + 5 * i] == -1 for i in range(p[0]))}
    if algo == "isolation_forest":
        sizes, at = [], 1
        for _ in range(p[0]):
            sizes.append(p[at])
            at += 1 + 5 * p[at]
        return {"trees": p[0], "nodes_per_tree": sizes}
    if algo == "xgboost":
        return {"rounds": p[0], "depth": p[1]}
    if algo == "hmm":
        return {"states": p[0], "symbols": p[1]}
    return {}


def text_of(info: dict) -> str:
    lines = [f"valid: {'yes' if info['valid'] else 'no, ' + info['problem']}"]
    for key in ("algorithm", "quantres", "features", "outputs", "intercept", "standardized",
                "payload_length"):
        if key in info:
            value = info[key]
            shown = ("yes" if value else "no") if isinstance(value, bool) else value
            lines.append(f"{key}: {shown}")
    for key in ("weights", "bias", "feature_means", "feature_sds"):
        if key in info:
            value = info[key]
            lines.append(f"{key}: {', '.join(value) if isinstance(value, list) else value}")
    if info.get("standardized") and "weights" in info:
        lines.append("(the weights act on standardized features: (x - mean) / sd)")
    for key in ("clusters", "neighbours", "stored_rows", "classes", "labels", "class_counts",
                "nodes", "leaves", "trees", "nodes_per_tree", "rounds", "depth", "states",
                "symbols"):
        if key in info:
            value = info[key]
            shown = ", ".join(map(str, value)) if isinstance(value, list) else value
            lines.append(f"{key}: {shown}")
    for i, c in enumerate(info.get("centroids", [])):
        lines.append(f"centroid {i}: {', '.join(c)}"
                     + (" (standardized features)" if info.get("standardized") else ""))
    if "payload" in info:
        lines.append(f"payload (raw slots, docs/models.md has the layout): "
                     f"{', '.join(map(str, info['payload']))}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None, out=None, err=None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    argv = sys.argv[1:] if argv is None else argv
    if argv in (["--help"], ["-h"]):
        out.write(USAGE)
        return 0
    if argv == ["--version"]:
        out.write(version_text("maned-model"))
        return 0
    args = [a for a in argv if a != "--json"]
    if len(args) != 2 or args[0] != "show" or args[1].startswith("-"):
        err.write(run_line(Diagnostic("EUSAGE", "maned-model: expected 'show FILE' (usage: "
                                      "maned-model show FILE [--json]; see --help)")) + "\n")
        return 2
    try:
        info = describe(slots_of(args[1]))
    except MnError as e:
        err.write(run_line(e.diagnostics[0]) + "\n")
        return 2
    out.write(json.dumps(info) + "\n" if "--json" in argv else text_of(info))
    return 0 if info["valid"] else 1


def console_main() -> None:
    sys.exit(main())
