"""What maned-run shows on stderr while a run goes on (docs/wire.md, "--progress").

On a terminal, one status line, redrawn in place at most every REDRAW_S (however fast
jobs finish; the latest state once due), names each definition at work:
`fit: round 97/98 on vm1, 0:01 left` for a chain of rounds, `g: running locally, 0:12` for
one job, `verify: re-running locally, 0:03` for --verify. When a definition (or the verify
phase) ends, its last line stays, at once: `fit: 98 rounds done in 0:04`. Off a terminal,
with --progress, one plain line per finished job, with no times and in job order
(progress_lines.py), so that logs compare. `note:` lines print either way. Every line is
masked: aliases may come from the network."""
import os
import threading
import time

from ..diagnostics.printer import mask
from ..dispatch.trace import (VERIFY, JobDone, JobStarted, Phase, Planned, Settled,
                              definition_of)
from ..pipeline.report import Note
from ..targets.target import LOCAL
from .progress_lines import ProgressLines

REDRAW_S = 0.5  # the live line is redrawn at most this often (twice a second)
TICK_S = 0.1    # how often the redraw thread looks whether a redraw is due
CLEAR = "\r\x1b[K"


def clock(seconds: float) -> str:
    """m:ss (h:mm:ss past an hour)."""
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else \
        f"{s // 60}:{s % 60:02d}"


class _Work:
    """One definition (or the verify phase) under way."""

    def __init__(self, name: str, jobs: int, now: float):
        self.name, self.jobs, self.began = name, jobs, now
        self.done, self.failed, self.targets = 0, False, []

    def saw(self, target: str) -> None:
        if target not in self.targets:
            self.targets.append(target)

    def where(self) -> str:
        if not self.targets:
            return "starting"
        if self.targets == [LOCAL]:
            return "locally"
        return "on " + ", ".join("local" if t == LOCAL else t for t in self.targets)

    def line(self, now: float) -> str:
        took = now - self.began
        if self.name == VERIFY:
            return f"verify: re-running locally, {clock(took)}"
        if self.jobs <= 1:
            state = f"running {self.where()}" if self.targets else "waiting"
            return f"{self.name}: {state}, {clock(took)}"
        left = f"{clock(took / self.done * (self.jobs - self.done))} left" if self.done else \
            "estimating"
        return f"{self.name}: round {min(self.done + 1, self.jobs)}/{self.jobs} " \
               f"{self.where()}, {left}"

    def final(self, now: float) -> str:
        took = clock(now - self.began)
        if self.name == VERIFY:
            return f"verify: done in {took}"
        if self.failed:
            return f"{self.name}: failed {self.where()} after {took}"
        if self.jobs > 1:
            return f"{self.name}: {self.jobs} rounds done in {took}"
        return f"{self.name}: done {self.where()} in {took}"


class ProgressView:
    """The progress callback of one run (`__call__`), and `close()` once it is over."""

    def __init__(self, err, shown: bool, live: bool, clock=time.monotonic):
        self.err, self.shown, self.live, self._clock = err, shown, live, clock
        self._work: dict[str, _Work] = {}
        self._lines = ProgressLines(self._say)
        self._lock = threading.Lock()
        self._drawn = False
        self._drawn_at: float | None = None  # when the live line was last drawn
        self._stop = threading.Event()
        self._ticker = None
        if shown and live:
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()

    def __call__(self, event) -> None:
        with self._lock:
            if isinstance(event, Note):
                self._say(f"note: {event.text}")
            elif not self.shown:
                return
            elif isinstance(event, Planned):
                self._work[event.definition] = _Work(event.definition, event.jobs,
                                                     self._clock())
                if not self.live:
                    self._lines.planned(event)
            elif isinstance(event, Phase):
                self._phase(event)
            elif isinstance(event, JobStarted):
                work = self._work.get(definition_of(event.flow))
                if work is not None:
                    work.saw(event.target)
            elif isinstance(event, JobDone):
                self._job_done(event)
            elif isinstance(event, Settled):
                self._settled(event)
            if self.live:
                self._draw_if_due()

    def _phase(self, event: Phase) -> None:
        if not event.ended:
            self._work[event.name] = _Work(event.name, 0, self._clock())
            if not self.live:
                self._lines.flush()
                self._say(f"progress: {event.name}: re-running locally")
        elif event.name in self._work:
            work = self._work.pop(event.name)
            self._say(work.final(self._clock()) if self.live else f"progress: {event.name}: "
                      "done")

    def _job_done(self, event: JobDone) -> None:
        name = definition_of(event.flow)
        work = self._work.get(name)
        if work is None:
            return
        work.done += event.error is None  # a failed job may run again (a moved chain)
        work.saw(event.target)
        if not self.live:
            self._lines.done(event)

    def _settled(self, event: Settled) -> None:
        """A definition ended: its last line stays (its plain lines all come out)."""
        work = self._work.pop(event.definition, None)
        if work is None:
            return
        work.failed = event.failed
        if self.live:
            self._say(work.final(self._clock()))
        else:
            self._lines.settled(event)

    def _say(self, line: str) -> None:
        """A line that stays (above the live line, which is redrawn after it)."""
        self.err.write((CLEAR if self._drawn else "") + mask(line) + "\n")
        self._drawn = False
        self.err.flush()

    def _draw_if_due(self) -> None:
        """Redraw when the line is blank or REDRAW_S has passed since it was drawn; an
        event in between is shown by the next due redraw (the thread's), never lost."""
        if not self._drawn or self._clock() - self._drawn_at >= REDRAW_S:
            self._draw()

    def redraw_if_due(self) -> None:
        """The redraw thread's step: the latest state, once due (the clocks move too)."""
        with self._lock:
            if self._work:
                self._draw_if_due()

    def _draw(self) -> None:
        if not self._work:
            if self._drawn:
                self.err.write(CLEAR)
                self._drawn = False
                self.err.flush()
            return
        now = self._clock()
        line = " | ".join(w.line(now) for w in self._work.values())
        self.err.write(CLEAR + mask(line)[:self._width()])
        self._drawn, self._drawn_at = True, now
        self.err.flush()

    def _width(self) -> int:
        """The terminal's width less one (a full line would wrap); 119 when it is unknown."""
        try:
            columns = os.get_terminal_size(self.err.fileno()).columns
        except (OSError, ValueError, AttributeError):
            columns = 0
        return columns - 1 if columns >= 20 else 119

    def _tick(self) -> None:
        while not self._stop.wait(TICK_S):
            self.redraw_if_due()

    def close(self) -> None:
        """Stop redrawing and clear the live line, or print the plain lines still waiting,
        before the run's errors print."""
        self._stop.set()
        with self._lock:
            self._work.clear()
            if self.live:
                self._draw()
            else:
                self._lines.flush()
