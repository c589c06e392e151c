"""The transports a benchmark routes through, each ready to take MNPK bytes: a Bark VM child
(stdio), a bark-worker process over loopback HTTP, the same worker in a container (when
Docker is here), and the tiny flow every round-trip figure sends."""
import secrets
import sys
from contextlib import contextmanager
from pathlib import Path

from bark_vm.container import docker_client, worker_container, worker_image, worker_process
from maned.cli.mnpk_gen import build_fixture
from maned.io.cli_values import parse_value
from maned.pipeline.compile import compile_script
from maned.targets.cdp import CdpDevice
from maned.targets.vm import VmDevice

ROOT = Path(__file__).resolve().parent.parent
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
    device = VmDevice(alias, [sys.executable, "-m", "bark_vm.vm", "--alias", alias])
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
        device = CdpDevice(alias, w.host, w.port, USER, password, None)
        device.start()
        yield device


def docker_here():
    """The docker client, or None (the container figures are then skipped, saying why)."""
    return docker_client()


@contextmanager
def container_device(client, alias: str = "box"):
    password = secrets.token_hex(16)
    image = worker_image(client, ROOT)
    with worker_container(client, image, alias, USER, password) as w:
        device = CdpDevice(alias, w.host, w.port, USER, password, None)
        device.start()
        yield device
