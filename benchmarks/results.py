"""A run's results folder (benchmarks/results/ of the working directory by default, paths.py;
ignored by git in the checkout): summary.json (the context, every figure, the gate's verdicts
and its outcome), results.md (a table per family, the gate's outcome and verdicts) and the
plots; pytest-benchmark writes its own JSON beside them."""
import json
from pathlib import Path

from . import goals, paths, plots
from .suite import yardstick_of


def _cell(value) -> str:
    if value is None:
        return "none"
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def _yardstick(figures) -> str:
    value = yardstick_of(figures)
    if value is None:
        return "yardstick not measured (the sweep family did not run)"
    return f"yardstick {value:.3g}x (2.0 = two free cores)"


def _blas(meta) -> str:
    """The in-process executor's BLAS threads, as the environment set them."""
    threads = ", ".join(f"{n}={v or 'unset'}" for n, v in meta.get("blas_threads", {}).items())
    late = "" if meta.get("blas_pinned_before_numpy", True) else \
        " (numpy was imported before maned_bench pinned them: its BLAS may use more)"
    return f"BLAS threads {threads or 'unknown'}{late}"


def markdown(figures, meta, verdicts, outcome=None) -> str:
    lines = [f"# Benchmark results ({meta['scale']}, {meta['date']})", "",
             f"{meta['cores']} cores given to this run ({meta['cpu_count']} on the machine), "
             f"Python {meta['python']}, {meta['machine']}; {_yardstick(figures)}; "
             f"{_blas(meta)}.", ""]
    families = []
    for f in figures:
        fam = f.name.split("/")[0]
        if fam not in families:
            families.append(fam)
    for fam in families:
        lines += [f"## {fam}", "", "| figure | value | unit | what |", "|---|---|---|---|"]
        lines += [f"| `{f.name}` | {'flagged' if f.flag else _cell(f.value)} | {f.unit} | "
                  f"{f.about}{'; ' + f.flag if f.flag else ''} |"
                  for f in figures if f.name.split("/")[0] == fam]
        lines.append("")
    lines += ["## Goals (issues 12 and 27)", "", "| goal | figure | value | bound | |",
              "|---|---|---|---|---|"]
    lines += [f"| {g.text} | `{g.figure}` | {_cell(v)} | {g.bound} | {status} |"
              for g, v, status in goals.report(figures)]
    lines.append("")
    if outcome is not None:
        lines += ["## Gate", "", outcome.line().removeprefix("maned-bench: ") + ".", ""]
    if verdicts:
        if outcome is None:
            lines += ["## Gate", ""]
        lines += ["| figure | verdict | |", "|---|---|---|"]
        lines += [f"| `{v.name}` | {v.status} | {v.text} |" for v in verdicts]
        lines.append("")
    return "\n".join(lines)


def write(folder: Path, figures, meta, verdicts, outcome=None) -> list[Path]:
    """The results of a run; `outcome` (gate.Outcome) says what the gate concluded, "not
    run" included: the figures are written whatever became of the gate."""
    folder.mkdir(parents=True, exist_ok=True)
    doc = {"context": meta, "figures": [f.to_json() for f in figures],
           "gate": [v.__dict__ for v in verdicts],
           "gate_outcome": outcome.to_json() if outcome is not None else None,
           "goals": [{"figure": g.figure, "goal": g.text, "bound": g.bound, "value": v,
                      "status": status} for g, v, status in goals.report(figures)]}
    summary = folder / paths.SUMMARY
    summary.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    table = folder / paths.TABLE
    table.write_text(markdown(figures, meta, verdicts, outcome), encoding="utf-8")
    return [summary, table] + plots.write_all(folder, figures, meta, yardstick_of(figures))
