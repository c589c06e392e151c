"""The benchmark instrument's smoke (issue: benchmarks): every family at the smoke scale
measures what it says on real transports, writes its results and plots, and the regression
gate fails a planted regression, passes the baseline, and gates this run's ratios (never a
time; a speed-up only when the yardstick saw two cores)."""
import json
from dataclasses import replace
import math
import os
import subprocess
import sys
import time

import pytest

from maned_bench import baseline_file, cli, gate, goals, plots, results
from maned_bench.figures import Figure
from maned_bench.contention import Load
from maned_bench.suite import FAMILIES, SLOW_HOOK, context, measure, yardstick_of
from maned_bench.workers import http_device, tiny_request, vm_device

QUIET = Load(cores=2, others=0.0)  # a planted figure's machine: two CPUs, nothing else on them

pytestmark = pytest.mark.bench


@pytest.fixture(scope="module")
def smoke():
    """One smoke run of every family (a few seconds), shared by the checks below."""
    return [f for family in FAMILIES for f in measure(family, "smoke")]


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
    verdicts = gate.check(smoke, baseline_file.load()["smoke"])
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
    assert len(judged) == len(goals.GOALS)  # one goal per figure
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
                plots.round_stages(smoke, meta), plots.metg_efficiency(smoke, meta),
                plots.fleet_efficiency(smoke, meta)):
        ax = fig.axes[0]
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
        assert ax.get_legend() is not None and ax.has_data()


def _plotted(values: dict[str, float]) -> list[Figure]:
    return [Figure(name, v, "us", "planted") for name, v in values.items()]


def test_the_plots_tick_worker_counts_as_integers_and_keep_legends_off_the_data(tmp_path):
    """Issue 33, point 9: worker counts and sizes are ticked at the measured points as plain
    integers (never 10^0, 2×10^0), each legend stands beside its axes, and the stage plot
    draws the measured whole round as its own line, the stages timed in-process beside the
    round trip they sit in (here longer than it, as a busy run measured them)."""
    meta = {"date": "2026-12-04", "cores": 2}
    fleet = plots.fleet_efficiency(_plotted({f"fleet/h{h}/x{n}/efficiency": 0.9 for h in
                                             (20, 80) for n in (1, 2, 4)}), meta)
    sweep = plots.sweep_speedup(_plotted({f"sweep/6/ridge_x{n}/over_one": n * 0.8
                                          for n in (2, 4)}), meta, 1.9)
    chain = plots.chain_ratio(_plotted({f"chain/ols/{n}": 2.0 for n in (100, 1000)}), meta)
    for fig, ticks in ((fleet, ["1", "2", "4"]), (sweep, ["1", "2", "4"]),
                       (chain, ["100", "1000"])):
        ax = fig.axes[0]
        assert [t.get_text() for t in ax.get_xticklabels()] == ticks
        assert not ax.xaxis.get_minorticklocs().size
        fig.canvas.draw()
        box = ax.get_legend().get_window_extent()
        assert box.x0 >= ax.get_window_extent().x1  # beside the axes, over nothing
    stage = {"graph_build": 100, "lowering": 50, "encoding": 30,
             "worker_decode_and_validate": 200, "execute": 1430}
    figures = _plotted({f"rounds/stage/{k}": v for k, v in stage.items()} | {
        "rounds/vm/total": 1010, "rounds/vm/round_trip": 600, "rounds/vm/transit": 0,
        "rounds/vm/scheduler": 230})
    ax = plots.round_stages(figures, meta).axes[0]
    (line,) = [c for c in ax.collections]  # the measured whole round
    assert {tuple(seg[:, 1]) for seg in line.get_segments()} == {(1010, 1010)}
    bars = {(round(b.get_x() + b.get_width() / 2, 2), b.get_y(), b.get_height())
            for b in ax.patches}
    left, right = -0.17, 0.17
    assert (left, 0, 100) in bars and (left, 180, 600) in bars and (left, 780, 230) in bars
    assert (right, 180, 200) in bars and (right, 380, 1430) in bars  # inside the trip
    assert [t.get_text() for t in ax.get_xticklabels()] == ["vm"]


def _figures_at(table: dict, scale_by: float = 1.0) -> list[Figure]:
    """Figures equal to a baseline table's values, each moved by `scale_by` in its worse
    direction (1.0: the baseline itself)."""
    out = []
    for name, rule in table.items():
        worse = scale_by if rule["better"] == "lower" else 1 / scale_by
        out.append(Figure(name, rule["value"] * worse, "x", "planted", rule["better"],
                          rule["parallel"], load=QUIET))
    return out


@pytest.mark.parametrize("scale", ["smoke", "full"])
def test_the_gate_passes_the_baseline_and_fails_a_planted_regression(scale):
    table = {n: r for n, r in baseline_file.load()[scale].items() if r["value"] is not None}
    assert table, "the committed baseline has values"
    at_baseline = gate.check(_figures_at(table), table)
    assert {v.status for v in at_baseline} == {"pass"}
    for name, rule in table.items():  # each figure, just beyond its own margin
        planted = [f if f.name != name else Figure(
            f.name, f.value * (rule["margin"] * 1.01) ** (1 if rule["better"] == "lower" else -1),
            "x", "planted", f.better, f.parallel, load=QUIET) for f in _figures_at(table)]
        verdicts = {v.name: v.status for v in gate.check(planted, table)}
        assert verdicts[name] == "fail" and list(verdicts.values()).count("fail") == 1
        within = [f if f.name != name else Figure(
            f.name, f.value * (rule["margin"] * 0.99) ** (1 if rule["better"] == "lower" else -1),
            "x", "planted", f.better, f.parallel, load=QUIET) for f in _figures_at(table)]
        assert {v.status for v in gate.check(within, table)} == {"pass"}


def test_a_speedup_is_not_gated_on_one_core():
    table = {n: r for n, r in baseline_file.load()["smoke"].items() if r["parallel"]}
    assert table
    collapsed = _figures_at(table, scale_by=100.0)  # far beyond every margin
    one_cpu = [replace(f, load=Load(cores=1, others=0.0)) for f in collapsed]
    verdicts = gate.check(one_cpu, table)
    assert {v.status for v in verdicts} == {"skip"}
    assert all("it needs 2 CPUs, this run had 1" in v.text for v in verdicts)
    assert {v.status for v in gate.check(collapsed, table)} == {"fail"}


@pytest.mark.parametrize("scale", ["smoke", "full"])
def test_on_a_busy_machine_a_regression_is_inconclusive_never_a_pass(scale):
    """Every gated figure 100x beyond its margin, measured while other work took most of
    the CPUs (or with no load measured): inconclusive, and so is the gate; on a quiet
    machine the same figures fail."""
    table = {n: r for n, r in baseline_file.load()[scale].items() if r["value"] is not None}
    collapsed = _figures_at(table, scale_by=100.0)
    for load in (Load(cores=2, others=1.5), Load(cores=2, others=gate.BUSY_LIMIT + 0.01), None):
        verdicts = gate.check([replace(f, load=load) for f in collapsed], table)
        assert {v.status for v in verdicts} == {"inconclusive"}, load
        outcome = gate.judge(verdicts)
        assert outcome.status == "inconclusive" and not outcome.passed
        assert "gate inconclusive" in outcome.line() and "passed" not in outcome.line()
    at_limit = [replace(f, load=Load(cores=2, others=gate.BUSY_LIMIT)) for f in collapsed]
    assert {v.status for v in gate.check(at_limit, table)} == {"fail"}
    assert gate.judge(gate.check(collapsed, table)).status == "failed"


def test_this_runs_ratios_pass_the_gate_or_are_inconclusive_for_load(smoke):
    """The CI gate: this run's smoke ratios against the committed smoke baseline. Every
    figure measured on a quiet machine passes; one measured while other work held the CPUs
    is inconclusive with its load, never a fail (a busy runner) and never a pass."""
    verdicts = gate.check(smoke, baseline_file.load()["smoke"])
    assert [v.text for v in verdicts if v.status == "fail"] == []
    by_name = {f.name: f for f in smoke}
    for v in verdicts:
        load = by_name[v.name].load
        one_cpu = load.cores < 2 and "needs 2 CPUs" in v.text
        want = "skip" if one_cpu else "inconclusive" if load.others > gate.BUSY_LIMIT else "pass"
        assert v.status == want, v.text
    assert gate.judge(verdicts).status in ("passed", "inconclusive")


def test_the_slow_hook_stretches_every_sample_of_its_side_by_construction():
    """Whatever the load: a slowed side's every sample lasts at least its factor times the
    work that sample did (the hook sleeps the rest, and a sleep is never shorter than asked),
    so the hook the gate test below relies on is never a no-op."""
    from maned_bench.timing import alternate, slowed
    work: dict[str, list[float]] = {"x1": [], "x2": []}

    def side(name):
        def run():
            t0 = time.perf_counter()
            sum(range(20_000))
            work[name].append(time.perf_counter() - t0)
        return run
    with slowed({"x2": 3}):
        got = alternate({"x1": side("x1"), "x2": side("x2")}, reps=5, warmup=1)
    timed = work["x2"][1:]  # past the untimed warm-up call
    assert len(got["x2"].seconds) == len(timed) == 5
    assert all(sample >= 3 * w for sample, w in zip(got["x2"].seconds, timed))


def test_a_side_slowed_three_times_fails_the_gate_on_a_quiet_machine(monkeypatch):
    """The MANED_BENCH_SLOW hook makes every sample of the fleet's two-worker side take
    three times as long: its efficiency falls past the margin of 2, and the gate fails it
    wherever the machine was quiet enough to judge it (elsewhere: inconclusive, never a
    pass)."""
    monkeypatch.setenv(SLOW_HOOK, "fleet/x2=3")
    slowed = {f.name: f for f in measure("fleet", "smoke")}
    name = "fleet/h10/x2/efficiency"
    (verdict,) = [v for v in gate.check(slowed.values(), baseline_file.load()["smoke"])
                  if v.name == name]
    load = slowed[name].load
    want = ("skip" if load.cores < 2 else "inconclusive" if load.others > gate.BUSY_LIMIT
            else "fail")
    assert verdict.status == want, verdict.text


def test_the_slow_hook_refuses_what_it_cannot_read(monkeypatch, capsys):
    """A malformed MANED_BENCH_SLOW: maned-bench refuses it in one coded line before it
    measures anything (exit 2), and so does a family measured directly."""
    for bad in ("fleet=3", "fleet/x2", "fleet/x2=0.5", "fleet/x2=fast", "/x2=3"):
        monkeypatch.setenv(SLOW_HOOK, bad)
        with pytest.raises(ValueError, match=SLOW_HOOK):
            measure("fleet", "smoke")
        assert cli.main(["--smoke", "--only", "fleet"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"maned-bench: {SLOW_HOOK}: '{bad}'") and err.endswith(
            "[EUSAGE]\n") and len(err.splitlines()) == 1


def test_only_ratios_are_gated():
    table = {"roundtrip/vm": {"value": 1.0, "margin": 2, "better": "lower", "parallel": False}}
    seconds = Figure("roundtrip/vm", 0.5, "ms", "a time", "lower")
    assert gate.check([seconds], table)[0].status == "fail"


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
    _exit_follows_the_load(done, tmp_path / "summary.json")
    bench = json.loads((tmp_path / "pytest-benchmark.json").read_text())
    groups = {b["group"] for b in bench["benchmarks"]}
    assert groups == {"kernel", "roundtrip"}
    assert all(b["extra_info"]["figures"] for b in bench["benchmarks"])
    assert not list(tmp_path.glob("*.png"))  # neither family has a plot: none drawn empty
    assert "Warning" not in done.stdout + done.stderr  # issue 33: no warning noise


# --- where a run reads and writes (issue 23, point 9) ---------------------------------------
NO_EXTRAS = ("import sys\nfor m in ('pytest', 'pytest_benchmark', 'matplotlib'):\n"
             "    sys.modules[m] = None\nfrom maned_bench.cli import main\n"
             "sys.exit(main(sys.argv[1:]))\n")


def _busy(summary: dict) -> bool:
    """Some gated figure of this run (one the installed baseline names) was measured while
    other work held the CPUs, or with its load unmeasured: the gate cannot judge it (an
    ungated figure's load is not the gate's to judge). Read from the figures, not from the
    gate's verdicts: a refused --rebaseline gives none."""
    gated = set(baseline_file.load()[summary["context"]["scale"]])
    return any(f["load"] is None or f["load"]["others"] > gate.BUSY_LIMIT
               for f in summary["figures"] if f["name"] in gated)


def _exit_follows_the_load(done, summary_path) -> dict:
    """A run whose families all ran: the gate passed (exit 0) on a quiet machine, and was
    inconclusive (exit 3, never 0) where the load was too high to judge."""
    summary = json.loads(summary_path.read_text())
    if _busy(summary):
        assert (done.returncode, summary["gate_outcome"]["status"]) == (
            cli.EXIT_INCONCLUSIVE, "inconclusive"), done.stdout[-2000:]
        assert "maned-bench: gate inconclusive" in done.stdout
    else:
        assert done.returncode == 0, done.stdout[-2000:]
        assert "maned-bench: gate passed" in done.stdout
    return summary


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
    installed = baseline_file.BASELINE.read_bytes()
    refused = _bench(["--smoke", "--only", "kernel", "--rebaseline"], tmp_path, timeout=120)
    assert baseline_file.BASELINE.read_bytes() == installed
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.count("\n") == 1 and refused.stderr.endswith("[EUSAGE]\n")
    assert "--baseline FILE" in refused.stderr
    assert not (tmp_path / "benchmarks").exists()  # refused before anything ran
    plugin = subprocess.run([sys.executable, "-m", "pytest", "-p", "maned_bench.plugin", "-p",
                             "no:cacheprovider", "--pyargs", "maned_bench.test_benchmarks",
                             "--bench-scale", "smoke", "--bench-rebaseline", "-k", "kernel"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert plugin.returncode == 4 and "--baseline FILE" in plugin.stderr  # pytest's usage error
    assert baseline_file.BASELINE.read_bytes() == installed


def test_a_run_writes_its_results_and_baseline_in_the_working_directory(tmp_path):
    """Plain maned-bench from any folder: results in ./benchmarks/results, and --rebaseline
    into the --baseline given, the installed baseline untouched."""
    installed = baseline_file.BASELINE.read_bytes()
    (tmp_path / "b.json").write_bytes(installed)
    # roundtrip: it has gated figures (kernel's are not gated since issue 35)
    done = _bench(["--smoke", "--only", "roundtrip", "--rebaseline", "--baseline", "b.json"],
                  tmp_path)
    assert baseline_file.BASELINE.read_bytes() == installed
    summary = json.loads((tmp_path / "benchmarks" / "results" / "summary.json").read_text())
    assert {f["name"].split("/")[0] for f in summary["figures"]} == {"roundtrip"}
    if _busy(summary):  # a baseline measured under load is refused, the file kept
        assert done.returncode == 1 and "this run cannot be a baseline" in done.stderr
        assert (tmp_path / "b.json").read_bytes() == installed
        return
    assert done.returncode == 0, done.stdout[-2000:]
    mine, theirs = baseline_file.load(tmp_path / "b.json")["smoke"], baseline_file.load()["smoke"]
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


# --- a broken baseline is refused before measuring; a late failure loses nothing ------------
# --- (issue 24, point 2); a gate never passes vacuously (point 3) ---------------------------
RULE = {"value": 2.0, "margin": 3, "better": "lower", "parallel": False}
GOOD = {"smoke": {"chain/linear_regression/8": RULE}, "full": {"chain/hmm/1000": RULE}}


def _doc_with(**changes) -> bytes:
    """GOOD's JSON with its smoke rule changed (a key set to ... is dropped)."""
    rule = {k: v for k, v in {**RULE, **changes}.items() if v is not ...}
    return json.dumps({**GOOD, "smoke": {"chain/linear_regression/8": rule}}).encode()


CORRUPT = {  # what a baseline file holds -> a word the refusal must say
    "not JSON": (b"this is not json", "not JSON"),
    "empty": (b"", "empty"),
    "only blanks": (b" \n\t\n", "not JSON"),
    "a list": (b"[1, 2, 3]", "array"),
    "a number": (b"3", "number"),
    "not UTF-8": (b'{"smoke": {"\xff\xfe": 1}}', "UTF-8"),
    "a table that is a list": (b'{"smoke": [], "full": {}}', "array"),
    "an unknown scale": (json.dumps({**GOOD, "medium": GOOD["smoke"]}).encode(), "medium"),
    "a rule that is a number": (b'{"smoke": {"a/b": 3}}', "number"),
    "a string for a number": (_doc_with(value="2.0"), "value"),
    "true for a number": (_doc_with(margin=True), "margin"),
    "no margin": (_doc_with(margin=...), "margin"),
    "no better": (_doc_with(better=...), "better"),
    "no value": (_doc_with(value=...), "value"),
    "an unknown key": (_doc_with(paralel=True), "paralel"),
    "parallel not a boolean": (_doc_with(parallel="yes"), "parallel"),
    "a duplicated figure": (b'{"smoke": {"a/b": %s, "a/b": %s}}'
                            % ((json.dumps(RULE).encode(),) * 2), "twice"),
    "nested too deep": (b"[" * 100_000 + b"]" * 100_000, "deep"),
    "a long run of text": (b"x" * 5000, "not JSON"),
    # point 3: what would let a gate pass vacuously
    "a NaN value": (_doc_with(value=float("nan")), "NaN"),
    "an Infinity margin": (_doc_with(margin=float("inf")), "Infinity"),
    "a -Infinity value": (_doc_with(value=float("-inf")), "Infinity"),
    "a value overflowing to infinity": (_doc_with(value=...).replace(b"{\"margin",
                                        b"{\"value\": 1e400, \"margin"), "value"),
    "an integer too large for a float": (_doc_with(margin=10 ** 400), "margin"),
    "a zero value": (_doc_with(value=0), "value"),
    "a negative value": (_doc_with(value=-1.5), "value"),
    "a zero margin": (_doc_with(margin=0), "margin"),
    "a negative margin": (_doc_with(margin=-3), "margin"),
    "a margin below 1": (_doc_with(margin=0.5), "margin"),
    "an unknown direction": (_doc_with(better="up"), "better"),
    "a direction of another case": (_doc_with(better="Lower"), "better"),
    "a limit overflowing": (_doc_with(value=1e300, margin=1e300), "overflow"),
}


def _refusal_shape(message: str, where: str):
    """One short line naming the file, quoting no more than a prefix of its content."""
    assert "\n" not in message and "Traceback" not in message
    assert where in message
    assert len(message) <= len(where) + 220, message


@pytest.mark.parametrize("case", list(CORRUPT))
def test_a_corrupted_baseline_is_refused_with_one_coded_line(case, tmp_path):
    raw, word = CORRUPT[case]
    path = tmp_path / "b.json"
    path.write_bytes(raw)
    with pytest.raises(baseline_file.BaselineError) as refused:
        baseline_file.load(path, "smoke")
    assert refused.value.code == "EUSAGE"
    _refusal_shape(str(refused.value), str(path))
    assert word.lower() in str(refused.value).lower(), str(refused.value)
    with pytest.raises(baseline_file.BaselineError):  # the same refusal from the bytes alone
        baseline_file.parse(raw, "b.json", "smoke")


def test_a_baseline_that_is_missing_a_folder_or_a_fifo_is_refused(tmp_path):
    """...and a FIFO without waiting for a writer that never comes."""
    from fuzzing import deadline
    os.mkfifo(tmp_path / "fifo")
    for path, word in ((tmp_path / "none.json", "no such file"), (tmp_path, "folder"),
                       (tmp_path / "fifo", "fifo")):
        with pytest.raises(baseline_file.BaselineError) as refused, deadline(10):
            baseline_file.load(path)
        _refusal_shape(str(refused.value), str(path))
        what = str(refused.value).removeprefix(f"the baseline {path}: ")
        assert word in what.lower(), str(refused.value)
    with pytest.raises(baseline_file.BaselineError) as refused:
        baseline_file.load("/dev/null")
    assert str(refused.value) == "the baseline /dev/null: is empty"


@pytest.mark.parametrize("doc, word", [
    ({"full": GOOD["full"]}, "no 'smoke' table"),
    ({**GOOD, "smoke": {}}, "gates no figure"),
    ({}, "no 'smoke' table"),
])
def test_a_gate_with_nothing_to_gate_is_refused(doc, word, tmp_path):
    """No table for the run's scale, or an empty one: a gate that could only pass."""
    baseline_file.validate(doc)  # the document itself is well formed
    with pytest.raises(baseline_file.BaselineError) as refused:
        baseline_file.validate(doc, "smoke")
    assert word in str(refused.value)
    (tmp_path / "b.json").write_text(json.dumps(doc))
    with pytest.raises(baseline_file.BaselineError) as refused:
        baseline_file.load(tmp_path / "b.json", "smoke")
    _refusal_shape(str(refused.value), str(tmp_path / "b.json"))


def test_the_committed_baseline_and_null_values_are_valid():
    for scale in ("smoke", "full"):
        assert baseline_file.validate(baseline_file.load(), scale) == baseline_file.load()[scale]
    unset = {"smoke": {"a/b": {**RULE, "value": None}}}  # no baseline value yet: legitimate
    assert baseline_file.validate(unset, "smoke") == unset["smoke"]
    assert baseline_file.validate({"smoke": {"a/b": {**RULE, "margin": 1}}}, "smoke")  # margin 1: exact


def test_gate_check_refuses_a_table_it_cannot_judge():
    """check() validates the table it is given: an unknown direction is never 'higher'."""
    figure = Figure("a/b", 1.0, "x", "planted", "lower", load=QUIET)
    with pytest.raises(baseline_file.BaselineError):
        gate.check([figure], {"a/b": {**RULE, "better": "up"}})
    with pytest.raises(baseline_file.BaselineError):
        gate.check([figure], {"a/b": {**RULE, "margin": float("nan")}})


def test_a_figure_whose_direction_disagrees_with_its_baseline_fails():
    figure = Figure("a/b", 1.0, "x", "planted", "higher", load=QUIET)
    (verdict,) = gate.check([figure], {"a/b": RULE})
    assert verdict.status == "fail" and "higher" in verdict.text and "lower" in verdict.text


def test_a_gate_that_skipped_every_figure_checked_nothing():
    """Every value null, every speed-up on one core, nothing measured: never 'passed'."""
    unset = {"a/b": {**RULE, "value": None}}
    parallel = {"a/b": {**RULE, "better": "higher", "parallel": True}}
    figure = Figure("a/b", 1.0, "x", "planted", "lower", load=QUIET)
    speedup = Figure("a/b", 1.0, "x", "planted", "higher", parallel=True,
                     load=Load(cores=1, others=0.0))
    for verdicts in (gate.check([figure], unset), gate.check([speedup], parallel),
                     gate.check([], {"a/b": RULE})):
        assert {v.status for v in verdicts} == {"skip"}
        outcome = gate.judge(verdicts)
        assert outcome.status == "checked nothing" and not outcome.passed
        assert "passed" not in outcome.line() and "checked nothing" in outcome.line()
    passed = gate.judge(gate.check([figure], {"a/b": RULE}))
    assert passed.status == "passed" and passed.passed and "gate passed: 1 pass" in passed.line()
    failed = gate.judge(gate.check([Figure("a/b", 9.0, "x", "", "lower", load=QUIET)],
                                   {"a/b": RULE}))
    assert failed.status == "failed" and not failed.passed and "FAILED" in failed.line()


KERNEL = "kernel/matmul/16/speedup"  # a figure with no plot: conclude() draws none
SPEEDUP = {**RULE, "value": 38.0, "better": "higher"}
KERNEL_DOC = {"smoke": {KERNEL: SPEEDUP}}


def _planted(value=40.0):
    return [Figure(KERNEL, value, "x", "planted", "higher", load=QUIET)]


def _conclude(tmp_path, figures, baseline: bytes, rebaseline=False):
    from maned_bench import plugin
    path = tmp_path / "b.json"
    path.write_bytes(baseline)
    return plugin.conclude(figures, "smoke", tmp_path / "out", path, rebaseline), path


def test_a_gate_that_checked_nothing_fails_the_run_and_writes_the_figures(tmp_path):
    unset = json.dumps({"smoke": {KERNEL: {**SPEEDUP, "value": None}}})
    done, _ = _conclude(tmp_path, _planted(), unset.encode())
    assert done.failed and any("gate checked nothing" in line for line in done.stdout)
    assert not any("gate passed" in line for line in done.stdout) and done.stderr == []
    assert {p.name for p in done.written} == {"summary.json", "results.md"}
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["gate_outcome"]["status"] == "checked nothing"
    done, _ = _conclude(tmp_path, _planted(), json.dumps(KERNEL_DOC).encode())
    assert not done.failed and ("maned-bench: gate passed: 1 pass, 0 fail, 0 inconclusive, "
                                 "0 skipped") in done.stdout


def test_a_baseline_gone_bad_during_the_run_still_writes_the_figures(tmp_path):
    """The late path, in process: the gate is 'not run' with the reason in one coded line,
    the run fails, and the figures are written (the table says why there is no gate)."""
    for raw in (b"", b'{"smoke": {"%s": {"value": NaN}}}' % KERNEL.encode(), b"\xff"):
        done, path = _conclude(tmp_path, _planted(), raw)
        assert done.failed and len(done.stderr) == 1
        (line,) = done.stderr
        assert line.startswith("maned-bench: gate not run: ") and line.endswith("[EUSAGE]")
        assert str(path) in line
        assert {p.name for p in done.written} == {"summary.json", "results.md"}
        summary = json.loads((tmp_path / "out" / "summary.json").read_text())
        assert summary["gate_outcome"]["status"] == "not run"
        assert [f["name"] for f in summary["figures"]] == [KERNEL]
        assert "not run" in (tmp_path / "out" / "results.md").read_text()


def test_a_rebaseline_that_cannot_be_written_still_writes_the_figures(tmp_path, monkeypatch):
    def read_only(path, tables):
        raise PermissionError(13, "Permission denied", str(path))
    monkeypatch.setattr(baseline_file, "save", read_only)
    done, path = _conclude(tmp_path, _planted(), json.dumps(KERNEL_DOC).encode(),
                           rebaseline=True)
    assert done.failed and len(done.stderr) == 1 and "Permission denied" in done.stderr[0]
    assert (tmp_path / "out" / "summary.json").is_file()
    monkeypatch.undo()
    done, path = _conclude(tmp_path, _planted(0.0), json.dumps(KERNEL_DOC).encode(),
                           rebaseline=True)
    assert done.failed and "value" in done.stderr[0]  # never writes a baseline it would refuse
    assert json.loads(path.read_text()) == KERNEL_DOC
    done, path = _conclude(tmp_path, _planted(41.0), json.dumps(KERNEL_DOC).encode(),
                           rebaseline=True)
    assert not done.failed and json.loads(path.read_text())["smoke"][KERNEL]["value"] == 41.0


@pytest.mark.parametrize("case", ["not JSON", "a NaN value", "an unknown direction",
                                  "a long run of text", "no margin"])
def test_maned_bench_refuses_a_bad_baseline_before_measuring(case, tmp_path, monkeypatch,
                                                             capsys):
    from maned_bench import cli
    monkeypatch.setattr(cli, "_run", lambda *a: pytest.fail("measured with a bad baseline"))
    (tmp_path / "b.json").write_bytes(CORRUPT[case][0])
    out = tmp_path / "results"
    assert cli.main(["--smoke", "--baseline", str(tmp_path / "b.json"),
                     "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("maned-bench: the baseline ")
    assert err.endswith("[EUSAGE]\n")
    _refusal_shape(err.strip(), str(tmp_path / "b.json"))
    assert not out.exists()
    (tmp_path / "b.json").write_text(json.dumps({"full": GOOD["full"]}))
    assert cli.main(["--smoke", "--baseline", str(tmp_path / "b.json"), "--out", str(out)]) == 2
    assert "no 'smoke' table" in capsys.readouterr().err and not out.exists()


CORRUPTER = '''"""Corrupts the baseline a run reads once the first family has been measured."""
import os


def pytest_runtest_logreport(report):
    if report.when == "call":
        with open(os.environ["CORRUPT_BASELINE"], "w") as f:
            f.write('{"smoke": {"kernel/matmul/16/speedup": {"value": "fast", "margin": 5, '
                    '"better": "higher"}}}')
'''


@pytest.mark.parametrize("name", ["summary.json", "results.md", "pytest-benchmark.json",
                                  "round_stages.png"])
def test_a_baseline_among_the_runs_own_outputs_is_refused_before_anything_runs(tmp_path,
                                                                              capsys, name):
    """Issue 34, K3: a --baseline the run would write over (a name it writes into --out) is
    one coded line, exit 2, and the baseline is as it was."""
    baseline = tmp_path / name
    baseline.write_bytes(baseline_file.BASELINE.read_bytes())
    assert cli.main(["--smoke", "--only", "kernel", "--out", str(tmp_path),
                     "--baseline", str(baseline)]) == 2
    err = capsys.readouterr().err
    assert err == (f"maned-bench: the run's {name} '{baseline}' is the --baseline: writing it "
                   "would replace it: give --out another folder, or the baseline another name "
                   "[EUSAGE]\n")
    assert baseline.read_bytes() == baseline_file.BASELINE.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_a_gate_that_fails_late_still_finds_the_figures_written(tmp_path):
    """A real run (maned-bench --smoke --only kernel) whose baseline turns bad while it
    measures: exit 1, one coded line, no traceback, and every figure written."""
    (tmp_path / "corrupter.py").write_text(CORRUPTER)
    (tmp_path / "b.json").write_bytes(baseline_file.BASELINE.read_bytes())
    env = dict(os.environ, PYTEST_PLUGINS="corrupter", CORRUPT_BASELINE=str(tmp_path / "b.json"),
               PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path),
                                                        os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-m", "maned_bench.cli", "--smoke", "--only",
                           "kernel", "--baseline", "b.json", "--out", "out"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Traceback" not in done.stderr + done.stdout
    coded = [line for line in done.stderr.splitlines() if line.endswith("[EUSAGE]")]
    assert len(coded) == 1 and coded[0].startswith("maned-bench: gate not run: the baseline")
    assert "value" in coded[0] and "gate passed" not in done.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert {f["name"].split("/")[0] for f in summary["figures"]} == {"kernel"}
    assert summary["gate_outcome"]["status"] == "not run" and summary["gate"] == []
    assert "not run" in (tmp_path / "out" / "results.md").read_text()


def test_a_run_measured_under_load_is_inconclusive_and_never_rebaselines(tmp_path):
    """In process: a figure measured while other work held the CPUs makes the gate
    inconclusive (the run does not pass; maned-bench exits 3 for it), and --rebaseline
    keeps the baseline as it was."""
    busy = [replace(f, load=Load(cores=2, others=1.7)) for f in _planted()]
    done, _ = _conclude(tmp_path, busy, json.dumps(KERNEL_DOC).encode())
    assert done.failed and done.outcome.status == "inconclusive" and done.stderr == []
    assert any("gate inconclusive: 0 pass, 0 fail, 1 inconclusive" in ln for ln in done.stdout)
    assert any("other work took 1.70 of 2 CPUs" in ln for ln in done.stdout)
    done, path = _conclude(tmp_path, busy, json.dumps(KERNEL_DOC).encode(), rebaseline=True)
    assert done.failed and "this run cannot be a baseline" in done.stderr[0]
    assert json.loads(path.read_text()) == KERNEL_DOC
