"""The regression gate: a run's figures against the committed baseline (baseline.json),
per scale, each gated figure with its own margin (a factor). A figure that is better when
lower fails above baseline × margin; one better when higher fails below baseline / margin.
Only ratios are gated, never times; a parallel figure (a speed-up) is gated only when the
run's yardstick shows two cores, and otherwise reported as skipped with the reason.

A baseline is read and checked in one place (`load`, `parse`, `validate`): anything a gate
could not judge, or could only pass, is a BaselineError (EUSAGE, one line naming the file,
quoting at most a short prefix of its content), raised before a run measures anything. The
verdict (`judge`) passes only when at least one figure was checked and none failed: a gate
whose figures were all skipped "checked nothing", which is not a pass
(docs/economics.md, "The regression gate")."""
import fcntl
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

from maned.io.files import not_a_file

from .paths import INSTALLED
from .suite import SCALES
from .yardstick import TWO_CORES

BASELINE = INSTALLED  # the committed baseline, as installed (paths.py: which one a run uses)
MAX_BYTES = 1 << 20  # a baseline is a few KiB; a larger file is not one
DIRECTIONS = ("lower", "higher")
KEYS = ("value", "margin", "better", "parallel")  # parallel may be left out (false)
MIN_MARGIN = 1  # a factor: 1 allows no drift at all; below 1 the baseline itself would fail


class BaselineError(Exception):
    """A baseline that cannot gate: one line, the file named, at most a short quote."""
    code = "EUSAGE"


@dataclass(frozen=True)
class Verdict:
    name: str
    status: str  # "pass", "fail" or "skip"
    text: str


@dataclass(frozen=True)
class Outcome:
    """The gate's verdict on a run: "passed", "failed", "checked nothing" (every figure
    skipped) or "not run" (the baseline could not be read, checked or written: `reason`)."""
    status: str
    verdicts: tuple = ()
    reason: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def line(self) -> str:
        if self.status == "not run":
            return f"maned-bench: gate not run: {self.reason}"
        counts = (f"{sum(v.status == 'pass' for v in self.verdicts)} pass, "
                  f"{sum(v.status == 'fail' for v in self.verdicts)} fail, "
                  f"{sum(v.status == 'skip' for v in self.verdicts)} skipped")
        if self.status == "checked nothing":
            return (f"maned-bench: gate checked nothing: {counts} (no gated figure was "
                    "measured and judged in this run; not a pass)")
        return f"maned-bench: gate {'FAILED' if self.status == 'failed' else 'passed'}: {counts}"

    def to_json(self) -> dict:
        return {"status": self.status, "reason": self.reason}


def judge(verdicts) -> Outcome:
    """Failed if any figure failed; passed only if at least one passed; else checked nothing."""
    verdicts = tuple(verdicts)
    if any(v.status == "fail" for v in verdicts):
        return Outcome("failed", verdicts)
    if any(v.status == "pass" for v in verdicts):
        return Outcome("passed", verdicts)
    return Outcome("checked nothing", verdicts)


def not_run(reason: str) -> Outcome:
    return Outcome("not run", (), reason)


# --- reading and checking a baseline -----------------------------------------------------
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
    must gate a figure), or a BaselineError naming it."""
    where = f"the baseline {path}"
    try:
        raw = _read(path)
    except OSError as e:
        raise BaselineError(f"{where}: cannot be read: {e.strerror or e}") from None
    except BaselineError as e:
        raise BaselineError(f"{where}: {e}") from None
    return parse(raw, where, scale)


def _read(path) -> bytes:
    """At most MAX_BYTES + 1 bytes of `path`, opened without blocking so that a FIFO or a
    socket is refused (maned.io.files' rule) instead of waiting for a writer forever."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        why = not_a_file(os.fstat(fd).st_mode, devices=True)  # /dev/null: a bounded read
        if why:
            raise BaselineError(why)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        with open(fd, "rb", closefd=False) as f:
            return f.read(MAX_BYTES + 1)
    finally:
        os.close(fd)


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


# --- judging a run -------------------------------------------------------------------------
def check(figures, baseline: dict, yardstick: float | None) -> list[Verdict]:
    """One verdict per gated figure of `baseline` (one scale's table, checked here first:
    a rule it could not judge is a BaselineError, never a guess)."""
    check_table(baseline)
    by_name = {f.name: f for f in figures}
    out = []
    for name, rule in sorted(baseline.items()):
        base, margin, better = rule["value"], rule["margin"], rule["better"]
        f = by_name.get(name)
        if f is None or f.value is None:
            out.append(Verdict(name, "skip", f"{name}: not measured in this run"))
            continue
        if base is None:
            out.append(Verdict(name, "skip", f"{name}: {f.value:.2f}x, no baseline value yet "
                               "(maned-bench --rebaseline)"))
            continue
        if f.unit != "x":
            out.append(Verdict(name, "fail", f"{name}: gated figures are ratios, not {f.unit}"))
            continue
        if f.better is not None and f.better != better:
            out.append(Verdict(name, "fail", f"{name}: the baseline says {better} is better, "
                               f"the figure says {f.better}: fix the baseline's direction"))
            continue
        if rule.get("parallel") and (yardstick is None or yardstick < TWO_CORES):
            out.append(Verdict(name, "skip", f"{name}: {f.value:.2f}x not gated: the yardstick "
                               f"was {yardstick or 0:.2f}, below {TWO_CORES} (one core here)"))
            continue
        limit = base * margin if better == "lower" else base / margin
        bad = f.value > limit if better == "lower" else f.value < limit
        side = "at most" if better == "lower" else "at least"
        out.append(Verdict(name, "fail" if bad else "pass",
                           f"{name}: {f.value:.2f}x, {side} {limit:.2f}x allowed "
                           f"(baseline {base:.2f}x, margin {margin:g})"))
    return out


def rebaselined(figures, table: dict) -> dict:
    """`table` (one scale's) with every value replaced by this run's; margins, directions
    and the choice of figures stay as committed."""
    by_name = {f.name: f for f in figures}
    return {n: {**rule, "value": round(by_name[n].value, 4) if n in by_name and
                by_name[n].value is not None else rule["value"]} for n, rule in table.items()}
