"""`--journal FILE` (issue 37, point 3; docs/fleet.md, "Resume"): every completed round on the
disk as it lands; the same command again resumes each chain from its last journaled round
and prints the bytes an uncut run prints; a finished journal replays without running a
round; a torn last record is cut off, never trusted; another script's or other inputs'
journal is refused before anything runs, and left untouched."""
import json
import os
import re
import resource
import signal

from gates import Gate, launcher
from maned.dispatch.journal import digest
from support.cli import EXAMPLES, expand
from support.processes import MANED_RUN, run, start
from support.scripts import device, sweep_with

# DESIGN §6's sweep at 4000 iterations, a budget of 64 steps a round: 1,716 rounds, 572 a
# configuration; c0 and c2 on vm1, c1 on vm2
LONG = expand(open(EXAMPLES / "sweep.mnd").read()).replace("iters: 400,", "iters: 4000,") \
    .replace("features: 2", "features: 2, budget: 64")
HOLD_FROM = 430  # each gated VM holds its 430th job: 858 rounds journaled, half of them


def _rounds_started(trace) -> int:
    """The round jobs a run started, from its --trace file."""
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    return sum(r["event"] == "start" and "#r" in r["flow"] for r in records)


def _maned_run(folder, *args, env=None):
    return run(MANED_RUN, *map(str, args), env=env)


def test_a_run_killed_half_way_resumes_and_prints_the_uncut_bytes(tmp_path):
    """SIGKILL to maned-run once both gated VMs hold their 430th job (half the rounds
    journaled); the same command again runs only the rest, and prints what an uncut run
    prints, verified."""
    gate = Gate(tmp_path / "hold").close()
    vm = launcher(tmp_path, "gated_vm")
    script = tmp_path / "long.mnd"
    script.write_text(sweep_with(LONG, **{a: device(a, host="local", vm=str(vm))
                                          for a in ("vm1", "vm2")}))
    env = {"MANED_TEST_HOLD": str(gate.path), "MANED_TEST_HOLD_FROM": str(HOLD_FROM)}
    journal = tmp_path / "j.jsonl"
    proc = start(MANED_RUN, script, "--journal", journal, env=env)
    try:
        gate.wait_for(lambda rows: {r[0] for r in rows if r[2] == str(HOLD_FROM)} ==
                      {"vm1", "vm2"}, "both VMs holding their 430th job")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=120)
    finally:
        gate.open()
    journaled = len(journal.read_text().splitlines()) - 1
    assert journaled == 2 * (HOLD_FROM - 1)  # every answered round, on the disk
    uncut = _maned_run(tmp_path, script,
                       "--trace", tmp_path / "uncut.jsonl", env=env)
    assert uncut.returncode == 0, uncut.stderr
    total = _rounds_started(tmp_path / "uncut.jsonl")
    resumed = _maned_run(tmp_path, script, "--journal", journal, "--trace",
                         tmp_path / "resumed.jsonl", "--verify", env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == uncut.stdout + "verify: PASS (compared local interpreter vs " \
        "routed targets)\n"
    assert _rounds_started(tmp_path / "resumed.jsonl") == total - journaled
    assert total == 1716 and (total - journaled) / total <= 0.6
    assert len(journal.read_text().splitlines()) == 1 + total


def test_a_finished_journal_replays_and_a_torn_last_record_is_cut_off(tmp_path):
    script = tmp_path / "sweep.mnd"
    script.write_text((EXAMPLES / "sweep.mnd").read_text())
    journal = tmp_path / "j.jsonl"
    first = _maned_run(tmp_path, script, "--journal", journal)
    assert first.returncode == 0, first.stderr
    whole = journal.read_bytes()
    journal.write_bytes(whole + b'{"round": "fit#c0#r1", "first": 400, "cou')  # a torn write
    again = _maned_run(tmp_path, script, "--journal", journal, "--trace", tmp_path / "t.jsonl")
    assert (again.returncode, again.stdout, again.stderr) == (0, first.stdout, first.stderr)
    assert _rounds_started(tmp_path / "t.jsonl") == 0 and journal.read_bytes() == whole
    as_json = _maned_run(tmp_path, script, "--journal", journal, "--json")
    configurations = json.loads(as_json.stdout)["sweeps"][0]["configurations"]
    assert [(c["status"], c["rounds"]) for c in configurations] == [("resumed", 1)] * 3


def test_another_scripts_or_other_inputs_journal_is_refused_and_left_untouched(tmp_path):
    script = tmp_path / "sweep.mnd"
    script.write_text((EXAMPLES / "sweep.mnd").read_text())
    journal = tmp_path / "j.jsonl"
    assert _maned_run(tmp_path, script, "--journal", journal).returncode == 0
    whole = journal.read_bytes()
    other = tmp_path / "other.mnd"
    other.write_text(script.read_text().replace("lr: [2, 5, 10]", "lr: [2, 5, 9]"))
    damaged = tmp_path / "damaged.jsonl"
    lines = whole.split(b"\n")
    damaged.write_bytes(b"\n".join([lines[0], b"not a record", *lines[1:]]))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    forged = tmp_path / "forged.jsonl"  # a well-digested line whose outputs are no tensor
    body = {"round": "fit#c0#r0", "first": 0, "count": 400, "outputs": [["w", [1], ["x"]]]}
    forged.write_bytes(b"\n".join([lines[0], json.dumps(
        {**body, "sha256": digest(body)}).encode(), *lines[1:]]))
    for argv, why in [
            ([other, "--journal", journal], "was made by another script"),
            ([script, "--in", "y=8x1:1,2,3,4,5,6,7,8", "--journal", journal],
             "was made by other input values"),
            ([script, "--journal", damaged], "is damaged at line 2"),
            ([script, "--journal", forged], "is damaged at line 2"),
            ([script, "--journal", other], "is no journal of maned-run"),
            # never waited on, never read as a journal
            ([script, "--journal", fifo], "it is a FIFO (named pipe), not a regular file"),
            ([script, "--journal", tmp_path], "cannot be opened (Is a directory)")]:
        done = _maned_run(tmp_path, *argv)
        path = argv[argv.index("--journal") + 1]
        assert (done.returncode, done.stdout) == (2, ""), done.stderr
        assert done.stderr == (f"error: --journal {path}: {why}; it was left as it was (give "
                               "another file to start a new journal) [EUSAGE]\n")
    assert journal.read_bytes() == whole
    done = _maned_run(tmp_path, script, "--journal", script)  # never the script itself
    assert (done.returncode, done.stderr) == (2, f"error: --journal '{script}' is the script: "
                                              "writing it would replace it: give --journal "
                                              "another file [EUSAGE]\n")


def _small_files() -> None:
    """preexec_fn: files this process writes stop growing at 2 KiB (EFBIG, not SIGXFSZ)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))


def test_a_journal_that_cannot_be_written_fails_its_rounds_with_a_coded_line(tmp_path):
    """The disk refuses the journal's next line (a 2 KiB file-size limit): each
    configuration stops at the round whose line was not written, with one EIO line naming
    it, never a traceback; nothing is printed as done that is not on the disk."""
    script = tmp_path / "s.mnd"
    script.write_text(LONG)  # 1,716 rounds of about 300 bytes a line
    journal = tmp_path / "j.jsonl"
    done = run(MANED_RUN, script, "--journal", journal, preexec_fn=_small_files)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert errors and all(re.fullmatch(
        rf"error: flow 'fit#c\d#r\d+': --journal {re.escape(str(journal))}: cannot be "
        r"written \(File too large\); the round is not journaled \[EIO\]", ln) for ln in errors)
    kept = journal.read_bytes()  # whole lines only: the refused one was cut off again
    assert 0 < len(kept) <= 2048 and kept.endswith(b"\n")
    resumed = run(MANED_RUN, script, "--journal", journal, "--verify")  # and it resumes
    assert resumed.returncode == 0 and resumed.stdout.endswith("verify: PASS (compared "
                                                               "local interpreter vs routed "
                                                               "targets)\n"), resumed.stderr
