"""The CDP client (reference/devices/cdp.py) against a real bark-worker (re-login after an
evicted token) and against a stub worker for the protocol's edge cases that a healthy worker
never produces (spec/wire.md §8 item 5): poll backoff, the poll budget, lost results, job
errors, cancelled jobs, TOO_LARGE_FOR_SYNC, malformed answers, one line per CDP code."""
import json
import signal
import sys
import threading

import pytest

from bark_vm.container import worker_process
from bark_vm.wire.constants import ERROR_STATUS
from maned.devices import bounds, cdp
from maned.devices.cdp import CdpDevice
from maned.failures import DeviceFailure
from maned.devices.worker_errors import MEANING
from gates import FAKES, Gate, until
from maned.cli.run import INTERRUPTED
from stub_worker import DEEP_JSON, STATUS, Drip, Stub
from support.processes import MANED_RUN, start
from support.raw_http import call, login
from support.scripts import H0, device, env
from support.signals import default_sigint

@pytest.fixture
def stub():
    s = Stub()
    s.on("/api/status", (200, STATUS))
    s.on("/api/auth", (200, {"token": "a" * 32, "alias": "stub"}))
    yield s
    s.close()


@pytest.fixture
def no_sleep(monkeypatch):
    """Record the poll sleeps instead of sleeping them."""
    slept = []
    monkeypatch.setattr(CdpDevice, "_sleep", lambda self, seconds: slept.append(seconds))
    return slept


def test_order_status_then_lazy_login_then_execute(stub):
    stub.on("/api/execute?mode=sync", (200, b"MNRS-bytes"))
    dev = stub.device()
    dev.start()
    assert dev.run(b"MNPK") == b"MNRS-bytes"
    assert stub.paths() == ["GET /api/status", "POST /api/auth", "POST /api/execute?mode=sync"]
    _, _, headers = stub.log[2]
    assert headers["X-Maned-Proto"] == "1" and headers["X-Maned-Token"] == "a" * 32
    # on the status too (issue 23, point 13: the other client we know sends it everywhere)
    assert [h.get("X-Maned-Proto") for _, _, h in stub.log] == ["1", "1", "1"]


def test_async_polls_with_backoff_and_reads_the_result(stub, no_sleep):
    stub.on("/api/execute", (202, {"job": 7, "state": "queued"}))
    stub.on("/api/job", *[(200, {"job": 7, "state": "running"})] * 8,
            (200, {"job": 7, "state": "done"}))
    stub.on("/api/result", (200, b"MNRS-async"))
    assert stub.device().run(b"x" * cdp.SYNC_LIMIT) == b"MNRS-async"
    assert no_sleep == [0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0]
    assert stub.paths()[-1] == "GET /api/result?id=7"


def test_the_poll_budget_times_out(stub, no_sleep, monkeypatch):
    monkeypatch.setattr(bounds, "POLL_BUDGET_S", 0.5)
    stub.on("/api/execute", (202, {"job": 3, "state": "queued"}))
    stub.on("/api/job", *[(200, {"job": 3, "state": "queued"})] * 10)
    with pytest.raises(DeviceFailure) as e:
        stub.device().run(b"x" * cdp.SYNC_LIMIT)
    assert no_sleep == [0.05, 0.1, 0.2, 0.4]  # 750 ms of intended sleep once 500 is reached
    assert e.value.message.endswith(": timeout: job 3 did not finish within the 0.5 s deadline; "
                                    "re-submit it later")


@pytest.mark.parametrize("where", ["/api/job", "/api/result"])
def test_a_404_is_the_result_lost_message(stub, no_sleep, where):
    stub.on("/api/execute", (202, {"job": 5, "state": "queued"}))
    if where == "/api/result":
        stub.on("/api/job", (200, {"job": 5, "state": "done"}))
    stub.on(where, (404, {"error": "NO_SUCH_JOB"}))
    with pytest.raises(DeviceFailure) as e:
        stub.device().run(b"x" * cdp.SYNC_LIMIT)
    port = stub.server.server_port
    assert e.value.message == (f"device 'stub' (127.0.0.1:{port}): job 5 result lost on worker "
                               f"127.0.0.1:{port} (NO_SUCH_JOB): results are read-once and "
                               "expire after 300 s - re-submit the job")


def test_job_error_state_maps_its_code_and_cancelled_has_its_own_line(stub, no_sleep):
    stub.on("/api/execute", (202, {"job": 1, "state": "queued"}),
            (202, {"job": 2, "state": "queued"}))
    stub.on("/api/job", (200, {"job": 1, "state": "error", "code": "SHAPE_MISMATCH",
                               "detail": "matmul [1, 4] x [2, 2]"}),
            (200, {"job": 2, "state": "cancelled"}))
    dev = stub.device()
    with pytest.raises(DeviceFailure) as e:
        dev.run(b"x" * cdp.SYNC_LIMIT)
    assert e.value.code == "SHAPE_MISMATCH" and e.value.message.endswith(
        "input tensor shapes are inconsistent with the flow (SHAPE_MISMATCH) [worker: matmul "
        "[1, 4] x [2, 2]]")
    with pytest.raises(DeviceFailure) as e:
        dev.run(b"x" * cdp.SYNC_LIMIT)
    assert e.value.message.endswith("job 2 was cancelled on the worker; re-submit it")


def test_too_large_for_sync_is_resubmitted_once_async(stub, no_sleep):
    stub.on("/api/execute?mode=sync", (413, {"error": "TOO_LARGE_FOR_SYNC"}))
    stub.on("/api/execute", (202, {"job": 9, "state": "queued"}))
    stub.on("/api/job", (200, {"job": 9, "state": "done"}))
    stub.on("/api/result", (200, b"MNRS-resubmitted"))
    assert stub.device().run(b"small") == b"MNRS-resubmitted"
    assert [p for p in stub.paths() if "execute" in p] == ["POST /api/execute?mode=sync",
                                                          "POST /api/execute"]


@pytest.mark.parametrize("answer, text", [
    ((200, {"job": 1, "state": "queued"}), "malformed_response: the worker answered an async "
                                           "submit with 200"),
    ((202, {"state": "queued"}), "malformed_response: the submit did not return a job id"),
    ((500, b"<html>oops</html>"), "malformed_response: HTTP 500 with no parsable CDP error body"),
])
def test_malformed_submits(stub, answer, text):
    stub.on("/api/execute", answer)
    with pytest.raises(DeviceFailure) as e:
        stub.device().run(b"x" * cdp.SYNC_LIMIT)
    assert e.value.message.endswith(text)


def test_chunked_responses_are_malformed(stub):
    stub.on("/api/execute?mode=sync", (200, b"4\r\nMNRS\r\n0\r\n\r\n",
                                       {"Transfer-Encoding": "chunked"}))
    with pytest.raises(DeviceFailure) as e:
        stub.device().run(b"MNPK")
    assert e.value.message.endswith("malformed_response: chunked transfer encoding")


def test_auth_failed_is_never_retried(stub):
    stub.script["/api/auth"] = [(401, {"error": "AUTH_FAILED", "detail": "bad username or "
                                       "password"}, {})]
    with pytest.raises(DeviceFailure) as e:
        stub.device().run(b"MNPK")
    assert e.value.code == "AUTH_FAILED"
    assert stub.paths().count("POST /api/auth") == 1


def test_a_rejected_preissued_token_is_not_retried(stub):
    stub.on("/api/execute?mode=sync", (401, {"error": "AUTH_REQUIRED"}))
    with pytest.raises(DeviceFailure) as e:
        stub.device(token="b" * 32).run(b"MNPK")
    assert e.value.code == "AUTH_REQUIRED" and "POST /api/auth" not in stub.paths()


@pytest.mark.parametrize("code", sorted(set(ERROR_STATUS) - {"TOO_LARGE_FOR_SYNC"}))
def test_each_code_gives_its_own_line(stub, code):
    """(TOO_LARGE_FOR_SYNC is not an error line: it is resubmitted, tested above.)"""
    stub.on("/api/execute?mode=sync", (ERROR_STATUS[code], {"error": code, "detail": "d"}))
    dev = stub.device(token="t" * 32)
    with pytest.raises(DeviceFailure) as e:
        dev.run(b"MNPK")
    assert e.value.message.endswith(f"{MEANING[code]} ({code}) [worker: d]")


def test_unreachable_is_connect_failed_and_silent_is_timeout():
    dev = CdpDevice("gone", "127.0.0.1", 1, "u", "p", None)
    with pytest.raises(DeviceFailure) as e:
        dev.start()
    assert "device 'gone' (127.0.0.1:1): connect_failed:" in e.value.message
    import socket
    quiet = socket.socket()
    quiet.bind(("127.0.0.1", 0))
    quiet.listen(1)  # accepts the connection, never answers
    try:
        with pytest.raises(DeviceFailure) as e:
            CdpDevice("mute", "127.0.0.1", quiet.getsockname()[1], "u", "p", None,
                      deadline_s=0.3).start()
        assert "timeout: no complete answer within the 0.3 s deadline" in e.value.message
    finally:
        quiet.close()


def test_one_relogin_after_the_real_worker_evicts_the_token():
    """bark-worker keeps 16 tokens: after 16 other logins the client's token is gone; the
    client logs in again, once, and the job runs."""
    with worker_process("bob", "test", "pw-evict") as w:
        dev = CdpDevice("bob", w.host, w.port, "test", "pw-evict", None)
        dev.start()
        from bark_vm.wire.envelope import decode_result
        request = _golden_request()
        assert decode_result(dev.run(request)).entries[0][1] == (19, 22, 0, 50)
        first = dev.token
        for _ in range(16):
            assert login(w, "test", "pw-evict")[0] == 200
        assert decode_result(dev.run(request)).entries[0][1] == (19, 22, 0, 50)
        assert dev.token != first


def _golden_request() -> bytes:
    from maned.static_check import check
    from maned.lang.ast import Quant
    from maned.tensor import Tensor
    from maned.lowering.envelopes import encode_job
    from maned.lowering.lower import lower
    text = (H0 + "calc::lambda_flow layer(x, w, bias) {\n    x w matmul product =\n"
            "    product bias elemwise_add shifted =\n    shifted relu result =\n} return result;\n")
    graph = check(text).graphs["layer"]
    inputs = [Tensor((2, 2), (1, 2, 3, 4)), Tensor((2, 2), (5, 6, 7, 8)),
              Tensor((2, 2), (0, 0, -100, 0))]
    return encode_job(lower(graph, 1), inputs, Quant(1000, -1000, 0))


# --- workers that lie or stall (DESIGN §10) ---------------------------------------------------


@pytest.mark.parametrize("body, why", [
    ({**STATUS, "ir": 3}, "status field 'ir' is 3; the ABIs are 1 and 2"),
    ({**STATUS, "ir": 1, "rf_slots": 4096}, "status field 'rf_slots' is 4096; ABI v1 has 1 "
                                            "to 256 register slots"),
    ({**STATUS, "uptime_s": -1}, "status field 'uptime_s' is missing or not a non-negative "
                                 "integer"),
    ({**STATUS, "proto": "1"}, "status field 'proto' is missing or not a non-negative integer"),
    ({**STATUS, "ops": "add"}, "status field 'ops' is missing or not a list of strings"),
    (b'{"proto":1,"deep":' + b"[" * 16 + b"]" * 16 + b"}", "nesting deeper than 16"),
    (DEEP_JSON, "a JSON body of 600001 bytes is over 65536"),
    (b'{"proto":1,"alias":"\\ud800"}', "a surrogate escape"),
    (b'{"proto":1,"alias":"a\x01"}', "not JSON: Invalid control character"),
    (json.dumps(STATUS).encode() + b" trailing", "not JSON: Extra data"),
])
def test_a_lying_status_is_malformed_response(body, why):
    s = Stub()
    try:
        s.on("/api/status", (200, body))
        with pytest.raises(DeviceFailure) as e:
            s.device().start()
        assert e.value.message.startswith(f"device 'stub' (127.0.0.1:{s.port}): "
                                          f"malformed_response: bad status: {why}")
    finally:
        s.close()


@pytest.mark.parametrize("body", [DEEP_JSON, b'{"error":' * 20 + b'"X"' + b"}" * 20])
def test_a_deeply_nested_error_body_is_no_error_body(stub, body):
    stub.on("/api/execute?mode=sync", (500, body))
    with pytest.raises(DeviceFailure) as e:
        stub.device().run(b"MNPK")
    assert e.value.message.endswith("malformed_response: HTTP 500 with no parsable CDP error "
                                    "body")


def test_a_deeply_nested_job_state_is_an_unknown_state(stub, no_sleep):
    stub.on("/api/execute", (202, {"job": 4, "state": "queued"}))
    stub.on("/api/job", (200, DEEP_JSON))
    with pytest.raises(DeviceFailure) as e:
        stub.device().run(b"x" * cdp.SYNC_LIMIT)
    assert e.value.message.endswith("malformed_response: job 4 is in unknown state 'None'")


def test_one_deadline_for_a_whole_request_however_the_bytes_trickle():
    """The worker sends a byte every 0.2 s: each read gets one in time, yet the request as a
    whole must end at its deadline, with the answer unfinished and the connection closed."""
    drip = Drip(gap=0.2)
    try:
        dev = CdpDevice("drip", "127.0.0.1", drip.port, "u", "p", None, deadline_s=2.0)
        dev.start()
        with pytest.raises(DeviceFailure) as e:
            dev.run(b"MNPK")
        assert e.value.message == (f"device 'drip' (127.0.0.1:{drip.port}): timeout: no "
                                   "complete answer within the 2 s deadline")
        assert drip.hung_up.wait(30)  # the client closed on it
        assert 0 < drip.sent < drip.total
    finally:
        drip.close()


def test_abort_cancels_the_queued_async_job_and_ends_the_wait(stub):
    """Ctrl-C's part: a job the device is polling is DELETEd, and the waiting thread ends."""
    stub.on("/api/execute", (202, {"job": 11, "state": "queued"}))
    stub.on("/api/job", *[(200, {"job": 11, "state": "queued"})] * 200)
    stub.on("DELETE /api/job", (200, {"job": 11, "state": "cancelled"}))
    dev, box = stub.device(), {}

    def run():
        try:
            dev.run(b"x" * cdp.SYNC_LIMIT)
        except DeviceFailure as e:
            box["failure"] = e.message
    th = threading.Thread(target=run)
    th.start()
    until(lambda: "GET /api/job?id=11" in stub.paths(), "the device polled job 11")
    dev.abort()
    th.join(30)
    assert not th.is_alive()
    assert "DELETE /api/job?id=11" in stub.paths()
    assert box["failure"].endswith("connect_failed: the run was interrupted")


def test_ctrl_c_cancels_the_job_a_worker_still_has_queued(tmp_path):
    """maned-run interrupted while a worker holds one async job and queues another (two
    aliases on one gated worker): the queued job is cancelled, the held one cannot be."""
    gate = Gate(tmp_path / "hold").close()
    command = [sys.executable, str(FAKES / "gated_worker.py"), str(gate.path)]
    with worker_process("bob", "test", "pw-cancel", command=command) as w:
        n = 130  # 67,600-byte inputs: over the 64 KiB sync limit, so both go async
        values = ",".join(str(i % 7) for i in range(n * n))
        devices = "".join(device(a, host=w.host, port=w.port, user="test", password=env("P_BOB"))
                          for a in ("rex", "bob"))
        flows = "".join(f"calc::lambda_flow {f}(m) @device({a}) {{\n    m m add s =\n}} "
                        "return s;\n" for f, a in (("one", "rex"), ("two", "bob")))
        script = tmp_path / "two.mnd"
        script.write_text(H0 + devices + flows)
        proc = start(MANED_RUN, script, "--in", f"m={n}x{n}:{values}", env={"P_BOB": "pw-cancel"},
                     preexec_fn=default_sigint)
        try:
            rows = gate.wait_for(lambda rows: len({r[1] for r in rows if r[0] == "poll"}) == 2,
                                 "both jobs submitted and polled")
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
            assert (proc.returncode, out, err) == (130, "", INTERRUPTED + "\n")
            token = login(w, "test", "pw-cancel")[1]["token"]
            states = sorted(_job_state(w, token, int(job)) for job in
                            {r[1] for r in rows if r[0] == "poll"})
            assert states == ["cancelled", "running"]
        finally:
            gate.open()
    assert sum(1 for r in gate.entries() if r[0] == "job") == 1  # the cancelled never ran


def _job_state(w, token: str, job: int) -> str:
    return call(w, "GET", f"/api/job?id={job}", token=token)[2]["state"]


def test_a_locked_name_says_what_locked_means(stub):
    """Issue 15: the wire says `locked` (R21); the line says why and when it lifts."""
    stub.script["/api/auth"] = [(401, {"error": "AUTH_FAILED", "detail": "locked"}, {})]
    with pytest.raises(DeviceFailure) as e:
        stub.device().run(b"MNPK")
    assert e.value.message == (
        f"device 'stub' (127.0.0.1:{stub.port}): the user name is locked after repeated failed "
        "logins; the lock lifts after the worker's lock-out period (60 s unless set "
        "otherwise), so wait before trying again (AUTH_FAILED) [worker: locked]; this run "
        "sends no other login")


def test_a_refused_login_is_asked_once_per_run(stub):
    """Issue 23, point 1: every later job of the run gets the same refusal, unasked, and
    the line says the run did not lock the name."""
    stub.script["/api/auth"] = [(401, {"error": "AUTH_FAILED", "detail": "bad username or "
                                       "password"}, {})]
    device = stub.device()
    failures = []
    for _ in range(3):
        with pytest.raises(DeviceFailure) as e:
            device.run(b"MNPK")
        failures.append(e.value)
    assert stub.paths().count("POST /api/auth") == 1
    assert {f.code for f in failures} == {"AUTH_FAILED"}
    assert failures[0].message.endswith(
        "[worker: bad username or password]; this run made one failed login and sends no "
        "other (the worker locks a user name after 3 in a row, so it is not locked by this "
        "run)")


def test_a_wrong_password_in_a_run_of_many_jobs_does_not_lock_the_user(monkeypatch):
    """Issue 23, point 1, against a real worker: three routed flows with a wrong password,
    then the right one works at once (before, the run made three failed logins: locked)."""
    import maned
    flows = "".join(f"calc::lambda_flow {f}(a) @device(bob) {{\n    a a add r =\n}} "
                    "return r;\n" for f in "fgh")
    with worker_process("bob", "u", "right-pass") as w:
        script = H0 + device("bob", host=f"127.0.0.1:{w.port}", user="u",
                             password=env("BOB_PASS")) + flows
        monkeypatch.setenv("BOB_PASS", "wrong-pass")
        wrong = maned.run(source=script, inputs={"a": "2:1,2"})
        monkeypatch.setenv("BOB_PASS", "right-pass")
        right = maned.run(source=script, inputs={"a": "2:1,2"})
    assert [d.cause for d in wrong.diagnostics] == ["AUTH_FAILED"] * 3
    assert right.exit_code == 0 and [f.flow for f in right.flows] == ["f", "g", "h"]
