"""A pool (issue 14, Build 4; docs/language.md "Pools"): `device::fleet { pool = true; }`
stands for every worker discovery finds, sorted by reported alias; a sweep routed to it
puts configuration i on member i mod N, N and the order fixed once per plan, so the output
never depends on timing. Workers here are real bark-workers, probed by unicast."""
from contextlib import ExitStack

import pytest

from bark_vm.container import free_port, worker_process
from maned.cli import run as run_cli

from support.cli import only_sweep_notes, run_tool
from support.pools import N_CONFIGS, POOL, configurations_by_target, six_rate_sweep
from support.workers import LONG_WINDOW_MS
from support.workers import probes as unicast

PASSWORD = "pool-pass-8b1f"
PASS = "verify: PASS (compared local interpreter vs routed targets)\n"


def workers(stack: ExitStack, aliases) -> list[int]:
    """Start a worker per alias, each answering discovery on a free UDP port of its own."""
    ports = []
    for alias in aliases:
        ports.append(free_port(udp=True))
        stack.enter_context(worker_process(alias, "test", PASSWORD,
                                           ("--discovery-port", str(ports[-1]))))
    return ports


def probes(ports) -> list[str]:
    return unicast(*ports) + ["--discover-timeout", LONG_WINDOW_MS]


@pytest.fixture
def pooled(workdir, monkeypatch):
    monkeypatch.setenv("P_POOL", PASSWORD)
    (workdir / "pool.mnd").write_text(six_rate_sweep(True))
    (workdir / "local.mnd").write_text(six_rate_sweep(False))
    return workdir / "pool.mnd", run_tool(run_cli, [str(workdir / "local.mnd")])[1]


def test_a_sweep_fans_across_every_member_and_grows_with_the_pool(pooled, tmp_path):
    """Three workers, then four: the same command, unedited, uses every one, configuration i
    on the i mod N-th by alias, and prints the same block (the local run's) both times."""
    script, local = pooled
    with ExitStack() as stack:
        ports = workers(stack, ["w-b", "w-a", "w-c"])
        trace = tmp_path / "three.jsonl"
        three = run_tool(run_cli, [str(script), *probes(ports), "--verify", "--trace",
                                   str(trace)])
        assert three[:2] == (0, local + PASS) and only_sweep_notes(three[2])
        assert configurations_by_target(trace) == {
            i: {["w-a", "w-b", "w-c"][i % 3]} for i in range(N_CONFIGS)}
        ports += workers(stack, ["w-0"])
        trace = tmp_path / "four.jsonl"
        four = run_tool(run_cli, [str(script), *probes(ports), "--verify", "--trace",
                                  str(trace)])
        assert four == three
        assert configurations_by_target(trace) == {
            i: {["w-0", "w-a", "w-b", "w-c"][i % 4]} for i in range(N_CONFIGS)}


def test_a_plain_flow_on_a_pool_runs_on_its_first_member(maned_run, monkeypatch, tmp_path):
    monkeypatch.setenv("P_POOL", PASSWORD)
    with ExitStack() as stack:
        ports = workers(stack, ["w-2", "w-1"])
        code, out, err = maned_run(*probes(ports), "--trace", str(tmp_path / "t.jsonl"),
                                   source="{H0}\nin::a = [[1,2],[3,4]];\n" + POOL + "\n"
                                   "calc::lambda_flow f(a) @device(fleet) {\n    a a add r =\n"
                                   "} return r;\n")
    assert (code, err) == (0, "") and out == "flow 'f' outputs:\nr : [2x2] = [2, 4, 6, 8]\n"
    assert '"target": "w-1"' in (tmp_path / "t.jsonl").read_text()


@pytest.mark.parametrize("aliases, extra, line", [
    ([], "", "error: device 'fleet' (pool): no worker answered discovery (probed "),
    (["twin", "twin"], "", "error: device 'fleet': pool: two workers answer as 'twin' "),
    (["vm1"], 'device::vm1 { host = "local"; }\n', "error: device 'fleet' (pool): the worker "
     "'vm1' it found is also a device:: block of this script; rename one [EPLAN]"),
    (["local"], "", "error: device 'fleet' (pool): a worker answers as 'local', a name the "
     "run keeps for its own targets; give the worker at 127.0.0.1:"),
    (["vm"], "", "error: device 'fleet' (pool): a worker answers as 'vm', a name the "),
])
def test_a_pool_that_cannot_be_formed_is_refused_before_anything_runs(
        maned_run, monkeypatch, aliases, extra, line):
    monkeypatch.setenv("P_POOL", PASSWORD)
    with ExitStack() as stack:
        ports = workers(stack, aliases) or [free_port(udp=True)]
        # nobody is asked to answer in the first case: its short window is its outcome
        window = "300" if not aliases else LONG_WINDOW_MS
        code, out, err = maned_run(*unicast(*ports), "--discover-timeout", window, source=(
            "{H0}\nin::a = 1;\n" + POOL + "\n" + extra + "calc::lambda_flow f(a) "
            "@device(fleet) {\n    a a add r =\n} return r;\n"))
    assert (code, out) == (1, "") and err.startswith(line) and err.endswith("[EPLAN]\n")


@pytest.mark.parametrize("fields, code, text", [
    ("pool = true;", "W018", "device 'bob' is a pool (pool = true), an extension of this "
     "implementation: upstream Maned does not run it"),
    ('pool = true; host = "h";', "E032", "device 'bob': host and pool = true exclude each "
     "other (discovery gives the worker's address); drop one"),
    ("pool = true; discover = true;", "E032", "device 'bob': discover and pool = true exclude "
     "each other (a pool discovers already); drop one"),
    ("pool = 3;", "E032", "device 'bob': pool takes true or false (or 1 or 0)"),
])
def test_pool_lint(maned_lint, fields, code, text):
    _, out, _ = maned_lint("{H0}\ndevice::bob { " + fields + " }\n")
    assert f"[{code}]: {text}" in out
