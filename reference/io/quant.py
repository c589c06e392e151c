"""The quantizer boundary (D14, R10): real numbers <-> scaled integers at quantres q."""
import re
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


_PLAIN = re.compile(r"([+-]?)(\d+)(?:\.(\d*))?")  # a decimal without an exponent


def encode_plain(texts, quant: Quant) -> list[int] | None:
    """`encode(Decimal(t), quant)` of each text, read in integers, when every text is a plain
    decimal (no exponent) whose value lies clear of the clamp bounds; else None, and
    `encode` is the one to ask."""
    q = quant.quantres
    s = 10 ** q
    lo, hi = quant.quantmin * s + 1, quant.quantmax * s - 1
    plain, zeros, out = _PLAIN.fullmatch, "0" * q, []
    for text in texts:
        m = plain(text)
        if m is None:
            return None
        sign, whole, frac = m.groups()
        if frac is None:
            magnitude = int(whole + zeros)
        else:
            magnitude = int(whole + (frac + zeros)[:q])
            if len(frac) > q and frac[q] >= "5":  # half away from zero, as ROUND_HALF_UP
                magnitude += 1
        value = -magnitude if sign == "-" else magnitude
        if not lo < value < hi:  # a clamp is possible: `encode` decides
            return None
        out.append(value)
    return out


def decode(v: int, quantres: int) -> str:
    """v / 10^q written with exactly q decimals (csv out)."""
    if quantres == 0:
        return str(v)
    sign = "-" if v < 0 else ""
    whole, frac = divmod(abs(v), 10 ** quantres)
    return f"{sign}{whole}.{frac:0{quantres}d}"
