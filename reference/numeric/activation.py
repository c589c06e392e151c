"""The reference's evaluation of the activation LUTs (spec/ml-exact.md §1.1, spec/wire.md §1.8).

A register value i at quantres q (M = 10^q) becomes xf = rdiv(i·1000, M) thousandths, is
looked up with linear interpolation (saturating past the table's ends) and scaled back by
rdiv(v·M, 10^6). The tables themselves live in `bark_vm.wire.lut` (R35).
"""
from bark_vm.wire.constants import MAX_QUANTRES
from bark_vm.wire.lut import EXP, SIGMOID, STEP, TANH, VSCALE, XSCALE, Table

from ..failures import OpError
from .int32 import rdiv



def check_quantres(q: int) -> int:
    """M = 10^q for 0 <= q <= 9; any other q is refused."""
    if not 0 <= q <= MAX_QUANTRES:
        raise OpError(f"activation LUTs need 0 <= quantres <= {MAX_QUANTRES}, got quantres {q}")
    return 10 ** q


def lookup(table: Table, xf: int) -> int:
    """The table at xf thousandths: end entries past the domain, else v0 + rdiv((v1−v0)·frac, 64)."""
    if xf <= table.lo:
        return table.values[0]
    if xf >= table.hi:
        return table.values[-1]
    k, frac = divmod(xf - table.lo, STEP)
    v0, v1 = table.values[k], table.values[k + 1]
    return v0 + rdiv((v1 - v0) * frac, STEP)


def _evaluate(table: Table, i: int, q: int) -> int:
    m = check_quantres(q)
    return rdiv(lookup(table, rdiv(i * XSCALE, m)) * m, VSCALE)


def sigmoid(i: int, q: int) -> int:
    """σ(i) at scale 10^q: rdiv(σ_lut(rdiv(i·1000, M))·M, 10^6)."""
    return _evaluate(SIGMOID, i, q)


def tanh(i: int, q: int) -> int:
    """tanh(i) at scale 10^q, the same evaluation on the tanh table."""
    return _evaluate(TANH, i, q)


def exp_lut(xf: int) -> int:
    """e^(xf/1000)·10^6 from the exp table (domain [−16, 0]; softmax's helper)."""
    return lookup(EXP, xf)


def softmax(group: list[int], q: int) -> list[int]:
    """One group: e_j = exp_lut(rdiv((x_j − max)·1000, M)); out_j = rdiv(e_j·M, Σe)."""
    m = check_quantres(q)
    mx = max(group)
    e = [exp_lut(rdiv((x - mx) * XSCALE, m)) for x in group]
    total = sum(e)
    return [rdiv(ej * m, total) for ej in e]
