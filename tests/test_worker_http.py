"""bark-worker over raw HTTP (spec/wire.md §3, wire-golden §6, §8; DESIGN D6, D8, R18-R21, R43).

A real `bark-worker serve` child on 127.0.0.1 (a free port, shown in its readiness line),
spoken to with http.client and raw sockets only: no client code of `maned`. Requests come
from `mnpk-gen`. A long job is long by construction: the gated worker (tests/fakes) is the
real worker whose executor holds each job while a file the test controls exists. Nothing
here measures seconds; order, states and counters say what happened.
"""
import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bark_vm.wire.envelope import decode_request, encode_request
from gates import FAKES, HANG_GUARD_S, Gate, until
from signals import other_threads, signal_thread

ROOT = Path(__file__).resolve().parent.parent
USER, PASSWORD = "tester", "pw-Qz7!never-printed-9f3a"
ALIAS = "bob"
STATUS_KEYS = ["proto", "alias", "kind", "uptime_s", "requests", "jobs_running",
               "jobs_capacity", "ops", "max_payload", "ir", "rf_slots", "jobs_sync",
               "jobs_async", "jobs_done"]
OPS_V2 = ["matmul", "add", "sub", "mul", "div", "scalar_mul", "relu", "sigmoid", "tanh",
          "softmax", "conv2d", "maxpool2d", "avgpool2d", "transpose", "concat", "reshape",
          "split", "layernorm", "batchnorm", "tensor_sum", "tensor_mean", "tensor_max",
          "tensor_min", "gt", "lt", "eq", "ge", "le", "ne", "and", "or", "xor", "not"]
GOLDEN_MNPK_SHA = "953f646cbd5cd4402300009c34e860ff0c5c841980eb767ca50fa26a07928d7a"
GOLDEN_MNRS = bytes.fromhex("4d4e525301000000010000000002020002000000020000001300000016000000"
                            "0000000032000000")
MUTATION_CODES = {"bad_magic": ("BAD_ENVELOPE", 400), "bad_truncated": ("BAD_ENVELOPE", 400),
                  "bad_shape": ("SHAPE_MISMATCH", 422),
                  "unsupported_op": ("UNSUPPORTED_OP", 422)}
IO_TIMEOUT = 2.0
READY = re.compile(r"bark-worker: serving (\S+) on 127\.0\.0\.1:(\d+) \(ABI (\d)"
                   r"(?:, discovery on UDP (\d+))?\)")
SEEN: list[bytes] = []  # every response (head and body) this module received
TOKENS: list[str] = []


def _command(script: str, module: str) -> list[str]:
    exe = shutil.which(script)
    return [exe] if exe else [sys.executable, "-m", module]


class Proc:
    def __init__(self, popen, port, err_path):
        self.popen, self.port, self.err_path = popen, port, err_path

    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace")

    def stop(self, sig=signal.SIGTERM) -> int:
        if self.popen.poll() is None:
            self.popen.send_signal(sig)
        try:
            return self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
            raise


def start_worker(tmp: Path, *args: str, env: dict | None = None,
                 command: list[str] | None = None) -> Proc:
    err_path = tmp / f"worker-{time.monotonic_ns()}.err"
    full_env = dict(os.environ, BARK_ALIAS=ALIAS, BARK_USER=USER, BARK_PASS=PASSWORD)
    full_env.update(env or {})
    quiet = [] if "--discovery-port" in args else ["--discovery-port", "0"]  # UDP 4781 is one
    with open(err_path, "wb") as err:
        popen = subprocess.Popen((command or _command("bark-worker", "bark_vm.server"))
                                 + ["serve", "--host", "127.0.0.1", "--port", "0",
                                    "--io-timeout", str(IO_TIMEOUT), *quiet, *args],
                                 env=full_env, stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        m = READY.search(err_path.read_text(errors="replace"))
        if m:
            proc = Proc(popen, int(m.group(2)), err_path)
            assert call(proc, "GET", "/api/status", proto=False)[0] == 200
            return proc
        if popen.poll() is not None:
            raise AssertionError("bark-worker exited: " + err_path.read_text())
        time.sleep(0.05)
    popen.kill()
    raise AssertionError("bark-worker printed no readiness line")


# --- raw HTTP ---------------------------------------------------------------------------------
def call(w: Proc, method: str, path: str, body: bytes | None = None, proto=True,
         token: str | None = None, headers: dict | None = None, timeout: float = 30):
    """(status, headers, body) through http.client; JSON bodies decoded."""
    h = {"X-Maned-Proto": "1"} if proto else {}
    if token is not None:
        h["X-Maned-Token"] = token
    h.update(headers or {})
    conn = http.client.HTTPConnection("127.0.0.1", w.port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=h)
        resp = conn.getresponse()
        data = resp.read()
    finally:
        conn.close()
    SEEN.append(str(resp.headers).encode() + data)
    if resp.getheader("Content-Type") == "application/json":
        data = json.loads(data)
    return resp.status, resp.headers, data


def raw(w: Proc, data: bytes, timeout: float = 10) -> bytes:
    """Send bytes on a fresh connection, read until the worker closes it."""
    with socket.create_connection(("127.0.0.1", w.port), timeout=timeout) as s:
        s.sendall(data)
        return read_all(s)


def read_all(s: socket.socket) -> bytes:
    out = b""
    while chunk := s.recv(65536):
        out += chunk
    SEEN.append(out)
    return out


def split(resp: bytes) -> tuple[int, dict, bytes]:
    head, _, body = resp.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split(" ")[1]), headers, body


def cdp_error(status, data, code):
    assert isinstance(data, dict) and data["error"] == code, data
    assert status == {"AUTH_FAILED": 401, "AUTH_REQUIRED": 401, "PROTO_VERSION": 400,
                      "BAD_ENVELOPE": 400, "UNSUPPORTED_OP": 422, "SHAPE_MISMATCH": 422,
                      "TOO_LARGE": 413, "TOO_LARGE_FOR_SYNC": 413, "BUSY": 503,
                      "NOT_READY": 409, "NO_SUCH_JOB": 404, "EXEC_FAILED": 500}[code]
    assert isinstance(data.get("detail"), str)


def login(w: Proc, user=USER, password=PASSWORD):
    body = json.dumps({"username": user, "password": password}).encode()
    status, _, data = call(w, "POST", "/api/auth", body,
                           headers={"Content-Type": "application/json"})
    if status == 200:
        TOKENS.append(data["token"])
    return status, data


def status_of(w: Proc) -> dict:
    s, _, data = call(w, "GET", "/api/status", proto=False)
    assert s == 200
    return data


def submit(w, token, body) -> int:
    s, _, data = call(w, "POST", "/api/execute", body, token=token)
    assert s == 202, data
    assert list(data) == ["job", "state"] and data["state"] == "queued"
    assert isinstance(data["job"], int) and data["job"] >= 0
    return data["job"]


def wait_job(w, token, job, until=("done", "error"), timeout=30) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s, _, data = call(w, "GET", f"/api/job?id={job}", token=token)
        assert s == 200, data
        if data["state"] in until:
            return data
        time.sleep(0.05)
    raise AssertionError(f"job {job} never reached {until}")


# --- fixtures ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    return tmp_path_factory.mktemp("worker_http")


@pytest.fixture(scope="module")
def files(tmp):
    """mnpk-gen outputs: the v1 golden set, the v2 request, the int8 overflow, a 4 KiB one."""
    gen = _command("mnpk-gen", "maned.cli.mnpk_gen")
    out = {}
    subprocess.run(gen + [str(ROOT / "examples" / "matmul_relu.mnd"), "--out", str(tmp / "v1")],
                   check=True, capture_output=True)
    for name in ("matmul_relu", *MUTATION_CODES):
        out[name] = (tmp / "v1" / f"{name}.mnpk").read_bytes()
    out["golden_mnrs"] = (tmp / "v1" / "matmul_relu.mnrs").read_bytes()
    subprocess.run(gen + [str(ROOT / "examples" / "matmul_relu.mnd"), "--out", str(tmp / "v2"),
                          "--abi", "2"], check=True, capture_output=True)
    out["v2"] = (tmp / "v2" / "matmul_relu.mnpk").read_bytes()
    # int8 envelope (quant -1..1 at quantres 0): generated at x = [1, 1], then the data
    # bytes (the request's last two) become 100, so x + x = 200 overflows int8 on the worker.
    (tmp / "ovf.mnd").write_text("mnd::quantmax=1;\nmnd::quantmin=-1;\nmnd::quantres=0;\n"
                                 "calc::lambda_flow ovf(x) {\n    x x elemwise_add y =\n"
                                 "} return y;\n")
    subprocess.run(gen + [str(tmp / "ovf.mnd"), "--out", str(tmp / "ovf"), "--in", "x=2:1,1"],
                   check=True, capture_output=True)
    ovf = bytearray((tmp / "ovf" / "ovf.mnpk").read_bytes())
    assert ovf[17] == 1  # dtype int8
    ovf[-2:] = bytes((100, 100))
    out["overflow"] = bytes(ovf)
    # A 4 KiB request (a 32x32 input swapped into a request generated at 1x1).
    (tmp / "big.mnd").write_text("mnd::quantmax=1000;\nmnd::quantmin=-1000;\nmnd::quantres=0;\n"
                                 "calc::lambda_flow big(x) {\n    x relu r =\n} return r;\n")
    subprocess.run(gen + [str(tmp / "big.mnd"), "--out", str(tmp / "big"), "--in", "x=1x1:3"],
                   check=True, capture_output=True)
    small = decode_request((tmp / "big" / "big.mnpk").read_bytes())
    data = tuple((i * 7) % 19 - 9 for i in range(32 * 32))
    out["big"] = encode_request(small.quant, small.ir, [((32, 32), data)])
    assert 4096 < len(out["big"]) < 64 * 1024
    return out


@pytest.fixture(scope="module")
def worker(tmp):
    proc = start_worker(tmp)
    yield proc
    assert proc.stop() == 0


@pytest.fixture(scope="module")
def token(worker):
    s, data = login(worker)
    assert s == 200
    return data["token"]


@pytest.fixture
def idle(worker):
    """The module worker with every slot free before and after the test."""
    assert status_of(worker)["jobs_running"] == 0
    yield worker
    assert status_of(worker)["jobs_running"] == 0


# --- status -----------------------------------------------------------------------------------
def test_status_fields_in_order_without_proto_header(worker):
    s, headers, body = split(raw(worker, b"GET /api/status HTTP/1.1\r\nHost: x\r\n\r\n"))
    assert s == 200
    assert headers["Content-Type"] == "application/json"
    assert headers["Connection"] == "close"
    assert int(headers["Content-Length"]) == len(body)
    obj = json.loads(body)
    assert list(obj) == STATUS_KEYS
    assert body == json.dumps(obj, separators=(",", ":")).encode()  # compact, no newline
    assert obj["proto"] == 1 and obj["alias"] == ALIAS and obj["kind"] == "x86"
    assert obj["jobs_capacity"] == 4 and obj["ops"] == OPS_V2
    assert obj["max_payload"] == 33554432 and obj["ir"] == 2 and obj["rf_slots"] == 4096
    assert all(isinstance(obj[k], int) and obj[k] >= 0 for k in
               ("uptime_s", "requests", "jobs_running", "jobs_sync", "jobs_async", "jobs_done"))


def test_status_ignores_a_wrong_proto_header(worker):
    s, _, data = call(worker, "GET", "/api/status", headers={"X-Maned-Proto": "7"}, proto=False)
    assert s == 200 and data["proto"] == 1


def test_requests_counts_completed_requests(worker):
    a = status_of(worker)["requests"]
    b = status_of(worker)["requests"]
    assert b == a + 1
    call(worker, "GET", "/nowhere")
    assert status_of(worker)["requests"] == b + 2


def test_counters_follow_sync_async_and_done(worker, token, files, idle):
    before = status_of(worker)
    s, _, _ = call(worker, "POST", "/api/execute?mode=sync", files["matmul_relu"], token=token)
    assert s == 200
    mid = status_of(worker)
    assert (mid["jobs_sync"], mid["jobs_async"], mid["jobs_done"]) == (
        before["jobs_sync"] + 1, before["jobs_async"], before["jobs_done"] + 1)
    job = submit(worker, token, files["matmul_relu"])
    wait_job(worker, token, job)
    held = status_of(worker)
    assert (held["jobs_sync"], held["jobs_async"], held["jobs_done"]) == (
        mid["jobs_sync"], mid["jobs_async"] + 1, mid["jobs_done"] + 1)
    assert held["jobs_running"] == 1  # a done, unread job keeps its slot (R43)
    assert call(worker, "GET", f"/api/result?id={job}", token=token)[0] == 200


# --- auth -------------------------------------------------------------------------------------
def test_auth_issues_32_hex_tokens_and_the_alias(worker):
    s1, d1 = login(worker)
    s2, d2 = login(worker)
    assert s1 == s2 == 200
    assert list(d1) == ["token", "alias"] and d1["alias"] == ALIAS
    assert re.fullmatch(r"[0-9a-f]{32}", d1["token"]) and d1["token"] != d2["token"]


@pytest.mark.parametrize("user, password", [(USER, "wrong"), ("mallory", PASSWORD)])
def test_auth_failed(worker, user, password):
    s, data = login(worker, user, password)
    cdp_error(s, data, "AUTH_FAILED")
    assert data["detail"] != "locked"


@pytest.mark.parametrize("body", [b"not json", b'{"username": "tester"}', b"[1, 2]",
                                  b'{"username": "tester", "password": 5}', b"[" * 3000])
def test_auth_malformed_body(worker, body):
    s, _, data = call(worker, "POST", "/api/auth", body)
    cdp_error(s, data, "BAD_ENVELOPE")


@pytest.mark.parametrize("method, path", [("POST", "/api/execute?mode=sync"),
                                          ("POST", "/api/execute"), ("GET", "/api/job?id=1"),
                                          ("GET", "/api/result?id=1"),
                                          ("DELETE", "/api/job?id=1")])
@pytest.mark.parametrize("tok", [None, "", "0" * 32, "not-a-token"])
def test_auth_required(worker, files, method, path, tok):
    body = files["matmul_relu"] if method == "POST" else None
    s, _, data = call(worker, method, path, body, token=tok)
    cdp_error(s, data, "AUTH_REQUIRED")


@pytest.mark.parametrize("method, path", [("POST", "/api/auth"),
                                          ("POST", "/api/execute?mode=sync"),
                                          ("POST", "/api/execute"), ("GET", "/api/job?id=1"),
                                          ("GET", "/api/result?id=1"),
                                          ("DELETE", "/api/job?id=1")])
@pytest.mark.parametrize("value", [None, "2", "", "1.0"])
def test_proto_version_required(worker, token, method, path, value):
    headers = {} if value is None else {"X-Maned-Proto": value}
    s, _, data = call(worker, method, path, b"{}" if method == "POST" else None, proto=False,
                      token=token, headers=headers)
    cdp_error(s, data, "PROTO_VERSION")


# --- routing and HTTP framing -----------------------------------------------------------------
@pytest.mark.parametrize("method, path", [("GET", "/"), ("GET", "/api/statuses"),
                                          ("POST", "/api/status"), ("GET", "/api/auth"),
                                          ("PUT", "/api/job?id=1"), ("GET", "/api/execute")])
def test_unknown_path_or_method_is_404_no_such_job(worker, token, method, path):
    s, _, data = call(worker, method, path, token=token)
    cdp_error(s, data, "NO_SUCH_JOB")
    assert path.split("?")[0] in data["detail"]


def test_missing_content_length_is_bad_envelope(worker, token):
    for path in ("/api/execute?mode=sync", "/api/execute", "/api/auth"):
        resp = raw(worker, f"POST {path} HTTP/1.1\r\nHost: x\r\nX-Maned-Proto: 1\r\n"
                   f"X-Maned-Token: {token}\r\n\r\n".encode())
        s, headers, body = split(resp)
        cdp_error(s, json.loads(body), "BAD_ENVELOPE")
        assert headers["Connection"] == "close"


@pytest.mark.parametrize("head", [
    b"GARBAGE\r\n\r\n",
    b"GET /api/status\r\n\r\n",
    b"POST /api/auth HTTP/1.1\r\nX-Maned-Proto: 1\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"5\r\nhello\r\n0\r\n\r\n",
    b"GET /api/status HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",
    b"POST /api/auth HTTP/1.1\r\nX-Maned-Proto: 1\r\nContent-Length: 3\r\nContent-Length: 4"
    b"\r\n\r\nabcd",
    b"POST /api/auth HTTP/1.1\r\nX-Maned-Proto: 1\r\nContent-Length: -1\r\n\r\n",
    b"POST /api/auth HTTP/1.1\r\nX-Maned-Proto: 1\r\nContent-Length: " + b"9" * 5000
    + b"\r\n\r\n",
    b"GET /api/status HTTP/1.1\r\nX: " + b"a" * 20000 + b"\r\n\r\n",
])
def test_malformed_http_is_bad_envelope(worker, head):
    s, _, body = split(raw(worker, head))
    cdp_error(s, json.loads(body), "BAD_ENVELOPE")


@pytest.mark.parametrize("query", ["", "?id=", "?id=abc", "?id=-1", "?id=1.5", "?job=1",
                                   "?id=" + "9" * 5000])
def test_bad_job_id_is_bad_envelope(worker, token, query):
    for method, path in (("GET", "/api/job"), ("GET", "/api/result"), ("DELETE", "/api/job")):
        s, _, data = call(worker, method, path + query, token=token)
        cdp_error(s, data, "BAD_ENVELOPE")


def test_unknown_job_is_no_such_job(worker, token):
    for method, path in (("GET", "/api/job"), ("GET", "/api/result"), ("DELETE", "/api/job")):
        s, _, data = call(worker, method, path + "?id=987654", token=token)
        cdp_error(s, data, "NO_SUCH_JOB")


def test_bad_mode_is_bad_envelope(worker, token, files):
    s, _, data = call(worker, "POST", "/api/execute?mode=fast", files["matmul_relu"],
                      token=token)
    cdp_error(s, data, "BAD_ENVELOPE")


# --- size limits ------------------------------------------------------------------------------
def _headers_only(w, path, token, length) -> tuple[int, dict]:
    """Send only a head claiming `length` body bytes and never the body. An answer at all
    shows it was decided from the head: a worker waiting for the body would cut the
    connection off after --io-timeout without answering."""
    with socket.create_connection(("127.0.0.1", w.port), timeout=30) as s:
        s.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nX-Maned-Proto: 1\r\n"
                  f"Content-Length: {length}\r\nX-Maned-Token: {token}\r\n"
                  "Content-Type: application/x-maned-mnpk\r\n\r\n".encode())
        st, _, body = split(read_all(s))
    return st, json.loads(body)


@pytest.mark.parametrize("path", ["/api/execute", "/api/execute?mode=sync", "/api/auth"])
def test_too_large_from_content_length_alone(worker, token, path):
    s, data = _headers_only(worker, path, token, 33554433)
    cdp_error(s, data, "TOO_LARGE")
    assert "33554432" in data["detail"]


def test_too_large_for_sync_from_content_length_alone(worker, token):
    s, data = _headers_only(worker, "/api/execute?mode=sync", token, 65536)
    cdp_error(s, data, "TOO_LARGE_FOR_SYNC")


def test_just_under_the_sync_limit_is_read(worker, token):
    s, _, data = call(worker, "POST", "/api/execute?mode=sync", b"\0" * 65535, token=token)
    cdp_error(s, data, "BAD_ENVELOPE")  # read and decoded, not refused for its size


def test_refused_body_does_not_reset_the_answer(worker):
    """A body sent in full behind an early refusal is drained, so the 401 arrives intact."""
    body = b"\0" * (2 << 20)
    s, _, data = call(worker, "POST", "/api/execute", body, token="0" * 32)
    cdp_error(s, data, "AUTH_REQUIRED")


# --- execution: golden, mutations, errors ------------------------------------------------------
def test_golden_sync(worker, token, files, idle):
    req = files["matmul_relu"]
    assert len(req) == 205 and hashlib.sha256(req).hexdigest() == GOLDEN_MNPK_SHA
    assert files["golden_mnrs"] == GOLDEN_MNRS
    s, headers, data = call(worker, "POST", "/api/execute?mode=sync", req, token=token,
                            headers={"Content-Type": "application/x-maned-mnpk"})
    assert s == 200
    assert headers["Content-Type"] == "application/x-maned-mnrs"
    assert headers["Connection"] == "close"
    assert data == GOLDEN_MNRS and len(data) == 40


def test_golden_async_read_once(worker, token, files, idle):
    job = submit(worker, token, files["matmul_relu"])
    assert wait_job(worker, token, job) == {"job": job, "state": "done"}
    s, headers, data = call(worker, "GET", f"/api/result?id={job}", token=token)
    assert s == 200 and headers["Content-Type"] == "application/x-maned-mnrs"
    assert data == GOLDEN_MNRS
    for path in (f"/api/result?id={job}", f"/api/job?id={job}"):
        s, _, data = call(worker, "GET", path, token=token)
        cdp_error(s, data, "NO_SUCH_JOB")


def test_v2_golden_on_the_abi2_worker(worker, token, files):
    s, _, data = call(worker, "POST", "/api/execute?mode=sync", files["v2"], token=token)
    assert s == 200 and data == GOLDEN_MNRS


@pytest.mark.parametrize("name", list(MUTATION_CODES))
def test_mutations_sync(worker, token, files, name):
    s, _, data = call(worker, "POST", "/api/execute?mode=sync", files[name], token=token)
    cdp_error(s, data, MUTATION_CODES[name][0])
    assert s == MUTATION_CODES[name][1]


@pytest.mark.parametrize("name", list(MUTATION_CODES))
def test_mutations_async_are_job_errors(worker, token, files, name, idle):
    code = MUTATION_CODES[name][0]
    done = status_of(worker)["jobs_done"]
    job = submit(worker, token, files[name])
    # not polled: the errored job holds its slot until /api/result answers its code (R43)
    deadline = time.monotonic() + 60
    while status_of(worker)["jobs_done"] == done:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert status_of(worker)["jobs_running"] == 1
    s, _, data = call(worker, "GET", f"/api/result?id={job}", token=token)
    cdp_error(s, data, code)
    s, _, data = call(worker, "GET", f"/api/result?id={job}", token=token)
    cdp_error(s, data, "NO_SUCH_JOB")


def test_exec_failed_sync(worker, token, files):
    s, _, data = call(worker, "POST", "/api/execute?mode=sync", files["overflow"], token=token)
    cdp_error(s, data, "EXEC_FAILED")
    assert "int8" in data["detail"]


def test_exec_failed_async_poll_frees_the_slot(worker, token, files, idle):
    job = submit(worker, token, files["overflow"])
    data = wait_job(worker, token, job)
    assert list(data) == ["job", "state", "code", "detail"]
    assert data["state"] == "error" and data["code"] == "EXEC_FAILED"
    assert status_of(worker)["jobs_running"] == 0  # reported, so freed (R43)
    assert wait_job(worker, token, job)["state"] == "error"  # still reportable
    s, _, data = call(worker, "GET", f"/api/result?id={job}", token=token)
    cdp_error(s, data, "EXEC_FAILED")
    s, _, data = call(worker, "GET", f"/api/result?id={job}", token=token)
    cdp_error(s, data, "NO_SUCH_JOB")


def test_busy_on_a_fifth_slot(worker, token, files, idle):
    jobs = [submit(worker, token, files["matmul_relu"]) for _ in range(4)]
    assert status_of(worker)["jobs_running"] == 4
    s, _, data = call(worker, "POST", "/api/execute", files["matmul_relu"], token=token)
    cdp_error(s, data, "BUSY")
    s, data = _headers_only(worker, "/api/execute", token, 1000)  # decided before the body
    cdp_error(s, data, "BUSY")
    # sync does not take a slot
    assert call(worker, "POST", "/api/execute?mode=sync", files["matmul_relu"],
                token=token)[2] == GOLDEN_MNRS
    wait_job(worker, token, jobs[0])
    assert call(worker, "GET", f"/api/result?id={jobs[0]}", token=token)[0] == 200
    jobs[0] = submit(worker, token, files["matmul_relu"])  # the freed slot is usable
    for job in jobs:
        wait_job(worker, token, job)
        assert call(worker, "GET", f"/api/result?id={job}", token=token)[2] == GOLDEN_MNRS


# --- every job is answered -------------------------------------------------------------------
def test_a_job_that_runs_out_of_memory_is_answered(tmp, files):
    """Issue 13, defect 1: a result that cannot be encoded for lack of memory is still an
    answer (EXEC_FAILED), sync and async, the job is counted done, and the worker serves on."""
    w = start_worker(tmp, command=[sys.executable, str(FAKES / "oom_worker.py")])
    try:
        token = login(w)[1]["token"]
        s, _, data = call(w, "POST", "/api/execute?mode=sync", files["matmul_relu"],
                          token=token, timeout=10)
        cdp_error(s, data, "EXEC_FAILED")
        assert "out of memory" in data["detail"]
        job = submit(w, token, files["matmul_relu"])
        assert wait_job(w, token, job, until=("error",))["state"] == "error"
        s, _, data = call(w, "GET", f"/api/result?id={job}", token=token)
        cdp_error(s, data, "EXEC_FAILED")
        assert "out of memory" in data["detail"]
        counters = status_of(w)
        assert (counters["jobs_sync"], counters["jobs_async"], counters["jobs_done"]) == (1, 1, 2)
        assert counters["jobs_running"] == 0
    finally:
        assert w.stop() == 0


def test_the_memory_budget_is_a_worker_option(tmp):
    """`--max-job-memory MIB`: a job that would go over it is 413 TOO_LARGE, counted done."""
    from test_worker_memory import outer_product_request
    w = start_worker(tmp, "--max-job-memory", "1")
    try:
        token = login(w)[1]["token"]
        s, _, data = call(w, "POST", "/api/execute?mode=sync", outer_product_request(512),
                          token=token)
        cdp_error(s, data, "TOO_LARGE")
        assert "memory budget of 1 MiB" in data["detail"]
        assert status_of(w)["jobs_done"] == 1
    finally:
        assert w.stop() == 0


# --- long jobs: status stays live, FIFO, cancel -----------------------------------------------
def executed(rows) -> int:
    """How many jobs reached the gated worker's executor (its log also lists polls)."""
    return sum(1 for r in rows if r[0] == "job")


@pytest.fixture(scope="module")
def gated_worker(tmp):
    gate = Gate(tmp / "hold")
    proc = start_worker(tmp, command=[sys.executable, str(FAKES / "gated_worker.py"),
                                      str(gate.path)])
    proc.gate = gate
    yield proc
    gate.open()
    assert proc.stop() == 0


@pytest.fixture
def gate(gated_worker):
    """The gate closed for one test, the worker's slots free before and after."""
    assert status_of(gated_worker)["jobs_running"] == 0
    gated_worker.gate.close()
    yield gated_worker.gate
    gated_worker.gate.open()
    assert status_of(gated_worker)["jobs_running"] == 0


def _in_background(fn, *args):
    """fn(*args) on a thread; .result() waits for it (re-raising what it raised)."""
    box = {}

    def run():
        try:
            box["value"] = fn(*args)
        except BaseException as e:  # handed to the waiting test
            box["error"] = e
    t = threading.Thread(target=run, daemon=True)
    t.start()

    class Pending:
        @staticmethod
        def result(timeout=120):
            t.join(timeout)
            assert not t.is_alive(), "a background call never returned"
            if "error" in box:
                raise box["error"]
            return box["value"]
    return Pending()


def sent_sync(w: Proc, token: str, body: bytes) -> socket.socket:
    """A sync execute written whole on a fresh connection, its answer not yet read."""
    s = socket.create_connection(("127.0.0.1", w.port), timeout=120)
    s.sendall(b"POST /api/execute?mode=sync HTTP/1.1\r\nHost: x\r\nX-Maned-Proto: 1\r\n"
              b"X-Maned-Token: " + token.encode() + b"\r\nContent-Length: "
              + str(len(body)).encode() + b"\r\n\r\n" + body)
    return s


def answer_of(s: socket.socket) -> int:
    with s:
        return split(read_all(s))[0]


def test_sync_requests_past_the_waiting_bound_are_busy(gated_worker, gate, files):
    """Issue 13, defect 2: behind a running job at most SYNC_WAITING_MAX sync requests
    wait; the next one is answered BUSY at once, and every waiting one is answered later.
    The worker accepts connections one at a time in arrival order, so once a status probe
    sent after the waiting requests is answered, every one of them is waiting."""
    from bark_vm.wire.constants import SYNC_WAITING_MAX
    w, token = gated_worker, login(gated_worker)[1]["token"]
    base = executed(gate.entries())
    held = [_in_background(answer_of, sent_sync(w, token, files["matmul_relu"]))]
    gate.wait_for(lambda rows: executed(rows) == base + 1, "the first sync job executing")
    held += [_in_background(answer_of, sent_sync(w, token, files["matmul_relu"]))
             for _ in range(SYNC_WAITING_MAX)]
    status_of(w)
    s, _, data = call(w, "POST", "/api/execute?mode=sync", files["matmul_relu"], token=token)
    cdp_error(s, data, "BUSY")
    gate.open()
    assert [p.result() for p in held] == [200] * (1 + SYNC_WAITING_MAX)


def test_a_worker_out_of_file_descriptors_keeps_serving(tmp, files):
    """Issue 13, defect 2: accept() failing (no descriptor left: EMFILE) is logged and
    retried, never the worker's end; once a descriptor frees, the waiting connection is
    served."""
    import resource
    gate = Gate(tmp / "fd-hold").close()
    w = start_worker(tmp, command=[sys.executable, str(FAKES / "gated_worker.py"),
                                   str(gate.path)])
    pid = w.popen.pid
    limits = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    try:
        token = login(w)[1]["token"]
        first = _in_background(lambda: call(w, "POST", "/api/execute?mode=sync",
                                            files["matmul_relu"], token=token, timeout=120))
        gate.wait_for(lambda rows: executed(rows) == 1, "the first job executing")
        in_use = len(os.listdir(f"/proc/{pid}/fd"))
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (in_use, limits[1]))  # none left
        second = _in_background(lambda: call(w, "GET", "/api/status", proto=False,
                                             timeout=120))
        until(lambda: "cannot accept a connection" in w.stderr() or w.popen.poll() is not None,
              "the failed accept logged")
        assert w.popen.poll() is None, "the worker exited: " + w.stderr()
        resource.prlimit(pid, resource.RLIMIT_NOFILE, limits)
        gate.open()
        assert first.result()[0] == 200 and second.result()[0] == 200
        assert status_of(w)["jobs_done"] == 1
    finally:
        gate.open()
        assert w.stop() == 0


def test_async_long_job_status_cancel_and_fifo(gated_worker, gate, files):
    w, token = gated_worker, login(gated_worker)[1]["token"]
    state = (lambda job: call(w, "GET", f"/api/job?id={job}", token=token)[2]["state"])
    base = executed(gate.entries())
    held = submit(w, token, files["matmul_relu"])
    wait_job(w, token, held, until=("running",))
    gate.wait_for(lambda rows: executed(rows) == base + 1, "the async job reached the executor")
    for _ in range(5):  # the accept loop answers while the executor is busy
        assert status_of(w)["jobs_running"] == 1
        assert state(held) == "running"
    s, _, data = call(w, "GET", f"/api/result?id={held}", token=token)
    cdp_error(s, data, "NOT_READY")
    s, _, data = call(w, "DELETE", f"/api/job?id={held}", token=token)
    cdp_error(s, data, "NOT_READY")  # running: refused
    queued = submit(w, token, files["matmul_relu"])
    assert state(queued) == "queued"
    assert status_of(w)["jobs_running"] == 2
    s, _, data = call(w, "GET", f"/api/result?id={queued}", token=token)
    cdp_error(s, data, "NOT_READY")
    s, _, data = call(w, "DELETE", f"/api/job?id={queued}", token=token)
    assert s == 200 and data == {"job": queued, "state": "cancelled"}
    assert status_of(w)["jobs_running"] == 1
    assert call(w, "DELETE", f"/api/job?id={queued}", token=token)[:3:2] == (
        200, {"job": queued, "state": "cancelled"})  # idempotent
    assert state(queued) == "cancelled"
    s, _, data = call(w, "GET", f"/api/result?id={queued}", token=token)
    cdp_error(s, data, "NO_SUCH_JOB")
    # a sync request behind the running job waits its turn (R43), first in first out
    box = {}

    def sync():
        box["resp"] = call(w, "POST", "/api/execute?mode=sync", files["matmul_relu"],
                           token=token)
        box["held_state"] = state(held)
    syncs = status_of(w)["jobs_sync"]
    th = threading.Thread(target=sync)
    th.start()
    deadline = time.monotonic() + 60
    while status_of(w)["jobs_sync"] == syncs:  # checked and queued for the executor
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert state(held) == "running" and th.is_alive()
    assert executed(gate.entries()) == base + 1  # queued behind the held job, not beside it
    gate.open()
    th.join(60)
    assert box["resp"][0] == 200 and box["resp"][2] == GOLDEN_MNRS
    assert box["held_state"] == "done"
    assert executed(gate.entries()) == base + 2  # then the sync job; the cancelled one never
    s, _, data = call(w, "DELETE", f"/api/job?id={held}", token=token)
    cdp_error(s, data, "NOT_READY")  # finished: refused
    s, _, data = call(w, "GET", f"/api/result?id={held}", token=token)
    assert s == 200 and data == GOLDEN_MNRS


def test_sync_long_job_status_stays_live(gated_worker, gate, files):
    w, token = gated_worker, login(gated_worker)[1]["token"]
    before = status_of(w)
    entered = executed(gate.entries())
    box = {}

    def sync():
        box["resp"] = call(w, "POST", "/api/execute?mode=sync", files["matmul_relu"],
                           token=token)
    th = threading.Thread(target=sync)
    th.start()
    gate.wait_for(lambda rows: executed(rows) > entered, "the sync job reached the executor")
    for _ in range(5):
        status_of(w)
        assert th.is_alive()  # status answered while the sync job has not
    gate.open()
    th.join(60)
    assert box["resp"][0] == 200 and box["resp"][2] == GOLDEN_MNRS
    after = status_of(w)
    assert after["jobs_sync"] == before["jobs_sync"] + 1
    assert after["jobs_done"] == before["jobs_done"] + 1
    assert after["jobs_running"] == 0


def test_stalled_client_is_cut_off_while_status_waits(tmp):
    """One connection at a time: a stalled client holds the listener until --io-timeout cuts
    it off (logged before the socket closes), then the queued status probe is answered."""
    worker = start_worker(tmp, "--io-timeout", "0.5")
    try:
        _stalled_clients_are_cut_off(worker)
    finally:
        assert worker.stop() == 0


def _stalled_clients_are_cut_off(worker):
    for partial in (b"POST /api/auth HTTP/1.1\r\nHost: x\r\n",
                    b"POST /api/auth HTTP/1.1\r\nX-Maned-Proto: 1\r\nContent-Length: 100\r\n"
                    b"\r\n{\"username\""):
        cut = worker.stderr().count("connection cut off")
        with socket.create_connection(("127.0.0.1", worker.port), timeout=30) as stalled:
            stalled.sendall(partial)
            status_of(worker)  # answered only once the stalled connection is gone
            assert worker.stderr().count("connection cut off") == cut + 1
            assert read_all(stalled) == b""  # cut off without an answer


def test_a_half_sent_head_holds_the_listener_only_for_the_heads_own_bound(tmp):
    """Issue 24, point 12: the head has its own bound, shorter than the body's: with a body
    bound of a minute (--io-timeout 60), three clients in a row that each send half a head
    are cut off by --head-timeout, and the status probe queued behind them is answered
    within its own 30 s, which the body bound alone would never allow."""
    worker = start_worker(tmp, "--io-timeout", "60", "--head-timeout", "0.2")
    try:
        stalled = [socket.create_connection(("127.0.0.1", worker.port), timeout=30)
                   for _ in range(3)]
        for s in stalled:
            s.sendall(b"POST /api/auth HTTP/1.1\r\nHost: x\r\n")
        assert status_of(worker)["alias"] == ALIAS
        assert [read_all(s) for s in stalled] == [b""] * 3  # cut off, never answered
        assert worker.stderr().count("connection cut off: the request head (bound 0.2 s) did "
                                     "not arrive in time") == 3
    finally:
        for s in stalled:
            s.close()
        assert worker.stop() == 0


@pytest.mark.parametrize("flag", ["--head-timeout", "--io-timeout"])
@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_a_bound_that_is_not_positive_is_refused(tmp, flag, value):
    code, err = _refusal(tmp, flag, value)
    assert code == 2 and "--io-timeout and --head-timeout > 0" in err


def test_a_trickled_body_is_cut_off_by_what_it_sent_not_what_it_declared(tmp):
    """Issue 13, defect 5: a body's deadline follows the bytes received (--io-timeout, plus
    a second per MB that has arrived), not the Content-Length it announces: a client that
    declares 32 MiB and sends a byte every 50 ms is cut off long before the 200 bytes it
    means to send, and the status probe queued behind it is answered."""
    worker = start_worker(tmp, "--io-timeout", "0.5")
    try:
        token = login(worker)[1]["token"]
        head = (b"POST /api/execute HTTP/1.1\r\nX-Maned-Proto: 1\r\nX-Maned-Token: "
                + token.encode() + b"\r\nContent-Length: 33554432\r\n\r\n")
        cut = worker.stderr().count("connection cut off")
        with socket.create_connection(("127.0.0.1", worker.port), timeout=60) as trickle:
            trickle.sendall(head)
            sent = _in_background(_drip, trickle, 200, 0.05)
            assert status_of(worker)["alias"] == ALIAS  # answered once the trickle is gone
            assert sent.result() < 200
        assert worker.stderr().count("connection cut off") == cut + 1
    finally:
        assert worker.stop() == 0


def _drip(sock: socket.socket, total: int, every_s: float) -> int:
    """Send one byte every `every_s` until `total` are sent or the peer closes; then stay
    connected, silent, until the peer closes. How many bytes went out."""
    sent = 0
    try:
        while sent < total:
            sock.sendall(b"x")
            sent += 1
            time.sleep(every_s)
        read_all(sock)
    except OSError:
        pass
    return sent


# --- other workers: ABI 1, lock-out, LRU, start-up and shutdown --------------------------------
def test_abi1_worker_and_max_payload(tmp, files):
    w = start_worker(tmp, "--abi", "1", "--max-payload", "1000")
    try:
        st = status_of(w)
        assert list(st) == STATUS_KEYS
        assert (st["ir"], st["rf_slots"], st["max_payload"]) == (1, 256, 1000)
        assert st["ops"] == [o for o in OPS_V2 if o not in ("reshape", "split", "batchnorm")]
        assert READY.search(w.stderr()).group(3) == "1"
        tok = login(w)[1]["token"]
        s, _, data = call(w, "POST", "/api/execute?mode=sync", files["matmul_relu"], token=tok)
        assert s == 200 and data == GOLDEN_MNRS
        s, _, data = call(w, "POST", "/api/execute?mode=sync", files["v2"], token=tok)
        cdp_error(s, data, "BAD_ENVELOPE")  # a v1 worker refuses v2 modules (R21)
        s, _, data = call(w, "POST", "/api/execute?mode=sync", files["big"], token=tok)
        cdp_error(s, data, "TOO_LARGE")
        assert "1000" in data["detail"]
    finally:
        assert w.stop(signal.SIGINT) == 0


def test_token_lru_then_lockout(tmp):
    """The lock-out's running out is a rule about time: tested on a fake clock in
    test_worker_tables.py; here the worker's default 60 s lock-out only has to hold."""
    w = start_worker(tmp, env={"BARK_ALIAS": ""})
    try:
        assert status_of(w)["alias"] == "bark"  # the default alias
        # the token table holds 16, least recently used first out
        first = login(w)[1]["token"]
        tokens = [login(w)[1]["token"] for _ in range(15)]  # table full: first is oldest
        assert call(w, "GET", "/api/job?id=1", token=first)[0] == 404  # used: now newest
        tokens.append(login(w)[1]["token"])  # evicts tokens[0], not `first`
        assert call(w, "GET", "/api/job?id=1", token=first)[0] == 404
        s, _, data = call(w, "GET", "/api/job?id=1", token=tokens[0])
        cdp_error(s, data, "AUTH_REQUIRED")
        for tok in tokens[1:]:
            assert call(w, "GET", "/api/job?id=1", token=tok)[0] == 404
        # a success resets the count
        for _ in range(2):
            assert login(w, password="bad")[0] == 401
        assert login(w)[0] == 200
        for _ in range(2):
            assert login(w, password="bad")[0] == 401
        assert login(w)[0] == 200
        # three consecutive failures lock the name, the right password included
        for _ in range(3):
            s, data = login(w, password="bad")
            cdp_error(s, data, "AUTH_FAILED")
            assert data["detail"] != "locked"
        s, data = login(w)
        cdp_error(s, data, "AUTH_FAILED")
        assert data["detail"] == "locked"
        s, data = login(w, "someone-else", "bad")  # per name: others are not locked
        assert data["detail"] != "locked"
        assert "someone-else" in w.stderr()  # user names may be logged
    finally:
        assert w.stop() == 0
    assert PASSWORD not in w.stderr()


@pytest.mark.parametrize("env, missing", [({"BARK_USER": "", "BARK_PASS": ""}, "BARK_USER"),
                                          ({"BARK_PASS": ""}, "BARK_PASS"),
                                          ({"BARK_USER": ""}, "BARK_USER")])
def test_refuses_to_start_without_credentials(env, missing):
    full = dict(os.environ, BARK_USER=USER, BARK_PASS=PASSWORD)
    full.update(env)
    p = subprocess.run(_command("bark-worker", "bark_vm.server") + ["serve", "--port", "0"],
                       env=full, capture_output=True, text=True, timeout=30)
    assert p.returncode == 2
    assert missing in p.stderr and "refusing to start" in p.stderr
    assert PASSWORD not in p.stderr + p.stdout


def test_the_password_may_come_from_a_file(tmp):
    """BARK_PASS_FILE (a Docker secret, deploy/stack.yaml): its first line is the password."""
    secret = tmp / "bark_pass"
    secret.write_text("from-a-file-77\n")
    w = start_worker(tmp, env={"BARK_PASS": "", "BARK_PASS_FILE": str(secret)})
    try:
        assert login(w, password="from-a-file-77")[0] == 200
        assert login(w, password=PASSWORD)[0] == 401
    finally:
        assert w.stop() == 0
    missing = dict(os.environ, BARK_USER=USER, BARK_PASS="", BARK_PASS_FILE=str(tmp / "none"))
    p = subprocess.run(_command("bark-worker", "bark_vm.server") + ["serve", "--port", "0"],
                       env=missing, capture_output=True, text=True, timeout=30)
    assert (p.returncode, p.stderr) == (2, "bark-worker: refusing to start: the file "
                                           "BARK_PASS_FILE names cannot be read (No such file "
                                           "or directory); it holds the path of a file whose "
                                           "first line is the password\n")


def test_a_byte_order_mark_in_the_password_file_is_not_part_of_the_password(tmp):
    """Issue 24, point 10: an editor's UTF-8 BOM before the first line is dropped, so the
    password written is the password a user types."""
    secret = tmp / "bark_pass"
    secret.write_bytes(b"\xef\xbb\xbfwith-a-bom-31\r\n")
    w = start_worker(tmp, env={"BARK_PASS": "", "BARK_PASS_FILE": str(secret)})
    try:
        assert login(w, password="with-a-bom-31")[0] == 200
    finally:
        assert w.stop() == 0


@pytest.mark.parametrize("where", ["BARK_PASS", "BARK_PASS_FILE"])
def test_a_password_no_login_could_carry_is_refused_at_start(tmp, where):
    """Issue 24, point 10: a login body is at most 4,096 bytes; a worker whose password
    cannot fit one would start and let nobody in. Non-ASCII counts as the client sends it
    (\\uXXXX, six bytes a character), and the refusal never shows the password."""
    password = "\u00e9" * 700  # 1,400 bytes of UTF-8, 4,236 of login JSON
    env = {"BARK_PASS": password}
    if where == "BARK_PASS_FILE":
        (tmp / "long").write_text(password + "\n", encoding="utf-8")
        env = {"BARK_PASS": "", "BARK_PASS_FILE": str(tmp / "long")}
    code, err = _refusal(tmp, **env)
    assert (code, err) == (2, "bark-worker: refusing to start: a login with this user and "
                              "password would be over the 4096-byte login body a worker "
                              "reads, so nobody could log in; choose a shorter password or "
                              "user name\n")


def test_a_password_given_where_the_file_path_goes_is_never_echoed(tmp):
    """Issue 24, point 4: BARK_PASS_FILE=hunter2 (the password, not a path) is refused
    without quoting the variable's value."""
    code, err = _refusal(tmp, BARK_PASS="", BARK_PASS_FILE="hunter2-not-a-path")
    assert code == 2 and "hunter2" not in err
    assert err.startswith("bark-worker: refusing to start: the file BARK_PASS_FILE names "
                          "cannot be read (No such file or directory)")


def _refusal(tmp, *args: str, **env) -> tuple[int, str]:
    full = {**os.environ, "BARK_USER": USER, "BARK_PASS": PASSWORD, **env}
    p = subprocess.run(_command("bark-worker", "bark_vm.server") + ["serve", "--port", "0",
                                                                      *args],
                       env=full, capture_output=True, text=True, timeout=HANG_GUARD_S)
    return p.returncode, p.stderr


def test_a_password_file_that_is_no_regular_file_is_refused_without_blocking(tmp):
    """A FIFO would block open() until a writer came: it is refused at once."""
    fifo = tmp / "fifo"
    os.mkfifo(fifo)
    assert _refusal(tmp, BARK_PASS="", BARK_PASS_FILE=str(fifo)) == (
        2, "bark-worker: refusing to start: the file BARK_PASS_FILE names cannot be read "
           "(not a regular file); it holds the path of a file whose first line is the "
           "password\n")


@pytest.mark.parametrize("alias, why", [
    ("bob.i3", "is not an alias"), ("bob i3", "is not an alias"), ("3bob", "is not an alias"),
    ("bøb", "is not an alias")])
def test_an_alias_no_script_could_name_is_refused_at_start(tmp, alias, why):
    code, err = _refusal(tmp, BARK_ALIAS=alias)
    assert code == 2 and err.startswith("bark-worker: refusing to start: BARK_ALIAS ")
    assert why in err and PASSWORD not in err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="tgkill is Linux's")
def test_sigterm_delivered_to_another_thread_still_stops_an_idle_worker(tmp):
    """The kernel may hand a process's SIGTERM to any of its threads; the idle worker must
    stop all the same (its main thread waits on the signal wakeup fd, not in accept())."""
    w = start_worker(tmp)
    tids = other_threads(w.popen.pid)
    assert tids, "the worker has an executor thread"
    signal_thread(w.popen.pid, tids[0], signal.SIGTERM)
    assert w.popen.wait(timeout=30) == 0
    assert "bark-worker: bob stopped" in w.stderr()


def test_python_m_entry_and_help():
    p = subprocess.run([sys.executable, "-m", "bark_vm.server", "serve", "--help"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0
    for flag in ("--host", "--port", "--abi", "--max-payload", "--lockout-seconds"):
        assert flag in p.stdout


def test_server_package_does_not_import_maned():
    code = ("import sys, bark_vm.server, bark_vm.server.cli, bark_vm.server.endpoints\n"
            "bad = [m for m in sys.modules if m == 'maned' or m.startswith('maned.')]\n"
            "assert not bad, bad\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=30, cwd="/")
    assert p.returncode == 0, p.stderr


def test_secrets_never_in_responses_or_logs(worker):
    """Last on purpose: every response of this module and the worker's stderr so far."""
    assert SEEN and TOKENS
    assert not any(PASSWORD.encode() in r for r in SEEN)
    err = worker.stderr()
    assert PASSWORD not in err
    assert not any(t in err for t in TOKENS)
    assert "login: user 'tester'" in err
