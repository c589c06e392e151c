"""bark-worker running jobs over raw HTTP (spec/wire.md §3, wire-golden §6; DESIGN D8, R21,
R43): the golden request sync and async, mnpk-gen's mutations, execution failures, every
job slot taken, every job answered (out of memory, over the memory budget), and an ABI-1
worker.

A real `bark-worker serve` child on 127.0.0.1 (tests/support/workers.py), spoken to with
http.client and raw sockets only (tests/support/raw_http.py): no client code of `maned`.
Requests come from `mnpk-gen`. Nothing here measures seconds; order, states and counters
say what happened.
"""
import hashlib
import signal
import sys

import pytest

from gates import FAKES, until
from support.envelopes import MUTATION_CODES, outer_product_request
from support.raw_http import (assert_no_secret_shown, call, cdp_error, headers_only, login,
                              submit, wait_job)
from support.status import OPS_V2, STATUS_KEYS, status_of
from support.wire_golden import A_MNRS
from support.workers import READY, start_worker

GOLDEN_MNPK_SHA = "953f646cbd5cd4402300009c34e860ff0c5c841980eb767ca50fa26a07928d7a"


# --- execution: golden, mutations, errors -----------------------------------------------------
def test_golden_sync(worker, token, files, idle):
    req = files["matmul_relu"]
    assert len(req) == 205 and hashlib.sha256(req).hexdigest() == GOLDEN_MNPK_SHA
    assert files["golden_mnrs"] == A_MNRS
    s, headers, data = call(worker, "POST", "/api/execute?mode=sync", req, token=token,
                            headers={"Content-Type": "application/x-maned-mnpk"})
    assert s == 200
    assert headers["Content-Type"] == "application/x-maned-mnrs"
    assert headers["Connection"] == "close"
    assert data == A_MNRS and len(data) == 40


def test_golden_async_read_once(worker, token, files, idle):
    job = submit(worker, token, files["matmul_relu"])
    assert wait_job(worker, token, job) == {"job": job, "state": "done"}
    s, headers, data = call(worker, "GET", f"/api/result?id={job}", token=token)
    assert s == 200 and headers["Content-Type"] == "application/x-maned-mnrs"
    assert data == A_MNRS
    for path in (f"/api/result?id={job}", f"/api/job?id={job}"):
        s, _, data = call(worker, "GET", path, token=token)
        cdp_error(s, data, "NO_SUCH_JOB")


def test_v2_golden_on_the_abi2_worker(worker, token, files):
    s, _, data = call(worker, "POST", "/api/execute?mode=sync", files["v2"], token=token)
    assert s == 200 and data == A_MNRS


@pytest.mark.parametrize("name", list(MUTATION_CODES))
def test_mutations_sync(worker, token, files, name):
    s, _, data = call(worker, "POST", "/api/execute?mode=sync", files[name], token=token)
    cdp_error(s, data, MUTATION_CODES[name][0])
    assert s == MUTATION_CODES[name][1]


@pytest.mark.parametrize("name", list(MUTATION_CODES))
def test_mutations_async_are_job_errors(worker, token, files, name, idle):
    code = MUTATION_CODES[name][0]
    done = status_of(worker)["jobs_done"]
    job = submit(worker, token, files[name])
    # not polled: the errored job holds its slot until /api/result answers its code (R43)
    until(lambda: status_of(worker)["jobs_done"] != done, "the job ended")
    assert status_of(worker)["jobs_running"] == 1
    s, _, data = call(worker, "GET", f"/api/result?id={job}", token=token)
    cdp_error(s, data, code)
    s, _, data = call(worker, "GET", f"/api/result?id={job}", token=token)
    cdp_error(s, data, "NO_SUCH_JOB")


def test_exec_failed_sync(worker, token, files):
    s, _, data = call(worker, "POST", "/api/execute?mode=sync", files["overflow"], token=token)
    cdp_error(s, data, "EXEC_FAILED")
    assert "int8" in data["detail"]


def test_exec_failed_async_poll_frees_the_slot(worker, token, files, idle):
    job = submit(worker, token, files["overflow"])
    data = wait_job(worker, token, job)
    assert list(data) == ["job", "state", "code", "detail"]
    assert data["state"] == "error" and data["code"] == "EXEC_FAILED"
    assert status_of(worker)["jobs_running"] == 0  # reported, so freed (R43)
    assert wait_job(worker, token, job)["state"] == "error"  # still reportable
    s, _, data = call(worker, "GET", f"/api/result?id={job}", token=token)
    cdp_error(s, data, "EXEC_FAILED")
    s, _, data = call(worker, "GET", f"/api/result?id={job}", token=token)
    cdp_error(s, data, "NO_SUCH_JOB")


def test_busy_on_a_fifth_slot(worker, token, files, idle):
    jobs = [submit(worker, token, files["matmul_relu"]) for _ in range(4)]
    assert status_of(worker)["jobs_running"] == 4
    s, _, data = call(worker, "POST", "/api/execute", files["matmul_relu"], token=token)
    cdp_error(s, data, "BUSY")
    s, data = headers_only(worker, "/api/execute", token, 1000)  # decided before the body
    cdp_error(s, data, "BUSY")
    # sync does not take a slot
    assert call(worker, "POST", "/api/execute?mode=sync", files["matmul_relu"],
                token=token)[2] == A_MNRS
    wait_job(worker, token, jobs[0])
    assert call(worker, "GET", f"/api/result?id={jobs[0]}", token=token)[0] == 200
    jobs[0] = submit(worker, token, files["matmul_relu"])  # the freed slot is usable
    for job in jobs:
        wait_job(worker, token, job)
        assert call(worker, "GET", f"/api/result?id={job}", token=token)[2] == A_MNRS


# --- every job is answered --------------------------------------------------------------------
def test_a_job_that_runs_out_of_memory_is_answered(tmp, files):
    """Issue 13, defect 1: a result that cannot be encoded for lack of memory is still an
    answer (EXEC_FAILED), sync and async, the job is counted done, and the worker serves on."""
    w = start_worker(tmp, command=[sys.executable, str(FAKES / "oom_worker.py")])
    try:
        token = login(w)[1]["token"]
        s, _, data = call(w, "POST", "/api/execute?mode=sync", files["matmul_relu"],
                          token=token, timeout=10)
        cdp_error(s, data, "EXEC_FAILED")
        assert "out of memory" in data["detail"]
        job = submit(w, token, files["matmul_relu"])
        assert wait_job(w, token, job, until=("error",))["state"] == "error"
        s, _, data = call(w, "GET", f"/api/result?id={job}", token=token)
        cdp_error(s, data, "EXEC_FAILED")
        assert "out of memory" in data["detail"]
        counters = status_of(w)
        assert (counters["jobs_sync"], counters["jobs_async"], counters["jobs_done"]) == (1, 1, 2)
        assert counters["jobs_running"] == 0
    finally:
        assert w.stop() == 0


def test_the_memory_budget_is_a_worker_option(tmp):
    """`--max-job-memory MIB`: a job that would go over it is 413 TOO_LARGE, counted done."""
    w = start_worker(tmp, "--max-job-memory", "1")
    try:
        token = login(w)[1]["token"]
        s, _, data = call(w, "POST", "/api/execute?mode=sync", outer_product_request(512),
                          token=token)
        cdp_error(s, data, "TOO_LARGE")
        assert "memory budget of 1 MiB" in data["detail"]
        assert status_of(w)["jobs_done"] == 1
    finally:
        assert w.stop() == 0


# --- another worker: ABI 1 --------------------------------------------------------------------
def test_abi1_worker_and_max_payload(tmp, files):
    w = start_worker(tmp, "--abi", "1", "--max-payload", "1000")
    try:
        st = status_of(w)
        assert list(st) == STATUS_KEYS
        assert (st["ir"], st["rf_slots"], st["max_payload"]) == (1, 256, 1000)
        assert st["ops"] == [o for o in OPS_V2 if o not in ("reshape", "split", "batchnorm")]
        assert READY.search(w.stderr()).group(3) == "1"
        tok = login(w)[1]["token"]
        s, _, data = call(w, "POST", "/api/execute?mode=sync", files["matmul_relu"], token=tok)
        assert s == 200 and data == A_MNRS
        s, _, data = call(w, "POST", "/api/execute?mode=sync", files["v2"], token=tok)
        cdp_error(s, data, "BAD_ENVELOPE")  # a v1 worker refuses v2 modules (R21)
        s, _, data = call(w, "POST", "/api/execute?mode=sync", files["big"], token=tok)
        cdp_error(s, data, "TOO_LARGE")
        assert "1000" in data["detail"]
    finally:
        assert w.stop(signal.SIGINT) == 0


def test_secrets_never_in_responses_or_logs(worker):
    """Last on purpose: every response read so far, and this module's worker's stderr."""
    assert_no_secret_shown(worker)
