"""Reading and writing files: one place that turns OS failures into EIO and bad UTF-8 into a
position, and that never blocks on what is not a file: a FIFO (named pipe) or a socket is
refused before it is opened for good, since opening or reading one waits for a peer that may
never come."""
import errno
import fcntl
import os
import stat

from ..diagnostics import Diagnostic, MnError, Pos
from ..lang.limits import SOURCE_BYTES, bound, check_source


def not_a_file(mode: int, devices: bool) -> str | None:
    """Why a file of `mode` is refused, or None: regular files always pass, character
    devices (/dev/null, /dev/zero) only when `devices` (a bounded read, or a write)."""
    if stat.S_ISREG(mode) or (devices and stat.S_ISCHR(mode)):
        return None
    for test, what in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a device")):
        if test(mode):
            return f"is {what}, not a regular file"
    return "is not a regular file"


def _open(path: str, flags: int, devices: bool) -> int:
    """An fd of `path`, opened without blocking (O_NONBLOCK: a FIFO answers at once), checked
    by not_a_file, then made blocking again; OSError, or ValueError saying why it is refused."""
    try:
        fd = os.open(path, flags | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as e:
        if e.errno == errno.ENXIO:  # a FIFO opened for writing with no reader
            raise ValueError(not_a_file(stat.S_IFIFO, devices)) from None
        raise
    try:
        why = not_a_file(os.fstat(fd).st_mode, devices)
        if why:
            raise ValueError(why)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_at_most(path: str, limit: int | None = None) -> bytes:
    """The file's bytes; with `limit`, at most limit + 1 of them (a device has no size to ask
    first, and must not be read forever: without a limit only a regular file is read).
    OSError when it cannot be read, ValueError saying why it is refused (a FIFO...)."""
    with open(_open(path, os.O_RDONLY, devices=limit is not None), "rb") as f:
        st = os.fstat(f.fileno())
        if limit is not None and stat.S_ISREG(st.st_mode):
            limit = min(limit, st.st_size)  # a buffer of the file's size, not the limit
        return f.read(-1 if limit is None else limit + 1)


def read_text_file(path: str, limit: int, shown: str) -> str:
    """A UTF-8 text file of at most `limit` bytes (a tool's own data file): OSError when it
    cannot be read, ValueError naming it as `shown` when it is refused (a FIFO, a folder),
    longer, or not UTF-8."""
    try:
        raw = read_at_most(path, limit)
    except ValueError as e:
        raise ValueError(f"{shown}: it {e}") from None
    if len(raw) > limit:
        raise ValueError(f"{shown} is over {limit >> 20} MiB")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{shown} is not UTF-8 text") from None


def read_bytes(path: str, shown: str, limit: int | None = None) -> bytes:
    """read_at_most, its failures as one EIO diagnostic naming the file as `shown`."""
    try:
        return read_at_most(path, limit)
    except ValueError as e:
        raise MnError(Diagnostic("EIO", f"cannot read '{shown}': it {e}")) from None
    except OSError as e:
        raise MnError(Diagnostic("EIO", f"cannot read '{shown}': {e.strerror or e}")) from None


def open_for_writing(path: str, encoding: str | None = None):
    """`path` opened to be written from its start (a regular file, created if need be, or a
    character device such as /dev/null); OSError, or ValueError saying why it is refused."""
    fd = _open(path, os.O_WRONLY | os.O_CREAT, devices=True)
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            os.ftruncate(fd, 0)  # truncated only once it is known to be a file
    except BaseException:
        os.close(fd)
        raise
    return open(fd, "w", encoding=encoding) if encoding else open(fd, "wb")


def open_to_update(path: str):
    """`path` opened to be read and written in place, unbuffered (a regular file, created
    if need be: a journal appended to); OSError, or ValueError saying why it is refused."""
    return open(_open(path, os.O_RDWR | os.O_CREAT, devices=False), "r+b", buffering=0)


def same_file(a: str, b: str) -> bool:
    """Whether two paths name one file: the same inode when both exist, else the same
    resolved path (an out:: file not yet written)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # ValueError: a NUL byte; opening it says so, coded
        try:
            return os.path.realpath(a) == os.path.realpath(b)
        except ValueError:
            return False


def overwrites(writes: list[tuple[str, str]], reads: list[tuple[str, str]]) -> str | None:
    """Why a command must not start, or None: the first file it would write (each given as
    (path, what it is)) that is one it reads, or one it writes already, in words for its
    refusal. Checked before anything is written, as `gcc -o x.c x.c` is; a device
    (/dev/null) is no clash."""
    for k, (path, what) in enumerate(writes):
        for other, other_what in reads + writes[:k]:
            if same_file(path, other) and not _device(path):
                return f"{what} '{path}' is {other_what}: writing it would replace it"
    return None


def _device(path: str) -> bool:
    try:
        return stat.S_ISCHR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


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
