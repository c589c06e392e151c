"""The devices of one plan, each created once at first use (one probe per device per plan):
a Bark VM child for `host = "local"`, a CDP client for a network worker."""
from .cdp import CdpDevice
from .devices import DeviceSpec, deadline_of, remote_of
from .vm import VmDevice, vm_command

STATUS_FIELDS = ("alias", "proto", "kind", "ir", "rf_slots", "jobs_running", "jobs_capacity",
                 "max_payload", "uptime_s", "requests", "ops")


class Fleet:
    def __init__(self, specs: dict[str, DeviceSpec]):
        self.specs = specs
        self._devices: dict = {}

    def device(self, alias: str):
        if alias not in self._devices:
            spec = self.specs[alias]
            deadline = deadline_of(spec)
            if spec.kind == "vm":
                self._devices[alias] = VmDevice(alias, vm_command(alias, spec.fields), deadline)
            else:
                r = remote_of(spec)
                self._devices[alias] = CdpDevice(alias, r.host, r.port, r.user, r.password,
                                                 r.token, deadline)
        return self._devices[alias]

    def status_block(self, alias: str) -> list[str]:
        """`device 'A' status:` and one `  key: value` line per field (R23, R44)."""
        status = self.device(alias).start()
        lines = [f"device '{alias}' status:"]
        for key in STATUS_FIELDS:
            value = getattr(status, key)
            lines.append(f"  {key}: {','.join(value) if key == 'ops' else value}")
        return lines

    def abort(self) -> None:
        """Stop every device at once (Ctrl-C): children killed, queued worker jobs cancelled."""
        for device in self._devices.values():
            device.abort()

    def close(self) -> None:
        for device in self._devices.values():
            device.close()
