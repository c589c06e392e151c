"""Frames (spec/wire.md §2.5) over a child's stdin/stdout pipes with a deadline on every
write and read: a child that stops reading or answering cannot hold the run. A failure is a
DeviceFailure whose message the device completes: kind `died` (the child closed its end),
`timeout` (the deadline passed) or `malformed_response` (what cannot be a frame, said)."""
import os
import select
import time

from bark_vm.wire.frames import FRAME_HEADER_BYTES, frame_bytes

from ..failures import DeviceFailure, malformed
from .bounds import MAX_ANSWER_BYTES


_MAX_POLL_MS = 2 ** 31 - 1  # poll() takes a C int of milliseconds


def _closed() -> DeviceFailure:
    return DeviceFailure("", kind="died")


def _past_deadline() -> DeviceFailure:
    return DeviceFailure("", kind="timeout")


class FramePipe:
    def __init__(self, write_fd: int, read_fd: int):
        self._w, self._r = write_fd, read_fd
        os.set_blocking(write_fd, False)
        os.set_blocking(read_fd, False)
        self._buf = bytearray()

    def _ready(self, fd: int, writing: bool, end: float) -> None:
        left = end - time.monotonic()
        if left <= 0:
            raise _past_deadline()
        poller = select.poll()
        poller.register(fd, select.POLLOUT if writing else select.POLLIN)
        if not poller.poll(min(left * 1000, _MAX_POLL_MS)):
            raise _past_deadline()

    def write_frame(self, ftype: bytes, payload: bytes, end: float) -> None:
        view = memoryview(frame_bytes(ftype, payload))
        while view:
            self._ready(self._w, True, end)
            try:
                view = view[os.write(self._w, view):]
            except BlockingIOError:
                continue
            except OSError:  # EPIPE: the child is gone
                raise _closed() from None

    def _fill(self, n: int, end: float) -> None:
        while len(self._buf) < n:
            self._ready(self._r, False, end)
            try:
                chunk = os.read(self._r, max(n - len(self._buf), 1 << 16))
            except BlockingIOError:
                continue
            except OSError:
                raise _closed() from None
            if not chunk:
                raise _closed()
            self._buf += chunk

    def read_frame(self, end: float) -> tuple[bytes, bytes]:
        """(type, payload) of the next frame; DeviceFailure at EOF or past `end`."""
        self._fill(FRAME_HEADER_BYTES, end)
        length = int.from_bytes(self._buf[4:FRAME_HEADER_BYTES], "little")
        if length > MAX_ANSWER_BYTES:
            raise malformed("", f"announced a {length}-byte frame, over the "
                            f"{MAX_ANSWER_BYTES}-byte cap")
        self._fill(FRAME_HEADER_BYTES + length, end)
        ftype = bytes(self._buf[:4])
        payload = bytes(self._buf[FRAME_HEADER_BYTES:FRAME_HEADER_BYTES + length])
        del self._buf[:FRAME_HEADER_BYTES + length]
        return ftype, payload
