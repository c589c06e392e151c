"""This build's part of the machine: the worker and the machine's own programs (the
installed bark_vm and maned_machine packages, byte-compiled for the guest's Python 3.11),
the systemd units that start them, and a record of what was built. Small and rebuilt every
time, so a code change costs seconds, not a new package layer."""
import compileall
import importlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

from bark_vm.version import __version__

from . import rootfs
from .steps import BuildError

SITE = "usr/lib/python3/dist-packages"
UNITS = Path(__file__).parent / "guest" / "units"
PACKAGES = ("bark_vm", "maned_machine")


def build(out: Path, record: dict) -> None:
    """Write the overlay archive to `out`."""
    if sys.version_info[:2] != (3, 11):
        raise BuildError("the guest runs Debian's Python 3.11: build with Python 3.11 "
                                "so the byte-compiled files match it")
    with tempfile.TemporaryDirectory(prefix="bark-overlay-") as tmp:
        tree = Path(tmp)
        site = tree / SITE
        for name in PACKAGES:
            source = Path(importlib.import_module(name).__file__).parent
            shutil.copytree(source, site / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "units"))
        compileall.compile_dir(str(site), quiet=1, workers=1)
        system = tree / "etc/systemd/system"
        wants = system / "multi-user.target.wants"
        wants.mkdir(parents=True)
        for unit in sorted(UNITS.glob("*.service")):
            shutil.copyfile(unit, system / unit.name)
            (wants / unit.name).symlink_to(f"/etc/systemd/system/{unit.name}")
        (tree / "etc/bark-machine").mkdir(parents=True)
        (tree / "etc/bark-machine/build.json").write_text(
            json.dumps({**record, "worker": __version__}, indent=1) + "\n")
        rootfs.pack(tree, out, level=9)
