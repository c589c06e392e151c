"""The transports a benchmark routes through, each ready to take MNPK bytes: a Bark VM child
(stdio), a bark-worker process over loopback HTTP, the same worker in a container (when
Docker is here), and the tiny flow every round-trip figure sends."""
import secrets
from contextlib import contextmanager
from pathlib import Path

from bark_vm.container import docker_client, worker_container, worker_image, worker_process
from maned.lowering.fixtures import build_fixture
from maned.io.cli_values import parse_value
from maned.pipeline.intake import compile_script
from maned.devices import DEFAULT_VM, Remote, VmChild, open_device

USER = "bench"
TINY = """mnd::quantmax=1000;
mnd::quantmin=-1000;
mnd::quantres=0;
calc::lambda_flow tiny(a, b) {
    a b add r =
} return r;
"""


def tiny_request() -> tuple[bytes, bytes]:
    """(MNPK, the MNRS it must answer): two [2] tensors added, the smallest useful job."""
    checked = compile_script(TINY)
    graph = checked.graphs["tiny"]
    _, mnpk, mnrs, _, _ = build_fixture(checked.program, graph,
                                        [parse_value("2:1,2"), parse_value("2:3,4")], 2)
    return mnpk, mnrs


@contextmanager
def vm_device(alias: str = "vm"):
    device = open_device(alias, VmChild((*DEFAULT_VM, "--alias", alias)))
    try:
        device.start()
        yield device
    finally:
        device.close()


@contextmanager
def http_device(alias: str = "bob"):
    """A bark-worker process on loopback and a logged-in CDP client for it."""
    password = secrets.token_hex(16)
    with worker_process(alias, USER, password) as w:
        device = open_device(alias, Remote(w.host, w.port, USER, password, None))
        device.start()
        yield device


def project_root() -> Path | None:
    """The project's source (its Dockerfile builds the worker image): the working folder,
    as tox and a checkout run it, else the folder above an editable install."""
    for folder in (Path.cwd(), Path(__file__).resolve().parent.parent):
        if (folder / "Dockerfile").is_file() and (folder / "pyproject.toml").is_file():
            return folder
    return None


def container_unavailable() -> str | None:
    """Why the container figures cannot be measured here, or None when they can."""
    if project_root() is None:
        return "no project source here (run from the checkout) to build the worker image"
    if docker_client() is None:
        return "Docker is not available here"
    return None


@contextmanager
def container_device(alias: str = "box"):
    client = docker_client()
    password = secrets.token_hex(16)
    image = worker_image(client, project_root())
    with worker_container(client, image, alias, USER, password) as w:
        device = open_device(alias, Remote(w.host, w.port, USER, password, None))
        device.start()
        yield device
