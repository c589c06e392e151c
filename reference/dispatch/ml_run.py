"""One calc::ml:: definition on the scheduler (D10, R13): per configuration a local init, a
chain of round jobs (configuration i on alias i mod N when routed), then one local
epilogue `NAME` for all configurations. Tier B is one local fit. A configuration fails
alone (docs/fleet.md, "When a worker fails"): the others run to their end, and the
definition finishes with the outputs of those that did and one error per one that did not.
With `--replicas N` each round of a routed chain runs on N aliases at once and the vote
decides what the chain takes (docs/fleet.md, "Replicas")."""
from dataclasses import dataclass
from typing import Callable, Protocol

from ..diagnostics import Diagnostic
from ..graph.flow_graph import FlowGraph
from ..lang import ast, limits
from ..ml.algorithms import is_tier_a, module_for
from ..failures import DOWN, MOVABLE, NO_MAJORITY, OUTVOTED, Refused, TargetFailure
from ..ml.chunking import round_count, round_spans, steps_per_round, sync_steps
from ..ml.round_graphs import RoundGraphs, round_name
from ..ml.train import bind_returns, fit_tier_b
from ..targets.target import LOCAL
from ..tensor import Tensor
from .job import Job
from .lanes import loss, lost_alias
from .replicas import Ballot, answer_of, tally
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
    replicas: int  # --replicas: the aliases each routed round runs on at once

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
        self.replicas = coordinator.replicas if self.aliases else 1
        self.ballots: dict[int, Ballot] = {}  # with --replicas: each chain's round in flight
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
        to_run = [round_name(self.d.name, i, r) for i, spans in enumerate(self.spans)
                  for r in range(resumed[i], len(spans))]  # past what the journal gave
        self.trace.planned(self.d.name, len(to_run) * self.replicas, to_run)
        self.left = len(self.configs)
        for i, r in enumerate(resumed):
            if r < len(self.spans[i]):
                self._send(i, r)
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

    def _send(self, i: int, r: int) -> None:
        """Round r of configuration i, to its alias; with --replicas, to as many aliases."""
        if self.replicas == 1:
            return self.submit(self._round_job(i, r))
        ballot = self.ballots[i] = Ballot(r, self._graph(i, r))
        chosen = [a for a in self._from_home(i) if a not in self.lost][:self.replicas]
        if len(chosen) < self.replicas:
            return self._replica_failed(i, Diagnostic(
                "ERUN", f"flow '{ballot.graph.flow}': --replicas {self.replicas}: only "
                f"{_aliases(chosen) or 'no alias'} of its aliases left (the others failed "
                "in this run)"))
        for alias in chosen:
            self._ask(i, alias)

    def _graph(self, i: int, r: int) -> FlowGraph:
        first, count = self.spans[i][r]
        return self.graphs.build(i, self.starts[i], self.configs[i], first, count, r)

    def _job(self, i: int, r: int, graph: FlowGraph, target: str, **how) -> Job:
        return Job(key=(self.level + r + 1, self.position, i, r), name=graph.flow, graph=graph,
                   inputs={**self.starts[i].constants, **self.states[i]},
                   target=target, round_flow=True, **how)

    def _round_job(self, i: int, r: int) -> Job:
        """Round r of configuration i. Its chain goes on from the lane that runs it
        (`follow`); the scheduler hears of the chain again at its end or its failure."""
        graph = self._graph(i, r)
        return self._job(i, r, graph, self._target(i),
                         follow=lambda outputs: self._next_round(i, r, graph, outputs),
                         done=lambda outputs, error: self._chain_done(i, error))

    def _next_round(self, i: int, r: int, graph, outputs) -> Job | None:
        """On the lane that ran round r of configuration i: its outputs become the chain's
        state, and round r + 1 is the job that lane runs next (None: the chain's last round
        ran, or its alias failed meanwhile and the chain leaves it: `_chain_done`)."""
        self._landed(i, r, graph, outputs, (self._target(i),))
        if r + 1 == len(self.spans[i]) or self.targets[i] in self.lost:
            return None
        return self._round_job(i, r + 1)

    def _landed(self, i: int, r: int, graph, outputs, devices: tuple[str, ...]) -> None:
        """Round r of configuration i ran on `devices`: journaled (on the disk before the
        round counts as done), then its outputs become the chain's."""
        outcome = self.outcomes[i]
        outcome.rounds = r + 1
        outcome.devices += tuple(d for d in devices
                                 if d != LOCAL and d not in outcome.devices)
        ordered = [(n, outputs[n]) for n, _ in graph.outputs]
        if self.journal is not None:
            self.journal.record(graph.flow, *self.spans[i][r],
                                [[n, list(t.shape), list(t.data)] for n, t in ordered])
        self._apply(i, ordered)

    def _apply(self, i: int, outputs: list[tuple[str, Tensor]]) -> None:
        """A round's outputs, in its flow's order: its state becomes the chain's, the rest
        (the extras) are kept for the epilogue."""
        state, by_name = self.starts[i].state, dict(outputs)
        self.states[i] = {k: by_name[k] for k in state}
        self.extras[i].extend(t for n, t in outputs if n not in state)

    def _chain_done(self, i: int, error) -> None:
        """On the scheduler's thread: configuration i's last round ran, or one of its rounds
        failed (that configuration alone: the others go on)."""
        if error is None and self.outcomes[i].rounds < len(self.spans[i]):
            error = self._left(i)  # its alias failed under another chain: it leaves it
        if error is not None and self.replicas == 1 and self._moved(i, error):
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
        chain goes on from that round on `healthy[i mod H]`, healthy the list's other
        aliases that have not failed, in list order (so a lost worker's chains spread over
        the rest); its state is the last round's outputs, held here: nothing else runs
        again. An alias that itself failed (DOWN) gets no more work in this run. False when
        there is no other alias to go to."""
        failed = self.targets[i]
        if error.cause not in MOVABLE or failed == LOCAL:
            return False
        r = self.outcomes[i].rounds  # the round that failed: every one before it ran
        if error.cause in DOWN:
            self.lost.setdefault(failed, loss(round_name(self.d.name, i, r), error))
        healthy = [a for a in self.aliases if a != failed and a not in self.lost]
        if not healthy:
            return False
        healthy = healthy[i % len(healthy)]
        self.targets[i], self.outcomes[i].moved = healthy, True
        self.note(f"{self.d.name}#c{i} moved from '{failed}' to '{healthy}' at round {r}: "
                  f"{error.message}")
        self.submit(self._round_job(i, r))
        return True

    # --- --replicas: each round on several aliases, the vote decides ----------------------
    def _from_home(self, i: int) -> list[str]:
        """The list's aliases from configuration i's own (i mod N) on, round the list."""
        at = i % len(self.aliases)
        return list(self.aliases[at:] + self.aliases[:at])

    def _ask(self, i: int, alias: str) -> None:
        """Run configuration i's round in flight on `alias` too."""
        ballot = self.ballots[i]
        ballot.asked.append(alias)
        r, graph = ballot.round, ballot.graph
        self.submit(self._job(i, r, graph, alias, done=lambda outputs, error: self._answered(
            i, r, alias, outputs, error)))

    def _spare(self, i: int) -> str | None:
        """The next alias from configuration i's own on that has not failed and has not
        been asked for its round in flight (None: none is left)."""
        asked = self.ballots[i].asked
        return next((a for a in self._from_home(i) if a not in self.lost and a not in asked),
                    None)

    def _answered(self, i: int, r: int, alias: str, outputs, error) -> None:
        """On the scheduler's thread: `alias` answered round r of configuration i."""
        ballot = self.ballots.get(i)
        if ballot is None or ballot.round != r:
            return  # its configuration failed meanwhile
        flow = ballot.graph.flow
        if error is None and alias in self.lost:  # outvoted (or lost) while it ran this
            error = lost_alias(flow, self.lost[alias])
        if error is not None:
            return self._replica_lost(i, alias, error)
        ballot.answered(alias, answer_of(ballot.graph, outputs), outputs)
        vote = tally(ballot.answers, self.replicas)
        if vote.state == "wait":
            return
        if vote.state == "more":
            spare = self._spare(i)
            if spare is not None:
                self.note(f"{self.d.name}#c{i} round {r}: {_aliases(ballot.answers)} "
                          f"disagree; '{spare}' decides")
                return self._ask(i, spare)
        if vote.state in ("more", "split"):
            return self._replica_failed(i, Diagnostic(
                "ERUN", f"flow '{flow}': --replicas {self.replicas}: no majority: "
                f"{_aliases(ballot.answers)} each answered other integers", cause=NO_MAJORITY))
        agreed, taken = ballot.taken(vote.answer)
        for liar in (a for a in vote.outvoted if a not in self.lost):
            self.lost[liar] = (OUTVOTED, f"device '{liar}': outvoted at round '{flow}' by "
                               f"{_aliases(agreed)}")
            self.note(f"{self.d.name}#c{i} round {r}: '{liar}' outvoted by {_aliases(agreed)} "
                      "(it answered other integers); it gets no more work in this run")
        del self.ballots[i]
        try:
            self._landed(i, r, ballot.graph, taken, tuple(agreed))
        except TargetFailure as f:  # its journal line not written: the round is not done
            return self._chain_done(i, f.diagnostic)
        if r + 1 == len(self.spans[i]):
            return self._chain_done(i, None)
        self._send(i, r + 1)

    def _replica_lost(self, i: int, alias: str, error: Diagnostic) -> None:
        """`alias` could not answer configuration i's round in flight: when another worker
        would (MOVABLE, or `alias` was outvoted), the next spare alias runs it instead."""
        ballot = self.ballots[i]
        if error.cause not in MOVABLE and alias not in self.lost:
            return self._replica_failed(i, error)
        if error.cause in DOWN:
            self.lost.setdefault(alias, loss(ballot.graph.flow, error))
        spare = self._spare(i)
        if spare is None:
            return self._replica_failed(i, Diagnostic(
                "ERUN", f"{error.message}; --replicas {self.replicas}: no other alias of its "
                "list is left to run it on", cause=error.cause))
        self.note(f"{self.d.name}#c{i} round {ballot.round}: moved from '{alias}' to "
                  f"'{spare}': {error.message}")
        self.outcomes[i].moved = True
        self._ask(i, spare)

    def _replica_failed(self, i: int, error: Diagnostic) -> None:
        """Configuration i fails: answers still due for its round are dropped."""
        del self.ballots[i]
        self._chain_done(i, error)

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


def _aliases(names) -> str:
    """'a', 'b' and 'c'."""
    quoted = [f"'{n}'" for n in names]
    return ", ".join(quoted[:-1]) + (" and " if len(quoted) > 1 else "") + quoted[-1] \
        if quoted else ""
