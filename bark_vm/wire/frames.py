"""The bark-vm stdio framing (spec/wire.md §2.5, wire-golden §7 [W18]).

A frame is a 4-byte ASCII type, a u32 LE payload length, then the payload. `read_frame`
returns None at EOF on a frame boundary and raises `TruncatedFrame` at EOF inside one; a
payload longer than `max_payload` is read and discarded (`Frame.payload` is None).
"""
import json
from dataclasses import dataclass

from . import strict_json
from .constants import FRAME_ERRJ, WorkerError

FRAME_HEADER_BYTES = 8
_CHUNK = 1 << 16


class TruncatedFrame(Exception):
    """EOF inside a frame: a protocol error (the VM exits 1, a client treats the peer as dead)."""


@dataclass(frozen=True)
class Frame:
    type: bytes
    length: int
    payload: bytes | None  # None: longer than max_payload, drained unread


def _read_exact(stream, n: int) -> bytes:
    parts, left = [], n
    while left:
        got = stream.read(min(left, _CHUNK))
        if not got:
            break
        parts.append(got)
        left -= len(got)
    return b"".join(parts)


def read_frame(stream, max_payload: int | None = None) -> Frame | None:
    head = _read_exact(stream, FRAME_HEADER_BYTES)
    if not head:
        return None
    if len(head) < FRAME_HEADER_BYTES:
        raise TruncatedFrame(f"EOF after {len(head)} bytes of a frame header")
    ftype, length = head[:4], int.from_bytes(head[4:], "little")
    if max_payload is not None and length > max_payload:
        left = length
        while left:
            got = stream.read(min(left, _CHUNK))
            if not got:
                raise TruncatedFrame(f"EOF inside a {length}-byte payload")
            left -= len(got)
        return Frame(ftype, length, None)
    payload = _read_exact(stream, length)
    if len(payload) < length:
        raise TruncatedFrame(f"EOF after {len(payload)} of {length} payload bytes")
    return Frame(ftype, length, payload)


def frame_bytes(ftype: bytes, payload: bytes) -> bytes:
    if len(ftype) != 4:
        raise ValueError(f"frame type {ftype!r} is not 4 bytes")
    return ftype + len(payload).to_bytes(4, "little") + payload


def write_frame(stream, ftype: bytes, payload: bytes) -> None:
    """One frame in one write, then flush."""
    stream.write(frame_bytes(ftype, payload))
    stream.flush()


def error_json(err: WorkerError) -> bytes:
    """The CDP error body `{"error":CODE,"detail":"..."}`, compact ASCII."""
    return json.dumps(err.to_json(), separators=(",", ":")).encode("ascii")


def errj_frame(err: WorkerError) -> bytes:
    return frame_bytes(FRAME_ERRJ, error_json(err))


def parse_error_json(raw: bytes) -> tuple[str, str] | None:
    """(code, detail) of a CDP error body, or None when it is not one (wire.md §3.6)."""
    try:
        obj = strict_json.loads(raw)
    except ValueError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("error"), str) or not obj["error"]:
        return None
    detail = obj.get("detail")
    return obj["error"], detail if isinstance(detail, str) else ""
