"""The diagnostic record: code, position and message as fields; only the printer makes a line."""
from dataclasses import dataclass

from .ledger import code_info


@dataclass(frozen=True, order=True)
class Pos:
    """A 1-based source position; columns count code points (a tab is one)."""

    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.line}:{self.col}"


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    pos: Pos | None = None
    stage: str | None = None  # overrides the ledger's stage (e.g. E026 found while loading)
    # what a device said or did, when a job failed there: the CDP code (UNSUPPORTED_OP, ...)
    # or a transport's stable name (timeout, connect_failed, malformed_response, too_large,
    # died), or outvoted / no_majority under --replicas
    cause: str | None = None

    def __post_init__(self):
        code_info(self.code)  # refuse a code missing from the ledger at once

    @property
    def severity(self) -> str:
        return code_info(self.code).severity

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def sort_key(self):
        p = self.pos or Pos(0, 0)
        return (p.line, p.col, self.code)


class MnError(Exception):
    """Raised to abort a stage with one or more diagnostics (refused before running; the
    rest of the taxonomy is in `maned.failures`). In the parser it aborts one item: no
    diagnostic when the lexer already reported it, `resume` where parsing may go on."""

    def __init__(self, *diagnostics: Diagnostic, resume: int | None = None):
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = list(diagnostics)
        self.resume = resume
