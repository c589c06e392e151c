"""Booting a stick image under QEMU as a USB stick (BIOS by SeaBIOS, UEFI by OVMF, with or
without Secure Boot), the NIC an RTL8139 on user networking with the worker's ports forwarded
to 127.0.0.1, the serial console captured to a file (and reachable on a socket, for setup
mode). Every QEMU process is started and stopped by its own pid.

The accelerator: `kvm` or `tcg` as asked; `auto` is KVM only when a 512-byte guest booted
under KVM prints on its serial port within ACCEL_PROBE_S (a /dev/kvm that cannot run a guest,
as on these machines, is TCG), else TCG."""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from bark_vm.container import free_port
from bark_vm.wire.constants import DEFAULT_PORT, DISCOVERY_PORT
from maned.io.files import overwrites

from .guest.identity import SETUP_MODE
from .guest.oem import oem_string
from .modes import ACCELERATORS, MODES, mode_of
from .terminal import Terminal

QEMU = "qemu-system-x86_64"
OVMF_CODE = Path("/usr/share/OVMF/OVMF_CODE_4M.fd")
OVMF_VARS = Path("/usr/share/OVMF/OVMF_VARS_4M.fd")
OVMF_SECURE_CODE = Path("/usr/share/OVMF/OVMF_CODE_4M.secboot.fd")
OVMF_SECURE_VARS = Path("/usr/share/OVMF/OVMF_VARS_4M.ms.fd")  # Microsoft's keys enrolled
OVMF_FILES = {"uefi": (OVMF_CODE, OVMF_VARS), "secure": (OVMF_SECURE_CODE, OVMF_SECURE_VARS)}
MEMORY_MIB = 1536  # the system unpacks into RAM (about 200 MB) beside its archive
MEMORY_MIN_MIB, MEMORY_MAX_MIB = 512, 65536  # --memory's bounds
ACCEL_PROBE_S = 10
BOOT_DEADLINE_S = 900.0  # to BOOT-COMPLETE under emulation (TCG) on a loaded machine
# Under TCG the guest gets one CPU: with two, a boot on a loaded host now and then hung for
# good with both vCPUs spinning in udev workers (the kernel's soft-lockup watchdog said so,
# CI 2026-12-02); one CPU costs about 15 s of boot. KVM runs a real guest: two CPUs.
CPUS = {"kvm": 2, "tcg": 1}
HUNG_S = 120  # a CPU the guest kernel reports stuck this long: the boot will not finish
SOFT_LOCKUP = re.compile(r"soft lockup - CPU#\d+ stuck for (\d+)s!.*")
STOP_S = 10
# QEMU dies with whatever started it, even by SIGKILL (util-linux; PR_SET_PDEATHSIG, which
# follows the starting thread: every caller starts machines from its main thread)
DIES_WITH_PARENT = ["setpriv", "--pdeathsig", "KILL"]
SERIAL_LOG, QEMU_ERR = "serial.log", "qemu.err"  # a machine's console and QEMU's messages
QEMU_MISSING = f"{QEMU} is not installed (apt-get install qemu-system-x86 ovmf)"
# mov dx,0x3f8; mov al,'O'; out dx,al; mov al,'K'; out dx,al; cli; hlt; jmp $-2
PROBE_SECTOR = bytes.fromhex("baf803b04feeb04beefaf4ebfd").ljust(510, b"\0") + b"\x55\xaa"


def add_arguments(p) -> None:
    p.add_argument("image", metavar="IMAGE")
    p.add_argument("--uefi", action="store_true", help="boot by UEFI (OVMF), not BIOS")
    p.add_argument("--secure-boot", action="store_true", help="UEFI with Secure Boot on "
                   "(Microsoft's keys enrolled: Debian's signed shim boots)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help="127.0.0.1 port forwarded "
                   f"to the worker's {DEFAULT_PORT} (default {DEFAULT_PORT})")
    p.add_argument("--discovery-port", type=int, default=0, help="127.0.0.1 UDP port "
                   "forwarded to discovery's 4781 (default none)")
    p.add_argument("--accel", choices=ACCELERATORS, default="auto")
    p.add_argument("--serial", metavar="FILE", help="write the serial console here instead "
                   "of this terminal")
    p.add_argument("--memory", type=int, default=MEMORY_MIB, metavar="MIB",
                   help=f"the guest's memory (default {MEMORY_MIB}; {MEMORY_MIN_MIB} to "
                   f"{MEMORY_MAX_MIB})")


def kvm_runs() -> bool:
    """Whether KVM really runs a guest here (a /dev/kvm that cannot is TCG)."""
    return (os.access("/dev/kvm", os.R_OK | os.W_OK) and shutil.which(QEMU) is not None
            and probe_prints_ok("kvm"))


def probe_prints_ok(accel: str, limit_s: float = ACCEL_PROBE_S) -> bool:
    """Whether a 512-byte guest under `accel` prints OK on its serial port in `limit_s`.
    The probe never sees the user's terminal (QEMU on a terminal puts it in raw, non-blocking
    mode and, killed, never puts it back): its serial port is a file, its stdin nothing, and
    it runs in a session of its own."""
    with tempfile.TemporaryDirectory(prefix="bark-probe-") as tmp:
        disk, serial = Path(tmp) / "probe.img", Path(tmp) / "serial.out"
        disk.write_bytes(PROBE_SECTOR)
        probe = subprocess.Popen(  # dies with this process (DIES_WITH_PARENT)
            DIES_WITH_PARENT + [QEMU, "-accel", accel, "-m", "16", "-display", "none",
                                "-serial", f"file:{serial}", "-monitor", "none",
                                "-no-reboot", "-drive", f"format=raw,file={disk}"]
            + (["-cpu", "host"] if accel == "kvm" else []),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)
        give_up = time.monotonic() + limit_s
        try:  # the guest prints OK, then halts for good: done when it has printed
            while probe.poll() is None and time.monotonic() < give_up:
                if b"OK" in _read(serial):
                    break
                time.sleep(0.05)
        finally:
            probe.kill()
            probe.wait()
        return b"OK" in _read(serial)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def accelerator(asked: str) -> str:
    if asked != "auto":
        return asked
    return "kvm" if kvm_runs() else "tcg"


@dataclass
class Machine:
    """One booted image: `start()`, then `serial_text()`, `wait_for(line)`, `type(text)`,
    `stop()` (or `kill()`, a power cut)."""
    image: Path
    mode: str = "bios"
    accel: str = "tcg"
    port: int = 0  # 0: a free port is picked
    discovery_port: int = 0
    memory_mib: int = MEMORY_MIB
    nic: list[str] | None = None  # QEMU -nic arguments instead of user networking
    prefix: list[str] = field(default_factory=list)  # e.g. `ip netns exec NS`, which execs
    folder: Path | None = None  # None: a temporary folder of its own, removed by discard()
    proc: subprocess.Popen | None = None

    def __post_init__(self):
        self._temporary = self.folder is None
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="bark-qemu-"))

    @property
    def serial_log(self) -> Path:
        return self.folder / SERIAL_LOG

    @property
    def qemu_err(self) -> Path:
        """QEMU's own messages (its stderr)."""
        return self.folder / QEMU_ERR

    @property
    def serial_socket(self) -> Path:
        return self.folder / "serial.sock"

    def command(self) -> list[str]:
        if self.mode not in MODES:
            raise ValueError(f"boot mode {self.mode!r}: choose among {', '.join(MODES)}")
        if self.accel not in CPUS:
            raise ValueError(f"accelerator {self.accel!r}: choose among {', '.join(CPUS)} "
                             "(resolve auto with accelerator())")
        cmd = [QEMU, "-accel", self.accel, "-m", str(self.memory_mib),
               "-smp", str(CPUS[self.accel]),
               "-display", "none", "-monitor", "none", "-no-user-config", "-nodefaults",
               "-chardev", f"socket,id=ser0,path={self.serial_socket},server=on,wait=off,"
               f"logfile={self.serial_log}", "-serial", "chardev:ser0",
               "-drive", f"if=none,id=stick,format=raw,file={self.image}",
               "-device", "qemu-xhci,id=xhci", "-device",
               "usb-storage,bus=xhci.0,drive=stick,removable=on,bootindex=0",
               "-device", "usb-kbd,bus=xhci.0"]
        if self.accel == "kvm":
            cmd += ["-cpu", "host"]
        if self.mode == "bios":
            cmd += ["-machine", "pc"]
        else:
            secure = self.mode == "secure"
            code = OVMF_SECURE_CODE if secure else OVMF_CODE
            cmd += ["-machine", "q35,smm=on" if secure else "q35",
                    "-drive", f"if=pflash,format=raw,readonly=on,file={code}",
                    "-drive", f"if=pflash,format=raw,file={self.vars_copy}"]
            if secure:
                cmd += ["-global", "driver=cfi.pflash01,property=secure,value=on"]
        if self.nic is not None:
            cmd += self.nic
        else:
            fwd = f"hostfwd=tcp:127.0.0.1:{self.port}-:{DEFAULT_PORT}"
            if self.discovery_port:
                fwd += f",hostfwd=udp:127.0.0.1:{self.discovery_port}-:{DISCOVERY_PORT}"
            cmd += ["-nic", f"user,model=rtl8139,{fwd}",  # discovery gives the port forwarded
                    "-smbios", f"type=11,value={oem_string(self.port)}"]
        return cmd

    @property
    def vars_copy(self) -> Path:
        """UEFI's variable store for this machine: a copy of OVMF's, made at the first start."""
        return self.folder / "OVMF_VARS.fd"

    def start(self) -> "Machine":
        if self.nic is None and not self.port:
            self.port = free_port()
        if self.mode != "bios" and not self.vars_copy.exists():
            shutil.copyfile(OVMF_SECURE_VARS if self.mode == "secure" else OVMF_VARS,
                            self.vars_copy)
        self.serial_log.unlink(missing_ok=True)
        with open(self.qemu_err, "wb") as err:  # QEMU dies with this process
            self.proc = subprocess.Popen(self.prefix + DIES_WITH_PARENT + self.command(),
                                         stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=err)
        return self

    def serial_text(self) -> str:
        try:
            return self.serial_log.read_bytes().decode("utf-8", "replace")
        except OSError:
            return ""

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def hung(self, text: str | None = None) -> str | None:
        """The guest kernel's line saying a CPU has been stuck HUNG_S or longer, or None
        (in `text`, the serial console read already, or read now)."""
        for m in SOFT_LOCKUP.finditer(self.serial_text() if text is None else text):
            if int(m.group(1)) >= HUNG_S:
                return m.group(0).strip()
        return None

    def wait_for(self, text: str, deadline_s: float, after: int = 0,
                 unless: tuple[str, ...] = ()) -> bool:
        """Whether `text` shows on the serial console (past offset `after`) in time; False
        at once when QEMU has ended, the guest kernel has hung, or a line of `unless` shows
        (past `after`) first."""
        give_up = time.monotonic() + deadline_s
        while time.monotonic() < give_up:
            console = self.serial_text()
            if text in console[after:]:
                return True
            if (not self.running() or self.hung(console)
                    or any(u in console[after:] for u in unless)):
                return text in self.serial_text()[after:]
            time.sleep(0.5)
        return False

    def not_booted(self, deadline_s: float) -> str:
        """Why a wait for BOOT-COMPLETE failed, in words for a report."""
        stuck = self.hung()
        if stuck:
            return f"its kernel hung ({stuck})"
        if SETUP_MODE in self.serial_text():
            return (f"the image has no identity (its console says {SETUP_MODE}, and "
                    "asks for one): build it with maned-machine build --alias A --user U "
                    "--pass-file F, or write alias, user and password into bark.conf on its "
                    "BARK partition")
        if not self.running():
            return f"QEMU ended (exit code {self.proc.returncode}) before BOOT-COMPLETE"
        return f"no BOOT-COMPLETE on the serial console in {deadline_s:g} s"

    def type(self, text: str) -> None:
        """Send `text` to the serial console, as typed on it."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(str(self.serial_socket))
            s.sendall(text.encode())
            time.sleep(0.2)  # let QEMU take it before the connection closes

    def stop(self) -> int | None:
        """Power off: SIGTERM to QEMU's pid, then SIGKILL past STOP_S; its exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def last_error(self) -> str | None:
        """QEMU's own last line on stderr (why it ended, when it failed), or None."""
        try:
            said = self.qemu_err.read_text(errors="replace").strip()
        except OSError:
            return None
        return said.splitlines()[-1][:300] if said else None

    def discard(self) -> None:
        """Stop QEMU, and remove the folder if it is the machine's own temporary one."""
        self.stop()
        if self._temporary:
            shutil.rmtree(self.folder, ignore_errors=True)

    def kill(self) -> None:
        """A power cut: SIGKILL, nothing flushed."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> "Machine":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def cannot_boot(image: Path, port: int, discovery_port: int, memory_mib: int,
                mode: str = "bios") -> str | None:
    """Why QEMU cannot be asked to boot this (checked before it starts: the arguments,
    then what the machine lacks), or None."""
    if not image.is_file():
        return f"{image}: no such image file"
    if not 0 <= port <= 65535 or not 0 <= discovery_port <= 65535:
        return "--port and --discovery-port are 0..65535 (0: a free one, or none for discovery)"
    if not MEMORY_MIN_MIB <= memory_mib <= MEMORY_MAX_MIB:
        return (f"--memory {memory_mib}: give {MEMORY_MIN_MIB} to {MEMORY_MAX_MIB} MiB (the "
                "system unpacks into RAM)")
    if shutil.which(QEMU) is None:
        return QEMU_MISSING
    if mode != "bios" and not all(f.is_file() for f in OVMF_FILES[mode]):
        return "OVMF is not installed (apt-get install ovmf), which a UEFI boot needs"
    if shutil.which(DIES_WITH_PARENT[0]) is None:
        return "setpriv (util-linux) is not installed: without it QEMU would outlive this"
    return None


def _typing(m: Machine, terminal: Terminal) -> None:
    """What is typed on this terminal goes to the serial console, line by line (setup
    mode's questions are answered here); nothing, without a stdin."""
    if sys.stdin is None:
        return
    for line in sys.stdin:
        while m.running() and not m.serial_socket.exists():  # QEMU is still starting
            time.sleep(0.1)
        if not m.running():
            return
        try:
            m.type(line.rstrip("\n") + "\r")
        except OSError:
            return
        terminal.answered()


class Stopped(Exception):
    """SIGTERM or SIGHUP reached `maned-machine boot`: power the machine off, as Ctrl-C."""


_stops: list[str] = []  # the stopping signals met; only the first raises


def _stopped(signum, frame) -> None:
    """SIGTERM or SIGHUP: Stopped, the first time; a second one waits for nothing (the
    machine is being powered off already)."""
    _stops.append(signal.Signals(signum).name)
    if len(_stops) == 1:
        raise Stopped(_stops[0])


def _ignore_stops() -> None:
    """From here on a stop raises nothing (powering off is not cut short)."""
    if not _stops:
        _stops.append("")


def _say(text: str) -> None:
    """A line on stderr, if stderr is still there (a closed terminal, after SIGHUP)."""
    try:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def main(args) -> int:
    """`maned-machine boot`: the machine in the foreground until Ctrl-C, SIGTERM, SIGHUP or
    power-off, QEMU stopped by its pid and its folder removed whichever ends it (QEMU dies
    with this process even when it is killed); exit 1 with QEMU's own last words when it
    ends in failure."""
    mode = mode_of(args.uefi, args.secure_boot)
    why = (args.serial and overwrites([(args.serial, "--serial")], [(args.image, "the image")])
           ) or cannot_boot(Path(args.image), args.port, args.discovery_port, args.memory, mode)
    if why:
        sys.stderr.write(f"maned-machine: {why} [EUSAGE]\n")
        return 2
    try:
        out = open(args.serial, "a", encoding="utf-8") if args.serial else sys.stdout
    except OSError as e:
        sys.stderr.write(f"maned-machine: cannot write --serial {args.serial}: "
                         f"{e.strerror or e} [EUSAGE]\n")
        return 2
    terminal = Terminal(sys.stdin.fileno() if sys.stdin is not None else -1)
    _stops.clear()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _stopped)
    m, shown, said, code = None, 0, None, None
    try:
        accel = accelerator(args.accel)
        m = Machine(Path(args.image), mode, accel, args.port, args.discovery_port, args.memory)
        m.start()
        found = f", discovery on UDP 127.0.0.1:{m.discovery_port}" if m.discovery_port else ""
        print(f"maned-machine: booting {args.image} ({mode}, {accel}); worker on "
              f"http://127.0.0.1:{m.port}{found}, serial console below (Ctrl-C powers off)",
              flush=True)
        threading.Thread(target=_typing, args=(m, terminal), daemon=True).start()
        while m.running():
            text = m.serial_text()
            terminal.follow(text)  # echo off before a password prompt shows
            out.write(text[shown:])
            out.flush()
            shown = len(text)
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    except Stopped as e:
        _say(f"maned-machine: {e}: the machine was powered off")
    finally:
        _ignore_stops()  # powering off is not cut short by a second stop
        if m is not None:
            code, said = m.stop(), m.last_error()
            m.discard()
        terminal.restore()
        if out is not sys.stdout:
            out.close()
    if code not in (0, None, -signal.SIGTERM):
        _say(f"maned-machine: QEMU ended with status {code}: {said or 'no message'} [ERUN]")
        return 1
    return 0
