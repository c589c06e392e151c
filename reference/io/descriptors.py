"""How many more files this process may open (RLIMIT_NOFILE's soft limit, less those open),
so that a run starting many Bark VM children refuses the one that would leave it none,
with the limit named, instead of failing later wherever a file is opened (an import, a
socket, a log)."""
import os
import resource

RESERVE = 32  # what a run keeps for itself: imports, sockets, logs, its own pipes


def open_files() -> tuple[int, int] | None:
    """(open now, the soft limit), or None where either is unknown or there is no limit."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        used = len(os.listdir("/proc/self/fd"))
    except (OSError, ValueError):
        return None
    return None if soft == resource.RLIM_INFINITY else (used, soft)


def refusal(what: str, needs: int) -> str | None:
    """Why `what`, which opens `needs` more files, must not start now (the limit named), or
    None when RESERVE stays free after it."""
    found = open_files()
    if found is None or found[0] + needs + RESERVE <= found[1]:
        return None
    used, soft = found
    return (f"{what} was not started: this run has {used} of its {soft} open files in use "
            f"(ulimit -n {soft}), and it takes {needs} more beside the {RESERVE} a run keeps "
            "for itself: raise the limit (ulimit -n), or route to fewer Bark VMs")
