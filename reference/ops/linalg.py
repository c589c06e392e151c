"""Linear algebra: scalar_mul, matmul, transpose, determinant, adjugate (exact integers)."""
from bark_vm.wire.constants import MAX_RANK

from ..tensor import Tensor, shape_text
from .broadcast import broadcast_map, is_single, need_rank
from ..catalogue import OpContext
from ..failures import OpError

MAX_DETERMINANT_N = 8


def scalar_mul(ctx: OpContext, a: Tensor, b: Tensor) -> Tensor:
    """Every element times the single-element operand (rank 0 or `[1]`, either position)."""
    if not (is_single(a.shape) or is_single(b.shape)):
        raise OpError(f"scalar_mul needs one single-element operand (rank 0 or [1]), got "
                      f"{shape_text(a.shape)} and {shape_text(b.shape)} (SHAPE_MISMATCH)")
    return broadcast_map(lambda x, y: x * y, a, b)


def matmul(ctx: OpContext, a: Tensor, b: Tensor) -> Tensor:
    """[M,K]·[K,N] -> [M,N], c[i,j] = Σ_k a[i,k]·b[k,j] exact."""
    need_rank(a, (2,), "matmul")
    need_rank(b, (2,), "matmul")
    (m, k), (k2, n) = a.shape, b.shape
    if k != k2:
        raise OpError(f"matmul inner dimensions differ: {shape_text(a.shape)} x {shape_text(b.shape)}")
    cols = [b.data[j::n] for j in range(n)]
    data = tuple(sum(x * y for x, y in zip(row, col)) for row in a.rows() for col in cols)
    return Tensor((m, n), data)


def transpose(ctx: OpContext, x: Tensor) -> Tensor:
    """Swap the last two axes ([..,R,C] -> [..,C,R]); ranks 2 to the wire's MAX_RANK."""
    need_rank(x, tuple(range(2, MAX_RANK + 1)), "transpose")
    r, c = x.shape[-2:]
    data = []
    for base in range(0, x.size, r * c):
        data.extend(x.data[base + i * c + j] for j in range(c) for i in range(r))
    return Tensor((*x.shape[:-2], c, r), tuple(data))


def _square(x: Tensor, what: str) -> list[list[int]]:
    need_rank(x, (2,), what)
    if x.shape[0] != x.shape[1]:
        raise OpError(f"{what} needs a square matrix, got {shape_text(x.shape)}")
    return [list(row) for row in x.rows()]


def bareiss(a: list[list[int]]) -> int:
    """Exact determinant by fraction-free Bareiss elimination (row swaps flip the sign)."""
    a = [row[:] for row in a]
    n, sign, prev = len(a), 1, 1
    for k in range(n - 1):
        if a[k][k] == 0:
            swap = next((i for i in range(k + 1, n) if a[i][k] != 0), None)
            if swap is None:
                return 0
            a[k], a[swap], sign = a[swap], a[k], -sign
        for i in range(k + 1, n):
            for j in range(k + 1, n):
                a[i][j] = (a[i][j] * a[k][k] - a[i][k] * a[k][j]) // prev
        prev = a[k][k]
    return sign * a[n - 1][n - 1] if n else 1


def determinant(ctx: OpContext, x: Tensor) -> Tensor:
    """det of a square [n,n], n <= 8, exact (Bareiss) -> [1]; its scale is n·q."""
    a = _square(x, "determinant")
    if len(a) > MAX_DETERMINANT_N:
        raise OpError(f"determinant is limited to n <= {MAX_DETERMINANT_N}, got n = {len(a)}")
    return Tensor((1,), (bareiss(a),))


def adjugate(ctx: OpContext, x: Tensor) -> Tensor:
    """Classical adjugate: adj[i,j] = (−1)^(i+j)·det(A without row j and column i); 1x1 -> [[1]]."""
    a = _square(x, "adjugate")
    n = len(a)

    def minor(r, c):
        return [row[:c] + row[c + 1:] for i, row in enumerate(a) if i != r]

    data = tuple((-1) ** (i + j) * bareiss(minor(j, i)) for i in range(n) for j in range(n))
    return Tensor((n, n), data)
