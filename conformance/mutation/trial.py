"""One mutant on trial: a copy of the bark_vm package with the mutated file, a bark-worker
started from it on loopback, and `maned-certify --first-failure` against it in a process of
its own. Every wait has a deadline; whatever happens, the verdict is one of killed,
survived or error, and the worker and the certifier are gone afterwards.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path

from bark_vm.container import worker_process

from .. import report as certify_report

# The worker's entry point: the copy first on sys.path (before the checkout or an editable
# install), checked (bark-worker itself keeps BLAS on one thread, bark_vm/blas.py), its
# address space bounded (a mutant that miscounts memory fails its job, not the machine).
BOOT = """\
import os, resource, runpy, sys
root = sys.argv.pop(1)
limit = int(sys.argv.pop(1))
if limit:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
sys.path.insert(0, root)
import bark_vm
if not os.path.abspath(bark_vm.__file__).startswith(os.path.join(root, "bark_vm")):
    sys.exit("bark_vm was not imported from the mutant's copy")
sys.argv[0] = "bark-worker"
runpy.run_module("bark_vm.server", run_name="__main__", alter_sys=True)
"""

WORKER_START_S = 30.0   # the most a worker may take to answer its status
TEARDOWN_S = 15.0       # kept aside from the deadline for stopping the worker
MEMORY_LIMIT = 4 << 30  # the worker's address space, bytes


@dataclass(frozen=True)
class Settings:
    user: str
    password: str
    deadline_s: float = 120.0   # one mutant, start to end
    job_timeout_s: float = 3.0  # maned-certify --job-timeout
    case_timeout_s: float = 30.0  # maned-certify --case-timeout (the protocol checks' waits
    # too): a stalled mutant fails a named check well within its deadline
    memory_limit: int = MEMORY_LIMIT
    suite: Path | None = None   # a snapshot() the certifier imports first
    cases: int | None = None    # how many cases a passing report must hold (the baseline's)


@dataclass(frozen=True)
class Verdict:
    status: str              # killed | survived | error
    reason: str = ""         # the killing case's detail, or why there is no case
    case: str | None = None  # the first case that did not pass
    case_status: str | None = None
    seconds: float = 0.0
    cases: int | None = None  # how many cases passed, when all did


def package_dir() -> Path:
    """The bark_vm package this process imports (a checkout or an installed wheel)."""
    import bark_vm
    return Path(bark_vm.__file__).resolve().parent


def snapshot(into: Path) -> Path:
    """bark_vm, maned and maned_conformance copied into `into`: one run measures one
    worker against one suite, whatever is edited in the checkout meanwhile."""
    import maned
    import maned_conformance
    for name, module in (("bark_vm", None), ("maned", maned),
                         ("maned_conformance", maned_conformance)):
        source = package_dir() if module is None else Path(module.__file__).resolve().parent
        shutil.copytree(source, into / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "mutation"))
    return into


def _copy(package: Path, into: Path, rel: str, text: str) -> None:
    """The package copied under `into`, the file `rel` (bark_vm/...) replaced by `text`."""
    shutil.copytree(package, into / "bark_vm",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    target = into / rel
    if not target.is_file():
        raise FileNotFoundError(f"{rel} is not in the bark_vm package")
    target.write_text(text, encoding="utf-8")


def _first_failure(report: Path) -> tuple[str, str, str] | None:
    """(id, status, detail) of the case that caught the mutant: the report's cause-first
    failure (a case the worker was asked, never one listed as not run)."""
    try:
        doc = json.loads(report.read_text())
        cases = doc["cases"]
    except (OSError, ValueError, KeyError):
        return None
    first = (doc.get("failures") or [None])[0]
    bad = next((c for c in cases if c["id"] == first), None) or next(
        (c for c in cases if c.get("status") != "pass"), None)
    return None if bad is None else (bad["id"], bad["status"], str(bad.get("detail", "")))


def _passed(report: Path, s: Settings) -> Verdict:
    """`survived` once the report shows the whole suite passed (never an empty one)."""
    try:
        cases = json.loads(report.read_text())["cases"]
    except (OSError, ValueError, KeyError):
        return Verdict("error", "maned-certify exited 0 without a readable report.json")
    if not cases or any(c.get("status") != "pass" for c in cases):
        return Verdict("error", "maned-certify exited 0, but its report has a case that "
                       "did not pass, or none")
    if s.cases is not None and len(cases) != s.cases:
        return Verdict("error", f"maned-certify ran {len(cases)} cases, the unmutated "
                       f"worker's run {s.cases}")
    return Verdict("survived", f"{len(cases)} cases passed", cases=len(cases))


def _mask(text: str, secret: str) -> str:
    return text.replace(secret, "***") if secret else text


def _certify(url: str, work: Path, s: Settings, until: float) -> Verdict:
    """maned-certify against the worker at url, in its own process group, ended by `until`."""
    out = work / "certify"
    env = dict(os.environ, BARK_USER=s.user, BARK_PASS=s.password)
    env.pop("BARK_URL", None)
    if s.suite is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(s.suite),
                                                          env.get("PYTHONPATH")]))
    log = work / "certify.log"
    with open(log, "wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "maned_conformance.certify", url, "--out", str(out),
             "--first-failure", "--job-timeout", f"{s.job_timeout_s:g}",
             "--case-timeout", f"{s.case_timeout_s:g}"],
            env=env, cwd=str(work / "cwd"), stdin=subprocess.DEVNULL, stdout=sink,
            stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = proc.wait(timeout=max(until - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
            return Verdict("killed", f"timeout: no verdict within {s.deadline_s:g} s")
    if code == 0:
        return _passed(out / certify_report.REPORT, s)
    failure = _first_failure(out / certify_report.REPORT)
    if code == 1 and failure is not None:
        case, status, detail = failure
        return Verdict("killed", _mask(detail, s.password)[:300], case, status)
    tail = log.read_text(errors="replace").strip().splitlines()[-1:] or ["(no output)"]
    return Verdict("error", f"maned-certify exited {code} without naming a case: "
                   + _mask(tail[0], s.password)[:300])


def _serve_and_certify(work: Path, s: Settings, until: float) -> Verdict:
    """The worker of the copy in `work` started (a second time if the first fails, as a
    port taken meanwhile would), then certified."""
    command = [sys.executable, "-c", BOOT, str(work), str(s.memory_limit)]
    for _ in range(2):
        start = min(WORKER_START_S, max(until - time.monotonic(), 1.0))
        with ExitStack() as stack:
            try:
                w = stack.enter_context(worker_process("mutant", s.user, s.password,
                                                       timeout=start, command=command))
            except RuntimeError as e:  # it exited, or never answered its status
                failure = _mask(str(e), s.password)
                continue
            return _certify(f"http://{w.host}:{w.port}", work, s, until)
    return Verdict("killed", f"the worker did not start: {failure}")


def run_trial(rel: str, text: str, package: Path, s: Settings) -> Verdict:
    """The verdict on the worker whose file `rel` (bark_vm/...) reads `text`."""
    began = time.monotonic()
    until = began + s.deadline_s - TEARDOWN_S
    work = Path(tempfile.mkdtemp(prefix="maned-mutant-"))
    try:
        (work / "cwd").mkdir()  # the certifier's cwd: no bark_vm copy on its sys.path
        _copy(package, work, rel, text)
        verdict = _serve_and_certify(work, s, until)
    except Exception as e:  # the loop's own failure: not a verdict on the mutant
        verdict = Verdict("error", f"{type(e).__name__}: {_mask(str(e), s.password)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return replace(verdict, seconds=round(time.monotonic() - began, 1))
