"""Load on one real bark-worker (issue 13, Build 3): N concurrent clients, each its own
`CdpDevice` (its own login and token), send sync jobs and async jobs with inputs of their
own; each answer is compared byte for byte with the MNRS the reference interpreter
expects, and a read result must be gone on a second read. The worker's counters, before
and after, say how many jobs it ran. BUSY answers (every async slot taken) are retried
after a pause and counted: they are refusals, not jobs.

    python tests/load.py [CLIENTS] [SYNC_JOBS] [ASYNC_JOBS]   # the figures, on a fresh worker

prints jobs/s and p50/p99 latency per mode. The test (tests/test_load.py) asserts only
exactness and counts, never a time."""
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field

from maned.static_check import check
from maned.lowering.fixtures import build_fixture
from maned.failures import DeviceFailure
from maned.devices.cdp import CdpDevice
from maned.tensor import Tensor

from support.raw_http import call
from support.scripts import H0
from support.status import status_of

SCRIPT = (H0 + "calc::lambda_flow layer(x, w, bias) {\n    x w matmul product =\n"
          "    product bias elemwise_add shifted =\n    shifted relu result =\n"
          "} return result;\n")
BUSY_PAUSE_S = 0.02


def job_pair(client: int, n: int) -> tuple[bytes, bytes]:
    """The request of a client's n-th job, and the result the reference expects: inputs
    of its own, so an answer delivered to the wrong client or twice cannot match."""
    checked = check(SCRIPT)
    graph = checked.graphs["layer"]
    k = client * 1000 + n
    x = Tensor((2, 3), tuple((k * (i + 3)) % 41 - 20 for i in range(6)))
    w = Tensor((3, 2), tuple((k + 7 * i) % 23 - 11 for i in range(6)))
    bias = Tensor((2, 2), (k % 5, -(k % 7), 3, -100))
    _, mnpk, mnrs, _, _ = build_fixture(checked.program, graph, [x, w, bias], 2)
    return mnpk, mnrs


@dataclass
class Client:
    index: int
    jobs: list[tuple[str, bytes, bytes]]  # (mode, request, expected result)
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"sync": [], "async": []})
    wrong: list[str] = field(default_factory=list)
    busy: int = 0

    def run(self, worker, user: str, password: str) -> None:
        dev = CdpDevice(f"load{self.index}", worker.host, worker.port, user, password, None)
        dev.start()
        for n, (mode, request, expected) in enumerate(self.jobs):
            began = time.perf_counter()
            while True:
                try:
                    got = dev.run(request) if mode == "sync" else dev.run_async(request)
                    break
                except DeviceFailure as e:
                    if e.code != "BUSY":
                        raise
                    self.busy += 1
                    time.sleep(BUSY_PAUSE_S)
            self.latencies[mode].append(time.perf_counter() - began)
            if got != expected:
                self.wrong.append(f"client {self.index} job {n} ({mode})")
        self.token = dev.token


def result_gone(worker, token: str, job: int) -> bool:
    status, _, data = call(worker, "GET", f"/api/result?id={job}", token=token, timeout=120)
    return status == 404 and data["error"] == "NO_SUCH_JOB"


@dataclass
class LoadRun:
    clients: list[Client]
    before: dict
    after: dict
    seconds: dict[str, float]  # each phase's wall time

    def count(self, mode: str) -> int:
        return sum(len(c.latencies[mode]) for c in self.clients)

    def figures(self) -> str:
        lines = []
        for mode in ("sync", "async"):
            lat = sorted(x for c in self.clients for x in c.latencies[mode])
            if not lat:
                continue
            p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))]
            lines.append(f"{mode}: {len(lat)} jobs from {len(self.clients)} clients in "
                         f"{self.seconds[mode]:.2f} s = {len(lat) / self.seconds[mode]:.0f} "
                         f"jobs/s; latency p50 {statistics.median(lat) * 1000:.1f} ms, p99 "
                         f"{p99 * 1000:.1f} ms")
        lines.append(f"BUSY answers retried: {sum(c.busy for c in self.clients)}")
        return "\n".join(lines)


def run_load(worker, user: str, password: str, clients: int, sync_jobs: int,
             async_jobs: int) -> LoadRun:
    """Every client's sync jobs at once, then every client's async jobs at once."""
    pairs = {(c, n): job_pair(c, n) for c in range(clients)
             for n in range(max(sync_jobs, async_jobs))}
    before = status_of(worker, 120)
    done = [Client(c, []) for c in range(clients)]
    seconds = {}
    for mode, count in (("sync", sync_jobs), ("async", async_jobs)):
        for c in done:
            c.jobs = [(mode, *pairs[(c.index, n)]) for n in range(count)]
        errors = []

        def body(c=None):
            try:
                c.run(worker, user, password)
            except Exception as e:  # reported by the caller, never lost in a thread
                errors.append(f"client {c.index}: {type(e).__name__}: {e}")
        threads = [threading.Thread(target=body, kwargs={"c": c}) for c in done]
        began = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join(600)
        seconds[mode] = time.perf_counter() - began
        if errors or any(t.is_alive() for t in threads):
            raise AssertionError(f"{mode} load failed: {errors or 'a client never finished'}")
    return LoadRun(done, before, status_of(worker, 120), seconds)


if __name__ == "__main__":
    from bark_vm.container import worker_process
    n_clients, n_sync, n_async = (int(a) for a in (sys.argv[1:] + ["8", "100", "20"])[:3])
    with worker_process("load", "load", "load-pass") as w:
        print(run_load(w, "load", "load-pass", n_clients, n_sync, n_async).figures())
