"""`--replicas N` (issue 37, point 4; docs/fleet.md, "Replicas"): each routed round of a sweep
on N distinct aliases, their answers compared integer for integer; a lying worker (a real
bark-worker whose executor adds to one integer, maned_bench.lying_worker) is outvoted,
named, and sent no more work, and the sweep prints the honest bytes; with no majority the
configuration fails naming the workers; a worker killed mid-run hands its replicas on."""
import json
import re
import signal
from contextlib import ExitStack

import pytest
from hypothesis import given, strategies as st

from maned.dispatch.replicas import tally
from support.trio import LR, PASS, fleet, hit_mid_run, liar, maned_run, rounds, sweep


# --- the vote, as a table -------------------------------------------------------------------
@pytest.mark.parametrize("answers, wanted, state, answer, outvoted", [
    ({"a": 1}, 2, "wait", None, ()),
    ({"a": 1, "b": 1}, 2, "agreed", 1, ()),
    ({"a": 1, "b": 2}, 2, "more", None, ()),  # one more alias decides
    ({"a": 1, "b": 2, "c": 1}, 2, "majority", 1, ("b",)),
    ({"a": 1, "b": 2, "c": 2}, 2, "majority", 2, ("a",)),
    ({"a": 1, "b": 2, "c": 3}, 2, "split", None, ()),
    ({"a": 1, "b": 1, "c": 1}, 3, "agreed", 1, ()),
    ({"a": 1, "b": 2, "c": 1}, 3, "majority", 1, ("b",)),  # outvoted at once
    ({"a": 1, "b": 2, "c": 3}, 3, "more", None, ()),
    ({"a": 1, "b": 2, "c": 3, "d": 1}, 3, "split", None, ()),  # 2 of 4 is no majority
])
def test_the_vote(answers, wanted, state, answer, outvoted):
    vote = tally(answers, wanted)
    assert (vote.state, vote.answer, vote.outvoted) == (state, answer, outvoted)


@given(st.lists(st.integers(0, 2), min_size=2, max_size=4), st.integers(2, 3))
def test_an_answer_is_taken_only_from_a_strict_majority_of_at_least_two(values, wanted):
    answers = {f"w{k}": v for k, v in enumerate(values)}
    vote = tally(answers, wanted)
    if vote.state in ("agreed", "majority"):
        given_by = sum(v == vote.answer for v in values)
        assert given_by >= 2 or len(values) == given_by
        assert 2 * given_by > len(values)
        assert set(vote.outvoted) == {a for a, v in answers.items() if v != vote.answer}
    else:
        assert vote.answer is None and not vote.outvoted


# --- real workers ---------------------------------------------------------------------------
def test_a_lying_worker_is_outvoted_and_the_sweep_prints_the_honest_bytes(tmp_path,
                                                                          monkeypatch):
    """w2 adds 1 to one integer from its 6th job on. Without replicas its lie is printed
    (only --verify sees it); with --replicas 2 it is outvoted at its first lie, named once,
    sent no more work, and the run prints the local run's bytes in at most 2.1x the rounds."""
    with ExitStack() as stack:
        workers = fleet(stack, monkeypatch, None, liar(), None)
        text = sweep(workers)
        replicated = maned_run(tmp_path, text, "--replicas", "2", "--verify")  # w2's 1st
        as_json = maned_run(tmp_path, text, "--replicas", "2", "--json")  # it lies at once
        plain = maned_run(tmp_path, text, "--verify", "--json")
    local = maned_run(tmp_path, text.replace("@device(w1, w2, w3) ", ""))
    assert local.returncode == 0, local.stderr
    report = json.loads(plain.stdout)
    assert plain.returncode == 1 and report["verify"]["status"] == "MISMATCH"  # it lies
    assert replicated.returncode == 0, replicated.stderr
    assert replicated.stdout == local.stdout + PASS
    *notes, sweep_note = replicated.stderr.splitlines()
    assert sweep_note == local.stderr.rstrip("\n")
    outvotes = [n for n in notes if re.match(r"note: fit#c\d round \d+: 'w\d' outvoted", n)]
    assert len(outvotes) == 1, notes
    assert re.fullmatch(r"note: fit#c\d round \d+: 'w2' outvoted by '(w1|w3)' and '(w1|w3)' "
                        r"\(it answered other integers\); it gets no more work in this run",
                        outvotes[0]), outvotes
    for n in notes:  # a tie broken, or a job w2 was given before its vote moved on
        assert re.fullmatch(r"note: fit#c\d round \d+: ('w\d' and 'w\d' disagree; 'w\d' "
                            r"decides|moved from 'w2' to 'w\d': .*outvoted.*|'w2' outvoted.*)",
                            n), n
    report = json.loads(as_json.stdout)
    assert as_json.returncode == 0 and report["exit_code"] == 0
    done = rounds(report)
    plain_rounds = sum(rounds(json.loads(plain.stdout)).values())
    assert sum(done.values()) <= 2.1 * plain_rounds, (done, plain_rounds)
    # w2 lies from its first job here: it answers the round-0 jobs queued for it at once
    # (12 over 3 lanes) and nothing after its first vote: every configuration it is a
    # replica of meets it in round 0
    assert done["w2"] <= 2 * len(LR) // 3 < done["w1"]
    for config in report["sweeps"][0]["configurations"]:
        # moved: a replica it gave w2 before w2 was outvoted ran again elsewhere
        assert config["status"] in ("finished", "moved")
        assert config["rounds"] == plain_rounds // len(LR)
        assert len(config["devices"]) >= 2


def test_three_replicas_outvote_a_liar_without_a_tie_breaker(tmp_path, monkeypatch):
    """w1 lies from its 3rd job on; three replicas over four workers outvote it at once (no
    tie to break), and three honest workers are left for every later round."""
    with ExitStack() as stack:
        text = sweep(fleet(stack, monkeypatch, liar(start_at=3), None, None, None))
        done = maned_run(tmp_path, text, "--replicas", "3", "--verify")
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(PASS)
    notes = done.stderr.splitlines()[:-1]
    assert "decides" not in done.stderr
    assert len([n for n in notes if "' outvoted by" in n]) == 1 and all(
        re.match(r"note: fit#c\d round \d+: ('w1' outvoted by 'w[234]' and 'w[234]' |moved "
                 r"from 'w1')", n) for n in notes), notes


def test_fewer_healthy_aliases_than_replicas_fails_the_configurations_left(tmp_path,
                                                                           monkeypatch):
    """Three replicas on three workers: once the liar is outvoted two are left, and each
    configuration still running fails saying so (a verdict of two is not one of three)."""
    with ExitStack() as stack:
        text = sweep(fleet(stack, monkeypatch, liar(start_at=3), None, None))
        done = maned_run(tmp_path, text, "--replicas", "3", "--json")
    report = json.loads(done.stdout)
    assert done.returncode == 1 and report["diagnostics"]
    for d in report["diagnostics"]:  # at its next round, or at a replica w1 was to run
        assert re.fullmatch(r"flow 'fit#c\d#r\d+': (--replicas 3: only 'w[23]' and 'w[23]' "
                            r"of its aliases left \(the others failed in this run\)|device "
                            r"'w1': outvoted at round 'fit#c\d#r\d+' by 'w[23]' and 'w[23]'; "
                            r"--replicas 3: no other alias of its list is left to run it on)",
                            d["message"]), d


def test_with_no_majority_every_configuration_fails_naming_the_workers(tmp_path,
                                                                       monkeypatch):
    """w1 adds 1, w2 adds 2, w3 is honest: every round's three answers differ, so no
    configuration can take one; each fails with its line, and the run exits 1."""
    with ExitStack() as stack:
        text = sweep(fleet(stack, monkeypatch, liar(1, 1), liar(2, 1), None))
        done = maned_run(tmp_path, text, "--replicas", "2", "--json")
    report = json.loads(done.stdout)
    assert done.returncode == 1 and report["flows"] == []
    assert [d["cause"] for d in report["diagnostics"]] == ["no_majority"] * len(LR)
    for k, d in enumerate(report["diagnostics"]):
        assert re.fullmatch(rf"flow 'fit#c{k}#r0': --replicas 2: no majority: 'w\d', 'w\d' "
                            r"and 'w\d' each answered other integers", d["message"]), d
        assert sorted(re.findall(r"'(w\d)'", d["message"])) == ["w1", "w2", "w3"]
    assert report["sweeps"] == []  # no configuration finished


def test_a_worker_killed_mid_run_hands_its_replicas_on(tmp_path, monkeypatch):
    """w3 killed (SIGKILL) once it has answered ten rounds: each round it held runs on the
    alias left, and the run prints the healthy run's bytes, verified."""
    with ExitStack() as stack:
        workers = fleet(stack, monkeypatch, None, None, None)
        text = sweep(workers, iters=1280)
        healthy = maned_run(tmp_path, text, "--replicas", "2")
        code, out, err = hit_mid_run(tmp_path, text, workers[2], 10, signal.SIGKILL,
                                     "--replicas", "2", "--verify")
    assert healthy.returncode == 0, healthy.stderr
    assert code == 0, err
    assert out == healthy.stdout + PASS
    moves = err.splitlines()[:-1]
    assert moves, "w3 was killed before the run ended"
    for n in moves:
        assert re.fullmatch(r"note: fit#c\d round \d+: moved from 'w3' to 'w[12]': flow "
                            r"'fit#c\d#r\d+': device 'w3' \(127\.0\.0\.1:\d+\): "
                            r"(connect_failed|died): .*", n), n


def test_replicas_through_the_api_on_bark_vms():
    """maned.run(replicas=2) on three Bark VM children: every configuration's rounds ran on
    two of them, which agreed, and the outputs are the local run's (verified); a replicas
    value that is no whole number from 1 to 3 is a coded refusal, not an exception."""
    import maned
    from support.cli import EXAMPLES, expand

    text = expand((EXAMPLES / "sweep.mnd").read_text()).replace(
        'device::vm2 { host = "local"; }',
        'device::vm2 { host = "local"; }\ndevice::vm3 { host = "local"; }').replace(
        "@device(vm1, vm2)", "@device(vm1, vm2, vm3)")
    report = maned.run(source=text, replicas=2, verify=True)
    assert report.exit_code == 0 and report.verify.status == "PASS"
    homes = ["vm1", "vm2", "vm3"]
    assert [(c.status, c.devices) for c in report.sweeps[0].configurations] == [
        ("finished", (homes[i], homes[(i + 1) % 3])) for i in range(3)]
    for bad in (0, 4, True, "2"):
        refused = maned.run(source=text, replicas=bad)
        assert [d.code for d in refused.diagnostics] == ["EUSAGE"] and not refused.flows
