"""bark-vm: the Bark worker over stdio frames (spec/wire.md §2.5, wire-golden §7 [W18], D7).

    bark-vm [--alias NAME] [--abi 1|2] [--max-payload BYTES]

HELO first, then one answer per request frame: MNPK → MNRS | ERRJ. Any other frame type
gets ERRJ BAD_ENVELOPE; a frame over --max-payload is drained and gets ERRJ TOO_LARGE; the
session goes on after both. EOF at a frame boundary exits 0, EOF inside a frame exits 1
writing nothing more. stdout carries frames only; logs go to stderr.
"""
import argparse
import os
import sys

from . import job_memory
from .version import version_text
from .wire.constants import (
    ABIS, DEFAULT_ABI, FRAME_ERRJ, FRAME_HELO, FRAME_MNPK, FRAME_MNRS, WorkerError,
)
from .wire.frames import TruncatedFrame, error_json, read_frame, write_frame
from .request_handling import WorkerConfig, handle


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bark-vm", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="The Bark VM: a Bark worker speaking HELO/MNPK/MNRS/ERRJ frames on "
        "stdin/stdout.\nmaned-run starts one per `device::A { host = \"local\"; }` block; "
        "you rarely run it by hand.",
        epilog="example:\n  bark-vm --alias vm1 < session.frames > answers.frames\n\n"
        "environment:\n  MANED_BARK_VM  the bark-vm maned-run starts for a device without a vm "
        "field (else python -m bark_vm.vm)\n  OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, "
        "MKL_NUM_THREADS  set to 1 by maned-run unless already set")
    p.add_argument("--version", action="version", version=version_text("bark-vm").rstrip())
    p.add_argument("--alias", default="bark-vm", help="the name the HELO reports")
    p.add_argument("--abi", type=int, choices=ABIS, default=DEFAULT_ABI,
                   help=f"IR ABI (default {DEFAULT_ABI})")
    job_memory.add_options(p)
    return p


def serve(stdin, stdout, config: WorkerConfig, log=None) -> int:
    """Run one session on binary streams; returns the exit code."""
    log = log or sys.stderr
    import bark_vm.executor  # noqa: F401  (ready before the HELO: uptime 0 starts here)

    write_frame(stdout, FRAME_HELO, config.status_json(uptime_s=0, requests=0))
    requests = 0
    while True:
        try:
            frame = read_frame(stdin, config.max_payload)
        except TruncatedFrame as e:
            log.write(f"bark-vm[{config.alias}]: {e}\n")
            log.flush()
            return 1
        if frame is None:
            return 0
        if frame.payload is None:
            err = WorkerError("TOO_LARGE", f"frame of {frame.length} bytes is over max_payload "
                              f"{config.max_payload}")
            answer = (FRAME_ERRJ, error_json(err))
        elif frame.type != FRAME_MNPK:
            err = WorkerError("BAD_ENVELOPE", f"unexpected frame type {frame.type!r}")
            answer = (FRAME_ERRJ, error_json(err))
        else:
            try:
                answer = (FRAME_MNRS, handle(frame.payload, config))
            except WorkerError as e:
                answer = (FRAME_ERRJ, error_json(e))
        write_frame(stdout, *answer)
        requests += 1
        if answer[0] == FRAME_ERRJ:
            log.write(f"bark-vm[{config.alias}]: request {requests}: {answer[1].decode()}\n")
            log.flush()


def main(argv: list[str] | None = None) -> None:
    parser = _parser()
    args = parser.parse_args(argv)
    config = WorkerConfig(alias=args.alias, kind="vm", abi=args.abi,
                          max_payload=job_memory.check_payload(parser, args), capacity=1,
                          max_job_memory=job_memory.budget_bytes(parser, args))
    try:
        code = serve(sys.stdin.buffer, sys.stdout.buffer, config)
    except (BrokenPipeError, KeyboardInterrupt):
        code = 1
    # Nothing is left to clean up: end now rather than spend ~30 ms tearing the interpreter
    # (numpy included) down while the coordinator waits for the child to close.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":
    main()
