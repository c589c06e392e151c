"""--verify (D12, R15): the routed outputs against a whole local re-run, slot for slot."""
from ..tensor import Tensor, shape_text
from .scheduler import RunResult

PASS = "verify: PASS (compared local interpreter vs routed targets)"
SKIPPED = "verify: SKIPPED (no flow was routed)"


def compare(routed_defs: list[str], routed: RunResult, local: RunResult) -> list[str]:
    """The verdict lines: PASS, SKIPPED, or one MISMATCH line per differing output."""
    if not routed_defs:
        return [SKIPPED]
    lines = []
    for name in routed_defs:
        if name not in local.outputs:
            lines.append(f"verify: MISMATCH in flow '{name}': the local run did not produce it")
            continue
        for out, value in routed.outputs[name].items():
            why = _difference(local.outputs[name][out], value)
            if why:
                lines.append(f"verify: MISMATCH in flow '{name}': output '{out}' {why}")
    return lines or [PASS]


def _difference(local: Tensor, routed: Tensor) -> str | None:
    if local.shape != routed.shape:
        return (f"differs in shape: local {shape_text(local.shape)} vs routed "
                f"{shape_text(routed.shape)}")
    for i, (a, b) in enumerate(zip(local.data, routed.data)):
        if a != b:
            return f"differs at slot {i}: local {a} vs routed {b}"
    return None
