"""maned-certify: the whole conformance suite against one CDP worker (the protocol checks,
then every case), and its report.

    maned-certify URL [--out DIR] [--allow-unsupported] [--job-timeout SECONDS]
                  [--case-timeout SECONDS] [--first-failure] [--cases PREFIX]

URL is http://HOST:PORT (default $BARK_URL); the credentials come from BARK_USER and
BARK_PASS, never from the URL: one with user:pass@ in it is refused unshown, and no refusal
of a malformed URL quotes a part of it (a port or a path may be a password typed in the
wrong place). Before any case, one login: a worker that does not answer, or refuses the
credentials, is the operator's error (exit 2), never a verdict on the worker. Writes DIR
(default certify-report/): report.json, summary.md, junit.xml, and signature.txt when the
whole case set passed. Exit 0 when every case of the whole set passed (not-supported ones
too with --allow-unsupported), 1 when any failed, timed out or errored, 2 for a usage or
operator error, 3 when every case a --cases run ran passed (partial: not a
certification). One case never stops the others: each job has a deadline, each case a
total deadline, and a worker found dead after a case is reported for every case left, not
waited on. Every report lists every check and case of the set, whatever happened.
"""
import argparse
import hashlib
import os
import shutil
import sys
import time
from dataclasses import replace
from pathlib import Path

from maned.diagnostics.printer import register_secret
from maned.io.files import overwrites
from maned.devices import MAX_DEADLINE_S
from maned_machine.boot import BOOT_DEADLINE_S
from maned_machine.modes import ACCELERATORS, mode_of

EXIT_PARTIAL = 3  # every case of a --cases run passed: a pipeline must not read it as certified

from . import report
from .cases import CaseError, all_cases
from .preflight import OperatorError, preflight
from .protocol import CHECKS, golden_answered, run_protocol
from .outcome import Outcome, check_id, not_run
from .runner import run_case
from .targets import CASE_DEADLINE_S, JOB_DEADLINE_S, WorkerUnderTest, url_problem

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
                   help=f"deadline of a whole case, every job of it, and of a protocol "
                   f"check's wait for its async jobs (default {CASE_DEADLINE_S:g})")
    p.add_argument("--first-failure", action="store_true",
                   help="stop at the first case that does not pass")
    p.add_argument("--cases", default="", metavar="PREFIX",
                   help="only the cases whose id starts with PREFIX")
    p.add_argument("--boot", metavar="IMAGE", help="boot this Bark machine image under QEMU, "
                   "certify it and power it off (instead of a URL)")
    p.add_argument("--uefi", action="store_true", help="with --boot: boot by UEFI, not BIOS")
    p.add_argument("--secure-boot", action="store_true", help="with --boot: UEFI with Secure "
                   "Boot on")
    p.add_argument("--accel", choices=ACCELERATORS, default="auto",
                   help="with --boot: QEMU's accelerator (auto: KVM only where it runs a "
                   "guest)")
    p.add_argument("--boot-timeout", type=float, default=BOOT_DEADLINE_S, metavar="SECONDS",
                   help=f"with --boot: the deadline to serving (default {BOOT_DEADLINE_S:g})")
    return p


def operator_line(text: str) -> str:
    """The one coded line of a usage or operator error, shown safe (report.display)."""
    return report.display(f"maned-certify: {text} [EUSAGE]")


def _usage(text: str) -> int:
    sys.stderr.write(operator_line(text) + "\n")
    return 2


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.boot:
        return certify_machine(args)
    if args.uefi or args.secure_boot:
        return _usage("--uefi and --secure-boot go with --boot IMAGE")
    if not args.url:
        return _usage("no worker given: set BARK_URL (or pass the URL), e.g. "
                      "BARK_URL=http://127.0.0.1:4780, with BARK_USER and BARK_PASS; or "
                      "--boot IMAGE for a Bark machine image")
    return certify_url(args)


def certify_machine(args) -> int:
    """`--boot IMAGE`: boot it under QEMU, certify it at its forwarded port, power it off.
    The report names what was certified (image digest, boot mode, accelerator) and keeps
    the serial console (serial.log)."""
    from maned_machine.boot import (QEMU_ERR, SERIAL_LOG, SETUP_MODE, Machine, accelerator,
                                    cannot_boot)
    image = Path(args.boot)
    mode = mode_of(args.uefi, args.secure_boot)
    kept = (SERIAL_LOG, QEMU_ERR)  # the machine's, copied into the report
    why = overwrites([(str(Path(args.out) / name), f"the report's {name}") for name in
                      (report.REPORT, report.SIGNATURE, report.SUMMARY, report.JUNIT, *kept)],
                     [(str(image), "the --boot image")])
    if why:
        return _usage(f"{why}: give --out another folder")
    why = cannot_boot(image, 0, 0, Machine.memory_mib, mode)
    if why:
        return _usage(f"--boot: {why}")
    if not os.environ.get("BARK_USER") or not os.environ.get("BARK_PASS"):
        return _usage("set BARK_USER and BARK_PASS to the identity the image was built with "
                      "(the credentials never go on the command line)")
    try:
        Path(args.out).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return _usage(f"cannot write the report folder {args.out}: {e.strerror or e}")
    accel = accelerator(args.accel)
    machine = Machine(image, mode, accel)
    t0 = time.monotonic()
    machine.start()
    try:
        if not machine.wait_for("BOOT-COMPLETE", args.boot_timeout, unless=(SETUP_MODE,)):
            said = machine.last_error() if not machine.running() else None
            return _usage(f"the machine did not boot ({mode}, {accel}): "
                          f"{machine.not_booted(args.boot_timeout)}"
                          f"{f' (QEMU said: {said})' if said else ''}; its serial console "
                          f"is in {Path(args.out) / SERIAL_LOG}, QEMU's messages in "
                          f"{Path(args.out) / QEMU_ERR}")
        booted = time.monotonic() - t0
        sys.stdout.write(f"maned-certify: {image.name} booted ({mode}, {accel}) in "
                         f"{booted:.0f} s\n")
        args.url = f"http://127.0.0.1:{machine.port}"
        args.machine = {"image": image.name, "image_sha256": file_digest(image),
                        "boot_mode": mode, "accelerator": accel, "boot_s": round(booted, 1)}
        code = certify_url(args)
    finally:
        machine.stop()
        for name in kept:  # into the report, then the folder goes
            if (machine.folder / name).exists():
                shutil.copyfile(machine.folder / name, Path(args.out) / name)
        machine.discard()
    return code


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def certify_url(args) -> int:
    """Certify the worker at args.url."""
    bad_url = url_problem(args.url)
    if bad_url:  # before the URL is echoed anywhere, a report included
        return _usage(bad_url)
    for name in ("job_timeout", "case_timeout"):
        if not 0 < getattr(args, name) <= MAX_DEADLINE_S:
            return _usage(f"--{name.replace('_', '-')} must be above 0 and at most "
                          f"{MAX_DEADLINE_S} seconds")
    try:
        where = WorkerUnderTest(args.url, deadline_s=args.job_timeout)
        full = [c for c in all_cases() if "hardware" in c.targets]
    except (ValueError, CaseError) as e:
        return _usage(str(e))
    cases = [c for c in full if c.id.startswith(args.cases)]
    if not cases:
        return _usage(f"no case id starts with {args.cases!r}; nothing would be certified")
    user, password = os.environ.get("BARK_USER", ""), os.environ.get("BARK_PASS", "")
    if not (user and password):
        return _usage("set BARK_USER and BARK_PASS to the worker's user and password (the "
                      "credentials never go on the command line)")
    register_secret(password)
    try:  # before anything runs: a report that cannot be written is a usage error
        Path(args.out).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return _usage(f"cannot write the report folder {args.out}: {e.strerror or e}")
    scope = report.Scope(report.case_set_digest(full), args.cases or None, len(full),
                         len(cases))
    t0 = time.monotonic()
    try:
        session = preflight(args.url, where.host, where.port, user, password,
                            min(args.job_timeout, PROBE_DEADLINE_S))
    except OperatorError as e:  # nothing was asked: every check and case says so
        sys.stderr.write(operator_line(str(e)) + "\n")
        write_not_run(Path(args.out), args.url, cases, str(e), time.monotonic() - t0, scope)
        return 2
    status = session.status
    worker = WorkerUnderTest(args.url, deadline_s=args.job_timeout, token=session.token,
                             alias=status.alias)
    outcomes = run_protocol(worker.host, worker.port, user, password, args.job_timeout,
                            session.token, poll_limit_s=args.case_timeout)
    if args.first_failure and any(o.status != "pass" for o in outcomes):
        outcomes += [not_run(c.id, "not run: --first-failure stopped the run")
                     for c in cases]
    else:
        outcomes += certify(worker, args.url, cases, args.first_failure, args.case_timeout,
                            args.job_timeout)
    seconds = time.monotonic() - t0
    info = {"alias": status.alias, "url": args.url, "kind": status.kind, "ir": status.ir,
            "rf_slots": status.rf_slots, "ops": list(status.ops)}
    if getattr(args, "machine", None):
        info["machine"] = args.machine
    doc = report.write(Path(args.out), info, cases, outcomes, seconds, scope)
    worker.close()
    sys.stdout.write(headline(doc, args.cases, args.out, seconds))
    counts = doc["counts"]
    bad = counts["fail"] + counts["timeout"] + counts["error"] + (
        0 if args.allow_unsupported else counts["not_supported"])
    return 1 if bad else EXIT_PARTIAL if doc["partial"] else 0


def write_not_run(folder: Path, url: str, cases, why: str, seconds: float,
                  scope: report.Scope) -> dict:
    """The report of a certification that asked nothing (an operator error): every check
    and case `error` "not run: WHY", no worker information, no signature."""
    info = {"alias": None, "url": url, "kind": None, "ir": None, "rf_slots": None, "ops": []}
    outcomes = [not_run(check_id(n), f"not run: {why}") for n in CHECKS] + [
        not_run(c.id, f"not run: {why}") for c in cases]
    return report.write(folder, info, cases, outcomes, seconds, replace(scope, not_run=why))


def headline(doc: dict, cases: str, out_dir: str, seconds: float) -> str:
    """The verdict for stdout: the counts, the cause-first failure, the signature or why
    there is none; every line shown safe (report.display)."""
    d = report.display
    counts, worker = doc["counts"], doc["worker"]
    partial = (f" PARTIAL (--cases {d(cases)}: {doc['partial']['run']} "
               f"of {doc['partial']['of']} cases, not a certification);"
               if doc["partial"] else "")
    out = [f"maned-certify: {d(worker['alias'])} at {d(worker['url'])}:{partial} "
           f"{len(doc['cases'])} checks and cases in {seconds:.1f} s: "
           + ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in counts.items())
           + f"; report in {d(out_dir)}/"]
    if doc["failures"]:
        first = next(c for c in doc["cases"] if c["id"] == doc["failures"][0])
        out.append(f"  {first['status']}: {first['id']}: {d(first['detail'])}")
    out.append(f"  signature: {doc['signature']}" if doc["signature"] else
               f"  no signature: {d(doc['why_no_signature'])}")
    return "\n".join(out) + "\n"


def certify(worker: WorkerUnderTest, url: str, cases, first_failure: bool,
            case_deadline_s: float = CASE_DEADLINE_S,
            job_deadline_s: float = JOB_DEADLINE_S) -> list[Outcome]:
    """Every case, asked and returned in run order (report.likeliest_first: a single op's
    cases first, they are quick and the likeliest cause of a failure). After a timeout or
    an error the worker is probed afresh; a worker that no longer answers gets every
    remaining case as `error`, without waiting on it. The probe waits a job deadline more
    than a small job needs: a job the worker is still busy with (it cannot be cancelled
    once running) ends within a job deadline."""
    outcomes: list[Outcome] = []
    dead = None  # why the worker is no longer asked
    for case in sorted(cases, key=report.likeliest_first):
        if dead:
            outcomes.append(not_run(case.id, dead))
            continue
        o = run_case(case, worker, case_deadline_s)
        outcomes.append(o)
        if o.status != "pass" and first_failure:
            dead = f"not run: --first-failure stopped the run at case {case.id}"
        elif o.status in ("timeout", "error") and not _alive(url, job_deadline_s +
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
