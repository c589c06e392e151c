"""The machine's package layer: a Debian tree made by debootstrap (packages.py), set up to
boot straight into systemd from RAM, trimmed to what a worker needs (kernel modules kept by
their dependency closure, no docs, locales or package lists), packed once into a compressed
cpio archive and cached under its key. Only debootstrap and one chroot (depmod) need root."""
import fnmatch
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import cpio
from .packages import MIRROR, PACKAGES, SUITE, layer_key
from .steps import BuildError, Clock, run

# What the package layer leaves out: the machine runs from RAM, so every byte costs.
TRIMMED = ("usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale",
           "usr/share/lintian", "usr/share/bash-completion", "usr/share/zsh",
           "usr/share/perl", "usr/share/perl5", "usr/lib/x86_64-linux-gnu/perl",
           "usr/lib/x86_64-linux-gnu/perl-base", "usr/lib/x86_64-linux-gnu/gconv",
           "usr/lib/python3.11/test", "usr/lib/python3.11/idlelib",
           "usr/lib/python3.11/tkinter", "usr/lib/python3.11/lib2to3",
           "usr/lib/python3.11/ensurepip", "usr/lib/python3.11/pydoc_data",
           "usr/lib/python3/dist-packages/numpy/tests", "var/lib/apt/lists", "var/cache/apt",
           "var/cache/debconf", "var/log", "boot")
# What a cold build costs, said when it starts (docs/machine.md §1 and §7 have the figures)
COLD_BUILD = "2 minutes on a quiet machine near its mirror, up to 20 on a busy or slow one"
# Kernel modules kept, with everything they depend on (modules.dep): the wired NICs a laptop
# or QEMU has (RTL8139 first), USB (a CDC-ECM adapter, the stick, a keyboard), the stick's
# FAT, virtio; efivarfs, where the faceplate reads whether Secure Boot is on.
MODULES = ("kernel/drivers/net/ethernet/realtek/*", "kernel/drivers/net/ethernet/intel/e1000/*",
           "kernel/drivers/net/ethernet/intel/e1000e/*", "kernel/drivers/net/virtio_net.ko",
           "kernel/drivers/net/usb/*", "kernel/drivers/usb/host/*",
           "kernel/drivers/usb/storage/*", "kernel/drivers/hid/usbhid/*",
           "kernel/drivers/hid/hid-generic.ko", "kernel/drivers/virtio/*",
           "kernel/drivers/block/virtio_blk.ko", "kernel/drivers/scsi/sd_mod.ko",
           "kernel/drivers/scsi/virtio_scsi.ko", "kernel/drivers/ata/ahci.ko",
           "kernel/drivers/ata/ata_piix.ko", "kernel/fs/fat/*", "kernel/fs/nls/*",
           "kernel/fs/efivarfs/*")
MASKED = ("getty@.service", "serial-getty@.service", "console-getty.service",
          "systemd-networkd-wait-online.service", "apt-daily.timer",
          "apt-daily-upgrade.timer", "e2scrub_all.timer", "fstrim.timer",
          "systemd-timesyncd.service", "dpkg-db-backup.timer", "getty-static.service",
          "proc-sys-fs-binfmt_misc.automount", "systemd-binfmt.service")
NETWORK = """[Match]
Type=ether

[Network]
DHCP=ipv4
LinkLocalAddressing=no
IPv6AcceptRA=no
"""
JOURNAL = "[Journal]\nStorage=volatile\nForwardToConsole=no\nForwardToWall=no\n"


@dataclass(frozen=True)
class Layer:
    """A cached package layer: the kernel and the packed system."""
    folder: Path

    @property
    def kernel(self) -> Path:
        return self.folder / "vmlinuz"

    @property
    def archive(self) -> Path:
        return self.folder / "base.cpio.zst"

    @property
    def ready(self) -> bool:
        return self.kernel.is_file() and self.archive.is_file()


def cache_root() -> Path:
    return Path(os.environ.get("MANED_MACHINE_CACHE", "/var/cache/maned-machine"))


def layer(clock: Clock) -> Layer:
    """The package layer for this package list: from the cache, else built (minutes: each
    stage said on `clock`)."""
    found = Layer(cache_root() / layer_key())
    if found.ready:
        clock.stage(f"package layer {layer_key()}: cached")
        return found
    work = found.folder.with_name(found.folder.name + ".partial")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    tree = work / "tree"
    clock.stage(f"package layer {layer_key()}: not cached, so built now, once: {COLD_BUILD} "
                f"(later builds take seconds)")
    run(["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE,
         str(tree), MIRROR], f"debootstrap {SUITE} ({len(PACKAGES)} packages)", clock,
        debootstrap_stage)
    clock.stage("package layer: setting up systemd, networkd and the journal")
    _set_up(tree)
    shutil.copyfile(_kernel_of(tree), work / "vmlinuz")
    clock.stage("package layer: trimming (docs, locales, tests; kernel modules but the NICs, "
                "USB and FAT)")
    _trim(tree)
    clock.stage("package layer: packing the system (cpio, zstd -15)")
    pack(tree, work / "base.cpio.zst")
    shutil.rmtree(tree)
    shutil.rmtree(found.folder, ignore_errors=True)
    work.rename(found.folder)
    clock.stage(f"package layer {layer_key()}: built and cached in {cache_root()}")
    return found


# debootstrap's `I: ` lines by their first word, as the stages of its work said on the clock
DEBOOTSTRAP_STAGES = {
    **dict.fromkeys(("Retrieving", "Validating", "Checking", "Valid", "Resolving", "Found"),
                    "downloading and checking packages"),
    **dict.fromkeys(("Chosen", "Extracting"), "extracting packages"),
    "Installing": "installing the core packages", "Unpacking": "unpacking packages",
    "Configuring": "configuring packages", "Base": "base system installed",
}


def debootstrap_stage(line: str) -> str | None:
    """The stage a line of debootstrap's output begins (None: no `I: ` line of a stage)."""
    words = line[3:].split(maxsplit=1) if line.startswith("I: ") else []
    return DEBOOTSTRAP_STAGES.get(words[0]) if words else None


def pack(tree: Path, out: Path, level: int = 15) -> None:
    """`tree` as a zstd-compressed newc archive (the kernel unpacks zstd initramfs)."""
    with open(out, "wb") as f:
        z = subprocess.Popen(["zstd", "-q", f"-{level}", "-T0", "-c"], stdin=subprocess.PIPE,
                             stdout=f)
        try:
            cpio.write(str(tree), z.stdin)
        finally:
            z.stdin.close()
            if z.wait() != 0:
                raise BuildError(f"zstd failed packing {tree}")


def _kernel_of(tree: Path) -> Path:
    kernels = sorted((tree / "boot").glob("vmlinuz-*"))
    if not kernels:
        raise BuildError("the package layer has no kernel (linux-image-amd64 in /boot)")
    return kernels[-1]


def _set_up(tree: Path) -> None:
    """Boot straight into systemd from the initramfs; DHCP by networkd on every wired NIC;
    a volatile journal; no getty anywhere (no shell on the console or the network)."""
    (tree / "etc/hostname").write_text("bark\n")
    (tree / "etc/fstab").write_text("")
    (tree / "etc/machine-id").write_text("")
    _link(tree / "init", "/sbin/init")
    net = tree / "etc/systemd/network"
    net.mkdir(parents=True, exist_ok=True)
    (net / "20-wired.network").write_text(NETWORK)
    journal = tree / "etc/systemd/journald.conf.d"
    journal.mkdir(parents=True, exist_ok=True)
    (journal / "bark.conf").write_text(JOURNAL)
    system = tree / "etc/systemd/system"
    for unit in MASKED:
        _link(system / unit, "/dev/null")
    _link(system / "multi-user.target.wants/systemd-networkd.service",
          "/lib/systemd/system/systemd-networkd.service")
    _link(system / "sockets.target.wants/systemd-networkd.socket",
          "/lib/systemd/system/systemd-networkd.socket")


def _link(path: Path, target: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.exists():
        path.unlink()
    path.symlink_to(target)


def _trim(tree: Path) -> None:
    for rel in TRIMMED:
        path = tree / rel
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
            if rel in ("var/log", "boot"):
                path.mkdir()
    for tests in (tree / "usr/lib/python3/dist-packages/numpy").glob("*/tests"):
        shutil.rmtree(tests)  # numpy's own test suites (numpy.testing stays)
    _trim_modules(tree)


def _trim_modules(tree: Path) -> None:
    """Keep MODULES and their dependencies (modules.dep), drop the rest, run depmod."""
    for version in sorted(p.name for p in (tree / "lib/modules").iterdir()):
        base = tree / "lib/modules" / version
        deps = {}
        for line in (base / "modules.dep").read_text().splitlines():
            mod, _, rest = line.partition(":")
            deps[mod] = rest.split()
        keep = {m for m in deps if any(fnmatch.fnmatch(m, p) for p in MODULES)}
        todo = list(keep)
        while todo:
            for d in deps.get(todo.pop(), []):
                if d not in keep:
                    keep.add(d)
                    todo.append(d)
        for mod in deps:
            if mod not in keep:
                (base / mod).unlink(missing_ok=True)
        run(["chroot", str(tree), "depmod", "-a", version], "depmod")
