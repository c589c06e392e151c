"""The worker's discovery responder (spec/wire.md §3.8, DESIGN §11): a UDP socket on its own
thread that answers each `MANED? v1` probe with one JSON reply of at most 1,024 bytes, so a
probe is answered even while the HTTP listener is busy. Anything else is ignored.

The probe is the datagram's whole content, byte for byte: the spec's probe is the ASCII
string, with no line ending, so a trailing newline, padding, a prefix or anything longer is
not a probe (issue 24, point 8). A datagram is read with room for more than the probe, so
one that is longer is seen whole and ignored, never cut down to a probe."""
import json
import socket
import threading

from ..wire.constants import DISCOVERY_FIELDS, DISCOVERY_PROBE, DISCOVERY_REPLY_MAX, PROTO


def reply(status: dict, ip: str, port: int) -> bytes:
    """The reply to a probe: the worker's identity, its connect port (`port`, the advertised
    one) and whether every job slot is taken (`busy`)."""
    values = {**status, "proto": PROTO, "ip": ip, "port": port,
              "busy": status["jobs_running"] >= status["jobs_capacity"]}
    body = {k: values[k] for k in DISCOVERY_FIELDS}
    data = json.dumps(body, separators=(",", ":")).encode()
    if len(data) > DISCOVERY_REPLY_MAX:
        raise ValueError(f"a {len(data)}-byte discovery reply is over {DISCOVERY_REPLY_MAX}")
    return data


# Larger than the probe, so a longer datagram arrives longer than the probe (whatever is
# past this many bytes is dropped by the kernel, and the datagram is still not the probe).
RECEIVE_BYTES = 2048


class Responder:
    """Answers probes on `sock` until closed; `status()` gives the worker's status now."""

    def __init__(self, sock: socket.socket, status, port: int, log):
        self.sock, self.status, self.port, self.log = sock, status, port, log
        host = sock.getsockname()[0]
        self.ip = host if host != "0.0.0.0" else _own_address()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                data, peer = self.sock.recvfrom(RECEIVE_BYTES)
            except OSError:
                return  # closed: the worker is stopping
            if data != DISCOVERY_PROBE:
                continue
            try:
                self.sock.sendto(reply(json.loads(self.status()), self.ip, self.port), peer)
            except OSError as e:  # an unreachable prober costs it its answer, nothing more
                self.log(f"discovery reply to {peer[0]}:{peer[1]} failed: {e.strerror or e}")
            except Exception as e:  # a reply that cannot be built: said, and probes go on
                self.log(f"discovery reply not sent: {e}")

    def close(self) -> None:
        self.sock.close()


def _own_address() -> str:
    """The address this host is known by (for display in replies: spec §3.8 says clients
    connect to the reply's source address, never to this)."""
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "0.0.0.0"
