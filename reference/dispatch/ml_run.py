"""One calc::ml:: definition on the scheduler (D10, R13): per configuration a local init, a
chain of round jobs (configuration i on alias i mod N when routed), then one local
epilogue `NAME` for all configurations. Tier B is one local fit. A configuration fails
alone (docs/fleet.md, "When a worker fails"): the others run to their end, and the
definition finishes with the outputs of those that did and one error per one that did not."""
from dataclasses import dataclass
from typing import Callable, Protocol

from ..diagnostics import Diagnostic
from ..graph.flow_graph import FlowGraph
from ..lang import ast, limits
from ..ml.algorithms import is_tier_a, module_for
from ..failures import DOWN, MOVABLE, Refused
from ..ml.chunking import round_count, round_spans, steps_per_round, sync_steps
from ..ml.round_graphs import RoundGraphs, round_name
from ..ml.train import bind_returns, fit_tier_b
from ..targets.target import LOCAL
from ..tensor import Tensor
from .job import Job
from .lanes import loss, lost_alias
from .trace import Trace


@dataclass(frozen=True)
class MlDefinition:
    """A checked calc::ml:: definition: its syntax, its configurations (one per sweep point)
    and the script's quantres q."""

    d: ast.MLDef
    configs: tuple[dict, ...]
    q: int


@dataclass(frozen=True)
class Placement:
    """Where a definition's jobs go and where they queue: configuration i on
    aliases[i mod N] (none: the local interpreter); its jobs' keys start at (level,
    position), the definition's dependency level and script order."""

    aliases: tuple[str, ...]
    level: int
    position: int


class Coordinator(Protocol):
    """What an MlRun asks of the scheduler it runs on. Its trace (the run's) is told how
    many round jobs the definition runs, and records the init, epilogue and Tier B fit the
    coordinator computes inline."""

    trace: Trace
    reference: bool  # the run's local work on the reference alone, not the exact engine
    lost: dict[str, tuple]  # the run's aliases that failed, and how: no more work for them
    journal: object  # the run's Journal (--journal), or None

    def note(self, text: str) -> None:
        """Say a line beside the run's outputs."""

    def submit(self, job: Job) -> None:
        """Queue a job."""

    def prepare(self, target: str, graph: FlowGraph, inputs: dict[str, Tensor]) -> None:
        """Compile a later round's flow ahead, for the target it will run on."""

    def sync_sizing(self, target: str) -> tuple | None:
        """(request_size(graph, inputs), limit) for a CDP worker, else None (D10)."""


# (outputs, errors): the end; outputs of the configurations that finished (None: none did),
# and one error per configuration that did not, in configuration order
Finish = Callable[[dict | None, tuple[Diagnostic, ...]], None]


@dataclass
class ConfigOutcome:
    """How one configuration ended: finished, moved (finished after its chain moved to
    another alias), resumed (finished after its first rounds were read from the journal)
    or failed; the aliases its rounds ran on (empty: the local engine), how many of its
    rounds ran, and how many of them the journal gave."""
    status: str = "running"
    devices: tuple[str, ...] = ()
    rounds: int = 0
    moved: bool = False
    journaled: int = 0


class MlRun:
    def __init__(self, definition: MlDefinition, inputs: dict[str, Tensor],
                 placement: Placement, coordinator: Coordinator, finish: Finish):
        """inputs: the definition's argument values; finish(outputs, error) ends it."""
        self.d, self.configs, self.q = definition.d, definition.configs, definition.q
        self.inputs, self.finish = inputs, finish
        self.aliases, self.level, self.position = (placement.aliases, placement.level,
                                                   placement.position)
        self.submit, self.prepare = coordinator.submit, coordinator.prepare
        self.sync_sizing, self.trace = coordinator.sync_sizing, coordinator.trace
        self.lost, self.note = coordinator.lost, coordinator.note
        self.journal = coordinator.journal
        self.targets = [self.aliases[i % len(self.aliases)] if self.aliases else LOCAL
                        for i in range(len(self.configs))]
        self.module = module_for(self.d.algo)
        if not coordinator.reference:  # the per-row loops on numpy (DESIGN §14)
            from ..engine.ml import on_engine
            self.module = on_engine(self.d.algo, self.module)
        self.outcomes = [ConfigOutcome() for _ in self.configs]
        self.errors: dict[int, Diagnostic] = {}

    def _refused(self, reason: str) -> Diagnostic:
        return Diagnostic("E028", f"ml definition '{self.d.name}' ({self.d.algo}): {reason}",
                          self.d.pos)

    def start(self) -> None:
        args = [self.inputs[p.name] for p in self.d.params]
        x, y = args[0], (args[1] if len(args) > 1 else None)
        try:
            if not is_tier_a(self.d.algo):
                with self.trace.coordinator("fit", self.d.name):
                    results = [(fit_tier_b(self.module, x, y, c, self.q), None)
                               for c in self.configs]
                for outcome in self.outcomes:
                    outcome.status = "finished"
                return self.finish(bind_returns(self.d, results), ())
            self.starts = []
            for i, c in enumerate(self.configs):
                with self.trace.coordinator("init", f"{self.d.name}#c{i}#init"):
                    self.starts.append(self.module.init(x, y, c, self.q))
            self.graphs = RoundGraphs(self.module, self.d.name, self.q)
            per_round = [self._steps(i, s, c)
                         for i, (s, c) in enumerate(zip(self.starts, self.configs))]
        except Refused as r:
            return self.finish(None, (self._refused(r.reason),))
        rounds = sum(round_count(s.steps, k) for s, k in zip(self.starts, per_round))
        refusal = limits.over(limits.ROUNDS, f"ml definition '{self.d.name}' expands to",
                              rounds, self.d.pos, "ml")
        if refusal:  # before its first round runs, and before its rounds are listed
            return self.finish(None, (refusal,))
        self.spans = [round_spans(s.steps, k) for s, k in zip(self.starts, per_round)]
        self.states = [dict(s.state) for s in self.starts]
        self.extras: list[list] = [[] for _ in self.configs]
        try:
            resumed = [self._resume(i) for i in range(len(self.configs))]
        except Refused as r:  # the journal cut this definition's rounds otherwise
            return self.finish(None, (self._refused(r.reason),))
        self.trace.planned(self.d.name, rounds, [round_name(self.d.name, i, r)
                                                 for i, spans in enumerate(self.spans)
                                                 for r in range(len(spans))])
        self.left = len(self.configs)
        for i, r in enumerate(resumed):
            if r < len(self.spans[i]):
                self.submit(self._round_job(i, r))
            else:  # the journal holds the whole chain
                self.left -= 1
        if self.left == 0:
            return self._epilogue()
        self._prepare_rounds()

    def _resume(self, i: int) -> int:
        """Configuration i's rounds the journal holds, from the first on, applied as if
        they had just run (Refused when the journal cut them otherwise); the round to run
        next."""
        r = 0
        while self.journal is not None and r < len(self.spans[i]):
            outputs = self.journal.done(round_name(self.d.name, i, r), *self.spans[i][r])
            if outputs is None:
                break
            if not set(self.starts[i].state) <= {name for name, _, _ in outputs}:
                raise Refused(f"--journal: its round '{round_name(self.d.name, i, r)}' does "
                              "not hold this definition's state: start a new journal")
            self._apply(i, [(name, Tensor(tuple(shape), tuple(data)))
                            for name, shape, data in outputs])
            r += 1
        self.outcomes[i].rounds = self.outcomes[i].journaled = r
        return r

    def _steps(self, i: int, start, cfg: dict) -> int:
        """Steps per round (R13); without an explicit `budget:`, rounds to a CDP worker hold
        no more than keeps their requests under its sync limit (D10)."""
        def build(first: int, count: int):
            return self.graphs.build(i, start, cfg, first, count)
        k = steps_per_round(self.module, round_name(self.d.name, i, 0), start, cfg, self.q,
                            build)
        target = self._target(i)
        explicit = any(h.key == "budget" for h in self.d.hypers)
        sizing = None if explicit or target == LOCAL else self.sync_sizing(target)
        if sizing is None:
            return k
        request_size, limit = sizing
        inputs = {**start.constants, **start.state}
        return sync_steps(build, k, lambda graph: request_size(graph, inputs), limit)

    def _prepare_rounds(self) -> None:
        """While the first rounds run, build each later round's program and compile it for
        its target, once per distinct program (most are the first round's; a chain's last,
        shorter round is not)."""
        seen = {(self._target(i), self.module.round_key(*self.spans[i][0], cfg))
                for i, cfg in enumerate(self.configs)}
        for i, (start, cfg) in enumerate(zip(self.starts, self.configs)):
            for r, (first, count) in enumerate(self.spans[i][1:], 1):
                key = (self._target(i), self.module.round_key(first, count, cfg))
                if key in seen:
                    continue
                seen.add(key)
                graph = self.graphs.build(i, start, cfg, first, count, r)
                if self._target(i) != LOCAL:
                    self.prepare(self._target(i), graph, {**start.constants, **start.state})

    def _target(self, i: int) -> str:
        """Where configuration i's rounds go: alias i mod N, until its chain moves."""
        return self.targets[i]

    def _round_job(self, i: int, r: int) -> Job:
        """Round r of configuration i. Its chain goes on from the lane that runs it
        (`follow`); the scheduler hears of the chain again at its end or its failure."""
        first, count = self.spans[i][r]
        graph = self.graphs.build(i, self.starts[i], self.configs[i], first, count, r)
        return Job(key=(self.level + r + 1, self.position, i, r), name=graph.flow, graph=graph,
                   inputs={**self.starts[i].constants, **self.states[i]},
                   target=self._target(i), round_flow=True,
                   follow=lambda outputs: self._next_round(i, r, graph, outputs),
                   done=lambda outputs, error: self._chain_done(i, error))

    def _next_round(self, i: int, r: int, graph, outputs) -> Job | None:
        """On the lane that ran round r of configuration i: its outputs become the chain's
        state, and round r + 1 is the job that lane runs next (None: the chain's last round
        ran, or its alias failed meanwhile and the chain leaves it: `_chain_done`)."""
        self._ran(i, r)
        ordered = [(n, outputs[n]) for n, _ in graph.outputs]
        if self.journal is not None:  # on the disk before the round counts as done
            self.journal.record(graph.flow, *self.spans[i][r],
                                [[n, list(t.shape), list(t.data)] for n, t in ordered])
        self._apply(i, ordered)
        if r + 1 == len(self.spans[i]) or self.targets[i] in self.lost:
            return None
        return self._round_job(i, r + 1)

    def _apply(self, i: int, outputs: list[tuple[str, Tensor]]) -> None:
        """A round's outputs, in its flow's order: its state becomes the chain's, the rest
        (the extras) are kept for the epilogue."""
        state, by_name = self.starts[i].state, dict(outputs)
        self.states[i] = {k: by_name[k] for k in state}
        self.extras[i].extend(t for n, t in outputs if n not in state)

    def _ran(self, i: int, r: int) -> None:
        """Round r of configuration i ran on its target."""
        outcome, target = self.outcomes[i], self._target(i)
        outcome.rounds = r + 1
        if target != LOCAL and target not in outcome.devices:
            outcome.devices += (target,)

    def _chain_done(self, i: int, error) -> None:
        """On the scheduler's thread: configuration i's last round ran, or one of its rounds
        failed (that configuration alone: the others go on)."""
        if error is None and self.outcomes[i].rounds < len(self.spans[i]):
            error = self._left(i)  # its alias failed under another chain: it leaves it
        if error is not None and self._moved(i, error):
            return
        if error is not None:
            self.errors[i] = error
            self.outcomes[i].status = "failed"
        self.left -= 1
        if self.left == 0:
            self._epilogue()

    def _left(self, i: int) -> Diagnostic:
        """Why configuration i's next round is not sent to its alias: that alias failed."""
        alias, r = self.targets[i], self.outcomes[i].rounds
        return lost_alias(round_name(self.d.name, i, r), self.lost[alias])

    def _moved(self, i: int, error) -> bool:
        """Configuration i's round failed in a way another worker would not (MOVABLE): the
        chain goes on from that round on the next other alias of the list, in list order,
        that has not failed (its state is the last round's outputs, held here: nothing else
        runs again); an alias that itself failed (DOWN) gets no more work in this run.
        False when there is no other alias to go to."""
        failed = self.targets[i]
        if error.cause not in MOVABLE or failed == LOCAL:
            return False
        r = self.outcomes[i].rounds  # the round that failed: every one before it ran
        if error.cause in DOWN:
            self.lost.setdefault(failed, loss(round_name(self.d.name, i, r), error))
        at = self.aliases.index(failed)
        healthy = next((a for a in self.aliases[at + 1:] + self.aliases[:at]
                        if a not in self.lost), None)
        if healthy is None:
            return False
        self.targets[i], self.outcomes[i].moved = healthy, True
        self.note(f"{self.d.name}#c{i} moved from '{failed}' to '{healthy}' at round {r}: "
                  f"{error.message}")
        self.submit(self._round_job(i, r))
        return True

    def _epilogue(self) -> None:
        """The epilogue of every configuration that finished; the definition's end."""
        finished = [i for i in range(len(self.configs)) if i not in self.errors]
        results = {}
        with self.trace.coordinator("epilogue", self.d.name):
            for i in finished:
                try:
                    results[i] = self.module.epilogue(self.starts[i], self.states[i],
                                                      self.extras[i], self.configs[i], self.q)
                    outcome = self.outcomes[i]
                    outcome.status = ("moved" if outcome.moved else
                                      "resumed" if outcome.journaled else "finished")
                except Refused as r:
                    self.errors[i] = self._refused(r.reason)
                    self.outcomes[i].status = "failed"
        outputs = bind_returns(self.d, results, len(self.configs)) if results else None
        self.finish(outputs, tuple(self.errors[i] for i in sorted(self.errors)))
