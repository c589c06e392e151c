"""MNPK requests and MNRS results (spec/wire.md §2.1-2.3, wire-golden §1.6, DESIGN D5).

Plain Python data, no numpy: a tensor entry is `(shape, data)`, a tuple of dims (rank 1..MAX_RANK,
each ≥ 1) and a flat row-major tuple of ints; a worker may ask for `data` as the entry's own
little-endian bytes instead (`buffers=True`), and may encode bytes it made that way, so a
large tensor never becomes one Python object per element. Encoding is byte-deterministic
and refuses an unencodable value with ValueError. Decoding checks every length against the bytes left and
raises `WorkerError("BAD_ENVELOPE", detail)` for anything wrong; nothing else escapes.
"""
import struct
from dataclasses import dataclass
from math import prod

from .constants import (
    ENVELOPE_VERSION, MAX_RANK, MAX_TENSORS, MNPK_HEADER_BYTES,
    MNPK_MAGIC, MNRS_HEADER_BYTES, MNRS_MAGIC,
)
from .dtypes import DTYPE_NAME, DTYPE_RANGE, ELEM_BYTES, ELEM_FORMAT, wire_dtype
from .header import bad as _bad, read_head

Entry = tuple[tuple[int, ...], tuple[int, ...]]


@dataclass(frozen=True)
class QuantBlock:
    """The 8-byte quant block: quantres u8, dtype u8, reserved, quantmin i16, quantmax i16."""

    quantres: int
    dtype: int
    quantmin: int
    quantmax: int


@dataclass(frozen=True)
class Request:
    quant: QuantBlock
    ir: bytes
    entries: tuple[Entry, ...]


@dataclass(frozen=True)
class Result:
    status: int
    entries: tuple[Entry, ...]
    dtype: int | None = None  # the entries' dtype (None when there are none)
    indexes: tuple[int, ...] = ()  # each entry's param_index, in order


def quant_block(quantres: int, quantmin: int, quantmax: int) -> QuantBlock:
    """The block for a script's directives; ValueError when they do not fit u8 / i16."""
    if not 0 <= quantres <= 255 or not all(-32768 <= v <= 32767 for v in (quantmin, quantmax)):
        raise ValueError(f"quant directives (quantres {quantres}, quantmin {quantmin}, "
                         f"quantmax {quantmax}) do not fit the MNPK quant block")
    return QuantBlock(quantres, wire_dtype(quantres, quantmin, quantmax), quantmin, quantmax)


# --- encoding -------------------------------------------------------------------------------
def encode_entry(index: int, entry: Entry, dtype: int) -> bytes:
    """One tensor entry. `data` is the flat values, or their little-endian bytes in the
    envelope's dtype (a worker's buffer: the values fit by construction)."""
    shape = tuple(entry[0])
    head = _entry_head(index, shape, dtype)
    if isinstance(entry[1], (bytes, bytearray, memoryview)):
        data = bytes(entry[1])
        if len(data) != prod(shape) * ELEM_BYTES[dtype]:
            raise ValueError(f"tensor {index}: {len(data)} bytes do not hold dims "
                             f"{list(shape)}")
        return head + data
    values = tuple(entry[1])
    if prod(shape) != len(values):
        raise ValueError(f"tensor {index}: dims {list(shape)} do not hold {len(values)} "
                         "elements")
    lo, hi = DTYPE_RANGE[dtype]
    if values and not lo <= min(values) <= max(values) <= hi:
        bad = next(v for v in values if not lo <= v <= hi)
        raise ValueError(f"tensor {index}: value {bad} does not fit {DTYPE_NAME[dtype]}")
    return head + struct.pack(f"<{len(values)}{ELEM_FORMAT[dtype]}", *values)


def _entry_head(index: int, shape: tuple[int, ...], dtype: int) -> bytes:
    """An entry's index, dtype, rank and dims, each checked against its field's width."""
    if not 1 <= len(shape) <= MAX_RANK:
        raise ValueError(f"tensor {index}: rank {len(shape)} is not 1..{MAX_RANK}")
    if any(not 1 <= d <= 0xFFFFFFFF for d in shape):
        raise ValueError(f"tensor {index}: dims {list(shape)} must each be 1..2^32-1")
    if not 0 <= index <= 255:
        raise ValueError(f"tensor index {index} does not fit u8")
    return bytes((index, dtype, len(shape), 0)) + struct.pack(f"<{len(shape)}I", *shape)


def _dtype_ok(dtype: int) -> None:
    if dtype not in ELEM_BYTES:
        raise ValueError(f"dtype {dtype} is not 1 (int8) or 2 (int32)")


def request_head(quant: QuantBlock, ir: bytes, count: int) -> bytes:
    """An MNPK's header and IR, for `count` tensor entries to follow."""
    _dtype_ok(quant.dtype)
    if count > MAX_TENSORS:
        raise ValueError(f"{count} tensors, a request carries at most {MAX_TENSORS}")
    return (MNPK_MAGIC + ENVELOPE_VERSION.to_bytes(2, "little") + b"\0\0"
            + len(ir).to_bytes(4, "little") + count.to_bytes(4, "little")
            + bytes((quant.quantres, quant.dtype)) + b"\0\0"
            + quant.quantmin.to_bytes(2, "little", signed=True)
            + quant.quantmax.to_bytes(2, "little", signed=True) + bytes(ir))


def encode_request(quant: QuantBlock, ir: bytes, entries) -> bytes:
    entries = list(entries)
    return request_head(quant, ir, len(entries)) + b"".join(
        encode_entry(k, e, quant.dtype) for k, e in enumerate(entries))


def encode_result(entries, dtype: int, status: int = 0) -> bytes:
    _dtype_ok(dtype)
    entries = list(entries)
    if not 0 <= status <= 0xFFFF:
        raise ValueError(f"status {status} does not fit u16")
    return (MNRS_MAGIC + ENVELOPE_VERSION.to_bytes(2, "little") + status.to_bytes(2, "little")
            + len(entries).to_bytes(4, "little")
            + b"".join(encode_entry(k, e, dtype) for k, e in enumerate(entries)))


# --- decoding -------------------------------------------------------------------------------

def _entries(raw: bytes, at: int, count: int, dtype: int | None, dense: bool = True,
             buffers: bool = False) -> tuple[tuple[Entry, ...], int, tuple[int, ...]]:
    """`count` entries from offset `at`; every one must carry `dtype` (None: the first's).
    Returns (entries, end offset, param indexes); `dense` refuses an index ≠ its position;
    `buffers` gives each entry's data as a memoryview of its bytes."""
    out, indexes = [], []
    for k in range(count):
        if len(raw) - at < 4:
            raise _bad(f"tensor entry {k} header is truncated")
        index, dt, rank, reserved = raw[at:at + 4]
        indexes.append(index)
        if dense and index != k:
            raise _bad(f"tensor entry {k} has param_index {index}")
        if dt not in ELEM_BYTES:
            raise _bad(f"tensor entry {k} dtype {dt} is not 1 or 2")
        if dtype is None:
            dtype = dt
        if dt != dtype:
            raise _bad(f"tensor entry {k} dtype {dt} differs from the envelope's {dtype}")
        if not 1 <= rank <= MAX_RANK:
            raise _bad(f"tensor entry {k} rank {rank} is not 1..{MAX_RANK}")
        if reserved:
            raise _bad(f"tensor entry {k} reserved byte is not 0")
        at += 4
        if len(raw) - at < 4 * rank:
            raise _bad(f"tensor entry {k} dims are truncated")
        shape = tuple(int.from_bytes(raw[at + 4 * j: at + 4 * j + 4], "little")
                      for j in range(rank))
        at += 4 * rank
        if 0 in shape:
            raise _bad(f"tensor entry {k} has a zero dim")
        size = ELEM_BYTES[dt]
        nbytes = prod(shape) * size  # Python ints: no wrap-around
        if nbytes > len(raw) - at:
            raise _bad(f"tensor entry {k} data is truncated")
        data = (memoryview(raw)[at:at + nbytes] if buffers else
                struct.unpack_from(f"<{nbytes // size}{ELEM_FORMAT[dt]}", raw, at))
        at += nbytes
        out.append((shape, data))
    return tuple(out), at, tuple(indexes)


def decode_request(raw: bytes, buffers: bool = False) -> Request:
    """Step 2 of wire-golden §6.1: the MNPK envelope, every length checked; `buffers`: each
    entry's data as a memoryview of its little-endian bytes (a worker's choice)."""
    raw = bytes(raw)
    version = read_head(raw, "MNPK", MNPK_MAGIC, MNPK_HEADER_BYTES)
    if version != ENVELOPE_VERSION:
        raise _bad(f"MNPK version {version} is not {ENVELOPE_VERSION}")
    if raw[6:8] != b"\0\0":
        raise _bad("MNPK flags are not 0")
    ir_size = int.from_bytes(raw[8:12], "little")
    count = int.from_bytes(raw[12:16], "little")
    quantres, dtype = raw[16], raw[17]
    if raw[18:20] != b"\0\0":
        raise _bad("MNPK quant reserved bytes are not 0")
    if dtype not in ELEM_BYTES:
        raise _bad(f"MNPK quant dtype {dtype} is not 1 or 2")
    if count > MAX_TENSORS:
        raise _bad(f"MNPK tensor_count {count} is over {MAX_TENSORS}")
    if ir_size > len(raw) - MNPK_HEADER_BYTES:
        raise _bad(f"MNPK ir_size {ir_size} runs past the end")
    quant = QuantBlock(quantres, dtype, int.from_bytes(raw[20:22], "little", signed=True),
                       int.from_bytes(raw[22:24], "little", signed=True))
    at = MNPK_HEADER_BYTES + ir_size
    entries, at, _ = _entries(raw, at, count, dtype, buffers=buffers)
    if at != len(raw):
        raise _bad(f"MNPK has {len(raw) - at} trailing bytes")
    return Request(quant, raw[MNPK_HEADER_BYTES:MNPK_HEADER_BYTES + ir_size], entries)


def decode_result(raw: bytes, dtype: int | None = None, dense: bool = True) -> Result:
    """An MNRS; with `dtype`, every entry must carry it (the request's dtype, [W13]).
    With dense=False entry indexes are not checked but returned in `Result.indexes`, so a
    client can word "out of order" apart from "malformed" (wire.md §2.2)."""
    raw = bytes(raw)
    version = read_head(raw, "MNRS", MNRS_MAGIC, MNRS_HEADER_BYTES)
    if version != ENVELOPE_VERSION:
        raise _bad(f"MNRS version {version} is not {ENVELOPE_VERSION}")
    status = int.from_bytes(raw[6:8], "little")
    count = int.from_bytes(raw[8:12], "little")
    if count > MAX_TENSORS:
        raise _bad(f"MNRS tensor_count {count} is over {MAX_TENSORS}")
    entries, at, indexes = _entries(raw, MNRS_HEADER_BYTES, count, dtype, dense)
    if at != len(raw):
        raise _bad(f"MNRS has {len(raw) - at} trailing bytes")
    found = raw[MNRS_HEADER_BYTES + 1] if count else dtype
    return Result(status, entries, found, indexes)
