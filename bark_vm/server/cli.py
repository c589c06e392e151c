"""bark-worker: the Bark worker over CDP/HTTP (spec/wire.md §3, DESIGN D6, D8, R18-R21, R43).

    bark-worker serve [--host 127.0.0.1] [--port 4780] [--abi 1|2] [--max-payload N]
                      [--lockout-seconds N] [--io-timeout SECONDS] [--head-timeout SECONDS]
                      [--discovery-port 4781] [--advertise-port N] [--hold-ms MS]

Identity from the environment: BARK_ALIAS (default "bark"), BARK_USER and BARK_PASS (both
required; the worker refuses to start, exit 2, without them; BARK_PASS_FILE names a file
holding the password instead, such as a Docker secret). One readiness line on
stderr once listening; SIGTERM or SIGINT stop it with exit 0. The listener serves one
connection at a time; jobs run on one executor thread; discovery probes are answered on
UDP (same address, --discovery-port, 0 = off) by a thread of their own.
"""
import argparse
import errno
import os
import select
import signal
import socket
import stat
import sys
import time

from ..wire.constants import (
    ABIS, DEFAULT_ABI, DEFAULT_LOCKOUT_S, DEFAULT_PORT, DISCOVERY_PORT, LOCKOUT_FAILURES,
    MAX_SECONDS,
)
from .. import job_memory
from ..version import version_text
from ..wire.alias import ALIAS_MAX, is_alias
from ..wire.digits import whole_number
from ..wire.login import LOGIN_BODY_MAX, PASS_FILE_MAX, fits, password_of_file
from . import http
from .auth import Authenticator
from ..blas import one_blas_thread
from .discovery import Responder
from .endpoints import Endpoints, default_config

EXAMPLES = """examples:
  BARK_ALIAS=bob BARK_USER=me BARK_PASS=secret bark-worker serve --port 4780
  BARK_USER=me BARK_PASS_FILE=/run/secrets/bark_pass bark-worker serve --host 0.0.0.0

environment:
  BARK_ALIAS      the alias the status and discovery report (default bark)
  BARK_USER       the one user name (required)
  BARK_PASS       its password (required, unless BARK_PASS_FILE names a file holding it)
  BARK_PASS_FILE  a file whose first line is the password (a Docker secret)"""


class _Stop(BaseException):
    """Raised in the main thread by SIGTERM/SIGINT."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bark-worker", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="The Bark worker: CDP over HTTP/1.1, discovery over UDP.",
        epilog=EXAMPLES)
    p.add_argument("--version", action="version", version=version_text("bark-worker").rstrip())
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND",
                           title="commands")
    s = sub.add_parser("serve", help="serve CDP on HOST:PORT until SIGTERM/SIGINT",
                       formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXAMPLES)
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default "
                   "127.0.0.1; 0.0.0.0 in the container)")
    s.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"TCP port (default {DEFAULT_PORT}; 0 picks a free one, shown in the "
                   "readiness line)")
    s.add_argument("--abi", type=int, choices=ABIS, default=DEFAULT_ABI,
                   help=f"IR ABI (default {DEFAULT_ABI})")
    job_memory.add_options(s)
    s.add_argument("--lockout-seconds", type=float, default=DEFAULT_LOCKOUT_S, metavar="N",
                   help=f"how long {LOCKOUT_FAILURES} failed logins lock a user name (default "
                   f"{DEFAULT_LOCKOUT_S})")
    s.add_argument("--io-timeout", type=float, default=http.IO_TIMEOUT_S,
                   metavar="SECONDS", help="a body that stops flowing this long is cut off "
                   "(plus 1 s per MB received), as is an answer the client does not read "
                   f"(default {http.IO_TIMEOUT_S:g})")
    s.add_argument("--head-timeout", type=float, default=http.HEAD_TIMEOUT_S,
                   metavar="SECONDS", help="a client that has not sent its whole request "
                   "head in this time is cut off, so a half-sent head holds the one listener "
                   f"briefly (default {http.HEAD_TIMEOUT_S:g}; at most --io-timeout)")
    s.add_argument("--discovery-port", type=int, default=DISCOVERY_PORT, metavar="N",
                   help=f"UDP port answering discovery probes (default {DISCOVERY_PORT}; 0 "
                   "turns discovery off)")
    s.add_argument("--advertise-port", type=int, default=None, metavar="N",
                   help="the HTTP port discovery replies give (default: the port listened "
                   "on; set it for a worker behind a published or NATed port)")
    s.add_argument("--hold-ms", type=_hold_ms, default=0.0, metavar="MS", dest="hold_s",
                   help="for benchmarks: every job takes at least MS milliseconds, what its "
                   "execution leaves of them slept, so the worker stands for a slower machine "
                   "elsewhere without using this one's CPU (default 0: off; at most "
                   f"{HOLD_MS_MAX})")
    return p


HOLD_MS_MAX = 60_000


def _hold_ms(text: str) -> float:
    """--hold-ms: a whole number of milliseconds, 0 to HOLD_MS_MAX."""
    value = whole_number(text, 0, HOLD_MS_MAX)
    if value is None:
        raise argparse.ArgumentTypeError(f"not a whole number of milliseconds from 0 to "
                                         f"{HOLD_MS_MAX}")
    return value / 1000


def _say(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


ACCEPT_RETRY_S = 0.05  # the pause after a failed accept()


def _raise_stop(signum, frame):
    raise _Stop()


def _accept_loop(listener: socket.socket, worker: Endpoints) -> None:
    """Serve connections one at a time until a signal handler raises _Stop. A signal may be
    delivered to any thread (the executor's, numpy's), which leaves a blocking accept() in
    this one asleep; so this thread waits on the listener and the signal wakeup fd together.

    Kept-alive connections (a client that asked for them) wait here too, idle, each until
    its next request, at most KEEP_ALIVE_IDLE_S; as soon as another client waits on the
    listener every idle one is closed and the newcomer served, so keep-alive never starves
    a client of this one-connection worker (R18)."""
    wake_r, wake_w = socket.socketpair()
    wake_w.setblocking(False)
    listener.setblocking(False)
    refused = 0
    idle: dict[socket.socket, float] = {}  # kept-alive connection -> when it is closed
    signal.set_wakeup_fd(wake_w.fileno(), warn_on_full_buffer=False)
    try:
        while True:
            wait = max(0.0, min(idle.values()) - time.monotonic()) if idle else None
            ready, _, _ = select.select([listener, wake_r, worker.returns, *idle], [], [],
                                        wait)
            if wake_r in ready:
                wake_r.recv(64)  # the handler runs (and raises _Stop) right after this
            if worker.returns in ready:
                for sock in worker.take_returned():
                    _keep(idle, sock)
            if listener in ready:
                for sock in idle:  # another client waits: no idle connection holds the worker
                    http.close(sock)
                idle.clear()
                try:
                    sock, _ = listener.accept()
                except (BlockingIOError, ConnectionAbortedError):
                    continue
                except OSError as e:  # out of file descriptors, or memory: keep serving
                    refused = _accept_failed(worker, e, refused)
                    continue
                refused = 0
                sock.setblocking(True)
                _keep(idle, worker.serve_connection(sock))
                continue
            sock = next((s for s in ready if s in idle), None)
            if sock is not None:  # a kept-alive client's next request, or its close
                del idle[sock]
                _keep(idle, _serve_kept(worker, sock))
            now = time.monotonic()
            for sock in [s for s, until in idle.items() if until <= now]:
                del idle[sock]
                http.close(sock)
    finally:
        signal.set_wakeup_fd(-1)
        wake_r.close()
        wake_w.close()
        for sock in idle:
            http.close(sock)


def _keep(idle: dict, sock: socket.socket | None) -> None:
    if sock is not None:
        idle[sock] = time.monotonic() + http.KEEP_ALIVE_IDLE_S


def _serve_kept(worker: Endpoints, sock: socket.socket) -> socket.socket | None:
    """A kept-alive connection that became readable: its next request is served; a client
    that closed it (nothing to read) is closed quietly, without the cut-off log line."""
    try:
        sock.setblocking(False)
        waiting = sock.recv(1, socket.MSG_PEEK)
    except OSError:
        waiting = b""
    if not waiting:
        http.close(sock)
        return None
    sock.setblocking(True)
    return worker.serve_connection(sock)


def _accept_failed(worker: Endpoints, error: OSError, refused: int) -> int:
    """An accept() that fails (EMFILE, ENFILE, ENOMEM, ...) leaves the connection waiting in
    the kernel's queue; the worker logs the first failure of a run of them, pauses so the
    loop does not spin while no descriptor is free, and tries again."""
    if refused == 0:
        worker.log(f"cannot accept a connection ({error.strerror or error}); waiting for a "
                   "file descriptor to free")
    time.sleep(ACCEPT_RETRY_S)
    return refused + 1


def _password(env) -> str:
    """BARK_PASS, else the first line of the file BARK_PASS_FILE names (a Docker secret at
    /run/secrets/NAME, DESIGN §11), a UTF-8 byte-order mark dropped (an editor's, never a
    password's); OSError when that file cannot be read."""
    if env.get("BARK_PASS") or not env.get("BARK_PASS_FILE"):
        return env.get("BARK_PASS", "")
    if not stat.S_ISREG(os.stat(env["BARK_PASS_FILE"]).st_mode):  # a FIFO would block open()
        raise OSError(errno.EINVAL, "not a regular file")
    with open(env["BARK_PASS_FILE"], "rb") as f:
        return password_of_file(f.read(PASS_FILE_MAX))


def serve(args, env) -> int:
    user = env.get("BARK_USER", "")
    try:
        password = _password(env)
    except UnicodeDecodeError:  # its bytes are the password's: never quoted
        _say("bark-worker: refusing to start: the file BARK_PASS_FILE names does not hold "
             "UTF-8 text")
        return 2
    except OSError as e:  # the variable may hold a password given by mistake: never quoted
        _say(f"bark-worker: refusing to start: the file BARK_PASS_FILE names cannot be read "
             f"({e.strerror or e}); it holds the path of a file whose first line is the "
             "password")
        return 2
    missing = [name for name, v in (("BARK_USER", user), ("BARK_PASS", password)) if not v]
    if missing:
        _say(f"bark-worker: refusing to start: {' and '.join(missing)} "
             f"{'is' if len(missing) == 1 else 'are'} not set (the worker needs a user and a "
             "password in BARK_USER and BARK_PASS, or the password in the file BARK_PASS_FILE "
             "names)")
        return 2
    if not fits(user, password):
        _say(f"bark-worker: refusing to start: a login with this user and password would be "
             f"over the {LOGIN_BODY_MAX}-byte login body a worker reads, so nobody could log "
             "in; choose a shorter password or user name")
        return 2
    alias = env.get("BARK_ALIAS") or "bark"
    if len(alias.encode("utf-8", "replace")) > ALIAS_MAX:
        _say(f"bark-worker: refusing to start: BARK_ALIAS is "
             f"{len(alias.encode('utf-8', 'replace'))} bytes; an alias has at most "
             f"{ALIAS_MAX} (it travels in every discovery reply)")
        return 2
    if not is_alias(alias):
        _say(f"bark-worker: refusing to start: BARK_ALIAS {alias!r} is not an alias (letters, "
             "digits and _, joined by single hyphens, not starting with a digit: bob-i3), "
             "so no script could name it")
        return 2
    config = default_config(alias, args.abi, args.max_payload, args.job_memory_bytes)
    try:
        listener = socket.create_server((args.host, args.port), family=socket.AF_INET,
                                        backlog=16)
    except OSError as e:
        _say(f"bark-worker: cannot listen on {args.host}:{args.port}: {e.strerror or e}")
        return 1
    udp = _discovery_socket(args.host, args.discovery_port)
    import bark_vm.executor  # noqa: F401  (numpy and the op table loaded before the first job)

    worker = Endpoints(config, Authenticator(user, password, args.lockout_seconds),
                    io_timeout=args.io_timeout, log=_say, head_timeout=args.head_timeout,
                    hold_s=args.hold_s)
    del password
    signal.signal(signal.SIGTERM, _raise_stop)
    signal.signal(signal.SIGINT, _raise_stop)
    host, port = listener.getsockname()[:2]
    responder = udp and Responder(udp, worker.status_json, args.advertise_port or port, _say)
    found = f", discovery on UDP {udp.getsockname()[1]}" if udp else ""
    _say(f"bark-worker: serving {alias} on {host}:{port} (ABI {args.abi}{found})")
    try:
        _accept_loop(listener, worker)
    except _Stop:
        pass
    finally:
        listener.close()
        if responder:
            responder.close()
    _say(f"bark-worker: {alias} stopped")
    return 0


def _discovery_socket(host: str, port: int) -> socket.socket | None:
    """The UDP socket answering discovery, or None (off, or the port cannot be bound: a
    notice, and jobs are served all the same). Several workers on one host share the port
    (SO_REUSEADDR): each answers a broadcast probe; a unicast probe reaches one of them."""
    if not port:
        return None
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        udp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        udp.bind((host, port))
    except OSError as e:
        udp.close()
        _say(f"bark-worker: notice: discovery is off: cannot bind UDP {host}:{port}: "
             f"{e.strerror or e}; jobs are served all the same (give --discovery-port N for "
             "another port, or 0 to turn discovery off)")
        return None
    return udp


def main(argv: list[str] | None = None) -> None:
    one_blas_thread(os.environ)  # before numpy: one BLAS thread unless set (bark_vm.blas)
    parser = _parser()
    args = parser.parse_args(argv)
    job_memory.check_payload(parser, args)
    if (not 0 <= args.lockout_seconds <= MAX_SECONDS
            or not 0 < args.io_timeout <= MAX_SECONDS
            or not 0 < args.head_timeout <= MAX_SECONDS):
        parser.error(f"--lockout-seconds must be 0..{MAX_SECONDS}, --io-timeout and "
                     f"--head-timeout above 0 and at most {MAX_SECONDS}")
    args.job_memory_bytes = job_memory.budget_bytes(parser, args)
    if not 0 <= args.port <= 65535 or not 0 <= args.discovery_port <= 65535:
        parser.error("--port and --discovery-port must be 0..65535")
    if args.advertise_port is not None and not 1 <= args.advertise_port <= 65535:
        parser.error("--advertise-port must be 1..65535")
    sys.exit(serve(args, os.environ))


if __name__ == "__main__":
    main()
