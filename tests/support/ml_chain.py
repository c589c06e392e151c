"""One Tier A configuration trained on the local interpreter by the scheduler's own runner of
a definition (dispatch/ml_run.MlRun: the init, the chain of rounds, the epilogue) and a real
lane, with no script, plan or scheduler around them: the round jobs run on a LocalTarget's
serial lane, which continues the chain itself, as in a run. `per_round` forces the steps a
round holds (to show chunking changes no number)."""
import queue
from maned.catalogue import OpContext
from maned.diagnostics import Pos
from maned.dispatch.lanes import SerialLane
from maned.dispatch.ml_run import MlDefinition, MlRun, Placement
from maned.dispatch.trace import Trace
from maned.interp.evaluate import evaluate
from maned.lang import ast
from maned.ml.algorithms import is_tier_a, module_for
from maned.ml_catalogue import TRAINED
from maned.targets.local import LocalTarget
from maned.tensor import Tensor

from gates import HANG_GUARD_S

AT = Pos(1, 1)
HERE = Placement(aliases=(), level=0, position=0)  # every job on the local interpreter


class _Forced(MlRun):
    """MlRun with `per_round` steps per round when given, its own count otherwise."""

    def __init__(self, per_round: int | None, *args):
        super().__init__(*args)
        self.per_round = per_round

    def _steps(self, i: int, start, cfg: dict) -> int:
        return self.per_round or super()._steps(i, start, cfg)


class _Coordinator:
    """What an MlRun submits to, as the scheduler does: each job to the local interpreter's
    serial lane, its answer back here to be handed to the job; nothing is compiled ahead."""

    reference = True  # init and epilogue: the reference's own loops

    def __init__(self, q: int):
        self.trace, self.answers, self.in_flight = Trace(), queue.Queue(), 0
        self.lost: dict[str, tuple] = {}  # a local chain never moves
        self.journal = None
        self.lane = SerialLane(LocalTarget(q), self.trace,
                               lambda job, out, err: self.answers.put((job, out, err)))

    def note(self, text: str) -> None:
        raise AssertionError(f"a local chain said: {text}")

    def submit(self, job) -> None:
        self.in_flight += 1
        self.lane.submit(job)

    def run(self) -> None:
        """Until every submitted job (a chain counts once) has been answered."""
        try:
            while self.in_flight:
                job, outputs, error = self.answers.get(timeout=HANG_GUARD_S)
                self.in_flight -= 1
                job.done(outputs, error)
        finally:
            self.lane.close()

    def prepare(self, target, graph, inputs) -> None:
        pass

    def sync_sizing(self, target) -> None:
        return None


def algorithm_of(module) -> str:
    """The Tier A algorithm a module object implements (gd's MODULES hold one per name)."""
    return next(a for a in TRAINED if is_tier_a(a) and module_for(a) is module)


def train_local(module, X: Tensor, y: Tensor | None, cfg: dict, q: int,
                per_round: int | None = None) -> tuple:
    """(descriptor, second output) of one configuration, as `fit` in a local run."""
    inputs = {"X": X} if y is None else {"X": X, "y": y}
    d = ast.MLDef(AT, algorithm_of(module), "fit",
                  tuple(ast.Param(AT, name) for name in inputs), (), (),
                  (ast.Target(AT, "model"), ast.Target(AT, "second")))
    coordinator, result = _Coordinator(q), {}

    def finish(outputs, errors):
        if errors:
            raise AssertionError(errors)
        result.update(outputs)
    _Forced(per_round, MlDefinition(d, (cfg,), q), inputs, HERE, coordinator, finish).start()
    coordinator.run()
    return result["model"], result["second"]


def run_round(module, name: str, first: int, count: int, start, state: dict, cfg: dict,
              q: int) -> tuple[dict[str, Tensor], list[Tensor]]:
    """One round flow on the interpreter: the next state and the round's extras."""
    graph = module.round_graph(name, first, count, start, cfg, q)
    out = evaluate(graph, {**start.constants, **state}, {}, OpContext(q))
    return ({k: out[k] for k in start.state},
            [out[n] for n, _ in graph.outputs if n not in start.state])
