"""The quantizer boundary (D14, R10): real numbers <-> scaled integers at quantres q."""
from decimal import ROUND_HALF_UP, Decimal

from ..lang.ast import Quant


def encode(x: Decimal, quant: Quant) -> tuple[int, bool]:
    """round(x·10^q) half away from zero, clamped to [quantmin·10^q, quantmax·10^q].
    Returns (value, clamped)."""
    s = 10 ** quant.quantres
    lo, hi = quant.quantmin * s, quant.quantmax * s
    scaled = x.scaleb(quant.quantres)
    if scaled < lo:
        return lo, True
    if scaled > hi:
        return hi, True
    return int(scaled.quantize(Decimal(1), rounding=ROUND_HALF_UP)), False


def decode(v: int, quantres: int) -> str:
    """v / 10^q written with exactly q decimals (csv out)."""
    if quantres == 0:
        return str(v)
    sign = "-" if v < 0 else ""
    whole, frac = divmod(abs(v), 10 ** quantres)
    return f"{sign}{whole}.{frac:0{quantres}d}"
