"""Minimal HTTP/1.1 for bark-worker (spec/wire.md §3.1, DESIGN D6, R18).

One request per connection, unless the client asks for `Connection: keep-alive` (R18 as
revised: `wants_keep_alive`, `kept_alive`); a client that pipelines (bytes of its next
request received with this one's) has its first request answered, then the connection
closed.
`read_head` reads the request line and headers, `read_body` exactly Content-Length bytes
(and hands back what followed them); both give up at a deadline (a stalled client
raises `Stalled`, and the caller closes without answering). Anything malformed is
`WorkerError("BAD_ENVELOPE")`: a head over 16 KiB, a bad request line, obs-fold
continuation lines, Transfer-Encoding (chunked is never accepted), a bad or conflicting
Content-Length. `response` builds the whole answer (`Connection: close`, Content-Length)
so it goes out in one `sendall`.
"""
import json
import socket
import time
from dataclasses import dataclass
from urllib.parse import parse_qsl

from ..wire.constants import ERROR_STATUS, JSON_TYPE, KEEP_ALIVE, MAX_CONTENT_LENGTH, WorkerError
from ..wire.digits import whole_number

MAX_HEAD = 16 * 1024
DRAIN_S = 1.0  # how long a refused request's unread body is drained before closing
IO_TIMEOUT_S = 5.0  # a body stalled this long is cut off (--io-timeout)
HEAD_TIMEOUT_S = 1.0  # a head is sent at once: one round trip, with room (--head-timeout)
KEEP_ALIVE_IDLE_S = 5.0  # a kept-alive connection with no next request this long is closed
REASONS = {
    100: "Continue", 200: "OK", 202: "Accepted", 400: "Bad Request", 401: "Unauthorized",
    404: "Not Found", 409: "Conflict", 413: "Content Too Large", 422: "Unprocessable Content",
    500: "Internal Server Error", 501: "Not Implemented", 503: "Service Unavailable",
}


class Stalled(Exception):
    """The client went silent (or closed) before its request was complete."""


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str]  # the first value of each name
    headers: dict[str, str]  # lower-case names; the first of duplicates
    content_length: int | None

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


BODY_BYTES_PER_S = 1e6  # the slowest body a worker keeps reading: 1 MB/s on average


def _bad(detail: str) -> WorkerError:
    return WorkerError("BAD_ENVELOPE", detail)


def _recv(sock: socket.socket, deadline: float, size: int, part: str = "request") -> bytes:
    left = deadline - time.monotonic()
    late = f"the {part} did not arrive in time"
    if left <= 0:
        raise Stalled(late)
    sock.settimeout(left)
    try:
        chunk = sock.recv(size)
    except (socket.timeout, TimeoutError):
        raise Stalled(late) from None
    except OSError as e:
        raise Stalled(f"the connection failed: {e.strerror or e}") from None
    if not chunk:
        raise Stalled("the client closed the connection mid-request")
    return chunk


def read_head(sock: socket.socket, timeout: float) -> tuple[Request, bytes]:
    """The parsed head and the bytes already received after it (the body's start); the
    whole head within `timeout` (the worker's --head-timeout)."""
    deadline = time.monotonic() + timeout
    buf = b""
    while True:
        end = buf.find(b"\r\n\r\n")
        if end >= 0:
            break
        if len(buf) > MAX_HEAD:
            raise _bad(f"request head over {MAX_HEAD} bytes")
        buf += _recv(sock, deadline, 65536, f"request head (bound {timeout:g} s)")
    if end > MAX_HEAD:
        raise _bad(f"request head over {MAX_HEAD} bytes")
    return parse_head(buf[:end]), buf[end + 4:]


def parse_head(raw: bytes) -> Request:
    lines = raw.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[0].isalpha() or not parts[2].startswith("HTTP/1."):
        raise _bad("malformed HTTP request line")
    method, target, _ = parts
    headers: dict[str, str] = {}
    lengths = set()
    for line in lines[1:]:
        if line[:1] in (" ", "\t"):
            raise _bad("obs-fold header continuation lines are not accepted")
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip() or " " in name:
            raise _bad("malformed HTTP header line")
        name, value = name.lower(), value.strip(" \t")
        if name == "content-length":
            lengths.add(value)
        headers.setdefault(name, value)
    if "transfer-encoding" in headers:
        raise _bad("Transfer-Encoding is not accepted; send Content-Length")
    length = None
    if lengths:
        if len(lengths) > 1:
            raise _bad("conflicting Content-Length headers")
        length = whole_number(lengths.pop(), 0, MAX_CONTENT_LENGTH)
        if length is None:
            raise _bad("Content-Length is not a decimal number (of at most 18 digits)")
    path, _, query = target.partition("?")
    params: dict[str, str] = {}
    for k, v in parse_qsl(query, keep_blank_values=True):
        params.setdefault(k, v)
    return Request(method, path, params, headers, length)


def read_body(sock: socket.socket, request: Request, start: bytes,
              timeout: float) -> tuple[bytes, bytes]:
    """(exactly Content-Length bytes (0 when absent), the bytes received past them: a next
    request the client pipelined, which the caller answers by closing once this one is
    answered). The deadline follows the bytes that have arrived, never the length
    announced: `timeout`, plus one second for every BODY_BYTES_PER_S received. A body that
    keeps flowing at that rate is read whatever its size; a trickle is cut off after about
    `timeout`."""
    n = request.content_length or 0
    if len(start) >= n:
        return start[:n], start[n:]
    if n > len(start) and (request.header("expect") or "").lower() == "100-continue":
        sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
    first = time.monotonic() + timeout  # the deadline while nothing has arrived yet
    parts, have = [start], len(start)
    while have < n:
        chunk = _recv(sock, first + (have - len(start)) / BODY_BYTES_PER_S,
                      min(n - have, 1 << 20))
        parts.append(chunk)
        have += len(chunk)
    return b"".join(parts), b""


def response(status: int, body: bytes = b"", content_type: str = JSON_TYPE) -> bytes:
    """The whole response: status line, headers, body (written with one sendall)."""
    head = (f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}\r\n"
            f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n")
    return head.encode("ascii") + body


def wants_keep_alive(request: Request) -> bool:
    """The client asked for its connection to stay open (`Connection: keep-alive`); every
    other client gets `Connection: close`, as before."""
    return (request.header("connection") or "").lower() == KEEP_ALIVE


def kept_alive(answer: bytes) -> bytes:
    """The same answer, saying the connection stays open (the head comes before the body,
    so the first Connection line is the head's)."""
    return answer.replace(b"\r\nConnection: close\r\n",
                          f"\r\nConnection: {KEEP_ALIVE}\r\n".encode("ascii"), 1)


def json_body(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def json_response(status: int, obj) -> bytes:
    return response(status, json_body(obj))


def error_response(err: WorkerError) -> bytes:
    """`{"error":CODE,"detail":...}` with the code's HTTP status (wire.md §3.6)."""
    return json_response(ERROR_STATUS[err.code], err.to_json())


def send(sock: socket.socket, data: bytes, timeout: float) -> bool:
    """One sendall; False when the client is gone."""
    try:
        sock.settimeout(timeout)
        sock.sendall(data)
        return True
    except OSError:
        return False


def close(sock: socket.socket, drain: bool = False) -> None:
    """Close; with `drain`, first half-close and read away what the client still sends
    (for at most DRAIN_S), so an unread body does not turn the close into a reset that
    destroys the answer before the client reads it."""
    try:
        if drain:
            sock.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + DRAIN_S
            while (left := deadline - time.monotonic()) > 0:
                sock.settimeout(left)
                if not sock.recv(1 << 16):
                    break
    except OSError:
        pass
    finally:
        sock.close()
