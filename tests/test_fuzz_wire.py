"""Fuzz of the wire (issue 13, Build 4): mutated and random bytes through the worker's MNPK
and IR decoders and the client's MNRS decoder (each raises only its coded error), mutated
HTTP requests against a real bark-worker (each answered with a CDP error or closed because
it was incomplete; the worker serves on), and maned-run against a hostile worker that
answers random statuses, error bodies, job states, truncated, oversized and garbled
answers (each run ends in its result or in coded lines naming flow and device). Each case
runs under a deadline; counts and the long mode are tests/fuzzing.py's."""
import json
import random
import re
import socket

import pytest

from bark_vm.container import worker_process
from bark_vm.request_handling import WorkerConfig, handle
from bark_vm.wire import ir as wire_ir
from bark_vm.wire.constants import ERRORS, WorkerError
from bark_vm.wire.envelope import decode_request, encode_request
from maned.static_check import check
from maned.cli import run as run_cli
from maned.lowering.compiled import Compiler
from maned.failures import DeviceFailure
from maned.lowering.envelopes import decode_result
from maned.tensor import Tensor

from support.cli import run_tool
from fuzzing import cases, check_outcome, deadline, mutate_bytes
from stub_worker import STATUS, Hostile
from support.scripts import H0, device, env
from support.wire_golden import A_MNPK_V1, A_MNPK_V2, A_MNRS, B_MNPK_V1, C_MNPK_V2, D_MNPK_V1

pytestmark = pytest.mark.fuzz

GOLDEN = [A_MNPK_V1, A_MNPK_V2, B_MNPK_V1, C_MNPK_V2, D_MNPK_V1]
CONFIGS = (WorkerConfig(abi=1), WorkerConfig(abi=2))
LAYER = (H0 + "in::x = [[1,2],[3,4]];\nin::w = [[5,6],[7,8]];\n"
         "in::bias = [[0,0],[-100,0]];\n"
         "calc::lambda_flow layer(x, w, bias){route} {{\n    x w matmul product =\n"
         "    product bias elemwise_add shifted =\n    shifted relu result =\n}} "
         "return result;\n")


def fail(target: str, n: int, raw: bytes, e: BaseException):
    """The failing case, its bytes shown with the test worker's password masked."""
    shown = re.sub(rb"(X-Maned-Token: )[0-9a-f]{32}", rb"\1***",
                   raw.replace(PASSWORD.encode(), b"***"))
    pytest.fail(f"{target} case {n} raised {type(e).__name__}: {e}\n{shown!r}")


# --- the decoders ------------------------------------------------------------------------------
def test_the_mnpk_decoder_raises_only_worker_errors():
    rng = random.Random(1313)
    for n in cases("the MNPK decoder", 5000):
        raw = mutate_bytes(rng.choice(GOLDEN), rng) if n % 5 else \
            b"MNPK" * (n % 2) + rng.randbytes(rng.randrange(400))
        for config in CONFIGS:
            try:
                with deadline():
                    handle(raw, config)
            except WorkerError:
                pass
            except BaseException as e:
                fail("MNPK", n, raw, e)


def test_the_ir_decoder_raises_only_worker_errors():
    """A mutated IR module alone (parse, validate) and inside a golden request's envelope
    (the whole check and, when it still passes, the executor)."""
    rng = random.Random(1314)
    golden = [decode_request(g) for g in GOLDEN]
    for n in cases("the IR decoder", 5000):
        request = rng.choice(golden)
        ir = mutate_bytes(request.ir, rng)
        try:
            with deadline():
                try:
                    wire_ir.validate_module(wire_ir.parse_module(ir))
                except WorkerError:
                    pass
                for config in CONFIGS:
                    try:
                        handle(encode_request(request.quant, ir, list(request.entries)), config)
                    except WorkerError:
                        pass
        except BaseException as e:
            fail("IR", n, ir, e)


def test_the_clients_mnrs_decoder_raises_only_device_failures():
    checked = check(LAYER.format(route=""))
    graph = checked.graphs["layer"]
    inputs = {p: Tensor((2, 2), (1, 2, 3, 4)) for p in graph.params}
    compiled = Compiler().compile(graph, 2, inputs)
    rng = random.Random(1315)
    for n in cases("the client's MNRS decoder", 5000):
        raw = mutate_bytes(A_MNRS, rng) if n % 5 else \
            b"MNRS" * (n % 2) + rng.randbytes(rng.randrange(80))
        try:
            with deadline():
                decode_result(raw, compiled, checked.program.quant)
        except DeviceFailure as e:
            if e.kind != "malformed_response":
                fail("MNRS", n, raw, e)
        except BaseException as e:
            fail("MNRS", n, raw, e)


# --- the HTTP front of a real worker -----------------------------------------------------------
PASSWORD = "fuzz-pass-71c0"


def _requests(token: str) -> list[bytes]:
    def req(line: str, headers: list[str], body: bytes = b"") -> bytes:
        if body:
            headers = headers + [f"Content-Length: {len(body)}"]
        return ("\r\n".join([line, "Host: 127.0.0.1"] + headers) + "\r\n\r\n").encode() + body
    proto, tok = "X-Maned-Proto: 1", f"X-Maned-Token: {token}"
    auth = json.dumps({"username": "test", "password": PASSWORD}).encode()
    return [req("GET /api/status HTTP/1.1", []),
            req("POST /api/auth HTTP/1.1", [proto, "Content-Type: application/json"], auth),
            req("POST /api/execute?mode=sync HTTP/1.1", [proto, tok], A_MNPK_V2),
            req("POST /api/execute HTTP/1.1", [proto, tok], A_MNPK_V1),
            req("GET /api/job?id=1 HTTP/1.1", [proto, tok]),
            req("GET /api/result?id=1 HTTP/1.1", [proto, tok]),
            req("DELETE /api/job?id=1 HTTP/1.1", [proto, tok])]


def _exchange(port: int, raw: bytes) -> bytes:
    """The request, then end-of-stream (so an incomplete one is cut off at once), then the
    whole answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        try:
            s.sendall(raw)
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the worker refused early and closed: its answer is still readable
        parts = []
        try:
            while chunk := s.recv(1 << 16):
                parts.append(chunk)
        except ConnectionResetError:
            pass
        return b"".join(parts)


def _incomplete(raw: bytes) -> bool:
    """A request that ended before its head did, or before the body it declared."""
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        return True
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length" and value.strip().isdigit():
            return int(value.strip()) > len(body)
    return False


def _check_answer(answer: bytes) -> None:
    head, sep, body = answer.partition(b"\r\n\r\n")
    assert sep, f"no answer head: {answer[:200]!r}"
    lines = head.decode("latin-1").split("\r\n")
    version, status, _ = lines[0].split(" ", 2)
    headers = dict(line.split(": ", 1) for line in lines[1:])
    assert version == "HTTP/1.1" and int(headers["Content-Length"]) == len(body)
    if int(status) >= 400:
        error = json.loads(body)["error"]
        assert error in ERRORS and ERRORS[error][0] == int(status), (status, body)
    else:
        assert status in ("200", "202"), status


def test_the_http_front_answers_every_request_or_cuts_off_an_incomplete_one(tmp_path):
    with worker_process("fz", "test", PASSWORD) as w:
        _, answer = _exchange(w.port, _requests("")[1]).split(b"\r\n\r\n", 1)
        corpus = _requests(json.loads(answer)["token"])
        rng = random.Random(1316)
        for n in cases("the worker's HTTP front", 2000):
            raw = mutate_bytes(rng.choice(corpus), rng)
            try:
                with deadline():
                    answer = _exchange(w.port, raw)
                if answer or not _incomplete(raw):
                    _check_answer(answer)
            except BaseException as e:
                fail("HTTP", n, raw, e)
        assert w.handle.poll() is None
        _check_answer(_exchange(w.port, corpus[0]))
        assert "Traceback" not in w.log()


# --- the client against a hostile worker -------------------------------------------------------
CODES = list(ERRORS) + ["", "NOT_A_CODE", "auth_failed"]


def _http(status: int, body: bytes, length: int | None = None, head: str = "") -> bytes:
    length = len(body) if length is None else length
    return (f"HTTP/1.1 {status} X\r\n{head}Content-Length: {length}\r\n\r\n").encode() + body


def _json_value(rng: random.Random, depth: int = 0):
    """A random JSON value, nested at most three deep."""
    kind = rng.randrange(7 if depth < 3 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.randint(-2**40, 2**40)
    if kind == 3:
        return "".join(chr(rng.choice([rng.randrange(0x2FF), 0x1B, 0x0A, 0x202E]))
                       for _ in range(rng.randrange(12)))
    if kind == 4:
        return rng.random()
    if kind == 5:
        return [_json_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {str(rng.randrange(9)): _json_value(rng, depth + 1) for _ in range(rng.randrange(4))}


def _hostile(rng: random.Random, good: bytes, status: int = 200) -> bytes:
    """`good` (an answer a healthy worker could give) or one of the ways to spoil it."""
    kind = rng.choice(["good", "good", "mutated", "truncated", "oversized", "cut", "garbage",
                       "error", "json", "no length", "bad status", "chunked"])
    if kind == "good":
        return _http(status, good)
    if kind == "mutated":
        return _http(status, mutate_bytes(good, rng))
    if kind == "truncated":
        return _http(status, good)[:rng.randrange(len(_http(status, good)))]
    if kind == "oversized":
        return _http(status, good, rng.choice([1 << 27, 10**12, len(good) + 1]))
    if kind == "cut":
        return b""
    if kind == "garbage":
        return rng.randbytes(rng.randrange(300))
    if kind == "error":
        err = {"error": rng.choice(CODES), "detail": _json_value(rng)}
        return _http(rng.choice([400, 401, 404, 409, 413, 422, 500, 503, 200]),
                     json.dumps(err).encode())
    if kind == "json":
        return _http(rng.choice([200, 202, 401, 500]), json.dumps(_json_value(rng)).encode())
    if kind == "no length":
        return f"HTTP/1.1 {status} X\r\n\r\n".encode() + good
    if kind == "bad status":
        return rng.choice([b"HTTP/1.1 2000 X\r\n", b"HTTP/2 200\r\n", b"OK\r\n"]) + \
            _http(status, good).split(b"\r\n", 1)[1]
    return _http(status, good, head="Transfer-Encoding: chunked\r\n")


def _script_answers(rng: random.Random):
    status = dict(STATUS, ops=sorted(set(STATUS["ops"]) | {"matmul", "add", "relu"}))
    polls = []

    def answer(method: str, path: str) -> bytes:
        if path == "/api/status":
            good = json.dumps({**status, **({rng.choice(list(status)): _json_value(rng)}
                                            if rng.random() < 0.2 else {})}).encode()
            return _hostile(rng, good)
        if path == "/api/auth":
            return _hostile(rng, json.dumps({"token": "f" * 32, "alias": "h"}).encode())
        if path == "/api/execute?mode=sync":
            if rng.random() < 0.2:  # as if too large for sync: the client resubmits async
                return _http(413, b'{"error":"TOO_LARGE_FOR_SYNC","detail":"x"}')
            return _hostile(rng, A_MNRS)
        if path == "/api/execute":
            return _hostile(rng, json.dumps({"job": rng.randrange(5)}).encode(), 202)
        if path.startswith("/api/job"):
            polls.append(path)
            states = ["done", "error", "cancelled", "lost"] + ["queued"] * (len(polls) < 3)
            state = {"job": 1, "state": rng.choice(states), "code": rng.choice(CODES),
                     "detail": "d"}
            return _hostile(rng, json.dumps(state).encode())
        return _hostile(rng, A_MNRS)
    return answer


def test_maned_run_against_a_hostile_worker_ends_in_a_result_or_coded_lines(workdir,
                                                                           monkeypatch):
    """Each case is a fresh run of a routed flow against answers drawn at random: the run
    gives the flow's output (when the answers happened to be sound) or coded lines, each
    naming the flow and the device, within the case's deadline."""
    hostile = Hostile()
    block = device("h", host="127.0.0.1", port=hostile.port, user="u", password=env("P_H"),
                   timeout=2)
    script = workdir / "hostile.mnd"
    preamble, _, rest = LAYER.format(route=" @device(h)").partition("in::")
    script.write_text(preamble + block + "in::" + rest)
    monkeypatch.setenv("P_H", "hostile-pass")
    rng = random.Random(1317)
    try:
        for n in cases("maned-run against a hostile worker", 250):
            hostile.answer = _script_answers(rng)
            try:
                with deadline():
                    code, out, err = run_tool(run_cli, [str(script)])
                check_outcome(code, out, err)
                lines = err.splitlines()
                assert all(line.isprintable() for line in lines) and err.count("\n") == len(lines)
                if code:
                    assert all(line.startswith("error: flow 'layer': ") and "device 'h'" in line
                               for line in lines), err
            except BaseException as e:
                fail("hostile worker", n, b"", e)
            assert not hostile.errors, hostile.errors
    finally:
        hostile.close()
