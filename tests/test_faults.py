"""Faults between maned-run and a real bark-worker (issue 13, Build 1 and 2): a loopback
proxy (tests/fault_proxy.py) delays, resets, truncates, black-holes, drips, half-closes or
replays one request; the worker is killed and restarted mid-sweep; every slot is taken; a
job outlives the answer deadline. Each case is a table row: the request it hits and the one
line the run must end with (docs/wire.md, "What the client does when the network fails").
Runs are child processes, so a hang shows as the guard's timeout."""
import json
import re
import subprocess
import sys

import pytest

from bark_vm.container import worker_process
from support.cli import only_sweep_notes
from fault_proxy import Fault, FaultProxy
from gates import FAKES, HANG_GUARD_S, Gate, until
from support.processes import MANED_RUN, maned_run_child, start
from support.scripts import FIT_DATA, H0, HML, env
from support.scripts import device as device_block
from support.status import status_of

pytestmark = pytest.mark.slow

PASSWORD = "fault-pass-4d1e"
SMALL = "in::a = [[1,2],[3,4]];\n"
FLOW = "calc::lambda_flow f(a) @device(w) {\n    a a add r =\n} return r;\n"
LOCAL = "calc::lambda_flow g(a) {\n    a a mul q =\n} return q;\n"
SMALL_OUT = "flow 'f' outputs:\nr : [2x2] = [2, 4, 6, 8]\n"
N = 130  # a 130x130 int32 input: 67,600 bytes, over the sync limit, so the job goes async
BIG = ",".join(str((i * 7919) % 2001 - 1000) for i in range(N * N))
SYNC, AUTH, STATUS = "POST /api/execute?mode=sync", "POST /api/auth", "GET /api/status"
SUBMIT, POLL, RESULT = "POST /api/execute HTTP", "GET /api/job", "GET /api/result"


def device(port: int, timeout: int = 30) -> str:
    return device_block("w", host="127.0.0.1", port=port, user="test", password=env("P_W"),
                        timeout=timeout)


CHILDREN: list[subprocess.Popen] = []  # background runs, killed if a test left them


@pytest.fixture(autouse=True)
def no_child_left():
    yield
    while CHILDREN:
        child = CHILDREN.pop()
        if child.poll() is None:
            child.kill()
        child.communicate(timeout=HANG_GUARD_S)


def maned_run(tmp_path, text: str, *args: str, background=False):
    path = tmp_path / "fault.mnd"
    path.write_text(text)
    if background:
        child = start(MANED_RUN, path, *args, env={"P_W": PASSWORD})
        CHILDREN.append(child)
        return child
    return maned_run_child(path, *args, env={"P_W": PASSWORD})


def counters(worker) -> dict:
    return status_of(worker, HANG_GUARD_S)


@pytest.fixture(scope="module")
def worker():
    with worker_process("w", "test", PASSWORD) as w:
        yield w


@pytest.fixture
def proxy(worker):
    p = FaultProxy(worker.host, worker.port)
    yield p
    p.close()


# --- Build 1: one fault on one request -------------------------------------------------------
TIMEOUT = "timeout: no complete answer within the 1 s deadline"
# (fault, the device's timeout, what the run ends with: None = the right result printed)
SYNC_FAULTS = {
    "delay under the deadline": (Fault("delay", SYNC, seconds=0.3), 30, None),
    "delay past the deadline": (Fault("delay", SYNC, seconds=3), 1, TIMEOUT),
    "reset": (Fault("reset", SYNC), 30, "connect_failed: Connection reset by peer"),
    "truncated head": (Fault("truncate", SYNC, keep=10), 30, "malformed_response: the "
                       "connection closed before the answer's head was complete"),
    "truncated body": (Fault("truncate", SYNC, keep=-1), 30, "malformed_response: the answer "
                       "ended after 39 of 40 body bytes"),
    "black hole": (Fault("black_hole", SYNC), 1, TIMEOUT),
    "slow drip": (Fault("drip", SYNC, seconds=0.2), 1, TIMEOUT),
    "half-close to the client": (Fault("half_close", SYNC), 30, "connect_failed: the "
                                 "connection closed without an answer"),
    "half-close to the worker": (Fault("half_close_worker", SYNC), 30, None),
    "replayed": (Fault("replay", SYNC), 30, None),
    "status reset": (Fault("reset", STATUS), 30, "connect_failed: Connection reset by peer"),
    "status black hole": (Fault("black_hole", STATUS), 1, TIMEOUT),
    "login truncated": (Fault("truncate", AUTH, keep=-1), 30, "malformed_response: the "
                        "answer ended after 55 of 56 body bytes"),
}


@pytest.mark.parametrize("case", SYNC_FAULTS)
def test_a_fault_on_a_sync_job(worker, proxy, tmp_path, case):
    """The result, or one coded line naming the flow and the device; never a partial or
    wrong result on stdout. The worker's counters say whether the job ran."""
    fault, timeout, ending = SYNC_FAULTS[case]
    proxy.inject(fault)
    before = counters(worker)
    trace = tmp_path / "t.jsonl"
    code, out, err = maned_run(tmp_path, H0 + SMALL + device(proxy.port, timeout) + FLOW,
                               "--trace", str(trace))
    assert proxy.requests(fault.kind), "the fault never hit"
    ran = counters(worker)["jobs_sync"] - before["jobs_sync"]
    if ending is None:
        assert (code, out, err) == (0, SMALL_OUT, "")
        assert ran == (2 if fault.kind == "replay" else 1)
        return
    assert (code, out) == (1, "")
    assert err == f"error: flow 'f': device 'w' (127.0.0.1:{proxy.port}): {ending} [ERUN]\n"
    if fault.on == SYNC:  # the job had started: its end record carries the whole line
        end = json.loads(trace.read_text().splitlines()[-1])
        assert (end["event"], end["flow"], end["target"], end["ok"], end["message"]) == (
            "end", "f", "w", False, err.rstrip("\n"))
    reached = fault.on == SYNC and fault.kind not in ("reset", "black_hole")
    assert ran == (1 if reached else 0)  # a job the worker ran and whose answer was lost
    if fault.kind == "drip":
        assert 0 < proxy.dripped < proxy.drip_total  # cut off at the deadline, unfinished


LOST = "job {job} result lost on worker 127.0.0.1:{port} (NO_SUCH_JOB): results are read-once \
and expire after 300 s - re-submit the job"
ASYNC_FAULTS = {
    "submit reset": (Fault("reset", SUBMIT), 30, "connect_failed: Connection reset by peer"),
    "poll black hole": (Fault("black_hole", POLL), 1, TIMEOUT),
    "poll truncated": (Fault("truncate", POLL, keep=-1), 30, "malformed_response: the answer "
                       "ended after "),
    "result replayed": (Fault("replay", RESULT), 30, LOST),
    "result half-closed": (Fault("half_close", RESULT), 30, "connect_failed: the connection "
                           "closed without an answer"),
    "result delayed": (Fault("delay", RESULT, seconds=0.3), 30, None),
}


@pytest.mark.parametrize("case", ASYNC_FAULTS)
def test_a_fault_on_an_async_job(worker, proxy, tmp_path, case):
    """The same for a job that goes submit-and-poll: a lost result is said as lost (read
    once, then gone), never retried, never printed."""
    fault, timeout, ending = ASYNC_FAULTS[case]
    proxy.inject(fault)
    text = H0 + device(proxy.port, timeout) + FLOW.replace("a a add", "a a sub")
    before = counters(worker)
    code, out, err = maned_run(tmp_path, text, "--in", f"a={N}x{N}:{BIG}")
    assert proxy.requests(fault.kind), "the fault never hit"
    if ending is None:
        assert (code, err) == (0, "") and out == f"flow 'f' outputs:\nr : [{N}x{N}] = [" + \
            ", ".join(["0"] * N * N) + "]\n"
        return
    assert (code, out) == (1, "")
    job = next((r.split("id=")[1] for r in proxy.requests() if r.startswith(POLL)), None)
    assert counters(worker)["jobs_async"] == before["jobs_async"] + (fault.on != SUBMIT)
    assert err.startswith(f"error: flow 'f': device 'w' (127.0.0.1:{proxy.port}): "
                          + ending.format(job=job, port=proxy.port)) and err.endswith("[ERUN]\n")
    assert err.count("\n") == 1


def test_a_routed_failure_keeps_what_was_computed_locally(proxy, tmp_path):
    """A local flow's output before the routed flow that fails is printed; nothing of the
    routed flow is."""
    proxy.inject(Fault("reset", SYNC))
    code, out, err = maned_run(tmp_path, H0 + SMALL + device(proxy.port) + LOCAL + FLOW)
    assert (code, out) == (1, "flow 'g' outputs:\nq : [2x2] = [1, 4, 9, 16]\n")
    assert err.startswith("error: flow 'f': device 'w'") and err.count("\n") == 1


# --- Build 2: the worker itself fails ---------------------------------------------------------
SWEEP = (HML + FIT_DATA + "{device}calc::ml::linear_regression fit(X, y) @device(w) {{\n"
         "    iters: 400, lr: [2, 5], features: 2, budget: {budget}\n}} return m, l;\n")
PASS = "verify: PASS (compared local interpreter vs routed targets)\n"


def _restart_behind(proxy, tmp_path, budget: int, held_on: str, after: int,
                    script: str = SWEEP):
    """Run the sweep through `proxy`; hold the `held_on` request after `after` of them, kill
    the worker, start a fresh one (its tokens and jobs are gone), point the proxy at it and
    let the request go. Returns the run's (code, out, err) and the log of requests."""
    hold = proxy.inject(Fault("hold", held_on, after=after))
    with worker_process("w", "test", PASSWORD) as first:
        proxy.retarget(first.host, first.port)
        run = maned_run(tmp_path, script.format(device=device(proxy.port), budget=budget),
                        "--verify", background=True)
        until(lambda: proxy.requests("hold") or run.poll() is not None,
              "a request held at the proxy")
        assert proxy.requests("hold"), "the run ended before the hold"
        first.handle.kill()
        first.handle.wait(timeout=HANG_GUARD_S)
    with worker_process("w", "test", PASSWORD) as second:
        proxy.retarget(second.host, second.port)
        hold.release()
        out, err = run.communicate(timeout=HANG_GUARD_S)
        return run.returncode, out, err, counters(second)


def test_a_restarted_worker_costs_one_relogin_between_rounds(proxy, tmp_path):
    """Rounds that travel sync: the held round reaches the new worker with a token it never
    issued; the client logs in once more and the sweep finishes, verified."""
    code, out, err, after = _restart_behind(proxy, tmp_path, 64, SYNC, 4)
    assert code == 0 and only_sweep_notes(err) and out.endswith(PASS)
    assert proxy.requests().count(AUTH) == 2  # the first login and exactly one more
    # the held round is refused AUTH_REQUIRED once, then sent again after the re-login: the
    # new worker ran it and every later round exactly once
    from_held = proxy.requests()[[kind for _, kind in proxy.log].index("hold"):]
    assert from_held[:3] == [SYNC, AUTH, SYNC]
    assert after["jobs_sync"] == from_held.count(SYNC) - 1


def test_a_restarted_worker_loses_the_job_it_was_running(proxy, tmp_path):
    """Rounds that travel async: the held poll reaches the new worker, which never had the
    job; after one re-login the client says the result is lost, naming round and device."""
    code, out, err, after = _restart_behind(proxy, tmp_path, 4096, POLL, 0)
    assert proxy.requests().count(AUTH) == 2
    # the configuration whose poll was held fails alone; the other finishes and prints
    note, error = err.splitlines()
    lost = int(error.removeprefix("error: flow 'fit#c")[0])
    kept = ("m", "l")[1 - lost]
    assert code == 1 and out.startswith(f"flow 'fit' outputs:\n{kept} : [15] = [")
    assert out.count("\n") == 2 and f"{('m', 'l')[lost]} had lr {(2, 5)[lost]} (failed)" in note
    assert "device 'w' (127.0.0.1:" in error
    assert "result lost on worker" in error and "(NO_SUCH_JOB)" in error
    from_held = proxy.requests()[[kind for _, kind in proxy.log].index("hold"):]
    assert [r.split("?")[0] for r in from_held[:3]] == [POLL, AUTH, POLL]


def test_a_chain_whose_result_a_restarted_worker_lost_moves_and_the_worker_serves_on(
        proxy, tmp_path):
    """Four configurations over w (behind the proxy, restarted while it ran an async job)
    and v: the configuration whose result was lost (NO_SUCH_JOB) moves to v from that
    round; the restarted w is not dropped (it answers again), so its other configuration
    runs there; the run prints the local run's bytes, verified."""
    with worker_process("v", "test", PASSWORD) as v:
        two = SWEEP.replace("@device(w)", "@device(w, v)").replace(
            "lr: [2, 5]", "lr: [2, 5, 10, 20]").replace("return m, l;", "return a, b, c, d, "
                                                        "e, f, g, h;")
        two = two.replace("{device}", "{device}" + device_block(
            "v", host=v.host, port=v.port, user="test", password=env("P_W")).replace(
            "{", "{{").replace("}", "}}"))
        code, out, err, after = _restart_behind(proxy, tmp_path, 4096, POLL, 0, two)
    assert code == 0 and out.endswith(PASS), err
    move, note = err.splitlines()
    assert re.fullmatch(r"note: fit#c[02] moved from 'w' to 'v' at round 0: flow "
                        r"'fit#c[02]#r0': device 'w' \(127\.0\.0\.1:\d+\): job \d+ result "
                        r"lost on worker 127\.0\.0\.1:\d+ \(NO_SUCH_JOB\).*", move), move
    assert note.startswith("note: sweep 'fit' over lr:") and "(failed)" not in note
    assert after["jobs_async"] > 0  # the restarted w ran the other configuration's rounds


@pytest.fixture
def gated(tmp_path):
    gate = Gate(tmp_path / "hold").close()
    with worker_process("w", "test", PASSWORD, command=[
            sys.executable, str(FAKES / "gated_worker.py"), str(gate.path)]) as w:
        yield w, gate
        gate.open()


def test_every_slot_taken_is_busy_naming_flow_and_device(gated, tmp_path):
    """Four async jobs held on the worker take every slot: the run's async job is answered
    BUSY at once, said in one line, and not retried."""
    w, gate = gated
    held = []
    for i in range(4):
        (tmp_path / str(i)).mkdir()
        held.append(maned_run(tmp_path / str(i), H0 + device(w.port) + FLOW, "--in",
                              f"a={N}x{N}:{BIG}", background=True))
    until(lambda: counters(w)["jobs_running"] == 4, "four held jobs in the worker's slots")
    code, out, err = maned_run(tmp_path, H0 + device(w.port) + FLOW, "--in",
                               f"a={N}x{N}:{BIG}")
    assert (code, out) == (1, "")
    assert err == (f"error: flow 'f': device 'w' (127.0.0.1:{w.port}): the worker has no free "
                   "job slot; retry later (BUSY) [worker: all 4 job slots are occupied; read "
                   "results or retry later] [ERUN]\n")
    gate.open()
    assert [p.communicate(timeout=HANG_GUARD_S)[1] for p in held] == [""] * 4
    assert counters(w)["jobs_async"] == 4


def test_a_slow_sync_job_ends_at_the_deadline_and_the_worker_serves_on(gated, tmp_path):
    w, gate = gated
    code, out, err = maned_run(tmp_path, H0 + SMALL + device(w.port, 1) + FLOW)
    assert (code, out) == (1, "")
    assert err == f"error: flow 'f': device 'w' (127.0.0.1:{w.port}): {TIMEOUT} [ERUN]\n"
    assert gate.entries() == [["job", str(w.handle.pid)]]  # it was running, held, when cut off
    gate.open()
    until(lambda: counters(w)["jobs_done"] == 1, "the abandoned job finished")
    assert maned_run(tmp_path, H0 + SMALL + device(w.port) + FLOW) == (0, SMALL_OUT, "")


def test_a_slow_async_job_outlives_the_answer_deadline(gated, tmp_path):
    """The answer deadline bounds each request, not the job: polls under a 1 s deadline go
    on while the job is held, and the result comes back exact."""
    w, gate = gated
    run = maned_run(tmp_path, H0 + device(w.port, 1) + FLOW, "--in", f"a={N}x{N}:{BIG}",
                    "--verify", background=True)
    gate.wait_for(lambda rows: sum(r[0] == "poll" for r in rows) >= 7, "seven polls of the "
                  "held job")  # their backoff sleeps add up to 2.55 s, past the 1 s deadline
    gate.open()
    out, err = run.communicate(timeout=HANG_GUARD_S)
    assert (run.returncode, err) == (0, "") and out.endswith(PASS)

