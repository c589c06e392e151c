"""The event-driven scheduler (D9, R17, R38). A definition starts the moment its inputs
exist; each VM device is a serial queue ordered by (level, script order, configuration,
round); local jobs run inline (`--threads 1`) or in a process pool of N. A failed
definition poisons its dependents while independent ones go on. Timing never changes what
is printed: results are keyed by name and errors are ordered by script position."""
import queue
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from ..diagnostics import Diagnostic
from ..graph.model import FlowGraph
from ..interp.evaluate import FlowFailure, evaluate
from ..lang import ast
from ..ops.registry import OpContext
from ..tensor import Tensor
from . import limits
from .device_queue import DeviceQueue
from .devices import DeviceSpec
from .fleet import Fleet
from .job import Job
from .ml_run import MlRun
from .plan import Plan, definitions
from .trace import Trace


@dataclass
class RunResult:
    outputs: dict[str, dict[str, Tensor]] = field(default_factory=dict)
    errors: list[Diagnostic] = field(default_factory=list)
    failed: set[str] = field(default_factory=set)


@dataclass
class Routing:
    """Where jobs go: a user flow's alias (or None), an ML definition's aliases."""

    flows: dict[str, str | None] = field(default_factory=dict)
    ml: dict[str, tuple[str, ...]] = field(default_factory=dict)
    devices: dict[str, DeviceSpec] = field(default_factory=dict)

    @property
    def any(self) -> bool:
        return any(self.flows.values()) or any(self.ml.values())


def _evaluate_job(graph: FlowGraph, inputs, globals_, quantres: int, trap: bool):
    """Run one local job (in this process or a pool worker): ('ok', outputs) or ('err', msg)."""
    try:
        return "ok", evaluate(graph, inputs, globals_, OpContext(quantres), trap)
    except FlowFailure as e:
        return "err", e.message


class Scheduler:
    def __init__(self, program: ast.Program, plan: Plan, graphs: dict[str, FlowGraph],
                 ml: dict, values: dict[str, Tensor], routing: Routing, *, trap: bool = False,
                 threads: int = 1, trace: Trace | None = None, fleet: Fleet | None = None):
        self.program, self.plan, self.graphs, self.ml = program, plan, graphs, ml
        self.values, self.routing, self.trap, self.threads = values, routing, trap, threads
        self.trace = trace or Trace(None)
        self._owns_fleet = fleet is None
        self.fleet = fleet or Fleet(routing.devices)
        self.defs = definitions(program)
        self.position = {name: i for i, name in enumerate(self.defs)}
        self.level: dict[str, int] = {}
        for name in plan.order:
            self.level[name] = 1 + max((self.level[d] for d in plan.deps[name].values()),
                                       default=-1)
        self.result = RunResult()
        self._errors: list[tuple[int, int, Diagnostic]] = []
        self._events: queue.Queue = queue.Queue()
        self._local: deque[Job] = deque()
        self._in_flight = 0
        self._queues: dict[str, DeviceQueue] = {}
        self._pool: ProcessPoolExecutor | None = None
        self._settled: set[str] = set()

    # --- the loop ----------------------------------------------------------------------
    def run(self) -> RunResult:
        """Every planned definition, to its end. On an interrupt (Ctrl-C) or any other
        escape, every device is stopped at once before the exception goes on."""
        self._waiting = list(self.plan.order)
        try:
            self._start_ready()
            while self._local or self._in_flight:
                if self._local:
                    self._run_local(self._local.popleft())
                    continue
                job, outputs, error = self._next_event()
                self._in_flight -= 1
                job.done(outputs, error)
        except BaseException:
            self._abort()
            raise
        self._close()
        self.result.errors = [d for _, _, d in sorted(self._errors, key=lambda e: e[:2])]
        return self.result

    def _next_event(self) -> tuple:
        """The next job answer. Waits in short slices: the kernel may hand SIGINT to a
        device thread, and only a main thread that wakes up runs Python's handler."""
        while True:
            try:
                return self._events.get(timeout=limits.SIGNAL_CHECK_S)
            except queue.Empty:
                continue

    def _close(self) -> None:
        for q in self._queues.values():
            q.close()
        if self._owns_fleet:
            self.fleet.close()
        if self._pool:
            self._pool.shutdown()

    def _abort(self) -> None:
        """Drop queued jobs, stop every device (VM children killed, queued worker jobs
        cancelled), and give the device threads a bounded time to see it."""
        for q in self._queues.values():
            q.abort()
        self.fleet.abort()
        for q in self._queues.values():
            q.join(limits.CLOSE_GRACE_S)
        if self._owns_fleet:
            self.fleet.close()
        if self._pool:
            for proc in list(getattr(self._pool, "_processes", {}).values()):
                proc.terminate()
            self._pool.shutdown(wait=False, cancel_futures=True)

    def submit(self, job: Job) -> None:
        if job.target is None:
            self._local.append(job)
            return
        self._in_flight += 1
        self._queue(job.target).put(job)

    def _queue(self, alias: str) -> DeviceQueue:
        if alias not in self._queues:
            self._queues[alias] = DeviceQueue(self.fleet.device(alias), self.program.quant,
                                              self.trace,
                                              lambda j, o, e: self._events.put((j, o, e)))
        return self._queues[alias]

    def _run_local(self, job: Job) -> None:
        globals_ = {n: self.values[n] for n in job.graph.globals}
        args = (job.graph, job.inputs, globals_, self.program.quant.quantres, self.trap)
        if self.threads > 1:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(max_workers=self.threads)
            self._in_flight += 1
            self.trace.start(job.name, "local", None)
            future = self._pool.submit(_evaluate_job, *args)
            future.add_done_callback(lambda f: self._pool_done(job, f))
            return
        self.trace.start(job.name, "local", None)
        outputs, error = self._local_result(job, _evaluate_job(*args))
        job.done(outputs, error)

    def _pool_done(self, job: Job, future) -> None:
        """On the pool's thread: every pool job is answered, a dead pool process included."""
        try:
            got = future.result()
        except Exception as e:
            got = ("err", f"the local worker process failed ({type(e).__name__})")
        self._events.put((job, *self._local_result(job, got)))

    def _local_result(self, job: Job, got) -> tuple:
        status, value = got
        if status == "ok":
            self.trace.end(job.name, "local", None)
            return value, None
        self.trace.end(job.name, "local", "ERUN")
        return None, Diagnostic("ERUN", f"flow '{job.name}': {value}")

    # --- definitions ---------------------------------------------------------------------
    def _start_ready(self) -> None:
        progress = True
        while progress:
            progress = False
            for name in list(self._waiting):
                if name not in self._waiting:  # started by a nested pass
                    continue
                deps = self.plan.deps[name]
                if not all(d in self._settled for d in deps.values()):
                    continue
                self._waiting.remove(name)
                progress = True
                bad = next(((p, d) for p, d in deps.items() if d in self.result.failed), None)
                if bad:
                    self._fail(name, Diagnostic("ERUN", f"flow '{name}' not run: its input "
                                                f"'{bad[0]}' comes from failed flow '{bad[1]}'"))
                else:
                    self._start(name)

    def _inputs(self, name: str) -> dict[str, Tensor] | None:
        deps, inputs = self.plan.deps[name], {}
        for p in self.defs[name].params:
            if p.name in deps:
                inputs[p.name] = self.result.outputs[deps[p.name]][p.name]
            elif p.name in self.values:
                inputs[p.name] = self.values[p.name]
            else:
                self._fail(name, Diagnostic(
                    "ERUN", f"flow '{name}': parameter '{p.name}' has no value (no flow returns "
                    f"'{p.name}', and there is no in::{p.name} and no --in {p.name}=...)"))
                return None
        return inputs

    def _start(self, name: str) -> None:
        inputs = self._inputs(name)
        if inputs is None:
            return
        d = self.defs[name]
        finish = (lambda out, err: self._finish(name, out, err))
        if isinstance(d, ast.MLDef):
            definition, configs = self.ml[name]
            MlRun(definition, configs, inputs, self.program.quant.quantres,
                  self.routing.ml.get(name, ()), self.level[name], self.position[name],
                  self.submit, finish).start()
            return
        self.submit(Job(key=(self.level[name], self.position[name], 0, 0), name=name,
                        graph=self.graphs[name], inputs=inputs,
                        target=self.routing.flows.get(name), done=finish))

    def _finish(self, name: str, outputs, error: Diagnostic | None) -> None:
        if error is not None:
            self._fail(name, error)
        else:
            self.result.outputs[name] = outputs
            self._settled.add(name)
        self._start_ready()

    def _fail(self, name: str, error: Diagnostic) -> None:
        self.result.failed.add(name)
        self._settled.add(name)
        self._errors.append((self.position[name], len(self._errors), error))
