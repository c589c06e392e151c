"""bark-worker holding long jobs (spec/wire.md §3; DESIGN R43): status stays live while a
job runs, async jobs wait first in first out and a queued one can be cancelled, sync
requests past the waiting bound are BUSY, and a worker out of file descriptors serves on.

A long job is long by construction: the gated worker (tests/fakes/gated_worker.py) is the
real worker whose executor holds each job while a file the test controls exists, and logs
each job that reaches it (tests/gates.py). It is spoken to with http.client and raw sockets
only (tests/support/raw_http.py). Nothing here measures seconds; order, states and counters
say what happened.
"""
import os
import socket
import sys
import threading

import pytest

from gates import FAKES, Gate, until
from support.background import in_background
from support.raw_http import call, cdp_error, login, read_all, split, submit, wait_job
from support.status import status_of
from support.wire_golden import A_MNRS
from support.workers import WorkerProcess, start_worker


def executed(rows) -> int:
    """How many jobs reached the gated worker's executor (its log also lists polls)."""
    return sum(1 for r in rows if r[0] == "job")


@pytest.fixture(scope="module")
def gated_worker(tmp):
    gate = Gate(tmp / "hold")
    proc = start_worker(tmp, command=[sys.executable, str(FAKES / "gated_worker.py"),
                                      str(gate.path)])
    proc.gate = gate
    yield proc
    gate.open()
    assert proc.stop() == 0


@pytest.fixture
def gate(gated_worker):
    """The gate closed for one test, the worker's slots free before and after."""
    assert status_of(gated_worker)["jobs_running"] == 0
    gated_worker.gate.close()
    yield gated_worker.gate
    gated_worker.gate.open()
    assert status_of(gated_worker)["jobs_running"] == 0


def sent_sync(w: WorkerProcess, token: str, body: bytes) -> socket.socket:
    """A sync execute written whole on a fresh connection, its answer not yet read."""
    s = socket.create_connection(("127.0.0.1", w.port), timeout=120)
    s.sendall(b"POST /api/execute?mode=sync HTTP/1.1\r\nHost: x\r\nX-Maned-Proto: 1\r\n"
              b"X-Maned-Token: " + token.encode() + b"\r\nContent-Length: "
              + str(len(body)).encode() + b"\r\n\r\n" + body)
    return s


def answer_of(s: socket.socket) -> int:
    with s:
        return split(read_all(s))[0]


def test_sync_requests_past_the_waiting_bound_are_busy(gated_worker, gate, files):
    """Issue 13, defect 2: behind a running job at most SYNC_WAITING_MAX sync requests
    wait; the next one is answered BUSY at once, and every waiting one is answered later.
    The worker accepts connections one at a time in arrival order, so once a status probe
    sent after the waiting requests is answered, every one of them is waiting."""
    from bark_vm.wire.constants import SYNC_WAITING_MAX
    w, token = gated_worker, login(gated_worker)[1]["token"]
    base = executed(gate.entries())
    held = [in_background(answer_of, sent_sync(w, token, files["matmul_relu"]))]
    gate.wait_for(lambda rows: executed(rows) == base + 1, "the first sync job executing")
    held += [in_background(answer_of, sent_sync(w, token, files["matmul_relu"]))
             for _ in range(SYNC_WAITING_MAX)]
    status_of(w)
    s, _, data = call(w, "POST", "/api/execute?mode=sync", files["matmul_relu"], token=token)
    cdp_error(s, data, "BUSY")
    gate.open()
    assert [p.result() for p in held] == [200] * (1 + SYNC_WAITING_MAX)


def test_a_worker_out_of_file_descriptors_keeps_serving(tmp, files):
    """Issue 13, defect 2: accept() failing (no descriptor left: EMFILE) is logged and
    retried, never the worker's end; once a descriptor frees, the waiting connection is
    served."""
    import resource
    gate = Gate(tmp / "fd-hold").close()
    w = start_worker(tmp, command=[sys.executable, str(FAKES / "gated_worker.py"),
                                   str(gate.path)])
    pid = w.popen.pid
    limits = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    try:
        token = login(w)[1]["token"]
        first = in_background(lambda: call(w, "POST", "/api/execute?mode=sync",
                                            files["matmul_relu"], token=token, timeout=120))
        gate.wait_for(lambda rows: executed(rows) == 1, "the first job executing")
        in_use = len(os.listdir(f"/proc/{pid}/fd"))
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (in_use, limits[1]))  # none left
        second = in_background(lambda: call(w, "GET", "/api/status", proto=False,
                                             timeout=120))
        until(lambda: "cannot accept a connection" in w.stderr() or w.popen.poll() is not None,
              "the failed accept logged")
        assert w.popen.poll() is None, "the worker exited: " + w.stderr()
        resource.prlimit(pid, resource.RLIMIT_NOFILE, limits)
        gate.open()
        assert first.result()[0] == 200 and second.result()[0] == 200
        assert status_of(w)["jobs_done"] == 1
    finally:
        gate.open()
        assert w.stop() == 0


def test_async_long_job_status_cancel_and_fifo(gated_worker, gate, files):
    w, token = gated_worker, login(gated_worker)[1]["token"]
    state = (lambda job: call(w, "GET", f"/api/job?id={job}", token=token)[2]["state"])
    base = executed(gate.entries())
    held = submit(w, token, files["matmul_relu"])
    wait_job(w, token, held, until=("running",))
    gate.wait_for(lambda rows: executed(rows) == base + 1, "the async job reached the executor")
    for _ in range(5):  # the accept loop answers while the executor is busy
        assert status_of(w)["jobs_running"] == 1
        assert state(held) == "running"
    s, _, data = call(w, "GET", f"/api/result?id={held}", token=token)
    cdp_error(s, data, "NOT_READY")
    s, _, data = call(w, "DELETE", f"/api/job?id={held}", token=token)
    cdp_error(s, data, "NOT_READY")  # running: refused
    queued = submit(w, token, files["matmul_relu"])
    assert state(queued) == "queued"
    assert status_of(w)["jobs_running"] == 2
    s, _, data = call(w, "GET", f"/api/result?id={queued}", token=token)
    cdp_error(s, data, "NOT_READY")
    s, _, data = call(w, "DELETE", f"/api/job?id={queued}", token=token)
    assert s == 200 and data == {"job": queued, "state": "cancelled"}
    assert status_of(w)["jobs_running"] == 1
    assert call(w, "DELETE", f"/api/job?id={queued}", token=token)[:3:2] == (
        200, {"job": queued, "state": "cancelled"})  # idempotent
    assert state(queued) == "cancelled"
    s, _, data = call(w, "GET", f"/api/result?id={queued}", token=token)
    cdp_error(s, data, "NO_SUCH_JOB")
    # a sync request behind the running job waits its turn (R43), first in first out
    box = {}

    def sync():
        box["resp"] = call(w, "POST", "/api/execute?mode=sync", files["matmul_relu"],
                           token=token)
        box["held_state"] = state(held)
    syncs = status_of(w)["jobs_sync"]
    th = threading.Thread(target=sync)
    th.start()
    until(lambda: status_of(w)["jobs_sync"] != syncs,  # checked and queued for the executor
          "the sync request reached the executor's queue")
    assert state(held) == "running" and th.is_alive()
    assert executed(gate.entries()) == base + 1  # queued behind the held job, not beside it
    gate.open()
    th.join(60)
    assert box["resp"][0] == 200 and box["resp"][2] == A_MNRS
    assert box["held_state"] == "done"
    assert executed(gate.entries()) == base + 2  # then the sync job; the cancelled one never
    s, _, data = call(w, "DELETE", f"/api/job?id={held}", token=token)
    cdp_error(s, data, "NOT_READY")  # finished: refused
    s, _, data = call(w, "GET", f"/api/result?id={held}", token=token)
    assert s == 200 and data == A_MNRS


def test_sync_long_job_status_stays_live(gated_worker, gate, files):
    w, token = gated_worker, login(gated_worker)[1]["token"]
    before = status_of(w)
    entered = executed(gate.entries())
    box = {}

    def sync():
        box["resp"] = call(w, "POST", "/api/execute?mode=sync", files["matmul_relu"],
                           token=token)
    th = threading.Thread(target=sync)
    th.start()
    gate.wait_for(lambda rows: executed(rows) > entered, "the sync job reached the executor")
    for _ in range(5):
        status_of(w)
        assert th.is_alive()  # status answered while the sync job has not
    gate.open()
    th.join(60)
    assert box["resp"][0] == 200 and box["resp"][2] == A_MNRS
    after = status_of(w)
    assert after["jobs_sync"] == before["jobs_sync"] + 1
    assert after["jobs_done"] == before["jobs_done"] + 1
    assert after["jobs_running"] == 0
