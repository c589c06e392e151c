"""Fake CDP workers on loopback for the cases a healthy worker never produces: `Stub` answers
each path from a script of answers; `Drip` answers the status, then sends any other answer
one byte at a time, slower than any deadline; `Hostile` answers each request with whatever
bytes a function of its method and path gives (the client fuzz)."""
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from maned.devices.cdp import CdpDevice

DEEP_JSON = b'{"x":' * 100000 + b"1" + b"}" * 100000  # nested 10^5 deep
STATUS = {"proto": 1, "alias": "stub", "kind": "x86", "uptime_s": 1, "requests": 0,
          "jobs_running": 0, "jobs_capacity": 4, "ops": ["add"], "max_payload": 1 << 25,
          "ir": 2, "rf_slots": 4096}


class Stub:
    """A worker that answers from a script: "METHOD path" or path prefix -> list of
    (status, body, headers)."""

    def __init__(self):
        self.script: dict[str, list] = {}
        self.log: list[tuple[str, str, dict]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                stub.log.append((self.command, self.path, dict(self.headers)))
                said = f"{self.command} {self.path}"
                key = next((k for k in stub.script if said.startswith(k)), None) or next(
                    (k for k in stub.script if self.path.startswith(k)), None)
                status, body, headers = (stub.script[key].pop(0) if key and stub.script[key]
                                         else (404, {"error": "NO_SUCH_JOB"}, {}))
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                if "Transfer-Encoding" not in headers:
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            do_GET = do_POST = do_DELETE = _answer

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # a short shutdown poll: the default 0.5 s is paid by every teardown
        threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True).start()

    @property
    def port(self) -> int:
        return self.server.server_port

    def device(self, deadline_s: float = 30.0, **creds) -> CdpDevice:
        creds = creds or {"user": "u", "password": "p", "token": None}
        return CdpDevice("stub", "127.0.0.1", self.port, creds.get("user"),
                         creds.get("password"), creds.get("token"), deadline_s)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def on(self, path: str, *answers) -> None:
        self.script.setdefault(path, []).extend(
            a if isinstance(a, tuple) and len(a) == 3 else (*a, {}) for a in answers)

    def paths(self) -> list[str]:
        return [f"{m} {p}" for m, p, _ in self.log]




class Drip:
    """Answers GET /api/status and POST /api/auth at once; any other request gets a valid
    200 answer sent one byte every `gap` seconds, which no deadline should sit through.
    `sent` counts the dripped bytes; `total` is how many the whole answer has."""

    def __init__(self, gap: float = 0.2, body: bytes = b"MNRS" + b"\0" * 60):
        self.gap = gap
        self.answer = (f"HTTP/1.1 200 OK\r\nContent-Type: application/x-maned-mnrs\r\n"
                       f"Content-Length: {len(body)}\r\n\r\n").encode() + body
        self.total, self.sent, self.hung_up = len(self.answer), 0, threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self._stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with conn:
                head = b""
                while b"\r\n\r\n" not in head:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    head += chunk
                path = head.split(b" ", 2)[1] if head.count(b" ") >= 2 else b""
                if path == b"/api/status":
                    conn.sendall(_json_answer(STATUS))
                elif path == b"/api/auth":
                    conn.sendall(_json_answer({"token": "a" * 32, "alias": "stub"}))
                else:
                    self._drip(conn)

    def _drip(self, conn: socket.socket) -> None:
        for i in range(self.total):
            if self._stop.wait(self.gap):
                return
            try:
                conn.sendall(self.answer[i:i + 1])
            except OSError:
                self.hung_up.set()
                return
            self.sent += 1

    def close(self) -> None:
        self._stop.set()
        self.listener.close()


def _json_answer(obj) -> bytes:
    body = json.dumps(obj).encode()
    return (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def read_request(sock: socket.socket) -> bytes | None:
    """One whole HTTP request (head and Content-Length body), or None if the peer left."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(1 << 16)
        if not chunk:
            return None
        buf += chunk
    head = buf.split(b"\r\n\r\n", 1)[0]
    length = next((int(h.split(b":", 1)[1]) for h in head.split(b"\r\n")[1:]
                   if h.lower().startswith(b"content-length:")), 0)
    while len(buf) - len(head) - 4 < length:
        chunk = sock.recv(1 << 16)
        if not chunk:
            return None
        buf += chunk
    return buf


class Hostile:
    """A worker that answers each request with `answer(method, path)`: raw bytes, written
    whole, then the connection closed (any status, any body, truncated or not)."""

    def __init__(self):
        self.answer = lambda method, path: b""
        self.errors: list[str] = []  # what `answer` raised: a broken test, reported by it
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with conn:
                try:
                    conn.settimeout(30)
                    request = read_request(conn)
                    if request is not None:
                        method, path = request.split(b"\r\n", 1)[0].decode().split(" ")[:2]
                        conn.sendall(self.answer(method, path))
                except OSError:
                    pass  # the client hung up first: its business
                except Exception as e:
                    self.errors.append(f"{type(e).__name__}: {e}")

    def close(self) -> None:
        self.listener.close()
