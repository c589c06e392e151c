"""CDP spoken raw (spec/wire.md §3): http.client and sockets only, no client code of `maned`,
to a worker given as anything with `host` and `port`. Every answer read is kept in SEEN and
every token issued in TOKENS, so a test can scan them for a secret afterwards."""
import http.client
import json
import socket
import time

SEEN: list[bytes] = []  # every answer received (head and body)
TOKENS: list[str] = []  # every token a login here was issued
# each CDP error code and the HTTP status it travels with
CDP_STATUS = {"AUTH_FAILED": 401, "AUTH_REQUIRED": 401, "PROTO_VERSION": 400,
              "BAD_ENVELOPE": 400, "UNSUPPORTED_OP": 422, "SHAPE_MISMATCH": 422,
              "TOO_LARGE": 413, "TOO_LARGE_FOR_SYNC": 413, "BUSY": 503, "NOT_READY": 409,
              "NO_SUCH_JOB": 404, "EXEC_FAILED": 500}


def call(w, method: str, path: str, body: bytes | None = None, proto=True,
         token: str | None = None, headers: dict | None = None, timeout: float = 30):
    """(status, headers, body) through http.client; JSON bodies decoded."""
    h = {"X-Maned-Proto": "1"} if proto else {}
    if token is not None:
        h["X-Maned-Token"] = token
    h.update(headers or {})
    conn = http.client.HTTPConnection(w.host, w.port, timeout=timeout)
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


def raw(w, data: bytes, timeout: float = 10) -> bytes:
    """Send bytes on a fresh connection, read until the worker closes it."""
    with socket.create_connection((w.host, w.port), timeout=timeout) as s:
        s.sendall(data)
        return read_all(s)


def read_all(s: socket.socket) -> bytes:
    out = b""
    while chunk := s.recv(65536):
        out += chunk
    SEEN.append(out)
    return out


def split(resp: bytes) -> tuple[int, dict, bytes]:
    """A raw answer as (status, headers, body)."""
    head, _, body = resp.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split(" ")[1]), headers, body


def headers_only(w, path, token, length) -> tuple[int, dict]:
    """Send only a head claiming `length` body bytes and never the body. An answer at all
    shows it was decided from the head: a worker waiting for the body would cut the
    connection off after --io-timeout without answering."""
    with socket.create_connection((w.host, w.port), timeout=30) as s:
        s.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nX-Maned-Proto: 1\r\n"
                  f"Content-Length: {length}\r\nX-Maned-Token: {token}\r\n"
                  "Content-Type: application/x-maned-mnpk\r\n\r\n".encode())
        st, _, body = split(read_all(s))
    return st, json.loads(body)


def cdp_error(status, data, code):
    """The answer is CDP error `code`: its HTTP status, and a string detail."""
    assert isinstance(data, dict) and data["error"] == code, data
    assert status == CDP_STATUS[code]
    assert isinstance(data.get("detail"), str)


def login(w, user: str | None = None, password: str | None = None):
    """POST /api/auth, by default as the user the worker was started with: (status, body)."""
    body = json.dumps({"username": w.user if user is None else user,
                       "password": w.password if password is None else password}).encode()
    status, _, data = call(w, "POST", "/api/auth", body,
                           headers={"Content-Type": "application/json"})
    if status == 200:
        TOKENS.append(data["token"])
    return status, data


def submit(w, token, body) -> int:
    """An async execute, accepted: its job id."""
    s, _, data = call(w, "POST", "/api/execute", body, token=token)
    assert s == 202, data
    assert list(data) == ["job", "state"] and data["state"] == "queued"
    assert isinstance(data["job"], int) and data["job"] >= 0
    return data["job"]


def wait_job(w, token, job, until=("done", "error"), timeout=30) -> dict:
    """Poll a job until its state is one of `until` (`timeout` is a hang guard)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s, _, data = call(w, "GET", f"/api/job?id={job}", token=token)
        assert s == 200, data
        if data["state"] in until:
            return data
        time.sleep(0.05)
    raise AssertionError(f"job {job} never reached {until}")


def assert_no_secret_shown(w) -> None:
    """The worker's password in no answer read here, and neither it nor any token issued
    here in the worker's log, which does name the user that logged in."""
    assert SEEN and TOKENS
    assert not any(w.password.encode() in r for r in SEEN)
    err = w.stderr()
    assert w.password not in err
    assert not any(t in err for t in TOKENS)
    assert f"login: user '{w.user}'" in err


def over(s: socket.socket, request: bytes) -> tuple[int, dict, bytes]:
    """One request on an open connection and its answer, read by its Content-Length (so a
    connection the worker keeps open is left open): (status, headers, body)."""
    s.sendall(request)
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        assert chunk, "the connection closed before an answer"
        buf += chunk
    head, _, body = buf.partition(b"\r\n\r\n")
    status, headers, _ = split(head)
    while len(body) < int(headers["Content-Length"]):
        chunk = s.recv(65536)
        assert chunk, "the connection closed inside the answer"
        body += chunk
    SEEN.append(head + body)
    return status, headers, body
