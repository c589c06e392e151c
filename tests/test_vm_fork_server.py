"""Bark VM children forked from one warm parent (DESIGN D7, bark_vm/fork_server.py,
maned.devices.warm_parent): the default VM command's children are the warm parent's, start
without importing anything, and nothing of them outlives the run, its Ctrl-C or its
coordinator's death."""
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import maned
from support.cli import EXAMPLES, expand
from maned.cli.run import INTERRUPTED
from maned.failures import DeviceFailure
from maned.devices import warm_parent
from maned.devices.vm import VmDevice, vm_command
from gates import until
from support.processes import MANED_RUN, children, gone, kill, run, start
from support.signals import default_sigint

pytestmark = pytest.mark.skipif(not warm_parent.CAN_FORK,
                                reason="no pidfd_open here: VM children are not forked")

# The sweep of DESIGN §6 on two default VMs, long enough (seconds) to be caught running.
LONG = (EXAMPLES / "sweep.mnd").read_text().replace("iters: 400,", "iters: 40000,")


def _ppid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _bytes_read(pid: int) -> int:
    """What the process has read through read() and the like since it began (rchar): every
    module a process imports is read so, and a forked child begins at zero."""
    return int(Path(f"/proc/{pid}/io").read_text().split("\n")[0].split()[1])


def _warm_parents(pid: int) -> list[int]:
    found = []
    for child in children(pid):
        try:
            if b"bark_vm.fork_server" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.append(child)
        except OSError:  # a child that has just ended
            pass
    return found


def _devices(*aliases: str) -> list[VmDevice]:
    return [VmDevice(a, vm_command(a, {})) for a in aliases]


def _close(devices) -> None:
    for d in devices:
        d.close()


def test_default_children_are_forked_from_one_warm_parent_and_import_nothing():
    """Two default VMs: both are children of the one warm parent (this process's child),
    and at their HELO neither has read a byte (numpy and all came with the fork). Closed,
    the children exit 0 and the warm parent stops with the last of them."""
    devices = _devices("vm1", "vm2")
    try:
        for d in devices:
            d.spawn()
        assert [d.start().alias for d in devices] == ["vm1", "vm2"]
        [parent] = _warm_parents(os.getpid())
        assert [_ppid(d.pid) for d in devices] == [parent, parent]
        assert [_bytes_read(d.pid) for d in devices] == [0, 0]
    finally:
        _close(devices)
    assert [d.proc.returncode for d in devices] == [0, 0]
    assert all(gone(p) for p in (parent, *(d.pid for d in devices)))
    assert _warm_parents(os.getpid()) == [] and warm_parent._parent is None


def test_the_warm_parent_runs_blas_on_one_thread_unless_told(monkeypatch):
    """The BLAS rule of child_env holds for the warm parent, whose environment (set before
    it imports numpy) its children inherit; it has one thread, so forking it is safe."""
    from bark_vm.blas import BLAS_THREADS
    for name in BLAS_THREADS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "3")
    [device] = _devices("vm1")
    try:
        device.start()
        [parent] = _warm_parents(os.getpid())
        for pid in (parent, device.pid):
            env = dict(v.split("=", 1) for v in
                       Path(f"/proc/{pid}/environ").read_text().split("\0") if "=" in v)
            assert {n: env.get(n) for n in BLAS_THREADS} == {
                "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "3"}
        assert len(os.listdir(f"/proc/{parent}/task")) == 1
    finally:
        device.close()


def test_any_other_command_is_a_process_of_its_own(monkeypatch):
    """A `vm` field, $MANED_BARK_VM, or a platform that cannot fork from a warm parent:
    the child is started as before, this process its parent, its imports its own."""
    own = VmDevice("vm1", [sys.executable, "-c", "from bark_vm.vm import main; main()",
                           "--alias", "vm1"])
    monkeypatch.setattr(warm_parent, "CAN_FORK", False)
    plain = _devices("vm2")[0]
    try:
        for d in (own, plain):
            assert d.start() is not None
            assert _ppid(d.pid) == os.getpid() and _bytes_read(d.pid) > 1 << 20
        assert _warm_parents(os.getpid()) == []
    finally:
        _close([own, plain])


def test_a_child_killed_is_reported_with_its_signal():
    """The warm parent reaps the child and says how it ended: the device's words are the
    ones of a child started as a command of its own."""
    [device] = _devices("vm1")
    try:
        device.start()
        pid = device.pid
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(DeviceFailure) as e:
            device.run(b"MNPK")
        assert (e.value.kind, e.value.message) == (
            "died", f"device 'vm1' (Bark VM, pid {pid}): died: killed by signal 9")
        assert gone(pid)
    finally:
        device.close()


def test_abort_kills_the_children_at_once():
    """Ctrl-C's abort, with both children idle and their stdin still open: both are killed
    (signal 9, not an exit at EOF) and reaped before anything is closed; the warm parent
    stops when the devices close."""
    devices = _devices("vm1", "vm2")
    try:
        for d in devices:
            d.start()
        [parent] = _warm_parents(os.getpid())
        for d in devices:
            d.abort()
        assert all(gone(d.pid) for d in devices)
        assert all(d.broken for d in devices)
    finally:
        _close(devices)
    assert [d.proc.returncode for d in devices] == [-9, -9]
    assert gone(parent)


def test_abort_before_the_fork_leaves_nothing_behind():
    """A Ctrl-C while the warm parent still imports numpy: the children it forks next are
    killed at once (their stdin still open), and nothing is left when the devices close."""
    devices = _devices("vm1", "vm2")
    try:
        for d in devices:
            d.spawn()
        for d in devices:
            d.abort()
        # abort does not wait: the warm parent may still be between its fork and its exec
        until(lambda: _warm_parents(os.getpid()), "the warm parent runs")
        [parent] = _warm_parents(os.getpid())
        assert all(gone(d.pid) for d in devices)  # d.pid: once forked
        assert [d.proc.wait() for d in devices] == [-9, -9]
    finally:
        _close(devices)
    assert gone(parent)


def test_a_warm_parent_killed_takes_its_children_with_it():
    """SIGKILL to the warm parent: its children die with it (PR_SET_PDEATHSIG), and a job
    sent to one fails as a dead child's."""
    devices = _devices("vm1", "vm2")
    try:
        for d in devices:
            d.start()
        [parent] = _warm_parents(os.getpid())
        os.kill(parent, signal.SIGKILL)
        assert all(gone(d.pid) for d in devices)
        with pytest.raises(DeviceFailure) as e:
            devices[0].run(b"MNPK")
        assert e.value.kind == "died"
    finally:
        _close(devices)
    assert gone(parent)


def test_a_warm_parent_that_cannot_start_is_the_devices_failure(tmp_path, monkeypatch):
    """An interpreter that dies before it can fork (its numpy missing, say): the device
    could not start, in the words of any failed start, with the warm parent's last line."""
    command = vm_command("vm1", {})
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'numpy'\" >&2\n"
                      "exit 1\n")
    broken.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(broken))
    device = VmDevice("vm1", command)
    try:
        with pytest.raises(DeviceFailure) as e:
            device.start()
    finally:
        device.close()
    assert (e.value.kind, e.value.message) == (
        "died", "device 'vm1' (Bark VM): died: could not start: ChildProcessError: the warm "
        "parent of the Bark VMs exited with status 1: ModuleNotFoundError: No module named "
        "'numpy'")
    assert device.broken and warm_parent._parent is None


def test_a_run_leaves_no_process_behind():
    """maned.run in this process, two default VMs: when it returns, this process has no
    child left (no VM, no warm parent)."""
    before = children(os.getpid())
    report = maned.run(source=expand((EXAMPLES / "sweep.mnd").read_text()))
    assert report.exit_code == 0 and report.jobs
    assert children(os.getpid()) <= before


def _running(workdir: Path, **popen):
    """maned-run on LONG, returned once its warm parent has forked both VMs:
    (the process, the warm parent's pid, the VMs' pids)."""
    script = workdir / "long.mnd"
    script.write_text(LONG)
    proc = start(MANED_RUN, script, **popen)
    def forked() -> bool:
        assert proc.poll() is None, proc.communicate()
        parents = _warm_parents(proc.pid)
        return bool(parents) and len(children(parents[0])) == 2
    until(forked, "the warm parent forked the two VMs")
    [parent] = _warm_parents(proc.pid)
    return proc, parent, children(parent)




def test_a_killed_coordinator_leaves_no_warm_parent_and_no_child(workdir):
    """SIGKILL to maned-run mid-sweep: it cannot clean up, and the warm parent, watching
    it, kills both VMs and ends."""
    proc, parent, vms = _running(workdir)
    try:
        proc.kill()
        proc.communicate(timeout=60)
        assert all(gone(p) for p in (parent, *vms))
    finally:  # a warm parent that outlived its coordinator: stopped here, for the suite
        for pid in (parent, *vms):
            kill(pid)


# A coordinator with two VMs, and a process forked from it that holds copies of all its fds
# (the socket to the warm parent, the VMs' pipes), as a --threads pool process does.
HOLDER = """
import os, sys, time
from maned.devices import warm_parent
from maned.devices.vm import VmDevice, vm_command
devices = [VmDevice(a, vm_command(a, {})) for a in ("vm1", "vm2")]
for d in devices:
    d.start()
holder = os.fork()
if holder == 0:
    time.sleep(300)
    os._exit(0)
print(holder, warm_parent._parent.proc.pid, *(d.pid for d in devices), flush=True)
time.sleep(300)
"""


def test_the_warm_parent_watches_the_coordinator_itself(workdir):
    """SIGKILL to a coordinator whose fds live on in a process forked from it: no EOF
    reaches the warm parent or the VMs, and still the warm parent sees its coordinator end
    and takes the VMs with it."""
    proc = start([sys.executable, "-c", HOLDER], stderr=subprocess.DEVNULL)
    pids = [int(p) for p in proc.stdout.readline().split()]
    try:
        holder, parent, *vms = pids
        assert len(vms) == 2
        proc.kill()
        proc.wait(timeout=60)  # not its pipes' end: the holder has them too
        assert all(gone(p) for p in (parent, *vms))
        assert not gone(holder, within_s=0)  # the fds' copies were held all along
    finally:
        for pid in (proc.pid, *pids):
            kill(pid)
        proc.stdout.close()


@pytest.mark.parametrize("to", ["the process", "its process group"])
def test_ctrl_c_ends_the_warm_parent_and_its_children(workdir, to):
    """SIGINT mid-sweep on two default VMs, to the coordinator or (a terminal's Ctrl-C) to
    its whole process group, which the warm parent ignores and follows the coordinator:
    the one notice line, exit 130, and the warm parent and both VMs gone."""
    group = to == "its process group"
    proc, parent, vms = _running(workdir, preexec_fn=default_sigint, start_new_session=group)
    try:
        if group:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        for pid in (proc.pid, parent, *vms):
            kill(pid)
    assert (proc.returncode, out, err) == (130, "", INTERRUPTED + "\n")
    assert all(gone(p) for p in (parent, *vms))


@pytest.mark.parametrize("argv", [[], ["x", "1"], ["99999", str(os.getpid())], ["1", "2", "3"]])
def test_the_warm_parent_started_by_hand_says_its_usage(argv):
    """Its arguments are the coordinator's to give; started wrongly by hand it says how it
    is started, exit 2, no traceback."""
    p = run([sys.executable, "-m", "bark_vm.fork_server"], *argv)
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("usage: python -m bark_vm.fork_server SOCKET_FD "
                               "COORDINATOR_PID\nerror: ") and "Traceback" not in p.stderr
