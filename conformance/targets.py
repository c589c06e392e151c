"""The three targets a case runs on (DESIGN §8): the reference interpreter, a Bark VM child
and a network (hardware) worker. A routed target lends one device to every run, so a whole
certification is one child or one worker; a child that broke is replaced for the next case,
a worker that stopped answering fails each later case at once (its probe is kept). Each
target can be aborted from another thread when a case overruns its deadline."""
import os
import sys
from urllib.parse import urlsplit

from maned.targets.cdp import CdpDevice
from maned.targets.vm import VmDevice

ROUTE = "vm"  # the alias --require-vm routes every routable flow to
JOB_DEADLINE_S = 20.0  # per job: a stalled target costs one case this long, not the run
CASE_DEADLINE_S = 120.0  # per case, every job and round of it together


class LocalUnderTest:
    """The reference itself: every case runs on the local interpreter only."""

    name = "local"

    def device(self):
        return None

    def status(self):
        return None

    def abort(self) -> None:
        pass  # the reference runs in this process and always ends

    def close(self) -> None:
        pass


class VmUnderTest:
    """A Bark VM child (`bark-vm`, or any stdio worker given as a command line)."""

    name = "vm"

    def __init__(self, command: list[str] | None = None, deadline_s: float = JOB_DEADLINE_S,
                 abi: int | None = None):
        self.command = (command or [sys.executable, "-m", "bark_vm.vm"]) + (
            ["--abi", str(abi)] if abi else [])
        self.deadline_s = deadline_s
        self._device: VmDevice | None = None

    def device(self) -> VmDevice:
        if self._device is not None and self._device.broken:
            self._device.close()
            self._device = None
        if self._device is None:
            self._device = VmDevice("vm", self.command + ["--alias", "vm"], self.deadline_s)
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


class WorkerUnderTest:
    """A CDP worker at `url` (http://HOST:PORT), credentials from BARK_USER / BARK_PASS;
    `token`, a login already made (a certification logs in once); `alias`, the name its
    messages give the worker."""

    name = "hardware"

    def __init__(self, url: str, user: str | None = None, password: str | None = None,
                 deadline_s: float = JOB_DEADLINE_S, token: str | None = None,
                 alias: str = "worker"):
        parts = urlsplit(url if "//" in url else "http://" + url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"{url!r} is not http://HOST[:PORT]")
        self.url, self.host, self.port = url, parts.hostname, parts.port or 4780
        user = user if user is not None else os.environ.get("BARK_USER")
        password = password if password is not None else os.environ.get("BARK_PASS")
        self.deadline_s = deadline_s
        self._fresh = lambda: CdpDevice(alias, self.host, self.port, user or None,
                                        password or None, token, deadline_s)
        self._device = self._fresh()

    def device(self) -> CdpDevice:
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
