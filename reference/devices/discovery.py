"""Finding workers by UDP discovery (spec/wire.md §3.8, DESIGN §11): the probe `MANED? v1`
to each unicast target (a name that resolves to several addresses is probed at each one)
and then, unless told otherwise, to the broadcast address; every reply within the window
that is a JSON object of at most 1,024 bytes with the required fields, typed, is a worker
at the reply's source address and its advertised port. Anything else is skipped.

A broadcast that cannot be sent (a host with no network, a container under `--network
none`) is a note carried with the answer, not a failure: the unicast targets were probed
first and their workers still count (issue 24, point 7). Only when nothing at all could
be probed is it a failure: DeviceFailure, kind connect_failed. A probe target that is
malformed or does not resolve is Refused (a typo must not be silent)."""
import threading
import time
from dataclasses import dataclass

from bark_vm.wire import strict_json
from bark_vm.wire.status import is_uint
from bark_vm.wire.constants import (DISCOVERY_FIELDS, DISCOVERY_PORT, DISCOVERY_PROBE,
                                    DISCOVERY_REPLY_MAX)

from ..failures import DeviceFailure, Refused, unreachable
from .address import BadAddress, parse_address

BROADCAST = "255.255.255.255"
DEFAULT_WINDOW_MS = 1000
MAX_WINDOW_MS = 60_000


class Answer(list):
    """The workers that answered (a list of Found) and the probe's notes: what was meant to
    be probed and could not be (a broadcast that could not be sent)."""

    def __init__(self, found=(), notes=()):
        super().__init__(found)
        self.notes: tuple[str, ...] = tuple(notes)


@dataclass(frozen=True)
class Found:
    alias: str
    kind: str
    host: str  # the reply's source address: where to connect
    port: int  # the advertised HTTP port
    ip: str  # what the worker says its address is (display only)
    ops: tuple[str, ...]
    max_payload: int
    busy: bool

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


def _unprobed(text: str) -> DeviceFailure:
    """Nothing could be probed at all (whoever asked names itself: `DeviceFailure.at`)."""
    return unreachable("", text)


def parse_probe(text: str) -> tuple[str, int]:
    """`HOST[:PORT]` (the port defaults to DISCOVERY_PORT); Refused when malformed."""
    try:
        host, port = parse_address(text)
    except BadAddress:
        raise Refused(f"bad probe target {text[:80]!r}: give HOST or HOST:PORT (port "
                      "1..65535)") from None
    return host, DISCOVERY_PORT if port is None else port


def resolve(host: str, port: int) -> list[tuple[str, int]]:
    """Every IPv4 address of `host` (a service name like tasks.worker has one per replica)."""
    import socket  # loaded by the first probe: a run without discovery never needs it
    try:
        infos = socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_DGRAM)
    except (socket.gaierror, UnicodeError) as e:
        raise Refused(f"probe target {host!r} does not resolve: "
                         f"{getattr(e, 'strerror', None) or e}") from None
    return sorted({(info[4][0], port) for info in infos})


def parse_reply(data: bytes) -> dict | None:
    """The reply as a dict when it is a well-formed discovery reply, else None."""
    if len(data) > DISCOVERY_REPLY_MAX:
        return None
    try:
        obj = strict_json.loads(data)
    except ValueError:
        return None
    if not isinstance(obj, dict) or not all(k in obj for k in DISCOVERY_FIELDS):
        return None
    ok = (is_uint(obj["proto"]) and isinstance(obj["alias"], str) and obj["alias"]
          and isinstance(obj["kind"], str) and isinstance(obj["ip"], str)
          and is_uint(obj["port"]) and 1 <= obj["port"] <= 65535 and is_uint(obj["max_payload"])
          and isinstance(obj["ops"], list) and all(isinstance(o, str) for o in obj["ops"])
          and isinstance(obj["busy"], bool))
    return obj if ok else None


def discover(targets: list[tuple[str, int]], broadcast: bool = True,
             window_ms: int = DEFAULT_WINDOW_MS) -> Answer:
    """Probe `targets` (already resolved), then the broadcast address; the workers that
    answered within the window, first reply per (source address, source port, advertised
    port), sorted by alias then address, with a note when the broadcast could not be sent.
    Without broadcast (or when it could not be sent) the wait ends as soon as every target
    has answered. DeviceFailure when a target, or the broadcast with no target, could
    not be probed."""
    try:
        import socket
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    except OSError as e:
        raise _unprobed(f"cannot open a UDP socket: {e.strerror or e}") from None
    found: dict[tuple, Found] = {}
    notes: list[str] = []
    with sock:
        try:
            sock.bind(("0.0.0.0", 0))
            for target in targets:  # first: a broadcast that fails must not cost them
                sock.sendto(DISCOVERY_PROBE, target)
        except OSError as e:
            raise _unprobed(f"cannot send the discovery probe: {e.strerror or e}") from None
        if broadcast:
            why = _send_broadcast(sock)
            if why is not None and not targets:
                raise _unprobed(f"cannot send the discovery probe: the broadcast "
                                f"to {BROADCAST}:{DISCOVERY_PORT}: {why}")
            if why is not None:
                notes.append(f"the broadcast to {BROADCAST}:{DISCOVERY_PORT} was not sent "
                             f"({why}); only the --probe targets were probed")
                broadcast = False  # nobody can answer it: the wait ends with the targets
        end = time.monotonic() + window_ms / 1000
        silent = set(targets)
        while (left := end - time.monotonic()) > 0 and (broadcast or silent):
            sock.settimeout(left)
            try:
                data, (src, src_port) = sock.recvfrom(DISCOVERY_REPLY_MAX + 1)
            except socket.timeout:
                break
            except OSError:  # an ICMP "port unreachable" from a target nobody listens on
                continue
            obj = parse_reply(data)
            if obj is None:
                continue
            silent.discard((src, src_port))
            key = (src, src_port, obj["port"])
            found.setdefault(key, Found(obj["alias"], obj["kind"], src, obj["port"], obj["ip"],
                                        tuple(obj["ops"]), obj["max_payload"], obj["busy"]))
    return Answer(sorted(found.values(), key=lambda f: (f.alias, f.host, f.port)), notes)


def _send_broadcast(sock) -> str | None:
    """Send the probe to the broadcast address; why it could not be sent, or None."""
    try:
        import socket
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
        sock.sendto(DISCOVERY_PROBE, (BROADCAST, DISCOVERY_PORT))
    except OSError as e:
        return e.strerror or str(e)
    return None


@dataclass(frozen=True)
class Probing:
    """How a run looks for workers: `--probe` targets, `--no-broadcast`, the window."""
    probes: tuple[str, ...] = ()
    broadcast: bool = True
    window_ms: int = DEFAULT_WINDOW_MS

    def describe(self, notes: tuple[str, ...] = ()) -> str:
        """What was probed, and the answer's notes (`Answer.notes`: a broadcast not sent)."""
        where = [*self.probes] + (["broadcast"] if self.broadcast else [])
        return "; ".join([f"probed {', '.join(where) or 'nothing'} for {self.window_ms} ms",
                          *notes])

    def advice(self, notes: tuple[str, ...] = ()) -> str:
        """What to try when nobody answered: a worker answers only on the address it serves."""
        return (f"{self.describe(notes)}; a worker answers discovery on the address it serves, "
                "127.0.0.1 unless started with --host, so a LAN broadcast reaches only "
                "workers started with --host 0.0.0.0 or their own address: try --probe HOST")


class Discovery:
    """One plan's discovery: the probe targets resolved when the plan is made (a target that
    does not resolve stops the run), the probe sent at most once, at the first need, and
    its answer shared by every block that discovers."""

    def __init__(self, probing: Probing):
        self.probing = probing
        self._targets: list[tuple[str, int]] | None = None
        self._found: Answer | None = None
        self._failure: DeviceFailure | None = None
        self._lock = threading.Lock()

    def resolve(self) -> None:
        """Parse and resolve every probe target now (Refused)."""
        if self._targets is None:
            self._targets = [t for text in self.probing.probes
                             for t in resolve(*parse_probe(text))]

    @property
    def notes(self) -> tuple[str, ...]:
        """The probe's notes once it ran (a broadcast that could not be sent), else ()."""
        return self._found.notes if self._found is not None else ()

    def found(self) -> Answer:
        """The workers that answered, with the probe's notes (DeviceFailure when no
        probe could be sent)."""
        with self._lock:
            if self._found is None and self._failure is None:
                self.resolve()
                try:
                    self._found = discover(self._targets, self.probing.broadcast,
                                           self.probing.window_ms)
                except DeviceFailure as e:
                    self._failure = e
            if self._failure is not None:
                raise self._failure
            return self._found
