"""`--device URL|local` (issue 14, Build 3; spec/language.md §9): one target, named 'device',
for every flow and every Tier A round whatever the script's @device says (ML init and
epilogue stay in the coordinator, R29); credentials from flags, env:NAME or
$MANED_DEVICE_PASS, read when the plan runs (R22) and never printed."""
import json

import pytest

from bark_vm.container import worker_process
from maned.cli import run as run_cli

from support.cli import EXAMPLES, SEED_SWEEP_NOTE, run_tool
from support.raw_http import login

PASSWORD = "flag-pass-0c3d"
PASS = "verify: PASS (compared local interpreter vs routed targets)\n"


@pytest.fixture(scope="module")
def worker():
    with worker_process("w", "test", PASSWORD) as w:
        yield w


def targets(trace) -> dict[str, set[str]]:
    """flow -> the targets its jobs started on."""
    seen: dict[str, set[str]] = {}
    for line in trace.read_text().splitlines():
        r = json.loads(line)
        if r["event"] == "start":
            seen.setdefault(r["flow"], set()).add(r["target"])
    return seen


@pytest.mark.parametrize("creds", [["--device-pass", "env:P_FLAG"], []])
def test_the_seed_sweep_runs_on_the_device_and_verifies(worker, monkeypatch, tmp_path,
                                                        creds):
    """The sweep names vm1 and vm2 (host = "local"); --device sends every round to the
    worker instead, the password from env:NAME or from MANED_DEVICE_PASS."""
    monkeypatch.setenv("P_FLAG" if creds else "MANED_DEVICE_PASS", PASSWORD)
    trace = tmp_path / "t.jsonl"
    code, out, err = run_tool(run_cli, [str(EXAMPLES / "sweep.mnd"), "--device",
                                        f"http://127.0.0.1:{worker.port}", "--device-user",
                                        "test", *creds, "--verify", "--trace", str(trace)])
    local = run_tool(run_cli, [str(EXAMPLES / "sweep.mnd")])[1]
    assert (code, err) == (0, SEED_SWEEP_NOTE) and out == local + PASS
    seen = targets(trace)
    # every round on the device; the init and epilogue in the coordinator (R29)
    rounds = {f for f in seen if "#r" in f}
    assert {f.rsplit("#r", 1)[0] for f in rounds} == {f"fit#c{c}" for c in range(3)}
    assert all(seen[f] == {"device"} for f in rounds)
    assert {f: seen[f] for f in seen if f not in rounds} == {
        **{f"fit#c{c}#init": {"coordinator"} for c in range(3)}, "fit": {"coordinator"}}
    assert PASSWORD not in trace.read_text()


def test_device_local_overrides_the_scripts_routing(maned_run, tmp_path):
    code, out, err = maned_run("--device", "local", "--verify", "--trace",
                               str(tmp_path / "t.jsonl"), source=(
        "{H0}\nin::a = [[1,2],[3,4]];\ndevice::far { host = \"10.255.255.1\"; }\n"
        "calc::lambda_flow f(a) @device(far) {\n    a a add r =\n} return r;\n"
        "calc::lambda_flow g(a) {\n    a a mul q =\n} return q;\n"))
    assert (code, err) == (0, "")
    assert out == ("flow 'f' outputs:\nr : [2x2] = [2, 4, 6, 8]\nflow 'g' outputs:\n"
                   "q : [2x2] = [1, 4, 9, 16]\n" + PASS)
    assert targets(tmp_path / "t.jsonl") == {"f": {"device"}, "g": {"device"}}


BAD_HOST = ("the host is not a valid name: each dot-separated label is 1 to 63 characters, the "
            "whole name at most 253")
SCRIPT = "{H0}\nin::a = 1;\ncalc::lambda_flow f(a) {\n    a a add r =\n} return r;\n"


def test_failures_name_the_device(maned_run):
    code, out, err = maned_run("--device", "http://127.0.0.1:1", source=SCRIPT)
    assert (code, out) == (1, "")
    assert err == ("error: flow 'f': device 'device' (127.0.0.1:1): connect_failed: Connection "
                   "refused [ERUN]\n")


def test_a_local_only_op_is_refused_before_anything_runs(maned_run):
    code, out, err = maned_run("--device", "local", source=(
        "{H0}\nin::a = -1;\ncalc::lambda_flow f(a) {\n    a abs r =\n} return r;\n"))
    assert (code, out) == (1, "")
    assert err == ("error: --device: flow 'f' uses ops with no binary-IR opcode (abs); it "
                   "cannot run on a worker [EPLAN]\n")


@pytest.mark.parametrize("argv, line", [
    (["--device-user", "u"], "--device-user without --device: credentials need a device "
     "(--device http://HOST:PORT) [EUSAGE]"),
    (["--device-token", "t", "--device-pass", "p"], "--device-pass, --device-token without "
     "--device: credentials need a device (--device http://HOST:PORT) [EUSAGE]"),
    (["--device", "local", "--device-user", "u"], "--device local takes no credentials (a Bark "
     "VM child needs none) [EUSAGE]"),
    (["--device", "http://h:1", "--device-token", "t", "--device-user", "u"],
     "--device-token excludes --device-user and --device-pass [EUSAGE]"),
    (["--device", "http://h:1", "--device-pass", "p"], "--device-pass needs --device-user "
     "[EUSAGE]"),
    (["--device", "http://h:1", "--device-user", "u", "--device-pass", "env:UNSET_P9"],
     "device 'device': --device-pass env:UNSET_P9 but the environment variable UNSET_P9 is "
     "unset or empty [EPLAN]"),
    (["--device", "http://h:1", "--device-user", "u"], "device 'device': --device-user needs "
     "a password: give --device-pass or set MANED_DEVICE_PASS [EPLAN]"),
    (["--device", "https://h:1"], "device 'device': https:// is not supported: CDP is "
     "plaintext HTTP on a trusted network [EPLAN]"),
    (["--device", "http://u:hunter2@h:1"], "device 'device': a host with credentials in it "
     "(user:pass@) is refused; give them as user and pass (--device-user, --device-pass) "
     "[EPLAN]"),
    (["--device", "http://"], "device 'device': the host is empty (give host = "
     "\"HOST[:PORT]\") [EPLAN]"),
    (["--device", "http://h:\u00b2"], "device 'device': bad port (not a number) in host "
     "[EPLAN]"),
    # issue 24, point 4: the host forgotten, the password would have been shown as a port
    (["--device", "deploy:Hunter2-Secret"], "device 'device': bad port (not a number) in "
     "host [EPLAN]"),
    # issue 24, point 9: a DNS label over 63 characters was an internal UnicodeError
    (["--device", f"http://{'a' * 64}.example:4780"], f"device 'device': {BAD_HOST} [EPLAN]"),
    (["--device", "http://a..b:4780"], f"device 'device': {BAD_HOST} [EPLAN]"),
])
def test_bad_device_flags_are_refused_before_anything_runs(maned_run, monkeypatch, argv, line):
    monkeypatch.delenv("MANED_DEVICE_PASS", raising=False)
    code, out, err = maned_run(*argv, source=SCRIPT)
    assert out == "" and err == f"error: {line}\n"
    assert code == (2 if line.endswith("[EUSAGE]") else 1)


def test_a_pre_issued_token_from_the_environment(worker, maned_run, monkeypatch):
    status, answer = login(worker, "test", PASSWORD)
    assert status == 200
    monkeypatch.setenv("TOK_FLAG", answer["token"])
    code, out, err = maned_run("--device", f"127.0.0.1:{worker.port}", "--device-token",
                               "env:TOK_FLAG", source=SCRIPT)
    assert (code, out, err) == (0, "flow 'f' outputs:\nr : scalar = 2\n", "")


def test_an_override_and_its_device_spec_never_show_their_secrets():
    from maned import DeviceOverride
    shown = repr(DeviceOverride("http://h", "u", "pass-in-repr", "token-in-repr"))
    assert "pass-in-repr" not in shown and "token-in-repr" not in shown
    resolved = DeviceOverride("http://h", "u", "env:PASS_IN_SPEC").spec({"PASS_IN_SPEC": "p-9"})
    assert resolved.fields["pass"] == "p-9" and "p-9" not in repr(resolved)
