"""--verify (D12, R15): the routed outputs against a whole local re-run, slot for slot. The
verdict is data (`Verdict`); `verdict_lines` is the one place that words it."""
from dataclasses import dataclass

from ..tensor import Tensor, shape_text
from .scheduler import RunResult

PASS = "verify: PASS (compared local interpreter vs routed targets)"
SKIPPED = "verify: SKIPPED (no flow was routed)"


@dataclass(frozen=True)
class Mismatch:
    """One routed output that differs from the local re-run. kind: "slot" (first differing
    slot and both values), "shape" (both shapes), or "missing" (the local run did not
    produce the flow; output is None)."""

    flow: str
    output: str | None
    kind: str
    slot: int | None = None
    local: int | None = None
    routed: int | None = None
    local_shape: tuple[int, ...] | None = None
    routed_shape: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Verdict:
    """--verify: PASS, MISMATCH or SKIPPED, the routed definitions compared, the mismatches."""

    status: str
    compared: tuple[str, ...]
    mismatches: tuple[Mismatch, ...] = ()


def compare(routed_defs: list[str], routed: RunResult, local: RunResult | None) -> Verdict:
    """PASS, SKIPPED (nothing routed), or MISMATCH with one record per differing output."""
    if not routed_defs:
        return Verdict("SKIPPED", ())
    found = []
    for name in routed_defs:
        if name not in local.outputs:
            found.append(Mismatch(name, None, "missing"))
            continue
        for out, value in routed.outputs[name].items():
            m = _difference(name, out, local.outputs[name][out], value)
            if m:
                found.append(m)
    return Verdict("MISMATCH" if found else "PASS", tuple(routed_defs), tuple(found))


def _difference(flow: str, out: str, local: Tensor, routed: Tensor) -> Mismatch | None:
    if local.shape != routed.shape:
        return Mismatch(flow, out, "shape", local_shape=local.shape, routed_shape=routed.shape)
    for i, (a, b) in enumerate(zip(local.data, routed.data)):
        if a != b:
            return Mismatch(flow, out, "slot", slot=i, local=a, routed=b)
    return None


def verdict_lines(v: Verdict) -> list[str]:
    if v.status == "SKIPPED":
        return [SKIPPED]
    if v.status == "PASS":
        return [PASS]
    lines = []
    for m in v.mismatches:
        head = f"verify: MISMATCH in flow '{m.flow}'"
        if m.kind == "missing":
            lines.append(f"{head}: the local run did not produce it")
        elif m.kind == "shape":
            lines.append(f"{head}: output '{m.output}' differs in shape: local "
                         f"{shape_text(m.local_shape)} vs routed {shape_text(m.routed_shape)}")
        else:
            lines.append(f"{head}: output '{m.output}' differs at slot {m.slot}: local "
                         f"{m.local} vs routed {m.routed}")
    return lines
