"""The one executor thread of bark-worker (DESIGN D6, R18, R43).

Sync and async jobs share it, first in first out: a sync request that arrives while
another job runs waits its turn. The accept loop only queues work here, so it keeps
answering `/api/status` while a job executes.
"""
import queue
import threading
import traceback


class Runner:
    def __init__(self, log=None):
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._log = log
        self._thread = threading.Thread(target=self._loop, name="bark-executor", daemon=True)
        self._thread.start()

    def submit(self, work) -> None:
        """Queue a callable taking no arguments."""
        self._queue.put(work)

    def stop(self, timeout: float | None = None) -> None:
        self._queue.put(None)
        self._thread.join(timeout)

    def _loop(self) -> None:
        while True:
            work = self._queue.get()
            if work is None:
                return
            try:
                work()
            except Exception:  # a job's failure is answered by the work itself; never die
                if self._log is not None:
                    self._log("executor: unexpected failure:\n" + traceback.format_exc())
