"""A network worker over CDP (D6, R18-R22, spec/wire.md §3): one status probe per plan,
lazy login with exactly one re-login on AUTH_REQUIRED, sync execute below 64 KiB and
submit-and-poll above, a fresh connection per request. Same interface as a VM device."""
import socket
import threading
import time

from bark_vm.wire import strict_json
from bark_vm.wire.constants import (AUTH_PATH, EXECUTE_PATH, JOB_PATH, JSON_TYPE,
                                    KEEP_ALIVE, LOCKED, LOCKOUT_FAILURES, MNPK_TYPE, PROTO,
                                    PROTO_HEADER, RESULT_PATH, RESULT_TTL_S, STATUS_PATH,
                                    SYNC_LIMIT, TOKEN_HEADER)
from bark_vm.wire.frames import parse_error_json
from bark_vm.wire.login import login_body
from bark_vm.wire.status import Status, parse_status

from . import bounds
from .http_exchange import Answer, Exchange
from ..failures import DeviceFailure, coded, malformed, timed_out, unreachable
from .worker_errors import worker_error_text


def _lock_state(failure: DeviceFailure) -> str:
    """Whether the user name is locked now, as far as this run can tell without asking."""
    if failure.detail == LOCKED:
        return "this run sends no other login"
    return (f"this run made one failed login and sends no other (the worker locks a user "
            f"name after {LOCKOUT_FAILURES} in a row, so it is not locked by this run)")


def _field(answer: Answer, key: str):
    """A field of a JSON object answer; None when the body is no JSON object."""
    return strict_json.object_field(answer.body, key)


class CdpDevice:
    sync_limit = SYNC_LIMIT  # a request this big or bigger is submitted and polled for

    def __init__(self, alias: str, host: str, port: int, user: str | None,
                 password: str | None, token: str | None,
                 deadline_s: float = bounds.ANSWER_DEADLINE_S):
        self.alias, self.host, self.port = alias, host, port
        self.user, self.password, self.token = user, password, token
        self.deadline_s = deadline_s
        self.status: Status | None = None
        self._probe_failure: DeviceFailure | None = None
        self.pid = None
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._exchange: Exchange | None = None
        self._wait_until: float | None = None  # while polling: when the whole wait ends
        self._wait_s = 0.0
        self._queued_job: int | None = None  # an async job this device is waiting on
        self._unread: int | None = None  # an async job whose result this device has not read
        self._refused_login: DeviceFailure | None = None  # AUTH_FAILED, kept for the run
        self._kept: socket.socket | None = None  # the connection the last answer left open

    @property
    def where(self) -> str:
        return f"device '{self.alias}' ({self.host}:{self.port})"

    @property
    def broken(self) -> bool:
        """Aborted: it refuses every later request, a fresh device is needed."""
        return self._stopping.is_set()

    # --- transport ----------------------------------------------------------------------
    def _request(self, method: str, path: str, body: bytes | None = None,
                 ctype: str | None = None, auth: bool = True) -> Answer:
        first = [(PROTO_HEADER, str(PROTO))]  # on every request, status too (interop)
        then = [(TOKEN_HEADER, self.token)] if auth and self.token else []
        if ctype:
            then.append(("Content-Type", ctype))
        then.append(("Connection", KEEP_ALIVE))
        deadline = self.deadline_s
        if self._wait_until is not None:  # a poll gets at most what is left of the wait
            left = self._wait_until - time.monotonic()
            if left <= 0:
                raise timed_out(self.where, "the async job did not finish", self._wait_s,
                                "re-submit it later")
            deadline = min(deadline, left)
        exchange = Exchange(self.host, self.port, bounds.CONNECT_TIMEOUT_S, deadline)
        with self._lock:  # abort() sees this exchange, or this request sees the abort
            if self._stopping.is_set():
                raise unreachable(self.where, "the run was interrupted")
            self._exchange = exchange
        kept, self._kept = self._kept, None
        try:
            answer = exchange.send(method, path, first, then, body, kept)
            self._kept = exchange.kept
            return answer
        except DeviceFailure as e:  # the exchange's: this device names it
            raise e.at(self.where) from None
        finally:
            self._exchange = None

    # --- the device interface -----------------------------------------------------------
    def spawn(self) -> None:
        """Nothing to start: a network worker is probed by the first job that needs it."""

    def start(self) -> Status:
        """The one status probe of this plan (no credentials needed); a failed probe is kept
        and raised again, so a dead worker costs one timeout per plan."""
        if self.status is None:
            if self._probe_failure is not None:
                raise self._probe_failure
            try:
                self.status = self._probe()
            except DeviceFailure as e:
                self._probe_failure = e
                raise
        return self.status

    def _probe(self) -> Status:
        answer = self._request("GET", STATUS_PATH, auth=False)
        if answer.status != 200:
            raise self._refused(answer)
        try:
            return parse_status(answer.body)
        except ValueError as e:
            raise malformed(self.where, f"bad status: {e}") from None

    def abort(self) -> None:
        """Stop at once (from another thread, on Ctrl-C): the wait in progress ends, and an
        async job still queued on the worker is cancelled (DELETE /api/job)."""
        with self._lock:
            self._stopping.set()
            exchange, job = self._exchange, self._queued_job
        self.close()  # an idle kept connection must not hold a one-connection worker
        if exchange is not None:
            exchange.abort()
        if job is not None:
            self._cancel(job)

    def _cancel(self, job: int) -> None:
        """DELETE a queued job, with short waits: Ctrl-C should not sit through a slow
        worker's full deadline. A running one cannot be cancelled (409): see release()."""
        if not self.token:
            return
        try:
            Exchange(self.host, self.port, bounds.CONNECT_TIMEOUT_S,
                     bounds.CONNECT_TIMEOUT_S).send(
                "DELETE", f"{JOB_PATH}?id={job}", [(PROTO_HEADER, str(PROTO))],
                [(TOKEN_HEADER, self.token)], None)
        except DeviceFailure:
            pass  # a worker that cannot be reached has nothing to cancel for us

    def release(self, deadline_s: float) -> None:
        """After an abort: read back the result of the async job this device submitted and
        never read (waiting at most `deadline_s` for it to finish), so the worker frees its
        slot now instead of when the result expires. Best effort, never raises."""
        with self._lock:
            job = self._unread
        if job is None or not self.token:
            return
        end = time.monotonic() + deadline_s
        while (left := end - time.monotonic()) > 0:
            try:
                answer = Exchange(self.host, self.port, bounds.CONNECT_TIMEOUT_S, left).send(
                    "GET", f"{RESULT_PATH}?id={job}", [(PROTO_HEADER, str(PROTO))],
                    [(TOKEN_HEADER, self.token)], None)
            except DeviceFailure:
                return
            if answer.status != 409:  # read, failed or gone: either way the slot is free
                self._unread = None
                return
            time.sleep(bounds.POLL_FIRST_S)

    def run(self, request: bytes) -> bytes:
        if len(request) < SYNC_LIMIT:
            answer = self._authed("POST", f"{EXECUTE_PATH}?mode=sync", request, MNPK_TYPE)
            if answer.status == 200:
                return answer.body
            err = parse_error_json(answer.body)
            if err and err[0] == "TOO_LARGE_FOR_SYNC":
                return self.run_async(request)  # resubmit once, async (R20)
            raise self._refused(answer)
        return self.run_async(request)

    def close(self) -> None:
        """The connection kept open for the next request, if any, is closed."""
        kept, self._kept = self._kept, None
        if kept is not None:
            kept.close()

    # --- auth and async -----------------------------------------------------------------
    def _login(self) -> None:
        """One login; a refused one (AUTH_FAILED) is remembered and raised again for every
        later job of the run without asking: a worker locks a user name after three failed
        logins in a row, and one run must not be what locks it."""
        if self._refused_login is not None:
            raise self._refused_login
        if not (self.user and self.password):
            raise coded(self.where, "the worker wants a login but the device has no user and "
                        "pass (AUTH_REQUIRED)", "AUTH_REQUIRED")
        body = login_body(self.user, self.password)
        answer = self._request("POST", AUTH_PATH, body, JSON_TYPE, auth=False)
        token = _field(answer, "token") if answer.status == 200 else None
        if not isinstance(token, str) or not token:
            failure = self._refused(answer)
            if failure.code == "AUTH_FAILED":
                self._refused_login = failure = coded(
                    self.where, f"{failure.what}; {_lock_state(failure)}", failure.code,
                    failure.detail)
            raise failure
        self.token = token

    def _authed(self, method: str, path: str, body=None, ctype=None) -> Answer:
        """Lazy login; exactly one re-login on AUTH_REQUIRED; AUTH_FAILED never retried."""
        if self.token is None:
            self._login()
        answer = self._request(method, path, body, ctype)
        err = parse_error_json(answer.body) if answer.status == 401 else None  # not an MNRS
        if err and err[0] == "AUTH_REQUIRED" and self.user:
            self._login()
            answer = self._request(method, path, body, ctype)
        return answer

    def run_async(self, request: bytes) -> bytes:
        """The job submitted async whatever its size (R20), polled until done, read once."""
        answer = self._authed("POST", EXECUTE_PATH, request, MNPK_TYPE)
        if answer.status == 200:
            raise malformed(self.where, "the worker answered an async submit with 200")
        if answer.status != 202:
            raise self._refused(answer)
        job = _field(answer, "job")
        if not isinstance(job, int) or isinstance(job, bool) or job < 0:
            raise malformed(self.where, "the submit did not return a job id")
        with self._lock:  # abort() cancels this job, or this job sees the abort
            self._queued_job = self._unread = job
            stopping = self._stopping.is_set()
        if stopping:
            self._cancel(job)
        self._wait_s = bounds.POLL_BUDGET_S + self.deadline_s
        self._wait_until = time.monotonic() + self._wait_s
        try:
            self._poll(job)
        finally:
            self._queued_job = self._wait_until = None
        answer = self._authed("GET", f"{RESULT_PATH}?id={job}")
        self._unread = None
        if answer.status == 404:
            raise self._lost(job)
        if answer.status != 200:
            raise self._refused(answer)
        return answer.body

    def _poll(self, job: int) -> None:
        """Until the job is done: first poll at once, then 50 ms doubling to 1 s, giving up
        after POLL_BUDGET_S of intended sleep (spec/wire.md §3.5)."""
        slept, delay = 0.0, bounds.POLL_FIRST_S
        while True:
            answer = self._authed("GET", f"{JOB_PATH}?id={job}")
            if answer.status == 404:
                raise self._lost(job)
            if answer.status != 200:
                raise self._refused(answer)
            state = _field(answer, "state")
            if state == "done":
                return
            if state == "error":
                code, detail = _field(answer, "code"), _field(answer, "detail")
                code = code if isinstance(code, str) and code else "EXEC_FAILED"
                detail = detail if isinstance(detail, str) else ""
                raise coded(self.where, worker_error_text(code, detail), code, detail)
            if state == "cancelled":
                raise malformed(self.where, f"job {job} was cancelled on the worker; re-submit "
                                "it")
            if state not in ("queued", "running"):
                raise malformed(self.where, f"job {job} is in unknown state "
                                f"{str(state)[:32]!r}")
            if slept >= bounds.POLL_BUDGET_S:
                raise timed_out(self.where, f"job {job} did not finish", bounds.POLL_BUDGET_S,
                                "re-submit it later")
            self._sleep(delay)
            slept += delay
            delay = min(delay * 2, bounds.POLL_CAP_S)

    def _sleep(self, seconds: float) -> None:
        if self._stopping.wait(seconds):
            raise unreachable(self.where, "the run was interrupted")

    def _lost(self, job: int) -> DeviceFailure:
        return coded(self.where, f"job {job} result lost on worker {self.host}:{self.port} "
                     f"(NO_SUCH_JOB): results are read-once and expire after {RESULT_TTL_S} s "
                     "- re-submit the job", "NO_SUCH_JOB")

    def _refused(self, answer: Answer) -> DeviceFailure:
        err = parse_error_json(answer.body)
        if err is None:
            return malformed(self.where, f"HTTP {answer.status} with no parsable CDP error "
                             "body")
        return coded(self.where, worker_error_text(*err), err[0], err[1])
