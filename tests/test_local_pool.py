"""`--threads N`: the local interpreter's lane is a pool of N processes (D9). Ctrl-C stops
them at once: the lane knows its processes by the pids they report when they start."""
import signal

from maned.cli.run import INTERRUPTED

from gates import until
from support.processes import MANED_RUN, children, gone, kill, start
from support.signals import default_sigint

# Two local flows, each three chained 1200x1200 matmuls in pure Python: minutes of work per
# pool process, so a run that ends within its 60 s deadline stopped its pool rather than
# waiting for it.
SLOW = """mnd::quantmax=1000;
mnd::quantmin=-1000;
mnd::quantres=0;

in::a = 1200 1200 ones;

calc::lambda_flow left(a) {
    a a matmul b =
    b a matmul c =
    c a matmul d =
} return d;

calc::lambda_flow right(a) {
    a a matmul b =
    b a matmul c =
    c a matmul d =
} return d;
"""


def test_ctrl_c_stops_the_local_pool_processes(tmp_path):
    """SIGINT while both pool processes compute: the one notice line, exit 130, nothing on
    stdout, and both pool processes gone (not left to finish their minutes of work)."""
    script = tmp_path / "slow.mnd"
    script.write_text(SLOW)
    proc = start(MANED_RUN, script, "--threads", "2", preexec_fn=default_sigint)
    pool: set[int] = set()
    try:
        until(lambda: len(children(proc.pid)) >= 2 or proc.poll() is not None,
              "the pool's two processes started")
        assert proc.poll() is None, proc.communicate()
        pool = children(proc.pid)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:  # a run that did not stop its pool: stopped here, so the suite goes on
        for pid in (proc.pid, *pool):
            kill(pid)
        proc.wait(timeout=10)
    assert (proc.returncode, out) == (130, "")
    assert err == INTERRUPTED + "\n"
    assert all(gone(pid) for pid in pool)


def test_a_chain_whose_round_ends_as_the_pool_stops_is_answered_not_raised():
    """A round that ends just after Ctrl-C stopped the pool: its chain's next round is
    answered as stopped (the pool takes no new job), never raised on the pool's thread."""
    from concurrent.futures import Future

    from maned.diagnostics import Diagnostic
    from maned.dispatch.job import Job
    from maned.dispatch.lanes import PoolLane
    from maned.dispatch.trace import Trace
    from maned.targets.local import LocalTarget

    reports = []
    lane = PoolLane(LocalTarget(0), Trace(), lambda job, out, err: reports.append(
        (job.name, out, err)), 2)
    after = Job(key=(2, 0, 0, 1), name="fit#c0#r1")
    first = Job(key=(1, 0, 0, 0), name="fit#c0#r0", follow=lambda outputs: after)
    lane.abort()
    done = Future()
    done.set_result(("ok", {}))
    lane._pool_done(first, done)
    assert reports == [("fit#c0#r1", None, Diagnostic(
        "ERUN", "flow 'fit#c0#r1': device 'local': its queue stopped"))]


def test_an_aborted_pool_leaves_no_manager_thread_for_the_exit_to_wake():
    """abort() returns once the pool's manager thread has ended: CPython 3.11's exit wakes
    that thread through a pipe it closes as it ends, and both at once printed "Bad file
    descriptor" after the Ctrl-C notice (seen in test_interrupts' random SIGINTs)."""
    import maned
    import maned.pipeline.intake
    from maned.dispatch.job import Job
    from maned.dispatch.lanes import PoolLane
    from maned.dispatch.trace import Trace
    from maned.targets.local import LocalTarget

    graph = maned.pipeline.intake.compile_script(SLOW).graphs["left"]
    reports = []
    lane = PoolLane(LocalTarget(0), Trace(), lambda job, out, err: reports.append(
        (job.name, err.code if err else None)), 2)
    lane.submit(Job(key=(0, 0, 0, 0), name="left", graph=graph,
                    inputs={"a": maned.Tensor((1200, 1200), (1,) * 1440000)}))
    until(lambda: any(lane._pids[:]), "a pool process started")
    manager = lane._pool._executor_manager_thread
    assert manager.is_alive()
    lane.abort()
    assert not manager.is_alive()
    until(lambda: reports, "the job is answered")
    assert reports == [("left", "ERUN")]


def _cpu_ticks(pid: int) -> int:
    """User and system clock ticks `pid` has used (0 once it is gone)."""
    from pathlib import Path
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def test_a_pool_is_never_wider_than_the_jobs_the_run_can_have(tmp_path):
    """Issue 34, K1: `--threads 32` for a run of two flows forks two pool processes, not 32.
    A fork-context pool forks all its processes in its first submit, before any of them
    runs a job; so once one has computed, every process the pool will have is there."""
    script = tmp_path / "slow.mnd"
    script.write_text(SLOW)
    proc = start(MANED_RUN, script, "--threads", "32", preexec_fn=default_sigint)
    pool: set[int] = set()
    try:
        until(lambda: any(_cpu_ticks(c) > 10 for c in children(proc.pid))
              or proc.poll() is not None, "a pool process computing")
        assert proc.poll() is None, proc.communicate()
        pool = children(proc.pid)
        assert len(pool) == 2, pool
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    finally:
        for pid in (proc.pid, *pool):
            kill(pid)


def _killed_pool_runs(deaths: int):
    """One job on a one-process pool of the reference (a 100x100 three-matmul chain: a
    second or more of pure Python, while each kill lands within a poll of 10 ms), its pool
    process SIGKILLed as soon as it has started, `deaths` times: (the reports, the graph,
    its input, the pids killed)."""
    import maned
    import maned.pipeline.intake
    from maned.dispatch.job import Job
    from maned.dispatch.lanes import PoolLane
    from maned.dispatch.trace import Trace
    from maned.targets.local import LocalTarget

    graph = maned.pipeline.intake.compile_script(SLOW).graphs["left"]
    a = maned.Tensor((100, 100), tuple(k % 7 for k in range(10000)))
    reports, killed = [], []
    lane = PoolLane(LocalTarget(0, reference=True), Trace(),
                    lambda job, out, err: reports.append((out, err)), 1)
    try:
        lane.submit(Job(key=(0, 0, 0, 0), name="left", graph=graph, inputs={"a": a}))
        for _ in range(deaths):
            until(lambda: any(pid and pid not in killed for pid in lane._pids[:]),
                  "a pool process started")
            killed.append(next(pid for pid in lane._pids[:] if pid and pid not in killed))
            kill(killed[-1])
        until(lambda: reports, "the job is answered")
        return reports, graph, a, killed, lane._pids[:]
    finally:
        lane.abort()


def test_a_pool_process_killed_mid_job_is_replaced_and_its_job_runs_again():
    """Issue 37, point 2: the pool whose process died is renewed, and the job it held runs
    once more on the fresh one, with the reference's answer."""
    from maned.catalogue import OpContext
    from maned.interp.evaluate import evaluate

    reports, graph, a, killed, pids = _killed_pool_runs(1)
    assert reports == [(evaluate(graph, {"a": a}, {}, OpContext(0)), None)]
    assert killed[0] not in pids and any(pids)  # a fresh process ran it


def test_a_job_whose_pool_dies_twice_fails_instead_of_looping():
    reports, _, _, _, _ = _killed_pool_runs(2)
    [(outputs, error)] = reports
    assert outputs is None and error.code == "ERUN"
    assert error.message == "flow 'left': the local worker process failed (BrokenProcessPool)"
