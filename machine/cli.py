"""maned-machine: build the Bark machine's stick image, or boot one under QEMU (docs/machine.md).

    maned-machine build --out bark-usb.img [--alias A --user U --pass-file F]
    maned-machine boot IMAGE [--uefi] [--port P] [--discovery-port Q] [--accel auto|kvm|tcg]
                      [--serial FILE] [--memory MIB]

A build needs root (debootstrap and chroot) and Debian's grub-pc-bin, grub-efi-amd64-signed,
shim-signed, mtools, dosfstools, zstd and debootstrap; its package layer is cached under
/var/cache/maned-machine (MANED_MACHINE_CACHE), keyed by the package list. Exit 0 on
success, 1 when a step failed, 2 on a usage error; every failure is one coded line."""
import argparse
import os
import sys
import tempfile
from pathlib import Path

from bark_vm.version import version_text
from bark_vm.wire.login import PASS_FILE_MAX, password_of_file
from maned.io.files import overwrites, read_at_most

from . import image, overlay, rootfs
from .steps import BuildError, Clock
from .guest.identity import problem, template

PROG = "maned-machine"
EXAMPLES = """examples:
  sudo maned-machine build --out bark-usb.img          # setup mode: asks at first boot
  sudo maned-machine build --out lab3.img --alias lab-3 --user me --pass-file pass.txt
  maned-machine boot bark-usb.img --uefi --port 4780  # under QEMU, serial console here

environment:
  MANED_MACHINE_CACHE  where the package layer is cached (default /var/cache/maned-machine)"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="The Bark machine: a bootable worker "
                                "image, and QEMU to boot it.", epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=version_text(PROG).rstrip())
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    b = sub.add_parser("build", help="build the stick image (root; minutes cold, seconds "
                       "cached)")
    b.add_argument("--out", required=True, metavar="IMAGE", help="the image to write "
                   "(IMAGE.sha256 beside it)")
    b.add_argument("--alias", help="bake an identity into bark.conf: all of --alias, --user "
                   "and --pass-file, or none (the machine then asks at first boot)")
    b.add_argument("--user")
    b.add_argument("--pass-file", metavar="FILE", help="a file whose first line is the "
                   "password (never on the command line)")
    from .boot import add_arguments
    add_arguments(sub.add_parser("boot", help="boot an image under QEMU, the worker's ports "
                                 "forwarded to 127.0.0.1"))
    return p


def fail(text: str, code: str = "EUSAGE") -> int:
    sys.stderr.write(f"{PROG}: {text} [{code}]\n")
    return 2 if code == "EUSAGE" else 1


def say(text: str) -> None:
    sys.stderr.write(f"{PROG}: {text}\n")
    sys.stderr.flush()


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "build":
            return build(args)
        from .boot import main as boot_main
        return boot_main(args)
    except BuildError as e:
        return fail(str(e), "ERUN")
    except OSError as e:  # the image or a cache folder could not be written
        return fail(f"cannot write {e.filename or 'a file'}: {e.strerror or e}", "ERUN")
    except KeyboardInterrupt:
        sys.stderr.write(f"notice: {PROG} interrupted (SIGINT)\n")
        return 130


def bark_conf(args) -> str:
    """bark.conf's text: the identity given, or the empty template (setup mode)."""
    given = [args.alias, args.user, args.pass_file]
    if not any(given):
        return template()
    if not all(given):
        raise ValueError("--alias, --user and --pass-file go together (or none of them, for "
                         "a setup-mode image that asks at first boot)")
    try:  # a FIFO is refused, not waited on (maned.io.files); the path may be anything
        password = password_of_file(read_at_most(args.pass_file, PASS_FILE_MAX))
    except (OSError, ValueError) as e:
        why = e.strerror if isinstance(e, OSError) else "it is not UTF-8 text" if isinstance(
            e, UnicodeDecodeError) else f"it {e}"
        raise ValueError(f"the --pass-file cannot be read ({why or e})") from None
    identity = {"alias": args.alias, "user": args.user, "password": password}
    why = problem(identity)
    if why:
        raise ValueError(f"the identity cannot run a worker: {why}")
    return template(*identity.values())


def build(args) -> int:
    out = Path(args.out)  # the arguments first, then what the machine lacks
    why = overwrites([(str(out), "--out"), (f"{out}.sha256", "--out's checksum")],
                     [(args.pass_file, "the --pass-file")] if args.pass_file else [])
    if why:
        return fail(f"{why}: give --out another path")
    try:
        conf = bark_conf(args)
    except ValueError as e:
        return fail(str(e))
    if not out.parent.is_dir() or out.is_dir():
        return fail(f"--out {out}: give a file path in an existing folder")
    if os.geteuid() != 0:
        return fail("a build needs root (debootstrap and chroot make the system tree)")
    missing = image.missing_tools()
    if missing:
        return fail(f"a build needs Debian's {', '.join(missing)}: apt-get install "
                    f"{' '.join(missing)}")
    clock = Clock(say)
    layer = rootfs.layer(clock)
    with tempfile.TemporaryDirectory(prefix="bark-build-") as tmp:
        part = Path(tmp) / "overlay.cpio.zst"
        clock.stage("overlay: the worker and the machine's programs")
        overlay.build(part, {"identity": "baked" if args.alias else "setup mode"})
        clock.stage(f"image: the FAT partition, GRUB for BIOS, shim and GRUB for UEFI, into "
                    f"{out}")
        sha = image.write(image.Parts(layer.kernel, layer.archive, part, conf), out)
        used = sum(p.stat().st_size for p in (layer.kernel, layer.archive, part))
    say(f"wrote {out} ({out.stat().st_size >> 20} MiB, {used >> 20} MiB of it kernel and "
        f"system; sha256 {sha[:16]}...) in {clock.elapsed:.0f} s")
    return 0


def console_main() -> None:
    sys.exit(main())
