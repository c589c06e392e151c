"""The Bark machine booted under QEMU (issue 25): certified on a BIOS and a UEFI boot with the
container's signature, its boot log lines and faceplate on the serial console, a power cut
mid-job followed by a reboot that serves again, and setup mode answered on the serial
console. Every wait is an event on the serial console or the worker's answer; the guards
(maned_machine.boot.BOOT_DEADLINE_S) only stop a broken boot from hanging the suite."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path
import time

import pytest

from bark_vm.container import docker_client, worker_container, worker_image, worker_process
from maned_conformance import certify
from maned_machine import image as stick
from maned_machine.boot import BOOT_DEADLINE_S as BOOT_S, Machine, accelerator

from machine_constants import ALIAS, USER

pytestmark = pytest.mark.machine

BOOT_LINES = ("DHCP: PASS", "HTTP-LISTEN: PASS", "DISCOVERY-LISTEN: PASS", "BOOT-COMPLETE")


@pytest.fixture(scope="session")
def accel() -> str:
    return accelerator("auto")


@pytest.fixture(scope="session")
def container_signature(tmp_path_factory, password) -> str:
    """The signature of the same certification of the worker in its container (a worker
    process where Docker is absent: the signature is the integers', not the transport's)."""
    out = tmp_path_factory.mktemp("container")
    client = docker_client()
    root = Path(__file__).resolve().parents[2]  # the project, whose Dockerfile builds it
    ctx = (worker_container(client, worker_image(client, root), "ref", USER, password)
           if client else worker_process("ref", USER, password))
    with ctx as w, pytest.MonkeyPatch.context() as mp:
        mp.setenv("BARK_USER", USER)
        mp.setenv("BARK_PASS", password)
        assert certify.main([f"http://{w.host}:{w.port}", "--out", str(out)]) == 0
    return (out / "signature.txt").read_text().strip()


def in_order(text: str, lines) -> bool:
    at = 0
    for line in lines:
        at = text.find(line, at)
        if at < 0:
            return False
    return True


@pytest.mark.parametrize("mode", ["bios", "uefi"])
def test_a_booted_machine_is_certified_with_the_containers_signature(
        mode, stick_copy, password, accel, container_signature, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BARK_USER", USER)
    monkeypatch.setenv("BARK_PASS", password)
    image = stick_copy(ALIAS, USER, password)
    out = tmp_path / "report"
    argv = ["--boot", str(image), "--out", str(out), "--accel", accel,
            "--boot-timeout", str(BOOT_S)] + (["--uefi"] if mode == "uefi" else [])
    assert certify.main(argv) == 0, capsys.readouterr()
    report = json.loads((out / "report.json").read_text())
    assert report["certified"] and report["signature"] == container_signature
    assert report["worker"]["alias"] == ALIAS
    machine = report["worker"]["machine"]
    assert (machine["boot_mode"], machine["accelerator"]) == (mode, accel)
    assert machine["image_sha256"] == certify.file_digest(image)
    serial = (out / "serial.log").read_text(errors="replace")
    assert in_order(serial, BOOT_LINES), serial[-3000:]
    assert f"IDENTITY: PASS (alias {ALIAS}, user {USER})" in serial
    assert re.search(rf"alias +{ALIAS}", serial) and "OPERATIONS" in serial  # the faceplate
    assert ("boot    BIOS" if mode == "bios" else "boot    UEFI, Secure Boot off") in serial
    assert password not in serial
    assert "Machine: image" in (out / "summary.md").read_text()


def _http(port: int, method: str, path: str, body: bytes | None = None,
          token: str | None = None) -> tuple[int, dict]:
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {"X-Maned-Proto": "1"}
    if token:
        headers["X-Maned-Token"] = token
    conn.request(method, path, body=body, headers=headers)
    r = conn.getresponse()
    data = r.read()
    conn.close()
    try:
        return r.status, json.loads(data)
    except ValueError:
        return r.status, {}


def test_a_power_cut_mid_job_then_a_reboot_serves_again(stick_copy, password, accel):
    """A wrong password is refused; a job is running when the power goes (SIGKILL to QEMU,
    nothing flushed); the same stick boots again and serves, its answer exact."""
    from maned import DeviceOverride, run
    from maned.lowering.fixtures import build_fixture
    from maned.io.cli_values import parse_value
    from maned.pipeline.intake import compile_script

    image = stick_copy(ALIAS, USER, password)
    m = Machine(image, "bios", accel).start()
    try:
        assert m.wait_for("BOOT-COMPLETE", BOOT_S), m.serial_text()[-3000:]
        assert _http(m.port, "POST", "/api/auth", json.dumps(
            {"username": USER, "password": password + "x"}).encode())[0] == 401
        status, answer = _http(m.port, "POST", "/api/auth", json.dumps(
            {"username": USER, "password": password}).encode())
        assert status == 200
        checked = compile_script(HEAVY)
        _, mnpk, _, _, _ = build_fixture(checked.program, checked.graphs["heavy"],
                                         [parse_value(SQUARE)], 2)
        status, submitted = _http(m.port, "POST", "/api/execute?mode=async", mnpk,
                                  answer["token"])
        assert status == 202
        assert _http(m.port, "GET", "/api/status")[1]["jobs_running"] == 1
        m.kill()  # the power cut, mid-job
    finally:
        m.discard()
    again = Machine(image, "bios", accel).start()
    try:
        assert again.wait_for("BOOT-COMPLETE", BOOT_S), again.serial_text()[-3000:]
        assert _http(again.port, "GET", "/api/status")[1]["jobs_running"] == 0
        report = run(source=LIGHT, device=DeviceOverride(f"http://127.0.0.1:{again.port}",
                                                         USER, password), verify=True)
        assert report.exit_code == 0 and report.verify.status == "PASS"
    finally:
        again.discard()


N = 96  # a matmul chain long enough to be running when the power goes, under emulation
SQUARE = f"{N}x{N}:" + ",".join(str(i % 7 - 3) for i in range(N * N))
HEAVY = ("mnd::quantmax=1000;\nmnd::quantmin=-1000;\nmnd::quantres=0;\n"
         "calc::lambda_flow heavy(x) {\n" + "".join(
             f"    {'x' if i == 0 else f'p{i - 1}'} x matmul p{i} =\n" for i in range(40))
         + "} return p39;\n")
LIGHT = ("mnd::quantmax=1000;\nmnd::quantmin=-1000;\nmnd::quantres=0;\n"
         "in::x = [[1,2],[3,4]];\ncalc::lambda_flow f(x) {\n    x x matmul y =\n} return y;\n")


class _Screen:
    """What a terminal shows: everything read from a pseudo-terminal's master side."""

    def __init__(self, master: int):
        import threading
        self.master, self.text = master, ""
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # the last writer closed the terminal
                return
            if not chunk:
                return
            self.text += chunk.decode("utf-8", "replace")

    def wait_for(self, text: str, after: int, proc) -> int:
        """The offset just past `text` once the screen shows it past `after`."""
        give_up = time.monotonic() + BOOT_S
        while time.monotonic() < give_up and proc.poll() is None:
            at = self.text.find(text, after)
            if at >= 0:
                return at + len(text)
            time.sleep(0.2)
        raise AssertionError(f"no {text!r} on the terminal: {self.text[-3000:]}")


def test_setup_mode_answered_at_the_terminal_of_maned_machine_boot(stick_copy, tmp_path):
    """Issue 33, points 2 and 4, through `maned-machine boot --accel auto` on a terminal (a
    pseudo-terminal; the accelerator probe runs where /dev/kvm exists): a stick without
    identity, booted by UEFI with Secure Boot on, asks alias, user and the password twice;
    the answers typed at the terminal arrive, the password is never shown (the terminal's
    echo is off at its prompts) nor logged, and is kept in bark.conf. Discovery through the
    forwarded ports gives the forwarded port, so `maned-run devices` lists an address a
    client reaches. Stopped, the machine leaves the terminal as it found it."""
    import fcntl
    import pty
    import signal
    import termios
    from bark_vm.container import free_port
    image = stick_copy()
    secret = "typed-" + str(time.monotonic_ns())
    port, discovery = free_port(), free_port(udp=True)
    master, slave = pty.openpty()
    modes, flags = termios.tcgetattr(slave), fcntl.fcntl(slave, fcntl.F_GETFL)
    proc = subprocess.Popen(
        [sys.executable, "-c", "from maned_machine.cli import console_main; console_main()",
         "boot", str(image), "--secure-boot", "--accel", "auto", "--port", str(port),
         "--discovery-port", str(discovery)], stdin=slave, stdout=slave, stderr=slave)
    screen = _Screen(master)
    try:
        seen = 0  # each prompt is looked for after the previous answer
        for prompt, answer in (("alias: ", "bark-setup"), ("user: ", "owner"),
                               ("password: ", secret), ("password again: ", secret)):
            seen = screen.wait_for(prompt, seen, proc)
            os.write(master, (answer + "\r").encode())  # typed, then Enter
        seen = screen.wait_for("BOOT-COMPLETE", seen, proc)
        assert _http(port, "GET", "/api/status")[1]["alias"] == "bark-setup"
        assert _http(port, "POST", "/api/auth", json.dumps(
            {"username": "owner", "password": secret}).encode())[0] == 200
        listing = subprocess.run(
            [sys.executable, "-c", "from maned.cli.console import maned_run; maned_run()",
             "devices", "--no-broadcast", "--probe", f"127.0.0.1:{discovery}"],
            capture_output=True, text=True, timeout=120)
        assert listing.stdout.splitlines()[1].split()[:3] == [
            "bark-setup", "x86", f"127.0.0.1:{port}"], listing
        screen.wait_for("boot    UEFI, Secure Boot on", seen, proc)  # after BOOT-COMPLETE
        assert "IDENTITY: PASS (alias bark-setup, user owner)" in screen.text
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        try:
            assert termios.tcgetattr(slave) == modes, "the terminal's modes were left changed"
            assert fcntl.fcntl(slave, fcntl.F_GETFL) == flags
        finally:
            os.close(slave)
            os.close(master)
    assert secret not in screen.text, "the password was shown on the terminal"
    kept = stick.read_conf(image)
    assert "alias = bark-setup" in kept and "user = owner" in kept
    assert f"password = {secret}" in kept


def test_the_conformance_plugin_boots_the_machine_as_its_hardware_target(stick_copy, password,
                                                                         accel):
    """`pytest --bark-boot IMAGE`: the session's `hardware` cases run on the booted machine."""
    root = Path(__file__).resolve().parents[2]
    image = stick_copy(ALIAS, USER, password)
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                        str(root / "conformance" / "test_conformance.py"), "--bark-boot",
                        str(image), "--bark-boot-accel", accel, "-k", "hardware and matmul"],
                       capture_output=True, text=True, cwd=root, timeout=2 * BOOT_S,
                       env={**os.environ, "BARK_USER": USER, "BARK_PASS": password})
    ran = re.search(r"(\d+) passed", p.stdout)
    assert p.returncode == 0 and ran and int(ran.group(1)) >= 5, p.stdout[-2000:]
    assert "failed" not in p.stdout and "error" not in p.stdout


def test_certify_boot_of_a_setup_mode_image_says_so_at_its_identity_line(
        stick_copy, accel, tmp_path, monkeypatch, capsys):
    """Issue 33, point 3: `maned-certify --boot` of a stick without identity stops at the
    console's setup-mode line (exit 2, naming the build's identity flags and bark.conf;
    that the wait stops there, not at its deadline, is test_machine_parts'); the report
    keeps the console and QEMU's messages."""
    monkeypatch.setenv("BARK_USER", USER)
    monkeypatch.setenv("BARK_PASS", "unused")
    out = tmp_path / "report"
    assert certify.main(["--boot", str(stick_copy()), "--accel", accel,
                         "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "the image has no identity" in err and "IDENTITY: setup mode" in err, err
    assert "--alias A --user U --pass-file F" in err and "bark.conf" in err
    serial = (out / "serial.log").read_text(errors="replace")
    assert "IDENTITY: setup mode" in serial and "BOOT-COMPLETE" not in serial
    assert (out / "qemu.err").exists()
