"""The async job table of bark-worker (spec/wire.md §3.5, DESIGN R20, R43).

Four slots. A slot is occupied from submit until the job's result is read, the job is
cancelled, or RESULT_TTL_S after it ends; a job that ends in error frees its slot when
`/api/job` first reports the error or `/api/result` answers it (with the job's own code).
`jobs_running` in the status is `occupied()`.

Records outlive their slot where a later question still has an answer: an error stays
reportable (by `/api/job` and once by `/api/result`) and a cancelled job stays `cancelled`
until the TTL. A read result, an expired job and an id never issued are NO_SUCH_JOB.
Thread-safe: the accept loop submits, polls, reads and cancels; the executor thread
starts and finishes.
"""
import threading
import time
from dataclasses import dataclass

from ..wire.constants import JOB_CAPACITY, RESULT_TTL_S, WorkerError

QUEUED, RUNNING, DONE, ERROR, CANCELLED = "queued", "running", "done", "error", "cancelled"
MAX_TOMBSTONES = 256  # released records (reported errors, cancelled jobs) kept at most


@dataclass
class Job:
    id: int
    payload: bytes | None
    state: str = QUEUED
    result: bytes | None = None
    error: WorkerError | None = None
    ended: float | None = None
    holds_slot: bool = True

    def to_json(self) -> dict:
        body = {"job": self.id, "state": self.state}
        if self.state == ERROR:
            body.update(code=self.error.code, detail=self.error.detail)
        return body


def _no_such_job(job_id: int, why: str = "is unknown, already read or expired") -> WorkerError:
    return WorkerError("NO_SUCH_JOB", f"job {job_id} {why}")


class JobTable:
    def __init__(self, capacity: int = JOB_CAPACITY, ttl_s: float = RESULT_TTL_S,
                 clock=time.monotonic):
        self.capacity, self.ttl_s, self._clock = capacity, ttl_s, clock
        self._jobs: dict[int, Job] = {}
        self._next_id = 1
        self._lock = threading.Lock()

    # --- bookkeeping (call with the lock held) ---------------------------------------------
    def _prune(self) -> None:
        now = self._clock()
        for job in list(self._jobs.values()):
            if job.ended is not None and now - job.ended >= self.ttl_s:
                del self._jobs[job.id]
        released = [j for j in self._jobs.values() if not j.holds_slot]
        for job in released[:max(0, len(released) - MAX_TOMBSTONES)]:
            del self._jobs[job.id]

    def _occupied(self) -> int:
        return sum(1 for j in self._jobs.values() if j.holds_slot)

    def _get(self, job_id: int) -> Job:
        self._prune()
        job = self._jobs.get(job_id)
        if job is None:
            raise _no_such_job(job_id)
        return job

    def _end(self, job: Job, state: str) -> None:
        job.state, job.ended, job.payload = state, self._clock(), None

    # --- the accept loop's side ------------------------------------------------------------
    def occupied(self) -> int:
        with self._lock:
            self._prune()
            return self._occupied()

    def check_free(self) -> None:
        """BUSY when every slot is occupied (asked before the body is read)."""
        if self.occupied() >= self.capacity:
            raise WorkerError("BUSY", f"all {self.capacity} job slots are occupied; read "
                              "results or retry later")

    def submit(self, payload: bytes) -> Job:
        with self._lock:
            self._prune()
            if self._occupied() >= self.capacity:
                raise WorkerError("BUSY", f"all {self.capacity} job slots are occupied; read "
                                  "results or retry later")
            job = Job(self._next_id, payload)
            self._next_id += 1
            self._jobs[job.id] = job
            return job

    def poll(self, job_id: int) -> dict:
        with self._lock:
            job = self._get(job_id)
            if job.state == ERROR:
                job.holds_slot = False  # R43: reported, so the slot is free
            return job.to_json()

    def take_result(self, job_id: int) -> bytes:
        """The MNRS, read once; NOT_READY while queued or running; an error answers its code."""
        with self._lock:
            job = self._get(job_id)
            if job.state in (QUEUED, RUNNING):
                raise WorkerError("NOT_READY", f"job {job_id} is {job.state}")
            if job.state == CANCELLED:
                raise _no_such_job(job_id, "was cancelled; it has no result")
            del self._jobs[job_id]
            if job.state == ERROR:
                raise job.error
            return job.result

    def cancel(self, job_id: int) -> dict:
        """A queued job becomes `cancelled` and frees its slot; cancelling again repeats the
        answer; a running or finished job is NOT_READY (409)."""
        with self._lock:
            job = self._get(job_id)
            if job.state == QUEUED:
                self._end(job, CANCELLED)
                job.holds_slot = False
            elif job.state != CANCELLED:
                raise WorkerError("NOT_READY", f"job {job_id} is {job.state}; only a queued "
                                  "job can be cancelled")
            return job.to_json()

    # --- the executor's side ---------------------------------------------------------------
    def start(self, job_id: int) -> bytes | None:
        """The payload of a queued job, now running; None when it is gone or cancelled."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.state != QUEUED:
                return None
            job.state = RUNNING
            payload, job.payload = job.payload, None
            return payload

    def finish(self, job_id: int, result: bytes | None = None,
               error: WorkerError | None = None) -> None:
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return
            job.result, job.error = result, error
            self._end(job, ERROR if error is not None else DONE)
