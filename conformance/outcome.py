"""A case's outcome on a target (DESIGN §8): its status, among STATUSES, with the detail and
the outputs; and which failures mean the worker was never asked the case (NOT_ASKED) or
is broken (BROKEN). Shared by the case runner, the request cases and the reports."""
from dataclasses import dataclass, field
from typing import Literal, get_args

from maned.failures import FAILURE_KINDS

Status = Literal["pass", "fail", "not_supported", "timeout", "error"]
STATUSES: tuple[str, ...] = get_args(Status)  # in the reports' order
BROKEN = set(FAILURE_KINDS) - {"timeout"}  # a device that failed, not one that was slow


@dataclass(frozen=True)
class Outcome:
    case: str
    target: str
    status: Status
    detail: str = ""
    outputs: dict = field(default_factory=dict)  # {flow: {output: [values]}}, or refused
    asked: bool = True  # False: listed, but never put to the worker (an `error` saying why)


CHECK_PREFIX = "protocol/"  # a protocol check's id is this and its name; a case's, its path


def check_id(name: str) -> str:
    return CHECK_PREFIX + name


def is_check(case_id: str) -> bool:
    """Whether the id is a protocol check's, not a case file's."""
    return case_id.startswith(CHECK_PREFIX)


def not_run(case: str, why: str) -> Outcome:
    """A check or case the run listed but never asked (so every report has every case)."""
    return Outcome(case, "hardware", "error", why, asked=False)


# A failure whose cause is not the worker's answer to the case's request: the run could not
# ask the worker (a login, the protocol, the job slots), so nothing about the case is known.
NOT_ASKED = {"AUTH_FAILED", "AUTH_REQUIRED", "PROTO_VERSION", "BUSY", "NOT_READY",
             "NO_SUCH_JOB", "TOO_LARGE_FOR_SYNC", "NOT_IMPLEMENTED"}
