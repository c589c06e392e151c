"""The `device::` blocks of a script as worker specs (spec/language.md §2.6, wire.md §5.2).
`host = "local"` is a Bark VM child; network workers arrive with the CDP client."""
from dataclasses import dataclass

from ..diagnostics import Diagnostic, MnError
from ..lang import ast

VM_ALIAS = "vm"  # the extra VM that --require-vm sends unrouted flows to (R16)


@dataclass(frozen=True)
class DeviceSpec:
    alias: str
    kind: str  # "vm" (host = "local") or "remote"
    fields: dict


def device_specs(program: ast.Program) -> dict[str, DeviceSpec]:
    """Every declared device by alias (the last block of an alias wins, like in::)."""
    specs = {}
    for block in program.of(ast.DeviceDecl):
        fields = {f.key: f.value for f in block.fields}
        kind = "vm" if fields.get("host") == "local" else "remote"
        specs[block.alias] = DeviceSpec(block.alias, kind, fields)
    return specs


def refuse_remote(spec: DeviceSpec, who: str) -> None:
    """Network workers are not in this build yet: say so instead of running elsewhere."""
    if spec.kind == "remote":
        raise MnError(Diagnostic(
            "EPLAN", f"{who}: device '{spec.alias}' is a network worker; routing to network "
                     "workers is not available in this build yet (use host = \"local\" for a "
                     "Bark VM)"))
