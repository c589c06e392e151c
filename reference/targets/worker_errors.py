"""One actionable line per CDP error code a worker can answer (spec/wire.md §3.6); the codes
and their meanings live in bark_vm.wire.constants.ERRORS."""
from bark_vm.wire.constants import ERRORS

MEANING = {code: meaning for code, (_, meaning) in ERRORS.items()}


def worker_error_text(code: str, detail: str) -> str:
    """`<meaning> (<CODE>) [worker: <detail>]`; unknown codes are quoted as they came."""
    meaning = MEANING.get(code, "the worker answered an unknown error")
    return f"{meaning} ({code}) [worker: {detail}]" if detail else f"{meaning} ({code})"
