"""maned-bench: the benchmark run (pytest-benchmark underneath), its results and its gate.

    maned-bench [--smoke] [--out DIR] [--only FAMILY[,FAMILY...]] [--baseline FILE]
                [--rebaseline]

Writes DIR (default benchmarks/results/ of the working directory): pytest-benchmark.json,
summary.json, results.md and the plots of the families that ran. Reads the baseline FILE
(paths.py: the working directory's benchmarks/baseline.json, else the installed one), which
--rebaseline rewrites unless it is the installed one. The baseline is read and checked
before anything is measured (baseline_file.py): a bad one is a usage error. Exit 0 when every family
ran and the gate passed (at least one figure checked, none failed); 1 when a family failed,
the gate failed, checked nothing (every figure skipped) or could not run after measuring
(the figures are written all the same); 2 on a usage error (the test extras missing among
them), before anything is measured; 3 when every family ran, nothing failed, and the gate
was inconclusive (the machine was busy while a gated figure was measured: run again)."""
import argparse
import sys
from pathlib import Path

from maned.io.files import overwrites

from . import baseline_file, paths
from .suite import FAMILIES, slowed_sides

EXTRAS = ("pytest", "pytest_benchmark", "matplotlib")  # the `test` extra's, which a run needs
EXIT_INCONCLUSIVE = 3


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="maned-bench", description="Measure the round-trip "
                                "economics: ratios, plots, and the regression gate.")
    p.add_argument("--smoke", action="store_true", help="the fast smoke scale (seconds)")
    p.add_argument("--out", default=str(paths.OUT), metavar="DIR",
                   help=f"the results folder (default {paths.OUT} in the working directory)")
    p.add_argument("--only", default="", metavar="FAMILIES",
                   help=f"comma-separated, among {', '.join(FAMILIES)}")
    p.add_argument("--baseline", default=None, metavar="FILE",
                   help=f"the gate's baseline (default {paths.LOCAL_BASELINE} in the working "
                   "directory if there is one, else the one installed with the package)")
    p.add_argument("--rebaseline", action="store_true",
                   help="write this run's values into the baseline (margins kept); never into "
                   "the installed one unless --baseline names it")
    return p


def missing_extras() -> str | None:
    """The first module of the `test` extra that cannot be imported, or None."""
    for name in EXTRAS:
        try:
            __import__(name)
        except ImportError:
            return name
    return None


def _refuse(text: str) -> int:
    sys.stderr.write(f"maned-bench: {text} [EUSAGE]\n")
    return 2


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    only = [f for f in args.only.split(",") if f]
    unknown = sorted(set(only) - set(FAMILIES))
    if unknown:
        return _refuse(f"unknown family {', '.join(unknown)}; choose among "
                       f"{', '.join(FAMILIES)}")
    try:
        slowed_sides("")  # MANED_BENCH_SLOW read once, before anything is measured
    except ValueError as e:
        return _refuse(str(e))
    missing = missing_extras()
    if missing:
        return _refuse(f"a run needs the test extras ({missing} is not installed): "
                       "pip install '.[test]'")
    baseline = Path(args.baseline) if args.baseline else paths.default_baseline()
    why = args.rebaseline and paths.rebaseline_refusal(baseline, args.baseline is not None)
    if why:
        return _refuse(why)
    out = Path(args.out)
    from .plots import PLOTS  # the extras are here
    why = overwrites(paths.written(out, PLOTS), [(str(baseline), "the --baseline")])
    if why:
        return _refuse(f"{why}: give --out another folder, or the baseline another name")
    try:
        baseline_file.load(baseline, "smoke" if args.smoke else "full")
    except baseline_file.BaselineError as e:
        return _refuse(str(e))
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return _refuse(f"cannot write the results folder {out}: {e.strerror or e}")
    return _run(args, only, out, baseline)


def _run(args, only: list[str], out: Path, baseline: Path) -> int:
    """The families under pytest-benchmark, with the plugin that writes and gates them."""
    import pytest

    from . import plugin

    select = ["-k", " or ".join(f"[{f}]" for f in only)] if only else []
    # the plugin given as the module imported here, and plain asserts: this process has
    # imported the packages pytest would rewrite (it warns, once per package, that it cannot)
    code = pytest.main(["-p", "no:cacheprovider", "-q", "--assert=plain",
                        "--pyargs", "maned_bench.test_benchmarks", *select,
                        "--bench-scale", "smoke" if args.smoke else "full",
                        "--bench-out", str(out), "--bench-baseline", str(baseline),
                        *(["--bench-rebaseline"] if args.rebaseline else []),
                        "--benchmark-json", str(out / paths.PYTEST_JSON)],
                       plugins=[plugin])
    if code != 0 and plugin.LAST:
        done, families_failed = plugin.LAST[-1]
        if done.outcome.status == "inconclusive" and not (done.stderr or families_failed):
            return EXIT_INCONCLUSIVE
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
