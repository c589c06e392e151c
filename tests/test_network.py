"""maned-run against Bark workers over CDP (issue: the network worker): DESIGN §6's sweep on
two workers, credentials through env(), AUTH_FAILED, the async path, a worker stopped
mid-sweep, status::, and no secret in any output."""
import json
import time

import pytest

from bark_vm.container import free_port
from support.cli import EXAMPLES, SEED_SWEEP_NOTE
from support.processes import MANED_LINT, MANED_RUN, maned_run_child, run as run_child, start
from support.scripts import FIT_DATA, H0, HML, env, sweep_with
from support.scripts import device as device_block
from support.status import status_of
from support.workers import Workers

pytestmark = pytest.mark.docker

PASS = "verify: PASS (compared local interpreter vs routed targets)"
SECRETS = {"P_REX": "rex-pass-1f9a", "P_BOB": "bob-pass-77c2"}


@pytest.fixture(scope="module")
def workers():
    return Workers()


@pytest.fixture(scope="module")
def pair(workers):
    with workers.start("rex", "test", SECRETS["P_REX"]) as rex, \
            workers.start("bob", "test", SECRETS["P_BOB"]) as bob:
        yield rex, bob


def status(worker) -> dict:
    return status_of(worker, 5)


def device(alias: str, worker, var: str) -> str:
    return device_block(alias, host=worker.host, port=worker.port, user="test",
                        password=env(var))


def sweep_script(rex, bob, iters=400, extra="") -> str:
    text = sweep_with(vm1=device("vm1", rex, "P_REX"), vm2=device("vm2", bob, "P_BOB"))
    return text.replace("iters: 400,", f"iters: {iters},").replace("features: 2",
                                                                    "features: 2" + extra)


def run(tmp_path, text, *args, env=None, background=False):
    script = tmp_path / "script.mnd"
    script.write_text(text)
    env = env if env is not None else SECRETS
    if background:
        return start(MANED_RUN, script, *args, env=env)
    return maned_run_child(script, *args, env=env, timeout=300)


def no_secret_in(*texts):
    for text in texts:
        for secret in SECRETS.values():
            assert secret not in text


def test_the_sweep_on_two_workers_prints_the_local_block(pair, tmp_path):
    rex, bob = pair
    local = run_child(MANED_RUN, EXAMPLES / "sweep.mnd", "--verify", timeout=300)
    code, out, err = run(tmp_path, sweep_script(rex, bob), "--verify")
    assert (code, err) == (0, SEED_SWEEP_NOTE)
    assert out == local.stdout and out.endswith(PASS + "\n")
    no_secret_in(out, err)


def test_a_wrong_password_is_auth_failed_and_runs_nothing(pair, tmp_path):
    rex, bob = pair
    before = status(rex)
    code, out, err = run(tmp_path, sweep_script(rex, bob),
                         env={"P_REX": "not-the-password", "P_BOB": SECRETS["P_BOB"]})
    # rex's configurations (c0, c2) fail alone; bob's (c1) finishes and prints
    assert code == 1 and [ln.split(" : ")[0] for ln in out.splitlines()] == [
        "flow 'fit' outputs:", "m1", "l1"]
    lines = err.splitlines()
    assert len(lines) == 3 and "m0, l0 had lr 2 (failed)" in lines[0]
    for k, line in zip((0, 2), lines[1:]):
        assert line.startswith(f"error: flow 'fit#c{k}#r0': ")
        assert f"device 'vm1' ({rex.host}:{rex.port}): the worker refused the user name or " \
               "password (AUTH_FAILED)" in line and line.endswith("[ERUN]")
    after = status(rex)
    for counter in ("jobs_sync", "jobs_async", "jobs_done"):
        assert after[counter] == before[counter]
    assert "not-the-password" not in out + err
    no_secret_in(out, err)


def test_an_unset_env_secret_is_refused_before_any_login(pair, tmp_path):
    rex, bob = pair
    code, out, err = run(tmp_path, sweep_script(rex, bob), env={"P_BOB": SECRETS["P_BOB"],
                                                                "P_REX": ""})
    assert (code, out) == (1, "")
    assert err == ("error: device 'vm1': pass = env(\"P_REX\") but the environment variable "
                   "P_REX is unset or empty [EPLAN]\n")


def test_a_literal_password_draws_w014_and_is_never_printed(pair, tmp_path):
    rex, _ = pair
    script = tmp_path / "lit.mnd"
    script.write_text(H0 + "in::a = [[1,2],[3,4]];\n"
                      + device_block("rex", host=rex.host, port=rex.port, user="test",
                                     password=SECRETS["P_REX"])
                      + "calc::lambda_flow mm(a) @device(rex) {\n    a a matmul r =\n"
                      "} return r;\n")
    lint = run_child(MANED_LINT, script)
    assert lint.returncode == 0 and "warning[W014]" in lint.stdout
    code, out, err = run(tmp_path, script.read_text(), "--verify")
    assert code == 0 and out.endswith(PASS + "\n")
    no_secret_in(lint.stdout, lint.stderr, out, err)


def test_a_large_envelope_travels_async_with_the_same_result(pair, tmp_path):
    rex, _ = pair
    n = 130  # a 130x130 int32 input: 67600 bytes, over the 64 KiB sync limit
    values = ",".join(str((i * 7919) % 2001 - 1000) for i in range(n * n))
    head = H0 + device("rex", rex, "P_REX")
    body = "calc::lambda_flow big(m) @device(rex) {\n    m transpose t =\n    m t add s =\n" \
           "} return s;\n"
    before = status(rex)
    code, out, err = run(tmp_path, head + body, "--verify", "--in", f"m={n}x{n}:{values}")
    assert (code, err) == (0, "") and out.endswith(PASS + "\n")
    mid = status(rex)
    assert mid["jobs_async"] == before["jobs_async"] + 1
    assert mid["jobs_sync"] == before["jobs_sync"]
    small = ",".join(values.split(",")[:100])
    code, out_small, _ = run(tmp_path, head + body, "--verify", "--in", f"m=10x10:{small}")
    assert code == 0 and status(rex)["jobs_sync"] == mid["jobs_sync"] + 1


def fit_on(worker, var: str, extra: str = "") -> str:
    """The §6 fit with 3,000 iterations routed to one worker: a default round (511
    iterations) is a request of about 131 KB, twice the sync limit."""
    return (HML + FIT_DATA + device("rex", worker, var)
            + "calc::ml::linear_regression fit(X, y) @device(rex) {\n"
            f"    iters: 3000, lr: 2, features: 2{extra}\n}} return m, l;\n")


@pytest.mark.parametrize("extra, travels", [("", "sync"), (", budget: 4096", "async")])
def test_default_rounds_to_a_worker_stay_under_the_sync_limit(pair, tmp_path, extra, travels):
    """D10: without `budget:`, every round of a definition routed to a CDP worker travels
    synchronously (its request is under 64 KiB); `budget: 4096`, written out, is obeyed
    and its rounds go submit-and-poll. The numbers are the same, and the local run's."""
    rex, _ = pair
    before = status(rex)
    code, out, err = run(tmp_path, fit_on(rex, "P_REX", extra), "--verify", "--json")
    report = json.loads(out)
    assert (code, report["verify"]["status"]) == (0, "PASS"), err
    rounds = [j for j in report["jobs"] if "#r" in j["flow"]]
    after = status(rex)
    sync, async_ = (after[k] - before[k] for k in ("jobs_sync", "jobs_async"))
    assert (sync, async_) == ((len(rounds), 0) if travels == "sync" else (0, len(rounds)))


def test_sync_sized_rounds_give_the_explicit_budgets_numbers(pair, tmp_path):
    """More rounds of fewer iterations (the chunking changes), not one number."""
    rex, _ = pair
    values = []
    for extra in ("", ", budget: 4096"):
        code, out, _ = run(tmp_path, fit_on(rex, "P_REX", extra), "--json")
        assert code == 0
        values.append([v for f in json.loads(out)["flows"] for v in f["outputs"]])
    assert values[0] == values[1] and values[0]


def test_status_prints_a_block_before_the_flows(pair, tmp_path):
    rex, _ = pair
    text = (H0 + device("rex", rex, "P_REX") + "status::rex;\nin::a = 1;\n"
            "calc::lambda_flow f(a) {\n    a a add r =\n} return r;\n")
    code, out, err = run(tmp_path, text)
    lines = out.splitlines()
    assert (code, err) == (0, "")
    assert lines[0] == "device 'rex' status:"
    assert [ln.split(":")[0].strip() for ln in lines[1:12]] == [
        "alias", "proto", "kind", "ir", "rf_slots", "jobs_running", "jobs_capacity",
        "max_payload", "uptime_s", "requests", "ops"]
    assert lines[1] == "  alias: rex" and lines[3] == "  kind: x86"
    assert lines[12:] == ["flow 'f' outputs:", "r : scalar = 2"]


def test_a_status_block_on_a_down_worker_fails_only_itself(tmp_path):
    """Issue 23, point 2: the local flow still runs and prints; the status block and the
    flow routed to the down worker each get their line; --json names the cause."""
    port = free_port()  # nothing listens there
    text = (H0 + device_block("bob", host=f"127.0.0.1:{port}") + "status::bob;\nin::a = 1;\n"
            "calc::lambda_flow f(a) {\n    a a add r =\n} return r;\n"
            "calc::lambda_flow g(a) @device(bob) {\n    a a mul r =\n} return r;\n")
    code, out, err = run(tmp_path, text)
    assert code == 1 and out == "flow 'f' outputs:\nr : scalar = 2\n"
    down = f"device 'bob' (127.0.0.1:{port}): connect_failed: Connection refused [ERUN]"
    assert err.splitlines() == [f"error: status::bob: {down}", f"error: flow 'g': {down}"]
    code, out, _ = run(tmp_path, text, "--json")
    report = json.loads(out)
    assert [f["flow"] for f in report["flows"]] == ["f"]
    assert [d["cause"] for d in report["diagnostics"]] == ["connect_failed"] * 2


def test_a_worker_stopped_mid_sweep_moves_its_configuration_to_the_other(workers, tmp_path):
    """bob is frozen once it has served ten rounds (so its chain, hundreds of rounds long,
    cannot finish first), then stopped: the round it was serving fails connect_failed, and
    its configuration goes on on rex from that round (issue 37, point 2)."""
    with workers.start("rex", "test", SECRETS["P_REX"]) as rex, \
            workers.start("bob", "test", SECRETS["P_BOB"]) as bob:
        trace = tmp_path / "t.jsonl"
        proc = run(tmp_path, sweep_script(rex, bob, iters=4000, extra=", budget: 64"),
                   "--trace", str(trace), background=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            lines = trace.read_text().splitlines() if trace.exists() else []
            if sum('"target": "vm2"' in ln for ln in lines) > 10:
                break
            time.sleep(0.05)
        workers.pause(bob)
        workers.stop(bob)
        out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0
    assert [ln.split(" : ")[0] for ln in out.splitlines()] == [
        "flow 'fit' outputs:", "m0", "l0", "m1", "l1", "m2", "l2"]
    move, sweep = err.splitlines()
    assert move.startswith("note: fit#c1 moved from 'vm2' to 'vm1' at round ")
    assert f"device 'vm2' ({bob.host}:{bob.port}): connect_failed" in move
    assert sweep.startswith("note: sweep 'fit' over lr:") and "(failed)" not in sweep
    no_secret_in(out, err)
