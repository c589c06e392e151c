"""`--max-job-memory MIB`, the option both workers take (bark-vm, bark-worker serve): the
memory one job may hold before an instruction is refused TOO_LARGE (DESIGN §10)."""
import argparse

from .wire.constants import DEFAULT_MAX_JOB_MEMORY


def add_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-job-memory", type=int, default=DEFAULT_MAX_JOB_MEMORY >> 20,
                        metavar="MIB", help="memory one job may hold; an instruction that "
                        "would take it over is refused TOO_LARGE before it runs (default "
                        f"{DEFAULT_MAX_JOB_MEMORY >> 20})")


def budget_bytes(parser: argparse.ArgumentParser, args) -> int:
    """The option in bytes; a usage error (exit 2) below 1 MiB."""
    if args.max_job_memory < 1:
        parser.error("--max-job-memory must be at least 1 (MiB)")
    return args.max_job_memory << 20
