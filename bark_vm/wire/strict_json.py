"""Strict, bounded JSON for every body a peer sends (spec/wire.md §3.4, §7): at most
MAX_JSON_BYTES, nesting at most MAX_DEPTH, no raw control characters, no surrogate escapes,
no trailing garbage. A body that breaks a rule is a ValueError naming the rule, before the
stdlib decoder (which recurses) ever sees it."""
import json
import re

MAX_DEPTH = 16
MAX_JSON_BYTES = 1 << 16

# a string literal (escapes included) or one bracket
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _check_shape(text: str) -> None:
    depth = 0
    for m in _TOKENS.finditer(text):
        token = m.group()
        if token[0] == '"':
            # an escaped backslash ("\\") cannot start a \u escape, so drop those first
            if "\\u" in token and _SURROGATE.search(token.replace("\\\\", "")):
                raise ValueError("a surrogate escape (\\uD800-\\uDFFF) is not allowed")
        elif token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise ValueError(f"nesting deeper than {MAX_DEPTH}")
        else:
            depth -= 1


def loads(raw: bytes | str, object_pairs_hook=None):
    """The decoded value of a peer's JSON body, or ValueError."""
    if len(raw) > MAX_JSON_BYTES:
        raise ValueError(f"a JSON body of {len(raw)} bytes is over {MAX_JSON_BYTES}")
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("not UTF-8") from None
    _check_shape(raw)
    try:
        return json.loads(raw, strict=True, object_pairs_hook=object_pairs_hook)
    except (ValueError, RecursionError) as e:
        raise ValueError(f"not JSON: {e}") from None


def object_field(raw: bytes | str, key: str):
    """One field of a peer's JSON object body; None when the body is no JSON object."""
    try:
        obj = loads(raw)
    except ValueError:
        return None
    return obj.get(key) if isinstance(obj, dict) else None
