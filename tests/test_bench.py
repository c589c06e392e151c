"""The benchmark instrument's smoke (issue: benchmarks): every family at the smoke scale
measures what it says on real transports, writes its results and plots, and the regression
gate fails a planted regression, passes the baseline, and gates this run's ratios (never a
time; a speed-up only when the yardstick saw two cores)."""
import json
import math
import subprocess
import sys

import pytest

from maned_bench import gate, goals, plots, results
from maned_bench.figures import Figure
from maned_bench.suite import FAMILIES, context, yardstick_of
from maned_bench.workers import http_device, tiny_request, vm_device
from maned_bench.yardstick import TWO_CORES

pytestmark = pytest.mark.bench


@pytest.fixture(scope="module")
def smoke():
    """One smoke run of every family (a few seconds), shared by the checks below."""
    return [f for measure in FAMILIES.values() for f in measure("smoke")]


def test_the_transports_answer_the_tiny_flow_exactly():
    mnpk, mnrs = tiny_request()
    with vm_device() as vm, http_device() as http:
        assert vm.run(mnpk) == mnrs
        assert http.run(mnpk) == mnrs
        assert http.run_async(mnpk) == mnrs


def test_every_family_gives_named_finite_figures(smoke):
    names = [f.name for f in smoke]
    assert len(names) == len(set(names))
    for family in FAMILIES:
        assert any(n.startswith(family + "/") for n in names), family
    for f in smoke:
        assert f.value is None or (math.isfinite(f.value) and f.value >= 0), f
        assert f.better in (None, "lower", "higher") and f.unit
    by_name = {f.name: f for f in smoke}
    assert by_name["rounds/count"].value > 100  # the tiny budget forces many rounds
    assert 0 < yardstick_of(smoke) < 3  # a ratio of two timings of the same work


def test_the_results_folder_holds_json_markdown_and_readable_plots(smoke, tmp_path):
    meta = context("smoke")
    verdicts = gate.check(smoke, gate.load()["smoke"], yardstick_of(smoke))
    written = results.write(tmp_path, smoke, meta, verdicts)
    names = {p.name for p in written}
    assert {"summary.json", "results.md", "chain_ratio.png", "sweep_speedup.png",
            "round_stages.png", "metg_efficiency.png"} <= names
    doc = json.loads((tmp_path / "summary.json").read_text())
    assert doc["context"]["scale"] == "smoke" and len(doc["figures"]) == len(smoke)
    assert "| `roundtrip/vm_over_pipe_echo` |" in (tmp_path / "results.md").read_text()
    # issue 12's goals: each measured one judged by its own figure of this run
    by_name = {f.name: f.value for f in smoke}
    judged = {g["figure"]: g for g in doc["goals"]}
    assert set(judged) == {g.figure for g in goals.GOALS}
    for name, g in judged.items():
        if name in by_name:
            want = goals.GOALS[[x.figure for x in goals.GOALS].index(name)].met(by_name[name])
            assert (g["value"], g["status"]) == (by_name[name], "met" if want else "missed")
        else:
            assert (g["value"], g["status"]) == (None, "not measured")
    assert any(name.startswith("sweep/s6/") for name in by_name)
    for p in written:
        if p.suffix == ".png":
            assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 10_000
    for fig in (plots.chain_ratio(smoke, meta), plots.sweep_speedup(smoke, meta, 2.0),
                plots.round_stages(smoke, meta), plots.metg_efficiency(smoke, meta)):
        ax = fig.axes[0]
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
        assert ax.get_legend() is not None and ax.has_data()


def _figures_at(table: dict, scale_by: float = 1.0) -> list[Figure]:
    """Figures equal to a baseline table's values, each moved by `scale_by` in its worse
    direction (1.0: the baseline itself)."""
    out = []
    for name, rule in table.items():
        worse = scale_by if rule["better"] == "lower" else 1 / scale_by
        out.append(Figure(name, rule["value"] * worse, "x", "planted", rule["better"],
                          rule["parallel"]))
    return out


@pytest.mark.parametrize("scale", ["smoke", "full"])
def test_the_gate_passes_the_baseline_and_fails_a_planted_regression(scale):
    table = {n: r for n, r in gate.load()[scale].items() if r["value"] is not None}
    assert table, "the committed baseline has values"
    at_baseline = gate.check(_figures_at(table), table, yardstick=2.0)
    assert {v.status for v in at_baseline} == {"pass"}
    for name, rule in table.items():  # each figure, just beyond its own margin
        planted = [f if f.name != name else Figure(
            f.name, f.value * (rule["margin"] * 1.01) ** (1 if rule["better"] == "lower" else -1),
            "x", "planted", f.better, f.parallel) for f in _figures_at(table)]
        verdicts = {v.name: v.status for v in gate.check(planted, table, yardstick=2.0)}
        assert verdicts[name] == "fail" and list(verdicts.values()).count("fail") == 1
        within = [f if f.name != name else Figure(
            f.name, f.value * (rule["margin"] * 0.99) ** (1 if rule["better"] == "lower" else -1),
            "x", "planted", f.better, f.parallel) for f in _figures_at(table)]
        assert {v.status for v in gate.check(within, table, yardstick=2.0)} == {"pass"}


def test_a_speedup_is_not_gated_on_one_core():
    table = {n: r for n, r in gate.load()["smoke"].items() if r["parallel"]}
    assert table
    collapsed = _figures_at(table, scale_by=100.0)  # far beyond every margin
    verdicts = gate.check(collapsed, table, yardstick=1.0)
    assert {v.status for v in verdicts} == {"skip"}
    assert all(f"below {TWO_CORES}" in v.text for v in verdicts)
    assert {v.status for v in gate.check(collapsed, table, yardstick=2.0)} == {"fail"}


def test_this_runs_ratios_pass_the_gate(smoke):
    """The CI gate: this run's smoke ratios against the committed smoke baseline."""
    verdicts = gate.check(smoke, gate.load()["smoke"], yardstick_of(smoke))
    assert [v.text for v in verdicts if v.status == "fail"] == []
    assert any(v.status == "pass" for v in verdicts)


def test_only_ratios_are_gated():
    table = {"roundtrip/vm": {"value": 1.0, "margin": 2, "better": "lower", "parallel": False}}
    seconds = Figure("roundtrip/vm", 0.5, "ms", "a time", "lower")
    assert gate.check([seconds], table, 2.0)[0].status == "fail"


def test_maned_bench_runs_families_and_refuses_unknown_ones(tmp_path):
    cmd = [sys.executable, "-m", "maned_bench.cli", "--smoke", "--out", str(tmp_path)]
    bad = subprocess.run(cmd + ["--only", "nope"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.endswith("[EUSAGE]\n")
    (tmp_path / "file").write_text("")
    unwritable = [sys.executable, "-m", "maned_bench.cli", "--smoke", "--out",
                  str(tmp_path / "file" / "x")]
    bad = subprocess.run(unwritable, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "cannot write the results folder" in bad.stderr
    assert bad.stderr.endswith("[EUSAGE]\n") and "Traceback" not in bad.stderr
    done = subprocess.run(cmd + ["--only", "kernel,roundtrip"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-2000:]
    assert "maned-bench: gate passed" in done.stdout
    bench = json.loads((tmp_path / "pytest-benchmark.json").read_text())
    groups = {b["group"] for b in bench["benchmarks"]}
    assert groups == {"kernel", "roundtrip"}
    assert all(b["extra_info"]["figures"] for b in bench["benchmarks"])
    assert not list(tmp_path.glob("*.png"))  # neither family has a plot: none drawn empty


# --- where a run reads and writes (issue 23, point 9) ---------------------------------------
NO_EXTRAS = ("import sys\nfor m in ('pytest', 'pytest_benchmark', 'matplotlib'):\n"
             "    sys.modules[m] = None\nfrom maned_bench.cli import main\n"
             "sys.exit(main(sys.argv[1:]))\n")


def _bench(args, cwd, extras=True, timeout=300):
    """maned-bench ARGS run in `cwd`; without the test extras importable unless `extras`."""
    head = [sys.executable, "-m", "maned_bench.cli"] if extras else [sys.executable, "-c",
                                                                     NO_EXTRAS]
    return subprocess.run(head + list(args), cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def test_maned_bench_help_needs_no_test_extras_and_shows_its_defaults(tmp_path):
    shown = _bench(["--help"], tmp_path, extras=False, timeout=60)
    assert shown.returncode == 0 and shown.stderr == ""
    text = " ".join(shown.stdout.split())
    assert "default benchmarks/results in the working directory" in text
    assert "default benchmarks/baseline.json in the working directory" in text
    run = _bench(["--smoke"], tmp_path, extras=False, timeout=60)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and run.stderr.endswith("[EUSAGE]\n")
    assert "pip install '.[test]'" in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "benchmarks").exists()


def test_the_default_baseline_is_the_working_directorys_else_the_installed_one(
        tmp_path, monkeypatch):
    from maned_bench import paths
    monkeypatch.chdir(tmp_path)
    assert paths.default_baseline() == paths.INSTALLED
    assert paths.rebaseline_refusal(paths.default_baseline(), given=False)
    assert paths.rebaseline_refusal(tmp_path / "b.json", given=True) is None
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "baseline.json").write_text("{}")
    assert paths.default_baseline() == tmp_path / "benchmarks" / "baseline.json"
    assert paths.rebaseline_refusal(paths.default_baseline(), given=False) is None


def test_rebaseline_never_writes_into_the_installed_package(tmp_path):
    installed = gate.BASELINE.read_bytes()
    refused = _bench(["--smoke", "--only", "kernel", "--rebaseline"], tmp_path, timeout=120)
    assert gate.BASELINE.read_bytes() == installed
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.count("\n") == 1 and refused.stderr.endswith("[EUSAGE]\n")
    assert "--baseline FILE" in refused.stderr
    assert not (tmp_path / "benchmarks").exists()  # refused before anything ran
    plugin = subprocess.run([sys.executable, "-m", "pytest", "-p", "maned_bench.plugin", "-p",
                             "no:cacheprovider", "--pyargs", "maned_bench.test_benchmarks",
                             "--bench-scale", "smoke", "--bench-rebaseline", "-k", "kernel"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert plugin.returncode == 4 and "--baseline FILE" in plugin.stderr  # pytest's usage error
    assert gate.BASELINE.read_bytes() == installed


def test_a_run_writes_its_results_and_baseline_in_the_working_directory(tmp_path):
    """Plain maned-bench from any folder: results in ./benchmarks/results, and --rebaseline
    into the --baseline given, the installed baseline untouched."""
    installed = gate.BASELINE.read_bytes()
    (tmp_path / "b.json").write_bytes(installed)
    done = _bench(["--smoke", "--only", "kernel", "--rebaseline", "--baseline", "b.json"],
                  tmp_path)
    assert done.returncode == 0, done.stdout[-2000:]
    assert gate.BASELINE.read_bytes() == installed
    summary = json.loads((tmp_path / "benchmarks" / "results" / "summary.json").read_text())
    assert {f["name"].split("/")[0] for f in summary["figures"]} == {"kernel"}
    mine, theirs = gate.load(tmp_path / "b.json")["smoke"], gate.load()["smoke"]
    assert set(mine) == set(theirs)
    measured = {f["name"]: f["value"] for f in summary["figures"]}
    for name, rule in mine.items():
        want = round(measured[name], 4) if name in measured else theirs[name]["value"]
        assert rule["value"] == want and rule["margin"] == theirs[name]["margin"]


# --- --only writes the plots of the families that ran (issue 23, point 10) -----------------
def test_a_run_writes_only_the_plots_of_the_families_that_ran(tmp_path):
    meta = context("smoke")
    kept = {name: f"an earlier run's {name}".encode() for name in plots.PLOTS}
    for name, data in kept.items():
        (tmp_path / f"{name}.png").write_bytes(data)
    kernel_only = [Figure("kernel/matmul/16/speedup", 40.0, "x", "planted", "higher")]
    written = results.write(tmp_path, kernel_only, meta, [])
    assert {p.name for p in written} == {"summary.json", "results.md"}
    assert {n: (tmp_path / f"{n}.png").read_bytes() for n in kept} == kept
    chains = [Figure(f"chain/linear_regression/{rows}", r, "x", "planted", "lower")
              for rows, r in ((8, 3.0), (100, 1.5))]
    written = results.write(tmp_path, chains, meta, [])
    assert {p.name for p in written} == {"summary.json", "results.md", "chain_ratio.png"}
    assert (tmp_path / "chain_ratio.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    others = {n: d for n, d in kept.items() if n != "chain_ratio"}
    assert {n: (tmp_path / f"{n}.png").read_bytes() for n in others} == others


# --- an efficiency is never above 1 (issue 23, point 11) -----------------------------------
def test_an_efficiency_above_one_is_flagged_not_reported():
    """compute / round trip > 1 cannot be (the trip includes the compute): the sample is
    not to be trusted, so the figure has no value, says why, and METG ignores it."""
    from maned_bench import metg
    rows = {"vm": [(8, 46.1e-3, 1e-3, 300), (16, 0.2e-3, 1e-3, 600), (32, 0.6e-3, 1e-3, 900)]}
    by_name = {f.name: f for f in metg.figures_of(rows)}
    flagged = by_name["metg/vm/efficiency/8"]
    assert flagged.value is None and "46.1" in flagged.flag and "not trustworthy" in flagged.flag
    assert by_name["metg/vm/efficiency/16"].value == pytest.approx(0.2)
    assert by_name["metg/vm/metg50"].value == pytest.approx(600)  # n=32, not the flagged n=8
    meta = context("smoke")
    table = results.markdown(list(by_name.values()), meta, [])
    assert "| `metg/vm/efficiency/8` | flagged |" in table and "46.1" in table
    points = plots.metg_efficiency(list(by_name.values()), meta).axes[0].lines[0].get_ydata()
    assert max(points) <= 1 and len(points) == 2


def test_a_share_of_the_yardstick_above_one_is_flagged_not_reported():
    """A speed-up as a share of the parallelism the yardstick found (before and after the
    sweeps): above 1 the two samples disagree about the machine, and the figure says so."""
    from maned_bench import sweeps
    by_name = {f.name: f for f in sweeps.of_yardstick([(8, "http", 4, 1.6), (2, "vm", 2, 0.7)],
                                                      1.22)}
    flagged = by_name["sweep/8/http_x4/of_yardstick"]
    assert flagged.value is None and "1.31" in flagged.flag and "not trustworthy" in flagged.flag
    assert by_name["sweep/2/vm_x2/of_yardstick"].value == pytest.approx(0.7 / 1.22)
