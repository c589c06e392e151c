"""Bark workers in containers, through the docker SDK (DESIGN D8): build the image from the
project's wheel, start a worker with its port published on 127.0.0.1 only, wait until
`/api/status` answers, and always remove it afterwards."""
import atexit
import http.client
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .wire.constants import DEFAULT_PORT, STATUS_PATH

WORKER_PORT = DEFAULT_PORT  # inside the container
# One image tag per process: two runs on one Docker daemon never race for a tag, and the
# images a process built are removed when it exits (no dangling image per run).
RUN_TAG = f"maned-bark-worker:run-{os.getpid()}-{secrets.token_hex(4)}"
_BUILT: dict[str, object] = {}  # tag -> the client that built it


@dataclass
class RunningWorker:
    alias: str
    host: str
    port: int
    handle: object  # a docker Container, or a subprocess.Popen for a plain process
    log_file: object = None  # a process's stderr: a file, since a pipe nobody reads fills

    @property
    def kind(self) -> str:
        return "process" if isinstance(self.handle, subprocess.Popen) else "container"

    def log(self) -> str:
        """What the worker has written to its log so far."""
        if self.log_file is None:
            return self.handle.logs().decode("utf-8", "replace")
        self.log_file.seek(0)
        return self.log_file.read().decode("utf-8", "replace")


def docker_client():
    """A connected docker client, or None when there is no Docker here."""
    try:
        import docker
        client = docker.from_env()
        client.ping()
        return client
    except Exception:  # no SDK, no daemon, no socket: all mean "no Docker"
        return None


def build_image(client, project: Path, tag: str, base: str | None = None) -> str:
    """Build the project's wheel and the worker image on `base` (a Debian base with
    python3-numpy when given; the Dockerfile's default otherwise)."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                        "-q", "-w", tmp, str(project)], check=True)
        wheel = next(Path(tmp).glob("*.whl"))
        context = Path(tmp) / "context"
        context.mkdir()
        shutil.copy(project / "Dockerfile", context / "Dockerfile")
        shutil.copy(wheel, context / wheel.name)
        args = {"WHEEL": wheel.name}
        if base:
            args.update(BASE=base, DEBIAN_NUMPY="1")
        client.images.build(path=str(context), tag=tag, buildargs=args, rm=True)
    return tag


def worker_image(client, project: Path, tag: str = RUN_TAG) -> str:
    """The worker image of this project, built on the local Debian base when there is one
    ($MANED_DOCKER_BASE, default maned-base:bookworm; DESIGN §5), else on the Dockerfile's
    default base (which needs an image registry); removed when this process exits."""
    base = os.environ.get("MANED_DOCKER_BASE", "maned-base:bookworm")
    try:
        client.images.get(base)
    except Exception:  # no such image (or no answer): the Dockerfile's own base
        base = None
    if not _BUILT:
        atexit.register(_remove_built)
    _BUILT[tag] = client
    return build_image(client, project, tag, base)


def _remove_built() -> None:
    """Remove every image this process built (best effort: the run is over)."""
    for tag, client in _BUILT.items():
        try:
            client.images.remove(tag, force=True)
        except Exception:  # already gone, or the daemon stopped first
            pass


def _wait_ready(host: str, port: int, timeout: float, alive) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive():
            raise RuntimeError("the worker exited before answering /api/status")
        try:
            conn = http.client.HTTPConnection(host, port, timeout=1)
            conn.request("GET", STATUS_PATH)
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"the worker on {host}:{port} did not answer /api/status in {timeout} s")


@contextmanager
def worker_container(client, image: str, alias: str, user: str, password: str,
                     extra_args: tuple[str, ...] = (), timeout: float = 60):
    container = client.containers.run(
        image, list(extra_args), detach=True,
        environment={"BARK_ALIAS": alias, "BARK_USER": user, "BARK_PASS": password},
        ports={f"{WORKER_PORT}/tcp": ("127.0.0.1", None)})
    try:
        container.reload()
        port = int(container.ports[f"{WORKER_PORT}/tcp"][0]["HostPort"])

        def alive():
            container.reload()
            return container.status in ("created", "running")
        _wait_ready("127.0.0.1", port, timeout, alive)
        yield RunningWorker(alias, "127.0.0.1", port, container)
    finally:
        container.remove(force=True)


def free_port(udp: bool = False) -> int:
    """A loopback port nothing holds now (TCP, or UDP for a discovery port)."""
    import socket
    with socket.socket(type=socket.SOCK_DGRAM if udp else socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def worker_process(alias: str, user: str, password: str, extra_args: tuple[str, ...] = (),
                   timeout: float = 30, command: list[str] | None = None,
                   port: int | None = None):
    """The same worker as a plain `bark-worker` process on loopback (where Docker is absent);
    `command` replaces `python -m bark_vm.server` (a test's instrumented worker); `port`:
    where it listens (default a free one; a worker restarted where one was)."""
    port = port or free_port()
    env = dict(os.environ, BARK_ALIAS=alias, BARK_USER=user, BARK_PASS=password)
    command = command or [sys.executable, "-m", "bark_vm.server"]
    log = tempfile.TemporaryFile()
    # discovery off unless asked for: UDP 4781 is one per host, and a test runs many workers
    quiet = () if "--discovery-port" in extra_args else ("--discovery-port", "0")
    proc = subprocess.Popen([*command, "serve", "--host",
                             "127.0.0.1", "--port", str(port), *quiet, *extra_args], env=env,
                            stdout=subprocess.DEVNULL, stderr=log)
    try:
        _wait_ready("127.0.0.1", port, timeout, lambda: proc.poll() is None)
        yield RunningWorker(alias, "127.0.0.1", port, proc, log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
