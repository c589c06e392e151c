"""Exact helpers shared by the algorithms (spec/ml-exact.md §1): the run-time data checks
(§2.2), standardization and the splitmix64 stream."""
from ..numeric.int32 import isqrt_floor, tdiv
from ..tensor import Tensor, shape_text
from ..failures import Refused

MASK64 = 2 ** 64 - 1


def column_stats(rows: list[list[int]]) -> tuple[list[int], list[int]]:
    """mu_j = tdiv(Σ x, n); var_j = tdiv(Σ (x − mu_j)², n) around the truncated mean;
    sd_j = isqrt(var_j)."""
    n, d = len(rows), len(rows[0])
    mu = [tdiv(sum(r[j] for r in rows), n) for j in range(d)]
    sd = [isqrt_floor(tdiv(sum((r[j] - mu[j]) ** 2 for r in rows), n)) for j in range(d)]
    return mu, sd


def standardize_row(row, mu, sd, scale: int) -> list[int]:
    """z_j = tdiv((x_j − mu_j)·S, sd_j); a constant column (sd 0) gives 0."""
    return [tdiv((x - m) * scale, s) for x, m, s in zip(row, mu, sd)]


class SplitMix64:
    """splitmix64 (ml.md §4.3); the seed is taken modulo 2^64."""

    def __init__(self, seed: int):
        self.state = seed & MASK64

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)


def matrix_rows(t) -> list[list[int]]:
    """A rank-2 tensor as a list of row lists."""
    return [list(r) for r in t.rows()]


def check_xy(X: Tensor, y: Tensor | None) -> tuple[list[list[int]], list[int] | None]:
    """The run-time data refusals of §2.2 shared by every algorithm: X a non-empty rank-2
    tensor; y (when given) [n, 1] or [n] with the same n. Returns X's rows and y's labels
    (None without y)."""
    if X.rank != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise Refused(f"X must be a non-empty rank-2 tensor, its shape is {shape_text(X.shape)}")
    rows = matrix_rows(X)
    if y is None:
        return rows, None
    n = len(rows)
    if y.shape not in ((n, 1), (n,)):
        raise Refused(f"y must be [{n}x1] or [{n}] for the {n} rows of X, "
                        f"its shape is {shape_text(y.shape)}")
    return rows, list(y.data)


def check_k(k: int, n: int) -> None:
    """kmeans and knn: k ≤ n (§2.2)."""
    if k > n:
        raise Refused(f"k {k} is more than the {n} rows of X")


def standardized(rows: list[list[int]], scale: int) -> tuple[list[list[int]], list[int]]:
    """z(X) of §1.3 (exact, unwrapped) and the std block mu_1..mu_d, sd_1..sd_d."""
    mu, sd = column_stats(rows)
    return [standardize_row(r, mu, sd, scale) for r in rows], mu + sd


def apply_std_block(rows: list[list[int]], block, scale: int) -> list[list[int]]:
    """New rows through a stored std block (mu_1..mu_d, sd_1..sd_d): z(x) of §1.3."""
    d = len(block) // 2
    mu, sd = list(block[:d]), list(block[d:])
    return [standardize_row(r, mu, sd, scale) for r in rows]
