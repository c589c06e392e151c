"""Signals in tests. A signal to one chosen thread of another process (Linux tgkill): the
kernel may hand a process's signal to any of its threads, and the code under test must
cope with the worst choice, so tests make that choice on purpose. And SIGINT back to its
default in a child: a suite started in the background (`cmd &` in a script) inherits SIGINT
ignored, and so would the `maned-run` a Ctrl-C test interrupts."""
import ctypes
import os
import signal

SYS_TGKILL = {"x86_64": 234, "aarch64": 131}.get(os.uname().machine, 234)


def other_threads(pid: int) -> list[int]:
    """The thread ids of `pid` other than its main thread."""
    return sorted(int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) != pid)


def signal_thread(pid: int, tid: int, sig: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(SYS_TGKILL, pid, tid, int(sig)) != 0:
        raise OSError(ctypes.get_errno(), f"tgkill({pid}, {tid}, {sig}) failed")


def default_sigint() -> None:
    """A `preexec_fn`: the child starts with SIGINT at its default, whatever ours is."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
