"""Routing to Bark VMs (issue: Bark VM and routing): routed results equal local ones, --verify,
--require-vm, refusals, the trace, two VMs overlapping, a VM killed mid-run."""
import json
import os
import re
import signal
import sys
import time
from pathlib import Path

import pytest

import maned
import maned.pipeline.intake

from support.cli import EXAMPLES, SEED_SWEEP_NOTE, expand, only_sweep_notes
from gates import Gate, launcher
from maned.cli.run import INTERRUPTED
from support.processes import MANED_RUN, gone, run, start
from support.scripts import device, sweep_with
from support.signals import default_sigint, other_threads, signal_thread

VMS = 'device::vm1 { host = "local"; }\ndevice::vm2 { host = "local"; }\n'
PASS = "verify: PASS (compared local interpreter vs routed targets)"


def test_routed_flow_prints_the_local_block_and_verifies(maned_run):
    source = "{H0}\nin::a = [[1,2],[3,4]];\nin::b = [[5,6],[7,8]];\n" + VMS + (
        "calc::lambda_flow multiply(a, b) @device(vm1) {\n    a b matmul result =\n"
        "} return result;\n")
    code, out, err = maned_run("--verify", source=source)
    assert (code, err) == (0, "")
    assert out == f"flow 'multiply' outputs:\nresult : [2x2] = [19, 22, 43, 50]\n{PASS}\n"


def test_a_hyphenated_alias_routes_and_verifies(maned_run):
    source = ("{H0}\nin::a = [[1,2],[3,4]];\ndevice::bob-i3 { host = \"local\"; }\n"
              "calc::lambda_flow f(a) @device(bob-i3) {\n    a a add r =\n} return r;\n")
    code, out, err = maned_run("--verify", "--trace", "t.jsonl", source=source)
    assert (code, err) == (0, "")
    assert out == f"flow 'f' outputs:\nr : [2x2] = [2, 4, 6, 8]\n{PASS}\n"
    assert '"target": "bob-i3"' in open("t.jsonl").read()


def test_rank0_results_come_back_as_scalars(workdir):
    """R5: TV-01 routed: rank-0 travels as [1] and comes back as a scalar (shape ()) again."""
    source = "{H0}\nin::a = 2;\nin::b = 3;\nin::c = 4;\n" + VMS + (
        "calc::lambda_flow arithmetic(a, b, c) @device(vm2) {\n"
        "    a b add c mul sum_then_scale =\n    b c mul a add scale_then_sum =\n"
        "} return sum_then_scale, scale_then_sum;\n")
    report = maned.run(source=expand(source), verify=True)
    assert (report.exit_code, report.diagnostics, report.notes) == (0, (), ())
    assert (report.statuses, report.prints, report.files) == ((), (), ())  # nothing else shown
    assert [f.flow for f in report.flows] == ["arithmetic"]
    assert report.outputs("arithmetic") == {"sum_then_scale": maned.Tensor((), (20,)),
                                            "scale_then_sum": maned.Tensor((), (14,))}
    assert (report.verify.status, report.verify.compared) == ("PASS", ("arithmetic",))


def test_a_routed_result_feeds_a_local_flow(workdir):
    source = "{H0}\nin::a = [[1,2],[3,4]];\nin::b = [[5,6],[7,8]];\n" + VMS + (
        "calc::lambda_flow offload(a, b) @device(vm1) {\n    a b matmul remote_matrix =\n"
        "} return remote_matrix;\n"
        "calc::lambda_flow postprocess(remote_matrix) {\n    remote_matrix tensor_sum total =\n"
        "} return total;\n")
    report = maned.run(source=expand(source), verify=True)
    assert (report.exit_code, report.diagnostics, report.notes) == (0, (), ())
    assert [f.flow for f in report.flows] == ["offload", "postprocess"]
    assert report.outputs("postprocess") == {"total": maned.Tensor((1,), (134,))}
    assert (report.verify.status, report.verify.compared) == ("PASS", ("offload",))
    engine = maned.run(source=expand(source), verify=True, reference=False)
    assert (engine.verify.status, engine.verify.compared, engine.verify.routed) == (
        "PASS", ("offload", "postprocess"), ("offload",))  # the engine's flow checked too


def _routed(example: str, aliases: str, sweep: tuple[str, str] | None = None) -> str:
    """An example ML script with @device on its definition (and, optionally, a sweep)."""
    text = (EXAMPLES / example).read_text()
    head, _, rest = text.partition("calc::ml::")
    algo_line, _, body = rest.partition("{")
    if sweep:
        key, values = sweep
        body = "\n".join(ln for ln in body.split("\n") if not ln.strip().startswith(key + ":"))
        body = f"\n    {key}: {values}," + body
        end = body.index("} return")
        tail = body[end:]
        body = body[:end] + "} return m0, s0, m1, s1;" + tail[tail.index(";") + 1:]
        body = body.replace("model, X", "m0, X").replace("model O", "m0 O").replace(
            "model X", "m0 X").replace("model probe", "m0 probe").replace("(model,", "(m0,")
    return head + VMS + "calc::ml::" + algo_line.rstrip() + f" @device({aliases}) {{" + body


TIER_A = [("linear_regression.mnd", ("lr", "[2, 5]")),
          ("logistic_regression.mnd", ("lr", "[5, 10]")),
          ("svm.mnd", ("l2", "[5, 10]")),
          ("xgboost.mnd", ("eta", "[20, 30]")),
          ("hmm.mnd", ("iters", "[2, 3]"))]


@pytest.mark.parametrize("example, sweep", TIER_A, ids=[e for e, _ in TIER_A])
def test_tier_a_routed_to_one_vm_matches_the_local_run(maned_run, example, sweep):
    local = maned_run(example)
    code, out, err = maned_run("--verify", source=_routed(example, "vm1"))
    assert (code, err) == (0, "")
    assert out == local[1] + PASS + "\n"


@pytest.mark.parametrize("example, sweep", TIER_A, ids=[e for e, _ in TIER_A])
def test_tier_a_two_value_sweeps_on_two_vms_verify(maned_run, workdir, example, sweep):
    source = _routed(example, "vm1, vm2", sweep)
    code, out, err = maned_run("--verify", "--trace", "t.jsonl", source=source)
    assert code == 0 and only_sweep_notes(err)
    assert out.endswith(PASS + "\n") and "m0 : " in out and "m1 : " in out
    records = [json.loads(ln) for ln in (workdir / "t.jsonl").read_text().splitlines()]
    starts = [r for r in records if r["event"] == "start"]
    assert {(r["flow"].split("#")[1], r["target"]) for r in starts
            if "#r" in r["flow"]} == {("c0", "vm1"), ("c1", "vm2")}
    # the coordinator's own work and the verify phase are on the timeline too
    assert {(r["flow"], r["step"]) for r in starts if r["target"] == "coordinator"} == {
        ("fit#c0#init", "init"), ("fit#c1#init", "init"), ("fit", "epilogue")}
    assert [(r["phase"], r["state"]) for r in records if r["event"] == "phase"] == [
        ("verify", "start"), ("verify", "end")]
    ends = [r for r in records if r["event"] == "end" and "#r" in r["flow"]]
    assert ends and all(r["sent"] > 0 and r["received"] > 0 for r in ends)


@pytest.mark.parametrize("source, line", [
    ("in::a = 1;\n" + VMS + "calc::lambda_flow f(a) @device(vm3) {\n    a a add r =\n"
     "} return r;\n", "lint error [7:32] flow 'f': @device(vm3) names no device:: block (did "
     "you mean 'vm2'?); declare device::vm3 { ... } [E030]"),
    ("in::a = 1;\nin::g = 2;\n" + VMS + "calc::lambda_flow f(a) @device(vm1) {\n"
     "    a g add r =\n} return r;\n", "error: flow 'f' reads in::g; a routed flow receives "
     "only its parameters - make it a parameter [EPLAN]"),
    ("in::a = -1;\n" + VMS + "calc::lambda_flow f(a) @device(vm1) {\n    a abs r =\n"
     "} return r;\n", "error: flow 'f': op 'abs' has no binary-IR opcode; it cannot be "
     "routed [EPLAN]"),
    ("in::X = [[1,2]];\nin::y = [[1]];\n" + VMS + "calc::ml::linear_regression fit(X, y) "
     "@device(vm1, vm2) { features: 2 } return m;\n", "error: ml definition 'fit' names 2 "
     "@device aliases but trains one configuration; several aliases need a sweep (a "
     "list-valued hyperparameter) [EPLAN]"),
])
def test_routing_refusals_happen_before_anything_runs(maned_run, source, line):
    code, out, err = maned_run(source="{H0}\n" + source)
    assert (code, out) == (1, "")
    assert err.splitlines() == [line]


def test_trap_overflow_is_local_only(maned_run):
    source = "{H0}\nin::a = 1;\n" + VMS + (
        "calc::lambda_flow f(a) @device(vm1) {\n    a a add r =\n} return r;\n")
    code, out, err = maned_run("--trap-overflow", source=source)
    assert (code, out) == (2, "") and err.endswith("[EUSAGE]\n")


def test_require_vm_sends_unrouted_flows_to_the_vm(maned_run, workdir):
    code, out, err = maned_run("birds.mnd", "--require-vm", "--verify", "--trace", "t.jsonl")
    assert (code, err) == (0, "")
    assert out.endswith(PASS + "\n")
    records = [json.loads(ln) for ln in (workdir / "t.jsonl").read_text().splitlines()]
    assert {r["target"] for r in records if r["event"] == "start"} == {"vm"}


def test_require_vm_refuses_a_flow_with_local_only_ops(maned_run):
    code, out, err = maned_run("solve.mnd", "--require-vm")
    assert (code, out) == (1, "")
    assert err == ("error: --require-vm: flow 'solve' uses ops with no binary-IR opcode "
                   "(adjugate, determinant); it cannot run on the Bark VM [EPLAN]\n")


def test_nothing_routed_verifies_the_engine_and_the_reference_alone_says_skipped(maned_run):
    code, out, _ = maned_run("layer.mnd", "--verify", "--engine")
    assert code == 0 and out.endswith(
        "verify: PASS (compared local interpreter vs the local exact engine)\n")
    skipped = "verify: SKIPPED (no flow was routed, and every local flow ran on the local " \
        "interpreter)\n"
    for small in (("--reference",), ()):  # asked, or its four values: below ENGINE_FROM
        code, out, _ = maned_run("layer.mnd", "--verify", *small)
        assert code == 0 and out.endswith(skipped)


def test_a_run_goes_to_the_engine_from_engine_from_values_of_data(maned_run, workdir):
    from maned.targets.local import ENGINE_FROM
    for n, line in ((ENGINE_FROM - 1, "SKIPPED (no flow was routed, and every local flow ran "
                                      "on the local interpreter)"),
                    (ENGINE_FROM, "PASS (compared local interpreter vs the local exact "
                                  "engine)")):
        (workdir / "n.mnd").write_text(expand(
            "{H0}\nin::a = [" + ", ".join(["1"] * n) + "];\ncalc::lambda_flow f(a) {\n"
            "    a tensor_sum s =\n} return s;\n"))
        code, out, _ = maned_run("n.mnd", "--verify")
        assert code == 0 and out.endswith(f"verify: {line}\n") and f"s : [1] = [{n}]" in out


def test_reference_and_engine_together_are_a_usage_error(maned_run):
    assert maned_run("layer.mnd", "--reference", "--engine") == (
        2, "", "error: --reference and --engine contradict each other: give one [EUSAGE]\n")


def test_a_worker_that_disagrees_fails_verify(maned_run, workdir):
    launcher_path = launcher(workdir, "skewed_vm")
    source = "{H0}\nin::a = [[1,2],[3,4]];\n" + (
        f'device::bad {{ host = "local"; vm = "{launcher_path}"; }}\n'
        "calc::lambda_flow sq(a) @device(bad) {\n    a a matmul r =\n} return r;\n")
    code, out, err = maned_run("--verify", source=source)
    assert code == 1
    assert out.splitlines() == ["flow 'sq' outputs:", "r : [2x2] = [8, 10, 15, 22]",
                                "verify: MISMATCH in flow 'sq': output 'r' differs at slot 0: "
                                "local 7 vs routed 8"]


def test_threads_use_a_process_pool_and_change_nothing(maned_run):
    one = maned_run("choose.mnd", "--threads", "1")
    assert maned_run("choose.mnd", "--threads", "3") == one and one[0] == 0


def test_pool_processes_unpickle_each_program_once(monkeypatch):
    """`--threads N`: the lane pickles each program once (renamed rounds are one program),
    and a pool process unpickles it once per run; the job still answers under its name."""
    import pickle
    from dataclasses import replace
    from maned.targets import local
    checked = maned.pipeline.intake.compile_script(expand(
        "{H0}\ncalc::lambda_flow f(a) {\n    a a add r =\n} return r;\n"))
    g = checked.graphs["f"]
    programs = local.PickledPrograms()
    first, again = programs.of(g), programs.of(replace(g, flow="f#c0#r1"))
    assert again[0] == first[0] and again[1] is first[1]
    loads = []
    real = pickle.loads
    monkeypatch.setattr(local.pickle, "loads", lambda b: loads.append(1) or real(b))
    a = maned.Tensor((2,), (3, -4))
    for run_id, flow in (("run1", "f#c0#r0"), ("run1", "f#c0#r1"), ("run2", "f#c0#r0")):
        got = local.evaluate_program(run_id, first[0], first[1], flow, {"a": a}, {}, 0, False)
        assert got == ("ok", {"r": maned.Tensor((2,), (6, -8))})
    assert len(loads) == 2  # once in run1, once more in run2 (tokens are per run)


def test_a_vm_child_starts_when_the_plan_names_it():
    """D7: `spawn` starts the child and returns without its HELO; `start` reads it."""
    from maned.devices.specs import device_specs
    from maned.dispatch.fleet import Fleet
    program = maned.pipeline.intake.compile_script(expand(
        "{H0}\n" + 'device::vm1 { host = "local"; }\n' +
        "calc::lambda_flow f(a) @device(vm1) {\n    a a add r =\n} return r;\n")).program
    fleet = Fleet(device_specs(program), program.quant)
    try:
        fleet.spawn(["vm1"])
        device = fleet.target("vm1").device
        assert device.proc is not None and device.status is None
        assert device.start().alias == "vm1" and device.start() is device.status
    finally:
        fleet.close()
    assert device.proc.returncode == 0  # closed: its stdin ended, it exited cleanly


def test_a_vm_child_runs_blas_on_one_thread_unless_told(monkeypatch):
    from bark_vm.blas import BLAS_THREADS
    from maned.devices.vm import child_env
    for name in BLAS_THREADS:
        monkeypatch.delenv(name, raising=False)
    assert {n: child_env()[n] for n in BLAS_THREADS} == dict.fromkeys(BLAS_THREADS, "1")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    assert child_env()["OPENBLAS_NUM_THREADS"] == "2"


def test_progress_lines_go_to_stderr(maned_run):
    """Off a terminal, --progress is one plain line per finished job (and per phase), with
    the definition's count and no clock, so logs compare; without it, nothing."""
    code, out, err = maned_run("layer.mnd", "--progress")
    assert code == 0 and out.startswith("flow 'layer' outputs:")
    assert err == "progress: layer 1/1 (layer on local) ok\n"
    code, out, err = maned_run("sweep.mnd", "--progress", "--verify")
    lines = err.splitlines()
    assert code == 0 and len(lines) == 6 and lines[3] + "\n" == SEED_SWEEP_NOTE
    assert lines[:3] == ["progress: fit 1/3 (fit#c0#r0 on vm1) ok",  # in job order
                         "progress: fit 2/3 (fit#c1#r0 on vm2) ok",
                         "progress: fit 3/3 (fit#c2#r0 on vm1) ok"]
    assert lines[4:] == ["progress: verify: re-running locally", "progress: verify: done"]
    assert maned_run("sweep.mnd", "--verify")[2] == SEED_SWEEP_NOTE


def _reap(pid: int, give_up: float) -> int:
    """The child's wait status, killed if it has not ended by `give_up`."""
    while time.monotonic() < give_up:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    return os.waitpid(pid, 0)[1]


def test_progress_on_a_terminal_is_one_line_redrawn_per_definition(workdir):
    """On a real terminal (a pty), the status line is redrawn in place and each finished
    definition and the verify phase leave their last line."""
    import pty
    script = expand(open(EXAMPLES / "sweep.mnd").read())
    (workdir / "t.mnd").write_text(script)
    pid, fd = pty.fork()
    if pid == 0:  # the child: maned-run on the pty (never back into pytest)
        try:
            os.execv(sys.executable, MANED_RUN + ["t.mnd", "--verify"])
        finally:
            os._exit(127)
    import select
    from gates import HANG_GUARD_S
    chunks, give_up = [], time.monotonic() + HANG_GUARD_S  # the hang guard, never a pass
    while time.monotonic() < give_up:
        if not select.select([fd], [], [], 1)[0]:
            continue
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    else:
        os.kill(pid, signal.SIGKILL)
    status = _reap(pid, give_up)
    text = b"".join(chunks).decode()
    assert os.waitstatus_to_exitcode(status) == 0
    assert "\r\x1b[K" in text  # redrawn in place
    # drawn as soon as the fit starts; what it shows later depends on the pace (at most two
    # redraws a second: test_progress.py drives the states on a clock of its own)
    assert re.search(r"fit: round \d/3 (starting|on vm[12](, vm[12])?), "
                     r"(\d+:\d\d left|estimating)", text)
    assert re.search(r"fit: 3 rounds done in \d+:\d\d\r?\n", text)
    assert re.search(r"verify: done in \d+:\d\d\r?\n", text)
    assert "verify: PASS" in text


LONG = expand(open(EXAMPLES / "sweep.mnd").read()).replace("iters: 400,", "iters: 4000,") \
    .replace("features: 2", "features: 2, budget: 64")


def _gated(script: str, workdir: Path, timeouts: dict | None = None) -> str:
    """The script with both VMs on the gated fake (and `timeout` fields where given)."""
    vm = launcher(workdir, "gated_vm")
    blocks = {}
    for alias in ("vm1", "vm2"):
        fields = {"timeout": timeouts[alias]} if alias in (timeouts or {}) else {}
        blocks[alias] = device(alias, host="local", vm=str(vm), **fields)
    return sweep_with(script, **blocks)


def _start_maned_run(workdir: Path, text: str, gate: Gate, hold_from: int = 1, *args):
    script = workdir / "long.mnd"
    script.write_text(text)
    return start(MANED_RUN, script, *args, env={"MANED_TEST_HOLD": str(gate.path),
                                                "MANED_TEST_HOLD_FROM": str(hold_from)},
                 preexec_fn=default_sigint)


def test_two_vm_aliases_really_run_at_once(workdir):
    """DESIGN §6's sweep on two gated VMs that hold every job: both children hold a job at
    the same time, which only two chains in flight at once can do; released, the run prints
    the local block."""
    gate = Gate(workdir / "hold").close()
    text = _gated((EXAMPLES / "sweep.mnd").read_text(), workdir)
    proc = _start_maned_run(workdir, text, gate, 1, "--verify")
    try:
        rows = gate.wait_for(lambda rows: {r[0] for r in rows} == {"vm1", "vm2"},
                             "both VMs holding a job")
        assert [r[2] for r in rows] == ["1", "1"]  # each child's first job, neither answered
    finally:
        gate.open()
    out, err = proc.communicate(timeout=300)
    local = run(MANED_RUN, EXAMPLES / "sweep.mnd", "--verify", timeout=300)
    assert (proc.returncode, err) == (0, SEED_SWEEP_NOTE) and out == local.stdout
    assert out.endswith(PASS + "\n")


def _signal_vm_holding(workdir: Path, text: str, alias: str, job: int, sig: int, *args):
    """Run `text` on gated VMs (with `args`); once `alias` holds its job number `job`, send
    `sig` to that child and release the gate. (returncode, stdout, stderr, the child's pid)."""
    gate = Gate(workdir / "hold").close()
    proc = _start_maned_run(workdir, text, gate, job, *args)
    try:
        rows = gate.wait_for(lambda rows: [alias, str(job)] in [[r[0], r[2]] for r in rows],
                             f"{alias} holding job {job}")
        victim = int(next(r[1] for r in rows if r[0] == alias))
        os.kill(victim, sig)
    finally:
        gate.open()
    out, err = proc.communicate(timeout=300)
    return proc.returncode, out, err, victim


def _healthy(workdir: Path) -> str:
    """What LONG prints on two healthy VMs."""
    (workdir / "healthy.mnd").write_text(LONG)
    healthy = run(MANED_RUN, workdir / "healthy.mnd")
    assert healthy.returncode == 0, healthy.stderr
    return healthy.stdout


def test_a_vm_killed_mid_run_moves_its_configuration_to_the_other(workdir):
    """vm2 holds its sixth job; the test kills it there, mid-chain, whatever the speed. Its
    configuration (c1) moves to vm1 from the round that failed (issue 37, point 2): one note
    says so, and the run prints exactly what a healthy run prints, verified."""
    healthy = _healthy(workdir)
    code, out, err, victim = _signal_vm_holding(workdir, _gated(LONG, workdir), "vm2", 6,
                                                signal.SIGKILL, "--verify")
    assert (code, out) == (0, healthy + PASS + "\n")
    move, sweep = err.splitlines()
    assert move == (f"note: fit#c1 moved from 'vm2' to 'vm1' at round 5: flow 'fit#c1#r5': "
                    f"device 'vm2' (Bark VM, pid {victim}): died: killed by signal 9")
    assert sweep.startswith("note: sweep 'fit' over lr: ") and "(failed)" not in sweep


def test_a_stopped_vm_child_ends_the_run_with_a_coded_timeout(workdir):
    """kill -STOP of a child mid-sweep: the answer deadline (`timeout = 2`) ends the wait
    with a line naming the round and the child's pid; the child is killed, and both
    configurations on it (c0, c2) move to vm2, each from its own round: the run prints what
    a healthy run prints."""
    healthy = _healthy(workdir)
    code, out, err, victim = _signal_vm_holding(workdir, _gated(LONG, workdir, {"vm1": 2}),
                                                "vm1", 3, signal.SIGSTOP)
    assert (code, out) == (0, healthy)
    *moves, sweep = err.splitlines()
    assert sorted(m.split(" moved")[0] for m in moves) == ["note: fit#c0", "note: fit#c2"], err
    for line in moves:
        assert re.fullmatch(r"note: fit#c([02]) moved from 'vm1' to 'vm2' at round (\d+): flow "
                            rf"'fit#c\1#r\2': device 'vm1' \(Bark VM, pid {victim}\): timeout: "
                            r"no answer within the 2 s deadline; the child was killed \(set "
                            r"timeout = N seconds in device::vm1 to wait longer\)", line), line
    assert gone(victim)


def test_a_configuration_fails_alone_where_no_other_alias_is_left(workdir):
    """Issue 37, point 1: the sweep on vm2 alone, whose child is killed mid-chain: no
    configuration has anywhere to move, each fails with its own round's line (in
    configuration order), and nothing false is printed."""
    code, out, err, victim = _signal_vm_holding(
        workdir, _gated(LONG, workdir).replace("@device(vm1, vm2)", "@device(vm2)"), "vm2", 6,
        signal.SIGKILL)
    assert (code, out) == (1, "")  # no configuration finished: no block, no sweep note
    errors = err.splitlines()
    assert [e.split("#r")[0] for e in errors] == [f"error: flow 'fit#c{k}" for k in range(3)]
    assert all(e.endswith(f"device 'vm2' (Bark VM, pid {victim}): died: killed by signal 9 "
                          "[ERUN]") for e in errors)


@pytest.mark.parametrize("to", ["process", "a device thread"])
def test_ctrl_c_stops_a_routed_run_cleanly(workdir, to):
    """SIGINT while both VMs hold a job: one notice line, exit 130, no traceback, nothing on
    stdout, and both children gone. The kernel may hand the signal to any thread; "a device
    thread" makes it the worst one on purpose."""
    gate = Gate(workdir / "hold").close()
    proc = _start_maned_run(workdir, _gated((EXAMPLES / "sweep.mnd").read_text(), workdir),
                            gate, 1, "--verify")
    try:
        rows = gate.wait_for(lambda rows: {r[0] for r in rows} == {"vm1", "vm2"},
                             "both VMs holding a job")
        if to == "process":
            proc.send_signal(signal.SIGINT)
        else:
            signal_thread(proc.pid, other_threads(proc.pid)[0], signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        gate.open()
    assert (proc.returncode, out) == (130, "")
    assert err == INTERRUPTED + "\n"
    assert all(gone(int(pid)) for _, pid, _ in rows)


def test_the_progress_view_counts_rounds_and_estimates_what_is_left():
    """The live line, driven by events on an injected clock: a chain's count and an
    estimate from its pace so far; a one-job flow's clock; what stays when each ends."""
    import io
    from maned.cli.progress import CLEAR, ProgressView
    from maned.dispatch.trace import JobDone, JobStarted, Planned, Settled
    now = [100.0]
    err = io.StringIO()
    view = ProgressView(err, shown=True, live=False, clock=lambda: now[0])
    view.live = True  # drawn as on a terminal, without the redraw thread
    view(Planned("fit", 4))
    view(Planned("g", 1))
    view(JobStarted("fit#c0#r0", "vm1"))
    now[0] += 3
    view(JobDone(1, "fit#c0#r0", "vm1", None))
    assert err.getvalue().endswith(CLEAR + "fit: round 2/4 on vm1, 0:09 left | g: waiting, 0:03")
    view(JobStarted("g", "local"))
    for r in (1, 2, 3):
        now[0] += 1
        view(JobDone(r + 1, f"fit#c0#r{r}", "vm1", None))
    assert "fit: round 4/4 on vm1, 0:00 left" in err.getvalue()  # its epilogue runs
    view(Settled("fit", False))
    assert "fit: 4 rounds done in 0:06\n" in err.getvalue()
    assert err.getvalue().endswith(CLEAR + "g: running locally, 0:06")
    view(JobDone(5, "g", "local", None))
    view(Settled("g", False))
    view.close()
    assert err.getvalue().endswith(CLEAR + "g: done locally in 0:06\n")
    view(Planned("h", 1))  # a pool member's alias comes from the network: one line, escaped
    now[0] += 0.5  # a redraw is due (at most one per half second)
    view(JobStarted("h", "ev\x1b[31mil\nprogress: forged"))
    assert err.getvalue().endswith(CLEAR + "h: running on ev\\x1b[31mil\\nprogress: forged, 0:00")


def test_a_configuration_whose_vm_cannot_start_moves_and_the_report_says_so(workdir):
    """Issue 37, points 1-2, through the API: vm2's command does not exist, so c1 (on vm2)
    fails at its first round and moves to vm1; the outputs are a healthy run's, and the
    report says how each configuration ended, on which device and after how many rounds."""
    healthy = maned.run(source=(EXAMPLES / "sweep.mnd").read_text(), base_dir=workdir)
    text = sweep_with(vm2=device("vm2", host="local", vm=str(workdir / "no-such-vm")))
    report = maned.run(source=text + "out::m1 = csv(\"m1.csv\");\n", base_dir=workdir)
    assert report.exit_code == 0 and report.outputs("fit") == healthy.outputs("fit")
    [sweep] = report.sweeps
    assert [(c.status, c.devices, c.rounds) for c in sweep.configurations] == [
        ("finished", ("vm1",), 1), ("moved", ("vm1",), 1), ("finished", ("vm1",), 1)]
    assert sweep.lowest == healthy.sweeps[0].lowest
    assert report.notes[0].startswith("fit#c1 moved from 'vm2' to 'vm1' at round 0: flow "
                                      "'fit#c1#r0': device 'vm2' (Bark VM): connect_failed: "
                                      "no local Bark VM: spawning '")
    assert [f.name for f in report.files] == ["m1"]
