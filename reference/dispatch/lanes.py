"""How jobs reach their target (D9): one lane per target. A serial lane is a thread that
runs its target's jobs one at a time, lowest key first: every device (VM or worker) has
one, and so has the local interpreter with `--threads 1`; with `--threads N` the local
interpreter's lane is a pool of N processes. Every lane answers every job it takes,
through `report(job, outputs, error)`, and writes the job's trace records: start when the
job is sent, end when it is answered."""
import gc
import heapq
import os
import signal
import threading

from ..diagnostics import Diagnostic
from ..diagnostics.printer import run_line
from ..devices import bounds
from ..targets.local import PickledPrograms, evaluate_program, local_result
from ..failures import DOWN, TargetFailure, internal_error
from ..targets.target import LOCAL
from ..interrupts import deferred
from .job import Job
from .trace import Trace



def _fork():
    """The pool's processes are forked (their inherited pages untouched, see submit), and
    so children of this one: what _terminate checks before it signals a pid. Imported on
    the first pool: a run with --threads 1 never loads multiprocessing."""
    import multiprocessing
    return multiprocessing.get_context("fork")


def loss(flow: str, error: Diagnostic) -> tuple[str, str]:
    """How a device failed job `flow`, kept for the jobs it is no longer sent: the cause,
    and the failure as the device said it (the job's line without its `flow '...': `)."""
    return error.cause, error.message.removeprefix(f"flow '{flow}': ")


def lost_alias(flow: str, lost: tuple[str, str]) -> Diagnostic:
    """A job not sent to a device lost earlier in the run: it fails as the device did, as
    a broken device fails every later job the same way."""
    cause, said = lost
    return Diagnostic("ERUN", f"flow '{flow}': {said}", cause=cause)


def run_on(target, job: Job, trace: Trace):
    """Run one job on its target: (outputs, None) or (None, Diagnostic). Whatever the target
    raises becomes the job's coded answer. The trace's start is written when the target
    starts the job (a refusal before sending writes no records)."""
    started = []

    def on_start() -> None:
        started.append(True)
        trace.start(job.name, target.name, target.pid)

    try:
        outputs, io = target.run(job.graph, job.inputs, job.globals, job.round_flow, on_start)
    except TargetFailure as f:
        if started:
            trace.end(job.name, target.name, f.trace_code, message=run_line(f.diagnostic),
                      io=f.io)
        return None, f.diagnostic
    except Exception as e:  # a bug or a lying device: the job still gets an answer
        d = internal_error(job.name, target.name, e)
        if started:
            trace.end(job.name, target.name, "ERUN", message=run_line(d))
        return None, d
    trace.end(job.name, target.name, None, outputs, io=io)
    return outputs, None


class SerialLane:
    """A device's jobs, one at a time on its own thread, ordered by job key. Once a job
    fails because the device itself did (DOWN), the device is lost for the run:
    `lost` (the run's, shared by its lanes) names it, and no later job is sent to it."""

    def __init__(self, target, trace: Trace, report, lost: dict | None = None):
        self.target, self.trace, self.report = target, trace, report
        self.lost = {} if lost is None else lost
        self._heap: list[Job] = []
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name=f"lane-{target.name}",
                                        daemon=True)
        self._thread.start()

    def submit(self, job: Job) -> None:
        with self._cond:
            if self._thread.is_alive() and not self._closed:
                heapq.heappush(self._heap, job)
                self._cond.notify()
                return
        self.report(job, None, self._stopped(job))

    def _queue(self, job: Job) -> None:
        """A chain's next job, from this lane's own thread: queued here unless stopping."""
        with self._cond:
            if not self._closed:
                heapq.heappush(self._heap, job)
                return
        self.report(job, None, self._stopped(job))

    def _stopped(self, job: Job) -> Diagnostic:
        return _stopped(job, self.target.name)

    def close(self) -> None:
        """Run what is queued, then stop."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join()

    def abort(self) -> None:
        """Stop without running what is queued (Ctrl-C). The job in progress ends when the
        target itself is aborted (the fleet's part)."""
        with self._cond:
            self._closed = True
            self._heap = []
            self._cond.notify()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def _loop(self) -> None:
        job = None
        try:
            while True:
                with self._cond:
                    while not self._heap and not self._closed:
                        self._cond.wait()
                    if not self._heap:
                        return
                    job = heapq.heappop(self._heap)
                alias = self.target.name
                if alias in self.lost:
                    outputs, error = None, lost_alias(job.name, self.lost[alias])
                else:
                    outputs, error = run_on(self.target, job, self.trace)
                    if error is not None and error.cause in DOWN and alias != LOCAL:
                        self.lost.setdefault(alias, loss(job.name, error))
                followed, error = _follow(job, outputs, error)
                if followed is None:
                    self.report(job, outputs, error)
                else:
                    self._queue(followed)
                job = None
        finally:
            # Only a BaseException gets here with work left: answer it rather than leave the
            # scheduler waiting on jobs nobody will report.
            with self._cond:
                left, self._heap = ([job] if job else []) + self._heap, []
            for j in left:
                self.report(j, None, self._stopped(j))


class PoolLane:
    """The local interpreter's jobs in a pool of N processes (`--threads N`); the answer
    always goes through `report`, a dead pool process included."""

    def __init__(self, target, trace: Trace, report, threads: int):
        self.target, self.trace, self.report, self.threads = target, trace, report, threads
        import uuid
        self._pool = None  # a ProcessPoolExecutor, from the first submit
        # Each pool process writes its pid here as it starts, unless the lane is stopping,
        # in which case it exits at once: abort() raises the flag, then ends those it finds.
        self._pids = _fork().Array("i", threads)
        self._stopping = _fork().Value("b", 0)
        self._programs = PickledPrograms()
        self._run_id = uuid.uuid4().hex  # a pool process's programs are this run's only
        self._lock = threading.Lock()  # the pool, made or renewed on any thread

    def submit(self, job: Job) -> None:
        self.trace.start(job.name, self.target.name, None)
        self._send(job, again=True)

    def _send(self, job: Job, again: bool) -> None:
        """The job to the pool (forked at the first job, or anew after a pool process
        died); `again`: whether it may run once more should its pool break."""
        token, blob = self._programs.of(job.graph)
        args = (evaluate_program, self._run_id, token, blob, job.name, job.inputs,
                job.globals, self.target.quantres, self.target.trap, self.target.reference)
        with self._lock:
            if self._pool is None:
                # The first submit forks the pool's processes. With the coordinator's objects
                # frozen meanwhile, the children's collector never walks (and so never
                # copies) the pages they inherit. A Ctrl-C waits until the pool is known to
                # abort().
                gc.freeze()
                try:
                    with deferred():
                        from concurrent.futures import ProcessPoolExecutor
                        self._pool = ProcessPoolExecutor(
                            max_workers=self.threads, mp_context=_fork(),
                            initializer=_note_pid, initargs=(self._pids, self._stopping))
                        future = self._pool.submit(*args)
                finally:
                    gc.unfreeze()
            else:
                future = self._pool.submit(*args)
            pool = self._pool
        future.add_done_callback(lambda f: self._pool_done(job, f, pool, again))

    def _renew(self, broken) -> None:
        """A process of `broken` died: the next job forks a fresh pool (once for all the
        jobs the broken one held); the dead processes' pid slots are freed."""
        with self._lock:
            if self._pool is not broken:
                return
            self._pool = None
            with self._pids.get_lock():
                for k in range(len(self._pids)):
                    self._pids[k] = 0
        broken.shutdown(wait=False, cancel_futures=True)

    def _pool_done(self, job: Job, future, pool=None, again: bool = False) -> None:
        """On the pool's thread: every pool job is answered, a dead pool process included:
        a job whose pool broke (a process killed, out of memory) runs once more on a fresh
        pool, and only then is its failure the job's."""
        from concurrent.futures.process import BrokenProcessPool
        try:
            got = future.result()
        except BrokenProcessPool as e:
            if again and pool is not None and not self._stopping.value:
                self._renew(pool)
                try:
                    return self._send(job, again=False)
                except Exception:  # a pool that cannot be forked: the job's failure below
                    pass
            got = ("err", f"the local worker process failed ({type(e).__name__})")
        except Exception as e:
            got = ("err", f"the local worker process failed ({type(e).__name__})")
        try:
            outputs, error, code = local_result(job.name, got), None, None
        except TargetFailure as f:
            outputs, error, code = None, f.diagnostic, f.trace_code
        self.trace.end(job.name, self.target.name, code, outputs,
                       run_line(error) if error is not None else None)
        followed, error = _follow(job, outputs, error)
        if followed is None:
            self.report(job, outputs, error)
        elif self._stopping.value:  # aborted meanwhile: the pool takes no more jobs
            self.report(followed, None, _stopped(followed, self.target.name))
        else:
            try:
                self.submit(followed)
            except Exception as e:  # a pool shut down meanwhile, or worse: still answered
                self.report(followed, None, internal_error(followed.name, self.target.name, e))

    def close(self) -> None:
        if self._pool:
            self._pool.shutdown()

    def abort(self) -> None:
        self._stopping.value = 1  # from now on no broken pool is renewed
        with self._lock:
            pool = self._pool
        if pool:
            with self._pids.get_lock():
                pids = self._pids[:]
            for pid in pids:
                if pid:
                    _terminate(pid)
            # The pool's manager thread closes its wake-up pipe as it ends, and CPython
            # 3.11's exit writes to that pipe unlocked: both at once print "Bad file
            # descriptor" after the Ctrl-C notice. Its processes were just ended, so it
            # ends at once; waiting for it (bounded) leaves the exit nothing to race.
            # (shutdown() drops the pool's reference to it: taken first.)
            manager = getattr(pool, "_executor_manager_thread", None)
            pool.shutdown(wait=False, cancel_futures=True)
            if manager is not None:
                manager.join(bounds.CLOSE_GRACE_S)

    def join(self, timeout: float) -> None:
        pass


def _stopped(job: Job, target: str) -> Diagnostic:
    return Diagnostic("ERUN", f"flow '{job.name}': device '{target}': its queue stopped")


def _follow(job: Job, outputs, error) -> tuple[Job | None, Diagnostic | None]:
    """(the job continuing this one's chain on its lane, or None; the error to report). A
    follow that fails is the job's internal error, reported like any other."""
    if error is not None or job.follow is None:
        return None, error
    try:
        return job.follow(outputs), None
    except TargetFailure as f:  # the coordinator's own part failed (a journal not written)
        return None, f.diagnostic
    except Exception as e:
        return None, internal_error(job.name, job.target, e)


def _note_pid(pids, stopping) -> None:
    """A pool process's first act: its pid in the slots the coordinator stops it by, or,
    when the lane is already stopping, its end (abort() may have read the slots already)."""
    with pids.get_lock():
        free = [i for i, pid in enumerate(pids) if pid == 0]
        if free:
            pids[free[0]] = os.getpid()
    if stopping.value:
        os._exit(0)


def _terminate(pid: int) -> None:
    """SIGTERM one pool process, if that pid is still a child of this one (a process gone
    meanwhile, its pid perhaps reused, is left alone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            parent = int(f.read().rpartition(b")")[2].split()[1])
        if parent == os.getpid():
            os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError, IndexError):
        pass
