"""The ML coordinator's per-row loops on numpy, for runs on the local engine: the same
integers as the reference's (tests/test_engine.py compares them), without a Python step per
row. Only the loops a profile found worth it: xgboost's goes-left mask and training loss."""
import numpy as np

from bark_vm.executor.activation import sigmoid

from ..ml import xgboost


def goes_left(rows: list[list[int]], cands: list[tuple[int, int]]) -> tuple[int, ...]:
    """`xgboost.goes_left`: the [n, C+1] mask, row-major."""
    x = np.array(rows, dtype=np.int64)
    mask = np.ones((len(rows), len(cands) + 1), dtype=np.int64)
    for c, (f, t) in enumerate(cands):
        mask[:, c + 1] = x[:, f] <= t
    return tuple(mask.ravel().tolist())


def squared_errors(F, y, q: int) -> int:
    """`xgboost.squared_errors`: Σ w32(σ(F_i) − y_i)², each square exact in int64, the sum
    in Python's integers (n squares of up to 2^62 overflow int64)."""
    f = np.array(F.data, dtype=np.int32)
    e = (sigmoid(q, f).astype(np.int64) - np.array(y.data, dtype=np.int64))
    e = (e + 2 ** 31) % 2 ** 32 - 2 ** 31  # w32
    return sum((e * e).tolist())


class _XgboostOnEngine:
    """The xgboost module, its init and epilogue given the loops above."""

    def __getattr__(self, name):
        return getattr(xgboost, name)

    @staticmethod
    def init(X, y, cfg, q):
        return xgboost.init(X, y, cfg, q, left_mask=goes_left)

    @staticmethod
    def epilogue(start, state, extras, cfg, q):
        return xgboost.epilogue(start, state, extras, cfg, q, errors=squared_errors)


ON_ENGINE = {"xgboost": _XgboostOnEngine()}


def on_engine(algo: str, module):
    """The algorithm's module as a run on the local engine uses it."""
    return ON_ENGINE.get(algo, module)
