"""Decimal text read as a whole number: ASCII digits only, its length asked before int()
(which refuses more than 4,300 digits with a ValueError), so any text is a number or None."""


def whole_number(text, lo: int, hi: int) -> int | None:
    """`text` as a whole number in lo..hi, else None (not text, not digits, out of range)."""
    if not isinstance(text, str) or not (text.isascii() and text.isdigit()):
        return None
    digits = text.lstrip("0") or "0"
    if len(digits) > len(str(hi)):
        return None
    value = int(digits)
    return value if lo <= value <= hi else None
