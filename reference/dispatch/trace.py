"""Observability (R32): every job's start and end as they happen. Each event goes to a sink
(the CLI's `--trace FILE` writes one JSON line per event, flushed at once), each finished
job to a progress callback, and every job becomes a timing record of the report."""
import json
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

from ..diagnostics.printer import mask


@dataclass(frozen=True)
class JobRecord:
    """One job's timing: seconds since the run began; outcome "ok" or the error code;
    digest, for a job that answered, the SHA-256 of its outputs (`outputs_digest`), so two
    runs can be compared job by job (round by round) without keeping every value."""

    flow: str
    target: str
    pid: int | None
    start: float
    end: float
    outcome: str
    digest: str | None = None


def outputs_digest(outputs: dict) -> str:
    """SHA-256 of canonical JSON of {name: [shape, values]} (sorted keys, no spaces): the
    text `json.dumps(doc, sort_keys=True, separators=(",", ":"))` gives, written directly
    (every job pays it, on its lane)."""
    doc = ",".join(f"{json.dumps(name)}:[[{','.join(map(str, outputs[name].shape))}],"
                   f"[{','.join(map(str, outputs[name].data))}]]" for name in sorted(outputs))
    import hashlib
    return hashlib.sha256(("{" + doc + "}").encode()).hexdigest()


@dataclass(frozen=True)
class JobDone:
    """A progress event: the `done`-th job to finish; error None when it succeeded."""

    done: int
    flow: str
    target: str
    error: str | None


@dataclass(frozen=True)
class Planned:
    """A progress event: a definition's job count, known when it starts (a flow: 1; an ML
    definition: all its rounds, times --replicas), and its jobs' flows in job order
    (configuration, then round), by which --progress orders its plain lines."""

    definition: str
    jobs: int
    flows: tuple[str, ...] = ()


@dataclass(frozen=True)
class Settled:
    """A progress event: a definition ended (failed: with an error). Until then a job that
    failed may be followed by more of its jobs (a sweep's chain moved to another alias)."""

    definition: str
    failed: bool


@dataclass(frozen=True)
class JobStarted:
    """A progress event: a job was sent to its target."""

    flow: str
    target: str


@dataclass(frozen=True)
class Phase:
    """A progress event: a phase of the run beyond its jobs (`verify`) began or ended."""

    name: str
    ended: bool


VERIFY = "verify"  # the phase of the --verify re-run
COORDINATOR = "coordinator"  # the target of the work the coordinator does inline


def definition_of(flow: str) -> str:
    """The definition a job belongs to: `fit` for the round `fit#c1#r7`."""
    return flow.split("#", 1)[0]


class Trace:
    """Thread-safe; `sink(record)` receives each start/end record (a dict), `progress(JobDone)`
    each finished job, in order, on the thread that ran the job. A callback that raises is
    not called again and its failure is kept in `failures`: a broken trace never stops a
    job from being answered."""

    def __init__(self, sink=None, progress=None):
        self._sink, self._progress = sink, progress
        self._lock = threading.Lock()
        self._t0 = time.monotonic()
        self._started: dict[str, tuple[str, int | None, float]] = {}
        self.jobs: list[JobRecord] = []
        self.failures: list[str] = []

    def _now(self) -> float:
        return round(time.monotonic() - self._t0, 6)

    def start(self, flow: str, target: str, pid: int | None) -> None:
        with self._lock:
            now = self._now()
            self._started[flow, target] = (pid, now)  # replicas: one flow, several targets
            if self._sink:  # no record is built for nobody (every job passes here)
                self._emit({"event": "start", "flow": flow, "target": target, "pid": pid,
                            "time": now})
            if self._progress:
                self._tell(JobStarted(flow, target))

    def planned(self, definition: str, jobs: int, flows: tuple[str, ...] = ()) -> None:
        with self._lock:
            self._tell(Planned(definition, jobs, tuple(flows)))

    def settled(self, definition: str, failed: bool) -> None:
        with self._lock:
            self._tell(Settled(definition, failed))

    def phase(self, name: str, ended: bool) -> None:
        with self._lock:
            self._emit({"event": "phase", "phase": name, "state": "end" if ended else "start",
                        "time": self._now()})
            self._tell(Phase(name, ended))

    @contextmanager
    def coordinator(self, step: str, name: str):
        """Work the coordinator does inline (an ML definition's init, epilogue or Tier B
        fit) as a start and an end record, `"target": "coordinator"`; not a job (no
        JobRecord, no progress event)."""
        with self._lock:
            self._emit({"event": "start", "flow": name, "target": COORDINATOR,
                        "step": step, "time": self._now()})
        ok = False
        try:
            yield
            ok = True
        finally:
            with self._lock:
                self._emit({"event": "end", "flow": name, "target": COORDINATOR,
                            "step": step, "ok": ok, "time": self._now()})

    def _tell(self, event) -> None:
        if self._progress:
            self._progress = self._guarded(self._progress, event, "the progress callback")

    def end(self, flow: str, target: str, error_code: str | None,
            outputs: dict | None = None, message: str | None = None,
            io: tuple[int, int | None] | None = None) -> None:
        """The job's end record: its target and pid again; for a routed job the bytes it
        sent and received (`io`); for a failure its code and the whole coded line
        (`message`, masked like every printed line)."""
        digest = outputs_digest(outputs) if outputs is not None else None
        with self._lock:
            now = self._now()
            pid, began = self._started.pop((flow, target), (None, now))
            if self._sink:
                record = {"event": "end", "flow": flow, "target": target, "pid": pid}
                if io is not None:
                    record["sent"], record["received"] = io
                record.update({"ok": True} if error_code is None else {"ok": False,
                                                                       "error": error_code})
                if error_code is not None and message:
                    record["message"] = mask(message)
                record["time"] = now
                self._emit(record)
            self.jobs.append(JobRecord(flow, target, pid, began, now, error_code or "ok",
                                       digest))
            if self._progress:
                self._tell(JobDone(len(self.jobs), flow, target, error_code))

    def _emit(self, record: dict) -> None:
        if self._sink:
            self._sink = self._guarded(self._sink, record, "the trace")

    def _guarded(self, callback, arg, what: str):
        """Call it; the callback to keep (None once it has failed)."""
        try:
            callback(arg)
            return callback
        except Exception as e:
            self.failures.append(f"{what} failed ({type(e).__name__}: {e}); the run went on "
                                 "without it")
            return None
