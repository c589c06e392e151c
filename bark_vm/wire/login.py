"""The login body (spec/wire.md §3.3, POST /api/auth): its one encoding, shared by the
coordinator that sends it and the worker that must be able to receive it, and its cap."""
import json

LOGIN_BODY_MAX = 4096  # bytes of an auth body the worker reads


def login_body(user: str, password: str) -> bytes:
    """`{"username": ..., "password": ...}` as JSON, non-ASCII escaped (\\uXXXX)."""
    return json.dumps({"username": user, "password": password}).encode()


def fits(user: str, password: str) -> bool:
    """Whether a login with these credentials is within the worker's cap."""
    return len(login_body(user, password)) <= LOGIN_BODY_MAX
