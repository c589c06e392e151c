"""hmm (spec/ml-exact.md §12): discrete hidden Markov model fitted by integer Baum-Welch, a
Tier A algorithm. init validates the observations and sets π, A, B (§12.2); each round flow
runs whole EM iterations (E-step §12.3, M-step §12.4) with sequences batched as rows; the
epilogue packs the descriptor (§12.5); predict decodes with the stored parameters (§12.6).

Two plain-Python mirrors of the flow live here as well: `e_step` (used by predict) and
`em_iteration` (one full EM iteration, the cross-check of the wire graph). Every value they
name is the w32 value the flow computes (§14); `_q` is every division of the flow: a truncated
quotient that is itself an op result, hence wrapped.
"""
from ..graph.writer import GraphWriter
from ..numeric.int32 import tdiv, wrap32
from ..tensor import Tensor
from . import descriptor
from ..failures import Refused
from .base import Start
from .descriptor import pack
from .exact import SplitMix64
from .round_graphs import hyper_key

ALGO = "hmm"
ALGO_ID = descriptor.ALGO_IDS[ALGO]
PS = 100  # scale of π, A, B
STATE = ("pi", "A", "B", "score")


def _r(q: int) -> int:
    """R = 10^(q+1), the scale of α̂, β̂ and γ."""
    return 10 ** (q + 1)


def _q(a: int, b: int) -> int:
    """A flow division: tdiv of int32 operands, the result wrapped like every op result."""
    return wrap32(tdiv(a, b))


# --- observations and initial parameters ---------------------------------------------------
def symbols(O: Tensor, V: int, q: int) -> list[list[int]]:
    """Symbol ids s(n, t) of a rank-2 `O` (§12.1): cell o is s = tdiv(o, S) with s·S = o and
    0 ≤ s < V. Raises Refused naming the first cell that is not a symbol."""
    if not isinstance(O, Tensor) or O.rank != 2 or O.size == 0:
        got = ("[" + "x".join(map(str, O.shape)) + "]" if O.shape else "a scalar") \
            if isinstance(O, Tensor) else type(O).__name__
        raise Refused(f"O must be a non-empty rank-2 tensor [sequences, steps], got {got}")
    scale = 10 ** q
    rows = []
    for n, row in enumerate(O.rows()):
        out = []
        for t, o in enumerate(row):
            s = tdiv(o, scale)
            if s * scale != o or not 0 <= s < V:
                raise Refused(f"O[{n}][{t}] = {o} is not a symbol: cells must be s·{scale} "
                                f"with 0 <= s < {V} (symbols: {V})")
            out.append(s)
        rows.append(out)
    return rows


def initial_parameters(K: int, V: int, seed: int) -> tuple[list[int], list[list[int]],
                                                              list[list[int]]]:
    """π, A, B of §12.2 (exact; all small), B perturbed by ±5 % when seed ≠ 0 mod 2^64."""
    pi = [tdiv(PS, K)] * K
    pi[0] += PS - K * tdiv(PS, K)
    off = tdiv(PS - tdiv(3 * PS, 4), K - 1)
    A = [[off if i != j else PS - off * (K - 1) for j in range(K)] for i in range(K)]
    u = tdiv(tdiv(9 * PS, 10), V)
    home = [tdiv(k * (V - 1), K - 1) for k in range(K)]
    B = [[u] * V for _ in range(K)]
    for k in range(K):
        B[k][home[k]] += PS - u * V
    if seed % 2 ** 64:
        rng = SplitMix64(seed)
        for k in range(K):
            for v in range(V):
                delta = rng.next() % 11 - 5
                B[k][v] += tdiv(B[k][v] * delta, 100)
        for k in range(K):
            B[k][home[k]] += PS - sum(B[k])
    return pi, A, B


# --- plain-Python mirror of the flow ---------------------------------------------------------
def e_step(pi, A, B, obs, q: int) -> dict:
    """§12.3 on every sequence of `obs` (symbol ids). Returns per-step lists indexed [t][n][k]:
    alpha (α̂), c ([t][n]), u (t = 0..T−2), beta, gamma, and the score (an int)."""
    R, K = _r(q), len(pi)
    N, T = len(obs), len(obs[0])
    E = [[[B[k][obs[n][t]] for k in range(K)] for n in range(N)] for t in range(T)]
    alpha, c = [], []
    for t in range(T):
        if t == 0:
            a = [[_q(wrap32(pi[k] * E[0][n][k] * R), PS * PS) for k in range(K)]
                 for n in range(N)]
        else:
            m = [[wrap32(sum(alpha[t - 1][n][i] * A[i][j] for i in range(K)))
                  for j in range(K)] for n in range(N)]
            a = [[_q(wrap32(m[n][j] * E[t][n][j]), PS * PS) for j in range(K)]
                 for n in range(N)]
        ct = [wrap32(sum(a[n])) for n in range(N)]
        alpha.append([[_q(wrap32(a[n][k] * R), ct[n]) for k in range(K)] for n in range(N)])
        c.append(ct)
    beta = [None] * T
    u = [None] * max(T - 1, 0)
    beta[T - 1] = [[R] * K for _ in range(N)]
    for t in range(T - 2, -1, -1):
        u[t] = [[_q(wrap32(beta[t + 1][n][j] * E[t + 1][n][j]), PS) for j in range(K)]
                for n in range(N)]
        v = [[_q(wrap32(sum(A[i][j] * u[t][n][j] for j in range(K))), PS) for i in range(K)]
             for n in range(N)]
        beta[t] = [[_q(wrap32(v[n][i] * R), c[t + 1][n]) for i in range(K)] for n in range(N)]
    if T == 1:
        gamma = [alpha[0]]
    else:
        gamma = [[[_q(wrap32(alpha[t][n][k] * beta[t][n][k]), R) for k in range(K)]
                  for n in range(N)] for t in range(T)]
    score = _q(wrap32(sum(sum(ct) for ct in c)), N * T)
    return dict(alpha=alpha, c=c, u=u, beta=beta, gamma=gamma, score=score)


def m_step(es: dict, A, obs, V: int, q: int):
    """§12.4 from the E-step values `es`: the next π, A, B."""
    R, K = _r(q), len(A)
    N, T = len(obs), len(obs[0])
    alpha, c, u, gamma = es["alpha"], es["c"], es["u"], es["gamma"]
    w = [[[_q(wrap32(u[t][n][j] * R), c[t + 1][n]) for j in range(K)] for n in range(N)]
         for t in range(T - 1)]
    X = [[wrap32(sum(alpha[t][n][i] * w[t][n][j] for t in range(T - 1) for n in range(N)))
          for j in range(K)] for i in range(K)]
    Xp = [[wrap32(_q(X[i][j], R) * A[i][j]) for j in range(K)] for i in range(K)]
    A2 = []
    for i in range(K):
        den = wrap32(sum(Xp[i]))
        A2.append([_q(wrap32(Xp[i][j] * PS), den) for j in range(K)])
    Bn = [[wrap32(sum(gamma[t][n][k] for t in range(T) for n in range(N) if obs[n][t] == v))
           for v in range(V)] for k in range(K)]
    B2 = []
    for k in range(K):
        den = wrap32(sum(Bn[k]))
        B2.append([_q(wrap32(Bn[k][v] * PS), den) for v in range(V)])
    pi2 = [_q(wrap32(_q(wrap32(sum(gamma[0][n][k] for n in range(N))), N) * PS), R)
           for k in range(K)]
    return pi2, A2, B2


def em_iteration(pi, A, B, obs, q: int):
    """One EM iteration in plain Python: (π', A', B', score of this E-step)."""
    es = e_step(pi, A, B, obs, q)
    pi2, A2, B2 = m_step(es, A, obs, len(B[0]), q)
    return pi2, A2, B2, es["score"]


# --- Tier A protocol -----------------------------------------------------------------------
def _matrix(rows: list[list[int]]) -> Tensor:
    return Tensor((len(rows), len(rows[0])), tuple(wrap32(v) for r in rows for v in r))


def init(O: Tensor, y, cfg: dict, q: int) -> Start:
    """Validate O (§12.1, `steps`, `rows`) and set the initial π, A, B (§12.2)."""
    V, K, T = cfg["symbols"], cfg["states"], cfg["steps"]
    if not isinstance(O, Tensor) or O.rank != 2 or O.size == 0:
        symbols(O, V, q)  # raises the shape refusal
    N, cols = O.shape
    if cols != T:
        raise Refused(f"steps is {T} but O has {cols} columns")
    if cfg.get("rows") is not None and cfg["rows"] != N:
        raise Refused(f"rows is {cfg['rows']} but O has {N} rows")
    symbols(O, V, q)
    pi, A, B = initial_parameters(K, V, cfg["seed"])
    state = {"pi": _matrix([pi]), "A": _matrix(A), "B": _matrix(B),
             "score": Tensor((1, 1), (0,))}
    return Start(constants={"O": O}, state=state, steps=cfg["iters"])


def round_key(first: int, count: int, cfg: dict) -> tuple:
    """Every round of `count` EM iterations of one configuration is the same program."""
    return count, hyper_key(cfg)


def round_graph(name: str, first: int, count: int, start: Start, cfg: dict, q: int):
    """`count` EM iterations as wire ops. Params O, pi, A, B, score; outputs pi, A, B, score
    (the score of the round's last E-step).

    Arrangement: per round, the one-hot masks M_t [N,V] = (O_t/S · ones[1,V]) == (ones[N,1] ·
    [0..V−1]) and their row stack Mcat [T·N, V]; per iteration E_t = M_t·Bᵀ, the forward and
    backward passes row-batched, full-shape divisors c_t·ones[1,K] and Σ·ones[1,·],
    X = Acatᵀ·Wcat and Bn = Γcatᵀ·Mcat over row-stacked α̂_t, w_t, γ_t."""
    O = start.constants["O"]
    N, T = O.shape
    V = cfg["symbols"]
    R, S = _r(q), 10 ** q
    w = GraphWriter(name, wire_only=True)
    op = w.op
    o = w.param("O")
    pi, A, B, score = (w.param(n) for n in STATE)
    # per-round constants of the flow: ones, masks
    os_ = op("div", o, w.const(S))                                        # symbol ids [N,T]
    os_t = [op("split", os_, axis=1, sections=T, index=t) for t in range(T)]  # [N,1]
    ones_n = op("eq", os_t[0], os_t[0])                                   # [N,1]
    ones_k = op("eq", pi, pi)                                             # [1,K]
    vrow = w.const(Tensor((1, V), tuple(range(V))))
    ones_v = op("eq", vrow, vrow)                                         # [1,V]
    vfull = op("matmul", ones_n, vrow)                                    # [N,V]
    mask = [op("eq", op("matmul", os_t[t], ones_v), vfull) for t in range(T)]
    mcat = _stack(op, mask)                                               # [T·N, V]
    c_r, c_ps, c_ps2 = w.const(R), w.const(PS), w.const(PS * PS)
    for _ in range(count):
        pi, A, B, score = _em(w, mask, mcat, ones_n, ones_k, ones_v, pi, A, B,
                              c_r, c_ps, c_ps2, N, T)
    return w.finish([("pi", pi), ("A", A), ("B", B), ("score", score)])


def _stack(op, parts: list[int]) -> int:
    """Row-stack equal-width tensors (concat along axis 0, in order)."""
    out = parts[0]
    for p in parts[1:]:
        out = op("concat", out, p, axis=0)
    return out


def _em(w, mask, mcat, ones_n, ones_k, ones_v, pi, A, B, c_r, c_ps, c_ps2, N, T):
    """One EM iteration (§12.3, §12.4) on node ids; returns (pi, A, B, score) node ids."""
    op = w.op
    bt, at = op("transpose", B), op("transpose", A)
    E = [op("matmul", mask[t], bt) for t in range(T)]                      # [N,K]
    alpha, cfull, cs = [], [], []
    for t in range(T):
        if t == 0:
            pe = op("mul", op("matmul", ones_n, pi), E[0])
            a = op("div", op("mul", pe, c_r), c_ps2)                       # π·E·R / PS²
        else:
            m = op("matmul", alpha[t - 1], A)
            a = op("div", op("mul", m, E[t]), c_ps2)                       # m·E / PS²
        c = op("tensor_sum", a, axis=1)                                    # [N,1]
        cf = op("matmul", c, ones_k)                                       # [N,K]
        alpha.append(op("div", op("mul", a, c_r), cf))                     # a·R / c
        cs.append(c)
        cfull.append(cf)
    beta, u = [None] * T, [None] * (T - 1)
    for t in range(T - 2, -1, -1):
        be = op("mul", E[t + 1], c_r) if t == T - 2 else op("mul", beta[t + 1], E[t + 1])
        u[t] = op("div", be, c_ps)                                         # β̂·E / PS
        v = op("div", op("matmul", u[t], at), c_ps)                        # A·u / PS
        beta[t] = op("div", op("mul", v, c_r), cfull[t + 1])               # v·R / c
    gamma = [op("div", op("mul", alpha[t], beta[t] if t < T - 1 else c_r), c_r)
             for t in range(T)]                                            # α̂·β̂ / R
    total = cs[0]
    for c in cs[1:]:
        total = op("add", total, c)
    score = op("div", op("tensor_sum", total, axis=0), w.const(N * T))    # Σc / (N·T)  [1,1]
    # M-step
    wt = [op("div", op("mul", u[t], c_r), cfull[t + 1]) for t in range(T - 1)]  # u·R / c
    X = op("matmul", op("transpose", _stack(op, alpha[:T - 1])), _stack(op, wt))
    xp = op("mul", op("div", X, c_r), A)                                   # tdiv(X,R)·A
    a2 = op("div", op("mul", xp, c_ps),
            op("matmul", op("tensor_sum", xp, axis=1), ones_k))            # X'·PS / ΣX'
    bn = op("matmul", op("transpose", _stack(op, gamma)), mcat)            # [K,V]
    b2 = op("div", op("mul", bn, c_ps),
            op("matmul", op("tensor_sum", bn, axis=1), ones_v))            # Bn·PS / ΣBn
    g0 = op("div", op("tensor_sum", gamma[0], axis=0), w.const(N))         # Σγ₀ / N
    pi2 = op("div", op("mul", g0, c_ps), c_r)                              # ·PS / R
    return pi2, a2, b2, score


def epilogue(start: Start, state: dict, extras: list, cfg: dict, q: int):
    """Descriptor of §12.5 and the last E-step's score [1x1]."""
    K, V, T = cfg["states"], cfg["symbols"], cfg["steps"]
    payload = [K, V, *state["pi"].data, *state["A"].data, *state["B"].data]
    descriptor = pack(ALGO_ID, q, T, K, 0, payload)
    score = state["score"]
    return descriptor, Tensor((1, 1), score.data)


def predict(slots, O: Tensor, q: int) -> Tensor:
    """§12.6: argmax_k γ_t[n][k] (ties → lowest k) with the stored parameters, as [N, T]."""
    slots = list(slots.data if isinstance(slots, Tensor) else slots)
    K, V = descriptor.payload(slots)[:2]  # states, symbols; then the parameters
    p = descriptor.HEADER_SLOTS + 2
    pi = slots[p:p + K]
    A = [slots[p + K + i * K:p + K + (i + 1) * K] for i in range(K)]
    b0 = p + K + K * K
    B = [slots[b0 + k * V:b0 + (k + 1) * V] for k in range(K)]
    obs = symbols(O, V, q)
    gamma = e_step(pi, A, B, obs, q)["gamma"]
    N, T = O.shape
    out = []
    for n in range(N):
        for t in range(T):
            g = gamma[t][n]
            out.append(max(range(K), key=lambda k: (g[k], -k)))
    return Tensor((N, T), tuple(out))
