"""Fuzz of worker aliases in maned-certify (issue 24, point 5): random and mutated aliases
(control characters, terminal escapes, newlines, bidi and other format characters, lone
surrogates, non-ASCII letters, XML and Markdown metacharacters, very long ones, and legal
ones) through (a) the status check a certification starts with: a legal alias (the one rule,
bark_vm/wire/alias.py) is accepted, any other refused as one coded, printable line that
shows it escaped, never an exception; and (b) the report writers, in process: the headline
for stdout, summary.md, junit.xml (parsed by xml.etree) and report.json (parsed by json), of
a run that went on and of one refused before it asked anything: every line printable, no
line forged, the alias shown escaped. Counts and the long mode are tests/fuzzing.py's."""
import json
import random
import xml.etree.ElementTree as ET

import pytest

from bark_vm.wire.alias import ALIAS_MAX, is_alias
from bark_vm.wire.strict_json import MAX_JSON_BYTES
from maned.diagnostics.ledger import LEDGER
from maned_conformance import certify, report
from maned_conformance.cases import all_cases
from maned_conformance.preflight import OperatorError, accepted_status
from maned_conformance.outcome import Outcome, not_run

from fuzzing import CODED, cases, deadline
from stub_worker import STATUS

pytestmark = pytest.mark.fuzz

URL = "http://127.0.0.1:4780"
FIRST = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"
REST = FIRST + "0123456789"
HOSTILE = ["\x00", "\x07", "\x08", "\t", "\n", "\r", "\x0b", "\x0c", "\x1b", "\x1b[2J",
           "\x1b[31m", "\x1b]0;title\x07", "\x7f", "\x85", "\x9b", "\u200b", "\u200e",
           "\u202e", "\u2028", "\u2029", "\ufeff", "\ufffe", "\uffff", "\ud800", "\udfff",
           "\U0001f600", "é", "ß", "Ω", "\u0130", "-", "--", "_", "0", " ", "'", '"', "\\",
           "|", "`", "<", ">", "&", "]]>", "<!--", "*", "#", "\r\nmaned-certify: forged [OK]\n"]


def legal_alias(rng: random.Random) -> str:
    """An alias by construction: identifiers joined by single hyphens, within ALIAS_MAX."""
    parts = [rng.choice(FIRST) + "".join(rng.choice(REST) for _ in range(rng.randrange(12)))
             for _ in range(rng.randint(1, 4))]
    return "-".join(parts)[:ALIAS_MAX].rstrip("-")


def mutated_alias(rng: random.Random) -> str:
    """A legal alias with one to four edits (a hostile piece put in, a character set to a
    random code point, one deleted, the whole repeated past ALIAS_MAX), or random code
    points, or a very long one."""
    roll = rng.random()
    if roll < 0.1:
        return "".join(chr(rng.randrange(0x110000)) for _ in range(rng.randrange(40)))
    if roll < 0.15:
        return rng.choice(REST) * rng.choice([ALIAS_MAX + 1, 1000, 100000])
    text = list(legal_alias(rng))
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(text) + 1)
        kind = rng.choice(["insert", "insert", "set", "delete", "long"])
        if kind == "insert":
            text[at:at] = list(rng.choice(HOSTILE))
        elif kind == "set" and at < len(text):
            text[at] = chr(rng.randrange(0x110000))
        elif kind == "delete" and at < len(text):
            del text[at]
        elif kind == "long":
            text = text * (ALIAS_MAX // max(len(text), 1) + 2)
    return "".join(text)


def aliases(target: str, default: int, seed: int):
    """(case number, alias): legal ones a third of the time, else mutated or random."""
    rng = random.Random(seed)
    for n in cases(target, default):
        yield n, (legal_alias(rng) if n % 3 == 0 else mutated_alias(rng))


def legal(alias: str) -> bool:
    """The rule of bark_vm/wire/alias.py, as bark-worker applies it (not a second rule)."""
    return is_alias(alias) and len(alias.encode("utf-8", "replace")) <= ALIAS_MAX


def _status_body(alias: str, ascii_only: bool = False) -> bytes:
    """A status answer giving `alias`: its characters raw UTF-8 (a lone surrogate left as
    bytes no UTF-8 allows), or every non-ASCII one a JSON escape."""
    return json.dumps(dict(STATUS, alias=alias), ensure_ascii=ascii_only).encode(
        "utf-8", "surrogatepass")


def _no_status(alias: str, body: bytes, ascii_only: bool) -> bool:
    """The body is no status at all (strict_json: not UTF-8, a surrogate escape, too
    large), so the refusal is of the answer, not of its alias."""
    return any("\ud800" <= c <= "\udfff" for c in alias) or len(body) > MAX_JSON_BYTES or (
        ascii_only and any(c > "\uffff" for c in alias))


def test_the_status_check_accepts_legal_aliases_and_refuses_the_rest_as_a_coded_line():
    for n, alias in aliases("worker aliases", 1500, 2401):
        try:
            with deadline():
                try:
                    body = _status_body(alias, ascii_only=n % 2 == 1)
                    status = accepted_status(URL, 200, body)
                except OperatorError as e:
                    assert not legal(alias), f"a legal alias refused: {e}"
                    line = certify.operator_line(str(e))
                    assert line.isprintable() and len(line.splitlines()) == 1, line
                    assert CODED.search(line).group(1) == "EUSAGE" and "EUSAGE" in LEDGER
                    if _no_status(alias, body, n % 2 == 1):
                        assert "as a Bark worker" in line, line
                    else:  # the alias refused, shown escaped
                        assert report.display(alias[:40]) in line, line
                else:
                    assert legal(alias) and status.alias == alias
        except BaseException as e:
            pytest.fail(f"alias case {n} ({alias[:200]!r}) raised {type(e).__name__}: {e}")


@pytest.fixture(scope="module")
def some_cases():
    """Three real cases of the set (one op, one flow, any third), for the tables."""
    every = [c for c in all_cases() if "hardware" in c.targets]
    picked = [next(c for c in every if c.id.startswith(p)) for p in ("ops/add/", "flows/")]
    return picked + [every[-1]]


def _run_report(folder, alias: str, picked) -> dict:
    """The artefacts of a run that went on: the worker's strings all `alias`, one case
    passed, one failed with a detail quoting it, one not run."""
    info = {"alias": alias, "url": URL, "kind": alias, "ir": 2, "rf_slots": 4096,
            "ops": ["add", alias]}
    outcomes = [Outcome("protocol/status", "hardware", "fail", f"the worker said {alias}"),
                Outcome(picked[0].id, "hardware", "pass", "", {"f": {"r": [1]}}),
                Outcome(picked[1].id, "hardware", "error", f"worker error: {alias}"),
                not_run(picked[2].id, f"not run: after {alias}")]
    scope = report.Scope("0" * 64, None, 3, 3)
    return report.write(folder, info, picked, outcomes, 1.5, scope)


def _refused_report(folder, alias: str, picked) -> dict:
    """The artefacts of a run refused before it asked anything: the refusal's reason is the
    status check's, quoting the alias."""
    try:
        accepted_status(URL, 200, _status_body(alias))
        why = f"a reason quoting {alias}"  # a legal alias: the writers are fuzzed all the same
    except OperatorError as e:
        why = str(e)
    return certify.write_not_run(folder, URL, picked, why, 0.1, report.Scope("0" * 64, None,
                                                                             3, 3))


def _check_artefacts(folder, doc: dict, alias: str, lines: dict) -> None:
    head = certify.headline(doc, "", str(folder), 1.5)
    summary = (folder / "summary.md").read_text(encoding="utf-8")
    for name, text in (("headline", head), ("summary.md", summary)):
        assert all(line.isprintable() for line in text.splitlines()), name
        # no line forged: as many lines as a plain alias gives
        assert len(text.splitlines()) == lines[name], (name, text)
    junit = (folder / "junit.xml").read_text(encoding="utf-8")
    assert len(junit.splitlines()) == lines["junit.xml"]
    ET.fromstring(junit.encode("utf-8"))  # well-formed, whatever the alias
    parsed = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert parsed == json.loads(json.dumps(doc))

    def strings(v):
        if isinstance(v, str):
            yield v
        for x in (v if isinstance(v, list) else
                  [y for kv in v.items() for y in kv] if isinstance(v, dict) else []):
            yield from strings(x)
    assert all(s.isprintable() for s in strings(parsed))
    if parsed["worker"]["alias"] is not None:
        assert parsed["worker"]["alias"] == report.display(alias)
        assert parsed["worker"]["kind"] == parsed["worker"]["ops"][1] == report.display(alias)


def _line_counts(folder, doc: dict) -> dict:
    return {"headline": len(certify.headline(doc, "", str(folder), 1.5).splitlines()),
            "summary.md": len((folder / "summary.md").read_text().splitlines()),
            "junit.xml": len((folder / "junit.xml").read_text().splitlines())}


def test_the_report_writers_show_any_alias_escaped_and_stay_well_formed(tmp_path, some_cases):
    writers = {"run": _run_report, "refused": _refused_report}
    baseline = {name: _line_counts(tmp_path / name, w(tmp_path / name, "bob", some_cases))
                for name, w in writers.items()}
    for n, alias in aliases("worker aliases (report writers)", 500, 2402):
        name = "run" if n % 2 else "refused"
        folder = tmp_path / name
        try:
            with deadline():
                doc = writers[name](folder, alias, some_cases)
                _check_artefacts(folder, doc, alias, baseline[name])
        except BaseException as e:
            pytest.fail(f"{name} report, alias case {n} ({alias[:200]!r}) raised "
                        f"{type(e).__name__}: {e}")
