"""The installed commands as real child processes, and the CLI surface run in-process."""
import json
import os
import re
import tracemalloc

import pytest

from support.cli import EXAMPLES, SEED_SWEEP_NOTE, run_tool
from maned.cli import lint as lint_cli
from maned.cli import run as run_cli
from maned.devices.discovery import MAX_WINDOW_MS
from maned.devices.bounds import MAX_DEADLINE_S
from support.processes import MANED_LINT, MANED_RUN, installed, run
from support.scripts import HML, preamble


def test_maned_run_console_script_prints_the_block():
    p = run([installed("maned-run")], EXAMPLES / "layer.mnd", timeout=60)
    assert (p.returncode, p.stdout, p.stderr) == (
        0, "flow 'layer' outputs:\nresult : [2x2] = [6, 8, 10, 0]\n", "")


def test_maned_lint_console_script_reports_and_exits_1(tmp_path):
    script = tmp_path / "bad.mnd"
    script.write_text(preamble(1, -1, 0) + "calc::lambda_flow f(x) {\n    x y add r =\n"
                      "} return r;\n")
    p = run([installed("maned-lint")], script, timeout=60)
    assert p.returncode == 1
    assert f"{script}:5:7: error[E003]: " in p.stdout


@pytest.mark.parametrize("tool", ["maned-run", "maned-lint", "maned-model", "bark-vm",
                                  "bark-worker", "maned-machine"])
def test_version_has_two_lines_starting_with_the_tool(tool):
    p = run([installed(tool)], "--version", timeout=60)
    lines = p.stdout.splitlines()
    assert p.returncode == 0 and len(lines) == 2
    assert lines[0].startswith(f"{tool} ") and lines[1].startswith("build: ")


@pytest.mark.parametrize("tool, says", [
    ("maned-run", ["examples:", "environment:", "MANED_DEVICE_PASS", "MANED_BARK_VM",
                   "--no-vm-fallback", "--device", "--probe"]),
    ("maned-lint", ["examples:", "environment:", "MANED_MAX_STEPS", "<file.mnd>..."]),
    ("maned-model", ["examples:", "show FILE"]),
    ("bark-vm", ["example:", "environment:", "MANED_BARK_VM"]),
    ("bark-worker", ["examples:", "environment:", "BARK_ALIAS", "BARK_PASS_FILE"]),
    ("maned-machine", ["examples:", "environment:", "MANED_MACHINE_CACHE", "--pass-file"]),
])
def test_every_command_has_help_with_examples_and_its_environment(tool, says):
    """Issue 15: --help shows how to call the tool and which variables it reads."""
    p = run([installed(tool)], "--help", timeout=60)
    assert p.returncode == 0 and p.stderr == ""
    assert [s for s in says if s not in p.stdout] == []
    assert "serve serve" not in p.stdout


def test_maned_lint_takes_several_files_with_one_exit_code(workdir):
    bad = workdir / "bad.mnd"
    bad.write_text(preamble(1, -1, 0) + "calc::lambda_flow f(x) {\n    x y add r =\n"
                   "} return r;\n")
    code, out, err = run_tool(lint_cli, ["hello.mnd", str(bad), "sweep.mnd"])
    assert (code, err) == (1, "") and out == (f"{bad}:5:7: error[E003]: flow 'f': undefined "
                                              "variable 'y'\n")
    code, out, err = run_tool(lint_cli, ["hello.mnd", str(bad), "--format", "json"])
    assert code == 1 and [f["file"] for f in json.loads(out)] == [str(bad)]
    code, out, err = run_tool(lint_cli, [str(bad), "missing.mnd"])
    assert code == 2
    assert err == "error: cannot read 'missing.mnd': No such file or directory [EIO]\n"
    assert out.startswith(f"{bad}:5:7: error[E003]") and "missing.mnd" not in out


@pytest.mark.parametrize("argv, why", [
    (["--strict", "hello.mnd"], "unknown option --strict"),
    (["hello.mnd", "--format", "xml"], "--format xml: choose text or json"),
    (["--format"], "--format needs a value: text or json"),
    ([], "no script given"),
])
def test_maned_lint_says_why_a_command_line_is_refused(workdir, argv, why):
    assert run_tool(lint_cli, argv) == (2, "", f"error: maned-lint: {why} (usage: maned-lint "
                                                "<file.mnd>... [--format text|json]; see "
                                                "--help) [EUSAGE]\n")


def test_help_lists_every_flag(maned_run):
    code, out, err = maned_run("--help")
    assert code == 0 and err == ""
    for flag in ("--flow", "--in", "--trap-overflow", "--threads", "--version", "--help"):
        assert flag in out


@pytest.mark.parametrize("argv, message", [
    ([], "error: no script given"),
    (["hello.mnd", "--threads", "0"],
     "error: --threads takes a whole number from 1 to 256, not '0'"),
    # issue 34, K1: a documented bound, not 2^31 - 1 processes from a typo
    (["hello.mnd", "--threads", "257"],
     "error: --threads takes a whole number from 1 to 256, not '257'"),
    (["hello.mnd", "--threads", "2147483647"],
     "error: --threads takes a whole number from 1 to 256, not '2147483647'"),
    (["hello.mnd", "--threads"], "error: --threads needs a value"),
    (["hello.mnd", "other.mnd"], "error: unknown argument: other.mnd"),
    # issue 33, point 10: a mistyped flag is met with the flag it nearly is
    (["hello.mnd", "--thread", "2"], "error: unknown argument: --thread (did you mean "
                                     "'--threads'?)"),
    (["hello.mnd", "--verfy"], "error: unknown argument: --verfy (did you mean '--verify'?)"),
    (["hello.mnd", "--device-pas=SECRET"], "error: unknown argument: --device-pas (did you "
                                           "mean '--device-pass'?)"),
    (["hello.mnd", "--zzz"], "error: unknown argument: --zzz [EUSAGE]"),
    (["hello.mnd", "--in", "a"], "error: bad --in a: expected name=VALUE"),
    (["hello.mnd", "--in", "q=1"], "error: --in q: the script has no in::q"),
    (["hello.mnd", "--in", "a=99999999999"], "error: bad --in a=99999999999: 99999999999 "
                                            "does not fit int32"),
    (["hello.mnd", "--flow", "arithmetc"], "error: --flow arithmetc: no such flow "
                                           "(did you mean 'arithmetic'?)"),
    # issue 37, point 4: replicas need as many aliases, refused before anything runs
    (["sweep.mnd", "--replicas", "0"], "error: --replicas takes a whole number from 1 to 3, "
                                       "not '0'"),
    (["sweep.mnd", "--replicas", "4"], "error: --replicas takes a whole number from 1 to 3, "
                                       "not '4'"),
    (["sweep.mnd", "--replicas", "3"], "error: --replicas 3: ml definition 'fit' runs on 2 "
     "aliases (vm1, vm2); it needs at least 3 distinct aliases in its @device list"),
    (["sweep.mnd", "--replicas", "2", "--device", "local"], "error: --replicas 2: ml "
     "definition 'fit' runs on 1 alias (device); it needs at least 2 distinct aliases"),
    (["hello.mnd", "--replicas", "2"], "error: --replicas 2: no calc::ml:: definition of "
     "this run is routed; replicas compare the rounds a sweep sends to its @device aliases"),
    (["csv_io.mnd", "--in", "scale=data/points.csv"], "error: bad --in scale=data/points.csv: "
     "'data/points.csv' is not an integer; 'scale' is not a csv() input, so --in scale= takes "
     "raw integers (5, 3:1,2,3, 2x2:1,2,3,4); a path fills only an input declared csv() or "
     "model() (this script's: pts)"),
])
def test_usage_errors_exit_2_with_a_coded_line(maned_run, argv, message):
    code, out, err = maned_run(*argv)
    assert (code, out) == (2, "")
    assert err.startswith(message) and err.rstrip().endswith("[EUSAGE]")
    assert "SECRET" not in err  # a flag's value is never quoted back


def test_in_overrides_an_in_default(maned_run):
    code, out, _ = maned_run("hello.mnd", "--in", "a=10", "--in", "a=5")
    assert code == 0
    assert out.splitlines()[1:] == ["sum_then_scale : scalar = 32",
                                    "scale_then_sum : scalar = 17"]


def test_threads_never_change_a_number(maned_run):
    one = maned_run("birds.mnd", "--threads", "1")
    two = maned_run("birds.mnd", "--threads", "2")
    assert one == two and one[0] == 0


def test_flow_runs_the_producers_and_prints_only_the_selected_block(maned_run):
    source = """{H0}
in::a = [[1,2]];
calc::lambda_flow first(a) {
    a a add m =
} return m;
calc::lambda_flow second(m) {
    m m mul n =
} return n;
calc::lambda_flow other(a) {
    a gelu k =
} return k;
"""
    code, out, err = maned_run("--flow", "second", source=source)
    assert (code, out, err) == (0, "flow 'second' outputs:\nn : [1x2] = [4, 16]\n", "")


def test_flow_skips_the_out_files_of_flows_it_does_not_run(maned_run, tmp_path):
    """Issue 23, point 3: an out:: of an unselected flow is a note, not exit 1; the
    selected flow's out:: is written."""
    source = """{H0}
in::a = [1, 2];
out::m = csv("m.csv");
out::r = csv("r.csv");
calc::lambda_flow fit(a) {
    a a add m =
} return m;
calc::lambda_flow g(a) {
    a a mul r =
} return r;
"""
    folder = tmp_path / "out"
    folder.mkdir()
    code, out, err = maned_run("--flow", "g", "--out-dir", str(folder), source=source)
    assert (code, err) == (0, "note: out::m not written: flow 'fit' is not part of this run "
                              "(--flow)\n")
    assert out.splitlines()[-1] == f"out::r -> {folder / 'r.csv'}"
    assert sorted(p.name for p in folder.iterdir()) == ["r.csv"]
    code, out, err = maned_run("--flow", "nosuch", source=source)
    assert code == 2 and err == ("error: --flow nosuch: no such flow; the script's flows: "
                                 "fit, g [EUSAGE]\n")


def test_top_level_statements_bind_globals_and_return_prints(maned_run):
    source = """{H0}
in::x = [[1,2],[3,4]];
x x add twice =
return(twice tensor_sum);
calc::lambda_flow f() {
    twice 1 add r =
} return r;
"""
    code, out, err = maned_run(source=source)
    assert (code, err) == (0, "")
    assert out == "return@6 : [1] = [20]\nflow 'f' outputs:\nr : [2x2] = [3, 5, 7, 9]\n"


def test_circular_dependency_is_eplan(maned_run):
    source = """{H0}
calc::lambda_flow f(b) {
    b b add a =
} return a;
calc::lambda_flow g(a) {
    a a add b =
} return b;
"""
    code, out, err = maned_run(source=source)
    assert (code, out) == (1, "")
    assert err == "error: circular flow dependency: f -> g -> f [EPLAN]\n"


def test_constructor_over_the_size_cap_is_e026(maned_run):
    code, out, err = maned_run(source="{H0}\nin::z = 5000 5000 zeros;\n")
    assert (code, out) == (1, "")
    assert "'zeros' would build 25000000 elements, over the limit of 4194304 [E026]" in err


def test_bad_csv_cell_is_e029_naming_file_line_col(maned_run, workdir):
    (workdir / "bad.csv").write_text("1,2\n3,oops\n")
    code, out, err = maned_run(source='{H0}\nin::t = csv("bad.csv");\n')
    assert (code, out) == (1, "")
    assert err == "error: in::t: bad.csv:2:3: 'oops' is not a number [E029]\n"


def test_missing_csv_is_eio_exit_2(maned_run):
    code, out, err = maned_run(source='{H0}\nin::t = csv("nope.csv");\n')
    assert (code, out) == (2, "")
    assert err.startswith("error: in::t: cannot read 'nope.csv': ") and err.endswith("[EIO]\n")


def test_empty_csv_input_takes_its_path_from_in(maned_run, workdir):
    (workdir / "t.csv").write_text("1,2\n")
    source = '{H0}\nin::t = csv();\ncalc::lambda_flow f(t) {\n    t t add r =\n} return r;\n'
    assert maned_run(source=source)[2].endswith("pass --in t=PATH [EUSAGE]\n")
    code, out, err = maned_run("--in", f"t={workdir / 't.csv'}", source=source)
    assert (code, out) == (0, "flow 'f' outputs:\nr : [1x2] = [2, 4]\n")


def test_unwritable_output_is_eio_and_the_block_still_prints(maned_run):
    source = '{H0}\nin::a = 1;\nout::r = csv("no/such/dir/r.csv");\n' \
             'calc::lambda_flow f(a) {\n    a a add r =\n} return r;\n'
    code, out, err = maned_run(source=source)
    assert code == 2
    assert out == "flow 'f' outputs:\nr : scalar = 2\n"
    assert err.startswith("error: out::r: cannot write 'no/such/dir/r.csv'")


def test_script_that_is_not_utf8_is_eparse_at_the_byte(maned_run, workdir):
    (workdir / "bin.mnd").write_bytes(b"mnd::quantmax=1;\nmnd::q\xffantmin=-1;\n")
    code, out, err = maned_run("bin.mnd")
    assert (code, out) == (2, "")
    assert err == "parse error [2:7] the script is not UTF-8 text [EPARSE]\n"


@pytest.mark.parametrize("placement", [
    "@device(rex)\ncalc::lambda_flow f(a) {\n    a a add r =\n} return r;\n",
    "calc::lambda_flow f(a) {\n    @device(rex)\n    a a add r =\n} return r;\n",
])
def test_device_outside_the_signature_is_refused_not_ignored(maned_run, placement):
    code, out, err = maned_run(source='{H0}\nin::a = 1;\ndevice::rex { host = "local"; }\n'
                               + placement)
    assert (code, out) == (1, "")
    assert "routes nothing; write @device(alias) between the flow's ')' and '{' [EPLAN]" in err


def test_lint_reports_gelu_as_w011_and_exits_0(maned_lint):
    code, out, err = maned_lint("{H0}\n\ncalc::lambda_flow f(x) {\n    x gelu r =\n} return r;\n")
    assert code == 0 and err == ""
    assert out.endswith(":6:7: warning[W011]: op 'gelu' is registered but not executable on "
                        "any path - it will refuse at run time\n")


# --- documented limits (issue 13, defect 6) ---------------------------------------------------
LIMITS_HEAD = HML + "in::X = [[1,2],[3,4]];\nin::y = [[1],[2]];\n"


def fit_script(tmp_path, keys: str) -> str:
    path = tmp_path / "fit.mnd"
    path.write_text(LIMITS_HEAD + "calc::ml::linear_regression fit(X, y) {\n"
                    f"    {keys}, features: 2\n}} return m, l;\n")
    return str(path)


STEPS_MESSAGE = ("the calc::ml:: definitions up to 'fit' take 2,147,483,647 training steps, "
                 "over the limit of 10,000,000; set MANED_MAX_STEPS to allow more")


def test_a_fit_of_two_billion_iterations_is_refused_before_it_starts(tmp_path):
    """`iters: 2147483647` ran practically forever; it is E031 naming the limit and the
    variable that raises it, from maned-run and from maned-lint, and nothing runs."""
    script = fit_script(tmp_path, "iters: 2147483647")
    assert run_tool(run_cli, [script]) == (1, "", f"lint error [6:1] {STEPS_MESSAGE} [E031]\n")
    code, out, err = run_tool(lint_cli, [script])
    assert (code, out, err) == (1, f"{script}:6:1: error[E031]: {STEPS_MESSAGE}\n", "")


def test_the_steps_are_summed_over_a_sweep_and_the_limit_can_be_raised(tmp_path, monkeypatch):
    script = fit_script(tmp_path, "iters: 6, lr: [2, 5]")
    monkeypatch.setenv("MANED_MAX_STEPS", "11")
    code, out, err = run_tool(run_cli, [script])
    assert code == 1 and "12 training steps, over the limit of 11" in err
    monkeypatch.setenv("MANED_MAX_STEPS", "12")
    code, out, err = run_tool(run_cli, [script])
    assert code == 0 and out.startswith("flow 'fit' outputs:")


def test_a_script_over_the_source_limit_is_refused_before_it_is_parsed(tmp_path, monkeypatch):
    path = tmp_path / "brackets.mnd"
    path.write_text("[" * 5000)
    monkeypatch.setenv("MANED_MAX_SOURCE_BYTES", "4096")
    code, out, err = run_tool(run_cli, [str(path)])
    assert (code, out) == (1, "")
    assert err == (f"lint error [1:1] the script {path} is 5,000 bytes, over the limit of "
                   "4,096; set MANED_MAX_SOURCE_BYTES to allow more [E031]\n")
    code, out, _ = run_tool(lint_cli, [str(path)])
    assert code == 1 and out.startswith(f"{path}:1:1: error[E031]: the script {path} is 5,000")


def test_round_flows_over_the_limit_are_refused_before_the_first_round(maned_run, monkeypatch):
    monkeypatch.setenv("MANED_MAX_ROUNDS", "2")
    code, out, err = maned_run("sweep.mnd", "--json")
    report = json.loads(out)
    assert code == 1 and report["jobs"] == [] and report["flows"] == []
    assert [d["code"] for d in report["diagnostics"]] == ["E031"]
    assert report["diagnostics"][0]["message"] == (
        "ml definition 'fit' expands to 3 round flows, over the limit of 2; set "
        "MANED_MAX_ROUNDS to allow more")


def test_the_round_limit_is_asked_before_the_rounds_are_listed(tmp_path):
    """10,000,000 one-step rounds: refused from their count; listing them first took about
    1 GB (the peak Python allocation is counted, not the time)."""
    script = fit_script(tmp_path, "iters: 10000000, lr: 5, budget: 15")
    tracemalloc.start()
    try:
        code, out, err = run_tool(run_cli, [script])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (code, out) == (1, "")
    assert err == ("ml error [6:1] ml definition 'fit' expands to 10,000,000 round flows, over "
                   "the limit of 100,000; set MANED_MAX_ROUNDS to allow more [E031]\n")
    assert peak < 64 << 20


@pytest.mark.parametrize("value", ["x", "0", "-3", "1e6"])
def test_a_limit_that_is_not_a_whole_number_is_a_usage_error(tmp_path, monkeypatch, value):
    monkeypatch.setenv("MANED_MAX_STEPS", value)
    code, out, err = run_tool(run_cli, [fit_script(tmp_path, "iters: 3")])
    assert (code, out) == (2, "")
    assert err == (f"error: MANED_MAX_STEPS={value!r}: a limit is a whole number of 1 or "
                   "more [EUSAGE]\n")


def test_maned_lint_words_a_bad_limit_as_a_usage_error(tmp_path, monkeypatch):
    """Not a finding in the script but a setting: stderr, exit 2, as for an unreadable file."""
    monkeypatch.setenv("MANED_MAX_STEPS", "0")
    assert run_tool(lint_cli, [fit_script(tmp_path, "iters: 3")]) == (
        2, "", "error: MANED_MAX_STEPS='0': a limit is a whole number of 1 or more [EUSAGE]\n")


def test_trace_to_stdout_is_refused(maned_run):
    assert maned_run("hello.mnd", "--trace", "-") == (
        2, "", "error: --trace - : give the trace a file path (stdout carries the flow "
               "blocks) [EUSAGE]\n")


def _section(doc: str, heading: str) -> str:
    """A docs/ page's section: from its heading line to the next heading of its level."""
    text = (EXAMPLES.parent / "docs" / doc).read_text()
    level = heading.split(" ")[0] + " "
    after = text.split("\n" + heading + "\n", 1)[1]
    return after.split("\n" + level, 1)[0]


def _flags(text: str) -> set[str]:
    return set(re.findall(r"--[a-z][a-z-]+", text)) - {"--help", "--version"}


def _help(*argv: str) -> str:
    p = run([installed(argv[0])], *argv[1:], "--help")
    assert p.returncode == 0, p.stderr
    return p.stdout


@pytest.mark.parametrize("doc, heading, command", [
    ("language.md", "## maned-run", ("maned-run",)),
    ("wire.md", "### bark-vm", ("bark-vm",)),
    ("wire.md", "### bark-worker", ("bark-worker", "serve")),
    ("machine.md", "## 1. Build the image", ("maned-machine", "build")),
    ("machine.md", "## 6. Without a laptop: QEMU", ("maned-machine", "boot")),
])
def test_each_commands_doc_section_lists_every_flag_of_its_help(doc, heading, command):
    """Issue 15: the section that documents a command names every flag its --help shows
    (maned-run's includes `maned-run devices`)."""
    shown = _help(*command)
    if command == ("maned-run",):
        shown += _help("maned-run", "devices")
    assert sorted(_flags(shown) - _flags(_section(doc, heading))) == []


def test_the_trace_as_a_perfetto_document(maned_run, workdir):
    """Issue 15: --trace-format chrome writes the timeline in the Trace Event Format:
    one complete event per job, coordinator step and phase, a named track per target."""
    code, out, err = maned_run("sweep.mnd", "--verify", "--trace", "t.json", "--trace-format",
                               "chrome")
    assert (code, err) == (0, SEED_SWEEP_NOTE)
    doc = json.loads((workdir / "t.json").read_text())
    tracks = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M"}
    spans = [(tracks[e["tid"]], e["name"]) for e in doc["traceEvents"] if e["ph"] == "X"]
    rounds = {n: t for t, n in spans if "#r" in n}
    assert sorted((t, n) for t, n in spans if "#r" not in n) == sorted(
        [("coordinator", f"fit#c{c}#init") for c in range(3)] + [("coordinator", "fit"),
                                                                 ("run", "verify")])
    # the sweep's rule: configuration i on alias i mod 2
    assert rounds == {f"fit#c{c}#r0": f"vm{c % 2 + 1}" for c in range(3)}
    assert all(e["dur"] >= 0 for e in doc["traceEvents"] if e["ph"] == "X")


@pytest.mark.parametrize("argv, why", [
    (["--trace-format", "chrome"], "--trace-format needs --trace FILE"),
    (["--trace", "t", "--trace-format", "svg"], "--trace-format svg: choose jsonl or chrome"),
])
def test_a_bad_trace_format_is_a_usage_error(maned_run, argv, why):
    assert maned_run("hello.mnd", *argv) == (2, "", f"error: {why} [EUSAGE]\n")


def test_a_device_file_is_read_only_up_to_the_source_limit(maned_lint):
    """/dev/zero has no size to ask first: it is read to the limit and refused (E031)."""
    code, out, err = run_tool(lint_cli, ["/dev/zero"])
    assert code == 1 and out.endswith("over the limit of 1,048,576; set "
                                      "MANED_MAX_SOURCE_BYTES to allow more\n")


LONG = "9" * 5000  # more digits than int() reads (4,300)
DEVICE_SCRIPT = ("{H0}\nin::a = 1;\ndevice::w { host = \"127.0.0.1\"; FIELD }\n"
                 "calc::lambda_flow f(a) @device(w) {\n    a a add r =\n} return r;\n")


@pytest.mark.parametrize("argv, field, line", [
    (["--threads", LONG], "", "error: --threads takes a whole number from 1 to 256, not "
     f"'{LONG[:32]}' [EUSAGE]"),
    (["--discover-timeout", LONG], "", "error: --discover-timeout takes a whole number of "
     f"milliseconds, 1 to {MAX_WINDOW_MS}, not '{LONG[:32]}' [EUSAGE]"),
    (["--device", f"http://127.0.0.1:{LONG}"], "", f"error: device 'device': bad port "
     f"'{LONG[:32]}' in host [EPLAN]"),
    ([], f'timeout = "{LONG}";', f"error: device 'w': bad timeout '{LONG[:32]}' (a whole "
     f"number of seconds, 1 to {MAX_DEADLINE_S}) [EPLAN]"),
    ([], f'port = "{LONG}";', f"error: device 'w': bad port '{LONG[:32]}' (1..65535) [EPLAN]"),
])
def test_thousands_of_digits_are_a_coded_line(maned_run, argv, field, line):
    code, out, err = maned_run(*argv, source=DEVICE_SCRIPT.replace("FIELD", field))
    assert out == "" and err.splitlines()[-1] == line


def test_thousands_of_digits_in_a_limit_or_a_probe_are_a_coded_line(tmp_path, monkeypatch):
    code, out, err = run_tool(run_cli, ["devices", "--probe", f"127.0.0.1:{LONG}"])
    assert code == 2 and err.startswith("error: maned-run devices: bad probe target")
    monkeypatch.setenv("MANED_MAX_STEPS", LONG)
    code, out, err = run_tool(run_cli, [fit_script(tmp_path, "iters: 3")])
    assert (code, out) == (2, "") and err == (f"error: MANED_MAX_STEPS='{LONG[:32]}': a limit "
                                              "is a whole number of 1 or more [EUSAGE]\n")


@pytest.mark.parametrize("y", ["[[0],[0],[1],[1]]", 'csv("y.csv")'])
def test_classifier_labels_off_their_scale_are_a_note_not_a_refusal(maned_run, tmp_path, y):
    """Issue 23, point 5: labels 0/1 at quantres 2 (0 and 0.01) train, with a note naming
    the labels; a csv() holds real units, so there 0.01 is the same off-scale label."""
    (tmp_path / "examples").mkdir(exist_ok=True)
    (tmp_path / "examples" / "y.csv").write_text("0\n0\n0.01\n0.01\n")
    source = HML + f"""in::X = [[100,100],[100,200],[700,700],[800,800]];
in::y = {y};
calc::ml::logistic_regression fit(X, y) {{ iters: 5, lr: 10, features: 2 }} return model;
"""
    code, out, err = maned_run(source=source)
    assert code == 0 and out.startswith("flow 'fit' outputs:\nmodel : [15] = ")
    assert err == ("note: ml definition 'fit' (logistic_regression): y holds 1, not a label "
                   "of logistic_regression: its labels are 0 and 100 at quantres 2 (real 0 "
                   "and 1); other values train to nothing useful (docs/models.md, labels)\n")


@pytest.mark.parametrize("tool, args", [(MANED_RUN, ["sweep.mnd", "--verify"]),
                                        (MANED_LINT, ["lint_findings.mnd"])])
def test_a_reader_that_closes_stdout_early_ends_the_tool_quietly(tool, args):
    """`maned-run sweep.mnd | head -1` where head has gone: no traceback, the shells' code
    for a SIGPIPE (141). The read end is closed before the tool has printed anything (it
    first loads, checks and runs), so its first write meets the closed pipe."""
    import subprocess
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([*tool, *args], stdout=write, stderr=subprocess.PIPE,
                              text=True, cwd=EXAMPLES, timeout=120)
    finally:
        os.close(write)
    assert done.returncode == 141 and "Traceback" not in done.stderr, done.stderr
