"""One actionable line per CDP error code a worker can answer (spec/wire.md §3.6); the codes
and their meanings live in bark_vm.wire.constants.ERRORS."""
from bark_vm.wire.constants import DEFAULT_LOCKOUT_S, ERRORS, LOCKED

MEANING = {code: meaning for code, (_, meaning) in ERRORS.items()}


# Details that say more than the code: the wire keeps its word, the line says what it means.
EXPLAINED = {("AUTH_FAILED", LOCKED): "the user name is locked after repeated failed logins; "
             f"the lock lifts after the worker's lock-out period ({DEFAULT_LOCKOUT_S} s unless "
             "set otherwise), so wait before trying again"}


def worker_error_text(code: str, detail: str) -> str:
    """`<meaning> (<CODE>) [worker: <detail>]`; unknown codes are quoted as they came."""
    if (code, detail) in EXPLAINED:
        return f"{EXPLAINED[code, detail]} ({code}) [worker: {detail}]"
    meaning = MEANING.get(code, "the worker answered an unknown error")
    return f"{meaning} ({code}) [worker: {detail}]" if detail else f"{meaning} ({code})"
