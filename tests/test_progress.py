"""maned-run's progress on stderr (issue 23, point 12): on a terminal the live line is
redrawn at most twice a second however fast jobs finish, and its latest state is drawn once
due; off a terminal the plain lines come out in an order that does not depend on timing
(each definition's jobs in job order), so two runs' logs compare."""
import io

from support.cli import EXAMPLES, expand
from maned.cli.progress import CLEAR, REDRAW_S, ProgressView
from maned.dispatch.trace import JobDone, JobStarted, Planned, Settled

SWEEP = expand(open(EXAMPLES / "sweep.mnd").read()).replace("features: 2",
                                                            "features: 2, budget: 400")


def _live(now):
    """A view drawn as on a terminal, on an injected clock, without the redraw thread."""
    err = io.StringIO()
    view = ProgressView(err, shown=True, live=False, clock=lambda: now[0])
    view.live = True
    return view, err


def test_the_live_line_is_redrawn_at_most_twice_a_second():
    now = [100.0]
    view, err = _live(now)
    view(Planned("g", 1))
    view(JobStarted("g", "local"))
    view(Planned("fit", 1000))
    for r in range(1000):  # a thousand jobs in one second
        now[0] += 0.001
        view(JobStarted(f"fit#c0#r{r}", "vm1"))
        view(JobDone(r + 2, f"fit#c0#r{r}", "vm1", None))
    view(Settled("fit", False))
    text = err.getvalue()
    assert "fit: 1000 rounds done in 0:01\n" in text  # a line that stays is never held back
    # the first draw, one per half second, and one after the line that stayed
    assert text.count(CLEAR) <= 2 + 1 / REDRAW_S + 1, text.count(CLEAR)
    view(JobStarted("h", "vm2"))  # not yet due: held back ...
    assert err.getvalue() == text
    now[0] += REDRAW_S
    view.redraw_if_due()  # ... and drawn once due (the redraw thread's step)
    assert err.getvalue().endswith(CLEAR + "g: running locally, 0:01")


def test_plain_lines_come_in_job_order_whatever_the_order_jobs_finish():
    err = io.StringIO()
    view = ProgressView(err, shown=True, live=False)
    flows = ("fit#c0#r0", "fit#c0#r1", "fit#c1#r0", "fit#c1#r1")
    view(Planned("fit", 4, flows))
    view(Planned("g", 1, ("g",)))
    for i, (flow, target) in enumerate([("fit#c1#r0", "vm2"), ("g", "local"),
                                        ("fit#c0#r0", "vm1"), ("fit#c1#r1", "vm2")], 1):
        view(JobDone(i, flow, target, None))
    assert err.getvalue() == "progress: fit 1/4 (fit#c0#r0 on vm1) ok\n"
    view(JobDone(5, "fit#c0#r1", "vm1", "TIMEOUT"))
    view(Settled("fit", True))
    assert err.getvalue().splitlines() == [
        "progress: fit 1/4 (fit#c0#r0 on vm1) ok",
        "progress: fit 2/4 (fit#c0#r1 on vm1) failed [TIMEOUT]",
        "progress: fit 3/4 (fit#c1#r0 on vm2) ok",
        "progress: fit 4/4 (fit#c1#r1 on vm2) ok",
        "progress: g 1/1 (g on local) ok"]  # a definition after the one started before it


def test_plain_lines_left_when_a_run_stops_come_out_in_order_at_close():
    err = io.StringIO()
    view = ProgressView(err, shown=True, live=False)
    view(Planned("fit", 3, ("fit#c0#r0", "fit#c1#r0", "fit#c2#r0")))
    view(JobDone(1, "fit#c2#r0", "vm1", None))
    view(JobDone(2, "fit#c1#r0", "vm2", None))
    assert err.getvalue() == ""
    view.close()
    assert err.getvalue() == ("progress: fit 1/3 (fit#c1#r0 on vm2) ok\n"
                              "progress: fit 2/3 (fit#c2#r0 on vm1) ok\n")


def test_a_two_vm_sweeps_progress_log_is_the_same_in_every_run(maned_run):
    """Configurations 0 and 2 on vm1, 1 on vm2, several rounds each: their jobs finish
    interleaved, in an order that differs between runs; the log does not."""
    runs = [maned_run("--progress", source=SWEEP) for _ in range(2)]
    assert [code for code, _, _ in runs] == [0, 0]
    assert runs[0][2] == runs[1][2]
    lines = [ln for ln in runs[0][2].splitlines() if ln.startswith("progress:")]
    jobs = len(lines)
    assert jobs % 3 == 0 and jobs >= 12
    want = [(c, r) for c in range(3) for r in range(jobs // 3)]
    assert lines == [f"progress: fit {k}/{jobs} (fit#c{c}#r{r} on vm{2 if c == 1 else 1}) ok"
                     for k, (c, r) in enumerate(want, 1)]


def test_a_round_on_two_replicas_prints_both_lines_and_a_moved_round_its_second_try():
    """--replicas 2: each round's two lines together, by alias, whichever answered first; a
    round whose job failed and ran again elsewhere (a moved chain) does not end its
    definition's lines: the second try comes out as it comes, and Settled ends them."""
    err = io.StringIO()
    view = ProgressView(err, shown=True, live=False)
    view(Planned("fit", 4, ("fit#c0#r0", "fit#c0#r1")))
    view(Planned("g", 1, ("g",)))
    view(JobDone(1, "fit#c0#r0", "w2", None))
    assert err.getvalue() == ""  # its other replica is due
    view(JobDone(2, "fit#c0#r0", "w1", None))
    view(JobDone(3, "g", "local", None))
    view(JobDone(4, "fit#c0#r1", "w2", "ERUN"))
    view(JobDone(5, "fit#c0#r1", "w1", None))
    view(JobDone(6, "fit#c0#r1", "w3", None))  # w2's replica, moved
    view(Settled("g", False))
    assert err.getvalue().splitlines() == [
        "progress: fit 1/4 (fit#c0#r0 on w1) ok", "progress: fit 2/4 (fit#c0#r0 on w2) ok",
        "progress: fit 3/4 (fit#c0#r1 on w1) ok",
        "progress: fit 4/4 (fit#c0#r1 on w2) failed [ERUN]",
        "progress: fit 5/5 (fit#c0#r1 on w3) ok"]  # at once; g waits for fit's end
    view(Settled("fit", False))
    assert err.getvalue().splitlines()[5:] == ["progress: g 1/1 (g on local) ok"]


def test_a_replicated_sweeps_progress_log_is_the_same_in_every_run(maned_run):
    """Three VMs, --replicas 2: every round's two lines, the same log in two runs."""
    three = SWEEP.replace('device::vm2 { host = "local"; }', 'device::vm2 { host = "local"; '
                          '}\ndevice::vm3 { host = "local"; }').replace(
        "@device(vm1, vm2)", "@device(vm1, vm2, vm3)")
    runs = [maned_run("--progress", "--replicas", "2", source=three) for _ in range(2)]
    assert [code for code, _, _ in runs] == [0, 0]
    assert runs[0][2] == runs[1][2]
    lines = [ln for ln in runs[0][2].splitlines() if ln.startswith("progress:")]
    homes = ("vm1", "vm2", "vm3")
    rounds = len(lines) // 6
    want = [(c, r, homes[(c + k) % 3]) for c in range(3) for r in range(rounds)
            for k in sorted((0, 1), key=lambda k: homes[(c + k) % 3])]
    assert lines == [f"progress: fit {n}/{len(lines)} (fit#c{c}#r{r} on {vm}) ok"
                     for n, (c, r, vm) in enumerate(want, 1)]
