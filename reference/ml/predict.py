"""ml_predict, the op: apply a model descriptor to new rows (spec/ml-exact.md §3); each
algorithm's own predict is loaded by `module_for`, on first use."""
from ..catalogue import OpContext
from ..failures import OpError, Refused
from ..tensor import Tensor
from . import descriptor
from .algorithms import module_for


def _refusal(reason: str) -> OpError:
    """ml_predict's refusals print as `ml_predict: <reason>` (R41)."""
    return OpError(reason, terse=True)


def ml_predict(ctx: OpContext, model: Tensor, x: Tensor) -> Tensor:
    """Checks, in order: a valid descriptor; its quantres equals the script's; X rank 2 with
    the descriptor's column count (hmm: any count). Then the algorithm's own predict."""
    slots = model.data
    why = descriptor.validate(slots) if model.rank == 1 else "the model is not a rank-1 vector"
    if why:
        raise _refusal(f"invalid model descriptor: {why}")
    h = descriptor.header(slots)
    if h.q != ctx.quantres:
        raise _refusal(f"the model was fitted at quantres {h.q}, the script "
                             f"declares {ctx.quantres}")
    algo = descriptor.ALGO_NAMES[h.algo_id]
    if x.rank != 2 or x.size == 0:
        raise _refusal(f"X must be a non-empty rank-2 tensor, got shape {list(x.shape)}")
    if algo != "hmm" and x.shape[1] != h.features:
        raise _refusal(f"X has {x.shape[1]} columns, the model was fitted on "
                             f"{h.features}")
    try:
        return module_for(algo).predict(slots, x, ctx.quantres)
    except Refused as r:
        raise _refusal(r.reason) from None
