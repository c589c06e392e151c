"""--verify (D12, R15, DESIGN §14): the outputs of the routed targets and of the local exact
engine against a whole re-run on the reference interpreter, slot for slot. The verdict is
data (`Verdict`); `verdict_lines` is the one place that words it."""
from dataclasses import dataclass

from ..tensor import Tensor, shape_text
from .scheduler import RunResult

PASS = "verify: PASS (compared local interpreter vs routed targets)"
PASS_ENGINE = "verify: PASS (compared local interpreter vs the local exact engine)"
SKIPPED = "verify: SKIPPED (no flow was routed, and every local flow ran on the local " \
    "interpreter)"


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
    """--verify: PASS, MISMATCH or SKIPPED, the definitions compared (those of them that were
    routed; the others ran on the local exact engine), the mismatches."""

    status: str
    compared: tuple[str, ...]
    mismatches: tuple[Mismatch, ...] = ()
    routed: tuple[str, ...] = ()


def compare(checked: list[str], routed_defs: list[str], routed: RunResult,
            local: RunResult | None) -> Verdict:
    """PASS, SKIPPED (nothing to check), or MISMATCH with one record per differing output.
    `routed` is the run checked, `local` the reference's re-run."""
    if not checked:
        return Verdict("SKIPPED", ())
    found = []
    for name in checked:
        if name not in local.outputs:
            found.append(Mismatch(name, None, "missing"))
            continue
        for out, value in routed.outputs[name].items():
            m = _difference(name, out, local.outputs[name][out], value)
            if m:
                found.append(m)
    return Verdict("MISMATCH" if found else "PASS", tuple(checked), tuple(found),
                   tuple(n for n in checked if n in routed_defs))


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
        return [PASS if v.routed else PASS_ENGINE]
    lines = []
    for m in v.mismatches:
        head = f"verify: MISMATCH in flow '{m.flow}'"
        other = "routed" if m.flow in v.routed else "engine"
        if m.kind == "missing":
            lines.append(f"{head}: the local run did not produce it")
        elif m.kind == "shape":
            lines.append(f"{head}: output '{m.output}' differs in shape: local "
                         f"{shape_text(m.local_shape)} vs {other} {shape_text(m.routed_shape)}")
        else:
            lines.append(f"{head}: output '{m.output}' differs at slot {m.slot}: local "
                         f"{m.local} vs {other} {m.routed}")
    return lines
