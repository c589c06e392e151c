"""Ctrl-C at any moment (maned.interrupts, DESIGN §10): one SIGINT ends a run with exit 130,
the one notice line and no process left behind, wherever it lands; and the mechanism's
parts (a fork, a swallowed interrupt, a run that will not stop) each shown on a real
process."""
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from maned.cli.run import INTERRUPTED

from gates import until
from support.processes import MANED_RUN, children, gone, kill, start
from test_local_pool import SLOW

# Two flows on two Bark VM children, then --verify's reference run of them: minutes of pure
# Python, so every delay below lands while the run goes on (starting, forking the VM
# children from the warm parent, waiting on them, or verifying).
ON_VMS = """mnd::quantmax=1000;
mnd::quantmin=-1000;
mnd::quantres=0;

in::a = 400 400 ones;

device::vm1 { host = "local"; }
device::vm2 { host = "local"; }

calc::lambda_flow left(a) @device(vm1) {
    a a matmul b =
    b a matmul c =
} return c;

calc::lambda_flow right(a) @device(vm2) {
    a a matmul b =
    b a matmul c =
} return c;
"""

RUNS = {"threads": (SLOW, ["--threads", "2"]), "vms": (ON_VMS, ["--verify"])}
TRIALS = 16     # per run; the signal goes to the process, then to its group (a terminal)
SPAN_S = 1.5    # delays are drawn from [0, SPAN_S): start-up, pool or VMs, the work
STOP_S = 30     # the goal of issue 32: a Ctrl-C ends the run within this (a hang guard)


def _held_sigint() -> None:
    """preexec_fn: SIGINT at its default and blocked. The interpreter's own start-up, before
    any of maned's code runs, is Python's; maned.interrupts.install unblocks it, and a
    SIGINT sent meanwhile arrives then."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def _descendants(pid: int) -> set[int]:
    """Every process below `pid`, walked here rather than by maned.interrupts.descendants:
    the test judges that function's kills, so it must not see through its eyes."""
    found, todo = set(), [pid]
    while todo:
        for child in children(todo.pop()) - found:
            found.add(child)
            todo.append(child)
    return found


def _interrupted(args: list, delay_s: float, group: bool) -> tuple[int, str, str, set]:
    """maned-run ARGS given one SIGINT after delay_s: (exit code, stdout, stderr, every
    process seen below it)."""
    proc = start(MANED_RUN, *args, preexec_fn=_held_sigint, start_new_session=group)
    seen: set[int] = set()
    try:
        end = time.monotonic() + delay_s
        while time.monotonic() < end:
            seen |= _descendants(proc.pid)
            time.sleep(0.005)
        seen |= _descendants(proc.pid)
        if group:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=STOP_S)
    finally:  # a run that hung: stopped here, so the suite goes on
        for pid in (proc.pid, *seen):
            kill(pid)
        proc.wait(timeout=10)
    return proc.returncode, out, err, seen


@pytest.mark.parametrize("run", sorted(RUNS))
def test_a_sigint_at_a_random_moment_ends_the_run(run, tmp_path):
    """Dozens of SIGINTs after random delays (a fixed seed): each ends the run with 130,
    nothing on stdout, the one notice line on stderr, and every process it started gone."""
    source, flags = RUNS[run]
    script = tmp_path / "run.mnd"
    script.write_text(source)
    rng = random.Random(32)
    for trial in range(TRIALS):
        delay = rng.uniform(0, SPAN_S)
        code, out, err, seen = _interrupted([script, *flags], delay, group=trial % 2 == 1)
        where = f"trial {trial}, SIGINT after {delay:.3f} s"
        assert (code, out, err) == (130, "", INTERRUPTED + "\n"), where
        assert all(gone(pid) for pid in seen), where


# The mechanism's parts, each in a small process of its own: `PROLOGUE` takes SIGINT as a
# console tool does, then the case runs; `ready` is written when the signal may be sent.
PROLOGUE = """
import os, sys, time
ready = sys.argv[1]
{early}
from maned import interrupts
interrupts.install("notice: stopped", grace_s={grace})
try:
{body}
except KeyboardInterrupt:
    interrupts.say("notice: stopped")
    sys.exit(130)
"""


def _case(tmp_path, body: str, grace_s: float = 60, early: str = ""
          ) -> tuple[subprocess.Popen, str]:
    """The case running, its `ready` file written: (the process, what the file says).
    early: code run before maned.interrupts is imported (an at-fork handler of before)."""
    ready = tmp_path / "ready"
    code = PROLOGUE.format(grace=grace_s, early=early, body="\n".join(
        "    " + ln for ln in body.strip().splitlines()))
    proc = start([sys.executable, "-c", code], ready, preexec_fn=_held_sigint)
    until(lambda: ready.exists() or proc.poll() is not None, "the case is ready")
    assert proc.poll() is None, proc.communicate()
    return proc, ready.read_text()


def _ended(proc) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=STOP_S)
    finally:
        kill(proc.pid)
    return proc.returncode, out, err


def test_a_sigint_inside_a_fork_waits_for_its_handlers_then_is_raised(tmp_path):
    """A SIGINT while an at-fork handler runs (as logging's, which releases its lock there):
    the handler runs to its end (the lock it took for the fork is released), and then the
    interrupt cuts the long sleep after the fork, with no text but the notice."""
    proc, _ = _case(tmp_path, early="""
import threading
lock = threading.Lock()
def slow_release():
    open(ready, "w").close()
    time.sleep(1)
    lock.release()
    open(ready + ".released", "w").close()
os.register_at_fork(before=lock.acquire, after_in_parent=slow_release)
""", body="""
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
time.sleep(600)
""")
    proc.send_signal(signal.SIGINT)
    assert _ended(proc) == (130, "", "notice: stopped\n")
    assert (tmp_path / "ready.released").exists()


def test_a_swallowed_interrupt_is_raised_again(tmp_path):
    """A KeyboardInterrupt raised inside a __del__ is swallowed by the interpreter: it is
    raised again on the main thread, without the 'Exception ignored' text."""
    proc, _ = _case(tmp_path, """
class Slow:
    def __del__(self):
        open(ready, "w").close()
        time.sleep(2)
Slow()
time.sleep(600)
""")
    proc.send_signal(signal.SIGINT)
    assert _ended(proc) == (130, "", "notice: stopped\n")


# A main thread that catches every KeyboardInterrupt and goes on, with a child of its own:
# only the watch thread can end it (each one caught is noted in `ready`.caught). `ready`
# appears whole (a rename) and only inside the loop's try, so no SIGINT can fall outside it.
STUBBORN = """
import subprocess
sleeper = subprocess.Popen(["sleep", "600"])
while True:
    try:
        if not os.path.exists(ready):
            open(ready + ".tmp", "w").write(str(sleeper.pid))
            os.rename(ready + ".tmp", ready)
        time.sleep(600)
    except KeyboardInterrupt:
        open(ready + ".caught", "w").close()
"""


def test_a_run_that_will_not_stop_is_stopped_hard_after_its_grace(tmp_path):
    """After the grace the watch thread writes the notice, kills the child, exits 130."""
    proc, child = _case(tmp_path, STUBBORN, grace_s=1)
    proc.send_signal(signal.SIGINT)
    assert _ended(proc) == (130, "", "notice: stopped\n")
    assert gone(int(child))


def test_a_second_sigint_stops_at_once(tmp_path):
    """The same run with the whole grace ahead of it: a second SIGINT ends it now."""
    proc, child = _case(tmp_path, STUBBORN, grace_s=3600)
    proc.send_signal(signal.SIGINT)
    until(lambda: (tmp_path / "ready.caught").exists(), "the first SIGINT is caught")
    proc.send_signal(signal.SIGINT)
    assert _ended(proc) == (130, "", "notice: stopped\n")
    assert gone(int(child))
