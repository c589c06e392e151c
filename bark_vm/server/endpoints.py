"""bark-worker's endpoints (spec/wire.md §3.2-3.6, DESIGN D6, R18-R21, R43).

`Endpoints.serve_connection(sock)` answers one accepted connection. The checks, first
failure wins:

  1. the HTTP head (BAD_ENVELOPE; a client that stalls is cut off without an answer);
  2. the route: an unknown path, or a method the path does not take, is 404 NO_SUCH_JOB
     (the only 404 code of CDP) with a detail naming the method and path;
  3. `X-Maned-Proto: 1` on everything but GET /api/status (PROTO_VERSION);
  4. `X-Maned-Token` on the job endpoints (AUTH_REQUIRED);
  5. for a body-carrying POST: Content-Length present (BAD_ENVELOPE otherwise), not over
     max_payload (TOO_LARGE) and, for mode=sync, under 64 KiB (TOO_LARGE_FOR_SYNC); an
     async submit with every slot occupied is BUSY, and so is a sync request when
     SYNC_WAITING_MAX are already waiting for the executor. All decided before the body
     is read;
  6. the body, then the request handling of `bark_vm.request_handling`.

A sync execute is checked (steps 2-6 of wire-golden §6.1) here, then its socket goes to
the executor thread, which writes the MNRS or the error when the job has run. An async
submit is answered 202 once its body is read; the executor runs the whole pipeline, so
a bad envelope shows up as the job's error. Every answer is one write and closes the
connection, but a 2xx answer to a client that asked for keep-alive (its body read): that
connection goes back to the accept loop (`serve_connection` returns it, or the executor
hands it back through `take_returned`), which closes it as soon as another client waits.
"""
import queue
import socket
import threading
import time

from ..wire import strict_json
from ..wire.constants import (
    AUTH_PATH, DEFAULT_MAX_JOB_MEMORY, EXECUTE_PATH, JOB_CAPACITY, JOB_PATH, MAX_JOB_ID,
    MNRS_TYPE, PROTO, PROTO_HEADER, RESULT_PATH, STATUS_PATH, SYNC_LIMIT, SYNC_WAITING_MAX,
    TOKEN_HEADER, WorkerError,
)
from ..wire.digits import whole_number
from ..wire.login import LOGIN_BODY_MAX
from ..request_handling import WorkerConfig, check_request, execute_request
from . import http
from .auth import Authenticator
from .job_table import JobTable
from .runner import Runner

HANDED_OFF = object()  # the executor thread answers this connection

# path -> {method: (handler name, needs proto header, needs token)}
ROUTES = {
    STATUS_PATH: {"GET": ("status", False, False)},
    AUTH_PATH: {"POST": ("auth", True, False)},
    EXECUTE_PATH: {"POST": ("execute", True, True)},
    JOB_PATH: {"GET": ("job", True, True), "DELETE": ("cancel", True, True)},
    RESULT_PATH: {"GET": ("result", True, True)},
}


class Endpoints:
    def __init__(self, config: WorkerConfig, auth: Authenticator,
                 io_timeout: float = http.IO_TIMEOUT_S, log=None, clock=time.monotonic,
                 head_timeout: float = http.HEAD_TIMEOUT_S, hold_s: float = 0.0):
        """hold_s: every job takes at least this long on the executor, the rest slept (a
        benchmark's slower machine elsewhere, costing this one no CPU; 0 = off)."""
        self.config, self.auth, self.io_timeout = config, auth, io_timeout
        self.hold_s = hold_s
        # the head is short and sent at once: its bound is the shorter (a half-sent head
        # must not hold the one listener for a whole body's time)
        self.head_timeout = min(head_timeout, io_timeout)
        self.jobs = JobTable(capacity=config.capacity)
        self._log_fn = log
        self._clock = clock
        self._started = clock()
        self._lock = threading.Lock()
        self.requests = self.jobs_sync = self.jobs_async = self.jobs_done = 0
        self.sync_waiting = 0  # sync requests handed to the executor, not yet started
        self.runner = Runner(log=self.log)
        # kept-alive connections the executor has answered, back to the accept loop, which
        # is woken by a byte on `returns`
        self._returned: queue.SimpleQueue = queue.SimpleQueue()
        self.returns, self._returns_w = socket.socketpair()
        self.returns.setblocking(False)
        self._returns_w.setblocking(False)

    def log(self, text: str) -> None:
        if self._log_fn is not None:
            self._log_fn(f"bark-worker[{self.config.alias}]: {text}")

    def _count(self, **deltas) -> None:
        with self._lock:
            for name, d in deltas.items():
                setattr(self, name, getattr(self, name) + d)

    def status_json(self) -> bytes:
        with self._lock:
            counters = dict(requests=self.requests, jobs_sync=self.jobs_sync,
                            jobs_async=self.jobs_async, jobs_done=self.jobs_done)
        return self.config.status_json(uptime_s=int(self._clock() - self._started),
                                       jobs_running=self.jobs.occupied(), **counters)

    # --- one connection ---------------------------------------------------------------------
    def serve_connection(self, sock: socket.socket) -> socket.socket | None:
        """Answer one request; the socket when it stays open for the client's next one,
        else None (closed, or handed to the executor)."""
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = _Conn(sock)
        try:
            try:
                conn.request, conn.rest = http.read_head(sock, self.head_timeout)
                answer = self._dispatch(conn)
            except WorkerError as e:
                answer = http.error_response(e)
                self._log_refusal(conn, e)
            except http.Stalled as e:
                self.log(f"connection cut off: {e}")
                http.close(sock)
                return None
            except Exception as e:  # never let one request take the listener down
                self.log(f"internal error: {type(e).__name__}")
                answer = http.error_response(WorkerError("EXEC_FAILED", "internal worker error"))
        except BaseException:
            http.close(sock)
            raise
        if answer is HANDED_OFF:
            return None
        return self._answer(sock, answer, drain=conn.unread_body(), keep=conn.keep())

    def _answer(self, sock: socket.socket, data: bytes, drain: bool = False,
                keep: bool = False) -> socket.socket | None:
        """Write the answer; then close, or (a 2xx answer to a keep-alive request) keep."""
        keep = keep and not drain and data.startswith(b"HTTP/1.1 2")
        sent = http.send(sock, http.kept_alive(data) if keep else data, self.io_timeout)
        self._count(requests=1)  # counted once written, before the connection is closed
        if keep and sent:
            return sock
        http.close(sock, drain=drain)
        return None

    def take_returned(self) -> list[socket.socket]:
        """The kept-alive connections the executor has answered since the last call."""
        try:
            self.returns.recv(4096)
        except BlockingIOError:
            pass
        kept = []
        while not self._returned.empty():
            kept.append(self._returned.get())
        return kept

    def _log_refusal(self, conn: "_Conn", e: WorkerError) -> None:
        r = conn.request
        where = f"{r.method} {r.path}" if r is not None else "request"
        self.log(f"{where} -> {e.code}: {e.detail}")

    def _dispatch(self, conn: "_Conn"):
        r = conn.request
        methods = ROUTES.get(r.path)
        if methods is None:
            raise WorkerError("NO_SUCH_JOB", f"no such endpoint: {r.method} {r.path}")
        if r.method not in methods:
            raise WorkerError("NO_SUCH_JOB", f"{r.path} does not take {r.method} "
                              f"(it takes {', '.join(methods)})")
        name, needs_proto, needs_token = methods[r.method]
        if needs_proto and r.header(PROTO_HEADER) != str(PROTO):
            got = r.header(PROTO_HEADER)
            raise WorkerError("PROTO_VERSION", f"this worker speaks {PROTO_HEADER}: {PROTO}; "
                              + ("the header is missing" if got is None
                                 else f"got {got[:32]!r}"))
        if needs_token:
            self.auth.check(r.header(TOKEN_HEADER))
        return getattr(self, "_" + name)(conn)

    # --- endpoints --------------------------------------------------------------------------
    def _status(self, conn: "_Conn") -> bytes:
        return http.response(200, self.status_json())

    def _auth(self, conn: "_Conn") -> bytes:
        body = conn.body(self, limit=LOGIN_BODY_MAX)
        try:
            obj = strict_json.loads(body)
        except ValueError as e:
            raise WorkerError("BAD_ENVELOPE", f"the auth body is not JSON ({e})") from None
        if (not isinstance(obj, dict) or not isinstance(obj.get("username"), str)
                or not isinstance(obj.get("password"), str)):
            raise WorkerError("BAD_ENVELOPE", 'the auth body must be {"username": ..., '
                              '"password": ...} with string values')
        user = obj["username"]
        try:
            token = self.auth.login(user, obj["password"])
        except WorkerError as e:
            self.log(f"login refused for user {user[:64]!r}: {e.detail}")
            raise
        self.log(f"login: user {user[:64]!r}")
        return http.json_response(200, {"token": token, "alias": self.config.alias})

    def _execute(self, conn: "_Conn"):
        mode = conn.request.query.get("mode", "async")
        if mode not in ("sync", "async"):
            raise WorkerError("BAD_ENVELOPE", f"mode must be sync or async, not {mode[:32]!r}")
        length = conn.require_length(self.config.max_payload)
        if mode == "sync":
            if length >= SYNC_LIMIT:
                raise WorkerError("TOO_LARGE_FOR_SYNC", f"a sync request must be under "
                                  f"{SYNC_LIMIT} bytes, this one is {length}; submit it "
                                  "without mode=sync")
            if self.sync_waiting >= SYNC_WAITING_MAX:
                raise WorkerError("BUSY", f"{SYNC_WAITING_MAX} sync requests are already "
                                  "waiting for the executor; retry later")
            request, module = check_request(conn.body(self), self.config)
            self._count(jobs_sync=1, sync_waiting=1)
            keep, drain = conn.keep(), conn.unread_body()
            self.runner.submit(lambda: self._run_sync(conn.sock, request, module, keep, drain))
            return HANDED_OFF
        self.jobs.check_free()
        job = self.jobs.submit(conn.body(self))
        self._count(jobs_async=1)
        self.runner.submit(lambda: self._run_async(job.id))
        return http.response(202, http.json_body({"job": job.id, "state": "queued"}))

    def _job(self, conn: "_Conn") -> bytes:
        return http.json_response(200, self.jobs.poll(conn.job_id()))

    def _result(self, conn: "_Conn") -> bytes:
        return http.response(200, self.jobs.take_result(conn.job_id()), MNRS_TYPE)

    def _cancel(self, conn: "_Conn") -> bytes:
        return http.json_response(200, self.jobs.cancel(conn.job_id()))

    # --- the executor thread's side -----------------------------------------------------------
    def _run_sync(self, sock: socket.socket, request, module, keep: bool = False,
                  drain: bool = False) -> None:
        """Every sync job is answered and counted, whatever went wrong in it."""
        self._count(sync_waiting=-1)
        began = self._clock()
        try:
            answer = http.response(200, execute_request(request, module,
                                                        self.config.max_job_memory), MNRS_TYPE)
        except WorkerError as e:
            self.log(f"sync job -> {e.code}: {e.detail}")
            answer = http.error_response(e)
        except Exception as e:  # MemoryError building the answer, or a bug: still an answer
            self.log(f"sync job -> EXEC_FAILED: {type(e).__name__}")
            answer = http.error_response(WorkerError("EXEC_FAILED", type(e).__name__))
        self._hold(began)
        self._count(jobs_done=1)
        if self._answer(sock, answer, drain=drain, keep=keep) is not None:
            self._returned.put(sock)  # the accept loop takes it back as an idle connection
            try:
                self._returns_w.send(b"k")
            except BlockingIOError:
                pass  # the loop has bytes to wake on already

    def _run_async(self, job_id: int) -> None:
        payload = self.jobs.start(job_id)
        if payload is None:  # cancelled while queued
            return
        began = self._clock()
        result, error = None, None
        try:
            result = execute_request(*check_request(payload, self.config),
                                     self.config.max_job_memory)
        except WorkerError as e:
            self.log(f"job {job_id} -> {e.code}: {e.detail}")
            error = e
        except Exception as e:
            error = WorkerError("EXEC_FAILED", type(e).__name__)
        self._hold(began)
        self._count(jobs_done=1)  # before the state changes, so a poll never sees it lag
        self.jobs.finish(job_id, result=result, error=error)

    def _hold(self, began: float) -> None:
        """With a hold (benchmarks): sleep out what is left of it since the job began."""
        left = began + self.hold_s - self._clock()
        if left > 0:
            time.sleep(left)


class _Conn:
    """One connection's request and how much of its body has been read."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.request: http.Request | None = None
        self.rest = b""
        self._body_read = False

    def keep(self) -> bool:
        """The client asked for keep-alive (and the body, if any, will have been read)."""
        return self.request is not None and http.wants_keep_alive(self.request)

    def unread_body(self) -> bool:
        """Bytes the answer leaves unread: a body never read, or what a pipelining client
        sent past this request (the connection is then drained and closed)."""
        r = self.request
        return bool(self.rest) or (not self._body_read and r is not None
                                   and bool(r.content_length))

    def require_length(self, max_payload: int) -> int:
        n = self.request.content_length
        if n is None:
            raise WorkerError("BAD_ENVELOPE", "a request body needs Content-Length")
        if n > max_payload:
            raise WorkerError("TOO_LARGE", f"request of {n} bytes is over max_payload "
                              f"{max_payload}")
        return n

    def body(self, worker: Endpoints, limit: int | None = None) -> bytes:
        n = self.require_length(worker.config.max_payload)
        if limit is not None and n > limit:
            raise WorkerError("BAD_ENVELOPE", f"a body of {n} bytes is over this endpoint's "
                              f"{limit}")
        data, self.rest = http.read_body(self.sock, self.request, self.rest,
                                         worker.io_timeout)
        self._body_read = True
        return data

    def job_id(self) -> int:
        job = whole_number(self.request.query.get("id"), 0, MAX_JOB_ID)
        if job is None:
            raise WorkerError("BAD_ENVELOPE", "the query needs id=N, a non-negative integer")
        return job


def default_config(alias: str, abi: int, max_payload: int,
                   max_job_memory: int = DEFAULT_MAX_JOB_MEMORY) -> WorkerConfig:
    return WorkerConfig(alias=alias, kind="x86", abi=abi, max_payload=max_payload,
                        capacity=JOB_CAPACITY, max_job_memory=max_job_memory)
