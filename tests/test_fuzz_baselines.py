"""Fuzz of the benchmark gate's baseline (issue 24, points 2-3): mutated bytes of the
committed benchmarks/baseline.json, and random documents of the baseline's shape whose every
field is drawn good or bad (the generator knows which, so it is an oracle), through the one
place that reads a baseline (maned_bench.gate: parse, validate) and then the gate itself;
and a few through maned-bench's main(), which must refuse before measuring. Each case ends in
a table the gate judges, or the coded one-line refusal; never another exception. Each case
runs under a deadline; counts and the long mode are tests/fuzzing.py's."""
import json
import math
import random

import pytest

from maned_bench import baseline_file, cli, gate
from maned_bench.contention import Load
from maned_bench.figures import Figure
from maned_bench.suite import SCALES

from fuzzing import cases, deadline, mutate_bytes

QUIET = Load(cores=2, others=0.0)

pytestmark = pytest.mark.fuzz

COMMITTED = baseline_file.BASELINE.read_bytes()
NAME = "fuzzed.json"
HEAD = f"the baseline {NAME}: "
LONGEST = len(HEAD) + 200  # a refusal quotes at most a short prefix of what the file holds
BIG = "__a number beyond float__"  # replaced by the literal 1e400 once dumped

# (good, bad) values of each field of a rule; the bad ones are what a gate must refuse
FIELDS = {
    "value": ([None, 0.25, 1, 3.5723, 803.2225, 1e-3],
              [0, -1, -0.5, float("nan"), float("inf"), float("-inf"), BIG, 10 ** 400, "2.0",
               True, False, [], {}, ""]),
    "margin": ([1, 1.5, 2, 3, 5, 2.5, 100],
               [0, 0.5, 0.999, -3, float("nan"), float("inf"), BIG, 10 ** 400, None, "3",
                True, [3], {}]),
    "better": (["lower", "higher"],
               ["up", "Lower", "HIGHER", "", None, 1, True, ["lower"], float("nan")]),
    "parallel": ([True, False], ["yes", 0, 1, None, [], float("-inf")]),
}


def _refused(e: baseline_file.BaselineError, where: str = HEAD) -> None:
    text = str(e)
    assert e.code == "EUSAGE"
    assert text.startswith(where) and "\n" not in text and "\r" not in text, text
    assert len(text) <= LONGEST, text


def _judged(doc: dict) -> None:
    """A document the reader accepted: every table gates as its rules say, at the baseline
    and just beyond each margin, without an exception."""
    for scale in SCALES:
        try:
            table = baseline_file.validate(doc, scale)
        except baseline_file.BaselineError as e:
            _refused(e, "")
            assert scale not in doc or not doc[scale]
            continue
        for name, rule in table.items():
            assert rule["better"] in baseline_file.DIRECTIONS and rule["margin"] >= 1
            assert rule["value"] is None or (math.isfinite(rule["value"]) and rule["value"] > 0)
        at = [Figure(n, r["value"], "x", "fuzz", r["better"], load=QUIET)
              for n, r in table.items()]
        verdicts = gate.check(at, table)
        assert {v.status for v in verdicts} <= {"pass", "skip"}
        outcome = gate.judge(verdicts)  # on two quiet CPUs a speed-up is gated too
        assert outcome.passed == any(r["value"] is not None for r in table.values())
        worse = [Figure(n, r["value"] * (r["margin"] * 1.5) ** (1 if r["better"] == "lower"
                                                                 else -1),
                        "x", "fuzz", r["better"], load=QUIET) if r["value"] is not None else
                 Figure(n, 1.0, "x", "fuzz", r["better"], load=QUIET) for n, r in table.items()]
        judged = gate.judge(gate.check(worse, table))
        assert judged.status == ("failed" if outcome.passed else "checked nothing")


def _read(raw: bytes):
    """parse() of the bytes: the document, or None after checking the refusal's shape."""
    try:
        with deadline():
            return baseline_file.parse(raw, NAME)
    except baseline_file.BaselineError as e:
        _refused(e)
        return None


def test_mutated_baselines_end_in_a_table_or_the_coded_refusal():
    rng = random.Random(2401)
    accepted = 0
    for n in cases("mutated baseline files", 5000):
        raw = mutate_bytes(COMMITTED, rng, edits=1 + n % 6)
        try:
            doc = _read(raw)
            if doc is not None:
                accepted += 1
                with deadline():
                    _judged(doc)
        except Exception as e:  # noqa: BLE001 - the failing case, shown
            pytest.fail(f"mutated case {n} raised {type(e).__name__}: {e}\n{raw[:300]!r}")
    assert accepted  # some mutations (inside a number, a name) keep a readable baseline


def _draw(rng: random.Random, key: str, good: bool):
    return rng.choice(FIELDS[key][0 if good else 1])


def _random_doc(rng: random.Random):
    """(the JSON text of a random baseline-shaped document, whether it is valid)."""
    valid = True
    doc = {}
    for scale in rng.sample(SCALES + ("medium", ""), rng.randint(0, 3)):
        valid &= scale in SCALES
        shape = rng.random()
        if shape < 0.08:
            doc[scale] = rng.choice([[], 3, "table", None, True, float("nan")])
            valid = False
            continue
        table, rules_valid = {}, {}
        for i in range(rng.randint(0, 4)):
            name = rng.choice(["chain/hmm/1000", "kernel/matmul/16/speedup", "",
                               "x" * rng.randint(1, 300), f"sweep/{i}/vm_x2/over_one"])
            # a name drawn twice replaces its rule (and its validity): dumped, it is once
            if rng.random() < 0.05:  # a rule that is not an object
                table[name], rules_valid[name] = rng.choice([3, [], "rule", None]), False
                continue
            rule, ok = {}, True
            for key in FIELDS:
                roll = rng.random()
                if roll < 0.06 and key != "parallel":
                    ok = False  # a required key missing
                    continue
                if roll < 0.12 and key == "parallel":
                    continue  # optional: false
                good = rng.random() < 0.85
                ok &= good
                rule[key] = _draw(rng, key, good)
            if rng.random() < 0.04:
                rule[rng.choice(["paralel", "Value", "note"])] = 1
                ok = False
            table[name], rules_valid[name] = rule, ok
        valid &= all(rules_valid.values())
        doc[scale] = table
    text = json.dumps(doc)
    if rng.random() < 0.1:
        return json.dumps(rng.choice([[doc], 3, "doc", None, True])), False
    return text.replace(json.dumps(BIG), "1e400"), valid


def test_random_baseline_documents_are_accepted_exactly_when_valid():
    """The generator knows whether each document is a valid baseline: the reader agrees."""
    rng = random.Random(2402)
    for n in cases("random baseline documents", 5000):
        text, valid = _random_doc(rng)
        try:
            doc = _read(text.encode())
            assert (doc is not None) == valid, f"{'refused' if valid else 'accepted'} it"
            if doc is not None:
                with deadline():
                    _judged(doc)
        except Exception as e:  # noqa: BLE001 - the failing case, shown
            pytest.fail(f"random case {n}: {type(e).__name__}: {e}\n{text[:400]}")


def test_maned_bench_refuses_a_bad_baseline_before_it_measures(tmp_path, monkeypatch,
                                                               capsys):
    """main() on a random or mutated baseline: exit 2 with one coded line and no run, or
    (the baseline valid for the scale) on to the run, which the test stands in for. The
    first case is the committed baseline itself, so the valid side is always tried, whatever
    the seeded mutations of the day's baseline happen to keep valid."""
    ran = []
    monkeypatch.setattr(cli, "_run", lambda *args: ran.append(args) or 0)
    rng = random.Random(2403)
    path = tmp_path / NAME
    for n in cases("maned-bench with a random baseline", 100):
        raw = (COMMITTED if n == 0 else mutate_bytes(COMMITTED, rng) if n % 2
               else _random_doc(rng)[0].encode())
        path.write_bytes(raw)
        scale = rng.choice(SCALES)
        try:
            baseline_file.validate(baseline_file.parse(raw, NAME), scale)
            valid = True
        except baseline_file.BaselineError:
            valid = False
        before = len(ran)
        with deadline():
            code = cli.main(["--baseline", str(path), "--out", str(tmp_path / "out")]
                            + (["--smoke"] if scale == "smoke" else []))
        out, err = capsys.readouterr()
        if valid:
            assert (code, len(ran), err) == (0, before + 1, ""), (n, err)
            (tmp_path / "out").rmdir()  # main() made it on the way to the run
        else:
            assert not (tmp_path / "out").exists()  # refused before anything
            assert (code, len(ran), out) == (2, before, ""), (n, code)
            assert err.count("\n") == 1 and err.endswith(" [EUSAGE]\n"), err
            assert err.startswith(f"maned-bench: the baseline {path}: "), err
            assert len(err) <= LONGEST + len(str(path)) + 30, err
    assert ran, "no case reached the run: the valid side went untried"
