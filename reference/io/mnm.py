"""`.mnm` model files (R13): u64 LE slot count N, N × i64 LE slots, then the u64 LE FNV-1a-64
of every preceding byte. Validated on write and on read (a bad file is E029)."""
import struct

from ..diagnostics import Diagnostic, MnError
from ..ml import descriptor
from ..tensor import Tensor
from .files import read_bytes

FNV_BASIS = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3


def fnv1a64(data: bytes) -> int:
    h = FNV_BASIS
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


def encode(slots: tuple[int, ...]) -> bytes:
    body = struct.pack(f"<Q{len(slots)}q", len(slots), *slots)
    return body + struct.pack("<Q", fnv1a64(body))


def decode(raw: bytes) -> tuple[int, ...] | str:
    """The slots, or why the bytes are not a model file."""
    if len(raw) < 16:
        return f"{len(raw)} bytes is too short for a model file"
    (n,) = struct.unpack_from("<Q", raw)
    if 16 + 8 * n != len(raw):
        return f"the header says {n} slots, the file holds {(len(raw) - 16) / 8:g}"
    (checksum,) = struct.unpack_from("<Q", raw, len(raw) - 8)
    if fnv1a64(raw[:-8]) != checksum:
        return "checksum mismatch (the file is corrupt)"
    slots = struct.unpack_from(f"<{n}q", raw, 8)
    why = descriptor.validate(slots)
    return f"not a model descriptor: {why}" if why else slots


def read_model(path: str, shown: str) -> Tensor:
    got = decode(read_bytes(path, shown))
    if isinstance(got, str):
        raise MnError(Diagnostic("E029", f"{shown}: {got}", stage="run"))
    return Tensor((len(got),), got, wide=True)


def model_problem(t: Tensor) -> str | None:
    """Why `t` cannot be written as a model file, or None."""
    if t.rank != 1:
        return f"a model descriptor is a rank-1 vector, not shape {list(t.shape)}"
    if not all(descriptor.INT64_MIN <= v <= descriptor.INT64_MAX for v in t.data):
        return "a slot does not fit int64"
    why = descriptor.validate(t.data)
    return f"not a model descriptor: {why}" if why else None
