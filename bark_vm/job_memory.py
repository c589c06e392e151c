"""The two limits both workers take on their command line (bark-vm, bark-worker serve):
`--max-job-memory MIB`, the memory one job may hold before an instruction is refused
TOO_LARGE (DESIGN §10), and `--max-payload BYTES`, the largest request; each bounded."""
import argparse

from .wire.constants import DEFAULT_MAX_JOB_MEMORY, DEFAULT_MAX_PAYLOAD, MAX_PAYLOAD_BOUND

MAX_JOB_MEMORY_MIB = 1 << 20  # --max-job-memory at most: 1 TiB


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-payload", type=int, default=DEFAULT_MAX_PAYLOAD,
                        metavar="BYTES", help="largest request payload accepted (default "
                        f"{DEFAULT_MAX_PAYLOAD}; 0 to {MAX_PAYLOAD_BOUND})")
    parser.add_argument("--max-job-memory", type=int, default=DEFAULT_MAX_JOB_MEMORY >> 20,
                        metavar="MIB", help="memory one job may hold; an instruction that "
                        "would take it over is refused TOO_LARGE before it runs (default "
                        f"{DEFAULT_MAX_JOB_MEMORY >> 20}; 1 to {MAX_JOB_MEMORY_MIB})")


def check_payload(parser: argparse.ArgumentParser, args) -> int:
    """--max-payload, or a usage error (exit 2) outside 0..MAX_PAYLOAD_BOUND."""
    if not 0 <= args.max_payload <= MAX_PAYLOAD_BOUND:
        parser.error(f"--max-payload must be 0..{MAX_PAYLOAD_BOUND}")
    return args.max_payload


def budget_bytes(parser: argparse.ArgumentParser, args) -> int:
    """--max-job-memory in bytes; a usage error (exit 2) outside 1..MAX_JOB_MEMORY_MIB."""
    if not 1 <= args.max_job_memory <= MAX_JOB_MEMORY_MIB:
        parser.error(f"--max-job-memory must be 1..{MAX_JOB_MEMORY_MIB} (MiB)")
    return args.max_job_memory << 20
