"""The worker's discovery responder (spec/wire.md §3.8, DESIGN §11): a UDP socket on its own
thread that answers each `MANED? v1` probe with one JSON reply of at most 1,024 bytes, so a
probe is answered even while the HTTP listener is busy. Anything else is ignored."""
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
                data, peer = self.sock.recvfrom(64)
            except OSError:
                return  # closed: the worker is stopping
            if data.strip() != DISCOVERY_PROBE:
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
