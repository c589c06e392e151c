"""CSV in and out (R10, R45): Decimal cells through the quantizer, never floats."""
import re
from dataclasses import dataclass

from ..diagnostics import Diagnostic, MnError
from ..lang.ast import Quant
from ..numeric.int32 import INT32_MAX, INT32_MIN, fits32
from ..tensor import Tensor
from .files import decode_utf8, read_bytes
from decimal import Decimal

from .quant import decode, encode, encode_plain

_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d{1,6})?")


@dataclass(frozen=True)
class CsvRead:
    tensor: Tensor
    notes: tuple[str, ...]


def _bad(path: str, line: int, col: int, why: str) -> MnError:
    return MnError(Diagnostic("E029", f"{path}:{line}:{col}: {why}", stage="run"))


def read_text(path: str, shown: str) -> str:
    """The file's text; EIO when it cannot be read, E029 when it is not UTF-8."""
    text, bad = decode_utf8(read_bytes(path, shown))
    if text is None:
        raise _bad(shown, bad.line, bad.col, "the file is not UTF-8 text")
    return text


def parse_csv(text: str, shown: str, quant: Quant) -> CsvRead:
    """A numeric table -> [rows, cols]. A first row with a non-numeric cell is a header."""
    lines = text.replace("\r\n", "\n").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    return _in_one_pass(lines, shown, quant) or _row_by_row(lines, shown, quant)


def _in_one_pass(lines: list[str], shown: str, quant: Quant) -> CsvRead | None:
    """The whole table at once when every data row has one width and every cell is a plain
    decimal clear of the clamp bounds and inside int32; None for anything else, which
    `_row_by_row` reads and words."""
    notes = []
    if lines and any(c and not _NUMBER.fullmatch(c) for c in
                     (c.strip() for c in lines[0].split(","))):
        notes.append(f"'{shown}' line 1 is a header; skipped")
        lines = lines[1:]
    commas = {line.count(",") for line in lines}
    if len(commas) != 1:
        return None
    values = encode_plain([c.strip() for c in ",".join(lines).split(",")], quant)
    if values is None or not all(INT32_MIN <= v <= INT32_MAX for v in (min(values),
                                                                          max(values))):
        return None
    return CsvRead(Tensor((len(lines), commas.pop() + 1), tuple(values)), tuple(notes))


def _row_by_row(lines: list[str], shown: str, quant: Quant) -> CsvRead:
    notes, rows, width, clamps = [], [], None, 0
    for n, line in enumerate(lines, start=1):
        cells = line.split(",")
        stripped = [c.strip() for c in cells]
        if n == 1 and any(c and not _NUMBER.fullmatch(c) for c in stripped):
            notes.append(f"'{shown}' line 1 is a header; skipped")
            continue
        if width is None:
            width = len(cells)
        elif len(cells) != width:
            raise _bad(shown, n, 1, f"ragged row: {len(cells)} cells, expected {width}")
        row, col = [], 1
        for cell, s in zip(cells, stripped):
            if not _NUMBER.fullmatch(s):
                what = "an empty cell" if not s else f"'{s}' is not a number"
                raise _bad(shown, n, col, what)
            value, clamped = encode(Decimal(s), quant)
            clamps += clamped
            if not fits32(value):
                raise MnError(Diagnostic("E026", f"{shown}:{n}:{col}: {s} scales to {value}, "
                                         "outside int32", stage="run"))
            row.append(value)
            col += len(cell) + 1
        rows.append(row)
    if not rows:
        raise _bad(shown, max(len(lines), 1), 1, "no data rows")
    if clamps:
        notes.append(f"'{shown}': {clamps} value(s) clamped to the quant range "
                     f"[{quant.quantmin}, {quant.quantmax}]")
    return CsvRead(Tensor((len(rows), width), tuple(v for r in rows for v in r)), tuple(notes))


def format_csv(t: Tensor, quantres: int) -> str:
    """Rank 0: one value; rank 1: one row; rank 2: rows. `,` separated, `\\n` ends."""
    if t.rank == 0:
        rows = [t.data]
    elif t.rank == 1:
        rows = [t.data]
    else:
        rows = t.rows()
    return "".join(",".join(decode(v, quantres) for v in r) + "\n" for r in rows)
