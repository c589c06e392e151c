"""The login body (spec/wire.md §3.3, POST /api/auth): its one encoding, shared by the
coordinator that sends it and the worker that must be able to receive it, and its cap."""
import codecs
import json

LOGIN_BODY_MAX = 4096  # bytes of an auth body the worker reads
PASS_FILE_MAX = 4096  # bytes of a password file read (a password, not a stream)


def login_body(user: str, password: str) -> bytes:
    """`{"username": ..., "password": ...}` as JSON, non-ASCII escaped (\\uXXXX)."""
    return json.dumps({"username": user, "password": password}).encode()


def password_of_file(raw: bytes) -> str:
    """The password a password file holds: its first line, a UTF-8 byte-order mark (an
    editor's, never a password's) and a CR dropped; UnicodeDecodeError when not UTF-8."""
    first = raw.split(b"\n", 1)[0].rstrip(b"\r")
    return first.removeprefix(codecs.BOM_UTF8).decode("utf-8")


def fits(user: str, password: str) -> bool:
    """Whether a login with these credentials is within the worker's cap."""
    return len(login_body(user, password)) <= LOGIN_BODY_MAX
