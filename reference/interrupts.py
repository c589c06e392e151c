"""Ctrl-C at any moment (DESIGN §10): how a console tool's process answers SIGINT.

Python raises KeyboardInterrupt wherever the main thread happens to be. Some places cannot
unwind: an at-fork handler swallows it ("Exception ignored in ... _releaseLock") and the
signal is lost, and a process pool half started leaves children nobody stops. So, once a
tool calls `install()`:

- SIGINT becomes KeyboardInterrupt only outside a fork and outside `deferred()` sections;
  inside one it waits, and is raised when the section ends;
- a KeyboardInterrupt the interpreter swallows anyway (an at-fork or __del__ hook) is not
  printed, and is raised again on the main thread;
- a process still alive STOP_GRACE_S after the first SIGINT, or at a second SIGINT, is
  ended hard by a watch thread: the notice written (once in all), every descendant
  SIGKILLed, exit 130.

A library caller (`maned.run()`) that never calls install() keeps Python's own SIGINT, and
`deferred()` is then a no-op."""
import logging  # noqa: F401  (its at-fork handlers must be inside ours: see install)
import os
import select
import signal
import sys
import threading
import time
from pathlib import Path

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
STOP_GRACE_S = 10.0     # from the first SIGINT to the hard stop, if the run has not ended
_REARM_S = 0.05         # how often the watch thread looks for a swallowed interrupt

_owner: int | None = None  # the pid that installed: a forked child ignores SIGINT
_main = threading.main_thread().ident
_notice = ""
_grace_s = STOP_GRACE_S
_said = threading.Lock()   # held for good by whoever writes the notice
_depth = 0                 # the main thread's open deferrals (forks included)
_pending = False           # a SIGINT, or a swallowed KeyboardInterrupt, not yet raised
_rearming = False          # the next handler call is the watch thread's, not a signal
_interrupted = False
_wake_r = _wake_w = -1


def install(notice: str, grace_s: float = STOP_GRACE_S) -> None:
    """Take SIGINT for this process; `notice` is the one line a Ctrl-C prints, grace_s how
    long the run may take to stop by itself."""
    global _owner, _notice, _grace_s, _wake_r, _wake_w
    if _owner == os.getpid():
        return
    _owner, _notice, _grace_s = os.getpid(), notice, grace_s
    _wake_r, _wake_w = os.pipe()
    os.set_blocking(_wake_w, False)
    threading.Thread(target=_watch, name="sigint-watch", daemon=True).start()
    # Registered after every at-fork handler imported so far (logging's lock among them),
    # ours run first before a fork and last after it, so theirs run inside the deferral.
    os.register_at_fork(before=_fork_starts, after_in_parent=_fork_ended)
    sys.unraisablehook = _unraisable(sys.unraisablehook)
    signal.signal(signal.SIGINT, _on_sigint)
    # A SIGINT held back while the interpreter started (a caller may block it) arrives now.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def say(text: str, stream=None) -> None:
    """Write the notice `text` to `stream` (default: stderr); after install(), only if the
    notice has not been written (a hard stop may have)."""
    stream = stream or sys.stderr
    if _owner != os.getpid() or _said.acquire(blocking=False):
        stream.write(text + "\n")
        stream.flush()


class deferred:
    """A section that must not be cut: a SIGINT inside it is raised as it ends (only on the
    main thread; elsewhere, and without install(), it changes nothing)."""

    def __enter__(self):
        global _depth
        if threading.get_ident() == _main:
            _depth += 1
        return self

    def __exit__(self, *exc):
        global _depth, _pending
        if threading.get_ident() == _main:
            _depth -= 1
            if _depth == 0 and _pending and exc[0] is None:
                _pending = False
                raise KeyboardInterrupt
        return False


def _fork_starts() -> None:
    global _depth
    if threading.get_ident() == _main:
        _depth += 1


def _fork_ended() -> None:
    """After a fork, in the parent: the deferral ends, but raising here would be swallowed,
    so a waiting SIGINT is left to the watch thread."""
    global _depth
    if threading.get_ident() == _main:
        _depth -= 1


def _on_sigint(signum, frame) -> None:
    global _pending, _rearming, _interrupted
    if os.getpid() != _owner:  # a forked child (a pool process): its parent stops it
        return
    if _rearming:  # the watch thread raising again what was swallowed
        _rearming = False
        if not _pending:
            return
    elif _interrupted:  # a second Ctrl-C: stop now
        _wake(b"!")
        return
    else:
        _interrupted = True
        _wake(b"i")
    if _depth:
        _pending = True
        return
    _pending = False
    raise KeyboardInterrupt


def _unraisable(previous):
    def hook(unraisable) -> None:
        global _pending
        if issubclass(unraisable.exc_type, KeyboardInterrupt) and os.getpid() == _owner:
            _pending = True  # the watch thread raises it again
            return
        previous(unraisable)
    return hook


def _wake(what: bytes) -> None:
    try:
        os.write(_wake_w, what)
    except OSError:  # a full pipe: the watch thread is awake already
        pass


def _watch() -> None:
    """From the first SIGINT: raise again a swallowed interrupt, and stop hard at a second
    SIGINT or the grace after the first."""
    global _rearming
    os.read(_wake_r, 1)
    end = time.monotonic() + _grace_s
    while (left := end - time.monotonic()) > 0:
        if select.select([_wake_r], [], [], min(_REARM_S, left))[0]:
            if b"!" in os.read(_wake_r, 64):
                break
        if _pending and not _depth:
            _rearming = True
            signal.pthread_kill(_main, signal.SIGINT)  # a real signal wakes a blocked wait
    _hard_stop()


def _hard_stop() -> None:
    """The notice (if nobody wrote it), every descendant killed, exit 130."""
    if _said.acquire(timeout=1.0):
        try:
            os.write(2, (_notice + "\n").encode())
        except OSError:  # no stderr to write to: the exit code says it
            pass
    for _ in range(50):  # until no child is left (one may be forking meanwhile)
        found = descendants(os.getpid())
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.01)
    os._exit(EXIT_INTERRUPTED)


def descendants(pid: int, living: bool = True) -> list[int]:
    """Every process below `pid`, parents before their children (Linux /proc): the living
    ones, or with living=False the zombies too (an ended child not reaped yet still holds
    its CPU time, which its parent's cutime does not have yet)."""
    found, todo = [], [pid]
    while todo:
        for task in _tasks(todo.pop()):
            try:
                kids = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            if living:
                kids = [k for k in kids if not _zombie(k)]
            found += kids
            todo += kids
    return found


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[0] == b"Z"
    except (OSError, IndexError):
        return True  # gone already


def _tasks(pid: int) -> list[Path]:
    try:
        return list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return []
