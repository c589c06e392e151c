"""A loopback TCP proxy between the client and a worker that injects faults (issue 13):
each connection carries one HTTP request; a fault aimed at that request ("METHOD /path"
prefix) changes what happens to it, any other request is relayed byte for byte, but for
its `Connection: keep-alive`, which the proxy takes out: the worker answers `Connection:
close` and closes, as a middlebox that does not keep connections makes any worker do (the
client must keep working with it).

Faults (KINDS): `delay` holds the worker's answer `seconds`; `reset` answers the request
with a TCP reset, never forwarding it; `truncate` passes the first `keep` bytes of the
answer, then closes; `black_hole` reads the request and never answers; `drip` passes the
answer one byte every `seconds`; `half_close` forwards the request, then closes its side
towards the client (a FIN, no answer), so the worker runs the job and its answer is lost;
`half_close_worker` closes its side towards the worker once the request is through (the
worker must still answer); `replay` sends the request to the worker twice and passes on
the second answer (a retrying middlebox); `hold` keeps the request until the test calls
`release()`, then forwards it. `retarget` points the proxy at another worker (a restarted
one), so the client's address survives the restart."""
import socket
import struct
import threading
import time
from dataclasses import dataclass

from stub_worker import read_request

KINDS = ("delay", "reset", "truncate", "black_hole", "drip", "half_close",
         "half_close_worker", "replay", "hold")
IO_GUARD_S = 120  # a relay never waits longer on either side (the suite's hang guard)


@dataclass
class Fault:
    kind: str
    on: str = ""  # the requests it hits: a prefix of "METHOD /path?query HTTP/1.1"
    times: int = 1  # how many requests it hits before it is spent
    after: int = 0  # how many matching requests it lets through first
    seconds: float = 0.0  # delay: the hold; drip: the gap between bytes
    keep: int = 0  # truncate: the answer's bytes that get through (negative: all but so many)

    def __post_init__(self):
        assert self.kind in KINDS, self.kind
        self._released = threading.Event()

    def release(self) -> None:
        """Let a held request go on."""
        self._released.set()


class FaultProxy:
    def __init__(self, host: str, port: int):
        self.upstream = (host, port)
        self.faults: list[Fault] = []
        self.log: list[tuple[str, str]] = []  # (request line, fault kind or "relay")
        self.dripped, self.drip_total = 0, 0  # a drip's bytes let through, of its answer
        self._lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def inject(self, fault: Fault) -> Fault:
        with self._lock:
            self.faults.append(fault)
        return fault

    def retarget(self, host: str, port: int) -> None:
        self.upstream = (host, port)

    def requests(self, fault: str | None = None) -> list[str]:
        """The request lines seen, or those a given fault hit."""
        return [line for line, kind in self.log if fault is None or kind == fault]

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        with self._lock:
            for conn in list(self._conns):
                _close(conn)

    # --- one connection -------------------------------------------------------------------
    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self._conns.add(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _take(self, line: str) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.times > 0 and line.startswith(fault.on):
                    if fault.after > 0:
                        fault.after -= 1
                        continue
                    fault.times -= 1
                    return fault
        return None

    def _serve(self, client: socket.socket) -> None:
        client.settimeout(IO_GUARD_S)
        try:
            request = read_request(client)
            if request is None:
                return
            full = request.split(b"\r\n", 1)[0].decode("latin-1")
            line = full.rsplit(" ", 1)[0]
            fault = self._take(full)
            kind = fault.kind if fault else "relay"
            self.log.append((line, kind))
            if kind == "reset":
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return
            if kind == "black_hole":
                while client.recv(4096):  # until the client gives up
                    pass
                return
            if kind == "hold":
                fault._released.wait(IO_GUARD_S)
            answer = self._exchange(request, kind == "half_close_worker")
            if kind == "replay":
                answer = self._exchange(request, False)
            if kind == "half_close":
                client.shutdown(socket.SHUT_WR)
                while client.recv(4096):
                    pass
            elif kind == "delay":
                time.sleep(fault.seconds)
                client.sendall(answer)
            elif kind == "truncate":
                client.sendall(answer[:fault.keep])
            elif kind == "drip":
                self.drip_total = len(answer)
                for i in range(len(answer)):
                    client.sendall(answer[i:i + 1])
                    self.dripped += 1
                    time.sleep(fault.seconds)
            else:
                client.sendall(answer)
        except OSError:
            pass  # the client went away: what it saw is the test's business
        finally:
            with self._lock:
                self._conns.discard(client)
            _close(client)

    def _exchange(self, request: bytes, half_close: bool) -> bytes:
        """The request to the worker, without keep-alive, and its whole answer (the worker
        closes after it)."""
        head, sep, body = request.partition(b"\r\n\r\n")
        head = b"\r\n".join(line for line in head.split(b"\r\n")
                             if line.lower() != b"connection: keep-alive")
        with socket.create_connection(self.upstream, IO_GUARD_S) as worker:
            worker.sendall(head + sep + body)
            if half_close:
                worker.shutdown(socket.SHUT_WR)
            parts = []
            while chunk := worker.recv(1 << 16):
                parts.append(chunk)
            return b"".join(parts)


def _close(sock: socket.socket) -> None:
    try:
        sock.close()
    except OSError:
        pass
