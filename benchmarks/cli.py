"""maned-bench: the benchmark run (pytest-benchmark underneath), its results and its gate.

    maned-bench [--smoke] [--out DIR] [--only FAMILY[,FAMILY...]] [--baseline FILE]
                [--rebaseline]

Writes DIR (default benchmarks/results/): pytest-benchmark.json, summary.json, results.md
and the PNG plots. Exit 0 when every family ran and the gate passed, 1 otherwise."""
import argparse
import sys
from pathlib import Path

import pytest

from . import gate, results
from .suite import FAMILIES


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="maned-bench", description="Measure the round-trip "
                                "economics: ratios, plots, and the regression gate.")
    p.add_argument("--smoke", action="store_true", help="the fast smoke scale (seconds)")
    p.add_argument("--out", default=str(results.DEFAULT), help="the results folder")
    p.add_argument("--only", default="", metavar="FAMILIES",
                   help=f"comma-separated, among {', '.join(FAMILIES)}")
    p.add_argument("--baseline", default=str(gate.BASELINE), help="the gate's baseline")
    p.add_argument("--rebaseline", action="store_true",
                   help="write this run's values into the baseline (margins kept)")
    args = p.parse_args(argv)
    only = [f for f in args.only.split(",") if f]
    unknown = sorted(set(only) - set(FAMILIES))
    if unknown:
        sys.stderr.write(f"maned-bench: unknown family {', '.join(unknown)}; choose among "
                         f"{', '.join(FAMILIES)} [EUSAGE]\n")
        return 2
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        sys.stderr.write(f"maned-bench: cannot write the results folder {out}: "
                         f"{e.strerror or e} [EUSAGE]\n")
        return 2
    select = ["-k", " or ".join(f"[{f}]" for f in only)] if only else []
    code = pytest.main(["-p", "maned_bench.plugin", "-p", "no:cacheprovider", "-q",
                        "--pyargs", "maned_bench.test_benchmarks", *select,
                        "--bench-scale", "smoke" if args.smoke else "full",
                        "--bench-out", str(out), "--bench-baseline", args.baseline,
                        *(["--bench-rebaseline"] if args.rebaseline else []),
                        "--benchmark-json", str(out / "pytest-benchmark.json")])
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
