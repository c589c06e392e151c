"""The engine's values: the reference's Tensors as the executor's int32 registers and back.

A register is rank ≥ 1 (a rank-0 value travels as `[1]`, R5); the flag that says the
reference would hold it as rank 0 rides beside it. A Tensor the executor cannot hold (an
int64 model descriptor, R30, or an element outside int32) stays a Tensor."""
import os
import threading
from collections import OrderedDict

import numpy as np

from bark_vm.executor.ints import I32, INT32_MAX, INT32_MIN

from ..tensor import Tensor

KEPT = 64  # the registers of the last Tensors converted (a chain's X, every round)
_known: OrderedDict = OrderedDict()
_lock = threading.Lock()


def _fresh_lock() -> None:
    """A forked pool process gets its own lock: another thread may hold this one."""
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_fresh_lock)


def register(t: Tensor) -> np.ndarray | None:
    """`t` as a read-only int32 register, or None when the executor cannot hold it. The
    same Tensor (a round chain's data, each round) is converted once."""
    with _lock:
        held = _known.get(id(t))
        if held is not None and held[0] is t:
            _known.move_to_end(id(t))
            return held[1]
    arr = _convert(t)
    with _lock:
        _known[id(t)] = (t, arr)  # the Tensor is held, so its id stays its own
        if len(_known) > KEPT:
            _known.popitem(last=False)
    return arr


def _convert(t: Tensor) -> np.ndarray | None:
    if t.wide:
        return None
    wide = np.array(t.data, dtype=np.int64)
    if wide.size and (int(wide.min()) < INT32_MIN or int(wide.max()) > INT32_MAX):
        return None
    arr = wide.astype(I32).reshape(t.shape or (1,))
    arr.flags.writeable = False  # shared by every job that reads this Tensor
    return arr


def tensor(arr: np.ndarray, rank0: bool) -> Tensor:
    """A register as the reference's Tensor: rank 0 where the reference holds a scalar."""
    data = tuple(arr.ravel().tolist())
    return Tensor((), data) if rank0 else Tensor(tuple(int(d) for d in arr.shape), data)
