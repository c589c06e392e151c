"""maned-certify: the whole conformance suite against one CDP worker (the protocol checks,
then every case), and its report.

    maned-certify URL [--out DIR] [--allow-unsupported] [--job-timeout SECONDS]
                  [--case-timeout SECONDS] [--first-failure] [--cases PREFIX]

URL is http://HOST:PORT (default $BARK_URL); the credentials come from BARK_USER and
BARK_PASS. Writes DIR (default certify-report/): report.json, summary.md, junit.xml,
signature.txt. Exit 0 when every case passed (not-supported ones too with
--allow-unsupported), 1 when any failed, timed out or errored, 2 for a usage error.
One case never stops the others: each job has a deadline, each case a total deadline, and
a worker found dead after a case is reported for every case left, not waited on.
"""
import argparse
import os
import sys
import time
from pathlib import Path

from maned.diagnostics.printer import mask, register_secret
from maned.targets.limits import MAX_DEADLINE_S

from . import report
from .cases import CaseError, all_cases
from .protocol import golden_answered, run_protocol
from .runner import Outcome, run_case
from .targets import CASE_DEADLINE_S, JOB_DEADLINE_S, WorkerUnderTest

PROBE_DEADLINE_S = 5.0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="maned-certify", description="Certify a Bark worker: "
                                "every conformance case on it, compared with the reference.")
    p.add_argument("url", nargs="?", default=os.environ.get("BARK_URL") or None,
                   help="the worker, http://HOST:PORT (default $BARK_URL)")
    p.add_argument("--out", default="certify-report", help="report folder (default "
                   "certify-report)")
    p.add_argument("--allow-unsupported", action="store_true",
                   help="ops the worker does not advertise do not fail the certification")
    p.add_argument("--job-timeout", type=float, default=JOB_DEADLINE_S, metavar="SECONDS",
                   help=f"deadline of each job (default {JOB_DEADLINE_S:g})")
    p.add_argument("--case-timeout", type=float, default=CASE_DEADLINE_S, metavar="SECONDS",
                   help=f"deadline of a whole case, every job of it (default "
                   f"{CASE_DEADLINE_S:g})")
    p.add_argument("--first-failure", action="store_true",
                   help="stop at the first case that does not pass")
    p.add_argument("--cases", default="", metavar="PREFIX",
                   help="only the cases whose id starts with PREFIX")
    return p


def _usage(text: str) -> int:
    sys.stderr.write(f"maned-certify: {text} [EUSAGE]\n")
    return 2


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not args.url:
        return _usage("no worker given: set BARK_URL (or pass the URL), e.g. "
                      "BARK_URL=http://127.0.0.1:4780, with BARK_USER and BARK_PASS")
    for name in ("job_timeout", "case_timeout"):
        if not 0 < getattr(args, name) <= MAX_DEADLINE_S:
            return _usage(f"--{name.replace('_', '-')} must be above 0 and at most "
                          f"{MAX_DEADLINE_S} seconds")
    register_secret(os.environ.get("BARK_PASS", ""))
    try:
        worker = WorkerUnderTest(args.url, deadline_s=args.job_timeout)
        cases = [c for c in all_cases() if "hardware" in c.targets
                 and c.id.startswith(args.cases)]
    except (ValueError, CaseError) as e:
        return _usage(str(e))
    if not cases:
        return _usage(f"no case id starts with {args.cases!r}; nothing would be certified")
    try:  # before anything runs: a report that cannot be written is a usage error
        Path(args.out).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return _usage(f"cannot write the report folder {args.out}: {e.strerror or e}")
    t0 = time.monotonic()
    try:
        status = worker.status()
    except Exception as e:  # still a report: every case an error saying why
        why = f"{args.url} does not answer its status: {getattr(e, 'message', e)}"
        sys.stderr.write(mask(f"maned-certify: {why} [ERUN]") + "\n")
        info = {"alias": None, "url": args.url, "kind": None, "ir": None, "rf_slots": None,
                "ops": []}
        outcomes = [Outcome("protocol/status", "hardware", "error", why)] + [
            Outcome(c.id, "hardware", "error", "not run: the worker does not answer its "
                    "status") for c in cases]
        report.write(Path(args.out), info, cases, outcomes, time.monotonic() - t0)
        worker.close()
        return 1
    outcomes = run_protocol(worker.host, worker.port, os.environ.get("BARK_USER"),
                            os.environ.get("BARK_PASS"), args.job_timeout)
    if not (args.first_failure and any(o.status != "pass" for o in outcomes)):
        outcomes += certify(worker, args.url, cases, args.first_failure, args.case_timeout,
                            args.job_timeout)
    seconds = time.monotonic() - t0
    info = {"alias": status.alias, "url": args.url, "kind": status.kind, "ir": status.ir,
            "rf_slots": status.rf_slots, "ops": list(status.ops)}
    counts = report.write(Path(args.out), info, cases, outcomes, seconds)
    worker.close()
    bad = counts["fail"] + counts["timeout"] + counts["error"] + (
        0 if args.allow_unsupported else counts["not_supported"])
    sys.stdout.write(f"maned-certify: {status.alias} at {args.url}: {len(outcomes)} cases in "
                     f"{seconds:.1f} s: " + ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in
                                                     counts.items()) +
                     f"; report in {args.out}/\n")
    for o in outcomes:
        if o.status != "pass":
            sys.stdout.write(mask(f"  {o.status}: {o.case}: {o.detail}") + "\n")
            break
    return 1 if bad else 0


def certify(worker: WorkerUnderTest, url: str, cases, first_failure: bool,
            case_deadline_s: float = CASE_DEADLINE_S,
            job_deadline_s: float = JOB_DEADLINE_S) -> list[Outcome]:
    """Every case in order. After a timeout or an error the worker is probed afresh; a worker
    that no longer answers gets every remaining case as `error`, without waiting on it. The
    probe waits a job deadline more than a small job needs: a job the worker is still busy
    with (it cannot be cancelled once running) ends within a job deadline."""
    outcomes: list[Outcome] = []
    dead = None  # why the worker is no longer asked
    for case in cases:
        if dead:
            outcomes.append(Outcome(case.id, "hardware", "error", dead))
            continue
        o = run_case(case, worker, case_deadline_s)
        outcomes.append(o)
        if o.status != "pass" and first_failure:
            break
        if o.status in ("timeout", "error") and not _alive(url, job_deadline_s +
                                                           PROBE_DEADLINE_S):
            dead = f"the worker stopped answering jobs after case {case.id}"
    return outcomes


def _alive(url: str, deadline_s: float) -> bool:
    """The worker still answers a small job (the protocol golden) within `deadline_s`: a
    status alone is not enough, since a stuck executor still answers its status."""
    probe = WorkerUnderTest(url, deadline_s=deadline_s)
    try:
        return golden_answered(probe.host, probe.port, os.environ.get("BARK_USER"),
                               os.environ.get("BARK_PASS"), deadline_s)
    except Exception:
        return False


if __name__ == "__main__":
    sys.exit(main())
