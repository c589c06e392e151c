"""Load (issue 13, Build 3): 8 concurrent clients x 100 sync jobs, then x 20 async jobs,
against one real bark-worker on loopback. Every answer is the reference's MNRS byte for
byte, each client got its own, every job was counted once by the worker, and every async
result was read exactly once. Times are printed (tests/load.py), never asserted."""
import pytest

from bark_vm.container import worker_process
from load import result_gone, run_load

pytestmark = pytest.mark.slow

CLIENTS, SYNC_JOBS, ASYNC_JOBS = 8, 100, 20


@pytest.fixture(scope="module")
def worker():
    with worker_process("load", "load", "load-pass-93ab") as w:
        yield w


def test_concurrent_clients_get_exact_answers_exactly_once(worker, capsys):
    run = run_load(worker, "load", "load-pass-93ab", CLIENTS, SYNC_JOBS, ASYNC_JOBS)
    assert [c.wrong for c in run.clients] == [[]] * CLIENTS
    assert run.count("sync") == CLIENTS * SYNC_JOBS
    assert run.count("async") == CLIENTS * ASYNC_JOBS
    grew = {k: run.after[k] - run.before[k] for k in ("jobs_sync", "jobs_async", "jobs_done")}
    assert grew == {"jobs_sync": CLIENTS * SYNC_JOBS, "jobs_async": CLIENTS * ASYNC_JOBS,
                    "jobs_done": CLIENTS * (SYNC_JOBS + ASYNC_JOBS)}
    assert run.after["jobs_running"] == 0
    token = run.clients[0].token
    first = run.before["jobs_async"] + 1  # the worker numbers async jobs from 1
    assert all(result_gone(worker, token, job) for job in range(first, run.after["jobs_async"]
                                                                + 1))
    with capsys.disabled():
        print("\n" + run.figures())
