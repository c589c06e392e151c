"""A certification report folder (DESIGN §8): `report.json` (every case's outcome),
`summary.md` (a table per op and per algorithm, failures by op family, cause first),
`junit.xml` (one testcase per case) and, only when every case of the full set passed,
`signature.txt`: SHA-256 of the canonical JSON of every case's [id, outputs] in id order,
led by the pseudo-case ["case-set", digest of the case files], so two signatures agree
only when the same cases gave the same integers."""
import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from maned.diagnostics.printer import mask
from maned.interp.kernels import family

from .cases import Case
from .outcome import STATUSES, Outcome, is_check

REPORT, SIGNATURE, SUMMARY, JUNIT = "report.json", "signature.txt", "summary.md", "junit.xml"
CASE_SET = "case-set"  # the signature's pseudo-case: no case file has this id
# The layers a run asks its cases in (likeliest_first), so its first failure is the likeliest
# cause: an op alone, then the wire's envelopes and requests, then what is built of many ops
# (flows, goldens, ML). The protocol checks run before them all.
LAYERS = (("ops/",), ("envelopes/", "malformed/", "invalid/", "encodings/"),
          ("flows/", "goldens/", "ml/"))


@dataclass(frozen=True)
class Scope:
    """What a run covered: the digest of the full case set, and the filter of a partial run
    (None for a full one)."""

    case_set: str
    partial: str | None = None
    total: int = 0  # case files in the full set
    run: int = 0  # case files this run covered
    not_run: str | None = None  # why nothing was asked (an operator error)


def case_set_digest(cases: list[Case]) -> str:
    """SHA-256 of the canonical JSON of [id, SHA-256 of the case file] for every case."""
    doc = [[c.id, hashlib.sha256((c.folder / Path(c.id).name).read_bytes()).hexdigest()]
           for c in sorted(cases, key=lambda c: c.id)]
    return hashlib.sha256(json.dumps(doc, separators=(",", ":")).encode()).hexdigest()


def signature(outcomes: list[Outcome], case_set: str) -> str:
    """Over the case files only (ids are their paths, DESIGN §8), not the protocol checks."""
    doc = [[CASE_SET, case_set]] + [[o.case, o.outputs] for o in sorted(
        outcomes, key=lambda o: o.case) if not is_check(o.case)]
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _uses(cases: dict[str, Case], cid: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ops and algorithms of a case (none for a protocol check)."""
    return cases[cid].uses if cid in cases else ((), ())


def layer(case_id: str) -> int:
    """Where a case stands in LAYERS (a single op's cases 0, ...)."""
    return next((k for k, prefixes in enumerate(LAYERS) if case_id.startswith(prefixes)),
                len(LAYERS))


def likeliest_first(case: Case) -> tuple:
    """The order a certification asks its cases in, the likeliest cause of a failure first:
    by layer (LAYERS: a single op's cases first), the fewest ops, the shortest script, the
    id. So the first failure in time is the likeliest cause, unless an earlier failure left
    the worker unable to answer (a job still running, a crash): then that one is the cause
    and the later ones its symptoms."""
    return layer(case.id), len(case.uses[0]), len(case.script), case.id


def cause_first(outcomes: list[Outcome]) -> list[Outcome]:
    """The outcomes that did not pass, in the order the run met them (`outcomes` is in run
    order: the protocol checks, then the cases likeliest_first), what the worker was asked
    before what it never was."""
    return sorted((o for o in outcomes if o.status != "pass"), key=lambda o: not o.asked)


def listed(outcomes: list[Outcome]) -> list[Outcome]:
    """The report's order: the protocol checks as run, then every case in id order."""
    return ([o for o in outcomes if is_check(o.case)]
            + sorted((o for o in outcomes if not is_check(o.case)), key=lambda o: o.case))


def _tables(cases: dict[str, Case], outcomes: list[Outcome]) -> dict[str, dict[str, Counter]]:
    """op -> status counts, algorithm -> status counts (a request case is about a wire rule,
    not its flow's ops: a refused malformed relu is no relu that passed)."""
    by_op: dict[str, Counter] = {}
    by_algo: dict[str, Counter] = {}
    for o in outcomes:
        if o.case in cases and cases[o.case].mutation:
            continue
        ops, algos = _uses(cases, o.case)
        for op in ops:
            by_op.setdefault(op, Counter())[o.status] += 1
        for algo in algos:
            by_algo.setdefault(algo, Counter())[o.status] += 1
    return {"op": by_op, "algorithm": by_algo}


def write(folder: Path, worker: dict, cases: list[Case], outcomes: list[Outcome],
          seconds: float, scope: Scope) -> dict:
    """Write the artefacts (the signature only for a full run where every case passed; a
    signature left by an earlier run is removed); returns the report document."""
    folder.mkdir(parents=True, exist_ok=True)
    # a worker's answer may echo anything, a password included: every detail is masked, and
    # every string the worker sent (its alias, kind, op names) or a refusal quoted from it
    # is shown the same way (display) in every artefact, report.json included
    outcomes = [replace(o, detail=mask(o.detail)) for o in outcomes]
    worker = shown_worker(worker)
    if scope.not_run is not None:
        scope = replace(scope, not_run=display(scope.not_run))
    by_id = {c.id: c for c in cases}
    counts = Counter(o.status for o in outcomes)
    failures = cause_first(outcomes)
    outcomes = listed(outcomes)
    sig = signature(outcomes, scope.case_set) if scope.partial is None and not failures \
        else None
    doc = {"worker": worker, "certified": sig is not None, "signature": sig,
           "why_no_signature": _why_none(scope, failures), "case_set": scope.case_set,
           "partial": None if scope.partial is None else
           {"cases": scope.partial, "run": scope.run, "of": scope.total},
           "not_run": scope.not_run,
           "seconds": round(seconds, 3),
           "counts": {s: counts.get(s, 0) for s in STATUSES},
           "failures": [o.case for o in failures],
           "cases": [{"id": o.case, "about": by_id[o.case].about if o.case in by_id else
                      "protocol check", "status": o.status, "asked": o.asked,
                      "detail": o.detail,
                      "ops": list(_uses(by_id, o.case)[0]),
                      "algorithms": list(_uses(by_id, o.case)[1]), "outputs": o.outputs}
                     for o in outcomes]}
    (folder / REPORT).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    stale = folder / SIGNATURE
    if sig is not None:
        stale.write_text(sig + "\n", encoding="utf-8")
    elif stale.exists():
        stale.unlink()
    (folder / SUMMARY).write_text(_markdown(worker, doc, _tables(by_id, outcomes),
                                                 by_id, failures), encoding="utf-8")
    (folder / JUNIT).write_text(_junit(worker, outcomes, seconds, doc["partial"]),
                                      encoding="utf-8")
    return doc


def _why_none(scope: Scope, failures: list[Outcome]) -> str | None:
    if scope.not_run is not None:
        return f"the certification did not run: {scope.not_run}"
    if scope.partial is not None:
        return (f"a partial run (--cases {scope.partial}) certifies nothing: only a run of "
                f"the whole set of {scope.total} cases is signed")
    if failures:
        return f"{len(failures)} case(s) did not pass"
    return None


def display(text: str | None) -> str:
    """Text from the worker (its alias) or a detail as one safe line: masked, and every
    control character escaped by the printer's mask(), so no forged line gets through."""
    return mask(str(text))


def shown_worker(worker: dict) -> dict:
    """The worker's information with every string shown safe (display); None stays None."""
    def safe(v):
        return display(v) if isinstance(v, str) else v
    return {k: [safe(x) for x in v] if isinstance(v, list) else safe(v)
            for k, v in worker.items()}


def _markdown(worker: dict, doc: dict, tables: dict, by_id: dict[str, Case],
              failures: list[Outcome]) -> str:
    c = doc["counts"]
    about = (f"ABI v{worker['ir']}, {len(worker['ops'])} ops advertised" if worker["ir"]
             else "No status: none was taken from the worker (`GET /api/status`)")
    lines = [f"# Certification of {display(worker['alias'] or 'a worker')} "
             f"({display(worker['url'])})", ""]
    if worker.get("machine"):
        m = worker["machine"]
        lines += [f"Machine: image `{m['image']}` (sha256 `{m['image_sha256']}`), booted by "
                  f"{m['boot_mode']} under {m['accelerator']} in {m['boot_s']} s; its serial "
                  "console is `serial.log`.", ""]
    if doc["partial"]:
        p = doc["partial"]
        lines += [f"**Partial run**: only the {p['run']} cases of `--cases "
                  f"{display(p['cases'])}` ran (and the protocol checks), of {p['of']} cases "
                  "in the set. Not a certification: there is no signature.", ""]
    if doc["not_run"]:
        lines += [f"**Not run**: {display(doc['not_run'])}. Every check and case below is "
                  "`error` for that reason; nothing was asked of the worker.", ""]
    lines += [f"{about}. {len(doc['cases'])} cases in {doc['seconds']} s: " +
              ", ".join(f"{c[s]} {s.replace('_', ' ')}" for s in STATUSES) + ".", ""]
    lines += [f"Signature: `{doc['signature']}` (case set `{doc['case_set'][:16]}`)"
              if doc["signature"] else f"Signature: none: {doc['why_no_signature']}.", ""]
    protocol = [x for x in doc["cases"] if is_check(x["id"])]
    if protocol:
        ok = sum(1 for x in protocol if x["status"] == "pass")
        lines += [f"Protocol: {ok} of {len(protocol)} checks passed (" +
                  ", ".join(x["id"].split("/", 1)[1] for x in protocol) + ").", ""]
    if failures and not doc["not_run"]:
        lines += _failures(doc, by_id, failures)
    for kind, table in tables.items():
        lines += [f"## Per {kind}", "", f"| {kind} | passed | failed | not supported | "
                  "timeout | error |", "|---|---|---|---|---|---|"]
        for name in sorted(table):
            t = table[name]
            lines.append(f"| `{name}` | {t['pass']} | {t['fail']} | {t['not_supported']} | "
                         f"{t['timeout']} | {t['error']} |")
        lines.append("")
    return "\n".join(lines)


def _failures(doc: dict, by_id: dict[str, Case], failures: list[Outcome]) -> list[str]:
    """The cases that did not pass, cause first, under the op family of their first op
    (cases of no op, such as protocol checks and ML definitions, under their folder)."""
    first = failures[0]
    lines = ["## Cases that did not pass, cause first", "",
             f"Look first at `{first.case}` ({first.status}): {_cell(first.detail)}", ""]
    groups: dict[str, list[Outcome]] = {}
    for o in failures:
        ops = _uses(by_id, o.case)[0]
        name = f"{family(ops[0])} ops" if ops and o.case.startswith("ops/") else \
            o.case.split("/", 1)[0]
        groups.setdefault(name, []).append(o)
    for name, group in groups.items():
        lines += [f"### {name}", "", "| case | status | why |", "|---|---|---|"]
        lines += [f"| `{o.case}` | {o.status} | {_cell(o.detail)} |" for o in group]
        lines.append("")
    return lines


def _cell(text: str) -> str:
    return display(text).replace("|", "/")


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml(text: str) -> str:
    """Text XML 1.0 can hold, shown safe (display: every control character escaped), and
    anything XML 1.0 still could not hold shown as U+FFFD."""
    return _NOT_XML.sub("\ufffd", display(text))


def _junit(worker: dict, outcomes: list[Outcome], seconds: float, partial) -> str:
    counts = Counter(o.status for o in outcomes)
    failures = counts["fail"] + counts["not_supported"]
    errors = counts["timeout"] + counts["error"]
    name = "certify " + (worker["alias"] or worker["url"]) + (
        f" (partial: --cases {partial['cases']})" if partial else "")
    out = ['<?xml version="1.0" encoding="utf-8"?>',
           f'<testsuite name={quoteattr(_xml(name))} tests="{len(outcomes)}" '
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
