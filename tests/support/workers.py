"""Bark workers for the tests, and the ways to start one:

* `start_worker`: a real `bark-worker serve` child on 127.0.0.1, port 0 (the port read from
  its readiness line), its log in a file, stopped by the test, which checks its exit code.
* `Workers`: containers through the docker SDK when Docker is here, else `bark-worker`
  processes on loopback (said with a warning). With MANED_REQUIRE_DOCKER=1 (CI) a missing
  Docker is a failure, not a fallback (DESIGN D8).
* `bark_vm.container.worker_process`: a process on a free port, stopped when its `with`
  ends (the tests that only need a worker to talk to).

`refusal` starts one that must refuse to start."""
import os
import re
import signal
import subprocess
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

import pytest

from bark_vm.container import (RUN_TAG, docker_client, worker_container, worker_image,
                               worker_process)

from gates import HANG_GUARD_S
from support.processes import BARK_WORKER, run
from support.status import status_of

ROOT = Path(__file__).resolve().parent.parent.parent
IMAGE = RUN_TAG  # this run's own tag (two runs on one daemon never share one)
# A discovery window for tests: without broadcast the wait ends as soon as every probed
# worker has answered, so a long window costs nothing and no machine is too slow for it.
LONG_WINDOW_MS = "30000"
# start_worker's credentials and alias unless its env says otherwise
USER, PASSWORD = "tester", "pw-Qz7!never-printed-9f3a"
ALIAS = "bob"
IO_TIMEOUT = 2.0  # start_worker's --io-timeout unless given
READY = re.compile(r"bark-worker: serving (\S+) on 127\.0\.0\.1:(\d+) \(ABI (\d)"
                   r"(?:, discovery on UDP (\d+))?\)")


def probes(*ports: int) -> list[str]:
    """Unicast probes to loopback workers, never a broadcast (the suite's rule)."""
    return [arg for p in ports for arg in ("--probe", f"127.0.0.1:{p}")] + ["--no-broadcast"]


class WorkerProcess:
    """A started worker: its process, address, credentials and log."""

    host = "127.0.0.1"

    def __init__(self, popen, port, err_path, user, password):
        self.popen, self.port, self.err_path = popen, port, err_path
        self.user, self.password = user, password

    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace")

    def stop(self, sig=signal.SIGTERM) -> int:
        """Signal the worker and wait for it: its exit code."""
        if self.popen.poll() is None:
            self.popen.send_signal(sig)
        try:
            return self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
            raise


def start_worker(tmp: Path, *args: str, env: dict | None = None,
                 command: list[str] | None = None) -> WorkerProcess:
    """`bark-worker serve ARGS` on 127.0.0.1 (or `command serve ARGS`, an instrumented
    worker), as ALIAS with USER and PASSWORD unless `env` says otherwise, its log in a file
    under `tmp`; returned once it has printed its readiness line and answered a status."""
    err_path = tmp / f"worker-{time.monotonic_ns()}.err"
    full_env = dict(os.environ, BARK_ALIAS=ALIAS, BARK_USER=USER, BARK_PASS=PASSWORD)
    full_env.update(env or {})
    quiet = [] if "--discovery-port" in args else ["--discovery-port", "0"]  # UDP 4781 is one
    with open(err_path, "wb") as err:
        popen = subprocess.Popen((command or BARK_WORKER)
                                 + ["serve", "--host", "127.0.0.1", "--port", "0",
                                    "--io-timeout", str(IO_TIMEOUT), *quiet, *args],
                                 env=full_env, stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        m = READY.search(err_path.read_text(errors="replace"))
        if m:
            proc = WorkerProcess(popen, int(m.group(2)), err_path, full_env["BARK_USER"],
                                 full_env["BARK_PASS"])
            status_of(proc)
            return proc
        if popen.poll() is not None:
            raise AssertionError("bark-worker exited: " + err_path.read_text())
        time.sleep(0.05)
    popen.kill()
    raise AssertionError("bark-worker printed no readiness line")


def refusal(*args: str, timeout: float = HANG_GUARD_S, **env: str) -> tuple[int, str]:
    """`bark-worker serve --port 0 ARGS` with USER and PASSWORD, and `env` over them, for a
    worker that must refuse to start: (exit code, stderr)."""
    p = run(BARK_WORKER, "serve", "--port", "0", *args,
            env={"BARK_USER": USER, "BARK_PASS": PASSWORD, **env}, timeout=timeout)
    return p.returncode, p.stderr


class Workers:
    def __init__(self):
        self.client = docker_client()
        if self.client is None:
            if os.environ.get("MANED_REQUIRE_DOCKER") == "1":
                pytest.fail("MANED_REQUIRE_DOCKER=1 but Docker is not available here")
            warnings.warn("Docker is absent: the network tests run bark-worker as plain "
                          "processes on loopback")
            return
        worker_image(self.client, ROOT, IMAGE)

    @property
    def kind(self) -> str:
        return "process" if self.client is None else "container"

    @contextmanager
    def start(self, alias: str, user: str, password: str, *args: str):
        if self.client is None:
            with worker_process(alias, user, password, args) as w:
                yield w
        else:
            with worker_container(self.client, IMAGE, alias, user, password, args) as w:
                yield w

    def pause(self, worker) -> None:
        """Freeze a worker: it keeps its port but answers nothing until stopped."""
        if worker.kind == "process":
            worker.handle.send_signal(signal.SIGSTOP)
        else:
            worker.handle.pause()

    def stop(self, worker) -> None:
        """Stop a worker mid-run, paused or not (its port stops answering)."""
        if worker.kind == "process":
            worker.handle.kill()
            worker.handle.wait()
        else:
            worker.handle.kill()
