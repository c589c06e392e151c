"""maned-certify (issue: conformance): a real bark-worker passes and gets the four report
artefacts; every mutant of tests/mutants fails, and its report names the case that caught
it; without a worker the command says how to give one."""
import hashlib
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from bark_vm.container import worker_process
from maned_conformance import certify
from maned_conformance.cases import all_cases
from maned_conformance.protocol import CHECKS
from maned_conformance.report import case_set_digest
from support.status import status_of

MUTANTS = Path(__file__).resolve().parent / "mutants"
sys.path.insert(0, str(MUTANTS))
from mutants import AIMED_AT, MUTANTS as BROKEN  # noqa: E402

pytestmark = pytest.mark.slow

USER, PASSWORD = "certify", "pw-certify-5b1e-never-printed"
FULL_SET = [c for c in all_cases() if "hardware" in c.targets]
DENOMINATOR = len(CHECKS) + len(FULL_SET)  # every report lists every check and case


@pytest.fixture
def creds(monkeypatch):
    monkeypatch.setenv("BARK_USER", USER)
    monkeypatch.setenv("BARK_PASS", PASSWORD)


def test_a_real_worker_passes_and_gets_the_four_artefacts(creds, tmp_path, capsys):
    with worker_process("bob", USER, PASSWORD) as w:
        url = f"http://{w.host}:{w.port}"
        assert certify.main([url, "--out", str(tmp_path / "a")]) == 0
        assert certify.main([url, "--out", str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "0 fail, 0 not supported, 0 timeout, 0 error" in out and PASSWORD not in out
    assert "hardware" not in out
    report = json.loads((tmp_path / "a" / "report.json").read_text())
    n = len(report["cases"])
    assert report["counts"] == {"pass": n, "fail": 0, "not_supported": 0, "timeout": 0,
                                "error": 0} and n > 150
    assert report["worker"]["alias"] == "bob" and report["worker"]["ir"] == 2
    ids = [c["id"] for c in report["cases"]]
    protocol = [i for i in ids if i.startswith("protocol/")]
    checks = len(CHECKS)
    assert protocol == ids[:checks] and "protocol/v1_module" in protocol  # checks first
    assert ids[checks:] == sorted(ids[checks:])  # then every case, in id order
    assert {"ops/conv2d/s0_p0.toml", "ops/avgpool2d/k5_refused.toml"} <= set(ids)
    assert "ops/concat/rank0_refused.toml" not in ids  # refused by planning: asks no worker
    signature = (tmp_path / "a" / "signature.txt").read_text()
    doc = [[c["id"], c["outputs"]] for c in report["cases"] if not c["id"].startswith("protocol")]
    assert signature.strip() == hashlib.sha256(json.dumps(
        [["case-set", report["case_set"]]] + sorted(doc), sort_keys=True,
        separators=(",", ":")).encode()).hexdigest()
    assert report["case_set"] == case_set_digest(FULL_SET) and report["certified"] is True
    assert f"signature: {signature.strip()}" in out
    assert signature == (tmp_path / "b" / "signature.txt").read_text()  # same integers
    assert signature.strip() == report["signature"] and len(report["signature"]) == 64
    suite = ET.parse(tmp_path / "a" / "junit.xml").getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == (str(n), "0", "0")
    summary = (tmp_path / "a" / "summary.md").read_text()
    assert "## Per op" in summary and "## Per algorithm" in summary
    assert "| `matmul` |" in summary and "| `linear_regression` |" in summary
    assert f"Protocol: {len(CHECKS)} of {len(CHECKS)} checks passed" in summary


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_every_mutant_fails_certification_naming_a_case(name, creds, tmp_path, capsys):
    command = [sys.executable, str(MUTANTS / "worker.py"), name]
    with worker_process("mutant", USER, PASSWORD, command=command) as w:
        code = certify.main([f"http://{w.host}:{w.port}", "--out", str(tmp_path),
                             "--first-failure", "--job-timeout", "3"])
    assert code == 1
    report = json.loads((tmp_path / "report.json").read_text())
    caught = [c for c in report["cases"] if c["status"] != "pass"]
    assert caught and caught[0]["detail"]
    assert f"`{caught[0]['id']}`" in (tmp_path / "summary.md").read_text()
    suite = ET.parse(tmp_path / "junit.xml").getroot()  # still valid XML with a failure
    assert int(suite.get("failures")) + int(suite.get("errors")) >= 1
    assert PASSWORD not in "".join(p.read_text() for p in tmp_path.iterdir())
    first = next(c for c in caught if c["id"] == report["failures"][0])
    assert not first["detail"].startswith("not run")  # the cause, not what was never asked
    assert f"{first['status']}: {first['id']}: " in capsys.readouterr().out


def test_every_mutant_has_cases_aimed_at_its_defect():
    assert set(AIMED_AT) == set(BROKEN)


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_the_cases_aimed_at_a_mutant_catch_it(name, creds, tmp_path):
    """Certifying only the cases of the broken op (or the protocol checks, for a protocol
    defect) fails, and one of those names the defect: the catch is not an accident of
    which case happens to come first."""
    aim = AIMED_AT[name]
    command = [sys.executable, str(MUTANTS / "worker.py"), name]
    with worker_process("mutant", USER, PASSWORD, command=command) as w:
        code = certify.main([f"http://{w.host}:{w.port}", "--out", str(tmp_path),
                             "--job-timeout", "3", "--cases",
                             "ops/relu/" if aim.startswith("protocol/") else aim])
    assert code == 1
    cases = json.loads((tmp_path / "report.json").read_text())["cases"]
    assert any(c["id"].startswith(aim) and c["status"] != "pass" for c in cases)


@pytest.mark.parametrize("name", ["crash_on_softmax", "stall_on_tanh"])
def test_a_worker_that_dies_or_sticks_is_reported_not_waited_on(name, creds, tmp_path):
    """The whole suite, no --first-failure: the case that kills (or jams) the worker is
    reported, and every case after it is an error naming it, asked no more."""
    command = [sys.executable, str(MUTANTS / "worker.py"), name]
    with worker_process("mutant", USER, PASSWORD, command=command) as w:
        code = certify.main([f"http://{w.host}:{w.port}", "--out", str(tmp_path),
                             "--job-timeout", "2"])
    assert code == 1
    cases = json.loads((tmp_path / "report.json").read_text())["cases"]
    asked = [c for c in cases if c["status"] != "pass" and c["asked"]]
    assert len(asked) == 1  # the case that killed or jammed it; nothing after it was asked
    assert asked[0]["status"] == ("error" if name.startswith("crash") else "timeout")
    unasked = [c for c in cases if not c["asked"]]
    assert unasked and all(c["status"] == "error" and c["detail"] ==
                           f"the worker stopped answering jobs after case {asked[0]['id']}"
                           for c in unasked)
    assert len(cases) == DENOMINATOR


def test_without_a_worker_it_says_how_to_give_one(monkeypatch, capsys):
    monkeypatch.delenv("BARK_URL", raising=False)
    assert certify.main([]) == 2
    err = capsys.readouterr().err
    assert "set BARK_URL" in err and err.endswith("[EUSAGE]\n")


def _not_run(folder: Path, words: str) -> None:
    """An operator error's report: every check and case an error naming why, no signature."""
    report = json.loads((folder / "report.json").read_text())
    assert len(report["cases"]) == DENOMINATOR and report["counts"]["error"] == DENOMINATOR
    assert all(c["detail"].startswith("not run: ") and words in c["detail"]
               for c in report["cases"])
    assert report["signature"] is None and not (folder / "signature.txt").exists()
    assert "**Not run**" in (folder / "summary.md").read_text()
    ET.parse(folder / "junit.xml")


def test_a_worker_that_does_not_answer_is_an_operator_error_naming_the_url(creds, capsys,
                                                                           tmp_path):
    """Issue 22, point 2: exit 2 naming the URL, no verdict, the same denominator."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    url = f"http://127.0.0.1:{port}"
    assert certify.main([url, "--out", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.err == (f"maned-certify: no worker answers at {url}: connect_failed: "
                            "Connection refused; check the URL and that the worker is "
                            "running [EUSAGE]\n")
    assert "Signature" not in captured.out and "signature" not in captured.out
    _not_run(tmp_path, f"no worker answers at {url}")


def test_a_wrong_password_stops_the_run_and_never_locks_the_user(monkeypatch, capsys,
                                                                 tmp_path):
    """Issue 22, points 1 and 2: one login attempt, exit 2 saying what to check, nothing
    judged; the right password works at once afterwards (the user is not locked)."""
    wrong = "wrong-5b1e-never-printed"
    monkeypatch.setenv("BARK_USER", USER)
    monkeypatch.setenv("BARK_PASS", wrong)
    with worker_process("bob", USER, PASSWORD) as w:
        url = f"http://{w.host}:{w.port}"
        assert certify.main([url, "--out", str(tmp_path / "wrong")]) == 2
        err = capsys.readouterr().err
        assert err == (f"maned-certify: the worker at {url} refused the login of user "
                       f"'{USER}' (AUTH_FAILED): check BARK_USER and BARK_PASS. [EUSAGE]\n")
        _not_run(tmp_path / "wrong", "check BARK_USER and BARK_PASS")
        assert not any(wrong in p.read_text() for p in (tmp_path / "wrong").iterdir())
        monkeypatch.setenv("BARK_PASS", PASSWORD)
        assert certify.main([url, "--out", str(tmp_path / "right"), "--cases",
                             "ops/add/"]) == certify.EXIT_PARTIAL
        status = status_of(w, 10)
    assert status["requests"] > 0


def test_a_filtered_run_is_partial_everywhere_and_has_no_signature(creds, capsys, tmp_path):
    """Issue 22, point 4: stdout, report.json, summary.md and junit.xml say partial; a
    signature left by an earlier full run is removed, not left to be mistaken."""
    (tmp_path / "signature.txt").write_text("0" * 64 + "\n")
    with worker_process("bob", USER, PASSWORD) as w:
        assert certify.main([f"http://{w.host}:{w.port}", "--out", str(tmp_path),
                             "--cases", "ops/matmul/"]) == certify.EXIT_PARTIAL  # never 0
    out = capsys.readouterr().out
    matmul = [c for c in FULL_SET if c.id.startswith("ops/matmul/")]
    assert (f"PARTIAL (--cases ops/matmul/: {len(matmul)} of {len(FULL_SET)} cases, not a "
            "certification)") in out
    assert "no signature: a partial run (--cases ops/matmul/) certifies nothing" in out
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["partial"] == {"cases": "ops/matmul/", "run": len(matmul),
                                 "of": len(FULL_SET)}
    assert report["signature"] is None and report["certified"] is False
    assert len(report["cases"]) == len(CHECKS) + len(matmul)
    assert not (tmp_path / "signature.txt").exists()
    assert "**Partial run**" in (tmp_path / "summary.md").read_text()
    name = ET.parse(tmp_path / "junit.xml").getroot().get("name")
    assert name == "certify bob (partial: --cases ops/matmul/)"


def test_the_headline_names_the_cause_not_a_symptom(creds, capsys, tmp_path):
    """Issue 22, point 3: a worker whose division floors fails flows and ML cases too; the
    line printed, and the summary's first entry, name the smallest div case."""
    command = [sys.executable, str(MUTANTS / "worker.py"), "floor_div"]
    with worker_process("floor", USER, PASSWORD, command=command) as w:
        assert certify.main([f"http://{w.host}:{w.port}", "--out", str(tmp_path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    report = json.loads((tmp_path / "report.json").read_text())
    failed = report["failures"]
    assert any(f.startswith(("flows/", "ml/")) for f in failed)  # symptoms exist ...
    assert failed[0].startswith("ops/div/")  # ... but the cause comes first
    assert lines[1].startswith(f"  fail: {failed[0]}: ") and "worker" in lines[1]
    summary = (tmp_path / "summary.md").read_text()
    assert f"Look first at `{failed[0]}`" in summary and "### elementwise ops" in summary
    assert summary.index("### elementwise ops") < summary.index("### flows")


def test_the_first_cause_is_the_first_failure_in_time(creds, capsys, tmp_path):
    """Issue 33, point 5: a worker that holds every job (slow, not wrong) times out the first
    protocol check that waits on a job; a case of the first layer asked after it times out
    too, a symptom. The headline and the summary name the protocol check, which the run met
    first, though a single op's case ranks before a protocol check by layer."""
    from gates import Gate
    gate = Gate(tmp_path / "hold").close()
    command = [sys.executable, str(Path(__file__).parent / "fakes" / "gated_worker.py"),
               str(gate.path)]
    try:
        with worker_process("slow", USER, PASSWORD, command=command) as w:
            assert certify.main([f"http://{w.host}:{w.port}", "--out", str(tmp_path / "r"),
                                 "--cases", "ops/add/1x1", "--case-timeout", "0.5",
                                 "--job-timeout", "1"]) == 1
    finally:
        gate.open()
    lines = capsys.readouterr().out.splitlines()
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    status = {c["id"]: c["status"] for c in report["cases"]}
    first = report["failures"][0]
    assert first.startswith("protocol/") and status[first] == "timeout", report["failures"]
    assert status["ops/add/1x1.toml"] == "timeout"  # asked after: its symptom
    assert report["failures"].index("ops/add/1x1.toml") > 0
    assert "fail" not in status.values()  # slow is never wrong
    assert lines[1].startswith(f"  timeout: {first}: ")
    assert f"Look first at `{first}` (timeout)" in (tmp_path / "r" / "summary.md").read_text()


def test_an_abi1_worker_is_not_supported_where_it_cannot_be_and_passes_elsewhere(creds,
                                                                                  tmp_path):
    """ABI 1 cannot encode reshape/split/batchnorm and has 256 registers: those cases are
    `not supported` (a failure unless --allow-unsupported), never `fail`."""
    with worker_process("old", USER, PASSWORD, ("--abi", "1")) as w:
        url = f"http://{w.host}:{w.port}"
        assert certify.main([url, "--out", str(tmp_path / "strict")]) == 1
        assert certify.main([url, "--out", str(tmp_path / "lenient"),
                             "--allow-unsupported"]) == 0
    counts = json.loads((tmp_path / "lenient" / "report.json").read_text())["counts"]
    assert counts["fail"] == counts["error"] == counts["timeout"] == 0
    assert counts["not_supported"] > 0 and counts["pass"] > 150


@pytest.mark.parametrize("argv, words", [
    (["http://127.0.0.1:1", "--job-timeout", "0"], "--job-timeout must be above 0"),
    (["http://127.0.0.1:1", "--case-timeout", "inf"], "--case-timeout must be above 0"),
    (["http://127.0.0.1:1", "--job-timeout", "nan"], "--job-timeout must be above 0"),
    (["ftp://x"], "is not http://HOST[:PORT]"),
    (["http://127.0.0.1:1", "--cases", "nope/"], "no case id starts with"),
])
def test_bad_arguments_are_one_coded_line(argv, words, capsys, creds):
    assert certify.main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and err.endswith("[EUSAGE]\n") and "Traceback" not in err


def test_without_credentials_nothing_is_asked(monkeypatch, capsys):
    monkeypatch.delenv("BARK_PASS", raising=False)
    monkeypatch.setenv("BARK_USER", USER)
    assert certify.main(["http://127.0.0.1:1"]) == 2
    assert "set BARK_USER and BARK_PASS" in capsys.readouterr().err


def test_a_report_folder_that_cannot_be_written_is_a_usage_error(tmp_path, capsys, creds):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert certify.main(["http://127.0.0.1:1", "--out", str(blocker / "x")]) == 2
    err = capsys.readouterr().err
    assert "cannot write the report folder" in err and err.endswith("[EUSAGE]\n")


# --- issue 24, points 4 and 5: no secret in a URL echoed, no worker string printed raw ---------
SECRET = "s3cr3t-url-9f2c-never-echoed"


def _everything(folder: Path, captured) -> str:
    """stdout, stderr and every file of the report folder, as one text."""
    files = [p.read_text(encoding="utf-8", errors="replace") for p in folder.rglob("*")
             if p.is_file()] if folder.exists() else []
    return captured.out + captured.err + "".join(files)


@pytest.mark.parametrize("url", [
    f"http://certify:{SECRET}@127.0.0.1:1",
    f"certify:{SECRET}@127.0.0.1:1",  # no scheme
    f"http://certify:{SECRET}@",  # no host after it
    f"http://certify:{SECRET}@127.0.0.1:99999",  # and a bad port
    f"http://{SECRET}@127.0.0.1:1/",  # a token alone
])
def test_a_url_with_credentials_is_refused_and_never_echoed(url, creds, capsys, tmp_path):
    """Issue 24, point 4: refused before anything is asked, one coded line saying where the
    credentials go; the userinfo is shown nowhere (stdout, stderr, the report folder)."""
    assert certify.main([url, "--out", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    assert SECRET not in _everything(tmp_path, captured)
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.endswith("[EUSAGE]\n") and "BARK_USER and BARK_PASS" in captured.err


def test_a_url_with_credentials_in_bark_url_is_refused_too(creds, monkeypatch, capsys,
                                                           tmp_path):
    monkeypatch.setenv("BARK_URL", f"http://certify:{SECRET}@127.0.0.1:1")
    assert certify.main(["--out", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    assert SECRET not in _everything(tmp_path, captured)
    assert captured.err.endswith("[EUSAGE]\n") and "credentials" in captured.err


@pytest.mark.parametrize("url, words", [
    (f"http://certify:{SECRET}", "port"),  # the '@host' forgotten: the password is the port
    (f"http://127.0.0.1:{SECRET}", "port"),
    ("http://127.0.0.1:0", "port"),  # not silently port 4780
    ("http://127.0.0.1:65536", "port"),
    (f"http://127.0.0.1:4780/?token={SECRET}", "path"),  # a path or query is not used
    (f"https://127.0.0.1:4780/{SECRET}", "http://HOST[:PORT]"),
    (f"http://[{SECRET}", "http://HOST[:PORT]"),
])
def test_a_malformed_url_is_one_coded_line_quoting_no_part_of_it(url, words, creds, capsys,
                                                                  tmp_path):
    """Issue 24, point 4: a bad port or a stray part may be a password typed in the wrong
    place, so no refusal quotes it."""
    assert certify.main([url, "--out", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    assert SECRET not in _everything(tmp_path, captured)
    assert captured.err.count("\n") == 1 and captured.err.endswith("[EUSAGE]\n")
    assert words in captured.err and "Traceback" not in captured.err


HOSTILE = "\x1b[2J\x1b[31mbob\nmaned-certify: forged line [OK]\r\x00\x07\u202e"


def _stub(status: dict, login=(200, {"token": "a" * 32})):
    """A real HTTP server on loopback answering the status (and the login) as given."""
    from stub_worker import Stub
    stub = Stub()
    stub.on("GET /api/status", *[(200, status)] * 50)
    stub.on("POST /api/auth", login)
    return stub


def _printable_everywhere(folder: Path, captured) -> None:
    """No control or format character a worker sent reaches a terminal or a file: stdout,
    stderr, summary.md and every string of report.json are printable lines, junit.xml is
    well-formed XML."""
    for text in (captured.out, captured.err):
        assert all(line.isprintable() for line in text.splitlines()), text
    summary = (folder / "summary.md").read_text(encoding="utf-8")
    assert all(line.isprintable() for line in summary.splitlines())
    assert "forged line [OK]" not in [line.split(": ", 1)[-1] for line in summary.splitlines()]

    def strings(v):
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            for k, x in v.items():
                yield k
                yield from strings(x)
        elif isinstance(v, list):
            for x in v:
                yield from strings(x)
    doc = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert all(s.isprintable() for s in strings(doc))
    ET.parse(folder / "junit.xml")


@pytest.mark.parametrize("alias", [HOSTILE, "bob\x01", "b" * 65, "bób", "", "bob-", "1bob"])
def test_a_status_with_an_illegal_alias_is_refused_as_an_operator_error(alias, creds, capsys,
                                                                        tmp_path):
    """Issue 24, point 5: a status whose alias is no legal alias (bark_vm/wire/alias.py)
    stops the run before the login (exit 2, one coded line showing the alias escaped);
    every check and case is not run, no signature, and nothing the worker sent is printed
    raw anywhere."""
    from stub_worker import STATUS
    stub = _stub(dict(STATUS, alias=alias))
    try:
        code = certify.main([f"http://127.0.0.1:{stub.port}", "--out", str(tmp_path),
                             "--first-failure", "--cases", "ops/add/"])
    finally:
        stub.close()
    captured = capsys.readouterr()
    assert code == 2
    assert "POST /api/auth" not in stub.paths()  # nothing more was asked
    assert captured.err.count("\n") == 1 and captured.err.endswith("[EUSAGE]\n")
    assert "alias" in captured.err and repr(alias)[1:-1][:40] in captured.err.replace(
        "\\'", "'")
    _printable_everywhere(tmp_path, captured)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["signature"] is None and report["counts"]["error"] == len(report["cases"])
    assert all(c["detail"].startswith("not run: ") and not c["asked"]
               for c in report["cases"])


def test_a_login_refusal_code_from_the_worker_is_never_printed_raw(creds, capsys, tmp_path):
    """Issue 24, point 5: the error code a worker answers the login with reaches stderr and
    every report file (the reason nothing ran) escaped."""
    from stub_worker import STATUS
    stub = _stub(STATUS, login=(401, {"error": HOSTILE, "detail": HOSTILE}))
    try:
        code = certify.main([f"http://127.0.0.1:{stub.port}", "--out", str(tmp_path)])
    finally:
        stub.close()
    captured = capsys.readouterr()
    assert code == 2 and captured.err.count("\n") == 1
    _printable_everywhere(tmp_path, captured)


def test_the_kind_ops_and_error_details_of_a_worker_are_escaped_everywhere(creds, capsys,
                                                                          tmp_path):
    """Issue 24, point 5: a legal alias, but a hostile kind, op names and error answers: the
    run goes on (the protocol checks fail) and every one of them is escaped in stdout,
    summary.md, junit.xml and report.json."""
    from stub_worker import STATUS
    stub = _stub(dict(STATUS, kind=HOSTILE, ops=["add", HOSTILE]))
    stub.on("POST /api/job", *[(400, {"error": "BAD_ENVELOPE", "detail": HOSTILE})] * 200)
    try:
        code = certify.main([f"http://127.0.0.1:{stub.port}", "--out", str(tmp_path),
                             "--first-failure", "--cases", "ops/add/", "--job-timeout", "2"])
    finally:
        stub.close()
    captured = capsys.readouterr()
    assert code == 1
    _printable_everywhere(tmp_path, captured)
    worker = json.loads((tmp_path / "report.json").read_text())["worker"]
    assert worker["alias"] == "stub" and "\\x1b" in worker["kind"]
    assert worker["ops"][0] == "add" and "\\n" in worker["ops"][1]
