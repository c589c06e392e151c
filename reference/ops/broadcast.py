"""Shared shape rules of the ops: R4 broadcast, axes, axis groups and parameter checks."""
from math import prod

from ..tensor import Tensor, shape_text
from ..failures import OpError


def is_single(shape: tuple[int, ...]) -> bool:
    """A single element in the broadcast sense: rank 0 or `[1]` (`[1x1]` is not)."""
    return shape in ((), (1,))


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """R4: equal shapes, or a single element against anything (rank-0 with `[1]` gives `[1]`)."""
    if a == b:
        return a
    if is_single(a) and is_single(b):
        return (1,)
    if is_single(a):
        return b
    if is_single(b):
        return a
    raise OpError(f"incompatible shapes {shape_text(a)} and {shape_text(b)} (SHAPE_MISMATCH)")


def broadcast_map(f, *operands: Tensor) -> Tensor:
    """Apply f elementwise over operands broadcast per R4 (each is the common shape or single)."""
    shape = operands[0].shape
    for t in operands[1:]:
        shape = broadcast_shape(shape, t.shape)
    n = prod(shape)
    columns = [t.data * n if is_single(t.shape) else t.data for t in operands]
    return Tensor(shape, tuple(f(*vs) for vs in zip(*columns)))


def map_data(f, x: Tensor) -> Tensor:
    """Apply f to every element; the shape is kept."""
    return Tensor(x.shape, tuple(f(v) for v in x.data))


def int_param(name: str, value) -> int:
    """An object parameter that must be one integer."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise OpError(f"parameter '{name}' must be an integer, got {value!r}")
    return value


def check_axis(axis, rank: int) -> int:
    """An axis must be 0..rank−1; anything else is refused."""
    axis = int_param("axis", axis)
    if not 0 <= axis < rank:
        valid = f"axes 0..{rank - 1}" if rank else "it has no axes"
        raise OpError(f"axis {axis} is out of range for a rank-{rank} operand ({valid})")
    return axis


def axis_groups(shape: tuple[int, ...], axis: int) -> list[list[int]]:
    """Flat indices of each line along `axis`, in row-major order of the other axes."""
    outer, dim, inner = prod(shape[:axis]), shape[axis], prod(shape[axis + 1:])
    return [[o * dim * inner + j * inner + i for j in range(dim)]
            for o in range(outer) for i in range(inner)]


def need_rank(x: Tensor, ranks: tuple[int, ...], what: str) -> None:
    """Refuse an operand whose rank is not one of `ranks`."""
    if x.rank not in ranks:
        allowed = " or ".join(str(r) for r in ranks)
        raise OpError(f"{what} needs a rank-{allowed} operand, got {shape_text(x.shape)}")


def map_lines(x: Tensor, axis: int | None, f) -> Tensor:
    """Replace each line along `axis` (None: the last; rank 0 is one line) by f(line); shape kept."""
    if x.rank == 0:
        return Tensor(x.shape, tuple(f(list(x.data))))
    out = list(x.data)
    for g in axis_groups(x.shape, x.rank - 1 if axis is None else axis):
        for i, v in zip(g, f([x.data[i] for i in g])):
            out[i] = v
    return Tensor(x.shape, tuple(out))
