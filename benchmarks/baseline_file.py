"""The regression gate's baseline file (baseline.json): a JSON object of tables by scale,
each gated figure a rule {value, margin, better[, parallel]}. It is read, checked and
written here, in one place: anything a gate could not judge, or could only pass, is a
BaselineError (EUSAGE, one line naming the file, quoting at most a short prefix of its
content), raised before a run measures anything (docs/economics.md, "The regression gate")."""
import json
import math
import os
from pathlib import Path

from maned.io.files import read_at_most

from .paths import INSTALLED
from .suite import SCALES

BASELINE = INSTALLED  # the committed baseline, as installed (paths.py: which one a run uses)
MAX_BYTES = 1 << 20  # a baseline is a few KiB; a larger file is not one
DIRECTIONS = ("lower", "higher")
KEYS = ("value", "margin", "better", "parallel")  # parallel may be left out (false)
MIN_MARGIN = 1  # a factor: 1 allows no drift at all; below 1 the baseline itself would fail


class BaselineError(Exception):
    """A baseline that cannot gate: one line, the file named, at most a short quote."""
    code = "EUSAGE"


def _quote(text, limit: int = 40) -> str:
    """repr() of at most `limit` characters of `text`: file content is never quoted whole."""
    text = str(text)
    return repr(text[:limit]) + ("..." if len(text) > limit else "")


def _kind(value) -> str:
    """The JSON name of a value's type."""
    if value is None:
        return "null"
    if isinstance(value, _Literal):
        return _shown(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return "a number"
    return {str: "a string", list: "an array", dict: "an object"}.get(type(value), "a value")


def _shown(value) -> str:
    """A value as a message may show it: a short number, else its kind and a short quote."""
    if isinstance(value, float) and not math.isfinite(value):
        return "a number too large for a float"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        text = repr(value)
        return text if len(text) <= 24 else f"a {len(text)}-digit number"
    if isinstance(value, _Literal):
        return f"{value} (JSON has no NaN nor Infinity)"
    if isinstance(value, str):
        return f"the string {_quote(value, 24)}"
    return _kind(value)


class _Literal(str):
    """What a NaN, Infinity or -Infinity literal parses to: never a number, so the check of
    whatever field holds it refuses it by name (JSON has neither; Python's json takes both)."""


def _literal(name: str) -> _Literal:
    return _Literal(name)


def _unique(pairs: list) -> dict:
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise BaselineError(f"names {_quote(key)} twice in one object")
        seen[key] = value
    return seen


def parse(raw: bytes, where="the baseline", scale: str | None = None) -> dict:
    """A baseline file's bytes as a document, checked whole (`validate`; with `scale`, that
    scale's table must gate a figure), or a BaselineError whose message starts "the
    baseline WHERE:" (WHERE the file's name as given)."""
    head = where if str(where).startswith("the baseline") else f"the baseline {where}"
    try:
        if not raw.strip():
            raise BaselineError("is empty" if not raw else "holds only blanks, not JSON")
        if len(raw) > MAX_BYTES:
            raise BaselineError(f"is larger than {MAX_BYTES >> 20} MiB; a baseline is a few KiB")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise BaselineError(f"is not UTF-8 text (byte 0x{raw[e.start]:02x} at offset "
                                f"{e.start})") from None
        try:
            doc = json.loads(text, parse_constant=_literal, object_pairs_hook=_unique)
        except BaselineError:  # from the hook: a name twice
            raise
        except json.JSONDecodeError as e:
            raise BaselineError(f"is not JSON ({e.msg} at line {e.lineno} column {e.colno}; "
                                f"it begins {_quote(text.lstrip(), 20)})") from None
        except RecursionError:
            raise BaselineError("is not a baseline: its JSON is nested too deep") from None
        except ValueError as e:  # e.g. an integer of more digits than Python converts
            raise BaselineError(f"is not JSON Python can read ({_quote(e, 60)})") from None
        validate(doc, scale)
        return doc
    except BaselineError as e:
        raise BaselineError(f"{head}: {e}") from None


def load(path: Path = BASELINE, scale: str | None = None) -> dict:
    """The baseline file at `path`, read and checked whole (with `scale`, that scale's table
    must gate a figure), or a BaselineError naming it. Read at most MAX_BYTES + 1 bytes,
    opened without blocking (maned.io.files): a FIFO or a socket is refused, not waited on."""
    where = f"the baseline {path}"
    try:
        raw = read_at_most(os.fspath(path), MAX_BYTES)
    except ValueError as e:
        raise BaselineError(f"{where}: {e}") from None
    except OSError as e:
        raise BaselineError(f"{where}: cannot be read: {e.strerror or e}") from None
    return parse(raw, where, scale)


def _number(rule: dict, key: str, low, strict: bool) -> None:
    value = rule[key]
    bound = f"a finite number {'>' if strict else '>='} {low}"
    if key == "value":
        bound += " or null"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BaselineError(f"{key} must be {bound}, not {_shown(value)}")
    try:
        as_float = float(value)
    except OverflowError:
        as_float = math.inf
    if not math.isfinite(as_float) or (as_float <= low if strict else as_float < low):
        raise BaselineError(f"{key} must be {bound}, not {_shown(value)}")


def _check_rule(rule) -> None:
    if not isinstance(rule, dict):
        raise BaselineError(f"must be an object ({', '.join(KEYS)}), not {_kind(rule)}")
    unknown = [k for k in rule if k not in KEYS]
    if unknown:
        raise BaselineError(f"has an unknown key {_quote(unknown[0])} (the keys are "
                            f"{', '.join(KEYS)})")
    for key in KEYS[:3]:
        if key not in rule:
            raise BaselineError(f"has no \"{key}\"")
    if rule["value"] is not None:
        _number(rule, "value", 0, strict=True)
    _number(rule, "margin", MIN_MARGIN, strict=False)
    if rule["better"] not in DIRECTIONS:
        raise BaselineError(f"better must be \"lower\" or \"higher\", not "
                            f"{_shown(rule['better'])}")
    if not isinstance(rule.get("parallel", False), bool):
        raise BaselineError(f"parallel must be true or false, not {_shown(rule['parallel'])}")
    if rule["value"] is not None:
        value, margin = float(rule["value"]), float(rule["margin"])
        if not (math.isfinite(value * margin) and value / margin > 0):
            raise BaselineError(f"value {value:g} with margin {margin:g} overflows: its limit "
                                "is not a finite number > 0")


def check_table(table, scale: str = "") -> dict:
    """One scale's table of rules, each checked; returned as given."""
    of = f"the {scale!r} table" if scale else "the table"
    if not isinstance(table, dict):
        raise BaselineError(f"{of} must be an object of figures, not {_kind(table)}")
    for name, rule in table.items():
        try:
            _check_rule(rule)
        except BaselineError as e:
            raise BaselineError(f"figure {_quote(name)} of {of}: {e}") from None
    return table


def validate(doc, scale: str | None = None) -> dict:
    """A parsed baseline checked whole: an object of tables by scale, each rule gateable.
    With `scale`, that scale's table, which must exist and gate at least one figure."""
    if not isinstance(doc, dict):
        raise BaselineError(f"must be a JSON object of tables by scale ({', '.join(SCALES)}), "
                            f"not {_kind(doc)}")
    for name, table in doc.items():
        if name not in SCALES:
            raise BaselineError(f"has an unknown scale {_quote(name)} (the scales are "
                                f"{', '.join(SCALES)})")
        check_table(table, name)
    if scale is None:
        return doc
    if scale not in doc:
        raise BaselineError(f"has no {scale!r} table: a {scale} run would gate nothing")
    if not doc[scale]:
        raise BaselineError(f"the {scale!r} table gates no figure (it is empty)")
    return doc[scale]


def save(path: Path, tables: dict) -> None:
    Path(path).write_text(json.dumps(tables, indent=1, sort_keys=True, allow_nan=False) + "\n",
                          encoding="utf-8")


def rebaselined(figures, table: dict) -> dict:
    """`table` (one scale's) with every value replaced by this run's; margins, directions
    and the choice of figures stay as committed."""
    by_name = {f.name: f for f in figures}
    return {n: {**rule, "value": round(by_name[n].value, 4) if n in by_name and
                by_name[n].value is not None else rule["value"]} for n, rule in table.items()}
