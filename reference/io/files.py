"""Reading files: one place that turns OS failures into EIO and bad UTF-8 into a position."""
import os
import stat

from ..diagnostics import Diagnostic, MnError, Pos
from ..lang.limits import SOURCE_BYTES, bound, check_source


def read_bytes(path: str, shown: str, limit: int | None = None) -> bytes:
    """The file's bytes; with `limit`, at most limit + 1 of them (a device or a pipe has no
    size to ask first, and must not be read forever)."""
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if limit is not None and stat.S_ISREG(st.st_mode):
                limit = min(limit, st.st_size)  # a buffer of the file's size, not the limit
            return f.read(-1 if limit is None else limit + 1)
    except OSError as e:
        raise MnError(Diagnostic("EIO", f"cannot read '{shown}': {e.strerror or e}")) from None


def decode_utf8(raw: bytes) -> tuple[str | None, Pos | None]:
    """(text, None), or (None, position of the first byte that is not UTF-8)."""
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as e:
        before = raw[:e.start].decode("utf-8")
        line = before.count("\n") + 1
        return None, Pos(line, len(before) - (before.rfind("\n") + 1) + 1)


def read_script(path: str) -> str:
    """A script's text: EIO when unreadable, E031 when over the source limit (asked of its
    size before a byte is read), EPARSE at the first byte that is not UTF-8."""
    try:
        size = os.stat(path).st_size
    except OSError:
        size = 0  # read_bytes words the failure
    check_source(size, f"the script {path} is")
    raw = read_bytes(path, path, bound(SOURCE_BYTES))
    check_source(len(raw), f"the script {path} is")
    text, bad = decode_utf8(raw)
    if text is None:
        raise MnError(Diagnostic("EPARSE", "the script is not UTF-8 text", bad))
    return text
