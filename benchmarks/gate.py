"""The regression gate: a run's figures against the committed baseline (baseline.json),
per scale, each gated figure with its own margin (a factor). A figure that is better when
lower fails above baseline × margin; one better when higher fails below baseline / margin.
Only ratios are gated, never times; a parallel figure (a speed-up) is gated only when the
run's yardstick shows two cores, and otherwise reported as skipped with the reason. The
verdict (`judge`) passes only when at least one figure was checked and none failed: a gate
whose figures were all skipped "checked nothing", which is not a pass. The baseline itself
is read and checked by baseline_file.py."""
from dataclasses import dataclass

from .baseline_file import check_table
from .yardstick import TWO_CORES


@dataclass(frozen=True)
class Verdict:
    name: str
    status: str  # "pass", "fail" or "skip"
    text: str


@dataclass(frozen=True)
class Outcome:
    """The gate's verdict on a run: "passed", "failed", "checked nothing" (every figure
    skipped) or "not run" (the baseline could not be read, checked or written: `reason`)."""
    status: str
    verdicts: tuple = ()
    reason: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def line(self) -> str:
        if self.status == "not run":
            return f"maned-bench: gate not run: {self.reason}"
        counts = (f"{sum(v.status == 'pass' for v in self.verdicts)} pass, "
                  f"{sum(v.status == 'fail' for v in self.verdicts)} fail, "
                  f"{sum(v.status == 'skip' for v in self.verdicts)} skipped")
        if self.status == "checked nothing":
            return (f"maned-bench: gate checked nothing: {counts} (no gated figure was "
                    "measured and judged in this run; not a pass)")
        return f"maned-bench: gate {'FAILED' if self.status == 'failed' else 'passed'}: {counts}"

    def to_json(self) -> dict:
        return {"status": self.status, "reason": self.reason}


def judge(verdicts) -> Outcome:
    """Failed if any figure failed; passed only if at least one passed; else checked nothing."""
    verdicts = tuple(verdicts)
    if any(v.status == "fail" for v in verdicts):
        return Outcome("failed", verdicts)
    if any(v.status == "pass" for v in verdicts):
        return Outcome("passed", verdicts)
    return Outcome("checked nothing", verdicts)


def not_run(reason: str) -> Outcome:
    return Outcome("not run", (), reason)


def check(figures, baseline: dict, yardstick: float | None) -> list[Verdict]:
    """One verdict per gated figure of `baseline` (one scale's table, checked here first:
    a rule it could not judge is a BaselineError, never a guess)."""
    check_table(baseline)
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
        if f.better is not None and f.better != better:
            out.append(Verdict(name, "fail", f"{name}: the baseline says {better} is better, "
                               f"the figure says {f.better}: fix the baseline's direction"))
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
