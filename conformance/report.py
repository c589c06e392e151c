"""A certification report folder (DESIGN §8): `report.json` (every case's outcome), `summary.md`
(a table per op and per algorithm), `junit.xml` (one testcase per case), `signature.txt`
(SHA-256 of the canonical JSON of every case's [id, outputs], in id order: two workers
with the same signature computed the same integers everywhere)."""
import hashlib
import json
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from maned.diagnostics.printer import mask

from .cases import Case
from .runner import STATUSES, Outcome


def signature(outcomes: list[Outcome]) -> str:
    """Over the case files only (ids are their paths, DESIGN §8): not the protocol checks."""
    doc = [[o.case, o.outputs] for o in sorted(outcomes, key=lambda o: o.case)
           if not o.case.startswith("protocol/")]
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _uses(cases: dict[str, Case], cid: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ops and algorithms of a case (none for a protocol check)."""
    return cases[cid].uses if cid in cases else ((), ())


def _tables(cases: dict[str, Case], outcomes: list[Outcome]) -> dict[str, dict[str, Counter]]:
    """op -> status counts, algorithm -> status counts."""
    by_op: dict[str, Counter] = {}
    by_algo: dict[str, Counter] = {}
    for o in outcomes:
        ops, algos = _uses(cases, o.case)
        for op in ops:
            by_op.setdefault(op, Counter())[o.status] += 1
        for algo in algos:
            by_algo.setdefault(algo, Counter())[o.status] += 1
    return {"op": by_op, "algorithm": by_algo}


def write(folder: Path, worker: dict, cases: list[Case], outcomes: list[Outcome],
          seconds: float) -> dict:
    """Write the four artefacts; returns the summary counts."""
    folder.mkdir(parents=True, exist_ok=True)
    # a worker's answer may echo anything, a password included: every detail is masked
    outcomes = [replace(o, detail=mask(o.detail)) for o in outcomes]
    by_id = {c.id: c for c in cases}
    counts = Counter(o.status for o in outcomes)
    sig = signature(outcomes)
    tables = _tables(by_id, outcomes)
    doc = {"worker": worker, "signature": sig, "seconds": round(seconds, 3),
           "counts": {s: counts.get(s, 0) for s in STATUSES},
           "cases": [{"id": o.case, "about": by_id[o.case].about if o.case in by_id else
                      "protocol check", "status": o.status, "detail": o.detail,
                      "ops": list(_uses(by_id, o.case)[0]),
                      "algorithms": list(_uses(by_id, o.case)[1]), "outputs": o.outputs}
                     for o in outcomes]}
    (folder / "report.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    (folder / "signature.txt").write_text(sig + "\n", encoding="utf-8")
    (folder / "summary.md").write_text(_markdown(worker, doc, tables), encoding="utf-8")
    (folder / "junit.xml").write_text(_junit(worker, outcomes, seconds), encoding="utf-8")
    return doc["counts"]


def _markdown(worker: dict, doc: dict, tables: dict) -> str:
    c = doc["counts"]
    about = (f"ABI v{worker['ir']}, {len(worker['ops'])} ops advertised" if worker["ir"]
             else "No status: the worker did not answer `GET /api/status`")
    lines = [f"# Certification of {worker['alias'] or 'a worker'} ({worker['url']})", "",
             f"{about}. "
             f"{len(doc['cases'])} cases in {doc['seconds']} s: " +
             ", ".join(f"{c[s]} {s.replace('_', ' ')}" for s in STATUSES) + ".", "",
             f"Signature: `{doc['signature']}`", ""]
    protocol = [x for x in doc["cases"] if x["id"].startswith("protocol/")]
    if protocol:
        ok = sum(1 for x in protocol if x["status"] == "pass")
        lines += [f"Protocol: {ok} of {len(protocol)} checks passed (" +
                  ", ".join(x["id"].split("/", 1)[1] for x in protocol) + ").", ""]
    for kind, table in tables.items():
        lines += [f"## Per {kind}", "", f"| {kind} | passed | failed | not supported | "
                  "timeout | error |", "|---|---|---|---|---|---|"]
        for name in sorted(table):
            t = table[name]
            lines.append(f"| `{name}` | {t['pass']} | {t['fail']} | {t['not_supported']} | "
                         f"{t['timeout']} | {t['error']} |")
        lines.append("")
    bad = [x for x in doc["cases"] if x["status"] != "pass"]
    if bad:
        lines += ["## Cases that did not pass", "", "| case | status | why |", "|---|---|---|"]
        lines += [f"| `{x['id']}` | {x['status']} | {x['detail'].replace('|', '/')} |"
                  for x in bad]
        lines.append("")
    return "\n".join(lines)


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml(text: str) -> str:
    """Text XML 1.0 can hold (its forbidden control characters shown as U+FFFD)."""
    return _NOT_XML.sub("\ufffd", text)


def _junit(worker: dict, outcomes: list[Outcome], seconds: float) -> str:
    counts = Counter(o.status for o in outcomes)
    failures = counts["fail"] + counts["not_supported"]
    errors = counts["timeout"] + counts["error"]
    out = ['<?xml version="1.0" encoding="utf-8"?>',
           f'<testsuite name={quoteattr("certify " + (worker["alias"] or worker["url"]))} tests="{len(outcomes)}" '
           f'failures="{failures}" errors="{errors}" time="{seconds:.3f}">']
    for o in outcomes:
        head = f'  <testcase classname="maned_conformance" name={quoteattr(_xml(o.case))}'
        if o.status == "pass":
            out.append(head + "/>")
        else:
            tag = "failure" if o.status in ("fail", "not_supported") else "error"
            out.append(head + ">")
            detail = _xml(o.detail)
            out.append(f"    <{tag} type={quoteattr(o.status)} message={quoteattr(detail)}>"
                       f"{escape(detail)}</{tag}>")
            out.append("  </testcase>")
    out.append("</testsuite>")
    return "\n".join(out) + "\n"
