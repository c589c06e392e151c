"""The warm parent's socket messages, both ways, one codec for both ends (DESIGN D7;
bark_vm/fork_server.py serves them, maned.devices.warm_parent sends them). One message a
SOCK_SEQPACKET packet:

    fork N\\0ARG...   (with three fds)   -> forked N PID | failed N WHY
    kill N                             <- exited N CODE (CODE < 0: killed by signal -CODE)
"""
FORK, KILL = "fork", "kill"  # asked
FORKED, FAILED, EXITED = "forked", "failed", "exited"  # answered
ARG_SEP = b"\0"  # between a fork's number and each argument (an argument holds no NUL)


def fork_request(number: int, argv: list[str]) -> bytes:
    """Ask for child N running `bark-vm ARGV` (its fds travel beside the message)."""
    return f"{FORK} {number}".encode() + b"".join(ARG_SEP + a.encode() for a in argv)


def kill_request(number: int) -> bytes:
    """SIGKILL to child N, unless it has ended."""
    return f"{KILL} {number}".encode()


def read_request(data: bytes) -> tuple[str, int, list[str]]:
    """(verb, N, the fork's arguments); ValueError for what is no request."""
    verb, _, rest = data.partition(b" ")
    number, *argv = rest.split(ARG_SEP) if verb == FORK.encode() else (rest,)
    if verb not in (FORK.encode(), KILL.encode()):
        raise ValueError(f"not a request: {verb[:16]!r}")
    return verb.decode(), int(number), [a.decode() for a in argv]


def answer(verb: str, number: int, value: int | str) -> bytes:
    """One answer about child N: its pid, why it could not be forked, or how it ended."""
    return f"{verb} {number} {value}".encode()


def read_answer(data: bytes) -> tuple[str, int, str]:
    """(verb, N, the rest: a pid, a reason or an exit code, as text)."""
    verb, number, rest = data.decode().split(" ", 2)
    return verb, int(number), rest
