"""The one place a device is made (DESIGN §7): `maned.run`'s fleet, the conformance targets
and the benchmarks all describe where a device is (a Bark VM child's command line, or a
network worker's address and credentials) and get it from `open_device`. A new transport
is one more description and one more case here."""
from dataclasses import dataclass

from ..targets.bounds import ANSWER_DEADLINE_S
from ..targets.cdp import CdpDevice
from ..targets.discovered import DiscoveredDevice
from ..targets.discovery import Discovery
from ..targets.target import Device
from ..targets.vm import VmDevice
from .device_specs import Remote


@dataclass(frozen=True)
class VmChild:
    """A Bark VM child: the command line that starts it (its --alias included)."""
    command: tuple[str, ...]


def open_device(alias: str, where: VmChild | Remote, deadline_s: float = ANSWER_DEADLINE_S,
                discovery: Discovery | None = None) -> Device:
    """The device at `where`, not yet started; a Remote with `discover` is bound to the
    worker `discovery` finds answering as `alias`."""
    if isinstance(where, VmChild):
        return VmDevice(alias, list(where.command), deadline_s)
    if where.discover:
        if discovery is None:
            raise ValueError(f"device '{alias}' is found by discovery, and none was given")
        return DiscoveredDevice(alias, discovery, where.user, where.password, where.token,
                                deadline_s)
    return CdpDevice(alias, where.host, where.port, where.user, where.password, where.token,
                     deadline_s)
