"""Devices (DESIGN §7): where a routed job's bytes go, a Bark VM child over stdio frames or a
network worker over CDP. This module is the layer's face, and the only devices import of
`conformance/` and `benchmarks/`: the `Device` and `Child` protocols, the descriptions of
where a device is (`VmChild`, `Remote`, a script's `DeviceSpec`), `parse_address` for a
worker's `HOST[:PORT]`, and `open_device`, the one way to make a device. Its other names
load on first use, so a local run never imports the transports."""
import importlib
from dataclasses import dataclass
from typing import IO, Protocol

from bark_vm.wire.status import Status

from .address import BadAddress, parse_address
from .bounds import ANSWER_DEADLINE_S, CONNECT_TIMEOUT_S, MAX_DEADLINE_S, MAX_HEAD_BYTES
from .specs import DeviceSpec, Remote


class Device(Protocol):
    """What a routed target drives (a Bark VM child, a CDP worker): `status` once started,
    `run(request bytes) -> result bytes` or DeviceFailure."""
    alias: str
    status: Status | None
    sync_limit: int | None  # the request size from which it answers asynchronously, if any

    @property
    def pid(self) -> int | None: ...  # the process that runs its jobs, where there is one

    @property
    def where(self) -> str: ...  # how messages name it: "device 'bob' (HOST:PORT)"

    @property
    def broken(self) -> bool: ...  # failed for good: a fresh device is needed

    def spawn(self) -> None: ...  # start its process now without waiting for it (D7)

    def start(self) -> Status: ...  # started (spawned, probed): the status it advertises

    def run(self, request: bytes) -> bytes: ...

    def abort(self) -> None: ...  # stop at once, from another thread (Ctrl-C, a deadline)

    def release(self, deadline_s: float) -> None: ...  # after abort: free what it holds

    def close(self) -> None: ...


class Child(Protocol):
    """A Bark VM child process as a VmDevice drives it: the `subprocess.Popen` members that
    both a started process (`Spawned`) and a child of the warm parent (`ForkedChild`) have."""
    stdin: IO[bytes]
    stdout: IO[bytes]
    returncode: int | None

    @property
    def pid(self) -> int | None: ...  # waits until the child has one

    @property
    def known_pid(self) -> int | None: ...  # without waiting (for messages)

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int | None: ...

    def kill(self) -> None: ...

    def abandon(self) -> None: ...  # the last resort of a close whose kill went unanswered

    def release(self) -> None: ...  # the device is closed: what the child shared may stop


@dataclass(frozen=True)
class VmChild:
    """A Bark VM child: the command line that starts it (its --alias included)."""
    command: tuple[str, ...]


def open_device(alias: str, spec: DeviceSpec | VmChild | Remote, discovery=None, *,
                deadline_s: float = ANSWER_DEADLINE_S) -> Device:
    """The device `spec` describes, not yet started: a script's device block (with its own
    `timeout`), a Bark VM child's command line, or a network worker's address; a worker
    found by discovery is bound to the one `discovery` finds answering as `alias`."""
    if isinstance(spec, DeviceSpec):
        from .specs import deadline_of, remote_of
        from .vm import vm_command
        deadline_s = deadline_of(spec)
        spec = (VmChild(tuple(vm_command(alias, spec.fields))) if spec.kind == "vm"
                else remote_of(spec))
    if isinstance(spec, VmChild):
        from .vm import VmDevice
        return VmDevice(alias, list(spec.command), deadline_s)
    if spec.discover:
        if discovery is None:
            raise ValueError(f"device '{alias}' is found by discovery, and none was given")
        from .discovered import DiscoveredDevice
        return DiscoveredDevice(alias, discovery, spec.user, spec.password, spec.token,
                                deadline_s)
    from .cdp import CdpDevice
    return CdpDevice(alias, spec.host, spec.port, spec.user, spec.password, spec.token,
                     deadline_s)


# name -> the module of this layer that is its one home (loaded on first use)
_HOMES = {
    "DEFAULT_VM": "warm_parent",
    "Discovery": "discovery", "Probing": "discovery",
    "Exchange": "http_exchange",
}


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module 'maned.devices' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    globals()[name] = value
    return value
