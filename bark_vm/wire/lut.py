"""The activation lookup tables (spec/wire.md §1.8, spec/ml-exact.md §1.1): facts both sides share (R35).

Each table samples f at x = LO + STEP·k thousandths and stores round(f(x/1000)·10^6), clamped.
Only the tables live here; the reference and the executor each evaluate them themselves.
numpy-free and maned-free: the worker image imports it alone.
"""
import math
from dataclasses import dataclass

STEP = 64            # grid step, in thousandths
XSCALE = 1000        # table inputs are fixed point, scale 1000
VSCALE = 10 ** 6     # table values are fixed point, scale 10^6


@dataclass(frozen=True)
class Table:
    """A sampled function: values[k] = f((lo + STEP·k)/1000)·10^6, rounded and clamped."""

    name: str
    lo: int
    values: tuple[int, ...]

    @property
    def hi(self) -> int:
        """The input (thousandths) of the last entry; inputs at or past it saturate there."""
        return self.lo + STEP * (len(self.values) - 1)


def _round_half_away(v: float) -> int:
    return int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)


def _sample(name, f, lo, steps, vmin, vmax) -> Table:
    values = tuple(
        min(vmax, max(vmin, _round_half_away(f((lo + STEP * k) / XSCALE) * VSCALE)))
        for k in range(steps + 1)
    )
    return Table(name, lo, values)


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


SIGMOID = _sample("sigmoid", _sigmoid, -16000, 500, 0, VSCALE)
TANH = _sample("tanh", math.tanh, -8000, 250, -VSCALE, VSCALE)
EXP = _sample("exp", math.exp, -16000, 250, 0, VSCALE)

SIGMOID_LO, TANH_LO, EXP_LO = SIGMOID.lo, TANH.lo, EXP.lo
