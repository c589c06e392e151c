"""The gradient-descent family (spec/ml-exact.md §4): linear_regression, logistic_regression
and svm. Init and epilogue are exact and local; a round flow runs k iterations of §4.2 as
wire ops; predict mirrors the forward pass."""
from bark_vm.wire.constants import DTYPE_INT8
from bark_vm.wire.dtypes import DTYPE_RANGE

from ..graph.flow_graph import FlowGraph
from ..graph.writer import GraphWriter
from ..numeric.activation import sigmoid
from ..numeric.int32 import tdiv, wrap32
from ..tensor import Tensor
from ..ml_catalogue import implemented_by
from . import descriptor
from ..failures import Refused
from .base import Start
from .exact import check_xy, column_stats, standardize_row
from .round_graphs import hyper_key


def lr_travels(lr: int) -> bool:
    """Whether the round receives lr as an input tensor (so a sweep over lr sends one
    program) rather than as a literal (spec/ml-exact.md §11 allows both): when it fits int8,
    which every envelope carries; otherwise it stays a literal, as any envelope takes."""
    lo, hi = DTYPE_RANGE[DTYPE_INT8]
    return lo <= lr <= hi


class GradientDescent:
    """One module object per algorithm of the family (they differ only in p, e and loss)."""

    def __init__(self, algo: str):
        self.ALGO, self.ALGO_ID = algo, descriptor.ALGO_IDS[algo]

    # --- init (local, exact) ---------------------------------------------------------
    def init(self, X: Tensor, y: Tensor, cfg: dict, q: int) -> Start:
        """A = [z(X) | c] wrapped, w = 0, λ = [l2 … l2, 0] (l2 never touches b)."""
        rows, labels = check_xy(X, y)
        n, d = len(rows), len(rows[0])
        if cfg["features"] != d:
            raise Refused(f"features is {cfg['features']} but X has {d} columns")
        s = 10 ** q
        mu, sd = column_stats(rows) if cfg["standardize"] else ([0] * d, [s] * d)
        c = s if cfg["fit_intercept"] else 0
        a = [[wrap32(v) for v in standardize_row(r, mu, sd, s)] + [c] for r in rows]
        constants = {"A": Tensor((n, d + 1), tuple(v for r in a for v in r)),
                     "y": Tensor((n, 1), tuple(labels)),
                     "lam": Tensor((d + 1, 1), (cfg["l2"],) * d + (0,))}
        if lr_travels(cfg["lr"]):
            constants["lr"] = Tensor.scalar(cfg["lr"])
        return Start(
            constants=constants,
            state={"w": Tensor((d + 1, 1), (0,) * (d + 1))},
            steps=cfg["iters"],
            extra={"mu": mu, "sd": sd})

    # --- one round flow (wire ops) ----------------------------------------------------
    @staticmethod
    def round_key(first: int, count: int, cfg: dict) -> tuple:
        """Every round of `count` iterations is the same program (w is its only state), and
        so it is for configurations that differ only in an lr that travels as an input."""
        return count, hyper_key(cfg, ("lr",) if lr_travels(cfg["lr"]) else ())

    def round_graph(self, name: str, first: int, count: int, start: Start, cfg: dict,
                    q: int) -> FlowGraph:
        """`count` iterations of §4.2: P = A·w, f = P/S, e, G = Aᵀe + λ⊙w, U = G·lr,
        w −= (U/S)/S."""
        g = GraphWriter(name)
        a, y, lam = (g.param(n) for n in ("A", "y", "lam"))
        lr = g.param("lr") if lr_travels(cfg["lr"]) else g.const(cfg["lr"])
        w = g.param("w")
        s = g.const(10 ** q)
        at = g.op("transpose", a)
        for _ in range(count):
            f = g.op("div", g.op("matmul", a, w), s)
            e = self._error(g, f, y, s)
            grad = g.op("matmul", at, e)
            if cfg["l2"]:
                grad = g.op("add", grad, g.op("mul", lam, w))
            u = g.op("mul", grad, lr)
            w = g.op("sub", w, g.op("div", g.op("div", u, s), s))
        return g.finish([("w", w)])

    def _error(self, g: GraphWriter, f: int, y: int, s: int) -> int:
        if self.ALGO == "linear_regression":
            return g.op("sub", f, y)
        if self.ALGO == "logistic_regression":
            return g.op("sub", g.op("sigmoid", f), y)
        m = g.op("div", g.op("mul", y, f), s)  # svm: hinge subgradient −[m < S]·y
        return g.op("sub", g.const(0), g.op("mul", g.op("lt", m, s), y))

    # --- epilogue (local, exact) --------------------------------------------------------
    def epilogue(self, start: Start, state: dict, extras: list, cfg: dict, q: int):
        """One more forward pass with the final w; the scale-q loss; the descriptor."""
        s = 10 ** q
        w = list(state["w"].data)
        a, y = start.constants["A"].rows(), start.constants["y"].data
        n, d = len(a), len(w) - 1
        f = [tdiv(wrap32(sum(x * wj for x, wj in zip(row, w))), s) for row in a]
        if self.ALGO == "svm":
            m = [tdiv(wrap32(yi * fi), s) for yi, fi in zip(y, f)]
            loss = wrap32(tdiv(sum(max(0, s - mi) for mi in m), n))
        else:
            p = f if self.ALGO == "linear_regression" else [sigmoid(fi, q) for fi in f]
            e = [wrap32(pi - yi) for pi, yi in zip(p, y)]
            loss = wrap32(tdiv(tdiv(sum(ei * ei for ei in e), n), s))
        flags = (descriptor.FLAG_INTERCEPT if cfg["fit_intercept"] else 0) | (
            descriptor.FLAG_STANDARDIZED if cfg["standardize"] else 0)
        model = descriptor.pack(self.ALGO_ID, q, d, 1, flags,
                                w + start.extra["mu"] + start.extra["sd"])
        return model, Tensor((1,), (loss,))

    # --- predict ----------------------------------------------------------------------
    def predict(self, slots: tuple[int, ...], X: Tensor, q: int) -> Tensor:
        """z = (x − mu)·S/sd, P = Σ z·w + S·b, f = P/S; linear f, logistic σ(f), svm ±S."""
        s, d = 10 ** q, descriptor.header(slots).features
        body = descriptor.payload(slots)  # w (d), b, mu (d), sd (d)
        w, b = body[:d], body[d]
        mu, sd = body[1 + d:1 + 2 * d], body[1 + 2 * d:1 + 3 * d]
        out = []
        for row in X.rows():
            z = [wrap32(v) for v in standardize_row(row, mu, sd, s)]
            f = tdiv(wrap32(sum(zj * wj for zj, wj in zip(z, w)) + s * b), s)
            if self.ALGO == "logistic_regression":
                f = sigmoid(f, q)
            elif self.ALGO == "svm":
                f = s if f > 0 else -s
            out.append(wrap32(f))
        return Tensor((len(out), 1), tuple(out))


GD_FAMILY = implemented_by("gd")
MODULES = {algo: GradientDescent(algo) for algo in GD_FAMILY}
