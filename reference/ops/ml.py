"""ml_predict: apply a model descriptor to new rows (spec/ml-exact.md §3)."""
from ..tensor import Tensor
from .registry import OpContext, OpError


class PredictRefusal(OpError):
    terse = True


def ml_predict(ctx: OpContext, model: Tensor, x: Tensor) -> Tensor:
    """Checks, in order: a valid descriptor; its quantres equals the script's; X rank 2 with
    the descriptor's column count (hmm: any count). Then the algorithm's own predict."""
    from ..ml import descriptor
    from ..ml.algorithms import module_for
    from ..ml.base import MlRefusal
    slots = model.data
    why = descriptor.validate(slots) if model.rank == 1 else "the model is not a rank-1 vector"
    if why:
        raise PredictRefusal(f"invalid model descriptor: {why}")
    if slots[3] != ctx.quantres:
        raise PredictRefusal(f"the model was fitted at quantres {slots[3]}, the script "
                             f"declares {ctx.quantres}")
    algo = descriptor.ALGO_NAMES[slots[2]]
    if x.rank != 2 or x.size == 0:
        raise PredictRefusal(f"X must be a non-empty rank-2 tensor, got shape {list(x.shape)}")
    if algo != "hmm" and x.shape[1] != slots[4]:
        raise PredictRefusal(f"X has {x.shape[1]} columns, the model was fitted on "
                             f"{slots[4]}")
    try:
        return module_for(algo).predict(slots, x, ctx.quantres)
    except MlRefusal as r:
        raise PredictRefusal(r.reason) from None
