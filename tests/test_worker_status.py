"""bark-worker's status over raw HTTP (spec/wire.md §3, wire-golden §6; R43): its fields in
order without the protocol header, the request counter, and the job counters following
sync, async and done jobs.

A real `bark-worker serve` child on 127.0.0.1 (tests/support/workers.py), spoken to with
http.client and raw sockets only (tests/support/raw_http.py): no client code of `maned`.
Requests come from `mnpk-gen`. Nothing here measures seconds; order, states and counters
say what happened.
"""
import json

from support.raw_http import assert_no_secret_shown, call, raw, split, submit, wait_job
from support.status import OPS_V2, STATUS_KEYS, status_of
from support.workers import ALIAS


def test_status_fields_in_order_without_proto_header(worker):
    s, headers, body = split(raw(worker, b"GET /api/status HTTP/1.1\r\nHost: x\r\n\r\n"))
    assert s == 200
    assert headers["Content-Type"] == "application/json"
    assert headers["Connection"] == "close"
    assert int(headers["Content-Length"]) == len(body)
    obj = json.loads(body)
    assert list(obj) == STATUS_KEYS
    assert body == json.dumps(obj, separators=(",", ":")).encode()  # compact, no newline
    assert obj["proto"] == 1 and obj["alias"] == ALIAS and obj["kind"] == "x86"
    assert obj["jobs_capacity"] == 4 and obj["ops"] == OPS_V2
    assert obj["max_payload"] == 33554432 and obj["ir"] == 2 and obj["rf_slots"] == 4096
    assert all(isinstance(obj[k], int) and obj[k] >= 0 for k in
               ("uptime_s", "requests", "jobs_running", "jobs_sync", "jobs_async", "jobs_done"))


def test_status_ignores_a_wrong_proto_header(worker):
    s, _, data = call(worker, "GET", "/api/status", headers={"X-Maned-Proto": "7"}, proto=False)
    assert s == 200 and data["proto"] == 1


def test_requests_counts_completed_requests(worker):
    a = status_of(worker)["requests"]
    b = status_of(worker)["requests"]
    assert b == a + 1
    call(worker, "GET", "/nowhere")
    assert status_of(worker)["requests"] == b + 2


def test_counters_follow_sync_async_and_done(worker, token, files, idle):
    before = status_of(worker)
    s, _, _ = call(worker, "POST", "/api/execute?mode=sync", files["matmul_relu"], token=token)
    assert s == 200
    mid = status_of(worker)
    assert (mid["jobs_sync"], mid["jobs_async"], mid["jobs_done"]) == (
        before["jobs_sync"] + 1, before["jobs_async"], before["jobs_done"] + 1)
    job = submit(worker, token, files["matmul_relu"])
    wait_job(worker, token, job)
    held = status_of(worker)
    assert (held["jobs_sync"], held["jobs_async"], held["jobs_done"]) == (
        mid["jobs_sync"], mid["jobs_async"] + 1, mid["jobs_done"] + 1)
    assert held["jobs_running"] == 1  # a done, unread job keeps its slot (R43)
    assert call(worker, "GET", f"/api/result?id={job}", token=token)[0] == 200


def test_secrets_never_in_responses_or_logs(worker):
    """Last on purpose: every response read so far, and this module's worker's stderr."""
    assert_no_secret_shown(worker)
