"""What every fuzz target of the suite shares (issue 13, Build 4): how many cases it runs,
the per-case deadline, the byte mutations, the check that a run ended in a coded line, and
the count of cases each target ran, printed at the end of the session.

The normal suite runs each target's default count. MANED_FUZZ_SCALE=N (the long opt-in
mode, `tox -e fuzz`) multiplies every count by N; MANED_FUZZ_ML=1 adds the ML and routed
examples to the script corpus."""
import os
import random
import re
import signal
from contextlib import contextmanager

from gates import HANG_GUARD_S
from maned.diagnostics.ledger import LEDGER

SCALE = int(os.environ.get("MANED_FUZZ_SCALE", "1"))
assert SCALE >= 1, f"MANED_FUZZ_SCALE={SCALE}: a fuzz run has at least one round of cases"
CASE_DEADLINE_S = HANG_GUARD_S  # one case's answer; a case that takes longer is a hang
COUNTS: dict[str, int] = {}  # target -> cases run this session

CODED = re.compile(r"\[([A-Z0-9]+)\]$")
STDOUT_LINE = re.compile(r"flow '[^']+' outputs:|return@\d+ : .*|out::\S+ -> .*|"
                         r"[^\s:]+ : (scalar = -?\d+|\[[0-9x]+\] = \[[-0-9, ]*\])")


def cases(target: str, default: int) -> range:
    """The case numbers of one target, counted for the session's summary."""
    count = default * SCALE
    COUNTS[target] = COUNTS.get(target, 0) + count
    return range(count)


@contextmanager
def deadline(seconds: int = CASE_DEADLINE_S):
    """A TimeoutError in the main thread if the block runs past `seconds`."""
    def expire(signum, frame):
        raise TimeoutError(f"no answer within {seconds} s")
    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def mutate_bytes(raw: bytes, rng: random.Random, edits: int = 4) -> bytes:
    """One to `edits` byte edits: set, insert, delete, or cut the tail."""
    b = bytearray(raw)
    for _ in range(rng.randint(1, edits)):
        kind = rng.choice(["set", "set", "insert", "delete", "cut"])
        at = rng.randrange(len(b) + 1)
        if kind == "set" and at < len(b):
            b[at] = rng.randrange(256)
        elif kind == "insert":
            b[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
        elif kind == "delete" and at < len(b):
            del b[at:at + rng.randint(1, 4)]
        elif kind == "cut":
            del b[at:]
    return bytes(b)


def check_outcome(code: int, out: str, err: str) -> None:
    """A run's end: exit 0 with only well-formed output lines, or exit 1/2 with coded lines
    whose codes are in the ledger."""
    assert code in (0, 1, 2), f"exit {code}"
    if code == 0:
        for line in out.splitlines():
            assert STDOUT_LINE.fullmatch(line), f"odd stdout line {line!r}"
    else:
        codes = [m.group(1) for ln in err.splitlines() if (m := CODED.search(ln))]
        assert codes, f"exit {code} without a coded line: {err!r}"
        assert all(c in LEDGER for c in codes), codes


def summary() -> list[str]:
    return [f"fuzz: {count} cases of {target}" for target, count in COUNTS.items()]
