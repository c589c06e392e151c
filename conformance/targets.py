"""The targets a case runs on (DESIGN §8, §14): the local exact engine (each of its runs
verified against the reference), the reference interpreter alone, a Bark VM child and a
network (hardware) worker. A routed target lends one device to every run, so a whole
certification is one child or one worker; a child that broke is replaced for the next case,
a worker that stopped answering fails each later case at once (its probe is kept). Each
target can be aborted from another thread when a case overruns its deadline."""
import os
from urllib.parse import urlsplit

from bark_vm.wire.constants import DEFAULT_PORT
from maned.devices import (DEFAULT_VM, BadAddress, Device, Remote, VmChild, open_device,
                           parse_address)

ROUTE = "vm"  # the alias --require-vm routes every routable flow to
JOB_DEADLINE_S = 20.0  # per job: a stalled target costs one case this long, not the run
CASE_DEADLINE_S = 120.0  # per case, every job and round of it together


LOCAL_TARGETS = ("local", "reference")  # a case file's `local`: run in this process


class LocalUnderTest:
    """The local exact engine: every case runs in this process, `--verify`ing the engine's
    outputs against the reference's."""

    name = "local"
    reference = False

    def device(self):
        return None

    def status(self):
        return None

    def abort(self) -> None:
        pass  # the reference runs in this process and always ends

    def close(self) -> None:
        pass


class ReferenceUnderTest(LocalUnderTest):
    """The reference itself (`--reference`): its refusals, and the documented goldens."""

    name = "reference"
    reference = True


class VmUnderTest:
    """A Bark VM child (`bark-vm`, or any stdio worker given as a command line)."""

    name = "vm"

    def __init__(self, command: list[str] | None = None, deadline_s: float = JOB_DEADLINE_S,
                 abi: int | None = None):
        self.command = (command or list(DEFAULT_VM)) + (
            ["--abi", str(abi)] if abi else [])
        self.deadline_s = deadline_s
        self._device: Device | None = None

    def device(self) -> Device:
        if self._device is not None and self._device.broken:
            self._device.close()
            self._device = None
        if self._device is None:
            self._device = open_device(ROUTE, VmChild((*self.command, "--alias", ROUTE)),
                                       deadline_s=self.deadline_s)
        return self._device

    def status(self):
        return self.device().start()

    def abort(self) -> None:
        """The child is killed; the next `device()` starts a fresh one."""
        if self._device is not None:
            self._device.abort()

    def close(self) -> None:
        if self._device is not None:
            self._device.close()


NOT_HTTP = "the worker URL is not http://HOST[:PORT]"


def url_problem(url: str) -> str | None:
    """Why `url` cannot name a worker (http://HOST[:PORT], the scheme optional), or None.
    Never quotes the URL or a part of it: user:pass@ is a password by its form, and a bad
    port or a stray path may be one typed in the wrong place (`http://user:SECRET`)."""
    if "@" in url:
        return ("a worker URL with credentials in it (user:pass@) is refused, and not shown; "
                "give http://HOST:PORT, and the user and password in BARK_USER and BARK_PASS")
    try:
        parts = urlsplit(url if "//" in url else "http://" + url)
    except ValueError:  # an unclosed [ of an IPv6 address
        return f"{NOT_HTTP}: it does not parse (not shown, in case it holds a password)"
    if parts.scheme != "http":
        return f"{NOT_HTTP}: a worker speaks plain http:// (CDP), no other scheme"
    try:
        parse_address(parts.netloc)
    except BadAddress as e:
        if e.part == "host":
            return f"{NOT_HTTP}: it names no host"
        if e.part == "port":
            return (f"{NOT_HTTP}: its port is not a whole number from 1 to 65535 (not shown, "
                    "in case it is a password)")
        return f"{NOT_HTTP}: {e.why}"
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        return (f"{NOT_HTTP}: a path, query or fragment after HOST:PORT is not used by a "
                "worker, and not shown (in case it holds a password)")
    return None


class WorkerUnderTest:
    """A CDP worker at `url` (http://HOST:PORT), credentials from BARK_USER / BARK_PASS;
    `token`, a login already made (a certification logs in once); `alias`, the name its
    messages give the worker."""

    name = "hardware"

    def __init__(self, url: str, user: str | None = None, password: str | None = None,
                 deadline_s: float = JOB_DEADLINE_S, token: str | None = None,
                 alias: str = "worker"):
        why = url_problem(url)
        if why:
            raise ValueError(why)
        host, port = parse_address(urlsplit(url if "//" in url else "http://" + url).netloc)
        self.url, self.host, self.port = url, host, port or DEFAULT_PORT
        user = user if user is not None else os.environ.get("BARK_USER")
        password = password if password is not None else os.environ.get("BARK_PASS")
        self.deadline_s = deadline_s
        where = Remote(self.host, self.port, user or None, password or None, token)
        self._fresh = lambda: open_device(alias, where, deadline_s=deadline_s)
        self._device = self._fresh()

    def device(self) -> Device:
        return self._device

    def status(self):
        return self._device.start()

    def abort(self) -> None:
        """The wait in progress ends (a queued async job is cancelled, a running one read
        back once it ends, within a job deadline, so the worker's slot is free for the
        next case); later cases get a fresh device, since an aborted one refuses every
        request."""
        aborted, self._device = self._device, self._fresh()
        aborted.abort()
        aborted.release(self.deadline_s)

    def close(self) -> None:
        self._device.close()
