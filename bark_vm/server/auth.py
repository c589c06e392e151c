"""Credentials, tokens and lock-out of bark-worker (spec/wire.md §3.3, §7; DESIGN D13, R19, R21).

The user name and password are compared in constant time (`hmac.compare_digest`, both
always). A success issues `secrets.token_hex(16)` (32 lowercase hex) into a table of 16
tokens kept in least-recently-used order; an evicted or unknown token is AUTH_REQUIRED.
Three consecutive failures for one user name lock that name for the lock-out period; a
locked name is AUTH_FAILED with detail `locked`, whatever the password; a success resets
the count. Failures under other names never reset or unlock the worker's user (the failure
table's bound drops only other names' records that are not locked). Nothing here ever puts a password or a token into an error or a repr.
"""
import hmac
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass

from ..wire.constants import (DEFAULT_LOCKOUT_S, LOCKED, LOCKOUT_FAILURES, TOKEN_TABLE_SIZE,
                              WorkerError)

MAX_TRACKED_NAMES = 4096  # failure records kept for other names than the worker's user


@dataclass
class _Failures:
    count: int = 0
    locked_until: float | None = None
    is_user: bool = False  # the worker's own user's record (compared once, in constant time)


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


class Authenticator:
    def __init__(self, user: str, password: str, lockout_s: float = DEFAULT_LOCKOUT_S,
                 clock=time.monotonic, table_size: int = TOKEN_TABLE_SIZE):
        self._user, self._password = _bytes(user), _bytes(password)
        self._lockout_s, self._clock, self._table_size = lockout_s, clock, table_size
        self._tokens: OrderedDict[str, str] = OrderedDict()  # token -> user name
        self._failures: OrderedDict[str, _Failures] = OrderedDict()

    def __repr__(self) -> str:
        return f"Authenticator(tokens={len(self._tokens)}, lockout_s={self._lockout_s})"

    def login(self, username: str, password: str) -> str:
        """A fresh token, or WorkerError AUTH_FAILED (detail `locked` for a locked name)."""
        now = self._clock()
        record = self._failures.get(username)
        if record is not None and record.locked_until is not None:
            if now < record.locked_until:
                raise WorkerError("AUTH_FAILED", LOCKED)
            record.count, record.locked_until = 0, None  # the lock has run out
        user_ok = hmac.compare_digest(_bytes(username), self._user)
        pass_ok = hmac.compare_digest(_bytes(password), self._password)
        if user_ok and pass_ok:
            self._failures.pop(username, None)
            token = secrets.token_hex(16)
            self._tokens[token] = username
            while len(self._tokens) > self._table_size:
                self._tokens.popitem(last=False)
            return token
        self._fail(username, now)
        raise WorkerError("AUTH_FAILED", "bad username or password")

    def _fail(self, username: str, now: float) -> None:
        """Count a failure. The table is bounded, but no name's failures can push out the
        worker's own user's record, nor a locked one (see `_drop_one`)."""
        record = self._failures.pop(username, None) or _Failures(
            is_user=hmac.compare_digest(_bytes(username), self._user))
        self._failures[username] = record  # most recent last
        record.count += 1
        if record.count >= LOCKOUT_FAILURES:
            record.locked_until = now + self._lockout_s
        if len(self._failures) > MAX_TRACKED_NAMES + 1:  # + 1: the user's own record
            self._drop_one(now)

    def _drop_one(self, now: float) -> None:
        """Past the bound, the oldest record of another name that is not locked goes: the
        first one met, so a flood of single failures costs one step each. A new name's own
        record (one failure, never locked) is met last at worst, so only the worker's user
        can find every other record locked; then the oldest locked name goes (another name
        cannot log in anyway: only the worker's user can)."""
        goes = None
        for name, r in self._failures.items():
            if r.is_user:
                continue
            if r.locked_until is None or r.locked_until <= now:
                goes = name
                break
            if goes is None:
                goes = name
        del self._failures[goes]

    def is_locked(self, username: str) -> bool:
        record = self._failures.get(username)
        return (record is not None and record.locked_until is not None
                and self._clock() < record.locked_until)

    def check(self, token: str | None) -> str:
        """The user name behind a valid token (now the most recently used), or AUTH_REQUIRED."""
        if not token:
            raise WorkerError("AUTH_REQUIRED", "this endpoint needs X-Maned-Token; log in at "
                              "POST /api/auth")
        found = None
        candidate = _bytes(token)
        for known in self._tokens:  # every entry compared, in constant time each
            if hmac.compare_digest(candidate, known.encode("ascii")):
                found = known
        if found is None:
            raise WorkerError("AUTH_REQUIRED", "the token is unknown or was evicted; log in "
                              "again")
        self._tokens.move_to_end(found)
        return self._tokens[found]
