"""The event-driven scheduler (D9, R17, R38). A definition starts the moment its inputs
exist; every job goes to its target's lane (a device's serial lane ordered by (level,
script order, configuration, round), or the local interpreter's); the local target is a
target like any other. A failed definition poisons its dependents while independent ones
go on. Timing never changes what is printed: results are keyed by name and errors are
ordered by script position."""
import queue
import time
from dataclasses import dataclass, field

from ..diagnostics import Diagnostic
from ..graph.flow_graph import FlowGraph
from ..lang import ast
from ..devices import bounds
from ..targets.target import LOCAL
from ..tensor import Tensor
from .fleet import Fleet
from .job import Job
from .lanes import PoolLane, SerialLane
from .plan import Plan, definitions
from .trace import Trace


@dataclass
class RunResult:
    outputs: dict[str, dict[str, Tensor]] = field(default_factory=dict)
    errors: list[Diagnostic] = field(default_factory=list)
    failed: set[str] = field(default_factory=set)
    # an ML definition's configurations, how each ended (ml_run.ConfigOutcome)
    configurations: dict[str, list] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what the run says beside (a move)
    # aliases that failed in a way another worker would not, and how: no more work for them
    lost: dict[str, tuple[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Workload:
    """What a scheduler runs: the checked script (its program, every flow's graph, every ML
    definition with its configurations), its plan, and the input values (in:: and `--in`,
    and the globals the top-level statements bound)."""

    program: ast.Program
    plan: Plan
    graphs: dict[str, FlowGraph]
    ml: dict[str, tuple[ast.MLDef, list[dict]]]
    values: dict[str, Tensor]


@dataclass
class Routing:
    """Where jobs go: a user flow's alias (or None: local), an ML definition's aliases."""

    flows: dict[str, str | None] = field(default_factory=dict)
    ml: dict[str, tuple[str, ...]] = field(default_factory=dict)
    devices: dict = field(default_factory=dict)  # alias -> DeviceSpec

    @property
    def any(self) -> bool:
        return any(self.flows.values()) or any(self.ml.values())


class Scheduler:
    def __init__(self, work: Workload, routing: Routing, fleet: Fleet | None = None, *,
                 threads: int = 1, trace: Trace | None = None, reference: bool = False,
                 journal=None, replicas: int = 1):
        """work goes where routing says, on fleet's targets (without one, a fleet of its
        own, closed at the end, whose local target is the reference alone with
        `reference`); threads: the local pool's width; trace: the run's Trace, told of
        every job; journal: the run's Journal (--journal), every completed round written
        to it and every round it holds not run again; replicas: how many aliases each
        routed round of an ML definition runs on at once (--replicas)."""
        self.journal, self.replicas = journal, replicas
        self.program, self.plan, self.graphs, self.ml = (work.program, work.plan, work.graphs,
                                                         work.ml)
        self.values, self.routing, self.threads = work.values, routing, threads
        self.trace = trace or Trace()
        self._owns_fleet = fleet is None
        self.fleet = fleet or Fleet(routing.devices, work.program.quant, reference=reference)
        self.defs = definitions(work.program)
        self.position = {name: i for i, name in enumerate(self.defs)}
        self.level: dict[str, int] = {}
        for name in self.plan.order:
            self.level[name] = 1 + max((self.level[d] for d in self.plan.deps[name].values()),
                                       default=-1)
        self.result = RunResult()
        self._errors: list[tuple[int, int, Diagnostic]] = []
        self._events: queue.Queue = queue.Queue()
        self._in_flight = 0
        self._lanes: dict = {}
        self._settled: set[str] = set()

    @property
    def reference(self) -> bool:
        """Whether this run's local work is the reference's alone (not the exact engine's)."""
        return self.fleet.reference

    # --- the loop ----------------------------------------------------------------------
    def run(self) -> RunResult:
        """Every planned definition, to its end. On an interrupt (Ctrl-C) or any other
        escape, every target is stopped at once before the exception goes on."""
        self._waiting = list(self.plan.order)
        try:
            self._start_ready()
            while self._in_flight:
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
        lane's thread, and only a main thread that wakes up runs Python's handler."""
        while True:
            try:
                return self._events.get(timeout=bounds.SIGNAL_CHECK_S)
            except queue.Empty:
                continue

    def submit(self, job: Job) -> None:
        self._in_flight += 1
        self._lane(job.target).submit(job)

    @property
    def lost(self) -> dict[str, tuple[str, str]]:
        """The aliases that failed in a way another worker would not: no more work goes to
        them in this run."""
        return self.result.lost

    def note(self, text: str) -> None:
        """A line the run says beside its outputs (a configuration moved to another alias)."""
        self.result.notes.append(text)

    def prepare(self, target: str, graph: FlowGraph, inputs: dict[str, Tensor]) -> None:
        """Compile a job's flow ahead, on this thread, for the target it will run on."""
        self.fleet.target(target).prepare(graph, inputs)

    def sync_sizing(self, target: str):
        """(request_size(graph, inputs), limit) for a target whose requests go async from
        `limit` bytes on (a CDP worker), else None."""
        t = self.fleet.target(target)
        limit = t.sync_limit
        return None if limit is None else (t.request_size, limit)

    def _lane(self, name: str):
        if name not in self._lanes:
            target = self.fleet.target(name)
            report = (lambda j, o, e: self._events.put((j, o, e)))
            width = min(self.threads, self._most_at_once())
            self._lanes[name] = (PoolLane(target, self.trace, report, width)
                                 if name == LOCAL and width > 1
                                 else SerialLane(target, self.trace, report,
                                                 self.result.lost))
        return self._lanes[name]

    def _most_at_once(self) -> int:
        """The most jobs the run can have at once: one per flow and per ML configuration
        (a configuration's rounds are a chain), so a pool is never wider than that."""
        return sum(len(self.ml[name][1]) if name in self.ml else 1 for name in self.plan.order)

    def _close(self) -> None:
        for lane in self._lanes.values():
            lane.close()
        if self._owns_fleet:
            self.fleet.close()

    def _abort(self) -> None:
        """Drop queued jobs, stop every target (VM children killed, queued worker jobs
        cancelled, pool processes ended), and give the device lanes a bounded time to see
        it. The local interpreter's thread is not waited for: a job in pure Python cannot
        be cut short, and its daemon thread ends with the process."""
        for lane in self._lanes.values():
            lane.abort()
        self.fleet.abort()
        end = time.monotonic() + bounds.CLOSE_GRACE_S  # one grace for all the lanes
        for name, lane in self._lanes.items():
            if name != LOCAL:
                lane.join(max(0.0, end - time.monotonic()))
        if self._owns_fleet:
            self.fleet.close()

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
        if isinstance(d, ast.MLDef):
            definition, configs = self.ml[name]
            from .ml_run import MlDefinition, MlRun, Placement  # the ML stack, when used
            run = MlRun(MlDefinition(definition, tuple(configs), self.program.quant.quantres),
                        inputs, Placement(self.routing.ml.get(name, ()), self.level[name],
                                          self.position[name]), self,
                        lambda out, errors: self._finish(name, out, errors))
            self.result.configurations[name] = run.outcomes
            run.start()
            return
        graph = self.graphs[name]
        self.trace.planned(name, 1, (name,))
        self.submit(Job(key=(self.level[name], self.position[name], 0, 0), name=name,
                        graph=graph, inputs=inputs,
                        globals={n: self.values[n] for n in graph.globals},
                        target=self.routing.flows.get(name) or LOCAL,
                        done=lambda out, err: self._finish(name, out, (err,) if err else ())))

    def _finish(self, name: str, outputs, errors: tuple[Diagnostic, ...]) -> None:
        """A definition's end: its outputs (a sweep's: those of the configurations that
        finished, printed whatever became of the others), and its errors; a definition with
        an error counts as failed for the flows that read it."""
        if outputs is not None:
            self.result.outputs[name] = outputs
        if errors:
            self._fail(name, *errors)
        self._settled.add(name)
        self.trace.settled(name, bool(errors))
        self._start_ready()

    def _fail(self, name: str, *errors: Diagnostic) -> None:
        self.result.failed.add(name)
        self._settled.add(name)
        for error in errors:
            self._errors.append((self.position[name], len(self._errors), error))
