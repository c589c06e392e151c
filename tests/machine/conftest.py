"""The Bark machine under QEMU (issue 25): these tests boot a built image, so they run only
when one is given (MANED_MACHINE_IMAGE, which `.ci/run` sets after `maned-machine build`)
and QEMU is here. Otherwise each skips saying which is missing; with MANED_REQUIRE_MACHINE=1
(CI) a missing image or QEMU fails instead. Each test boots a copy with its own bark.conf."""
import os
import secrets
import shutil
from pathlib import Path

import pytest

from maned_machine import image as stick
from maned_machine.boot import QEMU
from maned_machine.guest.identity import template

IMAGE = os.environ.get("MANED_MACHINE_IMAGE")
REQUIRED = os.environ.get("MANED_REQUIRE_MACHINE") == "1"


def _missing() -> str | None:
    if not IMAGE:
        return ("no machine image: build one (maned-machine build --out IMAGE, as root) and "
                "set MANED_MACHINE_IMAGE=IMAGE; .ci/run does")
    if not Path(IMAGE).is_file():
        return f"MANED_MACHINE_IMAGE={IMAGE}: no such file"
    if shutil.which(QEMU) is None:
        return f"{QEMU} is not installed (apt-get install qemu-system-x86 ovmf)"
    if shutil.which("mcopy") is None:
        return "mtools is not installed (the tests write each copy's bark.conf with mcopy)"
    return None


@pytest.fixture(scope="session")
def built() -> Path:
    why = _missing()
    if why and REQUIRED:
        pytest.fail(f"MANED_REQUIRE_MACHINE=1 but {why}")
    if why:
        pytest.skip(why)
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
