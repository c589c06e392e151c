"""A build step: a command that must succeed, its failure one coded line (BuildError) with the
tail of what it printed."""
import subprocess


class BuildError(Exception):
    """A build step that failed: one line saying which and why."""


def run(argv: list[str], what: str) -> None:
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        tail = " | ".join(p.stdout.strip().splitlines()[-3:])
        raise BuildError(f"{what} failed (exit {p.returncode}): {tail[-400:]}")
