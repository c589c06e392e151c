"""A Bark VM child (DESIGN D7): one `bark-vm --alias A` process per `host = "local"` alias,
spawned at first use, spoken to in stdio frames (HELO first, then MNPK -> MNRS | ERRJ)."""
import json
import os
import subprocess
import sys
import tempfile

from bark_vm.wire import frames
from bark_vm.wire.constants import FRAME_ERRJ, FRAME_HELO, FRAME_MNPK, FRAME_MNRS
from bark_vm.wire.status import Status, parse_status

from .worker_errors import worker_error_text


class DeviceFailure(Exception):
    """A job a device could not answer. `code` is the worker's CDP code, or None when the
    device itself failed (the child died, the channel broke)."""

    def __init__(self, message: str, code: str | None = None, detail: str = ""):
        super().__init__(message)
        self.message, self.code, self.detail = message, code, detail


def vm_command(alias: str, fields: dict) -> list[str]:
    """The device's `vm` field, else $MANED_BARK_VM, else this install's bark_vm module."""
    exe = fields.get("vm") if isinstance(fields.get("vm"), str) else None
    exe = exe or os.environ.get("MANED_BARK_VM")
    base = [exe] if exe else [sys.executable, "-m", "bark_vm.vm"]
    return base + ["--alias", alias]


class VmDevice:
    def __init__(self, alias: str, command: list[str]):
        self.alias, self.command = alias, command
        self.proc: subprocess.Popen | None = None
        self.status: Status | None = None
        self._log = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def start(self) -> Status:
        """Spawn the child and read its HELO; returns the status it advertises."""
        if self.proc is not None:
            return self.status
        self._log = tempfile.TemporaryFile()
        try:
            self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=self._log)
        except OSError as e:
            raise DeviceFailure(f"no local Bark VM: spawning '{self.command[0]}' failed: "
                                f"{e.strerror or e}") from None
        kind, payload = self._read()
        if kind != FRAME_HELO:
            raise DeviceFailure(f"the Bark VM for '{self.alias}' sent {kind!r} before HELO")
        try:
            self.status = parse_status(payload)
        except ValueError as e:
            raise DeviceFailure(f"the Bark VM for '{self.alias}' sent a bad HELO: {e}") from None
        return self.status

    def run(self, request: bytes) -> bytes:
        """Send one MNPK; the MNRS bytes, or DeviceFailure."""
        try:
            frames.write_frame(self.proc.stdin, FRAME_MNPK, request)
        except (BrokenPipeError, OSError, ValueError):
            raise self._died() from None
        kind, payload = self._read()
        if kind == FRAME_MNRS:
            return payload
        if kind == FRAME_ERRJ:
            try:
                body = json.loads(payload)
                code, detail = str(body["error"]), str(body.get("detail", ""))
            except (ValueError, KeyError, TypeError):
                raise DeviceFailure(f"the Bark VM for '{self.alias}' sent an unreadable "
                                    "ERRJ") from None
            raise DeviceFailure(worker_error_text(code, detail), code, detail)
        raise DeviceFailure(f"the Bark VM for '{self.alias}' answered with a {kind!r} frame")

    def _read(self) -> tuple[bytes, bytes]:
        try:
            got = frames.read_frame(self.proc.stdout)
        except (frames.TruncatedFrame, OSError, ValueError):
            got = None
        if got is None:
            raise self._died()
        return got.type, got.payload

    def _died(self) -> DeviceFailure:
        code = self.proc.poll() if self.proc else None
        if code is None and self.proc:
            try:
                code = self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
        how = f"exited with status {code}" if code is not None and code >= 0 else (
            f"was killed by signal {-code}" if code is not None else "stopped answering")
        return DeviceFailure(f"device '{self.alias}' (Bark VM, pid {self.pid}) {how}")

    def close(self) -> None:
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired, ValueError):
            self.proc.kill()
            self.proc.wait()
        if self._log:
            self._log.close()
