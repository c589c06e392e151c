"""What the tests that run QEMU share: whether the machine's tools are required (.ci/run sets
MANED_REQUIRE_MACHINE=1 once it has installed them), and the skip, or the failure where they
are required, when one is missing."""
import os
import shutil

import pytest

from maned_machine.boot import QEMU, QEMU_MISSING

REQUIRED = os.environ.get("MANED_REQUIRE_MACHINE") == "1"


def qemu_missing() -> str | None:
    """Why QEMU cannot run here, or None."""
    return QEMU_MISSING if shutil.which(QEMU) is None else None


def missing(why: str | None) -> None:
    """Nothing when `why` is None; else a skip saying it, or a failure where required."""
    if why and REQUIRED:
        pytest.fail(f"MANED_REQUIRE_MACHINE=1 but {why}")
    if why:
        pytest.skip(why)
