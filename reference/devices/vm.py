"""A Bark VM child (DESIGN D7): one `bark-vm --alias A` process per `host = "local"` alias,
spawned as soon as the plan names it (its HELO read by its first job), spoken to in stdio frames
(HELO first, then MNPK -> MNRS | ERRJ), every exchange under one deadline. A child of the
default command is forked from the run's warm parent (warm_parent); any other command is
started as a process of its own. Either way the device drives a `Child`."""
import os
import subprocess
import tempfile
import time

from bark_vm.blas import one_blas_thread
from bark_vm.wire.constants import FRAME_ERRJ, FRAME_HELO, FRAME_MNPK, FRAME_MNRS
from bark_vm.wire.frames import parse_error_json
from bark_vm.wire.status import Status, parse_status

from ..failures import DeviceFailure, coded, died, malformed, timed_out, unreachable
from ..interrupts import deferred
from ..io.descriptors import refusal
from . import Child
from . import bounds
from .frame_pipe import FramePipe
from .warm_parent import DEFAULT_VM, fork_child, forked_args
from .worker_errors import worker_error_text

VM_FILES = 3  # a child's stdin and stdout pipes, and its log file


def vm_command(alias: str, fields: dict) -> list[str]:
    """The device's `vm` field, else $MANED_BARK_VM, else this install's bark_vm module."""
    exe = fields.get("vm") if isinstance(fields.get("vm"), str) else None
    exe = exe or os.environ.get("MANED_BARK_VM")
    base = [exe] if exe else list(DEFAULT_VM)
    return base + ["--alias", alias]


# A VM child is one serial worker: its BLAS runs on one thread unless the environment says
# otherwise (the rule's one home is bark_vm.blas, which bark-worker applies too).
def child_env() -> dict[str, str]:
    """The child's environment: this one, with BLAS on one thread unless it says otherwise."""
    return one_blas_thread(dict(os.environ))


class Spawned(subprocess.Popen):
    """A Bark VM child started as a process of its own: a Popen with the rest of `Child`."""

    @property
    def known_pid(self) -> int | None:
        return self.pid

    def abandon(self) -> None:
        """Nothing more to do: the kill was sent, and the kernel reaps what it leaves."""

    def release(self) -> None:
        """Nothing is shared with another device."""


class VmDevice:
    sync_limit = None  # a child answers every request in order, whatever its size

    def __init__(self, alias: str, command: list[str],
                 deadline_s: float = bounds.ANSWER_DEADLINE_S):
        self.alias, self.command, self.deadline_s = alias, command, deadline_s
        self.proc: Child | None = None
        self.status: Status | None = None
        self._pipe: FramePipe | None = None
        self._broken: DeviceFailure | None = None
        self._log = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    @property
    def where(self) -> str:
        pid = self.proc.known_pid if self.proc else None
        return f"device '{self.alias}' (Bark VM" + (f", pid {pid})" if pid else ")")

    @property
    def broken(self) -> bool:
        """Failed for good (died, timed out, broke the protocol): a new child is needed."""
        return self._broken is not None

    def spawn(self) -> None:
        """Start the child without waiting for it (D7); `start` reads its HELO."""
        if self._broken:
            raise self._broken
        if self.proc is None:
            self._starting(self._spawn)

    def start(self) -> Status:
        """Spawn the child (unless `spawn` did) and read its HELO; returns the status it
        advertises. A start that fails leaves the device failed, with that failure, for the
        rest of the run."""
        self.spawn()
        return self.status if self.status is not None else self._starting(self._hello)

    def _starting(self, step):
        """One step of the start; anything but a DeviceFailure is still this device's
        failure, worded once."""
        try:
            return step()
        except DeviceFailure:
            raise
        except Exception as e:
            raise self._break(died(self.where, f"could not start: {type(e).__name__}: {e}")) \
                from None

    def _spawn(self) -> None:
        why = refusal("the child", VM_FILES)
        if why:
            self._broken = unreachable(self.where, why)
            raise self._broken
        self._log = tempfile.TemporaryFile()
        args = forked_args(self.command)
        if args is not None:
            self.proc = fork_child(args, self._log.fileno(), child_env())
            self._pipe = FramePipe(self.proc.stdin.fileno(), self.proc.stdout.fileno())
            return
        try:
            with deferred():  # a Ctrl-C inside Popen would lose the child it started
                self.proc = Spawned(self.command, stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=self._log, bufsize=0,
                                    env=child_env())
        except OSError as e:
            self._broken = unreachable(self.where, f"no local Bark VM: spawning "
                                       f"'{self.command[0]}' failed: {e.strerror or e}")
            raise self._broken from None
        self._pipe = FramePipe(self.proc.stdin.fileno(), self.proc.stdout.fileno())

    def _hello(self) -> Status:
        start_s = max(self.deadline_s, bounds.START_DEADLINE_S)
        kind, payload = self._read(time.monotonic() + start_s, "no HELO", start_s)
        if kind != FRAME_HELO:
            raise self._break(malformed(self.where, f"sent {kind!r} before HELO"))
        try:
            self.status = parse_status(payload)
        except ValueError as e:
            raise self._break(malformed(self.where, f"sent a bad HELO: {e}")) from None
        return self.status

    def run(self, request: bytes) -> bytes:
        """Send one MNPK; the MNRS bytes, or DeviceFailure. The whole exchange has one
        deadline; past it the child is killed and the device stays failed."""
        if self._broken:
            raise self._broken
        end = time.monotonic() + self.deadline_s
        try:
            self._pipe.write_frame(FRAME_MNPK, request, end)
        except DeviceFailure as e:
            if e.kind == "timeout":
                raise self._timed_out("the child did not read the job", self.deadline_s) from None
            raise self._died() from None
        kind, payload = self._read(end, "no answer", self.deadline_s)
        if kind == FRAME_MNRS:
            return payload
        if kind == FRAME_ERRJ:
            err = parse_error_json(payload)
            if err is None:
                raise malformed(self.where, "sent an unreadable ERRJ")
            raise coded(self.where, worker_error_text(*err), *err)
        raise self._break(malformed(self.where, f"answered with a {kind!r} frame"))

    def release(self, deadline_s: float) -> None:
        """Nothing to free after an abort: the killed child held the only job."""

    def abort(self) -> None:
        """Stop at once (on Ctrl-C): the child is killed, a wait on it ends."""
        self._broken = self._broken or died(self.where, "stopped (the run was interrupted)")
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()

    def _read(self, end: float, what: str, waited_s: float) -> tuple[bytes, bytes]:
        try:
            return self._pipe.read_frame(end)
        except DeviceFailure as e:
            if e.kind == "timeout":
                raise self._timed_out(what, waited_s) from None
            if e.kind == "malformed_response":  # what cannot be a frame, said
                raise self._break(e.at(self.where)) from None
            raise self._died() from None

    def _break(self, failure: DeviceFailure) -> DeviceFailure:
        """A child that failed for good (broke the protocol, passed a deadline, could not
        start) is killed; every later job fails the same way."""
        self._broken = failure
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        return self._broken

    def _timed_out(self, what: str, waited_s: float) -> DeviceFailure:
        return self._break(timed_out(self.where, what, waited_s, "the child was killed (set "
                                     f"timeout = N seconds in device::{self.alias} to wait "
                                     "longer)"))

    def _died(self) -> DeviceFailure:
        code = self.proc.poll()
        if code is None:
            try:
                code = self.proc.wait(timeout=bounds.CLOSE_GRACE_S)
            except subprocess.TimeoutExpired:
                code = None
        how = f"exited with status {code}" if code is not None and code >= 0 else (
            f"killed by signal {-code}" if code is not None else "stopped answering")
        self._broken = died(self.where, how)
        return self._broken

    def close(self) -> None:
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=bounds.CLOSE_GRACE_S)
        except (OSError, subprocess.TimeoutExpired, ValueError):
            self.proc.kill()
            try:
                self.proc.wait(timeout=bounds.CLOSE_GRACE_S)
            except ChildProcessError:  # a forked child that never was
                pass
            except subprocess.TimeoutExpired:  # a warm parent that does not answer
                self.proc.abandon()
        finally:
            self.proc.release()
        self.proc.stdout.close()
        if self._log:
            self._log.close()
