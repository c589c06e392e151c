"""The regression gate: a run's figures against the committed baseline (baseline.json),
per scale, each gated figure with its own margin (a factor). A figure that is better when
lower fails above baseline × margin; one better when higher fails below baseline / margin.
Only ratios are gated, never times; a parallel figure (a speed-up) is gated only when the
run's yardstick shows two cores, and otherwise reported as skipped with the reason."""
import json
from dataclasses import dataclass
from pathlib import Path

from .paths import INSTALLED
from .yardstick import TWO_CORES

BASELINE = INSTALLED  # the committed baseline, as installed (paths.py: which one a run uses)


@dataclass(frozen=True)
class Verdict:
    name: str
    status: str  # "pass", "fail" or "skip"
    text: str


def load(path: Path = BASELINE) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def save(path: Path, tables: dict) -> None:
    Path(path).write_text(json.dumps(tables, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def check(figures, baseline: dict, yardstick: float | None) -> list[Verdict]:
    """One verdict per gated figure of `baseline` (one scale's table)."""
    by_name = {f.name: f for f in figures}
    out = []
    for name, rule in sorted(baseline.items()):
        base, margin, better = rule["value"], rule["margin"], rule["better"]
        f = by_name.get(name)
        if f is None or f.value is None:
            out.append(Verdict(name, "skip", f"{name}: not measured in this run"))
            continue
        if base is None:
            out.append(Verdict(name, "skip", f"{name}: {f.value:.2f}x, no baseline value yet "
                               "(maned-bench --rebaseline)"))
            continue
        if f.unit != "x":
            out.append(Verdict(name, "fail", f"{name}: gated figures are ratios, not {f.unit}"))
            continue
        if rule.get("parallel") and (yardstick is None or yardstick < TWO_CORES):
            out.append(Verdict(name, "skip", f"{name}: {f.value:.2f}x not gated: the yardstick "
                               f"was {yardstick or 0:.2f}, below {TWO_CORES} (one core here)"))
            continue
        limit = base * margin if better == "lower" else base / margin
        bad = f.value > limit if better == "lower" else f.value < limit
        side = "at most" if better == "lower" else "at least"
        out.append(Verdict(name, "fail" if bad else "pass",
                           f"{name}: {f.value:.2f}x, {side} {limit:.2f}x allowed "
                           f"(baseline {base:.2f}x, margin {margin:g})"))
    return out


def rebaselined(figures, table: dict) -> dict:
    """`table` (one scale's) with every value replaced by this run's; margins, directions
    and the choice of figures stay as committed."""
    by_name = {f.name: f for f in figures}
    return {n: {**rule, "value": round(by_name[n].value, 4) if n in by_name and
                by_name[n].value is not None else rule["value"]} for n, rule in table.items()}
