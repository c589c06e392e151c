"""The mutation tool (maned_conformance.mutation): the enumerator on a small source (ids,
operators, what is never mutated, a fixed order), the judgements file, and a few real
mutants of the worker through the real loop (worker from the mutated copy, maned-certify
against it): killed ones name their case, a judged survivor is reported equivalent."""
import ast
import json

import pytest

from maned_conformance.mutation import cli, judgements
from maned_conformance.mutation.mutants import DEFAULT_FILES, enumerate_mutants, \
    mutants_of_source, resolve_files
from maned_conformance.mutation.operators import OPERATORS
from maned_conformance.mutation.trial import package_dir

SOURCE = '''"""Module doc: 1 + 2 − 3."""
import os
__all__ = ["f", 1 + 2]


@decorate(1 + 2)
def f(a: int = 3, *, b: Literal[1] = 2) -> tuple[1]:
    """Doc of f: a < b."""
    x = a | b ^ c
    text = "n = " + str(a + 1) + f"{a - 1}"
    if not (a and b):
        raise ValueError(f"{a * 2} is wrong" % 3)
    while a < 2 < b:
        a -= 0x1F
        break
    return a if a in b else None
'''


def by_op(mutants):
    return {(m.line, m.operator): m for m in mutants}


def test_the_enumerator_names_each_mutant_and_edits_only_its_token():
    mutants = mutants_of_source(SOURCE, "pkg/mod.py")
    found = by_op(mutants)
    # ids: path:line:col:operator, the column (1-based) of the token changed
    assert "pkg/mod.py:9:11:bitor_bitand" in {m.id for m in mutants}
    assert {m.id for m in mutants if m.line == 13 and m.operator == "lt_lte"} == {
        "pkg/mod.py:13:13:lt_lte", "pkg/mod.py:13:17:lt_lte"}  # each `<` of a chain
    assert found[(14, "aug_sub_add")].mutated == "a += 0x1F"
    assert found[(14, "int_plus1")].mutated == "a -= 0x20"      # the literal's base kept
    assert found[(15, "break_continue")].mutated == "continue"
    assert found[(12, "raise_pass")].mutated == "pass"
    assert found[(11, "drop_not")].mutated == "if (a and b):"
    assert found[(11, "and_or")].mutated == "if not (a or b):"
    assert found[(16, "negate_ifexp")].mutated == "return a if not (a in b) else None"
    assert found[(16, "in_notin")].mutated == "return a if a not in b else None"
    assert (11, "negate_if") not in found  # `if not X` negated is drop_not's defect
    # a swap into another precedence is parenthesized so the tree is the one intended
    xor = found[(9, "bitxor_bitor")]
    assert xor.mutated == "x = a | (b | c)"
    tree = ast.parse(xor.apply(SOURCE))
    assert isinstance(tree.body[3].body[1].value.right, ast.BinOp)
    # the rest of the file is untouched, byte for byte
    for m in mutants:
        text = m.apply(SOURCE)
        start = min(s for s, _, _ in m.edits)
        assert text[:start] == SOURCE[:start] and text != SOURCE
        assert m.id.startswith(f"pkg/mod.py:{m.line}:{m.col}:{m.operator}")


def test_strings_docstrings_fstrings_annotations_imports_decorators_are_never_mutated():
    mutants = mutants_of_source(SOURCE, "pkg/mod.py")
    lines = {m.line for m in mutants}
    # the module doc, the import, __all__, the decorator, f's doc, text being built
    assert not lines & {1, 2, 3, 6, 8, 10}
    # line 7: only the defaults 3 and 2, not the annotations' `1`
    assert {(m.col, m.operator) for m in mutants if m.line == 7} == {
        (16, "int_plus1"), (16, "int_minus1"), (38, "int_plus1"), (38, "int_minus1")}
    # line 12: only the raise itself; the message (an f-string, % 3) is free text
    assert [m.operator for m in mutants if m.line == 12] == ["raise_pass"]
    assert {op.name for op in OPERATORS} >= {m.operator for m in mutants}


STEPS = '''def g(a, b, xs):
    check(a, b)
    y = xs[1:-1]
    y += a
    note = f"{a} is wrong"
    return clip(y, 0, b)[:2]
'''


def test_a_step_left_out_swapped_arguments_slice_bounds_and_zero_as_minus_one():
    """Issue 33, point 8: the kinds a study of certification found missing. A simple
    statement becomes `pass` (not one that only builds text), neighbouring arguments swap,
    a slice's lower bound grows by one and its upper one shrinks (absent: 1, -1), 0 is -1."""
    found = {(m.line, m.col, m.operator): m.mutated for m in mutants_of_source(STEPS, "p.py")}
    assert found[(2, 5, "expr_pass")] == found[(3, 5, "assign_pass")] == "pass"
    assert found[(4, 5, "augassign_pass")] == "pass"
    assert not any(line == 5 for line, _, _ in found)  # `note = f"..."` is text being built
    assert found[(2, 11, "swap_args")] == "check(b, a)"
    assert found[(6, 17, "swap_args")] == "return clip(0, y, b)[:2]"
    assert found[(6, 20, "swap_args")] == "return clip(y, b, 0)[:2]"
    assert found[(3, 12, "slice_lower_plus1")] == "y = xs[1 + 1:-1]"
    assert found[(3, 12, "slice_upper_minus1")] == "y = xs[1:-1 - 1]"
    assert found[(6, 26, "slice_lower_plus1")] == "return clip(y, 0, b)[1:2]"
    assert found[(6, 26, "slice_upper_minus1")] == "return clip(y, 0, b)[:2 - 1]"
    assert found[(6, 20, "zero_minus1")] == "return clip(y, -1, b)[:2]"
    assert [op for line, _, op in found if op == "zero_minus1"] == ["zero_minus1"]  # one 0


def test_the_enumeration_is_deterministic_and_ids_are_unique():
    root = package_dir().parent
    files = resolve_files(["bark_vm/executor/elementwise.py", "bark_vm/request_handling.py"], root)
    first, second = enumerate_mutants(files, root), enumerate_mutants(files, root)
    assert first == second and len(first) > 50
    assert len({m.id for m in first}) == len(first)
    assert [m.path for m in first] == sorted(m.path for m in first)
    assert mutants_of_source(SOURCE, "a.py") == mutants_of_source(SOURCE, "a.py")
    assert resolve_files(DEFAULT_FILES, root)  # the defaults name files of this package


def test_judgements_by_site_and_by_function_and_stale_ones(tmp_path):
    mutants = mutants_of_source(SOURCE, "pkg/mod.py")
    some = mutants[0]
    path = tmp_path / "equivalent.toml"
    path.write_text(f'[[equivalent]]\nwhy = "a reason"\nsites = ["{some.site}", '
                    '"pkg/mod.py::f:int_plus1#99"]\n'
                    '[[equivalent]]\nwhy = "never run"\nfunctions = ["pkg/mod.py::f"]\n'
                    '[[equivalent]]\nwhy = "no such function"\nfunctions = ["pkg/mod.py::g"]\n')
    judged = judgements.load(path)
    assert judged.reason(some) == "a reason"
    assert all(judged.reason(m) == "never run" for m in mutants[1:] if m.scope == "f")
    assert judged.stale(mutants, ["pkg/mod.py"]) == ["pkg/mod.py::f:int_plus1#99",
                                                     "pkg/mod.py::g"]
    assert judged.stale(mutants, ["other.py"]) == []
    for bad, says in [('[[equivalent]]\nwhy = ""\nsites = ["x"]\n', "one-line reason"),
                      ('"x" = "a reason"\n', "only \\[\\[equivalent\\]\\] tables"),
                      ('[[equivalent]]\nwhy = "w"\n', "sites or functions"),
                      ('[[equivalent]]\nwhy = "w"\nsites = "x"\n', "a list of strings"),
                      ('[[equivalent]]\nwhy = "a"\nsites = ["x"]\n'
                       '[[equivalent]]\nwhy = "b"\nsites = ["x"]\n', "judged twice")]:
        path.write_text(bad)
        with pytest.raises(ValueError, match=says):
            judgements.load(path)
    assert judgements.load(judgements.default_path())  # the shipped file is well formed


def test_a_site_stays_when_another_definition_or_another_operator_is_edited():
    """Issue 36, point 5: a judgement is keyed by what it judges, so an edit elsewhere in
    the file (lines added above, another function grown) leaves every site as it was."""
    before = {m.site: (m.original, m.mutated) for m in mutants_of_source(SOURCE, "m.py")}
    edited = SOURCE.replace("import os\n", "import os\n\n\ndef added(x):\n"
                            "    return x + 1 < 2\n\n\n", 1)
    after = {m.site: (m.original, m.mutated) for m in mutants_of_source(edited, "m.py")}
    assert {k: v for k, v in after.items() if "::added:" not in k} == before
    assert len(before) > 5 and len({m.id for m in mutants_of_source(edited, "m.py")}
                                   & {m.id for m in mutants_of_source(SOURCE, "m.py")}) == 0


def test_usage_errors_exit_2(tmp_path, capsys):
    assert cli.main(["--files", "bark_vm/no_such_file.py", "--out", str(tmp_path)]) == 2
    assert cli.main(["--files", "bark_vm/request_handling.py", "--only", "nothing:", "--out",
                     str(tmp_path)]) == 2
    assert cli.main(["--jobs", "0"]) == 2
    assert cli.main(["--operator", "no_such_operator", "--list"]) == 2
    assert cli.main(["--jobs", "33", "--list"]) == 2  # issue 34: documented bounds
    assert cli.main(["--timeout", "1e9", "--list"]) == 2
    assert cli.main(["--job-timeout", "nan", "--list"]) == 2
    assert capsys.readouterr().err.count("[EUSAGE]") == 7
    assert not (tmp_path / "report.json").exists()


@pytest.mark.parametrize("report_text, why", [
    ('{"mutants": 3}', "report.json is no mutation report (no list of mutants)"),
    ("[]", "report.json is no mutation report (no list of mutants)"),
    ('{"mutants": [], "seconds": "x", "interrupted": false}', "has no seconds or interrupted"),
    ('{"mutants": [{"id": 1}], "seconds": 1, "interrupted": false}',
     "report.json: mutant 0 has no valid id"),
    ('{"mutants": [7], "seconds": 1, "interrupted": false}', "report.json: mutant 0 is not a record"),
    ('{"mutants": [{"id": "a", "site": "f::s:x#1", "file": "f", "line": 1, "col": 1, '
     '"operator": "x", "scope": "s", "original": "o", "mutated": "m", "status": "killed", "case": null, "case_status": null, '
     '"reason": null, "judged": null, "seconds": 1}], "seconds": 1, "interrupted": false}',
     "report.json: mutant 0 is killed by no case and for no reason"),
    ('{"mutants": [{"id": "a", "site": "f::s:x#1", "file": "f", "line": 1, "col": 1, '
     '"operator": "x", "scope": "s", "original": "o", "mutated": "m", "status": "killed", '
     '"case": null, "case_status": null, "judged": null, "seconds": 1}], "seconds": 1, '
     '"interrupted": false}', "report.json: mutant 0 has no valid reason"),  # a field missing
    ("not json", "report.json is not JSON: "),
    (b"\xff\xfe", "report.json is not UTF-8 text"),
])
def test_a_bad_report_or_a_fifo_is_one_coded_line(tmp_path, capsys, report_text, why):
    """Issue 34, K10: --rejudge of a report.json that is not the tool's, and an --equivalent
    that is a FIFO (refused at once, never waited on): exit 2, one coded line each."""
    import os
    data = report_text if isinstance(report_text, bytes) else report_text.encode()
    (tmp_path / "report.json").write_bytes(data)
    assert cli.main(["--rejudge", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and why in err and err.endswith("[EUSAGE]\n"), err
    fifo = tmp_path / "equivalent.toml"
    os.mkfifo(fifo)
    assert cli.main(["--equivalent", str(fifo), "--list"]) == 2
    assert capsys.readouterr().err == (f"maned-mutation: {fifo}: it is a FIFO (named pipe), not "
                                       "a regular file [EUSAGE]\n")


def test_rejudge_applies_the_judgements_to_a_written_report(tmp_path, capsys):
    survivor = pick("bark_vm/request_handling.py", "gt_gte", "if len(self._known) > self.size:")
    other = pick("bark_vm/request_handling.py", "noteq_eq", "if params != len(request.entries):")
    base = {"line": 1, "col": 1, "operator": "x", "original": "a", "mutated": "b",
            "case": None, "case_status": None, "judged": None, "seconds": 1.0}
    records = [dict(base, id=survivor.id, site=survivor.site, file=survivor.path,
                    scope=survivor.scope, status="survived", reason="245 cases passed"),
               dict(base, id=other.id, site=other.site, file=other.path, scope=other.scope,
                    status="killed", reason="refused", case="protocol/golden_sync",
                    case_status="fail")]
    from maned_conformance.mutation import report
    report.write(tmp_path, report.build(records, [], 10.0))
    toml = tmp_path / "equivalent.toml"
    toml.write_text(f'[[equivalent]]\nwhy = "a smaller cache re-validates"\n'
                    f'sites = ["{survivor.site}"]\n'
                    f'[[equivalent]]\nwhy = "wrongly judged"\nsites = ["{other.site}"]\n'
                    '[[equivalent]]\nwhy = "old"\n'
                    'sites = ["bark_vm/request_handling.py::<module>:x#1"]\n')
    assert cli.main(["--rejudge", str(tmp_path), "--equivalent", str(toml)]) == 0
    doc = json.loads((tmp_path / "report.json").read_text())
    status = {r["id"]: (r["status"], r["reason"]) for r in doc["mutants"]}
    assert status[survivor.id] == ("equivalent", "a smaller cache re-validates")
    assert status[other.id] == ("killed", "refused")
    assert doc["contradicted_judgements"] == [other.id]
    assert doc["stale_judgements"] == ["bark_vm/request_handling.py::<module>:x#1"]
    assert doc["counts"]["score"] == 1.0 and "1 judged equivalent" in capsys.readouterr().out
    toml.write_text("")
    assert cli.main(["--rejudge", str(tmp_path), "--equivalent", str(toml)]) == 1
    doc = json.loads((tmp_path / "report.json").read_text())
    assert {r["status"] for r in doc["mutants"]} == {"survived", "killed"}


# Real mutants of the worker, chosen by file, operator and the original line's text (not
# by line number): three the suite kills, one it cannot (a cache one entry smaller).
KILLED = [
    ("bark_vm/executor/elementwise.py", "floordiv_mult", "return (a - np.fmod(a, b)) // b"),
    ("bark_vm/executor/activation.py", "drop_not", "if not 0 <= q <= MAX_QUANTRES:"),
    ("bark_vm/request_handling.py", "noteq_eq", "if params != len(request.entries):"),
]
EQUIVALENT = ("bark_vm/request_handling.py", "gt_gte", "if len(self._known) > self.size:")


def pick(path, operator, text):
    root = package_dir().parent
    hits = [m for m in enumerate_mutants([root / path], root)
            if m.operator == operator and m.original == text]
    assert len(hits) == 1, (path, operator, text, hits)
    return hits[0]


@pytest.mark.slow
def test_real_mutants_through_the_real_loop(tmp_path, capsys):
    killed = [pick(*k) for k in KILLED]
    survivor = pick(*EQUIVALENT)
    toml = tmp_path / "equivalent.toml"
    toml.write_text(f'[[equivalent]]\nwhy = "a smaller cache re-validates, same answers"\n'
                    f'sites = ["{survivor.site}"]\n')
    out = tmp_path / "report"
    argv = ["--out", str(out), "--jobs", "2", "--equivalent", str(toml), "--files",
            *sorted({k[0] for k in KILLED})]
    for m in [*killed, survivor]:
        argv += ["--only", m.id]
    assert cli.main(argv) == 0  # every survivor judged
    doc = json.loads((out / "report.json").read_text())
    status = {r["id"]: r for r in doc["mutants"]}
    assert set(status) == {m.id for m in [*killed, survivor]}
    for m in killed:
        r = status[m.id]
        assert r["status"] == "killed", r
        assert r["case"] and r["case_status"] in ("fail", "error", "timeout") and r["reason"]
        assert (r["original"], r["mutated"]) == (m.original, m.mutated)
    r = status[survivor.id]
    assert r["status"] == "equivalent" and r["case"] is None
    assert r["reason"] == "a smaller cache re-validates, same answers"
    assert doc["counts"] == {"generated": 4, "killed": 3, "survived": 1, "equivalent": 1,
                             "unjudged": 0, "error": 0, "score": 1.0}
    summary = (out / "summary.md").read_text()
    assert "| **all** | 4 | 3 | 1 | 1 | 0 | 0 | 100.0% |" in summary
    assert "Unjudged survivors" not in summary
    err = capsys.readouterr().err
    assert err.count("maned-mutation: [") == 4 and f"equivalent {survivor.id}" in err


def test_every_shipped_judgement_names_a_mutant_of_the_code_as_it_is():
    """A change to a mutated file moves its mutants; the judgements must follow, or a
    survivor they judged is counted unjudged and a stale one hides nothing (issue 26)."""
    root = package_dir().parent  # the checkout, or site-packages for an installed wheel
    mutants = enumerate_mutants(resolve_files(DEFAULT_FILES, root), root)
    judged = judgements.load(judgements.default_path())
    paths = {m.path for m in mutants}
    assert {k.split("::", 1)[0] for k in [*judged.sites, *judged.functions]} <= paths
    assert judged.stale(mutants, paths) == []
