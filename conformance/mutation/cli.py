"""python -m maned_conformance.mutation: every mutant of the worker certified, the score.

    python -m maned_conformance.mutation [--out DIR] [--jobs N] [--only ID-PREFIX ...]
        [--operator NAME ...] [--sample N] [--seed S] [--files GLOB ...] [--timeout SECONDS]
        [--job-timeout SECONDS] [--equivalent FILE] [--list] [--rejudge DIR]

The worker and the suite are copied first, so one run measures one suite whatever changes
in the checkout meanwhile. The unmutated worker must pass certification (else nothing is
measured, exit 1); then each mutant runs as its own worker, N at a time. Writes DIR
(default mutation-report/): report.json and summary.md; one progress line per mutant on
stderr. Exit 0 when no survivor is left unjudged (and none errored), 1 otherwise, 2 for a
usage error. --rejudge DIR runs nothing: it applies equivalent.toml anew to a report
already written.
"""
import argparse
import random
import secrets
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path

from maned.devices import MAX_DEADLINE_S

from . import judgements, report
from .mutants import DEFAULT_FILES, Mutant, enumerate_mutants, resolve_files
from .operators import BY_NAME
from .trial import Settings, Verdict, package_dir, run_trial, snapshot

PROG = "maned-mutation"
JOBS_MAX = 32  # --jobs: mutants at once, each a worker process and a certifier
USER = "mutation"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"python -m {__package__}", description="Mutation "
                                "testing of maned-certify: mutants of the bark_vm worker, each "
                                "certified; a survivor is a defect no conformance case sees.")
    p.add_argument("--out", default="mutation-report", help="report folder (default "
                   "mutation-report)")
    p.add_argument("--jobs", type=int, default=2, help="mutants run at once (default 2, at "
                   f"most {JOBS_MAX})")
    p.add_argument("--only", action="append", default=[], metavar="ID-PREFIX",
                   help="only the mutants whose id starts with it (repeatable)")
    p.add_argument("--operator", action="append", default=[], metavar="NAME",
                   help="only the mutants of this operator (repeatable; the names are "
                   "operators.py's, as the ids end)")
    p.add_argument("--sample", type=int, metavar="N", help="a random N of the mutants")
    p.add_argument("--seed", type=int, default=0, help="seed of --sample (default 0)")
    p.add_argument("--files", nargs="+", metavar="GLOB", help="files to mutate, globs "
                   "relative to the folder holding bark_vm (default: "
                   + " ".join(DEFAULT_FILES) + ")")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                   help="deadline of one mutant, worker start to teardown (default 120)")
    p.add_argument("--job-timeout", type=float, default=3.0, metavar="SECONDS",
                   help="maned-certify --job-timeout (default 3)")
    p.add_argument("--equivalent", type=Path, metavar="FILE", help="the judgements "
                   "(default: the equivalent.toml shipped with the package)")
    p.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    p.add_argument("--rejudge", type=Path, metavar="DIR", help="run nothing: apply the "
                   "judgements again to the report in DIR (after equivalent.toml changed)")
    return p


def _usage(text: str) -> int:
    sys.stderr.write(f"{PROG}: {text} [EUSAGE]\n")
    return 2


def _select(mutants: list[Mutant], args) -> list[Mutant]:
    """--only and --operator, then --sample (a seeded sample, kept in enumeration order)."""
    if args.only:
        mutants = [m for m in mutants if any(m.id.startswith(p) for p in args.only)]
    if args.operator:
        mutants = [m for m in mutants if m.operator in args.operator]
    if args.sample is not None and args.sample < len(mutants):
        keep = set(random.Random(args.seed).sample(range(len(mutants)), args.sample))
        mutants = [m for k, m in enumerate(mutants) if k in keep]
    return mutants


def _say(text: str, lock=threading.Lock()) -> None:
    with lock:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


def _progress(k: int, n: int, m: Mutant, v: Verdict, judged: bool) -> str:
    status = "equivalent" if v.status == "survived" and judged else v.status
    why = (f"by {v.case_status} {v.case}" if v.case else v.reason.split(":")[0]
           if v.status != "survived" else "")
    return f"{PROG}: [{k:>{len(str(n))}}/{n}] {status:<10} {m.id} {why} ({v.seconds:g} s)"


def _run_all(mutants, sources, package, settings, jobs, judged) -> tuple[list, bool]:
    """Every mutant's verdict, `jobs` at a time; (verdicts in mutant order, interrupted)."""
    verdicts: list = [None] * len(mutants)
    pool = ThreadPoolExecutor(max_workers=jobs)
    futures = {pool.submit(run_trial, m.path, m.apply(sources[m.path]), package, settings): k
               for k, m in enumerate(mutants)}
    done = 0
    try:
        for future in as_completed(futures):
            k = futures[future]
            verdicts[k] = future.result()
            done += 1
            _say(_progress(done, len(mutants), mutants[k], verdicts[k],
                           judged(mutants[k]) is not None))
    except KeyboardInterrupt:
        _say(f"{PROG}: interrupted; waiting for the mutants running now")
        pool.shutdown(wait=True, cancel_futures=True)
        return verdicts, True
    pool.shutdown(wait=True)
    return verdicts, False


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not 1 <= args.jobs <= JOBS_MAX:
        return _usage(f"--jobs takes 1 to {JOBS_MAX} (each job is a worker and a "
                      "certification at once)")
    if not (0 < args.timeout <= MAX_DEADLINE_S and 0 < args.job_timeout <= MAX_DEADLINE_S):
        return _usage(f"--timeout and --job-timeout take above 0 and at most {MAX_DEADLINE_S} "
                      "seconds")
    unknown = sorted(set(args.operator) - set(BY_NAME))
    if unknown:
        return _usage(f"--operator {unknown[0]}: no such operator (operators.py names "
                      f"{len(BY_NAME)}: {', '.join(BY_NAME)})")
    if args.sample is not None and args.sample < 1:
        return _usage("--sample must be at least 1")
    if args.rejudge:
        return _rejudge(args)
    with tempfile.TemporaryDirectory(prefix="maned-mutation-") as tmp:
        return _measure(args, snapshot(Path(tmp)))


def _finish(out: Path, doc: dict) -> int:
    """The report written, its one line printed, and the exit code."""
    report.write(out, doc)
    c = doc["counts"]
    print(f"{PROG}: {c['generated']} mutants: {c['killed']} killed, {c['survived']} survived "
          f"({c['equivalent']} judged equivalent, {c['unjudged']} unjudged), {c['error']} "
          f"error; score {report.percent(c['score'])}; report in {out}/")
    return 0 if not (doc["interrupted"] or c["unjudged"] or c["error"]) else 1


def _rejudge(args) -> int:
    """--rejudge DIR: the verdicts of DIR/report.json kept, the judgements applied anew,
    stale ones found against the files as they are now."""
    try:
        records, seconds, interrupted = report.read(args.rejudge)
        judged = judgements.load(args.equivalent or judgements.default_path())
        root = package_dir().parent
        rels = sorted({r["file"] for r in records})
        every = enumerate_mutants([root / rel for rel in rels], root)
    except OSError as e:  # the report, or the --equivalent file: the error names which
        return _usage(f"--rejudge {args.rejudge}: cannot read {e.filename or 'a file'}: "
                      f"{e.strerror or e}")
    except (ValueError, SyntaxError) as e:  # SyntaxError: a file named there is no Python
        return _usage(f"--rejudge {args.rejudge}: {e}")
    records = [report.rejudged(r, judged.reason(report.as_mutant(r))) for r in records]
    return _finish(args.rejudge, report.build(records, judged.stale(every, rels), seconds,
                                              interrupted))


def _measure(args, root: Path) -> int:
    """The run on the snapshot under `root`, once the arguments are parsed."""
    package = root / "bark_vm"
    try:
        files = resolve_files(args.files or DEFAULT_FILES, root)
        outside = [f for f in files if package.resolve() not in f.parents]
        if outside:
            return _usage(f"{outside[0].relative_to(root.resolve())} is not in the bark_vm "
                          "package")
        judged = judgements.load(args.equivalent or judgements.default_path())
    except (ValueError, OSError) as e:
        return _usage(str(e))
    every = enumerate_mutants(files, root)
    rels = sorted({f.relative_to(root).as_posix() for f in files})
    stale = judged.stale(every, rels)
    mutants = _select(every, args)
    if not mutants:
        return _usage("no mutant matches --only / --operator / --files")
    if args.list:
        for m in mutants:
            print(f"{m.id}\t{m.site}\t{m.original}\t→\t{m.mutated}")
        return 0
    for key in stale:
        _say(f"{PROG}: stale judgement in equivalent.toml: {key}")
    sources = {rel: (root / rel).read_text(encoding="utf-8") for rel in rels}
    settings = Settings(USER, secrets.token_urlsafe(24), args.timeout, args.job_timeout,
                        suite=root)
    began = time.monotonic()
    _say(f"{PROG}: {len(mutants)} of {len(every)} mutants of {len(rels)} files; "
         "first the unmutated worker")
    base = run_trial(rels[0], sources[rels[0]], package, settings)
    if base.status != "survived":
        _say(f"{PROG}: the unmutated worker does not pass certification ({base.status}: "
             f"{base.case or ''} {base.reason}); nothing is measured")
        return 1
    settings = replace(settings, cases=base.cases)
    verdicts, interrupted = _run_all(mutants, sources, package, settings, args.jobs,
                                     judged.reason)
    records = [report.record(m, v, judged.reason(m)) for m, v in zip(mutants, verdicts)
               if v is not None]
    doc = report.build(records, stale, time.monotonic() - began, interrupted)
    return _finish(Path(args.out), doc)
