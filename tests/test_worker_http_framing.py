"""bark-worker's HTTP framing over raw HTTP (spec/wire.md §3, wire-golden §8): unknown paths
and methods, malformed heads and job ids, size limits decided from the head alone, and the
bounds on a connection: a stalled or trickling client is cut off and the status probe
queued behind it is answered.

A real `bark-worker serve` child on 127.0.0.1 (tests/support/workers.py), spoken to with
http.client and raw sockets only (tests/support/raw_http.py): no client code of `maned`.
Requests come from `mnpk-gen`. Nothing here measures seconds; order, states and counters
say what happened.
"""
import json
import socket
import time

import pytest

from support.background import in_background
from support.raw_http import (assert_no_secret_shown, call, cdp_error, headers_only, login,
                              raw, read_all, split)
from support.processes import command, run
from support.status import status_of
from support.workers import ALIAS, refusal, start_worker


# --- routing and HTTP framing -----------------------------------------------------------------
@pytest.mark.parametrize("method, path", [("GET", "/"), ("GET", "/api/statuses"),
                                          ("POST", "/api/status"), ("GET", "/api/auth"),
                                          ("PUT", "/api/job?id=1"), ("GET", "/api/execute")])
def test_unknown_path_or_method_is_404_no_such_job(worker, token, method, path):
    s, _, data = call(worker, method, path, token=token)
    cdp_error(s, data, "NO_SUCH_JOB")
    assert path.split("?")[0] in data["detail"]


def test_missing_content_length_is_bad_envelope(worker, token):
    for path in ("/api/execute?mode=sync", "/api/execute", "/api/auth"):
        resp = raw(worker, f"POST {path} HTTP/1.1\r\nHost: x\r\nX-Maned-Proto: 1\r\n"
                   f"X-Maned-Token: {token}\r\n\r\n".encode())
        s, headers, body = split(resp)
        cdp_error(s, json.loads(body), "BAD_ENVELOPE")
        assert headers["Connection"] == "close"


@pytest.mark.parametrize("head", [
    b"GARBAGE\r\n\r\n",
    b"GET /api/status\r\n\r\n",
    b"POST /api/auth HTTP/1.1\r\nX-Maned-Proto: 1\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"5\r\nhello\r\n0\r\n\r\n",
    b"GET /api/status HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",
    b"POST /api/auth HTTP/1.1\r\nX-Maned-Proto: 1\r\nContent-Length: 3\r\nContent-Length: 4"
    b"\r\n\r\nabcd",
    b"POST /api/auth HTTP/1.1\r\nX-Maned-Proto: 1\r\nContent-Length: -1\r\n\r\n",
    b"POST /api/auth HTTP/1.1\r\nX-Maned-Proto: 1\r\nContent-Length: " + b"9" * 5000
    + b"\r\n\r\n",
    b"GET /api/status HTTP/1.1\r\nX: " + b"a" * 20000 + b"\r\n\r\n",
])
def test_malformed_http_is_bad_envelope(worker, head):
    s, _, body = split(raw(worker, head))
    cdp_error(s, json.loads(body), "BAD_ENVELOPE")


@pytest.mark.parametrize("query", ["", "?id=", "?id=abc", "?id=-1", "?id=1.5", "?job=1",
                                   "?id=" + "9" * 5000])
def test_bad_job_id_is_bad_envelope(worker, token, query):
    for method, path in (("GET", "/api/job"), ("GET", "/api/result"), ("DELETE", "/api/job")):
        s, _, data = call(worker, method, path + query, token=token)
        cdp_error(s, data, "BAD_ENVELOPE")


def test_unknown_job_is_no_such_job(worker, token):
    for method, path in (("GET", "/api/job"), ("GET", "/api/result"), ("DELETE", "/api/job")):
        s, _, data = call(worker, method, path + "?id=987654", token=token)
        cdp_error(s, data, "NO_SUCH_JOB")


def test_bad_mode_is_bad_envelope(worker, token, files):
    s, _, data = call(worker, "POST", "/api/execute?mode=fast", files["matmul_relu"],
                      token=token)
    cdp_error(s, data, "BAD_ENVELOPE")


# --- size limits ------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/api/execute", "/api/execute?mode=sync", "/api/auth"])
def test_too_large_from_content_length_alone(worker, token, path):
    s, data = headers_only(worker, path, token, 33554433)
    cdp_error(s, data, "TOO_LARGE")
    assert "33554432" in data["detail"]


def test_too_large_for_sync_from_content_length_alone(worker, token):
    s, data = headers_only(worker, "/api/execute?mode=sync", token, 65536)
    cdp_error(s, data, "TOO_LARGE_FOR_SYNC")


def test_just_under_the_sync_limit_is_read(worker, token):
    s, _, data = call(worker, "POST", "/api/execute?mode=sync", b"\0" * 65535, token=token)
    cdp_error(s, data, "BAD_ENVELOPE")  # read and decoded, not refused for its size


def test_refused_body_does_not_reset_the_answer(worker):
    """A body sent in full behind an early refusal is drained, so the 401 arrives intact."""
    body = b"\0" * (2 << 20)
    s, _, data = call(worker, "POST", "/api/execute", body, token="0" * 32)
    cdp_error(s, data, "AUTH_REQUIRED")


# --- a stalled, half-sent or trickled request -------------------------------------------------
def test_stalled_client_is_cut_off_while_status_waits(tmp):
    """One connection at a time: a stalled client holds the listener until --io-timeout cuts
    it off (logged before the socket closes), then the queued status probe is answered."""
    worker = start_worker(tmp, "--io-timeout", "0.5")
    try:
        _stalled_clients_are_cut_off(worker)
    finally:
        assert worker.stop() == 0


def _stalled_clients_are_cut_off(worker):
    for partial in (b"POST /api/auth HTTP/1.1\r\nHost: x\r\n",
                    b"POST /api/auth HTTP/1.1\r\nX-Maned-Proto: 1\r\nContent-Length: 100\r\n"
                    b"\r\n{\"username\""):
        cut = worker.stderr().count("connection cut off")
        with socket.create_connection(("127.0.0.1", worker.port), timeout=30) as stalled:
            stalled.sendall(partial)
            status_of(worker)  # answered only once the stalled connection is gone
            assert worker.stderr().count("connection cut off") == cut + 1
            assert read_all(stalled) == b""  # cut off without an answer


def test_a_half_sent_head_holds_the_listener_only_for_the_heads_own_bound(tmp):
    """Issue 24, point 12: the head has its own bound, shorter than the body's: with a body
    bound of a minute (--io-timeout 60), three clients in a row that each send half a head
    are cut off by --head-timeout, and the status probe queued behind them is answered
    within its own 30 s, which the body bound alone would never allow."""
    worker = start_worker(tmp, "--io-timeout", "60", "--head-timeout", "0.2")
    try:
        stalled = [socket.create_connection(("127.0.0.1", worker.port), timeout=30)
                   for _ in range(3)]
        for s in stalled:
            s.sendall(b"POST /api/auth HTTP/1.1\r\nHost: x\r\n")
        assert status_of(worker)["alias"] == ALIAS
        assert [read_all(s) for s in stalled] == [b""] * 3  # cut off, never answered
        assert worker.stderr().count("connection cut off: the request head (bound 0.2 s) did "
                                     "not arrive in time") == 3
    finally:
        for s in stalled:
            s.close()
        assert worker.stop() == 0


@pytest.mark.parametrize("flag", ["--head-timeout", "--io-timeout"])
@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "86401"])
def test_a_bound_that_is_not_positive_or_past_a_day_is_refused(flag, value):
    """Issue 34: every wait has a deadline, so a bound is above 0 and at most a day."""
    code, err = refusal(flag, value)
    assert code == 2 and "--io-timeout and --head-timeout above 0 and at most 86400" in err


@pytest.mark.parametrize("flag, value, why", [
    ("--max-payload", "2147483649", "--max-payload must be 0..2147483648"),
    ("--max-payload", "-1", "--max-payload must be 0..2147483648"),
    ("--max-job-memory", "1048577", "--max-job-memory must be 1..1048576 (MiB)"),
    ("--lockout-seconds", "86401", "--lockout-seconds must be 0..86400")])
def test_a_size_or_a_lockout_past_its_documented_bound_is_refused(flag, value, why):
    """Issue 34: both workers (bark-worker serve, bark-vm) bound what they are given."""
    code, err = refusal(flag, value)
    assert code == 2 and why in err, err
    if flag != "--lockout-seconds":  # bark-vm takes the same two limits
        vm = run(command("bark-vm", "bark_vm.vm"), flag, value)
        assert vm.returncode == 2 and why in vm.stderr, vm.stderr


def test_a_trickled_body_is_cut_off_by_what_it_sent_not_what_it_declared(tmp):
    """Issue 13, defect 5: a body's deadline follows the bytes received (--io-timeout, plus
    a second per MB that has arrived), not the Content-Length it announces: a client that
    declares 32 MiB and sends a byte every 50 ms is cut off long before the 200 bytes it
    means to send, and the status probe queued behind it is answered."""
    worker = start_worker(tmp, "--io-timeout", "0.5")
    try:
        token = login(worker)[1]["token"]
        head = (b"POST /api/execute HTTP/1.1\r\nX-Maned-Proto: 1\r\nX-Maned-Token: "
                + token.encode() + b"\r\nContent-Length: 33554432\r\n\r\n")
        cut = worker.stderr().count("connection cut off")
        with socket.create_connection(("127.0.0.1", worker.port), timeout=60) as trickle:
            trickle.sendall(head)
            sent = in_background(_drip, trickle, 200, 0.05)
            assert status_of(worker)["alias"] == ALIAS  # answered once the trickle is gone
            assert sent.result() < 200
        assert worker.stderr().count("connection cut off") == cut + 1
    finally:
        assert worker.stop() == 0


def _drip(sock: socket.socket, total: int, every_s: float) -> int:
    """Send one byte every `every_s` until `total` are sent or the peer closes; then stay
    connected, silent, until the peer closes. How many bytes went out."""
    sent = 0
    try:
        while sent < total:
            sock.sendall(b"x")
            sent += 1
            time.sleep(every_s)
        read_all(sock)
    except OSError:
        pass
    return sent


def test_secrets_never_in_responses_or_logs(worker):
    """Last on purpose: every response read so far, and this module's worker's stderr."""
    assert_no_secret_shown(worker)
