"""Console scripts as child processes, each under a deadline: the command that starts one
(the installed script, or its module through this interpreter), a run to its end with its
text captured, a start that leaves it running, and the wait for one to be gone. The
deadline is a hang guard (by default the suite's, gates.HANG_GUARD_S): it stops a broken
test, it never decides a pass."""
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from gates import HANG_GUARD_S


def command(script: str, module: str) -> list[str]:
    """The installed console script `script`, else `python -m module` (a checkout run
    without `pip install`)."""
    exe = shutil.which(script)
    return [exe] if exe else [sys.executable, "-m", module]


def installed(name: str) -> str:
    """The installed console script `name` (for a test whose subject is the installed
    command itself)."""
    path = shutil.which(name)
    assert path, f"{name} is not installed (pip install . puts it on PATH)"
    return path


def console(entry: str) -> list[str]:
    """maned.cli.console's ENTRY through this interpreter: what maned-run, maned-lint and
    maned-model run, whatever PATH holds."""
    return [sys.executable, "-c", f"from maned.cli.console import {entry}; {entry}()"]


MANED_RUN, MANED_LINT, MANED_MODEL = (console("maned_run"), console("maned_lint"),
                                      console("maned_model"))
BARK_WORKER = command("bark-worker", "bark_vm.server")
MNPK_GEN = command("mnpk-gen", "maned.cli.mnpk_gen")


def _child(cmd: list[str], args, env: dict | None, popen: dict) -> dict:
    popen.setdefault("stdout", subprocess.PIPE)
    popen.setdefault("stderr", subprocess.PIPE)
    popen.setdefault("text", True)
    popen["args"] = [*cmd, *map(os.fspath, args)]
    popen["env"] = None if env is None else {**os.environ, **env}
    return popen


def run(cmd: list[str], *args, env: dict | None = None, timeout: float = HANG_GUARD_S,
        **popen) -> subprocess.CompletedProcess:
    """`cmd args` to its end: stdout and stderr captured as text (unless given), ended by
    `timeout`. env: variables added to this process's environment."""
    return subprocess.run(**_child(cmd, args, env, popen), timeout=timeout)


def start(cmd: list[str], *args, env: dict | None = None, **popen) -> subprocess.Popen:
    """`cmd args` left running, stdout and stderr pipes of text (unless given); the test
    ends it (communicate(timeout=...))."""
    return subprocess.Popen(**_child(cmd, args, env, popen))


def maned_run_child(*args, env: dict | None = None,
                    timeout: float = HANG_GUARD_S) -> tuple[int, str, str]:
    """maned-run ARGS as a child process: (exit code, stdout, stderr)."""
    p = run(MANED_RUN, *args, env=env, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def gone(pid: int, within_s: float = 30) -> bool:
    """The process has exited and been reaped, waiting at most `within_s` for the reaper."""
    deadline = time.monotonic() + within_s
    while Path(f"/proc/{pid}").exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def children(pid: int) -> set[int]:
    """The pids of `pid`'s children, from every one of its threads (Linux /proc); none
    once it has ended."""
    found = set()
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            found |= {int(c) for c in (task / "children").read_text().split()}
        except OSError:
            pass
    return found


def kill(pid: int) -> None:
    """SIGKILL, if it is still there: a test's clean-up, whatever the run left."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
