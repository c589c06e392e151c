"""What every algorithm module provides. Data unfit for an algorithm is `failures.Refused`
(E027 before training, E028 when the data arrives)."""
from dataclasses import dataclass, field

from ..tensor import Tensor


@dataclass(frozen=True)
class Start:
    """A Tier A algorithm's initial state, produced by its local init flow.

    constants: round-flow inputs that never change (A, y, masks, ...);
    state: values carried from round to round (round inputs and outputs), initial values;
    steps: iterations (GD), boosting rounds (xgboost) or EM iterations (hmm) in all;
    extra: anything else the epilogue needs from init (exact statistics, thresholds).
    """

    constants: dict[str, Tensor]
    state: dict[str, Tensor]
    steps: int
    extra: dict = field(default_factory=dict)

# A Tier A module defines:
#   ALGO (name), ALGO_ID
#   init(X, y, cfg, q) -> Start                       raises Refused for unfit data
#   round_graph(name, first, count, start, cfg, q) -> FlowGraph
#       steps [first, first+count) as wire ops only (GraphWriter); params are the constants
#       then the state names, in `start` order; outputs are the state names (same order),
#       then per-step extras the epilogue needs (e.g. xgboost's splits and leaves)
#   round_key(first, count, cfg) -> hashable: rounds (of any configuration of one
#       definition) with equal keys have equal graphs but for their names, so a run builds,
#       lowers and sends that program once (ml/round_graphs)
#   epilogue(start, state, extras, cfg, q) -> (descriptor, second output or None)
#   predict(slots, X, q) -> Tensor                    raises Refused
# A Tier B module defines ALGO, ALGO_ID, fit(X, y, cfg, q) -> descriptor Tensor and predict.
# cfg is a dict of every hyperparameter of the algorithm, defaults applied (ml/hyper.py).
