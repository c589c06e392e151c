"""A network worker named by discovery (`device::bob { discover = true; }`, spec/wire.md
§3.8): a CDP device bound, at its first use, to the worker whose reply carries its alias.
An alias nobody claims fails only the jobs sent to it, each with the same line; so does an
alias that two or more workers (distinct addresses) claim: which of them is 'bob' cannot be
told, so nothing, not even the status probe, is sent to any of them (issue 24, point 6),
as a pool refuses two members of one alias."""
from .cdp import CdpDevice
from .discovery import Discovery, Found
from ..failures import DeviceFailure, Refused, unreachable

COUNTS = {2: "two", 3: "three"}


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
                found = self.discovery.found()
            except DeviceFailure as e:
                self._unbound = e.at(self.where)
            except Refused as e:
                self._unbound = unreachable(self.where, e.message)
            else:
                claims = claimants(found, self.alias)
                if len(claims) == 1:
                    self.host, self.port = claims[0].host, claims[0].port
                    return
                self._unbound = unreachable(self.where, self._why(found, claims))
        raise self._unbound

    def _why(self, found, claims: list[Found]) -> str:
        if claims:
            n = len(claims)
            addresses = [f.address for f in claims]
            return (f"{COUNTS.get(n, n)} workers answer discovery as '{self.alias}' "
                    f"({', '.join(addresses[:-1])} and {addresses[-1]}); give them distinct "
                    f"aliases (nothing was sent to {'either' if n == 2 else 'any'} of them)")
        others, probing = sorted({f.alias for f in found}), self.discovery.probing
        # a broadcast that could not be sent is the run's note (maned.pipeline.run_api), not this
        why = (f"{probing.describe()}; the workers that answered: "
               f"{', '.join(others)}" if others else probing.advice())
        return f"no worker answered discovery as '{self.alias}' ({why})"


def claimants(found: list[Found], alias: str) -> list[Found]:
    """The workers that answered as `alias`, one per connect address (host:port), in the
    found order: two replies naming one address are one worker answering twice."""
    by_address: dict[str, Found] = {}
    for f in found:
        if f.alias == alias:
            by_address.setdefault(f.address, f)
    return list(by_address.values())
