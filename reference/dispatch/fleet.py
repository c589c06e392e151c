"""The targets of one run, each created once at first use (one probe per device per run):
the local interpreter, a Bark VM child for `host = "local"`, a CDP client for a network
worker; the routed ones share the run's compile cache."""
import threading

from ..lang.ast import Quant
from ..lowering.compiled import Compiler
from ..targets.cdp import CdpDevice
from ..targets.local import LocalTarget
from ..targets.routed import RoutedTarget
from ..targets.limits import SIGNAL_CHECK_S
from ..targets.target import LOCAL
from ..targets.vm import VmDevice, vm_command
from .devices import DeviceSpec, deadline_of, remote_of


class Fleet:
    def __init__(self, specs: dict[str, DeviceSpec], quant: Quant, *, trap: bool = False,
                 compiler: Compiler | None = None):
        self.specs, self.quant = specs, quant
        self.compiler = compiler or Compiler()
        self._targets: dict = {LOCAL: LocalTarget(quant.quantres, trap)}

    def target(self, name: str):
        """The target a job routed to `name` runs on (LOCAL: the interpreter)."""
        if name not in self._targets:
            spec = self.specs[name]
            deadline = deadline_of(spec)
            if spec.kind == "vm":
                device = VmDevice(name, vm_command(name, spec.fields), deadline)
            else:
                r = remote_of(spec)
                device = CdpDevice(name, r.host, r.port, r.user, r.password, r.token, deadline)
            self._targets[name] = RoutedTarget(device, spec.kind, self.quant, self.compiler)
        return self._targets[name]

    def open(self, names) -> None:
        """Open these targets in parallel (spawn the VM children, probe the workers); a
        failure is kept by its device and met again by the first job that needs it."""
        threads = [threading.Thread(target=_try_open, args=(self.target(n),), daemon=True)
                   for n in names]
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():  # in slices, so that Ctrl-C is seen (see the scheduler)
                t.join(SIGNAL_CHECK_S)

    def status(self, name: str):
        """The target's status, or None when it could not be opened."""
        try:
            return self.target(name).open()
        except Exception:  # a DeviceFailure, or worse: the first job meets it and says so
            return None

    def abort(self) -> None:
        """Stop every target at once (Ctrl-C): children killed, queued worker jobs cancelled."""
        for target in self._targets.values():
            target.abort()

    def close(self) -> None:
        for target in self._targets.values():
            target.close()


def _try_open(target) -> None:
    try:
        target.open()
    except Exception:  # kept by the device; the first job that needs it reports it
        pass
