"""Frames (spec/wire.md §2.5) over a child's stdin/stdout pipes with a deadline on every
write and read: a child that stops reading or answering cannot hold the run."""
import os
import select
import time

from bark_vm.wire.frames import FRAME_HEADER_BYTES, frame_bytes

from .bounds import MAX_ANSWER_BYTES


_MAX_POLL_MS = 2 ** 31 - 1  # poll() takes a C int of milliseconds


class PipeClosed(Exception):
    """The child closed its end, or sent what cannot be a frame (`why` says which)."""

    def __init__(self, why: str = ""):
        super().__init__(why)
        self.why = why


class PipeTimeout(Exception):
    """The deadline passed before the frame was written or read whole."""


class FramePipe:
    def __init__(self, write_fd: int, read_fd: int):
        self._w, self._r = write_fd, read_fd
        os.set_blocking(write_fd, False)
        os.set_blocking(read_fd, False)
        self._buf = bytearray()

    def _ready(self, fd: int, writing: bool, end: float) -> None:
        left = end - time.monotonic()
        if left <= 0:
            raise PipeTimeout()
        poller = select.poll()
        poller.register(fd, select.POLLOUT if writing else select.POLLIN)
        if not poller.poll(min(left * 1000, _MAX_POLL_MS)):
            raise PipeTimeout()

    def write_frame(self, ftype: bytes, payload: bytes, end: float) -> None:
        view = memoryview(frame_bytes(ftype, payload))
        while view:
            self._ready(self._w, True, end)
            try:
                view = view[os.write(self._w, view):]
            except BlockingIOError:
                continue
            except OSError:  # EPIPE: the child is gone
                raise PipeClosed() from None

    def _fill(self, n: int, end: float) -> None:
        while len(self._buf) < n:
            self._ready(self._r, False, end)
            try:
                chunk = os.read(self._r, max(n - len(self._buf), 1 << 16))
            except BlockingIOError:
                continue
            except OSError:
                raise PipeClosed() from None
            if not chunk:
                raise PipeClosed()
            self._buf += chunk

    def read_frame(self, end: float) -> tuple[bytes, bytes]:
        """(type, payload) of the next frame; PipeClosed at EOF, PipeTimeout past `end`."""
        self._fill(FRAME_HEADER_BYTES, end)
        length = int.from_bytes(self._buf[4:FRAME_HEADER_BYTES], "little")
        if length > MAX_ANSWER_BYTES:
            raise PipeClosed(f"announced a {length}-byte frame, over the {MAX_ANSWER_BYTES}-"
                             "byte cap")
        self._fill(FRAME_HEADER_BYTES + length, end)
        ftype = bytes(self._buf[:4])
        payload = bytes(self._buf[FRAME_HEADER_BYTES:FRAME_HEADER_BYTES + length])
        del self._buf[:FRAME_HEADER_BYTES + length]
        return ftype, payload
