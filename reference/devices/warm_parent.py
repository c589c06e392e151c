"""Bark VM children forked from one warm parent (DESIGN D7, bark_vm/fork_server.py): the
default VM command (this install's `python -m bark_vm.vm`) costs one numpy import for all
the children open at once, not one each.

The warm parent starts with the first such child and stops when the last device using it
closes: children of one run share it, and nothing of it outlives the run. It cannot outlive
the coordinator either: it watches this process (a pidfd) and its socket, and kills its
children when either ends. A child's stdin and stdout are pipes this process holds, its
stderr the device's log; its pid is its own (a child of the warm parent, which reaps it and
says how it ended)."""
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time

from bark_vm.wire.fork_socket import (EXITED, FAILED, FORKED, fork_request, kill_request,
                                      read_answer)

from ..interrupts import deferred
from .bounds import CLOSE_GRACE_S, START_DEADLINE_S

DEFAULT_VM = (sys.executable, "-m", "bark_vm.vm")  # this install's Bark VM: its one home


def _can_fork() -> bool:
    if sys.platform != "linux" or not hasattr(os, "pidfd_open") \
            or not hasattr(socket, "send_fds"):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))  # Linux 5.3 on
    except OSError:
        return False
    return True


CAN_FORK = _can_fork()


def forked_args(command: list[str]) -> list[str] | None:
    """The bark-vm arguments of `command` when it is this install's default VM (such a child
    is forked from the warm parent), else None (it is started as a command of its own)."""
    if not CAN_FORK or tuple(command[:len(DEFAULT_VM)]) != DEFAULT_VM:
        return None
    return list(command[len(DEFAULT_VM):])


class WarmParent:
    """The coordinator's end of one `bark_vm.fork_server`: requests go out on its socket,
    and whichever thread waits reads the answers for all (one reader at a time)."""

    def __init__(self, env: dict[str, str]):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._log = tempfile.TemporaryFile()
        try:
            with deferred():  # a Ctrl-C inside Popen would lose the process it started
                self.proc = subprocess.Popen(
                    [sys.executable, "-m", "bark_vm.fork_server", str(theirs.fileno()),
                     str(os.getpid())], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=self._log, pass_fds=(theirs.fileno(),), env=env)
        except BaseException:
            ours.close()
            self._log.close()
            raise
        finally:
            theirs.close()
        self._sock = ours
        self._cond = threading.Condition()
        self._reading = False
        self.ended = False  # its socket closed: no more answers
        self.users = 0  # devices with a child of it, not yet closed (this module's lock)
        self._next = 0
        self.pids: dict[int, int] = {}  # child N -> its pid, once forked
        self.codes: dict[int, int] = {}  # child N -> how it ended (Popen's returncode)
        self.failed: dict[int, str] = {}  # child N -> why it could not be forked

    def fork(self, argv: list[str], fds: tuple[int, int, int]) -> int:
        """Ask for a child running `bark-vm ARGV` on (stdin, stdout, stderr); its number N.
        Does not wait: the warm parent may still be importing numpy."""
        with self._cond:
            number, self._next = self._next, self._next + 1
        try:
            socket.send_fds(self._sock, [fork_request(number, argv)], list(fds))
        except OSError:  # it died before it could read a request (its numpy missing, say)
            self.ended = True
            raise ChildProcessError(self.why_ended()) from None
        return number

    def kill(self, number: int) -> None:
        """SIGKILL to child N, unless it has ended (the warm parent checks, and reaps)."""
        try:
            self._sock.send(kill_request(number))
        except OSError:  # the warm parent is gone, and its children with it
            pass

    def wait_for(self, done, end: float | None) -> None:
        """Read answers until `done()`, the socket's end, or the monotonic `end` (None:
        no end; already past: only what has arrived)."""
        with self._cond:
            while not done() and not self.ended:
                left = None if end is None else end - time.monotonic()
                if self._reading:
                    if left is not None and left <= 0:
                        return
                    self._cond.wait(left)
                    continue
                self._reading = True
                self._cond.release()
                try:
                    messages = self._receive(left)
                finally:
                    self._cond.acquire()
                    self._reading = False
                self._take(messages)
                self._cond.notify_all()
                if left is not None and left <= 0:
                    return

    def _receive(self, left: float | None) -> list[bytes]:
        """What has arrived, waiting up to `left` for the first (b"" marks the end)."""
        poller = select.poll()
        poller.register(self._sock, select.POLLIN)
        if not poller.poll(None if left is None else max(left, 0) * 1000):
            return []
        messages = []
        while True:
            try:
                data = self._sock.recv(4096, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return messages
            except OSError:
                data = b""
            messages.append(data)
            if not data:
                return messages

    def _take(self, messages: list[bytes]) -> None:
        for data in messages:
            if not data:
                self.ended = True
                continue
            verb, number, rest = read_answer(data)
            if verb == FORKED:
                self.pids[number] = int(rest)
            elif verb == EXITED:
                self.codes[number] = int(rest)
            elif verb == FAILED:
                self.failed[number] = rest

    def why_ended(self) -> str:
        """The warm parent's last words (its stderr's last line), for a failed start."""
        try:
            self._log.seek(0)
            lines = self._log.read().decode(errors="replace").strip().splitlines()
        except (OSError, ValueError):
            lines = []
        try:
            code = self.proc.wait(timeout=CLOSE_GRACE_S)  # its socket's end: it is exiting
        except subprocess.TimeoutExpired:
            code = None
        how = "closed its socket" if code is None else (
            f"exited with status {code}" if code >= 0 else f"was killed by signal {-code}")
        return f"the warm parent of the Bark VMs {how}" + (f": {lines[-1]}" if lines else "")

    def stop(self) -> None:
        """Shut its socket (it kills what children it has left and exits), and wait for it;
        the socket is shut, not only closed, so a forked copy of it cannot keep it open."""
        with self._cond:
            self.ended = True
            try:
                self._sock.shutdown(socket.SHUT_RDWR)  # a reader's poll returns at once
            except OSError:
                pass
            while self._reading:  # no thread reads the socket as it closes
                self._cond.wait(CLOSE_GRACE_S)
            self._sock.close()
        try:
            self.proc.wait(timeout=CLOSE_GRACE_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()


_lock = threading.Lock()
_parent: WarmParent | None = None


def fork_child(argv: list[str], stderr: int, env: dict[str, str]) -> "ForkedChild":
    """A child running `bark-vm ARGV` forked from this process's warm parent (started now,
    with `env`, if none is running); its stderr goes to the fd `stderr`."""
    global _parent
    with _lock:
        if _parent is None or _parent.ended or _parent.proc.poll() is not None:
            _parent = WarmParent(env)
        parent = _parent
        parent.users += 1
    try:
        return ForkedChild(parent, argv, stderr)
    except BaseException:
        _release(parent)
        raise


def _release(parent: WarmParent) -> None:
    """One device is done with `parent`; the last one stops it."""
    global _parent
    with _lock:
        parent.users -= 1
        if parent.users:
            return
        if _parent is parent:
            _parent = None
    parent.stop()


class ForkedChild:
    """A Bark VM child forked from the warm parent, a `maned.devices.Child`: what VmDevice
    uses of a subprocess.Popen, and `release` once the device is closed."""

    def __init__(self, parent: WarmParent, argv: list[str], stderr: int):
        self._parent = parent
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        try:
            self._number = parent.fork(argv, (in_r, out_w, stderr))
        except BaseException:
            os.close(in_w)
            os.close(out_r)
            raise
        finally:  # the warm parent has its own copies now (or none was sent)
            os.close(in_r)
            os.close(out_w)
        self.stdin = open(in_w, "wb", buffering=0)
        self.stdout = open(out_r, "rb", buffering=0)
        self.returncode: int | None = None
        self._released = False

    @property
    def pid(self) -> int | None:
        """Its pid, once the warm parent has forked it (waited for, as long as a start
        may take); None if it never was."""
        n = self._number
        self._parent.wait_for(lambda: n in self._parent.pids or n in self._parent.failed,
                              time.monotonic() + START_DEADLINE_S)
        return self._parent.pids.get(n)

    @property
    def known_pid(self) -> int | None:
        """Its pid if the warm parent has said it, without waiting (for messages)."""
        return self._parent.pids.get(self._number)

    def abandon(self) -> None:
        """The last resort of a close whose kill went unanswered: the warm parent itself
        is killed, and its children with it (PR_SET_PDEATHSIG)."""
        self._parent.proc.kill()

    def _ended(self) -> bool:
        return self._number in self._parent.codes

    def poll(self) -> int | None:
        self._parent.wait_for(self._ended, time.monotonic())
        self.returncode = self._parent.codes.get(self._number)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        """Its exit status (Popen's returncode); None when the warm parent ended first (the
        child died with it, how is unknown). ChildProcessError when it was never forked."""
        end = None if timeout is None else time.monotonic() + timeout
        self._parent.wait_for(lambda: self._ended() or self._number in self._parent.failed,
                              end)
        self.returncode = self._parent.codes.get(self._number)
        if self.returncode is not None:
            return self.returncode
        parent, n = self._parent, self._number
        if n in parent.failed:
            raise ChildProcessError(f"the warm parent could not fork it: {parent.failed[n]}")
        if parent.ended and n not in parent.pids:
            raise ChildProcessError(parent.why_ended())
        if parent.ended:
            return None
        raise subprocess.TimeoutExpired(["bark-vm"], timeout)

    def kill(self) -> None:
        if self.poll() is None and not self._parent.ended:
            self._parent.kill(self._number)

    def release(self) -> None:
        """The device is closed: the warm parent may stop once no device needs it."""
        if not self._released:
            self._released = True
            _release(self._parent)
