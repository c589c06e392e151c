"""The plain lines of --progress off a terminal (docs/wire.md, "--progress"), in an order that
does not depend on timing, so that two runs' logs compare: one definition at a time, in the
order the definitions start, and each definition's jobs in job order (configuration, then
round: `Planned.flows`), numbered in that order. A job's line waits for the lines before
it; a definition's lines wait for those of every definition that started before it. When a
job fails its definition's lines that arrived come out at once, and when the run stops
(the verify phase begins, or the run ends) every line still waiting does, in that order."""
from ..dispatch.trace import JobDone, Planned, definition_of


class _Definition:
    """One definition's jobs: their order and the results that came (flow -> line tail)."""

    def __init__(self, planned: Planned):
        self.name, self.jobs = planned.definition, planned.jobs
        self.order = list(planned.flows)
        self.came: dict[str, str] = {}
        self.said = 0      # lines released
        self.over = False  # a job failed: no more of its jobs are waited for

    def add(self, event: JobDone) -> None:
        if event.flow not in self.order:  # a job Planned did not list: after those it did
            self.order.append(event.flow)
        state = "ok" if event.error is None else f"failed [{event.error}]"
        self.came[event.flow] = f"({event.flow} on {event.target}) {state}"
        self.over = self.over or event.error is not None

    def ready(self, everything: bool) -> list[str]:
        """The lines that may come out now, in job order; all that came when `everything`."""
        out = []
        for flow in self.order[self.said:]:
            if flow in self.came:
                self.said += 1
                out.append(f"progress: {self.name} {self.said}/{self.jobs} {self.came[flow]}")
            elif not everything:
                break
        if everything:
            self.order = [f for f in self.order if f in self.came]
        return out

    def finished(self) -> bool:
        return self.said >= max(self.jobs, len(self.order)) or (
            self.over and self.said == len(self.order))


class ProgressLines:
    """Takes Planned and JobDone events; `say(line)` gets each line once its turn comes."""

    def __init__(self, say):
        self._say = say
        self._open: list[_Definition] = []  # in the order they started

    def planned(self, event: Planned) -> None:
        self._open.append(_Definition(event))

    def done(self, event: JobDone) -> None:
        d = self._of(event.flow)
        if d is None:  # not planned, or over (a failed job's definition)
            return
        d.add(event)
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
