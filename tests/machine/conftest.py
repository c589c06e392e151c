"""The fixtures of the Bark machine tests.

The Bark machine under QEMU (issue 25): these tests boot a built image, so they run only
when one is given (MANED_MACHINE_IMAGE, which `.ci/run` sets after `maned-machine build`)
and QEMU is here. Otherwise each skips saying which is missing; with MANED_REQUIRE_MACHINE=1
(CI) a missing image or QEMU fails instead. Each test boots a copy with its own bark.conf."""
import os
import secrets
import shutil
import subprocess
from pathlib import Path

import pytest

from maned_machine import image as stick
from support.machine_tools import missing, qemu_missing
from maned_machine.guest.identity import template

from machine_constants import SUBNET

IMAGE = os.environ.get("MANED_MACHINE_IMAGE")


def _missing() -> str | None:
    if not IMAGE:
        return ("no machine image: build one (maned-machine build --out IMAGE, as root) and "
                "set MANED_MACHINE_IMAGE=IMAGE; .ci/run does")
    if not Path(IMAGE).is_file():
        return f"MANED_MACHINE_IMAGE={IMAGE}: no such file"
    if qemu_missing():
        return qemu_missing()
    if shutil.which("mcopy") is None:
        return "mtools is not installed (the tests write each copy's bark.conf with mcopy)"
    return None


@pytest.fixture(scope="session")
def built() -> Path:
    missing(_missing())
    return Path(IMAGE)


@pytest.fixture(scope="session")
def password() -> str:
    return "pw-" + secrets.token_hex(8)


@pytest.fixture
def stick_copy(built, tmp_path):
    """A copy of the image with bark.conf set: `stick_copy(alias, user, password)` or
    `stick_copy()` for a setup-mode stick (no identity)."""
    def make(*identity: str) -> Path:
        copy = tmp_path / f"stick-{len(list(tmp_path.glob('stick-*')))}.img"
        shutil.copyfile(built, copy)
        stick.write_conf(copy, template(*identity))
        return copy
    return make


def _ip(*argv: str) -> None:
    subprocess.run(["ip", *argv], check=True, capture_output=True)


@pytest.fixture
def private_network(tmp_path):
    """`private_network(dhcp=...)`: a namespace with a bridge (10.77.0.1/24 and 169.254.0.1/16,
    the default route) and two taps on it, `tap0` and `tap1`, with dnsmasq answering DHCP
    on it when `dhcp`; its name. Removed, dnsmasq and all, at the end of the test."""
    made: list[tuple[str, subprocess.Popen | None]] = []

    def make(dhcp: bool) -> str:
        if dhcp and shutil.which("dnsmasq") is None:
            pytest.fail("dnsmasq is not installed (apt-get install dnsmasq-base; "
                        ".ci/machine-setup)")
        ns = f"bark-test-{os.getpid()}-{len(made)}"
        _ip("netns", "add", ns)
        made.append((ns, None))
        for argv in (["link", "set", "lo", "up"], ["link", "add", "br0", "type", "bridge"],
                     ["addr", "add", f"{SUBNET}.1/24", "dev", "br0"],
                     ["addr", "add", "169.254.0.1/16", "dev", "br0"],
                     ["link", "set", "br0", "up"], ["route", "add", "default", "dev", "br0"]):
            _ip("-n", ns, *argv)
        for tap in ("tap0", "tap1"):
            _ip("-n", ns, "tuntap", "add", "dev", tap, "mode", "tap")
            _ip("-n", ns, "link", "set", tap, "master", "br0")
            _ip("-n", ns, "link", "set", tap, "up")
        if dhcp:
            made[-1] = (ns, subprocess.Popen(["ip", "netns", "exec", ns] + [
                "dnsmasq", "--no-daemon", "--conf-file=/dev/null", "--user=root",
                "--interface=br0", "--bind-interfaces", "--port=0",
                f"--dhcp-range={SUBNET}.10,{SUBNET}.99,1h",
                f"--dhcp-leasefile={tmp_path / 'leases'}"], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL))
        return ns

    yield make
    for ns, dhcp in made:
        if dhcp is not None:
            dhcp.terminate()
            dhcp.wait()
        _ip("netns", "del", ns)
