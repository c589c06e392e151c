"""The Bark machine's parts that need no built image (issue 25): the initramfs archive read
back by the newc rules, the boot sector's fields where GRUB reads them, bark.conf's grammar
and the identity rules (never quoting a password), setup mode on pseudo-terminals, the
build's refusals and progress lines, QEMU's command line; and, where QEMU is here (required
by .ci/run), a real QEMU for the accelerator probe and for stopping a machine. Booting the
image is tests/machine/'s."""
import io
import os
import struct
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from maned_machine import bootsector, cli, cpio, packages
from maned_machine.boot import Machine, PROBE_SECTOR
from maned_machine.guest.identity import parse, problem, template


def read_newc(data: bytes) -> dict[str, tuple[int, bytes]]:
    """name -> (mode, data) of a newc archive, by its rules (a reader of our own)."""
    entries, at = {}, 0
    while True:
        assert data[at:at + 6] == b"070701"
        fields = [int(data[at + 6 + 8 * i: at + 14 + 8 * i], 16) for i in range(13)]
        mode, size, namesize = fields[1], fields[6], fields[11]
        name_at = at + 110
        name = data[name_at:name_at + namesize - 1].decode()
        body_at = name_at + namesize + (-(110 + namesize) % 4)
        if name == cpio.TRAILER:
            return entries
        entries[name] = (mode, data[body_at:body_at + size])
        at = body_at + size + (-size % 4)


def test_the_archive_holds_every_file_link_and_folder_parents_first(tmp_path):
    root = tmp_path / "tree"
    (root / "usr/bin").mkdir(parents=True)
    (root / "usr/bin/python3").write_bytes(b"\x7fELF" + bytes(range(256)))
    (root / "etc").mkdir()
    (root / "etc/hostname").write_text("bark\n")
    (root / "bin").symlink_to("usr/bin")
    (root / "init").symlink_to("/sbin/init")
    (root / "empty").write_bytes(b"")
    out = io.BytesIO()
    count = cpio.write(str(root), out)
    got = read_newc(out.getvalue())
    assert count == len(got) == 8  # usr, usr/bin, etc: folders are entries too
    assert got["usr/bin/python3"][1] == b"\x7fELF" + bytes(range(256))
    assert got["etc/hostname"][1] == b"bark\n" and got["empty"][1] == b""
    assert got["bin"][1] == b"usr/bin" and got["init"][1] == b"/sbin/init"
    names = list(got)
    assert names.index("usr") < names.index("usr/bin") < names.index("usr/bin/python3")
    out2 = io.BytesIO()
    cpio.write(str(root), out2)
    assert out2.getvalue() == out.getvalue()  # the same tree, the same bytes


def test_the_boot_sector_points_grub_at_core_img_and_keeps_one_partition():
    boot_img = bytes(range(256)) * 2
    entry = bootsector.partition_entry(2048, 522240)
    mbr = bootsector.mbr(boot_img, entry)
    assert len(mbr) == 512 and mbr[510:] == b"\x55\xaa"
    assert struct.unpack_from("<Q", mbr, bootsector.KERNEL_SECTOR)[0] == 1
    assert mbr[bootsector.DRIVE_CHECK:bootsector.DRIVE_CHECK + 2] == b"\x90\x90"
    flag, kind, start, sectors = struct.unpack_from("<B3xB3xII", mbr, bootsector.PART_TABLE)
    assert (flag, kind, start, sectors) == (0x80, 0x0C, 2048, 522240)
    assert mbr[bootsector.PART_TABLE + 16:510] == bytes(48)  # the other three entries empty
    untouched = list(range(0, bootsector.KERNEL_SECTOR)) + list(range(0x70, 0x1B8))
    assert all(mbr[i] == boot_img[i] for i in untouched)


def test_core_img_names_the_sectors_after_its_first():
    core = bytearray(1300)
    struct.pack_into("<QHH", core, bootsector.BLOCKLIST, 99, 99, 0x820)
    out = bootsector.core(bytes(core), 2047)
    assert len(out) == 1536  # padded to whole sectors
    assert struct.unpack_from("<QHH", out, bootsector.BLOCKLIST) == (2, 2, 0x820)
    with pytest.raises(ValueError, match="the gap before the partition has 2"):
        bootsector.core(bytes(core), 2)


def test_bark_conf_reads_as_a_user_may_write_it():
    text = "\ufeff# mine\r\nalias = lab-3\r\n\r\nuser=me\r\npassword =  a b c \r\nother = x\r\n"
    assert parse(text) == {"alias": "lab-3", "user": "me", "password": "a b c"}
    assert parse(template("a", "u", "p")) == {"alias": "a", "user": "u", "password": "p"}
    assert problem(parse(template())) == "incomplete: alias, user, password"


@given(st.lists(st.text(max_size=12), min_size=3, max_size=3))
def test_bark_conf_reads_back_exactly_what_was_written_or_says_why_not(values):
    """Issue 34, K6: parse is the exact inverse of template for every value it can keep
    (LF or CRLF line ends alike); what it cannot keep, unkeepable says, and for a password
    problem() refuses it with that reason (in a build and in setup mode alike)."""
    from maned_machine.guest.identity import FIELDS, unkeepable
    text = template(*values)
    for lines in (text, text.replace("\n", "\r\n")):
        back = parse(lines)
        for key, value in zip(FIELDS, values):
            assert (back[key] == value) or unkeepable(value), (key, value, back[key])
    why = problem({"alias": "lab", "user": "me", "password": values[2]})
    if values[2] and unkeepable(values[2]):
        assert why == f"the password cannot be kept in bark.conf as it is: " \
            f"{unkeepable(values[2])}"


KEPT = ["ab\x0ccd", "ab\rcd", "ab\u2028cd", "ab\x85cd", "ab\x0bcd", "ab\x1ccd", "ab\x1dcd",
        "ab\x1ecd", "ab\u2029cd", "tab\tinside", "x#y", "a=b"]
REFUSED = {"  two blanks  ": "it starts or ends with a blank (a space or a tab)",
           "trailing\t": "it starts or ends with a blank (a space or a tab)",
           "ends\r": "it ends with a carriage return",
           "\ufeffbom": "it starts with a byte-order mark (U+FEFF)"}


@pytest.mark.parametrize("password", KEPT + list(REFUSED))
def test_the_passwords_that_came_back_changed_now_come_back_or_are_refused(password):
    """Issue 34, K6: each password of the probe reads back as written, or is refused with
    its reason before it is ever kept (docs/machine.md §3 says which)."""
    why = problem({"alias": "lab", "user": "me", "password": password})
    if password in KEPT:
        assert why is None
        assert parse(template("lab", "me", password))["password"] == password
    else:
        assert why == f"the password cannot be kept in bark.conf as it is: {REFUSED[password]}"


def test_a_bark_conf_that_is_not_utf8_is_setup_mode_with_the_reason():
    """Issue 34, K7: written in cp1252, never read with replacement characters."""
    from maned_machine.guest.identity import read_conf
    raw = template("lab", "me", "pässwörd").encode("cp1252")
    assert read_conf(raw) == ({}, "bark.conf is not UTF-8 text; save it as UTF-8")
    assert read_conf(template("lab", "me", "pässwörd").encode()) == (
        {"alias": "lab", "user": "me", "password": "pässwörd"}, None)


def test_setup_mode_drops_a_console_that_hangs_up_and_keeps_the_others_answer(monkeypatch):
    """Issue 34, K8: two consoles (pseudo-terminals); one hangs up while asking, the answers
    are typed on the other, and its identity is the one kept (the password as typed: a
    form feed at its end is kept, as bark.conf keeps it)."""
    import pty
    import select
    import threading
    from gates import until
    from maned_machine.guest import identity as ident
    pairs = [pty.openpty() for _ in range(2)]
    paths = [os.ttyname(slave) for _, slave in pairs]
    monkeypatch.setattr(ident, "devices", lambda: paths)
    got: list = []
    asker = threading.Thread(target=lambda: got.append(ident.ask()), daemon=True)
    asker.start()
    fds = [fd for pair in pairs for fd in pair]

    def shown(master: int, prompt: bytes) -> None:
        """Read the console until it asks `prompt` (the hang guard bounds the wait)."""
        seen = [b""]

        def arrived() -> bool:
            if select.select([master], [], [], 0.1)[0]:
                seen[0] += os.read(master, 4096)
            return prompt in seen[0]
        until(arrived, f"{prompt!r} on the console")
    try:
        for master, _ in pairs:
            shown(master, b"alias: ")  # both consoles are asking ...
        os.close(pairs[0][0])  # ... when the first one hangs up
        fds.remove(pairs[0][0])
        for answer, prompt in (("lab-2", b"user: "), ("me", b"password: "),
                               ("ends\x0c", b"again: "), ("ends\x0c", None)):
            os.write(pairs[1][0], (answer + "\r").encode())
            if prompt:
                shown(pairs[1][0], prompt)
        asker.join(timeout=30)
        assert got == [{"alias": "lab-2", "user": "me", "password": "ends\x0c"}]
    finally:
        for fd in fds:
            os.close(fd)


@pytest.mark.parametrize("identity, why", [
    ({"alias": "3lab", "user": "me", "password": "p"}, "is not one a script can name"),
    ({"alias": "lab", "user": "m e", "password": "p"}, "without spaces"),
    ({"alias": "lab", "user": "me", "password": "é" * 700}, "too long for a login"),
    ({"alias": "lab", "user": "me"}, "incomplete: password"),
])
def test_an_identity_that_cannot_run_a_worker_says_why(identity, why):
    assert why in problem(identity)


@given(st.text(min_size=1, max_size=60))
def test_no_identity_problem_quotes_the_password(password):
    for alias in ("lab", "3x", ""):
        why = problem({"alias": alias, "user": "me", "password": "Zq" + password}) or ""
        assert "Zq" + password not in why


def test_a_build_refuses_a_partial_identity_and_reads_the_password_from_a_file(tmp_path,
                                                                               capsys):
    assert cli.main(["build", "--out", str(tmp_path / "x.img"), "--alias", "lab"]) == 2
    assert "go together" in capsys.readouterr().err
    pw = tmp_path / "pw"
    pw.write_bytes(b"\xef\xbb\xbfsecret-1\r\nsecond line\n")

    class Args:
        alias, user, pass_file = "lab-3", "me", str(pw)
    assert parse(cli.bark_conf(Args)) == {"alias": "lab-3", "user": "me",
                                          "password": "secret-1"}
    Args.alias = "3lab"
    with pytest.raises(ValueError, match="not one a script can name"):
        cli.bark_conf(Args)


@pytest.mark.skipif(os.geteuid() == 0, reason="checks the refusal a non-root user gets")
def test_a_build_without_root_is_refused(tmp_path, capsys):
    assert cli.main(["build", "--out", str(tmp_path / "x.img")]) == 2
    assert "needs root" in capsys.readouterr().err


def test_a_long_build_says_each_stage_with_its_elapsed_time(monkeypatch):
    """Issue 33, point 7: a build step's output is read as it comes; each new stage of it is
    one line with the seconds since the build began, a stage that lasts is said again
    (HEARTBEAT_S, 0 here), and a failure keeps the tail of what the step printed."""
    import re
    import sys
    from maned_machine import rootfs, steps
    said: list[str] = []
    clock = steps.Clock(said.append)
    lines = ["I: Retrieving InRelease", "I: Validating adduser 3.134", "I: Retrieving libc6",
             "I: Extracting adduser...", "I: Installing core packages...",
             "I: Unpacking required packages...", "I: Configuring libc6...",
             "I: Base system installed successfully."]
    fake = [sys.executable, "-c", f"print({chr(10).join(lines)!r})"]
    steps.run(fake, "debootstrap bookworm", clock, rootfs.debootstrap_stage)
    assert all(re.fullmatch(r"\[ {0,3}\d+ s\] debootstrap bookworm: .+", s) for s in said), said
    assert [s.split(": ", 1)[1] for s in said] == [
        "downloading and checking packages", "extracting packages",
        "installing the core packages", "unpacking packages", "configuring packages",
        "base system installed"]
    said.clear()
    monkeypatch.setattr(steps, "HEARTBEAT_S", 0)
    steps.run(fake, "debootstrap bookworm", clock, rootfs.debootstrap_stage)
    assert "debootstrap bookworm: still downloading and checking packages" in [
        s.split("] ", 1)[1] for s in said], said
    with pytest.raises(steps.BuildError, match=r"^mkfs failed \(exit 3\): one \| two$"):
        steps.run([sys.executable, "-c", "print('one'); print('two'); exit(3)"], "mkfs")


def test_the_package_layer_key_follows_the_package_list(monkeypatch):
    key = packages.layer_key()
    monkeypatch.setattr(packages, "PACKAGES", packages.PACKAGES + ("htop",))
    assert packages.layer_key() != key
    monkeypatch.undo()
    assert packages.layer_key() == key


@pytest.mark.parametrize("mode, present, absent", [
    ("bios", ["-machine", "pc"], ["if=pflash"]),
    ("uefi", ["-machine", "q35"], ["secure,value=on"]),
    ("secure", ["-machine", "q35,smm=on"], []),
])
def test_qemu_boots_the_image_as_a_usb_stick_with_an_rtl8139(tmp_path, mode, present, absent):
    m = Machine(Path("stick.img"), mode, "tcg", port=4999, folder=tmp_path)
    cmd = " ".join(m.command())
    assert "usb-storage,bus=xhci.0,drive=stick,removable=on,bootindex=0" in cmd
    assert "user,model=rtl8139,hostfwd=tcp:127.0.0.1:4999-:4780" in cmd
    assert "-smbios type=11,value=bark.advertise-port=4999" in cmd  # discovery gives 4999
    assert " ".join(present) in cmd and not any(a in cmd for a in absent)
    if mode == "secure":
        assert "OVMF_CODE_4M.secboot.fd" in cmd and "property=secure,value=on" in cmd


@pytest.mark.parametrize("accel, cpus", [("tcg", "1"), ("kvm", "2")])
def test_an_emulated_guest_gets_one_cpu_and_a_kvm_guest_two(tmp_path, accel, cpus):
    cmd = Machine(Path("stick.img"), "bios", accel, port=4999, folder=tmp_path).command()
    assert cmd[cmd.index("-smp") + 1] == cpus
    with pytest.raises(ValueError, match="accelerator 'auto': choose among kvm, tcg"):
        Machine(Path("stick.img"), "bios", "auto", folder=tmp_path).command()


def test_a_wait_for_the_boot_ends_when_the_guest_kernel_says_a_cpu_is_stuck(tmp_path):
    """A running process stands in for QEMU (its console is the log file): a CPU stuck
    under HUNG_S is waited through; stuck HUNG_S or longer ends the wait, saying why."""
    import subprocess
    import threading
    from maned_machine.boot import HUNG_S
    m = Machine(Path("stick.img"), "bios", "tcg", folder=tmp_path)
    m.proc = subprocess.Popen(["sleep", "600"])
    try:
        stuck = "[ %d.5] watchdog: BUG: soft lockup - CPU#1 stuck for %ds! [(udev-worker):135]\n"
        m.serial_log.write_text(stuck % (40, 23))
        assert m.hung() is None
        result = []
        waiting = threading.Thread(target=lambda: result.append(
            m.wait_for("BOOT-COMPLETE", 10_000)), daemon=True)
        waiting.start()
        with m.serial_log.open("a") as log:
            log.write(stuck % (200, HUNG_S))
        waiting.join(600)  # a guard only: the wait ends within a poll of the line
        assert result == [False] and m.running()
        assert m.not_booted(10_000) == (f"its kernel hung (soft lockup - CPU#1 stuck for "
                                        f"{HUNG_S}s! [(udev-worker):135])")
    finally:
        m.kill()
    m.serial_log.write_text("")
    assert m.not_booted(1) == "QEMU ended (exit code -9) before BOOT-COMPLETE"


def test_a_wait_for_the_boot_ends_at_a_line_it_is_told_to_stop_at(tmp_path):
    """Issue 33, point 3: the wait `maned-certify --boot` makes stops at the console's
    setup-mode line, however long its deadline (here 10,000 s: only the early stop ends it
    within the guard), and says why."""
    import subprocess
    import threading
    from maned_machine.guest.identity import SETUP_MODE
    m = Machine(Path("stick.img"), "bios", "tcg", folder=tmp_path)
    m.proc = subprocess.Popen(["sleep", "600"])
    try:
        m.serial_log.write_text("IDENTITY: checking bark.conf\n")
        result = []
        waiting = threading.Thread(target=lambda: result.append(
            m.wait_for("BOOT-COMPLETE", 10_000, unless=(SETUP_MODE,))), daemon=True)
        waiting.start()
        with m.serial_log.open("a") as log:
            log.write(f"{SETUP_MODE} (incomplete): answer on this console\n")
        waiting.join(600)  # a guard only: the wait ends within a poll of the line
        assert result == [False] and m.running()
        assert m.not_booted(10_000).startswith("the image has no identity")
    finally:
        m.kill()


def test_the_kvm_probe_is_a_boot_sector_that_prints_ok():
    assert len(PROBE_SECTOR) == 512 and PROBE_SECTOR.endswith(b"\x55\xaa")
    assert PROBE_SECTOR[:3] == b"\xba\xf8\x03"  # mov dx, 0x3f8: the first serial port


def _oem_entry(folder: Path, index: int, *texts: str) -> None:
    """An SMBIOS type-11 structure as the kernel shows it: type, length 5, handle, count,
    then the strings, each NUL-terminated, and an empty one."""
    entry = folder / f"11-{index}"
    entry.mkdir(parents=True)
    strings = b"".join(t.encode() + b"\0" for t in texts) + b"\0"
    (entry / "raw").write_bytes(bytes([11, 5, index, 0, len(texts)]) + strings)


@given(port=st.integers(1, 65535), before=st.lists(st.text("abc=.-_ 09", min_size=1,
                                                           max_size=12), max_size=3))
def test_the_guest_reads_the_port_its_host_forwards_from_the_oem_strings(port, before):
    """Issue 33, point 4: the host's `-smbios type=11` string gives the guest the port to
    advertise, among any other OEM strings a firmware has; none, or a bad one, is None."""
    import tempfile
    from maned_machine.guest.oem import advertised_port, oem_string
    with tempfile.TemporaryDirectory() as tmp:
        entries = Path(tmp)
        assert advertised_port(str(entries)) is None  # a laptop: no OEM string of ours
        _oem_entry(entries, 0, *before)
        _oem_entry(entries, 1, *before, "bark.advertise-port=0", "bark.advertise-port=x")
        assert advertised_port(str(entries)) is None
        _oem_entry(entries, 2, *before, oem_string(port))
        assert advertised_port(str(entries)) == port


def test_the_kvm_probe_leaves_the_users_terminal_as_it_was(tmp_path):
    """Issue 33, point 2: the accelerator probe runs a real QEMU (under TCG here, the probe
    sector prints OK) with the user's terminal as stdin; the terminal's modes and its
    blocking mode are untouched, and the probe heard the guest."""
    import fcntl
    import pty
    import subprocess
    import sys
    import termios
    from gates import HANG_GUARD_S
    _needs_qemu()
    master, slave = pty.openpty()
    try:
        modes, flags = termios.tcgetattr(slave), fcntl.fcntl(slave, fcntl.F_GETFL)
        probe = subprocess.run(
            [sys.executable, "-c", "from maned_machine.boot import kvm_runs, probe_prints_ok; "
             f"print(probe_prints_ok('tcg', {HANG_GUARD_S}), kvm_runs())"],
            stdin=slave, capture_output=True, text=True, timeout=3 * HANG_GUARD_S)
        assert probe.returncode == 0, probe.stderr
        assert probe.stdout.split()[0] == "True", probe  # the probe sector ran, and said OK
        assert termios.tcgetattr(slave) == modes
        assert fcntl.fcntl(slave, fcntl.F_GETFL) == flags
    finally:
        os.close(master)
        os.close(slave)


def test_the_boot_terminal_hides_a_typed_password_and_is_put_back_as_it_was():
    """`maned-machine boot`'s terminal: echo off once the console's last words ask a
    password (either prompt), and on again only when its answer has been sent, whatever the
    guest prints meanwhile (a start job's line); whatever happened to the terminal (raw,
    non-blocking), restore() gives back the modes and flags it had."""
    import fcntl
    import pty
    import termios
    import tty
    from maned_machine.terminal import PASSWORD_PROMPTS, Terminal
    master, slave = pty.openpty()
    try:
        modes, flags = termios.tcgetattr(slave), fcntl.fcntl(slave, fcntl.F_GETFL)
        echoing = lambda: bool(termios.tcgetattr(slave)[3] & termios.ECHO)  # noqa: E731
        terminal = Terminal(slave)
        assert PASSWORD_PROMPTS == ("password: ", "password again: ")
        console = ""
        for shown, answered, echo in (
                ("alias: ", False, True), ("lab\r\nuser: ", False, True),
                ("me\r\npassword: ", False, False),
                ("\r\n[ ** ] A start job is running for bark-setup\r\n", False, False),
                ("", True, True),  # the answer sent: the prompt is no longer last
                ("password again: ", False, False),  # a new prompt: off again
                ("", False, False),
                ("", True, False),  # answered, but a password prompt is still last ...
                ("\r\nIDENTITY: PASS\r\n", False, True)):  # ... until it is not
            console += shown
            if answered:
                terminal.answered()
            terminal.follow(console)
            assert echoing() == echo, (console, answered)
        tty.setraw(slave)
        fcntl.fcntl(slave, fcntl.F_SETFL, flags | os.O_NONBLOCK)
        terminal.restore()
        assert termios.tcgetattr(slave) == modes
        assert fcntl.fcntl(slave, fcntl.F_GETFL) == flags
    finally:
        os.close(master)
        os.close(slave)


def test_bad_machine_arguments_are_one_coded_line(tmp_path, capsys):
    """A missing image, an unwritable --out, a FIFO given as --pass-file (refused, never
    waited on) and a password file that is no UTF-8 are each exit 2 and one EUSAGE line."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    binary = tmp_path / "binary"
    binary.write_bytes(b"\xff\xfe secret\n")
    identity = ["--alias", "lab", "--user", "me"]
    cases = [
        (["boot", str(tmp_path / "none.img")], ""),
        (["build", "--out", str(tmp_path / "no" / "such" / "x.img")], "an existing folder"),
        (["build", "--out", str(tmp_path / "x.img"), *identity, "--pass-file", str(fifo)],
         "FIFO"),
        (["build", "--out", str(tmp_path / "x.img"), *identity, "--pass-file", str(binary)],
         "not UTF-8"),
        # issue 34, K2 and K5: an output that is an input, refused before anything is done
        (["build", "--out", str(binary), *identity, "--pass-file", str(binary)],
         f"--out '{binary}' is the --pass-file: writing it would replace it"),
        (["build", "--out", str(tmp_path / "p"), *identity, "--pass-file",
          str(tmp_path / "p.sha256")], "--out's checksum"),
        (["boot", str(binary), "--serial", str(binary)],
         f"--serial '{binary}' is the image: writing it would replace it"),
        (["boot", str(binary), "--memory", "65537"], "give 512 to 65536 MiB"),
    ]
    for argv, why in cases:
        assert cli.main(argv) == 2, argv
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and err.endswith("[EUSAGE]\n") and why in err, err
        assert "secret" not in err
    assert binary.read_bytes() == b"\xff\xfe secret\n"  # the inputs are as they were


def test_certify_refuses_a_boot_image_that_is_not_there(tmp_path, capsys, monkeypatch):
    from maned_conformance import certify
    monkeypatch.setenv("BARK_USER", "me")
    monkeypatch.setenv("BARK_PASS", "pw")
    assert certify.main(["--boot", str(tmp_path / "none.img"), "--out",
                         str(tmp_path / "r")]) == 2
    assert capsys.readouterr().err.endswith("[EUSAGE]\n")
    image = tmp_path / "serial.log"  # issue 34: the image is a file the report would write
    image.write_bytes(b"an image")
    assert certify.main(["--boot", str(image), "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.endswith(
        f"the report's serial.log '{image}' is the --boot image: writing it would replace it: "
        "give --out another folder [EUSAGE]\n")
    assert image.read_bytes() == b"an image"


# --- stopping a machine stops its QEMU (issue 33, point 1) ----------------------------------
def _needs_qemu() -> None:
    """QEMU, or a skip that says so (a failure where .ci/run requires the machine tools)."""
    from support.machine_tools import missing, qemu_missing
    missing(qemu_missing())


def _qemu_of(pid: int) -> int | None:
    from support.processes import children
    for child in children(pid):
        try:
            if Path(f"/proc/{child}/comm").read_text().startswith("qemu"):
                return child
        except OSError:
            pass
    return None


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP", "SIGINT", "SIGKILL",
                                 "SIGTERM+SIGTERM+SIGHUP"])
def test_stopping_maned_machine_stops_its_qemu(tmp_path, sig):
    """`maned-machine boot` ended by each signal (SIGKILL: its parent gone for good): no QEMU
    is left running, and but for SIGKILL its temporary folder is gone too. The image is a
    blank disk: QEMU runs, nothing boots, which is all a stop needs. Several stops at once
    power it off once, with no traceback."""
    import signal
    import sys
    from gates import until
    from support.processes import gone, kill, start
    from support.signals import default_sigint
    _needs_qemu()
    image = tmp_path / "blank.img"
    image.write_bytes(bytes(1 << 20))
    proc = start([sys.executable, "-c", "from maned_machine.cli import console_main; "
                  "console_main()"], "boot", image, "--accel", "tcg",
                 preexec_fn=default_sigint)
    qemu = None
    try:
        until(lambda: _qemu_of(proc.pid) or proc.poll() is not None, "QEMU started")
        qemu = _qemu_of(proc.pid)
        assert qemu, proc.communicate()
        cmdline = Path(f"/proc/{qemu}/cmdline").read_bytes().decode().split("\0")
        log = next(a for a in cmdline if "logfile=" in a).partition("logfile=")[2]
        folder = Path(log.split(",")[0]).parent
        for one in sig.split("+"):  # several: a stop while stopping waits for nothing
            proc.send_signal(getattr(signal, one))
        _, err = proc.communicate(timeout=60)
        assert "Traceback" not in err, err
        assert gone(qemu), f"QEMU {qemu} outlived maned-machine ({sig})"
        assert folder.exists() == (sig == "SIGKILL"), folder
    finally:  # a stop that failed: stopped here, and only what still runs (a pid reaped
        if proc.poll() is None:  # may already be another process's)
            proc.kill()
        proc.wait(timeout=10)
        if qemu and not gone(qemu, 0):
            kill(qemu)
    if sig == "SIGKILL":
        import shutil
        shutil.rmtree(folder, ignore_errors=True)
