"""A network worker over CDP (D6, R18-R22, spec/wire.md §3): one status probe per plan,
lazy login with exactly one re-login on AUTH_REQUIRED, sync execute below 64 KiB and
submit-and-poll above, a fresh connection per request. Same interface as a VM device."""
import http.client
import json
import socket
import time

from bark_vm.wire.constants import (JSON_TYPE, MNPK_TYPE, PROTO, PROTO_HEADER, RESULT_TTL_S,
                                    SYNC_LIMIT, TOKEN_HEADER)
from bark_vm.wire.status import Status, parse_status

from .vm import DeviceFailure
from .worker_errors import worker_error_text

CONNECT_TIMEOUT = 5.0
RESPONSE_TIMEOUT = 30.0
MAX_RESPONSE = 64 * 1024 * 1024
POLL_FIRST, POLL_CAP, POLL_BUDGET = 0.05, 1.0, float(RESULT_TTL_S)


class _Answer:
    def __init__(self, status: int, ctype: str, body: bytes):
        self.status, self.ctype, self.body = status, ctype, body

    def json(self):
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    def error(self) -> tuple[str, str] | None:
        """(code, detail) of a CDP error body, or None when it has none."""
        body = self.json()
        if isinstance(body, dict) and isinstance(body.get("error"), str) and body["error"]:
            return body["error"], str(body.get("detail", ""))
        return None


class CdpDevice:
    def __init__(self, alias: str, host: str, port: int, user: str | None,
                 password: str | None, token: str | None):
        self.alias, self.host, self.port = alias, host, port
        self.user, self.password, self.token = user, password, token
        self.status: Status | None = None
        self.pid = None

    @property
    def where(self) -> str:
        return f"device '{self.alias}' ({self.host}:{self.port})"

    def _fail(self, text: str, code: str | None = None, detail: str = "") -> DeviceFailure:
        return DeviceFailure(f"{self.where}: {text}", code, detail)

    # --- transport ----------------------------------------------------------------------
    def _request(self, method: str, path: str, body: bytes | None = None,
                 ctype: str | None = None, auth: bool = True) -> _Answer:
        headers = {} if path == "/api/status" else {PROTO_HEADER: str(PROTO)}
        if auth and self.token:
            headers[TOKEN_HEADER] = self.token
        if ctype:
            headers["Content-Type"] = ctype
        conn = http.client.HTTPConnection(self.host, self.port, timeout=CONNECT_TIMEOUT)
        try:
            conn.connect()
            conn.sock.settimeout(RESPONSE_TIMEOUT)
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            if resp.getheader("Transfer-Encoding"):
                raise self._fail("malformed_response: chunked transfer encoding")
            length = resp.getheader("Content-Length")
            if length is not None and int(length) > MAX_RESPONSE:
                raise self._fail(f"too_large: a {length}-byte response is over the "
                                 f"{MAX_RESPONSE}-byte cap")
            data = resp.read(MAX_RESPONSE + 1)
            if len(data) > MAX_RESPONSE:
                raise self._fail(f"too_large: the response is over the {MAX_RESPONSE}-byte cap")
            return _Answer(resp.status, resp.getheader("Content-Type") or "", data)
        except socket.timeout:
            raise self._fail("timeout: the worker did not answer in time") from None
        except OSError as e:
            raise self._fail(f"connect_failed: {e.strerror or e}") from None
        except (http.client.HTTPException, ValueError) as e:
            raise self._fail(f"malformed_response: {type(e).__name__}") from None
        finally:
            conn.close()

    # --- the device interface -----------------------------------------------------------
    def start(self) -> Status:
        """The one status probe of this plan (no credentials needed)."""
        if self.status is None:
            answer = self._request("GET", "/api/status", auth=False)
            if answer.status != 200:
                raise self._refused(answer)
            try:
                self.status = parse_status(answer.body)
            except ValueError as e:
                raise self._fail(f"malformed_response: bad status: {e}") from None
        return self.status

    def run(self, request: bytes) -> bytes:
        if len(request) < SYNC_LIMIT:
            answer = self._authed("POST", "/api/execute?mode=sync", request, MNPK_TYPE)
            if answer.status == 200:
                return answer.body
            if answer.error() and answer.error()[0] == "TOO_LARGE_FOR_SYNC":
                return self._run_async(request)  # resubmit once, async (R20)
            raise self._refused(answer)
        return self._run_async(request)

    def close(self) -> None:
        pass

    # --- auth and async -----------------------------------------------------------------
    def _login(self) -> None:
        if not (self.user and self.password):
            raise self._fail("the worker wants a login but the device has no user and pass "
                             "(AUTH_REQUIRED)", "AUTH_REQUIRED")
        body = json.dumps({"username": self.user, "password": self.password}).encode()
        answer = self._request("POST", "/api/auth", body, JSON_TYPE, auth=False)
        token = (answer.json() or {}).get("token") if answer.status == 200 else None
        if not isinstance(token, str) or not token:
            raise self._refused(answer)
        self.token = token

    def _authed(self, method: str, path: str, body=None, ctype=None) -> _Answer:
        """Lazy login; exactly one re-login on AUTH_REQUIRED; AUTH_FAILED never retried."""
        if self.token is None:
            self._login()
        answer = self._request(method, path, body, ctype)
        err = answer.error()
        if answer.status == 401 and err and err[0] == "AUTH_REQUIRED" and self.user:
            self._login()
            answer = self._request(method, path, body, ctype)
        return answer

    def _run_async(self, request: bytes) -> bytes:
        answer = self._authed("POST", "/api/execute", request, MNPK_TYPE)
        if answer.status == 200:
            raise self._fail("protocol error: the worker answered an async submit with 200")
        if answer.status != 202:
            raise self._refused(answer)
        job = (answer.json() or {}).get("job")
        if not isinstance(job, int) or isinstance(job, bool) or job < 0:
            raise self._fail("malformed_response: the submit did not return a job id")
        slept, delay = 0.0, POLL_FIRST
        while True:
            answer = self._authed("GET", f"/api/job?id={job}")
            if answer.status == 404:
                raise self._lost(job)
            if answer.status != 200:
                raise self._refused(answer)
            state = (answer.json() or {}).get("state")
            if state == "done":
                break
            if state == "error":
                body = answer.json()
                code, detail = str(body.get("code", "EXEC_FAILED")), str(body.get("detail", ""))
                raise self._fail(worker_error_text(code, detail), code, detail)
            if state == "cancelled":
                raise self._fail(f"job {job} was cancelled on the worker; re-submit it")
            if state not in ("queued", "running"):
                raise self._fail(f"malformed_response: job {job} is in unknown state {state!r}")
            if slept >= POLL_BUDGET:
                raise self._fail(f"timeout: job {job} did not finish after {int(slept * 1000)} "
                                 "ms of polling; re-submit it later")
            time.sleep(delay)
            slept += delay
            delay = min(delay * 2, POLL_CAP)
        answer = self._authed("GET", f"/api/result?id={job}")
        if answer.status == 404:
            raise self._lost(job)
        if answer.status != 200:
            raise self._refused(answer)
        return answer.body

    def _lost(self, job: int) -> DeviceFailure:
        return self._fail(f"job {job} result lost on worker {self.host}:{self.port} "
                          "(NO_SUCH_JOB): results are read-once and expire after "
                          f"{RESULT_TTL_S} s - "
                          "re-submit the job", "NO_SUCH_JOB")

    def _refused(self, answer: _Answer) -> DeviceFailure:
        err = answer.error()
        if err is None:
            return self._fail(f"malformed_response: HTTP {answer.status} with no parsable CDP "
                              "error body")
        return self._fail(worker_error_text(*err), err[0], err[1])
