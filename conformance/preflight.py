"""What must hold before a certification asks its first case: a worker answering its status
at the URL, and credentials it accepts. Either failing is the operator's error, not the
worker's: the run stops there (exit 2) after one login attempt, so a certification never
locks the user it certifies with. A status whose alias is no legal alias (the one rule,
bark_vm/wire/alias.py) is no Bark worker's: refused the same way, the alias shown escaped;
nothing a worker sent is quoted unescaped or at any length."""
import socket
from dataclasses import dataclass

from bark_vm.wire.alias import ALIAS_MAX, worker_alias
from bark_vm.wire.constants import LOCKED, STATUS_PATH
from bark_vm.wire.frames import parse_error_json
from bark_vm.wire.status import Status, parse_status
from bark_vm.wire.strict_json import object_field
from maned.failures import DeviceFailure

from .protocol import Probe
from .report import display

LOGIN_CODES = ("AUTH_FAILED", "AUTH_REQUIRED")
SHOWN_CHARS = 80  # of a string a worker sent, quoted in a refusal


class OperatorError(Exception):
    """Why the certification cannot start, said to the operator."""


@dataclass(frozen=True)
class Session:
    status: Status
    token: str


def preflight(url: str, host: str, port: int, user: str, password: str,
              deadline_s: float) -> Session:
    """The worker's status, then exactly one login; OperatorError saying what to check."""
    probe = Probe(host, port, user, password, deadline_s)
    try:
        code, _, body = probe.call("GET", STATUS_PATH, proto=False)
    except (DeviceFailure, OSError, socket.timeout) as e:
        raise OperatorError(f"no worker answers at {url}: {e}; check the URL and that the "
                            "worker is running") from None
    status = accepted_status(url, code, body)
    try:
        code, _, body = probe.login(user, password)
    except (DeviceFailure, OSError, socket.timeout) as e:
        raise OperatorError(f"the worker at {url} did not answer the login: {e}") from None
    token = object_field(body, "token") if code == 200 else None
    if isinstance(token, str) and token:
        return Session(status, token)
    err = parse_error_json(body) or (f"HTTP {code}", "")
    if err[0] in LOGIN_CODES:
        locked = (" The user name is locked after repeated failed logins (by an earlier "
                  "attempt, not this one); wait for the worker's lock-out to lift."
                  if err[1] == LOCKED else "")
        raise OperatorError(f"the worker at {url} refused the login of user {user!r} "
                            f"({err[0]}): check BARK_USER and BARK_PASS.{locked}")
    raise OperatorError(f"the worker at {url} answered the login with {shown(err[0])}, not a "
                        "token")


def accepted_status(url: str, code: int, body: bytes) -> Status:
    """The status a certification goes on with: a Bark worker's status (parse_status)
    whose alias is a legal one (bark_vm/wire/alias.py: worker_alias);
    else OperatorError, quoting the alias escaped and cut short."""
    try:
        if code != 200:
            raise ValueError(f"HTTP {code}")
        status = parse_status(body)
    except ValueError as e:
        raise OperatorError(f"{url} does not answer GET /api/status as a Bark worker "
                            f"({shown(str(e))}); check the URL") from None
    if not worker_alias(status.alias):
        raise OperatorError(f"{url} answers GET /api/status with the alias "
                            f"'{shown(status.alias)}', which is no legal alias (an identifier, "
                            f"or identifiers joined by single hyphens, ASCII, at most "
                            f"{ALIAS_MAX} bytes): not a Bark worker's status, so nothing is "
                            "certified; check the URL and the worker")
    return status


def shown(text: str) -> str:
    """A string a worker sent, for a message: escaped (report.display), and cut short."""
    return display(text[:SHOWN_CHARS]) + ("..." if len(text) > SHOWN_CHARS else "")
