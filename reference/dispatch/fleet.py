"""The targets of one run, each created once at first use (one probe per device per run):
the local target, a Bark VM child for `host = "local"`, a CDP client for a network worker;
the routed ones share the run's compile cache. The routing stack (devices, discovery, the
compiler) is imported with the first routed target: a local run never loads it."""
import threading
import time

from ..lang.ast import Quant
from ..targets.local import LocalTarget
from ..devices import open_device
from ..devices.bounds import CLOSE_GRACE_S, SIGNAL_CHECK_S
from ..targets.target import LOCAL


class Fleet:
    def __init__(self, specs: dict, quant: Quant, *, trap: bool = False,
                 compiler=None, devices: dict | None = None, discovery=None,
                 reference: bool = False):
        """reference: the local target runs on the reference alone, not on the exact engine
        (DESIGN §14); settable until the first local job. devices: ready-made devices for
        some aliases (a VM child or a CDP client that
        the caller keeps open across runs): used instead of the spec, and never closed.
        discovery: the plan's one discovery, shared by every `discover = true` block."""
        self.specs, self.quant = specs, quant  # specs: alias -> DeviceSpec
        self._discovery, self._compiler = discovery, compiler  # the run's, or made here
        self.trap, self.reference = trap, reference
        self._targets: dict = {}
        self._lent = dict(devices or {})

    @property
    def discovery(self):
        if self._discovery is None:
            from ..devices.discovery import Discovery, Probing
            self._discovery = Discovery(Probing())
        return self._discovery

    @property
    def compiler(self):
        if self._compiler is None:
            from ..lowering.compiled import Compiler
            self._compiler = Compiler()
        return self._compiler

    def target(self, name: str):
        """The target a job routed to `name` runs on (LOCAL: the local target)."""
        if name in self._targets:
            return self._targets[name]
        if name == LOCAL:
            target = self._targets[LOCAL] = LocalTarget(self.quant.quantres, self.trap,
                                                        self.reference)
            return target
        from ..targets.routed import RoutedTarget
        if name in self._lent:
            device, kind = self._lent[name], "lent"
        else:
            spec = self.specs[name]
            device, kind = open_device(name, spec, self.discovery), spec.kind
        self._targets[name] = RoutedTarget(device, kind, self.quant, self.compiler)
        return self._targets[name]

    def spawn(self, names) -> None:
        """Start these targets' VM children now, without waiting for them (D7): each child
        starts while the run goes on planning, and its first job reads its HELO. A spawn
        that fails is met again, and reported, by the first job that needs the target."""
        for name in names:
            try:
                self.target(name).spawn()
            except Exception:  # the device keeps its failure for the job to report
                pass

    def status(self, name: str):
        """The target's status, or None when it could not be opened."""
        try:
            return self.target(name).open()
        except Exception:  # a DeviceFailure, or worse: the first job meets it and says so
            return None

    def abort(self) -> None:
        """Stop every target at once (Ctrl-C): children killed, queued worker jobs cancelled,
        all targets in parallel and within one grace period."""
        _in_parallel(list(self._targets.values()), _try_abort, CLOSE_GRACE_S)

    def close(self) -> None:
        """Close every target this fleet made, all at once (children exit in parallel)."""
        _in_parallel([t for name, t in self._targets.items() if name not in self._lent],
                     _close)


def _close(target) -> None:
    try:
        target.close()
    except Exception:  # a child that will not close cleanly was killed; the run is over
        pass


def _try_abort(target) -> None:
    try:
        target.abort()
    except Exception:  # stopping is best effort; the run is ending either way
        pass


def _in_parallel(targets: list, call, limit_s: float | None = None) -> None:
    """`call(target)` for each on its own thread; waits for all (at most `limit_s`), in
    slices so that Ctrl-C is seen (see the scheduler)."""
    threads = [threading.Thread(target=call, args=(t,), daemon=True) for t in targets]
    for t in threads:
        t.start()
    end = None if limit_s is None else time.monotonic() + limit_s
    for t in threads:
        while t.is_alive() and (end is None or time.monotonic() < end):
            t.join(SIGNAL_CHECK_S)
