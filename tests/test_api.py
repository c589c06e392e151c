"""maned.run() against maned-run (DESIGN §7): every example and every golden vector gives
the same outputs, diagnostics and exit code both ways; --json validates against the
shipped JSON Schema; the documented example runs; a routed flow is lowered once per ABI;
bark_vm never loads maned."""
import json
import os
import re
import subprocess
import sys

import jsonschema
import pytest

import maned
from maned.cli import lint as lint_cli
from maned.cli import run as run_cli
from maned.cli.args import parse_args
from maned.diagnostics.printer import run_line
from maned.lowering import compiled, lower

from support.cli import EXAMPLES, ROOT, expand, run_tool
from gates import launcher
from support.vectors import CASES

SCHEMA = json.loads((ROOT / "reference" / "pipeline" / "report.schema.json").read_text())
EXAMPLE_FILES = sorted(p.name for p in EXAMPLES.glob("*.mnd"))
LINE = re.compile(r"^(\S+) : (scalar|\[([0-9x]+)\]) = \[?([-0-9, ]*)\]?$")


def blocks_of(stdout: str) -> dict[str, dict[str, tuple]]:
    """The flow blocks of maned-run's stdout, parsed back from text: flow -> name ->
    (shape, values). An independent reading of what the report holds as fields."""
    flows, current = {}, None
    for line in stdout.splitlines():
        if m := re.fullmatch(r"flow '(.+)' outputs:", line):
            current = flows.setdefault(m.group(1), {})
        elif current is not None and (m := LINE.match(line)):
            shape = () if m.group(2) == "scalar" else tuple(int(d) for d in m.group(3).split("x"))
            values = tuple(int(v) for v in m.group(4).split(",")) if m.group(4) else ()
            current[m.group(1)] = (shape, values)
        else:
            current = None
    return flows


def api_call(argv: list[str]) -> maned.Report:
    """The run maned-run would make for `argv`, made through the API."""
    opts = parse_args(argv)
    return maned.run(opts.script, inputs=opts.inputs, flow=opts.flow, verify=opts.verify,
                     threads=opts.threads, require_vm=opts.require_vm,
                     trap_overflow=opts.trap_overflow)


def same_both_ways(argv: list[str]) -> tuple[int, str, str, maned.Report]:
    code, out, err = run_tool(run_cli, argv)
    report = api_call(argv)
    assert report.exit_code == code
    assert [run_line(d.diagnostic()) for d in report.diagnostics] == [
        ln for ln in err.splitlines() if not ln.startswith(("note:", "progress:"))]
    assert {f.flow: {v.name: (v.shape, v.values) for v in f.outputs}
            for f in report.flows} == blocks_of(out)
    assert list(report.notes) == [ln[len("note: "):] for ln in err.splitlines()
                                  if ln.startswith("note: ")]
    return code, out, err, report


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_every_example_through_the_api_and_the_cli(name, workdir):
    same_both_ways([name, "--verify"])


VECTOR_CASES = [c for c in CASES if not (set(c.get("args", []) + c.get("args_before", []))
                                         & {"--help", "--version"})]


@pytest.mark.parametrize("case", VECTOR_CASES, ids=[c["name"] for c in VECTOR_CASES])
def test_every_vector_through_the_api_and_the_cli(case, workdir):
    script = case.get("script")
    if "source" in case:
        (workdir / "inline.mnd").write_text(expand(case["source"]), encoding="utf-8")
        script = "inline.mnd"
    argv = case.get("args_before", []) + [script] + case.get("args", [])
    try:
        parse_args(argv)
    except maned.pipeline.run_api.MnError:  # a command line the API has no form of
        code, _, err = run_tool(run_cli, argv)
        assert code == case["exit"] == 2 and err.endswith("[EUSAGE]\n")
        return
    code, out, _, report = same_both_ways(argv)
    assert (code, out) == (case["exit"], case["stdout"].lstrip("\n"))


# --- --json and the schema ---------------------------------------------------------------
def json_run(*argv) -> tuple[int, dict, str]:
    code, out, err = run_tool(run_cli, [*argv, "--json"])
    assert out.count("\n") == 1  # one document, nothing else on stdout
    doc = json.loads(out)
    jsonschema.validate(doc, SCHEMA)
    assert doc["exit_code"] == code and doc["schema_version"] == 1
    return code, doc, err


@pytest.mark.parametrize("example", ["sweep.mnd", "routed_layer.mnd", "hello.mnd"])
def test_to_json_is_valid_against_the_schema_as_returned(example):
    """Issue 33, point 9: what to_json() returns validates as it is (no tuples), and equals
    its own trip through json."""
    doc = maned.run(ROOT / "examples" / example, verify=True).to_json()
    jsonschema.validate(doc, SCHEMA)
    assert json.loads(json.dumps(doc)) == doc


def test_the_schema_is_a_valid_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_the_docs_name_every_field_of_the_schema():
    doc = (ROOT / "docs" / "api.md").read_text()

    def names(node):
        if isinstance(node, dict):
            for k, v in node.get("properties", {}).items():
                yield k
                yield from names(v)
            for key in ("items", "$defs", "oneOf"):
                sub = node.get(key)
                for s in (sub.values() if isinstance(sub, dict) and key == "$defs" else
                          sub if isinstance(sub, list) else [sub] if sub else []):
                    yield from names(s)
    missing = sorted({n for n in names(SCHEMA) if f"`{n}`" not in doc})
    assert missing == []


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_json_of_every_example_validates(name, workdir):
    code, doc, _ = json_run(name, "--verify")
    plain = run_tool(run_cli, [name, "--verify"])
    assert code == plain[0]
    assert {f["flow"]: {v["name"]: (tuple(v["shape"]), tuple(v["values"]))
                        for v in f["outputs"]} for f in doc["flows"]} == blocks_of(plain[1])


def test_json_of_a_routed_sweep_has_verify_and_job_records(workdir):
    code, doc, _ = json_run("sweep.mnd", "--verify")
    assert code == 0 and doc["verify"] == {"status": "PASS", "compared": ["fit"],
                                           "mismatches": [], "routed": ["fit"]}
    routed = [j for j in doc["jobs"] if "#r" in j["flow"]]
    assert {j["target"] for j in routed} == {"vm1", "vm2"}
    assert all(j["outcome"] == "ok" and j["pid"] for j in routed)
    assert len(routed) == len(doc["jobs"])  # init and epilogue are the definition's own work


def test_json_parse_error_is_a_coded_diagnostic(workdir):
    (workdir / "bad.mnd").write_text("mnd::quantres=2;\ncalc::lambda_flow f( {\n")
    code, doc, err = json_run("bad.mnd")
    assert code == 2 and doc["flows"] == [] and doc["verify"] is None
    first = doc["diagnostics"][0]
    assert (first["code"], first["stage"], first["line"], first["severity"]) == (
        "EPARSE", "parse", 2, "error")
    assert err.splitlines()[0].endswith("[EPARSE]")


def test_json_failed_flow_is_a_coded_diagnostic(workdir):
    (workdir / "fail.mnd").write_text(expand(
        "{H0}\ncalc::lambda_flow f(a) {\n    a a add r =\n} return r;\n"))
    code, doc, _ = json_run("fail.mnd")
    assert code == 1
    assert [(d["code"], d["stage"], d["line"]) for d in doc["diagnostics"]] == [
        ("ERUN", "run", None)]
    assert doc["diagnostics"][0]["message"].startswith("flow 'f': parameter 'a' has no value")


def test_json_verify_mismatch_has_its_details(workdir):
    bad = launcher(workdir, "skewed_vm")
    (workdir / "skew.mnd").write_text(expand(
        "{H0}\nin::a = [[1,2],[3,4]];\n" f'device::bad {{ host = "local"; vm = "{bad}"; }}\n'
        "calc::lambda_flow sq(a) @device(bad) {\n    a a matmul r =\n} return r;\n"))
    code, doc, _ = json_run("skew.mnd", "--verify")
    assert code == 1
    assert doc["verify"] == {"status": "MISMATCH", "compared": ["sq"], "mismatches": [
        {"flow": "sq", "output": "r", "kind": "slot", "slot": 0, "local": 7, "routed": 8,
         "local_shape": None, "routed_shape": None}], "routed": ["sq"]}
    assert doc["flows"][0]["outputs"][0]["values"] == [8, 10, 15, 22]


def test_json_for_a_refused_command_line(workdir):
    code, doc, err = json_run("hello.mnd", "--threads", "0")
    assert code == 2 and [d["code"] for d in doc["diagnostics"]] == ["EUSAGE"]
    assert err.endswith("[EUSAGE]\n")


@pytest.mark.parametrize("source, code", [("{H0}\nin::a = 1;\n", 0),
                                          ("{H0}\nin::a = ;\n", 1),
                                          ("mnd::quantres=2;\nzzz", 1)])
def test_lint_json_matches_the_text_form(maned_lint, workdir, source, code):
    text_code, text_out, _ = maned_lint(source)
    json_code, out, _ = run_tool(lint_cli, [str(workdir / "inline.mnd"), "--format", "json"])
    findings = json.loads(out)
    assert json_code == text_code == code
    assert [f"{f['file']}:{f['line']}:{f['col']}: {f['severity']}[{f['code']}]: "
            f"{f['message']}" for f in findings] == text_out.splitlines()
    assert all(list(f) == ["file", "line", "col", "severity", "code", "message"]
               for f in findings)


def test_lint_json_of_an_unreadable_file(tmp_path):
    code, out, err = run_tool(lint_cli, [str(tmp_path / "nope.mnd"), "--format", "json"])
    assert code == 2 and [f["code"] for f in json.loads(out)] == ["EIO"]
    assert err.endswith("[EIO]\n")


def test_the_documented_example_runs(monkeypatch):
    monkeypatch.chdir(ROOT)
    text = (ROOT / "docs" / "api.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    exec(compile(code, "docs/api.md", "exec"), {})


# --- compile once ------------------------------------------------------------------------
def test_a_routed_flow_is_lowered_and_encoded_once_per_abi(workdir, monkeypatch):
    """The plan-time check and the job share one lowering (and its bytes) per ABI."""
    calls, encodes = [], []
    real_lower, real_encode = lower.lower, lower.ir.encode_module
    monkeypatch.setattr(lower, "lower", lambda g, abi: calls.append((g.flow, abi))
                        or real_lower(g, abi))
    monkeypatch.setattr(lower.ir, "encode_module", lambda m: encodes.append(m)
                        or real_encode(m))
    v1 = launcher(workdir, "abi1_vm")
    (workdir / "two.mnd").write_text(expand(
        "{H0}\nin::a = [[1,2],[3,4]];\n" 'device::vm1 { host = "local"; }\n'
        f'device::old {{ host = "local"; vm = "{v1}"; }}\n'
        "calc::lambda_flow sq(a) @device(vm1) {\n    a a matmul r =\n} return r;\n"
        "calc::lambda_flow cube(a) @device(old) {\n    a a matmul a matmul r3 =\n"
        "} return r3;\n"))
    report = maned.run(workdir / "two.mnd", verify=True)
    assert report.exit_code == 0 and report.verify.status == "PASS"
    # the plan-time check at the default ABI 2 serves sq's job on vm1; cube's ABI-1 device
    # lowers it once more; nothing is lowered or encoded twice for one (flow, ABI)
    assert sorted(calls) == [("cube", 1), ("cube", 2), ("sq", 2)]
    assert len(encodes) == len(calls)


@pytest.mark.parametrize("rates, shared", [("2, 5", True), ("200, 300", False)])
def test_a_chain_is_built_and_lowered_once_per_distinct_round(monkeypatch, rates, shared):
    """Rounds of equal length are one program: built once, lowered once, sent under each
    round's own name; the remainder round is the only other program. Configurations that
    differ only in an lr that travels as an input (it fits int8) share them too; a larger
    lr stays a literal, one program per configuration. Verify passes either way."""
    calls = []
    real_lower = lower.lower
    monkeypatch.setattr(lower, "lower", lambda g, abi: calls.append(g.flow)
                        or real_lower(g, abi))
    source = expand("{H2}\nin::X = [[100,200],[200,100],[300,500],[400,200]];\n"
                    "in::y = [[300],[600],[400],[900]];\n"
                    'device::vm1 { host = "local"; }\n'
                    "calc::ml::linear_regression fit(X, y) @device(vm1) {\n"
                    f"    iters: 22, lr: [{rates}], features: 2, budget: 40\n"
                    "} return m0, l0, m1, l1;\n")
    report = maned.run(source=source, verify=True)
    assert report.exit_code == 0 and report.verify.status == "PASS"
    rounds = [j.flow for j in report.jobs if "#r" in j.flow]
    last = [r for r in rounds if r.startswith("fit#c0#")][-1]
    assert len(rounds) == 2 * (int(last.rsplit("#r", 1)[1]) + 1) > 4
    programs = 2 if shared else 4  # full-length rounds and the remainder, per program set
    remainder = "#r" + last.rsplit("#r", 1)[1]
    assert len(calls) == programs and sum(c.endswith(remainder) for c in calls) == programs // 2


def test_the_compiler_caches_by_graph_and_abi():
    checked = maned.pipeline.intake.compile_script(expand(
        "{H0}\ncalc::lambda_flow f(a) {\n    a a add r =\n} return r;\n"))
    g, c = checked.graphs["f"], compiled.Compiler()
    one = c.compile(g, 2, {"a": maned.Tensor.scalar(1)})
    two = c.compile(g, 2, {"a": maned.Tensor((2,), (1, 2))})
    c.compile(g, 1, {"a": maned.Tensor.scalar(1)})
    assert c.lowerings == 2 and one.lowered is two.lowered
    assert (one.rank0, two.rank0) == ((True,), (False,))


# --- bark_vm stands alone ----------------------------------------------------------------
def test_every_bark_vm_module_imports_without_maned():
    """Every module of bark_vm (its `__main__` entry points aside: importing one runs it)."""
    modules = sorted(".".join(("bark_vm",) + p.relative_to(ROOT / "bark_vm").with_suffix("")
                              .parts).removesuffix(".__init__")
                     for p in (ROOT / "bark_vm").rglob("*.py") if p.stem != "__main__")
    code = ("import importlib, sys\n"
            f"for m in {modules!r}:\n"
            "    importlib.import_module(m)\n"
            "bad = sorted(m for m in sys.modules if m == 'maned' or m.startswith('maned.'))\n"
            "assert not bad, bad\n"
            "print(sum(1 for m in sys.modules if m.startswith('bark_vm')))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, cwd="/")
    assert p.returncode == 0, p.stderr
    assert len(modules) > 20 and int(p.stdout) >= len(modules)


# --- what the API must survive ----------------------------------------------------------
ROUTED_DAG = ("{H0}\nin::a = [[1,2],[3,4]];\n" 'device::vm1 { host = "local"; }\n'
              "calc::lambda_flow first(a) {\n    a a add b =\n} return b;\n"
              "calc::lambda_flow second(b) @device(vm1) {\n    b b matmul c =\n} return c;\n")


def test_a_trace_sink_that_raises_is_reported_and_the_run_finishes(workdir):
    seen = []

    def sink(record):
        seen.append(record)
        if record.get("target") == "vm1":
            raise RuntimeError("sink broke")
    report = maned.run(source=expand(ROUTED_DAG), base_dir=workdir, trace=sink)
    assert report.outputs("second")["c"].data == (28, 40, 60, 88)
    assert [(d.code, d.message) for d in report.diagnostics] == [
        ("EIO", "the trace failed (RuntimeError: sink broke); the run went on without it")]
    assert report.exit_code == 2 and len(report.jobs) == 2


def test_an_unwritable_trace_file_is_a_coded_line(workdir):
    (workdir / "dag.mnd").write_text(expand(ROUTED_DAG))
    code, out, err = run_tool(run_cli, ["dag.mnd", "--trace", "/dev/full"])
    assert code == 2 and "flow 'second' outputs:" in out
    assert err.endswith("[EIO]\n") and "Traceback" not in err
    assert all(ln.endswith("[EIO]") for ln in err.splitlines())


def test_a_refused_script_leaves_the_trace_file_alone(workdir):
    (workdir / "t.jsonl").write_text("keep me\n")
    (workdir / "bad.mnd").write_text(expand("{H0}\ncalc::lambda_flow f() {\n    zz r =\n"
                                            "} return r;\n"))
    code, _, err = run_tool(run_cli, ["bad.mnd", "--trace", "t.jsonl"])
    assert code == 1 and err.endswith("[E003]\n")
    assert (workdir / "t.jsonl").read_text() == "keep me\n"
    code, _, err = run_tool(run_cli, ["bad.mnd", "--trace", "/nonexistent/dir/t.jsonl"])
    assert code == 1 and err.endswith("[E003]\n")  # the script's error, as before


def test_trap_overflow_with_an_unroutable_flow_reports_the_routing_refusal(workdir):
    (workdir / "g.mnd").write_text(expand(
        "{H0}\nin::g = 3;\n" 'device::vm1 { host = "local"; }\n'
        "calc::lambda_flow f() @device(vm1) {\n    g g add r =\n} return r;\n"))
    code, _, err = run_tool(run_cli, ["g.mnd", "--trap-overflow"])
    assert (code, err) == (1, "error: flow 'f' reads in::g; a routed flow receives only its "
                              "parameters - make it a parameter [EPLAN]\n")


@pytest.mark.parametrize("value", [maned.Tensor((), (2 ** 40,)), maned.Tensor((1,), (True,))])
def test_a_tensor_input_meets_the_rules_of_a_parsed_one(value):
    report = maned.run(source=expand("{H0}\ncalc::lambda_flow f(x) {\n    x x add r =\n"
                                     "} return r;\n"), inputs={"x": value})
    assert report.exit_code == 2
    assert [d.code for d in report.diagnostics] == ["EUSAGE"]
    assert report.diagnostics[0].message.startswith("bad input x: ")


def test_out_dir_takes_a_path_of_any_form_and_refuses_a_non_path(workdir, tmp_path):
    for given in (str(tmp_path), tmp_path, os.fsencode(tmp_path)):
        report = maned.run(workdir / "csv_io.mnd", out_dir=given)
        assert report.exit_code == 0 and [(f.name, f.path) for f in report.files] == [
            ("scaled", str(tmp_path / "scaled.csv"))]
    with pytest.raises(TypeError):
        maned.run(workdir / "csv_io.mnd", out_dir=5)
    assert not (workdir / "scaled.csv").exists()


def test_a_sweeps_report_says_each_configurations_value_and_the_lowest_loss():
    """Issue 23, point 8: DESIGN §6's sweep: lr 2, 5, 10 with §6's losses 1, 0, 0; the
    lowest, 0, is reached by configurations 1 and 2; the JSON validates."""
    report = maned.run(EXAMPLES / "sweep.mnd")
    [sweep] = report.sweeps
    assert (sweep.definition, sweep.algorithm, sweep.key) == ("fit", "linear_regression", "lr")
    assert [(c.value, c.outputs, c.loss) for c in sweep.configurations] == [
        (2, ("m0", "l0"), 1), (5, ("m1", "l1"), 0), (10, ("m2", "l2"), 0)]
    assert sweep.lowest == (1, 2)
    losses = {v.name: v.values[0] for f in report.flows for v in f.outputs if v.name[0] == "l"}
    assert [c.loss for c in sweep.configurations] == [losses[c.outputs[1]]
                                                     for c in sweep.configurations]
    jsonschema.validate(json.loads(json.dumps(report.to_json())), SCHEMA)
    hmm = maned.run(source=(EXAMPLES / "hmm.mnd").read_text().replace(
        "iters: 3", "iters: [2, 3]").replace("return model, score;",
                                             "return m0, s0, m1, s1;"))
    assert [(c.value, c.loss) for c in hmm.sweeps[0].configurations] == [(2, None), (3, None)]
    assert hmm.sweeps[0].lowest == ()  # a score is no loss
