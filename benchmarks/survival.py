"""Sweeps that survive (issue 37), measured: a sweep of six configurations over three real
bark-workers w1..w3 that hold each round HOLD_MS (a slower machine elsewhere: a sleep that
costs this one no CPU), two chains a worker, healthy and with one fault each. Every faulty
run must exit 0 with the healthy run's outputs, or the family fails rather than time it.

    survive/killed/over_healthy     w2 killed (SIGKILL) a quarter into the run / healthy
    survive/stalled/over_healthy    w3 stopped (SIGSTOP) a quarter in, `timeout = 1` / healthy
    survive/restarted/over_healthy  w2 killed a quarter in and started again on its port
    survive/lying/over_healthy      --replicas 2, w2 lying from its 6th job / healthy
    survive/replicas2/over_plain    --replicas 2 / healthy, both with honest workers
    survive/replicas2/rounds_over_plain  the round jobs --replicas 2 runs / the plain run's
    survive/journal/over_plain      --journal FILE / healthy
    survive/resumed/rounds_share    maned-run killed (SIGKILL) once half its rounds are
                                    journaled, then run again: the rounds the second run ran
                                    / all the rounds

A fault lands on a round count, read from the run's progress events: where in the run it
lands does not depend on the machine's speed."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path

from bark_vm.container import worker_process
from maned.dispatch.trace import JobDone

from . import data
from .figures import Figure, sides_of
from .fleet import fleet_source
from .local import maned_run
from .sweeps import http_devices, password_in_env
from .timing import Samples
from .workers import USER

ALGO, ROWS, CONFIGS, HOLD_MS = "linear_regression", 8, 6, 20
ALIASES = ("w1", "w2", "w3")
STALL_TIMEOUT_S = 1  # the stalled worker's device `timeout`: what its stall costs
# iterations per configuration at `budget: 64` (80: 12 rounds a chain, 24 a worker)
PLAN = {"smoke": {"iters": 80, "reps": 1, "faults": ("killed", "journal", "replicas2")},
        "full": {"iters": 320, "reps": 3,
                 "faults": ("killed", "stalled", "restarted", "lying", "replicas2",
                            "journal")}}
LIAR = [sys.executable, "-m", "maned_bench.lying_worker"]
LIE_FROM = 6


class Trio:
    """Workers w1..w3, each replaced by a fresh one (`renew`) after a run that hurt it."""

    def __init__(self, password: str):
        self.password = password
        self.workers: dict[str, tuple] = {}  # alias -> (context manager, RunningWorker)
        for alias in ALIASES:
            self.renew(alias)

    def renew(self, alias: str, liar: bool = False, port: int | None = None) -> None:
        self.stop(alias)
        env = {"MANED_BENCH_LIE_FROM": str(LIE_FROM)} if liar else {}
        before = {k: os.environ.get(k) for k in env}
        os.environ.update(env)  # read by the worker as it starts
        try:
            cm = worker_process(alias, USER, self.password, ("--hold-ms", str(HOLD_MS)),
                                command=LIAR if liar else None, port=port)
            self.workers[alias] = (cm, cm.__enter__())
        finally:
            for k, v in before.items():
                os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)

    def stop(self, alias: str) -> None:
        """End a worker whatever became of it (a stopped one is killed: SIGTERM waits)."""
        if alias in self.workers:
            cm, w = self.workers.pop(alias)
            if w.handle.poll() is None:
                w.handle.kill()
            cm.__exit__(None, None, None)

    def close(self) -> None:
        for alias in list(self.workers):
            self.stop(alias)

    def __getitem__(self, alias: str):
        return self.workers[alias][1]

    def source(self, iters: int, timeout: int | None = None) -> str:
        text = fleet_source(CONFIGS, iters, ALIASES, http_devices(
            [self[a] for a in ALIASES]))
        if timeout is not None:
            text = text.replace("); }", f"); timeout = {timeout}; }}")
        return text


class At:
    """A progress callback that calls `act` once, when the run has answered `when` round
    jobs (in a thread of its own: the run's threads are never held up by it)."""

    def __init__(self, when: int, act):
        self.when, self.act, self.done, self.thread = when, act, 0, None

    def __call__(self, event) -> None:
        if isinstance(event, JobDone) and "#r" in event.flow:
            self.done += 1
            if self.done == self.when:
                self.thread = threading.Thread(target=self.act)
                self.thread.start()

    def join(self) -> None:
        if self.thread is None:
            raise RuntimeError(f"a fault meant for round job {self.when} never came")
        self.thread.join()


def _values(report) -> dict:
    return {(f.flow, v.name): (v.shape, v.values) for f in report.flows for v in f.outputs}


def _timed(source: str, inputs, healthy: dict | None = None, **kwargs):
    """(seconds, round jobs answered, outputs) of one maned.run, refused unless it exited
    0 with the healthy run's outputs."""
    import maned

    t0 = time.perf_counter()
    report = maned.run(source=source, inputs=inputs, **kwargs)
    seconds = time.perf_counter() - t0
    if report.exit_code:
        raise RuntimeError("a survival run failed: "
                           + "; ".join(d.message for d in report.diagnostics))
    if healthy is not None and _values(report) != healthy:
        raise RuntimeError("a survival run printed other outputs than the healthy run")
    rounds = sum("#r" in j.flow and j.outcome == "ok" and j.target != "local"
                 for j in report.jobs)
    return seconds, rounds, _values(report)


def measure(scale: str) -> list[Figure]:
    plan = PLAN[scale]
    inputs = data.inputs(ALGO, ROWS)
    with ExitStack() as stack:
        trio = Trio(password_in_env(stack))
        stack.callback(trio.close)
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        _, total, healthy = _timed(trio.source(plan["iters"]), inputs)  # warm-up, counts
        quarter = total // 4

        def fault(name: str):
            """One faulty run (the workers made whole again first): its seconds and rounds."""
            source, kwargs, at = trio.source(plan["iters"]), {}, None
            if name in ("killed", "restarted"):
                def kill():
                    trio["w2"].handle.send_signal(signal.SIGKILL)
                    if name == "restarted":
                        trio["w2"].handle.wait()
                        trio.renew("w2", port=trio["w2"].port)
                at = At(quarter, kill)
            elif name == "stalled":
                source = trio.source(plan["iters"], timeout=STALL_TIMEOUT_S)
                at = At(quarter, lambda: trio["w3"].handle.send_signal(signal.SIGSTOP))
            elif name == "lying":
                trio.renew("w2", liar=True)
                kwargs["replicas"] = 2
            elif name == "replicas2":
                kwargs["replicas"] = 2
            elif name == "journal":
                journal = folder / "journal.jsonl"
                journal.unlink(missing_ok=True)
                kwargs["journal"] = journal
            out = _timed(source, inputs, healthy, progress=at, **kwargs)
            if at is not None:
                at.join()
            hurt = {"killed": "w2", "stalled": "w3", "lying": "w2"}.get(name)
            if hurt:
                trio.renew(hurt)
            return out[:2]

        sides = ("healthy",) + plan["faults"]
        seconds: dict[str, list[float]] = {s: [] for s in sides}
        rounds: dict[str, int] = {}
        for r in range(plan["reps"]):
            for side in sides[r % len(sides):] + sides[:r % len(sides)]:
                s, n = (_timed(trio.source(plan["iters"]), inputs, healthy)[:2]
                        if side == "healthy" else fault(side))
                seconds[side].append(s)
                rounds[side] = n
        resumed = _resumed(trio.source(plan["iters"]), inputs, total, healthy, folder)
    samples = {s: Samples(tuple(v)) for s, v in seconds.items()}
    return _figures(samples, rounds, resumed, total)


def _resumed(source: str, inputs, total: int, healthy: dict, folder: Path) -> int:
    """maned-run SIGKILLed once half its rounds are in its journal, then run again with
    it: the round jobs the second run ran (checked: the healthy run's outputs)."""
    script = folder / "resume.mnd"
    script.write_text(source)
    journal = folder / "resume.jsonl"
    journal.unlink(missing_ok=True)
    ins = [a for name, t in inputs.items()
           for a in ("--in", f"{name}={'x'.join(map(str, t.shape))}:"
                     f"{','.join(map(str, t.data))}")]
    proc = subprocess.Popen([maned_run(), str(script), "--journal", str(journal), *ins],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while proc.poll() is None:
            lines = journal.read_bytes().count(b"\n") if journal.exists() else 0
            if lines - 1 >= total // 2:  # past the journal's header line
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.002)
    finally:
        proc.kill()
        proc.wait()
    if proc.returncode != -signal.SIGKILL:
        raise RuntimeError("the run to resume ended before half its rounds were journaled")
    again = subprocess.run([maned_run(), str(script), "--journal", str(journal), "--json",
                            *ins], capture_output=True, text=True, timeout=600)
    report = json.loads(again.stdout)
    values = {(f["flow"], v["name"]): (tuple(v["shape"]), tuple(v["values"]))
              for f in report["flows"] for v in f["outputs"]}
    if again.returncode or values != healthy:
        raise RuntimeError(f"the resumed run failed or printed other outputs: "
                           f"{again.stderr[-500:]}")
    return sum("#r" in j["flow"] for j in report["jobs"])


def _figures(samples: dict, rounds: dict, resumed: int, total: int) -> list[Figure]:
    healthy = samples["healthy"]
    about = {
        "killed": "w2 killed (SIGKILL) a quarter into the run: its two chains move to w1 "
                  "and w3",
        "stalled": f"w3 stopped (SIGSTOP) a quarter in, timeout = {STALL_TIMEOUT_S} s: its "
                   "chains move once the round in flight times out",
        "restarted": "w2 killed a quarter in and started again on its port",
        "lying": f"--replicas 2 with w2 lying from its job {LIE_FROM} on: outvoted, its "
                 "rounds go to w1 and w3",
        "replicas2": "--replicas 2, honest workers: every round on two of them",
        "journal": "--journal FILE: every round written and fdatasync'ed as it lands",
    }
    out = []
    for name, text in about.items():
        if name not in samples:
            continue
        over = "over_plain" if name in ("replicas2", "journal") else "over_healthy"
        out.append(Figure(f"survive/{name}/{over}", samples[name].median / healthy.median,
                          "x", f"6 configurations over 3 workers holding each round "
                          f"{HOLD_MS} ms, {total} rounds: {text} ({rounds[name]} round jobs "
                          "answered) / the healthy run", "lower",
                          sides=sides_of({name: samples[name], "healthy": healthy})))
    if "replicas2" in rounds:
        out.append(Figure("survive/replicas2/rounds_over_plain",
                          rounds["replicas2"] / rounds["healthy"], "x",
                          "round jobs answered with --replicas 2 / without", "lower"))
    out.append(Figure("survive/resumed/rounds_share", resumed / total, "x",
                      "maned-run killed (SIGKILL) with half its rounds journaled, then run "
                      "again: the rounds it ran / all the rounds", "lower"))
    return out
