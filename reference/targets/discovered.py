"""A network worker named by discovery (`device::bob { discover = true; }`, spec/wire.md
§3.8): a CDP device bound, at its first use, to the worker whose reply carries its alias.
An alias nobody claims fails only the jobs sent to it, each with the same line."""
from .cdp import CdpDevice
from .discovery import Discovery, DiscoverySocketError, ProbeError
from .target import DeviceFailure


class DiscoveredDevice(CdpDevice):
    def __init__(self, alias: str, discovery: Discovery, user, password, token,
                 deadline_s: float):
        super().__init__(alias, "", 0, user, password, token, deadline_s)
        self.discovery = discovery
        self._unbound: DeviceFailure | None = None

    @property
    def where(self) -> str:
        if not self.host:
            return f"device '{self.alias}' (discover)"
        return super().where

    def start(self):
        if not self.host:
            self._bind()
        return super().start()

    def _bind(self) -> None:
        if self._unbound is None:
            try:
                claims = [f for f in self.discovery.found() if f.alias == self.alias]
            except (DiscoverySocketError, ProbeError) as e:
                self._unbound = DeviceFailure(f"{self.where}: {e}", kind="connect_failed")
            else:
                if claims:
                    self.host, self.port = claims[0].host, claims[0].port
                    return
                others, probing = sorted({f.alias for f in self.discovery.found()}), \
                    self.discovery.probing
                why = (f"{probing.describe()}; the workers that answered: {', '.join(others)}"
                       if others else probing.advice())
                self._unbound = DeviceFailure(f"{self.where}: no worker answered discovery "
                                              f"as '{self.alias}' ({why})", kind="connect_failed")
        raise self._unbound
