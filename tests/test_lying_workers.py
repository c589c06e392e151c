"""Workers that lie, stall or trickle never hang `maned-run` (DESIGN §10): each case ends in
one coded line naming the flow and the device, exit 1. Runs are child processes, so a hang
shows as the guard's timeout, not as a stuck suite."""
import pytest

import maned
from maned.devices.cdp import CdpDevice
from stub_worker import DEEP_JSON, STATUS, Drip, Stub
from support.processes import maned_run_child
from support.scripts import H0, Verbatim, device

HEAD = H0 + "in::a = [[1,2],[3,4]];\n"
FLOW = "calc::lambda_flow f(a) @device(liar) {\n    a a add r =\n} return r;\n"


def script(port: int, **fields) -> str:
    return HEAD + device("liar", host="127.0.0.1", port=port, token="t" * 32, **fields) + FLOW


def run(tmp_path, text: str) -> tuple[int, str, str]:
    path = tmp_path / "liar.mnd"
    path.write_text(text)
    return maned_run_child(path, timeout=120)


@pytest.fixture
def stub():
    s = Stub()
    yield s
    s.close()


@pytest.mark.parametrize("status, why", [
    ({**STATUS, "ir": 3}, "status field 'ir' is 3; the ABIs are 1 and 2"),
    (DEEP_JSON, "a JSON body of 600001 bytes is over 65536"),
    (b'{"proto":1,"x":' + b"[" * 20 + b"]" * 20 + b"}", "nesting deeper than 16"),
])
def test_a_lying_status_is_one_coded_line(stub, tmp_path, status, why):
    stub.on("/api/status", (200, status))
    code, out, err = run(tmp_path, script(stub.port))
    assert (code, out) == (1, "")
    assert err == (f"error: flow 'f': device 'liar' (127.0.0.1:{stub.port}): malformed_response:"
                   f" bad status: {why} [ERUN]\n")


def test_a_deeply_nested_error_answer_is_one_coded_line(stub, tmp_path):
    stub.on("/api/status", (200, STATUS))
    stub.on("/api/execute", (500, DEEP_JSON))
    code, out, err = run(tmp_path, script(stub.port))
    assert (code, out) == (1, "")
    assert err == (f"error: flow 'f': device 'liar' (127.0.0.1:{stub.port}): malformed_response:"
                   " HTTP 500 with no parsable CDP error body [ERUN]\n")


def test_a_trickling_worker_ends_at_the_device_deadline(tmp_path):
    drip = Drip(gap=0.2)
    try:
        code, out, err = run(tmp_path, script(drip.port, timeout=2))
        assert drip.sent < drip.total  # cut off mid-answer
    finally:
        drip.close()
    assert (code, out) == (1, "")
    assert err == (f"error: flow 'f': device 'liar' (127.0.0.1:{drip.port}): timeout: no complete"
                   " answer within the 2 s deadline [ERUN]\n")


@pytest.mark.parametrize("value, shown", [("0", "0"), ("-2", "-2"), ('"soon"', "'soon'"),
                                          ("2147484", "2147484")])
def test_a_bad_timeout_field_is_refused_before_anything_runs(maned_run, value, shown):
    code, out, err = maned_run(source=HEAD + device("liar", host="local",
                                                    timeout=Verbatim(value)) + FLOW)
    assert (code, out) == (1, "")
    assert err == (f"error: device 'liar': bad timeout {shown} (a whole number of seconds, 1 to "
                   "86400) [EPLAN]\n")


def test_an_exception_in_a_device_thread_answers_its_job(stub, maned_run, monkeypatch):
    """Whatever goes wrong inside a device's thread, its job is answered with a coded line
    (here a fault injected into the client), and the run ends."""
    stub.on("/api/status", (200, STATUS))

    def broken(self, request):
        raise ZeroDivisionError("injected")
    monkeypatch.setattr(CdpDevice, "run", broken)
    code, out, err = maned_run(source=script(stub.port))
    assert (code, out) == (1, "")
    assert err == ("error: flow 'f': device 'liar': internal error ZeroDivisionError: injected "
                   "[ERUN]\n")


def test_an_exception_after_sending_still_records_what_travelled(stub, monkeypatch, tmp_path):
    """The job's end record of such a fault keeps the bytes that were sent, and says none
    came back, as for any failure after sending."""
    stub.on("/api/status", (200, STATUS))
    sent = []

    def broken(self, request):
        sent.append(len(request))
        raise ZeroDivisionError("injected")
    monkeypatch.setattr(CdpDevice, "run", broken)
    records = []
    report = maned.run(source=script(stub.port), base_dir=tmp_path, trace=records.append)
    assert [d.code for d in report.diagnostics] == ["ERUN"]
    end, = (r for r in records if r["event"] == "end")
    assert (end["sent"], end["received"], end["error"]) == (sent[0], None, "ERUN")
    assert sent[0] > 0


def test_the_report_names_each_cause(stub, tmp_path):
    """The same failures as fields: what the device said or did, for a machine to act on."""
    stub.on("/api/status", (200, {**STATUS, "ir": 3}))
    report = maned.run(source=script(stub.port), base_dir=tmp_path)
    assert [(d.code, d.cause) for d in report.diagnostics] == [("ERUN", "malformed_response")]
    drip = Drip(gap=0.2)
    try:
        report = maned.run(source=script(drip.port, timeout=2), base_dir=tmp_path)
    finally:
        drip.close()
    assert [(d.code, d.cause) for d in report.diagnostics] == [("ERUN", "timeout")]
    good = Stub()
    try:
        good.on("/api/status", (200, {**STATUS, "ops": ["sub"]}))
        report = maned.run(source=script(good.port), base_dir=tmp_path)
    finally:
        good.close()
    assert [(d.code, d.cause) for d in report.diagnostics] == [("EPLAN", "UNSUPPORTED_OP")]


FORGED = "boom\x1b[2J\nerror: flow 'g': forged [ERUN]\r\x00\u202e"


def test_a_workers_words_cannot_forge_or_hide_a_line(stub, tmp_path):
    """A detail or a status field with a newline, a terminal escape, a NUL or a bidi
    override (JSON escapes decode to them) prints as one line, the characters escaped."""
    stub.on("/api/status", (200, {**STATUS, "alias": "x\x1b]0;owned\x07"}))
    stub.on("/api/execute", (500, {"error": "EXEC_FAILED", "detail": FORGED}))
    code, out, err = run(tmp_path, script(stub.port).replace("in::a", "status::liar;\nin::a"))
    assert code == 1
    assert "  alias: x\\x1b]0;owned\\x07\n" in out
    assert err == (f"error: flow 'f': device 'liar' (127.0.0.1:{stub.port}): the job failed "
                   "while executing on the worker (EXEC_FAILED) [worker: boom\\x1b[2J\\nerror: "
                   "flow 'g': forged [ERUN]\\r\\x00\\u202e] [ERUN]\n")


@pytest.mark.parametrize("body, why", [
    (b"MNRX" + bytes(8), "malformed_response: an MNRS that does not decode: MNRS magic is "
                         "wrong"),
    (bytes.fromhex("4d4e52530100030000000000"), "malformed_response: the worker reported "
                                                  "status 3 (nonzero = execution error)"),
])
def test_a_bad_result_names_flow_and_device_once(stub, tmp_path, body, why):
    stub.on("/api/status", (200, STATUS))
    stub.on("/api/execute", (200, body))
    code, out, err = run(tmp_path, script(stub.port))
    assert (code, out) == (1, "")
    assert err == f"error: flow 'f': device 'liar' (127.0.0.1:{stub.port}): {why} [ERUN]\n"
