"""Fuzz of the user files issue 34 gave parsers of their own: bark.conf (the machine's
identity: mutated bytes of a written one end in an identity or the reason it cannot run a
worker, never an exception; a keepable one reads back exactly), and the mutation tool's
report.json and equivalent.toml (mutated bytes end in the records or one ValueError saying
what is wrong, and `--rejudge`, in this process, in exit 0, 1 or 2 without an exception,
with one coded line for a 2).
Counts and the long mode are tests/fuzzing.py's."""
import json
import random
import shutil

import pytest

from maned_conformance.mutation import cli, judgements, report
from maned_machine.guest.identity import FIELDS, parse, read_conf, template, unkeepable

from fuzzing import cases, deadline, mutate_bytes

pytestmark = pytest.mark.fuzz

RECORD = {"id": "bark_vm/wire/ir.py:116:25:zero_minus1",
          "site": "bark_vm/wire/ir.py::concat_axis:zero_minus1#1", "file": "bark_vm/wire/ir.py",
          "line": 116, "col": 25, "operator": "zero_minus1", "scope": "concat_axis",
          "original": "return max(imm - 1, 0)", "mutated": "return max(imm - 1, -1)",
          "status": "killed", "case": "encodings/concat_imm_0.toml", "case_status": "fail",
          "reason": "answered as the reference", "judged": None, "seconds": 4.1}
REPORT = json.dumps({"mutants": [RECORD, dict(RECORD, status="survived", case=None,
                                              case_status=None, reason=None),
                                 dict(RECORD, case=None, case_status=None)],
                     "seconds": 9.5, "interrupted": False}).encode()


def test_mutated_bark_conf_ends_in_an_identity_or_its_reason():
    rng = random.Random(3401)
    for n in cases("bark.conf files", 400):
        values = ["lab-3", "me", "".join(rng.choice("ab #=\t\r\x0c\u2028é") for _ in
                                         range(rng.randint(1, 10)))]
        raw = mutate_bytes(template(*values).encode(), rng) if n % 2 else \
            template(*values).encode()
        with deadline():
            identity, why = read_conf(raw)
        assert set(identity) <= set(FIELDS) and (why is None or isinstance(why, str))
        if n % 2 == 0 and unkeepable(values[2]) is None:  # as written: read back exactly
            assert (identity, why) == (dict(zip(FIELDS, values)), None)
        assert set(parse(raw.decode("utf-8", "replace"))) <= set(FIELDS)


def test_mutated_mutation_reports_end_in_records_or_one_reason(tmp_path, capsys):
    rng = random.Random(3402)
    shutil.copyfile(judgements.default_path(), tmp_path / "equivalent.toml")
    toml = (tmp_path / "equivalent.toml").read_bytes()
    for n in cases("mutation reports", 300):
        (tmp_path / "report.json").write_bytes(mutate_bytes(REPORT, rng, edits=6))
        with deadline():
            try:
                records, seconds, interrupted = report.read(tmp_path)
            except ValueError as e:
                assert str(e).startswith("report.json"), e
            else:
                assert all(r["status"] in report.STATUSES for r in records)
        if n % 10 == 0:  # the whole command, now and then: a code and one coded line
            (tmp_path / "judged.toml").write_bytes(mutate_bytes(toml, rng, edits=3))
            with deadline():
                code = cli.main(["--rejudge", str(tmp_path), "--equivalent",
                                 str(tmp_path / "judged.toml")])
            err = capsys.readouterr().err  # an exception would have ended the test here
            assert code in (0, 1, 2)
            if code == 2:
                assert err.count("\n") == 1 and err.endswith("[EUSAGE]\n"), err
