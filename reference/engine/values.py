"""The engine's values: the reference's Tensors as the executor's int32 registers and back.

A register is rank ≥ 1 (a rank-0 value travels as `[1]`, R5); the flag that says the
reference would hold it as rank 0 rides beside it. A Tensor the executor cannot hold (an
int64 model descriptor, R30, or an element outside int32) stays a Tensor."""
import numpy as np

from bark_vm.executor.ints import I32, INT32_MAX, INT32_MIN

from ..tensor import Tensor
from bark_vm.kept import Kept

_REGISTERS = Kept(64)  # the last Tensors converted (a chain's X, read every round)


def register(t: Tensor) -> np.ndarray | None:
    """`t` as a read-only int32 register, or None when the executor cannot hold it. The
    same Tensor (a round chain's data, each round) is converted once."""
    return _REGISTERS.of(t, _convert)


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
