"""The documented limits on a script (DESIGN §10, E031), each refused before the work it
bounds, each message naming the limit and the environment variable that raises it."""
import os
from dataclasses import dataclass

from bark_vm.wire.digits import whole_number

from ..diagnostics import Diagnostic, MnError, Pos


@dataclass(frozen=True)
class Limit:
    env: str      # the environment variable that raises (or lowers) it
    default: int
    unit: str


MAX_LIMIT = 2 ** 63 - 1  # a limit is any whole number a count can reach
SOURCE_BYTES = Limit("MANED_MAX_SOURCE_BYTES", 1 << 20, "bytes")  # a script's text
STEPS = Limit("MANED_MAX_STEPS", 10_000_000, "training steps")  # summed over a script
ROUNDS = Limit("MANED_MAX_ROUNDS", 100_000, "round flows")  # one ML definition's
STEP_KEYS = ("iters", "rounds", "trees")  # the hyperparameters that count training steps


def bound(limit: Limit) -> int:
    """The limit in force: its environment variable when set, else its default."""
    text = os.environ.get(limit.env, "")
    if not text:
        return limit.default
    value = whole_number(text, 1, MAX_LIMIT)
    if value is None:
        raise MnError(Diagnostic("EUSAGE", f"{limit.env}={text[:32]!r}: a limit is a whole "
                                 "number of 1 or more"))
    return value


def over(limit: Limit, what: str, n: int, pos: Pos | None = None,
         stage: str | None = None) -> Diagnostic | None:
    """E031 when `n` is over the limit in force, else None."""
    cap = bound(limit)
    if n <= cap:
        return None
    return Diagnostic("E031", f"{what} {n:,} {limit.unit}, over the limit of {cap:,}; set "
                      f"{limit.env} to allow more", pos, stage)


def check_source(size: int, what: str = "the script is") -> None:
    """Refuse a script's text over SOURCE_BYTES before it is read or parsed."""
    refusal = over(SOURCE_BYTES, what, size, Pos(1, 1))
    if refusal:
        raise MnError(refusal)


def steps_of(cfg: dict) -> int:
    """The training steps of one configuration (iterations, boosting rounds, trees)."""
    return sum(int(cfg[k]) for k in STEP_KEYS if isinstance(cfg.get(k), int))
