"""Bark workers for the network tests: containers through the docker SDK when Docker is
here, else `bark-worker` processes on loopback (said with a warning). With
MANED_REQUIRE_DOCKER=1 (CI) a missing Docker is a failure, not a fallback (DESIGN D8)."""
import os
import signal
import warnings
from contextlib import contextmanager
from pathlib import Path

import pytest

from bark_vm.container import (RUN_TAG, docker_client, worker_container, worker_image,
                               worker_process)

ROOT = Path(__file__).resolve().parent.parent
IMAGE = RUN_TAG  # this run's own tag (two runs on one daemon never share one)
# A discovery window for tests: without broadcast the wait ends as soon as every probed
# worker has answered, so a long window costs nothing and no machine is too slow for it.
LONG_WINDOW_MS = "30000"


def probes(*ports: int) -> list[str]:
    """Unicast probes to loopback workers, never a broadcast (the suite's rule)."""
    return [arg for p in ports for arg in ("--probe", f"127.0.0.1:{p}")] + ["--no-broadcast"]


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
