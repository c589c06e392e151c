"""Keep-alive (R18 as revised, docs/wire.md "Connections"): a client that asks for
`Connection: keep-alive` keeps its connection for its next request, sync executes included
(the executor hands the connection back); any other client gets `Connection: close`; an
idle kept connection is closed as soon as another client waits, so the one-connection
worker is never held by it; and our client, whose kept connection was closed, asks again
on a fresh one. Order and states say what happened, never seconds."""
import socket
import threading

from bark_vm.wire.envelope import decode_result
from maned.devices import open_device
from maned.devices.http_exchange import Exchange
from maned.devices.specs import Remote

from support.raw_http import call, over, raw, split
from support.status import status_of
from support.workers import PASSWORD, USER

KEEP = b"Connection: keep-alive\r\n"
STATUS = b"GET /api/status HTTP/1.1\r\nHost: x\r\n" + KEEP + b"\r\n"


def _execute(request: bytes, token: str) -> bytes:
    return (b"POST /api/execute?mode=sync HTTP/1.1\r\nHost: x\r\nX-Maned-Proto: 1\r\n"
            + f"Content-Length: {len(request)}\r\nX-Maned-Token: {token}\r\n".encode()
            + b"Content-Type: application/x-maned-mnpk\r\n" + KEEP + b"\r\n" + request)


def test_a_client_that_asks_keeps_its_connection_for_its_next_requests(worker, token, files):
    """Two status probes, then two sync executes (answered by the executor thread, which
    hands the connection back), all on one connection, each answer saying keep-alive."""
    with socket.create_connection((worker.host, worker.port), timeout=30) as s:
        answers = [over(s, STATUS), over(s, STATUS),
                   over(s, _execute(files["matmul_relu"], token)),
                   over(s, _execute(files["matmul_relu"], token))]
    assert [(status, h["Connection"]) for status, h, _ in answers] == [(200, "keep-alive")] * 4
    assert answers[2][2] == answers[3][2] == files["golden_mnrs"]


def test_a_client_that_does_not_ask_gets_connection_close(worker):
    status, headers, _ = split(raw(worker, b"GET /api/status HTTP/1.1\r\nHost: x\r\n\r\n"))
    assert (status, headers["Connection"]) == (200, "close")  # and raw() read up to the close


def test_a_refusal_closes_even_a_kept_connection(worker):
    with socket.create_connection((worker.host, worker.port), timeout=30) as s:
        status, headers, _ = over(s, b"GET /api/nope HTTP/1.1\r\nHost: x\r\n" + KEEP + b"\r\n")
        assert (status, headers["Connection"]) == (404, "close")
        assert s.recv(1) == b""


def test_an_idle_kept_connection_is_closed_as_soon_as_another_client_waits(worker):
    """A kept-alive connection left idle does not hold the worker: the next client is
    answered, and the idle connection has been closed by then."""
    with socket.create_connection((worker.host, worker.port), timeout=30) as idle:
        assert over(idle, STATUS)[1]["Connection"] == "keep-alive"
        assert call(worker, "GET", "/api/status", proto=False)[0] == 200  # another client
        assert idle.recv(1) == b""  # closed, unasked, before the other was served
    assert "connection cut off" not in worker.stderr()


def test_our_client_keeps_its_connection_and_asks_again_when_it_was_closed(worker, files):
    """The CDP client reuses the connection a worker kept; when another client made the
    worker close it, the next request goes out on a fresh connection, answered all the
    same (here the login and the job after the status probe's connection was closed)."""
    device = open_device("kept", Remote(worker.host, worker.port, USER, PASSWORD, None))
    try:
        device.start()  # the status probe, answered on a connection the worker keeps idle
        assert device._kept is not None
        status_of(worker)  # another client: the worker closes the idle kept connection
        first = device.run(files["matmul_relu"])
        second = device.run(files["matmul_relu"])
    finally:
        device.close()
    assert first == second == files["golden_mnrs"]
    assert decode_result(first).status == 0
    assert "connection cut off" not in worker.stderr()


def test_a_kept_connection_with_bytes_past_the_answer_is_not_used_again():
    """A worker that sends more than its Content-Length: those bytes are never taken for
    the next answer; that connection is dropped and the next request goes on a fresh one."""
    listener = socket.create_server(("127.0.0.1", 0))
    answers = [b"first", b"second"]

    def serve():
        for body in answers:
            conn, _ = listener.accept()
            with conn:
                while b"\r\n\r\n" not in conn.recv(65536):
                    pass
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: "
                             b"keep-alive\r\n\r\n%sSTALE" % (len(body), body))
                conn.recv(1)  # held open until the client is done with it
    server = threading.Thread(target=serve, daemon=True)
    server.start()
    port = listener.getsockname()[1]
    try:
        got, kept = [], None
        for _ in answers:
            exchange = Exchange("127.0.0.1", port, 5, 30)
            got.append(exchange.send("GET", "/api/status", [], [], None, kept).body)
            kept = exchange.kept
        assert got == answers and kept is None
    finally:
        listener.close()
    server.join(30)


def test_a_pipelined_request_is_never_read_as_the_first_ones_body(worker, token, files):
    """Issue 34, K9: a sync execute and the next request in one write: the execute is
    answered (its MNRS, not BAD_ENVELOPE "more bytes than Content-Length"), then the
    connection is closed, as docs/wire.md says for a client that pipelines; a status probe
    behind a status probe is answered the same way."""
    for first in (_execute(files["matmul_relu"], token), STATUS):
        with socket.create_connection((worker.host, worker.port), timeout=30) as s:
            status, headers, body = over(s, first + STATUS)
            assert (status, headers["Connection"]) == (200, "close"), body
            assert s.recv(1) == b""  # closed once the first is answered
        if first is not STATUS:
            assert body == files["golden_mnrs"]
    assert call(worker, "GET", "/api/status", proto=False)[0] == 200  # and serving on
