"""The user's terminal while `maned-machine boot` runs: its modes kept at the start and put
back at the end whatever ends the boot, and its echo off from the moment the guest asks a
password until the answer has been sent."""
import fcntl
import os
import termios

from .guest.identity import QUESTIONS, SECRET_KEYS, set_echo

PASSWORD_PROMPTS = tuple(prompt for key, prompt in QUESTIONS if key in SECRET_KEYS)


class Terminal:
    """The terminal on `fd` (nothing at all when `fd` is not one, or is -1: no stdin)."""

    def __init__(self, fd: int):
        self.fd = fd
        self._modes = termios.tcgetattr(fd) if fd >= 0 and os.isatty(fd) else None
        self._flags = fcntl.fcntl(fd, fcntl.F_GETFL) if self._modes is not None else None
        self.echoing = True
        self._prompt_at = -1     # where the last password prompt the console showed ends
        self._answered = True    # the line typed after it has been sent

    def follow(self, console: str) -> None:
        """Echo off when the console's last words are a new password prompt; on again only
        once its answer has been sent (whatever the guest prints meanwhile: a start job's
        line, a kernel warning), and no password prompt is last."""
        if console.endswith(PASSWORD_PROMPTS):
            if len(console) != self._prompt_at:
                self._prompt_at, self._answered = len(console), False
            self.echo(False)
        elif self._answered:
            self.echo(True)

    def answered(self) -> None:
        """The typing side has sent the line the last prompt asked for."""
        self._answered = True

    def echo(self, on: bool) -> None:
        if self._modes is None or on == self.echoing:
            return
        set_echo(self.fd, on)
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
