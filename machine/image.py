"""The stick image: an MBR with one FAT32 partition labelled BARK that holds everything: GRUB
for BIOS (boot.img in the MBR, core.img in the gap before the partition) and for UEFI
(Debian's signed shim and GRUB, so Secure Boot works), the kernel, the two initramfs parts
(the cached system and this build's overlay) and bark.conf. Made with mkfs.fat and mtools
into a plain file: no loop device, no mount."""
import hashlib
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import bootsector
from .steps import BuildError, run

IMAGE_MIB = 256
PART_START = 2048  # sectors: the partition starts at 1 MiB, the gap holds core.img
LABEL = "BARK"
GRUB_PC = Path("/usr/lib/grub/i386-pc")
SHIM = Path("/usr/lib/shim")
GRUB_EFI = Path("/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed")
# core.img is self-contained: every module grub.cfg needs, so nothing is read from a
# module folder on the stick. Its embedded config finds the BARK partition by label.
CORE_MODULES = ("biosdisk", "part_msdos", "fat", "search", "search_label", "normal",
                "configfile", "linux", "echo", "test", "serial", "terminal", "boot")
EARLY_CFG = f"search --no-floppy --label {LABEL} --set=root\nset prefix=($root)/boot/grub\n"
KERNEL_ARGS = "console=tty0 console=ttyS0,115200 quiet loglevel=3 rdinit=/sbin/init panic=10"
GRUB_CFG = f"""serial --unit=0 --speed=115200
terminal_input console serial
terminal_output console serial
set timeout=0
menuentry "Bark machine" {{
    linux /boot/vmlinuz {KERNEL_ARGS}
    initrd /boot/base.img /boot/overlay.img
}}
"""
REQUIRED = {"mkfs.fat": "dosfstools", "mcopy": "mtools", "grub-mkimage": "grub-pc-bin",
            "zstd": "zstd", "debootstrap": "debootstrap"}


@dataclass(frozen=True)
class Parts:
    """What goes onto the stick."""
    kernel: Path
    base: Path  # the cached system archive
    overlay: Path  # this build's archive (the wheel, the machine's programs)
    bark_conf: str


def missing_tools() -> list[str]:
    """The Debian packages a build needs that are not installed."""
    from shutil import which
    missing = [pkg for tool, pkg in REQUIRED.items() if which(tool) is None]
    for path, pkg in ((GRUB_PC / "boot.img", "grub-pc-bin"),
                      (SHIM / "shimx64.efi.signed", "shim-signed"),
                      (GRUB_EFI, "grub-efi-amd64-signed")):
        if not path.exists() and pkg not in missing:
            missing.append(pkg)
    return missing


def write(parts: Parts, out: Path) -> str:
    """Write the image to `out` (and `out`.sha256); returns its sha256."""
    sectors = IMAGE_MIB * 2048 - PART_START
    with tempfile.TemporaryDirectory(prefix="bark-image-") as tmp:
        fat = Path(tmp) / "part.img"
        run(["mkfs.fat", "-F", "32", "-n", LABEL, "-h", str(PART_START), "-C", str(fat),
              str(sectors // 2)], "mkfs.fat")
        files = _files(parts, Path(tmp))
        folders = {str(p) for d in files for p in Path(d).parents} - {"."}
        for folder in sorted(folders, key=lambda f: (f.count("/"), f)):
            run(["mmd", "-D", "s", "-i", str(fat), f"::{folder}"], "mmd")
        for dest, src in files.items():
            run(["mcopy", "-D", "o", "-i", str(fat), str(src), f"::{dest}"], "mcopy")
        core = Path(tmp) / "core.img"
        early = Path(tmp) / "early.cfg"
        early.write_text(EARLY_CFG)
        run(["grub-mkimage", "-O", "i386-pc", "-o", str(core), "-c", str(early), "-p",
              "/boot/grub", *CORE_MODULES], "grub-mkimage")
        head = bootsector.mbr((GRUB_PC / "boot.img").read_bytes(),
                              bootsector.partition_entry(PART_START, sectors))
        body = bootsector.core(core.read_bytes(), PART_START - 1)
        digest = hashlib.sha256()
        with open(out, "wb") as f:
            for chunk in (head, body, bytes((PART_START - 1) * 512 - len(body))):
                f.write(chunk)
                digest.update(chunk)
            with open(fat, "rb") as part:
                while chunk := part.read(1 << 20):
                    f.write(chunk)
                    digest.update(chunk)
    sha = digest.hexdigest()
    Path(str(out) + ".sha256").write_text(f"{sha}  {out.name}\n")
    return sha


def write_conf(image: Path, text: str) -> None:
    """Replace bark.conf on an image's BARK partition (what a user does on any computer
    after writing the stick; tests use it to give a copy its identity)."""
    with tempfile.NamedTemporaryFile("w", suffix=".conf") as f:
        f.write(text)
        f.flush()
        run(["mcopy", "-D", "o", "-i", f"{image}@@{PART_START * 512}", f.name, "::bark.conf"],
             "mcopy")


def read_conf(image: Path) -> str:
    """bark.conf as it is on an image's BARK partition."""
    p = subprocess.run(["mtype", "-i", f"{image}@@{PART_START * 512}", "::bark.conf"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise BuildError(f"cannot read bark.conf from {image}: {p.stderr.strip()[-200:]}")
    return p.stdout


def _files(parts: Parts, tmp: Path) -> dict[str, Path]:
    """Destination on the FAT -> source file."""
    cfg = tmp / "grub.cfg"
    cfg.write_text(GRUB_CFG)
    conf = tmp / "bark.conf"
    conf.write_text(parts.bark_conf)
    return {"boot/vmlinuz": parts.kernel, "boot/base.img": parts.base,
            "boot/overlay.img": parts.overlay, "boot/grub/grub.cfg": cfg,
            "EFI/BOOT/BOOTX64.EFI": SHIM / "shimx64.efi.signed",
            "EFI/BOOT/mmx64.efi": SHIM / "mmx64.efi.signed",
            "EFI/BOOT/grubx64.efi": GRUB_EFI, "EFI/debian/grub.cfg": cfg,
            "bark.conf": conf}
