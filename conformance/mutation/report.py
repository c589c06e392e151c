"""The mutation report: report.json (every mutant and its verdict) and summary.md (the
counts and score per file and overall, then every survivor nobody has judged, which is
what a new conformance case should kill).
"""
import json
from collections import Counter, defaultdict
from pathlib import Path
from types import SimpleNamespace

from maned.io.files import read_text_file

STATUSES = ("killed", "survived", "equivalent", "error")
REPORT, SUMMARY = "report.json", "summary.md"
REPORT_BYTES = 256 << 20  # a report of every mutant is a few MiB


def record(mutant, verdict, judgement: str | None) -> dict:
    """One mutant's entry: where, what changed, and the verdict (a judged survivor is
    `equivalent`, with the judgement as its reason)."""
    status, reason = verdict.status, verdict.reason
    if status == "survived" and judgement:
        status, reason = "equivalent", judgement
    return {"id": mutant.id, "site": mutant.site, "file": mutant.path, "line": mutant.line,
            "col": mutant.col, "operator": mutant.operator, "scope": mutant.scope,
            "original": mutant.original,
            "mutated": mutant.mutated, "status": status, "case": verdict.case,
            "case_status": verdict.case_status, "reason": reason or None,
            "judged": judgement, "seconds": verdict.seconds}


# The fields of a record, and the types report.json gives them (None allowed where noted)
FIELDS = {"id": str, "site": str, "file": str, "line": int, "col": int, "operator": str,
          "scope": str, "original": str, "mutated": str, "status": str, "case": (str, type(None)),
          "case_status": (str, type(None)), "reason": (str, type(None)),
          "judged": (str, type(None)), "seconds": (int, float, type(None))}


def read(folder: Path) -> tuple[list[dict], float, bool]:
    """(records, seconds, interrupted) of folder/report.json, as this module wrote it:
    OSError when unreadable, ValueError saying what is wrong (never a KeyError later)."""
    text = read_text_file(str(folder / REPORT), REPORT_BYTES, REPORT)
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise ValueError(f"report.json is not JSON: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("mutants"), list):
        raise ValueError("report.json is no mutation report (no list of mutants)")
    if not isinstance(doc.get("seconds"), (int, float)) or not isinstance(
            doc.get("interrupted"), bool):
        raise ValueError("report.json has no seconds or interrupted")
    for k, r in enumerate(doc["mutants"]):
        if not isinstance(r, dict):
            raise ValueError(f"report.json: mutant {k} is not a record")
        bad = next((f for f, t in FIELDS.items() if f not in r or not isinstance(r[f], t)),
                   None)
        if bad or r["status"] not in STATUSES:
            raise ValueError(f"report.json: mutant {k} has no valid {bad or 'status'}")
        if r["status"] == "killed" and not (r["case"] or r["reason"]):
            raise ValueError(f"report.json: mutant {k} is killed by no case and for no reason")
    return doc["mutants"], float(doc["seconds"]), doc["interrupted"]


def as_mutant(r: dict) -> SimpleNamespace:
    """What a judgement looks at (site, path, scope), from a record."""
    return SimpleNamespace(id=r["id"], site=r["site"], path=r["file"], scope=r["scope"])


def rejudged(r: dict, judgement: str | None) -> dict:
    """A record with its judgement replaced: a survivor becomes equivalent or survived."""
    out = dict(r, judged=judgement)
    if r["status"] in ("survived", "equivalent"):
        out["status"] = "equivalent" if judgement else "survived"
        out["reason"] = judgement or (r["reason"] if r["status"] == "survived" else None)
    return out


def counts(records: list[dict]) -> dict:
    """generated, killed, survived (judged or not), equivalent, unjudged, error, score."""
    c = Counter(r["status"] for r in records)
    survived = c["survived"] + c["equivalent"]
    measured = len(records) - c["equivalent"]
    return {"generated": len(records), "killed": c["killed"], "survived": survived,
            "equivalent": c["equivalent"], "unjudged": c["survived"], "error": c["error"],
            "score": round(c["killed"] / measured, 4) if measured else None}


def build(records: list[dict], stale: list[str], seconds: float,
          interrupted: bool = False) -> dict:
    """The whole report document."""
    by_file = defaultdict(list)
    for r in records:
        by_file[r["file"]].append(r)
    return {"tool": "maned_conformance.mutation", "seconds": round(seconds, 1),
            "interrupted": interrupted, "counts": counts(records),
            "files": {f: counts(rs) for f, rs in sorted(by_file.items())},
            "stale_judgements": stale,
            "contradicted_judgements": [r["id"] for r in records
                                        if r["judged"] and r["status"] == "killed"],
            "mutants": records}


def percent(score) -> str:
    return "—" if score is None else f"{100 * score:.1f}%"


def _row(name: str, c: dict) -> str:
    return (f"| {name} | {c['generated']} | {c['killed']} | {c['survived']} | "
            f"{c['equivalent']} | {c['unjudged']} | {c['error']} | {percent(c['score'])} |")


def _line(r: dict) -> str:
    return f"- `{r['id']}` (site `{r['site']}`): `{r['original']}` → `{r['mutated']}`"


def summary(doc: dict) -> str:
    """summary.md's text."""
    total = doc["counts"]
    out = ["# Mutation score of maned-certify", "",
           f"{total['generated']} mutants of the worker, each certified by `maned-certify "
           f"--first-failure` in {doc['seconds']:g} s: score {percent(total['score'])} "
           "(killed / (generated − judged equivalent))."
           + (" **Interrupted: not every mutant ran.**" if doc["interrupted"] else ""), "",
           "| file | generated | killed | survived | judged equivalent | unjudged survivors "
           "| error | score |", "|---|---|---|---|---|---|---|---|"]
    out += [_row(f"`{f}`", c) for f, c in doc["files"].items()]
    out += [_row("**all**", total), ""]
    records = doc["mutants"]
    sections = (
        ("Unjudged survivors", "No case of the suite tells these from the real worker: "
         "each wants a case that kills it, or a judgement in equivalent.toml saying why "
         "no answer can change.", [r for r in records if r["status"] == "survived"], _line),
        ("Errors", "The loop itself failed on these: not measured.",
         [r for r in records if r["status"] == "error"],
         lambda r: f"- `{r['id']}`: {r['reason']}"),
        ("Contradicted judgements", "Judged equivalent in equivalent.toml, yet killed: "
         "drop the judgement.", [r for r in records if r["judged"] and r["status"] == "killed"],
         lambda r: f"- `{r['id']}` killed by `{r['case']}`"),
        ("Stale judgements", "equivalent.toml names these, but no such mutant exists any "
         "more: drop or update them.", doc["stale_judgements"], lambda k: f"- `{k}`"),
    )
    for title, why, items, fmt in sections:
        if items:
            out += [f"## {title} ({len(items)})", "", why, ""] + [fmt(i) for i in items] + [""]
    killers = Counter(r["case"] or r["reason"].split(":")[0] for r in records
                      if r["status"] == "killed")
    if killers:
        out += ["## What killed them", "", "| case (or reason) | mutants |", "|---|---|"]
        out += [f"| `{k}` | {n} |" for k, n in killers.most_common(15)] + [""]
    return "\n".join(out)


def write(out: Path, doc: dict) -> None:
    """report.json and summary.md in `out` (created)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / REPORT).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n",
                                     encoding="utf-8")
    (out / SUMMARY).write_text(summary(doc), encoding="utf-8")
