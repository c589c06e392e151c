"""The plain lines of --progress off a terminal (docs/wire.md, "--progress"), in an order that
does not depend on timing, so that two runs' logs compare: one definition at a time, in the
order the definitions start, and each definition's jobs in job order (configuration, then
round: `Planned.flows`), numbered in that order. A job's line waits for the lines before
it; a definition's lines wait for those of every definition that started before it. A round
run on several aliases (--replicas) prints its lines together, by alias; a line that comes
after its round's turn (a moved chain's second try, a tie-break) comes out as it comes.
When a definition ends (Settled) its lines that arrived come out at once, and when the run
stops (the verify phase begins, or the run ends) every line still waiting does, in that
order."""
from ..dispatch.trace import JobDone, Planned, Settled, definition_of


class _Definition:
    """One definition's jobs: their order, the results that came (flow -> line tails) and
    how many lines each round waits for (its replicas)."""

    def __init__(self, planned: Planned):
        self.name, self.jobs = planned.definition, planned.jobs
        self.order = list(planned.flows)
        self.each = max(1, planned.jobs // len(self.order)) if self.order else 1
        self.came: dict[str, list[str]] = {}
        self.at = 0        # the rounds whose lines are out
        self.said = 0      # lines released
        self.late: list[str] = []  # lines of rounds already out
        self.over = False  # the definition ended: no more of its jobs are waited for

    def add(self, event: JobDone) -> None:
        if event.flow not in self.came and event.flow not in self.order:
            self.order.append(event.flow)  # a job Planned did not list: after those it did
        state = "ok" if event.error is None else f"failed [{event.error}]"
        tail = f"({event.flow} on {event.target}) {state}"
        lines = self.came.setdefault(event.flow, [])
        if event.flow in self.order[:self.at]:
            self.late.append(tail)
        else:
            lines.append(tail)

    def ready(self, everything: bool) -> list[str]:
        """The lines that may come out now, in job order; all that came when `everything`."""
        tails, self.late = self.late, []
        while self.at < len(self.order):
            lines = self.came.get(self.order[self.at], [])
            if len(lines) < self.each and not everything:
                break
            tails += sorted(lines)
            self.at += 1
        out = []
        for tail in tails:
            self.said += 1
            out.append(f"progress: {self.name} {self.said}/{max(self.jobs, self.said)} {tail}")
        return out

    def finished(self) -> bool:
        return self.over and not self.late


class ProgressLines:
    """Takes Planned, JobDone and Settled events; `say(line)` gets each line once its turn
    comes."""

    def __init__(self, say):
        self._say = say
        self._open: list[_Definition] = []  # in the order they started

    def planned(self, event: Planned) -> None:
        self._open.append(_Definition(event))

    def done(self, event: JobDone) -> None:
        d = self._of(event.flow)
        if d is None:  # not planned, or over
            return
        d.add(event)
        self._release(everything=False)

    def settled(self, event: Settled) -> None:
        d = self._of(event.definition)
        if d is not None:
            d.over = True
            self._release(everything=False)

    def flush(self) -> None:
        """Every line still waiting, in order (the run stopped, or a phase begins)."""
        self._release(everything=True)

    def _of(self, flow: str) -> _Definition | None:
        name = definition_of(flow)
        return next((d for d in self._open if d.name == name), None)

    def _release(self, everything: bool) -> None:
        while self._open:
            d = self._open[0]
            for line in d.ready(everything or d.over):
                self._say(line)
            if not (everything or d.finished()):
                return
            self._open.pop(0)
