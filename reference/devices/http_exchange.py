"""One HTTP/1.1 request with one total deadline (spec/wire.md §3.1): a connect timeout, then a
single deadline from the first byte sent to the last byte read, so a peer that trickles
bytes cannot stretch the wait. The answer is capped in size.

A request may go over a connection an earlier answer left open (`Connection: keep-alive`,
R18 as revised in docs/wire.md): if the worker has closed it meanwhile (it closes an idle
one as soon as another client waits), nothing of an answer arrives, and the request is
sent once more on a fresh connection. A worker that closes after every answer is asked
on a fresh connection every time."""
import select
import socket
import threading
import time
from dataclasses import dataclass

from bark_vm.wire.constants import KEEP_ALIVE, MAX_CONTENT_LENGTH
from bark_vm.wire.digits import whole_number

from .bounds import MAX_ANSWER_BYTES, MAX_HEAD_BYTES
from ..failures import DeviceFailure, malformed, timed_out, too_large, unreachable


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]  # names lower-cased
    body: bytes


class Exchange:
    """One request. `abort()` (from another thread) ends a wait at once as connect_failed.
    After `send`, `kept` is the connection the answer left open (keep-alive), else None."""

    def __init__(self, host: str, port: int, connect_timeout: float, deadline_s: float):
        self.host, self.port = host, port
        self.connect_timeout, self.deadline_s = connect_timeout, deadline_s
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._aborted = False
        self._answered = False  # a byte of the answer has arrived
        self._surplus = False  # bytes came after the answer's Content-Length
        self.kept: socket.socket | None = None

    def abort(self) -> None:
        with self._lock:
            self._aborted = True
            if self._sock is not None:
                try:
                    self._sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def send(self, method: str, path: str, first: list[tuple[str, str]],
             then: list[tuple[str, str]], body: bytes | None,
             kept: socket.socket | None = None) -> Answer:
        """Headers in the spec's order: Host, `first` (the protocol header), Content-Length
        when there is a body, then `then` (token, content type, Connection). `kept`: a
        connection to this worker an earlier answer left open, tried first."""
        request = _request_bytes(self.host, self.port, method, path, first, then, body)
        end = time.monotonic() + self.deadline_s
        if kept is not None and not _quiet(kept):  # closed meanwhile, or holding stray bytes
            kept.close()
            kept = None
        if kept is not None:
            try:
                return self._over(kept, request, end)
            except DeviceFailure as e:
                if e.kind != "connect_failed" or self._answered or self._aborted:
                    raise
        return self._over(self._connect(), request, end)

    def _connect(self) -> socket.socket:
        try:
            sock = socket.create_connection((self.host, self.port), self.connect_timeout)
        except socket.timeout:
            raise timed_out("", "no connection", self.connect_timeout) from None
        except OSError as e:
            raise unreachable("", e.strerror or str(e)) from None
        except UnicodeError:  # a name no DNS label can be (over 63 characters, empty)
            raise unreachable("", "the host is not a valid name") from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    def _over(self, sock: socket.socket, request: bytes, end: float) -> Answer:
        """The request on `sock` and its answer; the socket is closed, or kept when the
        answer says keep-alive (and its length was given)."""
        with self._lock:
            self._sock = sock
            aborted = self._aborted
        keep = False
        try:
            if aborted:
                raise unreachable("", "the run was interrupted")
            self._send_all(sock, request, end)
            answer = self._read_answer(sock, end)
            keep = (answer.headers.get("connection", "").lower() == KEEP_ALIVE
                    and "content-length" in answer.headers and not self._surplus)
            return answer
        finally:
            with self._lock:
                self._sock = None
            if keep:
                self.kept = sock
            else:
                sock.close()

    # --- reading and writing against the deadline -------------------------------------------
    def _wait(self, sock: socket.socket, end: float) -> None:
        left = end - time.monotonic()
        if left <= 0:
            raise self._timeout()
        sock.settimeout(left)

    def _timeout(self) -> DeviceFailure:
        return timed_out("", "no complete answer", self.deadline_s)

    def _io(self, call, *args):
        try:
            return call(*args)
        except socket.timeout:
            raise self._timeout() from None
        except OSError as e:
            if self._aborted:
                raise unreachable("", "the run was interrupted") from None
            raise unreachable("", e.strerror or str(e)) from None

    def _send_all(self, sock: socket.socket, data: bytes, end: float) -> None:
        view = memoryview(data)
        while view:
            self._wait(sock, end)
            view = view[self._io(sock.send, view):]

    def _recv(self, sock: socket.socket, end: float) -> bytes:
        self._wait(sock, end)
        data = self._io(sock.recv, 1 << 16)
        if self._aborted:
            raise unreachable("", "the run was interrupted")
        return data

    def _read_answer(self, sock: socket.socket, end: float) -> Answer:
        buf = b""
        while b"\r\n\r\n" not in buf:
            if len(buf) > MAX_HEAD_BYTES:
                raise malformed("", f"an answer head over {MAX_HEAD_BYTES} bytes")
            chunk = self._recv(sock, end)
            self._answered = self._answered or bool(chunk)
            if not chunk and buf:
                raise malformed("", "the connection closed before the answer's head was "
                                "complete")
            if not chunk:  # the worker went away (a stopped container's proxy does this)
                raise unreachable("", "the connection closed without an answer")
            buf += chunk
        head, _, body = buf.partition(b"\r\n\r\n")
        status, headers = _parse_head(head)
        if "transfer-encoding" in headers:
            raise malformed("", "chunked transfer encoding")
        length = headers.get("content-length")
        if length is not None:
            text, length = length, whole_number(length, 0, MAX_CONTENT_LENGTH)
            if length is None:
                raise malformed("", f"bad Content-Length {text[:32]!r}")
            if length > MAX_ANSWER_BYTES:
                raise too_large("", f"a {length}-byte answer is over the "
                                f"{MAX_ANSWER_BYTES}-byte cap")
        want = length
        parts, got = [body], len(body)
        while want is None or got < want:
            chunk = self._recv(sock, end)
            if not chunk:
                if want is not None:
                    raise malformed("", f"the answer ended after {got} of {want} body "
                                    "bytes")
                break
            parts.append(chunk)
            got += len(chunk)
            if got > MAX_ANSWER_BYTES:
                raise too_large("", f"the answer is over the {MAX_ANSWER_BYTES}-byte cap")
        data = b"".join(parts)
        self._surplus = want is not None and len(data) > want  # never the next answer's start
        return Answer(status, headers, data[:want] if want is not None else data)


def _quiet(sock: socket.socket) -> bool:
    """A kept connection fit for the next request: nothing to read on it (bytes the worker
    sent unasked, or its close, would be taken for the next answer or cost a retry)."""
    try:
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        return not poller.poll(0)
    except (OSError, ValueError):
        return False


def _request_bytes(host: str, port: int, method: str, path: str, first: list, then: list,
                   body: bytes | None) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}" if port == 80 else
             f"Host: {host}:{port}"]
    lines += [f"{k}: {v}" for k, v in first]
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    lines += [f"{k}: {v}" for k, v in then]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")


def _parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not (
            parts[1].isdigit() and len(parts[1]) == 3):
        raise malformed("", f"bad status line {lines[0][:64]!r}")
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise malformed("", f"bad header line {line[:64]!r}")
        headers.setdefault(name.lower(), value.strip())
    return int(parts[1]), headers
