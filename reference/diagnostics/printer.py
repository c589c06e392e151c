"""The one place that turns diagnostics into lines (R2), masking every registered secret (D13)
and escaping what would not print as one line."""
from .diagnostic import Diagnostic
from .ledger import code_info

_SECRETS: set[str] = set()
_PREFIX = {"parse": "parse error", "ml": "ml error", "lint": "lint error"}


def register_secret(value: str) -> None:
    """Mask `value` as *** in every line printed from now on (only non-empty secrets, R22)."""
    if value:
        _SECRETS.add(value)


def mask(text: str) -> str:
    """The text as one printable line: every registered secret as ***, and every control
    or format character (a newline, an escape sequence, a bidi override a worker may send
    in a detail) written as its Python escape, so no answer can forge or hide a line."""
    for s in sorted(_SECRETS, key=len, reverse=True):
        text = text.replace(s, "***")
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def run_line(d: Diagnostic) -> str:
    """`maned-run` shape: `<prefix> [L:C] <message> [<CODE>]` or `error: <message> [<CODE>]`."""
    stage = d.stage or code_info(d.code).stage
    if stage == "run":
        return mask(f"error: {d.message} [{d.code}]")
    where = f" [{d.pos}]" if d.pos else ""
    return mask(f"{_PREFIX[stage]}{where} {d.message} [{d.code}]")


def lint_line(path: str, d: Diagnostic) -> str:
    """`maned-lint` shape: `FILE:L:C: <severity>[<CODE>]: <message>`."""
    where = f"{d.pos}:" if d.pos else ""
    return mask(f"{path}:{where} {d.severity}[{d.code}]: {d.message}")


def sort_diagnostics(diags) -> list[Diagnostic]:
    """Deterministic order: (line, col, code); unpositioned ones first."""
    return sorted(diags, key=Diagnostic.sort_key)
