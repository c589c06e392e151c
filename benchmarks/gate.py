"""The regression gate: a run's figures against the committed baseline (baseline.json),
per scale, each gated figure with its own margin (a factor). A figure that is better when
lower fails above baseline × margin; one better when higher fails below baseline / margin.
Only ratios are gated, never times.

Load is told from regression by the load measured while each figure's family ran
(contention.py): a figure is judged only when other work took at most BUSY_LIMIT of a core
meanwhile, and is otherwise "inconclusive" (a busy machine says nothing either way); a
parallel figure needs two CPUs and is skipped on one. The verdict (`judge`): failed when a
figure failed; inconclusive when one could not be judged for load; passed only when at
least one figure passed; else "checked nothing". Neither of the last two is a pass. The
baseline itself is read and checked by baseline_file.py."""
from dataclasses import dataclass

from .baseline_file import check_table

BUSY_LIMIT = 0.25  # the cores other work may take while a family runs, for it to be judged


@dataclass(frozen=True)
class Verdict:
    name: str
    status: str  # "pass", "fail", "inconclusive" (a busy machine) or "skip"
    text: str


@dataclass(frozen=True)
class Outcome:
    """The gate's verdict on a run: "passed", "failed", "inconclusive" (a figure could not
    be judged: the machine was busy), "checked nothing" (every figure skipped) or "not run"
    (the baseline could not be read, checked or written: `reason`)."""
    status: str
    verdicts: tuple = ()
    reason: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def line(self) -> str:
        if self.status == "not run":
            return f"maned-bench: gate not run: {self.reason}"
        counts = ", ".join(f"{sum(v.status == s for v in self.verdicts)} {word}" for s, word in (
            ("pass", "pass"), ("fail", "fail"), ("inconclusive", "inconclusive"),
            ("skip", "skipped")))
        if self.status == "inconclusive":
            return (f"maned-bench: gate inconclusive: {counts} (the machine was busy while "
                    "some figures were measured; not a pass: run again on a quiet machine)")
        if self.status == "checked nothing":
            return (f"maned-bench: gate checked nothing: {counts} (no gated figure was "
                    "measured and judged in this run; not a pass)")
        return f"maned-bench: gate {'FAILED' if self.status == 'failed' else 'passed'}: {counts}"

    def to_json(self) -> dict:
        return {"status": self.status, "reason": self.reason}


def judge(verdicts) -> Outcome:
    """Failed if any figure failed; inconclusive if any was measured on a busy machine;
    passed only if at least one passed; else checked nothing."""
    verdicts = tuple(verdicts)
    if any(v.status == "fail" for v in verdicts):
        return Outcome("failed", verdicts)
    if any(v.status == "inconclusive" for v in verdicts):
        return Outcome("inconclusive", verdicts)
    if any(v.status == "pass" for v in verdicts):
        return Outcome("passed", verdicts)
    return Outcome("checked nothing", verdicts)


def not_run(reason: str) -> Outcome:
    return Outcome("not run", (), reason)


def check(figures, baseline: dict) -> list[Verdict]:
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
        busy = _unjudged(f, 2 if rule.get("parallel") else 1)
        if busy:
            out.append(Verdict(name, *busy))
            continue
        limit = base * margin if better == "lower" else base / margin
        bad = f.value > limit if better == "lower" else f.value < limit
        side = "at most" if better == "lower" else "at least"
        out.append(Verdict(name, "fail" if bad else "pass",
                           f"{name}: {f.value:.2f}x, {side} {limit:.2f}x allowed "
                           f"(baseline {base:.2f}x, margin {margin:g})"))
    return out


def _unjudged(f, cores: int) -> tuple[str, str] | None:
    """(status, text) when the machine could not judge `f`, which needs `cores` CPUs."""
    load, seen = f.load, f"{f.name}: {f.value:.2f}x"
    if load is None:
        return "inconclusive", f"{seen} not judged: the machine's load was not measured"
    if load.cores < cores:
        return "skip", (f"{seen} not gated: it needs {cores} CPUs, this run had "
                        f"{load.cores}")
    if load.others > BUSY_LIMIT:
        return "inconclusive", (f"{seen} not judged: other work took {load.others:.2f} of "
                                f"{load.cores} CPUs while it was measured (at most "
                                f"{BUSY_LIMIT} allowed)")
    return None
