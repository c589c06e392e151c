"""The user's terminal while `maned-machine boot` runs: its modes kept at the start and put
back at the end whatever ends the boot, and its echo off while the guest asks a password."""
import fcntl
import os
import termios

from .guest.identity import QUESTIONS

PASSWORD_PROMPTS = tuple(prompt for key, prompt in QUESTIONS if key in ("password", "again"))


class Terminal:
    """The terminal on `fd` (nothing at all when `fd` is not one)."""

    def __init__(self, fd: int):
        self.fd = fd
        self._modes = termios.tcgetattr(fd) if os.isatty(fd) else None
        self._flags = fcntl.fcntl(fd, fcntl.F_GETFL) if self._modes is not None else None
        self.echoing = True

    def follow(self, console: str) -> None:
        """Echo off when the console's last words ask a password, on again otherwise."""
        self.echo(not console.endswith(PASSWORD_PROMPTS))

    def echo(self, on: bool) -> None:
        if self._modes is None or on == self.echoing:
            return
        modes = termios.tcgetattr(self.fd)
        modes[3] = modes[3] | termios.ECHO if on else modes[3] & ~termios.ECHO
        termios.tcsetattr(self.fd, termios.TCSANOW, modes)
        self.echoing = on

    def restore(self) -> None:
        """The modes and file flags the terminal had at the start."""
        if self._modes is None:
            return
        try:
            termios.tcsetattr(self.fd, termios.TCSANOW, self._modes)
            fcntl.fcntl(self.fd, fcntl.F_SETFL, self._flags)
        except (OSError, termios.error):  # the terminal is gone (SIGHUP): nothing to restore
            pass
