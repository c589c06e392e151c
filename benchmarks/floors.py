"""The physical floors a round trip is compared with (DESIGN §9): a raw pipe echo to a child
process, and a raw loopback HTTP request to a server that only answers. Neither does any
work; what a transport costs above them is its own overhead."""
import struct
import subprocess
import sys
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from maned.targets import limits
from maned.targets.http_exchange import Exchange

ECHO = r"""
import sys, struct
i, o = sys.stdin.buffer, sys.stdout.buffer
while True:
    head = i.read(4)
    if len(head) < 4:
        break
    body = i.read(struct.unpack('>I', head)[0])
    o.write(head + body)
    o.flush()
"""


@contextmanager
def pipe_echo():
    """send(payload) -> payload, through a child's stdin and stdout."""
    proc = subprocess.Popen([sys.executable, "-c", ECHO], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)

    def send(payload: bytes) -> bytes:
        proc.stdin.write(struct.pack(">I", len(payload)) + payload)
        proc.stdin.flush()
        n = struct.unpack(">I", proc.stdout.read(4))[0]
        return proc.stdout.read(n)
    try:
        yield send
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)


class _Answer(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@contextmanager
def loopback_http():
    """send(payload) -> payload, one POST on a fresh connection (as the CDP client does)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]

    def send(payload: bytes) -> bytes:
        return Exchange(host, port, limits.CONNECT_TIMEOUT_S, limits.ANSWER_DEADLINE_S).send(
            "POST", "/echo", [], [("Content-Type", "application/octet-stream")],
            payload).body
    try:
        yield send
    finally:
        server.shutdown()
        server.server_close()
