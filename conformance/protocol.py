"""Protocol conformance of a CDP worker (spec/wire.md §3, wire-golden §6): raw HTTP, no client
of ours in between. Each check is `protocol/<name>` in the report: the status's fields and
types, every refusal code for its trigger, auth and lock-out, the payload limits, the sync
golden and its mnpk-gen mutations byte for byte, EXEC_FAILED for an int8 output that does
not fit, and the async lifecycle: read-once results, a finished job that cannot be
cancelled (409, DESIGN R43), every free slot filled and then BUSY, NOT_READY when a result
is asked before its job is done. A check passes or fails with what the worker answered."""
import json
import socket
import time
from collections.abc import Callable
from functools import partial
from math import isqrt

from bark_vm.wire.constants import (AUTH_PATH, ERROR_STATUS, EXECUTE_PATH, JOB_PATH,
                                    PROTO_HEADER, RESULT_PATH, STATUS_PATH, SYNC_LIMIT,
                                    TOKEN_HEADER)
from bark_vm.wire.frames import parse_error_json
from bark_vm.wire.strict_json import object_field
from bark_vm.wire.status import parse_status
from maned.lowering.fixtures import DEFAULTS, MUTATIONS, build_fixture, mutate
from maned.io.cli_values import parse_value
from maned.lowering.envelopes import encode_job
from maned.lowering.lower import lower
from maned.pipeline.intake import compile_script
from maned.tensor import Tensor
from maned.failures import DeviceFailure
from maned.devices import CONNECT_TIMEOUT_S, MAX_HEAD_BYTES, Exchange

from .outcome import Outcome, check_id, not_run

GOLDEN_SCRIPT = """mnd::quantmax=1000;
mnd::quantmin=-1000;
mnd::quantres=0;
calc::lambda_flow layer(x, w, bias) {
    x w matmul product =
    product bias elemwise_add shifted =
    shifted relu result =
} return result;
"""
OVERFLOW_SCRIPT = """mnd::quantmax=100;
mnd::quantmin=-100;
mnd::quantres=0;
calc::lambda_flow grow(x) {
    x x add y =
} return y;
"""  # an int8 envelope (spec/wire.md §4): 100 + 100 does not fit, so EXEC_FAILED
ZERO_SCRIPT = GOLDEN_SCRIPT.split("calc::")[0] + """calc::lambda_flow layer(x, w, bias) {
    x 0 add shifted =
    shifted w matmul product =
    product bias elemwise_add result =
} return result;
"""  # the golden's inputs through a CONST 0 (the one constant a v1 module carries)
HEAVY_SCRIPT = GOLDEN_SCRIPT.split("calc::")[0] + """calc::lambda_flow heavy(a, b) {
    a b matmul r =
} return r;
"""
MUTATION_CODES = {"bad_magic": "BAD_ENVELOPE", "bad_truncated": "BAD_ENVELOPE",
                  "bad_shape": "SHAPE_MISMATCH", "unsupported_op": "UNSUPPORTED_OP"}
LOCKED_NAME = "maned-certify-lockout-probe"  # a name of its own: the real user stays usable
POLL_LIMIT_S = 60.0  # how long a check waits for its async jobs, unless told (--case-timeout)
MAX_SLOTS_CHECKED = 1024  # a worker with more job slots than this is not filled to BUSY


class Failed(Exception):
    pass


class OutOfTime(Exception):
    """A check's wait ran past its limit: a slow worker (reported as timeout), not a wrong
    one."""


class NotChecked(Exception):
    """A check this worker's shape does not allow (reported as not supported)."""


class Probe:
    """Raw requests to one worker, each on a fresh connection."""

    def __init__(self, host: str, port: int, user: str | None, password: str | None,
                 deadline_s: float, poll_limit_s: float = POLL_LIMIT_S):
        """deadline_s: each request's; poll_limit_s: a check's wait for its async jobs."""
        self.host, self.port, self.deadline_s = host, port, deadline_s
        self.poll_limit_s = poll_limit_s
        self.user, self.password, self._token = user, password, None

    def call(self, method: str, path: str, body: bytes | None = None, proto: bool = True,
             token: bool = False, headers: dict | None = None):
        """(status, content type, body): one request under one total deadline, the answer
        capped in size (the coordinator's own exchange)."""
        first = [(PROTO_HEADER, "1")] if proto else []
        then = ([(TOKEN_HEADER, self.token())] if token else []) + list((headers or {}).items())
        answer = Exchange(self.host, self.port, CONNECT_TIMEOUT_S, self.deadline_s).send(
            method, path, first, then, body)
        return answer.status, answer.headers.get("content-type", ""), answer.body

    def head_only(self, path: str, length: int):
        """A request head claiming `length` body bytes, never the body (a limit must be
        decided from the head); (status, content type, body) of the answer."""
        head = (f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\n{PROTO_HEADER}: 1\r\n"
                f"Content-Length: {length}\r\n{TOKEN_HEADER}: {self.token()}\r\n"
                "Content-Type: application/x-maned-mnpk\r\n\r\n").encode()
        end = time.monotonic() + self.deadline_s
        with socket.create_connection((self.host, self.port), timeout=CONNECT_TIMEOUT_S) as s:
            s.sendall(head)
            data = b""
            while len(data) <= MAX_HEAD_BYTES:
                left = end - time.monotonic()
                if left <= 0:
                    raise socket.timeout("no whole answer within the deadline")
                s.settimeout(left)
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        status_line, _, rest = data.partition(b"\r\n")
        parts = status_line.split(b" ")
        if len(parts) < 2 or not parts[1].isdigit():
            raise Failed(f"no HTTP answer to a head-only request ({data[:40]!r})")
        return int(parts[1]), "", rest.partition(b"\r\n\r\n")[2]

    def token(self) -> str:
        if self._token is None:
            status, _, body = self.login(self.user, self.password)
            token = object_field(body, "token") if status == 200 else None
            if not isinstance(token, str):
                raise Failed(f"login as the certifying user answered HTTP {status} without a "
                             "token")
            self._token = token
        return self._token

    def login(self, user, password):
        return self.call("POST", AUTH_PATH, json.dumps({"username": user or "",
                                                          "password": password or ""}).encode(),
                         headers={"Content-Type": "application/json"})


def _error_of(answer, code: str, what: str) -> None:
    status, _, body = answer
    got = (parse_error_json(body) or (None,))[0]
    if (status, got) != (ERROR_STATUS[code], code):
        raise Failed(f"{what}: expected HTTP {ERROR_STATUS[code]} {code}, got HTTP {status} "
                     f"{got or body[:60]!r}")


def _golden(abi: int, script: str = GOLDEN_SCRIPT):
    checked = compile_script(script)
    graph = checked.graphs["layer"]
    inputs = [parse_value(DEFAULTS[p]) for p in graph.params]
    lowered, mnpk, mnrs, _, _ = build_fixture(checked.program, graph, inputs, abi)
    return lowered, mnpk, mnrs


def _overflow(abi: int) -> bytes:
    """An int8 request whose only output (200) does not fit its envelope."""
    checked = compile_script(OVERFLOW_SCRIPT)
    return encode_job(lower(checked.graphs["grow"], abi), [parse_value("100")],
                      checked.program.quant)


def _heavy(abi: int, max_payload: int) -> bytes:
    """A request slow by construction on any worker, for a job to queue behind: an N×N
    matmul (N up to 600, its request within half of max_payload)."""
    n = max(2, min(600, isqrt(max_payload // 16)))
    checked = compile_script(HEAVY_SCRIPT)
    ones = Tensor((n, n), (1,) * (n * n))
    return encode_job(lower(checked.graphs["heavy"], abi), [ones, ones], checked.program.quant)


def _submit(p: Probe, mnpk: bytes) -> int:
    code, _, body = p.call("POST", EXECUTE_PATH, mnpk, token=True)
    job = object_field(body, "job")
    if code != 202 or object_field(body, "state") != "queued" or not isinstance(job, int):
        raise Failed(f"an async submit answered HTTP {code} {body[:60]!r}")
    return job


def _wait_done(p: Probe, job: int, end: float) -> None:
    while True:
        code, _, body = p.call("GET", f"{JOB_PATH}?id={job}", token=True)
        state = object_field(body, "state") if code == 200 else None
        if state == "done":
            return
        if state not in ("queued", "running"):
            raise Failed(f"job {job} went to HTTP {code} {body[:60]!r}")
        if time.monotonic() > end:
            raise OutOfTime(f"job {job} was not done within {p.poll_limit_s:g} s "
                            "(--case-timeout)")
        time.sleep(0.05)


def _read(p: Probe, job: int, mnrs: bytes | None) -> None:
    """The job's result, once: the golden MNRS, or any MNRS when `mnrs` is None."""
    code, _, body = p.call("GET", f"{RESULT_PATH}?id={job}", token=True)
    if code != 200 or (body != mnrs if mnrs is not None else body[:4] != b"MNRS"):
        raise Failed(f"the result of job {job} answered HTTP {code}, not the "
                     f"{'golden ' if mnrs is not None else ''}MNRS")


def _drain(p: Probe, expected: dict[int, bytes | None]) -> Exception | None:
    """Wait for every job and read its result, freeing its slot, all within the probe's poll
    limit; every job is tried even after one fails. The first failure, or None."""
    end, first = time.monotonic() + p.poll_limit_s, None
    for job, mnrs in expected.items():
        try:
            _wait_done(p, job, end)
            _read(p, job, mnrs)
        except (Failed, OutOfTime, DeviceFailure, socket.timeout) as e:
            first = first or e
    return first


class Slots:
    """Async jobs a check submitted, each read back when the check ends, pass or fail, so
    no check leaves a worker's slot held for the later cases."""

    def __init__(self, p: Probe):
        self.p, self.unread = p, {}

    def submit(self, mnpk: bytes, mnrs: bytes | None) -> int:
        job = _submit(self.p, mnpk)
        self.unread[job] = mnrs
        return job

    def __enter__(self) -> "Slots":
        return self

    def __exit__(self, kind, error, tb) -> None:
        failure = _drain(self.p, self.unread)
        if error is None and failure is not None:
            raise failure


_CHECKS: list[tuple[str, Callable]] = []  # (name, check) in report order


def _check(f: Callable) -> Callable:
    """Register f(probe, state) as the check `protocol/<its name>`, after those before it
    (the report's order). A check raises Failed (or NotChecked) or returns a detail; `state`
    is what one run's checks share: the worker's status, the golden request."""
    _CHECKS.append((f.__name__, f))
    return f


@_check
def status(p: Probe, state: dict) -> str | None:
    code, ctype, body = p.call("GET", STATUS_PATH, proto=False)
    if code != 200 or ctype != "application/json":
        raise Failed(f"GET /api/status answered HTTP {code} {ctype!r}")
    try:
        state["status"] = s = parse_status(body)
    except ValueError as e:
        raise Failed(f"the status breaks a rule: {e}") from None
    if s.proto != 1:
        raise Failed(f"the status says proto {s.proto}, not 1")
    return f"ABI v{s.ir}, {len(s.ops)} ops, max_payload {s.max_payload}"


@_check
def proto_version(p: Probe, state: dict) -> str | None:
    _error_of(p.call("POST", f"{EXECUTE_PATH}?mode=sync", b"x", proto=False),
              "PROTO_VERSION", "a request without X-Maned-Proto")


@_check
def auth_required(p: Probe, state: dict) -> str | None:
    _error_of(p.call("POST", f"{EXECUTE_PATH}?mode=sync", b"x"), "AUTH_REQUIRED",
              "an execute without a token")


@_check
def auth_failed(p: Probe, state: dict) -> str | None:
    _error_of(p.login(p.user, "not-" + (p.password or "")), "AUTH_FAILED",
              "a wrong password")
    if p.login(p.user, p.password)[0] != 200:  # resets the user's count of failures:
        raise Failed("the right password was refused after one wrong one")  # no lock


@_check
def lockout(p: Probe, state: dict) -> str | None:
    for _ in range(3):
        _error_of(p.login(LOCKED_NAME, "wrong"), "AUTH_FAILED", "a failed login")
    answer = p.login(LOCKED_NAME, "wrong")
    _error_of(answer, "AUTH_FAILED", "a fourth login")
    if object_field(answer[2], "detail") != "locked":
        raise Failed("three failed logins did not lock the name")


@_check
def golden_sync(p: Probe, state: dict) -> str | None:
    lowered, mnpk, mnrs = _golden(state["status"].ir)
    state["golden"] = (lowered, mnpk, mnrs)
    code, ctype, body = p.call("POST", f"{EXECUTE_PATH}?mode=sync", mnpk, token=True,
                               headers={"Content-Type": "application/x-maned-mnpk"})
    if (code, body) != (200, mnrs):
        raise Failed(f"the golden request answered HTTP {code}, {len(body)} bytes, not the "
                     f"expected {len(mnrs)}-byte MNRS")
    return f"{len(mnpk)}-byte request, {len(mnrs)}-byte result, byte for byte"


@_check
def v1_module(p: Probe, state: dict) -> str | None:
    """wire-golden §6.1 step 3: a v2 worker runs v1 modules; the golden and a flow with
    a CONST 0 lowered at ABI 1 answer the reference's MNRS byte for byte."""
    for script in (GOLDEN_SCRIPT, ZERO_SCRIPT):
        _, mnpk, mnrs = _golden(1, script)
        code, _, body = p.call("POST", f"{EXECUTE_PATH}?mode=sync", mnpk, token=True,
                               headers={"Content-Type": "application/x-maned-mnpk"})
        if (code, body) != (200, mnrs):
            raise Failed(f"a v1 module ({len(mnpk)} bytes) answered HTTP {code}, "
                         f"{len(body)} bytes, not the expected {len(mnrs)}-byte MNRS")
    return "two v1 modules (the golden, and a CONST 0) answered byte for byte"


@_check
def mutations(p: Probe, state: dict) -> str | None:
    lowered, mnpk, _ = state["golden"]
    for name in MUTATIONS:
        _error_of(p.call("POST", f"{EXECUTE_PATH}?mode=sync", mutate(mnpk, name,
                                                                  lowered.module),
                         token=True), MUTATION_CODES[name], f"the {name} mutation")


@_check
def too_large(p: Probe, state: dict) -> str | None:
    cap = state["status"].max_payload
    _error_of(p.head_only(EXECUTE_PATH, cap + 1), "TOO_LARGE",
              f"a body of max_payload + 1 ({cap + 1}) bytes")


@_check
def too_large_for_sync(p: Probe, state: dict) -> str | None:
    _error_of(p.head_only(f"{EXECUTE_PATH}?mode=sync", SYNC_LIMIT), "TOO_LARGE_FOR_SYNC",
              f"a sync body of {SYNC_LIMIT} bytes")


@_check
def async_read_once(p: Probe, state: dict) -> str | None:
    _, mnpk, mnrs = state["golden"]
    with Slots(p) as slots:
        job = slots.submit(mnpk, mnrs)
        _wait_done(p, job, time.monotonic() + p.poll_limit_s)
        _error_of(p.call("DELETE", f"{JOB_PATH}?id={job}", token=True), "NOT_READY",
                  "cancelling a finished job (DESIGN R43: 409)")
        del slots.unread[job]  # read here, once: the second read must find nothing
        _read(p, job, mnrs)
    _error_of(p.call("GET", f"{RESULT_PATH}?id={job}", token=True), "NO_SUCH_JOB",
              "a second read of a result")


@_check
def unknown_job(p: Probe, state: dict) -> str | None:
    _error_of(p.call("GET", f"{JOB_PATH}?id=987654321", token=True), "NO_SUCH_JOB",
              "an unknown job id")


@_check
def exec_failed(p: Probe, state: dict) -> str | None:
    _error_of(p.call("POST", f"{EXECUTE_PATH}?mode=sync", _overflow(state["status"].ir),
                     token=True, headers={"Content-Type": "application/x-maned-mnpk"}),
              "EXEC_FAILED", "an int8 job whose output (200) does not fit int8")


@_check
def busy(p: Probe, state: dict) -> str | None:
    """Every free slot filled with async jobs (each holds its slot until its result is
    read), then one job too many; once read back, a slot is free again."""
    _, mnpk, mnrs = state["golden"]
    now = parse_status(p.call("GET", STATUS_PATH, proto=False)[2])
    free = now.jobs_capacity - now.jobs_running
    if now.jobs_capacity > MAX_SLOTS_CHECKED or free < 1:
        raise NotChecked(f"{now.jobs_capacity} job slots, {now.jobs_running} occupied: "
                         f"BUSY is checked with 1..{MAX_SLOTS_CHECKED} free slots")
    with Slots(p) as slots:
        for _ in range(free):
            slots.submit(mnpk, mnrs)
        extra = p.call("POST", EXECUTE_PATH, mnpk, token=True)
        if extra[0] == 202 and isinstance(object_field(extra[2], "job"), int):
            slots.unread[object_field(extra[2], "job")] = mnrs  # accepted: read it too
        _error_of(extra, "BUSY", f"an async submit with all {now.jobs_capacity} slots "
                  "occupied")
    with Slots(p) as slots:
        slots.submit(mnpk, mnrs)  # the slots are free again
    return f"{free} free slots filled, then BUSY"


@_check
def not_ready(p: Probe, state: dict) -> str | None:
    """A golden job queued behind a heavy one: its result asked at once is NOT_READY.
    A worker fast enough to finish both first is not wrong: the detail says so."""
    _, mnpk, mnrs = state["golden"]
    s = state["status"]
    with Slots(p) as slots:
        slots.submit(_heavy(s.ir, s.max_payload), None)
        job = slots.submit(mnpk, mnrs)
        code, _, body = p.call("GET", f"{RESULT_PATH}?id={job}", token=True)
        if code == 200 and body == mnrs:
            del slots.unread[job]
            return "not observed: both jobs were done before the result was asked"
        _error_of((code, "", body), "NOT_READY", "the result of a job not yet done")
    return "NOT_READY for a job queued behind another"


def checks(p: Probe) -> list[tuple[str, Callable[[], str | None]]]:
    """(name, check) in report order, bound to one probe and one run's shared state."""
    state: dict = {}
    return [(name, partial(f, p, state)) for name, f in _CHECKS]


CHECKS = tuple(name for name, _ in _CHECKS)  # the checks' names, in report order


def run_protocol(host: str, port: int, user, password, deadline_s: float,
                 token: str | None = None, poll_limit_s: float = POLL_LIMIT_S
                 ) -> list[Outcome]:
    """Every check, in order; after a failed `status` the others cannot be judged. `token`
    is the certification's own login, so the checks log in no more than they test. A wait
    that runs out (poll_limit_s, the certification's --case-timeout) is a timeout."""
    probe, out = Probe(host, port, user, password, deadline_s, poll_limit_s), []
    probe._token = token
    for name, check in checks(probe):
        cid = check_id(name)
        if out and out[0].status != "pass":
            out.append(not_run(cid, "not run: the worker's status failed"))
            continue
        try:
            detail = check() or ""
            out.append(Outcome(cid, "hardware", "pass", detail, {"ok": True}))
        except Failed as e:
            out.append(Outcome(cid, "hardware", "fail", str(e)))
        except NotChecked as e:
            out.append(Outcome(cid, "hardware", "not_supported", str(e)))
        except (DeviceFailure, socket.timeout, OutOfTime) as e:
            kind = e.kind if isinstance(e, DeviceFailure) else "timeout"
            out.append(Outcome(cid, "hardware", "timeout" if kind == "timeout" else "error",
                               str(e)))
            if kind == "timeout":  # one stuck check is enough: the rest would wait as long
                break
        except Exception as e:  # garbage of any shape is the worker's error, not a crash
            out.append(Outcome(cid, "hardware", "error", f"{type(e).__name__}: {e}"))
    done = {o.case for o in out}
    out += [not_run(check_id(n), "not run: an earlier check timed out")
            for n in CHECKS if check_id(n) not in done]
    return out


def golden_answered(host: str, port: int, user, password, deadline_s: float) -> bool:
    """Whether the worker still answers a small job (the golden) at all within the
    deadline: a wrong answer is an answer (that worker is alive, merely wrong)."""
    probe = Probe(host, port, user, password, deadline_s)
    status = parse_status(probe.call("GET", STATUS_PATH, proto=False)[2])
    _, mnpk, _ = _golden(status.ir)
    probe.call("POST", f"{EXECUTE_PATH}?mode=sync", mnpk, token=True)
    return True
