"""Discovery on loopback (spec/wire.md §3.8): a well-formed reply of a worker that does not
exist, replies no coordinator may accept, and whether a worker's responder answers a
datagram."""
import json
import socket

from bark_vm.wire.constants import DISCOVERY_PROBE

GOOD = {"proto": 1, "alias": "liar", "kind": "fake", "ip": "10.9.9.9", "port": 4242,
        "ops": ["add"], "max_payload": 1024, "busy": True}
HOSTILE = [json.dumps({k: v for k, v in GOOD.items() if k != "busy"}).encode(),  # a field short
           json.dumps({**GOOD, "proto": "1"}).encode(),  # a field of the wrong type
           json.dumps({**GOOD, "port": 70000}).encode(),
           json.dumps({**GOOD, "alias": ""}).encode(),
           json.dumps({**GOOD, "ops": "add"}).encode(),
           json.dumps({**GOOD, "pad": "x" * 2048}).encode(),  # a 2 KiB reply
           b"\xff\xfe garbage", b"", b"[1, 2, 3]", b'{"proto":1,' * 40]


def answered(port: int, datagram: bytes) -> bool:
    """Whether the responder on `port` answers `datagram`: it is sent from one socket, then
    the exact probe from another; the responder takes datagrams in order, so once the probe's
    reply is in, any reply to `datagram` is already waiting (no sleep, no guessed window)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as asker, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sentinel:
        asker.bind(("127.0.0.1", 0))
        sentinel.settimeout(30)
        asker.sendto(datagram, ("127.0.0.1", port))
        sentinel.sendto(DISCOVERY_PROBE, ("127.0.0.1", port))
        sentinel.recvfrom(2048)
        asker.setblocking(False)
        try:
            asker.recvfrom(2048)
        except BlockingIOError:
            return False
        return True
