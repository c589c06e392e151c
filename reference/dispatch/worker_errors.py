"""One actionable line per CDP error code a worker can answer (spec/wire.md §3.6)."""

MEANING = {
    "AUTH_FAILED": "the worker refused the user name or password",
    "AUTH_REQUIRED": "the worker wants a login (token missing, invalid or evicted)",
    "PROTO_VERSION": "the worker speaks another protocol version",
    "BAD_ENVELOPE": "the worker could not parse the request",
    "UNSUPPORTED_OP": "the worker does not implement an op of this flow",
    "SHAPE_MISMATCH": "input tensor shapes are inconsistent with the flow",
    "TOO_LARGE": "the request is larger than the worker's max_payload",
    "TOO_LARGE_FOR_SYNC": "the request is too large for a synchronous execute",
    "BUSY": "the worker has no free job slot; retry later",
    "NOT_READY": "the job's result is not ready yet",
    "NO_SUCH_JOB": "the worker no longer has this job (the result is lost); re-submit",
    "EXEC_FAILED": "the job failed while executing on the worker",
    "NOT_IMPLEMENTED": "the worker does not implement this request",
}


def worker_error_text(code: str, detail: str) -> str:
    """`<meaning> (<CODE>) [worker: <detail>]`; unknown codes are quoted as they came."""
    meaning = MEANING.get(code, "the worker answered an unknown error")
    return f"{meaning} ({code}) [worker: {detail}]" if detail else f"{meaning} ({code})"
