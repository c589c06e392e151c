"""The `device::` blocks of a script as worker specs (spec/language.md §2.6, wire.md §5.2):
`host = "local"` is a Bark VM child, anything else a network worker over CDP. Credentials
written `env("NAME")` are read when the plan runs, never at parse time (D13, R22)."""
import os
from dataclasses import dataclass, field
from typing import Literal

from bark_vm.wire.constants import DEFAULT_PORT
from bark_vm.wire.digits import whole_number

from .address import BadAddress, parse_address
from .bounds import ANSWER_DEADLINE_S, MAX_DEADLINE_S

from ..diagnostics import Diagnostic, MnError
from ..diagnostics.printer import register_secret
from ..lang import ast

VM_ALIAS = "vm"  # the extra VM that --require-vm sends unrouted flows to (R16)
FORCED_ALIAS = "device"  # the --device target, as messages and traces name it
DEVICE_PASS_ENV = "MANED_DEVICE_PASS"  # --device-user's password when --device-pass is absent
DeviceKind = Literal["vm", "remote"]  # a Bark VM child (host = "local"), or a CDP worker


@dataclass(frozen=True)
class DeviceSpec:
    """A device block's alias, kind and fields (which may hold a resolved password or
    token, so its repr leaves them out)."""

    alias: str
    kind: DeviceKind
    fields: dict = field(repr=False)


@dataclass(frozen=True)
class Remote:
    host: str  # "" for a worker found by discovery (bound at its first use)
    port: int
    user: str | None
    password: str | None = field(repr=False)
    token: str | None = field(repr=False)
    discover: bool = False


def device_specs(program: ast.Program) -> dict[str, DeviceSpec]:
    """Every declared device by alias (the last block of an alias wins, like in::)."""
    specs = {}
    for block in program.of(ast.DeviceDecl):
        fields = {f.key: f.value for f in block.fields}
        kind: DeviceKind = "vm" if fields.get("host") == "local" else "remote"
        specs[block.alias] = DeviceSpec(block.alias, kind, fields)
    return specs


def _plan_error(alias: str, why: str) -> MnError:
    return MnError(Diagnostic("EPLAN", f"device '{alias}': {why}"))


def _value(spec: DeviceSpec, key: str, environ) -> object:
    """A field's value with env("NAME") resolved; an unset or empty variable is refused
    naming it (R22). Every credential is registered with the printer to be masked."""
    v = spec.fields.get(key)
    if isinstance(v, ast.EnvRef):
        got = environ.get(v.var, "")
        if not got:
            raise _plan_error(spec.alias, f"{key} = env(\"{v.var}\") but the environment "
                              f"variable {v.var} is unset or empty")
        v = got
    if key in ("pass", "token") and isinstance(v, str):
        register_secret(v)
    return v


def remote_of(spec: DeviceSpec, environ=None) -> Remote:
    """Host, port and credentials of a network worker, checked before any connection."""
    environ = os.environ if environ is None else environ
    if discovers(spec) or pools(spec):  # host and port come from replies (E032 refuses them)
        return Remote("", 0, *_credentials(spec, environ), discover=True)
    host, port = _value(spec, "host", environ), _value(spec, "port", environ)
    if not isinstance(host, str) or not host:
        raise _plan_error(spec.alias, "has no host field (or discover = true)")
    if "@" in host:  # never echoed: what precedes the @ may be a password
        raise _plan_error(spec.alias, "a host with credentials in it (user:pass@) is refused; "
                          "give them as user and pass (--device-user, --device-pass)")
    if host.startswith("https://"):
        raise _plan_error(spec.alias, "https:// is not supported: CDP is plaintext HTTP on a "
                          "trusted network")
    try:
        host, in_host = parse_address(host.removeprefix("http://").rstrip("/"))
    except BadAddress as e:
        why = {"port": f"bad port {shown_port(e.port)} in host",
               "host": "the host is empty (give host = \"HOST[:PORT]\")"}
        raise _plan_error(spec.alias, why.get(e.part, f"bad host: {e.why}")) from None
    port = port if port is not None else in_host
    why = host_problem(host)
    if why:
        raise _plan_error(spec.alias, why)
    port = DEFAULT_PORT if port is None else port
    if isinstance(port, str):
        port = whole_number(port, 1, 65535) or port
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise _plan_error(spec.alias, f"bad port {shown_port(port)} (1..65535)")
    return Remote(host, port, *_credentials(spec, environ))


def shown_port(port) -> str:
    """A bad port as a refusal may show it: digits are quoted, anything else is not (in
    `--device user:SECRET`, the host forgotten, the 'port' is a password)."""
    text = str(port)
    if text.isascii() and text.lstrip("-").isdigit():
        return f"'{text[:32]}'"
    return "(not a number)"


def host_problem(host: str) -> str | None:
    """Why `host` can be no host name (a DNS label is 1 to 63 characters, a name at most
    253), or None; the name is not shown, it may be anything."""
    try:
        host.encode("idna")
    except UnicodeError:
        return ("the host is not a valid name: each dot-separated label is 1 to 63 "
                "characters, the whole name at most 253")
    return None


def discovers(spec: DeviceSpec) -> bool:
    """A block that finds its worker by discovery (`discover = true`)."""
    return spec.kind == "remote" and spec.fields.get("discover") is True


def pools(spec: DeviceSpec) -> bool:
    """A pool block (`pool = true`, docs/language.md): every worker discovery finds."""
    return spec.kind == "remote" and spec.fields.get("pool") is True


SHARED_BY_MEMBERS = ("user", "pass", "token", "timeout")


def pool_members(spec: DeviceSpec, found) -> list[DeviceSpec]:
    """One device per worker that answered discovery, in the order found (sorted by reported
    alias, then address), named by the alias it reports, with the pool's credentials and
    timeout. Two workers answering as one alias are refused: a member is named by it."""
    members, seen = [], {}
    for f in found:
        if f.alias in seen:
            raise _plan_error(spec.alias, f"pool: two workers answer as '{f.alias}' "
                              f"({seen[f.alias]} and {f.address}); give them distinct aliases")
        seen[f.alias] = f.address
        shared = {k: v for k, v in spec.fields.items() if k in SHARED_BY_MEMBERS}
        members.append(DeviceSpec(f.alias, "remote", {**shared, "host": f.address}))
    return members


def _credentials(spec: DeviceSpec, environ) -> tuple:
    user, password, token = (_value(spec, k, environ) for k in ("user", "pass", "token"))
    if token and (user or password):
        raise _plan_error(spec.alias, "give either user and pass or a token, not both")
    if bool(user) != bool(password):
        raise _plan_error(spec.alias, "user and pass go together")
    return user or None, password or None, token or None


def deadline_of(spec: DeviceSpec, environ=None) -> float:
    """The device's answer deadline in seconds: its `timeout` field (a whole number of
    seconds, 1 to MAX_DEADLINE_S), else ANSWER_DEADLINE_S."""
    v = _value(spec, "timeout", os.environ if environ is None else environ)
    if v is None:
        return ANSWER_DEADLINE_S
    if isinstance(v, str):
        v = whole_number(v, 1, MAX_DEADLINE_S) or v[:32]
    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_DEADLINE_S:
        raise _plan_error(spec.alias, f"bad timeout {v!r} (a whole number of seconds, 1 to "
                          f"{MAX_DEADLINE_S})")
    return float(v)


@dataclass(frozen=True)
class DeviceOverride:
    """`--device URL|local` and its credentials (spec/language.md §9): one target for every
    flow and Tier A round. `password` and `token` may be `env:NAME`."""
    url: str
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    token: str | None = field(default=None, repr=False)

    def spec(self, environ=None) -> DeviceSpec:
        """The target as a device block named `device`; env:NAME read now (R22)."""
        environ = os.environ if environ is None else environ
        if self.url == "local":
            return DeviceSpec(FORCED_ALIAS, "vm", {})
        password, token = (self._secret(flag, v, environ) for flag, v in
                           (("--device-pass", self.password), ("--device-token", self.token)))
        if self.user and not password:
            password = environ.get(DEVICE_PASS_ENV) or None
            if not password:
                raise _plan_error(FORCED_ALIAS, f"--device-user needs a password: give "
                                  f"--device-pass or set {DEVICE_PASS_ENV}")
            register_secret(password)
        fields = {"host": self.url, "user": self.user, "pass": password, "token": token}
        return DeviceSpec(FORCED_ALIAS, "remote", {k: v for k, v in fields.items() if v})

    @staticmethod
    def _secret(flag: str, value: str | None, environ) -> str | None:
        if value and value.startswith("env:"):
            name = value[len("env:"):]
            value = environ.get(name, "")
            if not value:
                raise _plan_error(FORCED_ALIAS, f"{flag} env:{name} but the environment "
                                  f"variable {name} is unset or empty")
        if value:
            register_secret(value)
        return value or None
