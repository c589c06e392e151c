"""The opening every binary format shares (IR module, MNPK, MNRS): a minimum length, a
4-byte magic and a u16 LE version. Every problem is BAD_ENVELOPE."""
from .constants import WorkerError


def bad(detail: str) -> WorkerError:
    return WorkerError("BAD_ENVELOPE", detail)


def read_head(raw: bytes, what: str, magic: bytes, header_bytes: int) -> int:
    """Check length and magic; return the version field (the caller checks its value)."""
    if len(raw) < header_bytes:
        raise bad(f"{what} is {len(raw)} bytes, shorter than its {header_bytes}-byte header")
    if raw[:4] != magic:
        raise bad(f"{what} magic is wrong")
    return int.from_bytes(raw[4:6], "little")
