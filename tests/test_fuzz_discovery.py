"""Fuzz of discovery (issue 24, points 6-8): mutated and random datagrams sent to a real
bark-worker's responder (only the exact probe is answered, and it keeps answering the probe
afterwards), and mutated and random reply bytes through the coordinator: `parse_reply`
alone (a well-formed reply or None, never an exception) and `discover()` probing a raw UDP
socket posing as a worker (exactly the well-formed replies become workers). Each case runs
under a deadline; counts and the long mode are tests/fuzzing.py's."""
import json
import random
import socket
import threading

import pytest

from bark_vm.container import free_port, worker_process
from bark_vm.server.discovery import reply
from bark_vm.wire.constants import DISCOVERY_FIELDS, DISCOVERY_PROBE, DISCOVERY_REPLY_MAX
from maned.devices.discovery import Found, discover, parse_reply

from fuzzing import cases, deadline, mutate_bytes
from stub_worker import STATUS
from support.discovery import GOOD, HOSTILE, answered

pytestmark = pytest.mark.fuzz


def fail(target: str, n: int, raw: bytes, e: BaseException):
    pytest.fail(f"{target} case {n} raised {type(e).__name__}: {e}\n{raw[:300]!r}")


# --- the worker's responder --------------------------------------------------------------------
def _datagram(rng: random.Random, n: int) -> bytes:
    """The probe mutated, the probe with a tail, or random bytes (now and then past 2 KiB)."""
    kind = n % 4
    if kind in (0, 1):
        return mutate_bytes(DISCOVERY_PROBE, rng)
    if kind == 2:
        tail = rng.choice([b"\n", b"\r\n", b" ", b"\x00", b"\t"]) * rng.randint(1, 80)
        return DISCOVERY_PROBE + (tail if rng.random() < 0.5 else rng.randbytes(
            rng.randint(1, 100)))
    return rng.randbytes(rng.choice([rng.randrange(16), rng.randrange(200), 2048, 5000]))


def test_the_responder_answers_only_the_exact_probe():
    port = free_port(udp=True)
    with worker_process("fz", "u", "p", ("--discovery-port", str(port))) as w:
        rng = random.Random(2408)
        for n in cases("discovery datagrams", 600):
            datagram = _datagram(rng, n)
            try:
                with deadline():
                    assert answered(port, datagram) == (datagram == DISCOVERY_PROBE)
            except BaseException as e:
                fail("responder", n, datagram, e)
        assert answered(port, DISCOVERY_PROBE) and w.handle.poll() is None
        assert "Traceback" not in w.log()


# --- the coordinator's reply parser ------------------------------------------------------------
def _json_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(7 if depth < 2 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.choice([0, 1, -1, 65535, 65536, 2**31, 2**64, rng.randint(-2**40, 2**40)])
    if kind == 3:
        return "".join(chr(rng.randrange(0x2FF)) for _ in range(rng.randrange(8)))
    if kind == 4:
        return rng.random() * 1e6
    if kind == 5:
        return [_json_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {str(rng.randrange(9)): _json_value(rng, depth + 1) for _ in range(rng.randrange(3))}


REAL = reply(dict(STATUS, alias="rex", kind="x86"), "10.0.0.21", 4780)
CORPUS = [REAL, json.dumps(GOOD).encode(), *HOSTILE]


def _reply(rng: random.Random, n: int) -> bytes:
    """A reply mutated as bytes, one with a field retyped or dropped, or random bytes."""
    kind = n % 5
    if kind in (0, 1, 2):
        return mutate_bytes(rng.choice(CORPUS), rng)
    if kind == 3:
        obj = dict(json.loads(rng.choice(CORPUS[:2])))
        key = rng.choice(DISCOVERY_FIELDS)
        if rng.random() < 0.2:
            del obj[key]
        else:
            obj[key] = _json_value(rng)
        return json.dumps(obj).encode()
    return rng.randbytes(rng.randrange(1100))


def _well_formed(obj: dict) -> None:
    """What a reply parse_reply accepts promises (spec/wire.md §3.8)."""
    def uint(v):
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0
    assert uint(obj["proto"]) and uint(obj["max_payload"])
    assert isinstance(obj["alias"], str) and obj["alias"]
    assert isinstance(obj["kind"], str) and isinstance(obj["ip"], str)
    assert uint(obj["port"]) and 1 <= obj["port"] <= 65535
    assert isinstance(obj["ops"], list) and all(isinstance(o, str) for o in obj["ops"])
    assert isinstance(obj["busy"], bool)


def test_parse_reply_gives_a_well_formed_reply_or_none():
    rng = random.Random(2409)
    assert parse_reply(REAL) is not None
    for n in cases("discovery replies", 5000):
        raw = _reply(rng, n)
        try:
            with deadline():
                obj = parse_reply(raw)
                if obj is not None:
                    assert len(raw) <= DISCOVERY_REPLY_MAX
                    _well_formed(obj)
        except BaseException as e:
            fail("parse_reply", n, raw, e)


class Poser:
    """A raw UDP socket posing as a worker: to each probe it sends `replies` from a second
    socket of its own (another source port, so they do not end the prober's wait), then
    one well-formed reply from the probed socket, which does."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.side = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.side.bind(("127.0.0.1", 0))
        self.port, self.side_port = self.sock.getsockname()[1], self.side.getsockname()[1]
        self.replies: list[bytes] = []
        self.last = json.dumps({**GOOD, "alias": "last", "port": 1}).encode()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                _, peer = self.sock.recvfrom(64)
                for r in self.replies:
                    self.side.sendto(r, peer)
                self.sock.sendto(self.last, peer)
            except OSError:
                return

    def close(self):
        self.sock.close()
        self.side.close()


def test_discover_keeps_exactly_the_well_formed_replies():
    """Each case: a probe to the poser, eight replies drawn at random; the workers found are
    the well-formed ones (first per advertised port) and the poser's own, never an
    exception."""
    poser = Poser()
    rng = random.Random(2410)
    try:
        for n in cases("discover() against a raw responder", 150):
            poser.replies = [_reply(rng, rng.randrange(5)) for _ in range(8)]
            try:
                with deadline():
                    found = discover([("127.0.0.1", poser.port)], broadcast=False,
                                     window_ms=30_000)
            except BaseException as e:
                fail("discover", n, b"\n".join(poser.replies), e)
            expected: dict[int, Found] = {}
            for raw in poser.replies:
                if (obj := parse_reply(raw)) is not None:
                    expected.setdefault(obj["port"], Found(
                        obj["alias"], obj["kind"], "127.0.0.1", obj["port"], obj["ip"],
                        tuple(obj["ops"]), obj["max_payload"], obj["busy"]))
            last = Found("last", GOOD["kind"], "127.0.0.1", 1, GOOD["ip"], tuple(GOOD["ops"]),
                         GOOD["max_payload"], GOOD["busy"])
            assert sorted(found, key=repr) == sorted([*expected.values(), last], key=repr), n
            assert found.notes == ()
    finally:
        poser.close()
