"""A build's steps: a command that must succeed (its failure one coded line, BuildError, with
the tail of what it printed), and the progress lines a long build prints, each stage with
the time since the build began."""
import subprocess
import time
from collections import deque
from typing import Callable

HEARTBEAT_S = 60  # a stage that runs longer says so again, this often


class BuildError(Exception):
    """A build step that failed: one line saying which and why."""


class Clock:
    """The build's progress: `stage(text)` says `[  12 s] text`, the seconds since the start."""

    def __init__(self, say: Callable[[str], None]):
        self.say, self.started = say, time.monotonic()

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def stage(self, text: str) -> None:
        self.say(f"[{self.elapsed:4.0f} s] {text}")


def run(argv: list[str], what: str, clock: Clock | None = None,
        phase: Callable[[str], str | None] | None = None) -> None:
    """Run `argv` to success. With a clock, `phase(line)` names the stage a line of the
    command's output begins (None: the same stage), and each new stage is said, as is one
    that lasts past HEARTBEAT_S."""
    tail: deque[str] = deque(maxlen=3)
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace") as p:
        current, said = None, time.monotonic()
        for line in p.stdout:
            tail.append(line.rstrip())
            if clock is None or phase is None:
                continue
            now = phase(line)
            if now and now != current:
                current, said = now, time.monotonic()
                clock.stage(f"{what}: {now}")
            elif current and time.monotonic() - said >= HEARTBEAT_S:
                said = time.monotonic()
                clock.stage(f"{what}: still {current}")
    if p.returncode != 0:
        raise BuildError(f"{what} failed (exit {p.returncode}): {' | '.join(tail)[-400:]}")
