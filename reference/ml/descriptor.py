"""The model descriptor (spec/ml-exact.md §3): an 8-slot header and a payload, int64 slots
that are never wrapped (R30)."""
from dataclasses import dataclass

from ..tensor import Tensor
from ..failures import Refused
from ..ml_catalogue import TRAINED, algorithm, by_layout

MAGIC = 1296974925  # 0x4D4E444D, "MNDM"
VERSION = 1
ALGO_IDS = {a: algorithm(a).algo_id for a in TRAINED}  # slot 2
ALGO_NAMES = {v: k for k, v in ALGO_IDS.items()}
FLAG_INTERCEPT = 1
FLAG_STANDARDIZED = 2
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
HEADER_SLOTS = 8  # slots 0..7, the fields of Header in order; the payload starts at slot 8
STD_BLOCK = tuple(a for a in TRAINED if algorithm(a).std_block)  # closed by mu_1.., sd_1..


def pack(algo_id: int, q: int, features: int, outputs: int, flags: int,
         payload: list[int]) -> Tensor:
    """Header + payload as a wide rank-1 tensor. A slot outside int64 is refused (§1.2)."""
    slots = [MAGIC, VERSION, algo_id, q, features, outputs, flags, len(payload), *payload]
    for i, v in enumerate(slots):
        if not INT64_MIN <= v <= INT64_MAX:
            raise Refused(f"descriptor slot {i} would be {v}, outside int64")
    return Tensor((len(slots),), tuple(slots), wide=True)


@dataclass(frozen=True)
class Header:
    """Slots 0..7 (§3)."""

    magic: int
    version: int
    algo_id: int
    q: int
    features: int
    outputs: int
    flags: int
    length: int

    @property
    def standardized(self) -> bool:
        return bool(self.flags & FLAG_STANDARDIZED)

    @property
    def std_block(self) -> bool:
        """Whether the payload ends with a std block (flag bit 1 on an algorithm that has
        one; the GD family always stores its statistics, the others never)."""
        return self.standardized and ALGO_NAMES.get(self.algo_id) in STD_BLOCK


def header(slots) -> Header:
    """The 8 header slots of a descriptor (at least 8 slots)."""
    return Header(*slots[:HEADER_SLOTS])


def payload(slots) -> tuple[int, ...]:
    """Everything after the header."""
    return tuple(slots[HEADER_SLOTS:])


# --- validity (§3): >= 8 int64 slots, slots 0, 1, 7 right, a listed id, the payload length the
# table gives for the counts it contains. Every count is guarded before it is used, so a
# forged descriptor gives a reason, never an exception or a huge allocation. -------------

def validate(slots) -> str | None:
    """None for a valid descriptor, else the reason it is not one."""
    slots = tuple(slots)
    if len(slots) < HEADER_SLOTS:
        return (f"not a model descriptor: {len(slots)} slots, a descriptor has at least "
                f"{HEADER_SLOTS}")
    if min(slots) < INT64_MIN or max(slots) > INT64_MAX:  # builtins: no loop of ours
        i = next(i for i, v in enumerate(slots) if not INT64_MIN <= v <= INT64_MAX)
        return f"slot {i} is outside int64 (a descriptor's slots are int64)"
    h = header(slots)
    if h.magic != MAGIC:
        return f"not a model descriptor: slot 0 is {h.magic}, not the magic {MAGIC}"
    if h.version != VERSION:
        return f"descriptor version (slot 1) is {h.version}, only version {VERSION} exists"
    names = ALGO_NAMES
    if h.algo_id not in names:
        return f"slot 2 is {h.algo_id}, not an algorithm id ({', '.join(map(str, names))})"
    p = payload(slots)
    if h.length != len(p):
        return f"slot 7 gives payload length {h.length}, but {len(p)} slots follow the header"
    try:
        _count("feature count (slot 4)", h.features, 1)
        _LAYOUT[names[h.algo_id]](h, p)
    except Refused as e:
        return f"{names[h.algo_id]} descriptor: {e}"
    return None


def _count(what: str, v: int, lo: int) -> int:
    if v < lo:
        raise Refused(f"{what} is {v}, must be at least {lo}")
    return v


def _counts(p, names: tuple[str, ...]) -> list[int]:
    """The first len(names) payload slots, each a count >= 1."""
    if len(p) < len(names):
        raise Refused(f"payload length {len(p)} cannot hold the counts {', '.join(names)}")
    return [_count(f"count {n} (slot {HEADER_SLOTS + i})", p[i], 1) for i, n in enumerate(names)]


def _length(p, expected: int, formula: str) -> None:
    if len(p) != expected:
        raise Refused(f"payload length {len(p)} does not match {formula} = {expected}")


def _std(h: Header) -> int:
    return 2 * h.features if h.std_block else 0


_LAYOUTS = {}  # layout name (a catalogue row's `layout`) -> its payload check
_layout = by_layout(_LAYOUTS)


@_layout("gd")
def _gd(h: Header, p) -> None:
    _length(p, 3 * h.features + 1, f"3d + 1 with d {h.features}")


@_layout("kmeans")
def _kmeans(h: Header, p) -> None:
    (k,) = _counts(p, ("k",))
    _length(p, 1 + k * h.features + _std(h),
            f"1 + k·d{' + 2d' if h.standardized else ''} with k {k}, d {h.features}")


@_layout("knn")
def _knn(h: Header, p) -> None:
    k, n = _counts(p, ("k", "n"))
    _length(p, 2 + n * h.features + n + _std(h),
            f"2 + n·d + n{' + 2d' if h.standardized else ''} with n {n}, d {h.features}")


@_layout("naive_bayes")
def _naive_bayes(h: Header, p) -> None:
    (c,) = _counts(p, ("C",))
    _length(p, 1 + 2 * c + 2 * c * h.features + _std(h),
            f"1 + 2C + 2C·d{' + 2d' if h.standardized else ''} with C {c}, d {h.features}")


@_layout("decision_tree")
def _decision_tree(h: Header, p) -> None:
    (m,) = _counts(p, ("M",))
    _length(p, 1 + 5 * m, f"1 + 5M with M {m}")
    _nodes(p[1:], m, h.features, "")


@_layout("isolation_forest")
def _isolation_forest(h: Header, p) -> None:
    (t,) = _counts(p, ("T",))
    if 1 + 6 * t > len(p):  # every tree takes at least 1 + 5 slots
        raise Refused(f"payload length {len(p)} cannot hold T {t} trees (at least 6 slots each)")
    at = 1
    for i in range(t):
        if at >= len(p):
            raise Refused(f"payload length {len(p)} ends before tree {i + 1} of {t}")
        m = _count(f"tree {i + 1} node count M (slot {HEADER_SLOTS + at})", p[at], 1)
        if at + 1 + 5 * m > len(p):
            raise Refused(f"payload length {len(p)} cannot hold tree {i + 1}'s {m} nodes")
        _nodes(p[at + 1:at + 1 + 5 * m], m, h.features, f"tree {i + 1} ")
        at += 1 + 5 * m
    _length(p, at, f"1 + Σ(1 + 5M_t) over the {t} trees")


@_layout("xgboost")
def _xgboost(h: Header, p) -> None:
    rounds, depth = _counts(p, ("rounds", "depth"))
    if depth > len(p).bit_length():  # 3·2^depth − 2 > len(p): never matches, never allocated
        raise Refused(f"depth {depth} needs more than the {len(p)} payload slots")
    per = 3 * 2 ** depth - 2
    _length(p, 2 + rounds * per, f"2 + rounds·(3·2^depth − 2) with rounds {rounds}, "
                                 f"depth {depth}")
    m = 2 ** depth - 1
    for r in range(rounds):
        for j in range(m):
            f = p[2 + r * per + 2 * j]
            if not (f == -1 or 0 <= f < h.features):
                raise Refused(f"round {r + 1} split {j} has feature {f}, not -1 or "
                               f"0..{h.features - 1}")


@_layout("hmm")
def _hmm(h: Header, p) -> None:
    k, v = _counts(p, ("K", "V"))
    _length(p, 2 + k + k * k + k * v, f"2 + K + K² + K·V with K {k}, V {v}")


def _nodes(nodes, m: int, d: int, which: str) -> None:
    """Tree node tables (feature, threshold, left, right, last): a node's feature is -1 (leaf)
    or a column, and an inner node's children come after it in the table (preorder), so
    following them always ends at a leaf."""
    for i in range(m):
        f, _, left, right, _ = nodes[5 * i:5 * i + 5]
        if f == -1:
            continue
        if not 0 <= f < d:
            raise Refused(f"{which}node {i} has feature {f}, not -1 or 0..{d - 1}")
        if not (i < left < m and i < right < m):
            raise Refused(f"{which}node {i} has children {left}, {right}, not nodes after "
                           f"it in 0..{m - 1}")


# Each algorithm's check; a row naming a layout without one fails here, at import.
_LAYOUT = {a: _LAYOUTS[algorithm(a).layout] for a in TRAINED}
