"""The physical floors a round trip is compared with (DESIGN §9): a raw pipe echo to a child
process, and a raw loopback HTTP request to a child that only echoes the body back (raw
sockets, TCP_NODELAY, one write). Neither does any
work; what a transport costs above them is its own overhead."""
import struct
import subprocess
import sys
from contextlib import contextmanager

from maned.devices import ANSWER_DEADLINE_S, CONNECT_TIMEOUT_S, Exchange

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
        _stop(proc)


RESPONDER = r"""
import socket, sys
server = socket.create_server(("127.0.0.1", 0))
print(server.getsockname()[1], flush=True)
while True:
    conn, _ = server.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        body += conn.recv(65536)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                 % len(body) + body)
    conn.close()
"""


@contextmanager
def loopback_http():
    """send(payload) -> payload: one POST on a fresh connection (as the CDP client makes
    them) to a child process that only echoes the body back, in one write."""
    proc = subprocess.Popen([sys.executable, "-c", RESPONDER], stdout=subprocess.PIPE)
    port = int(proc.stdout.readline())

    def send(payload: bytes) -> bytes:
        return Exchange("127.0.0.1", port, CONNECT_TIMEOUT_S,
                        ANSWER_DEADLINE_S).send(
            "POST", "/echo", [], [("Content-Type", "application/octet-stream")],
            payload).body
    try:
        yield send
    finally:
        _stop(proc, at_once=True)  # it serves forever


def _stop(proc: subprocess.Popen, at_once: bool = False) -> None:
    """End a floor's child: on the end of its input, or killed (at once, or when it does
    not end within a few seconds)."""
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            stream.close()
    try:
        if at_once:
            raise subprocess.TimeoutExpired(proc.args, 0)
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
