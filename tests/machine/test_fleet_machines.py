"""Two Bark machines on one private network (issue 25): tap devices on a bridge inside a
network namespace this test makes, with a DHCP server on the bridge and never any outside
address. The coordinator, in the same namespace, finds both by broadcast and by --probe
(`maned-run devices`) and runs DESIGN §6's sweep over them as a pool with --verify."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from maned_machine.boot import BOOT_DEADLINE_S, Machine, accelerator

from machine_identity import USER

pytestmark = pytest.mark.machine

SUBNET = "10.77.0"
SWEEP = """mnd::quantmax=100;
mnd::quantmin=-100;
mnd::quantres=2;

in::X = [[100,200],[200,100],[300,500],[400,200],[500,800],[600,300],[0,100],[200,700]];
in::y = [[300],[600],[400],[900],[500],[1200],[200],[0]];

device::fleet { pool = true; user = "USER"; pass = env("FLEET_PASS"); }

calc::ml::linear_regression fit(X, y) @device(fleet) {
    iters: 400,
    lr: [2, 5, 10],
    features: 2
} return m0, l0, m1, l1, m2, l2;
""".replace("USER", USER)


def _ip(*argv: str) -> None:
    subprocess.run(["ip", *argv], check=True, capture_output=True)


@pytest.fixture
def private_network(tmp_path):
    """A namespace with a bridge (10.77.0.1/24, the default route), two taps on it and
    dnsmasq answering DHCP on it; removed, dnsmasq and all, at the end."""
    if shutil.which("dnsmasq") is None:
        pytest.fail("dnsmasq is not installed (apt-get install dnsmasq-base; .ci/machine-setup)")
    ns = f"bark-test-{os.getpid()}"
    _ip("netns", "add", ns)
    dhcp = None
    try:
        inside = ["ip", "netns", "exec", ns]
        for argv in (["link", "set", "lo", "up"], ["link", "add", "br0", "type", "bridge"],
                     ["addr", "add", f"{SUBNET}.1/24", "dev", "br0"],
                     ["link", "set", "br0", "up"], ["route", "add", "default", "dev", "br0"]):
            _ip("-n", ns, *argv)
        for tap in ("tap0", "tap1"):
            _ip("-n", ns, "tuntap", "add", "dev", tap, "mode", "tap")
            _ip("-n", ns, "link", "set", tap, "master", "br0")
            _ip("-n", ns, "link", "set", tap, "up")
        dhcp = subprocess.Popen(inside + [
            "dnsmasq", "--no-daemon", "--conf-file=/dev/null", "--user=root", "--interface=br0",
            "--bind-interfaces", "--port=0", f"--dhcp-range={SUBNET}.10,{SUBNET}.99,1h",
            f"--dhcp-leasefile={tmp_path / 'leases'}"], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        yield ns
    finally:
        if dhcp is not None:
            dhcp.terminate()
            dhcp.wait()
        _ip("netns", "del", ns)


def test_two_machines_are_found_and_run_the_sweep_with_verify(private_network, stick_copy,
                                                              password):
    ns = private_network
    accel = accelerator("auto")
    machines = []
    try:
        for i, alias in enumerate(("bark-a", "bark-b")):
            image = stick_copy(alias, USER, password)
            machines.append(Machine(image, "bios", accel, prefix=["ip", "netns", "exec", ns],
                                    nic=["-nic", f"tap,ifname=tap{i},script=no,downscript=no,"
                                         f"model=rtl8139,mac=52:54:00:77:00:0{i + 1}"]).start())
        for m in machines:
            assert m.wait_for("BOOT-COMPLETE", BOOT_DEADLINE_S), m.serial_text()[-3000:]
        addresses = [re.search(rf"DHCP: PASS \(\S+ ({SUBNET}\.\d+)\)", m.serial_text()).group(1)
                     for m in machines]
        tool = ["ip", "netns", "exec", ns, sys.executable, "-c",
                "import sys; from maned.cli.run import console_main; console_main()"]
        listing = subprocess.run(tool + ["devices", "--timeout", "3000"], capture_output=True,
                                 text=True, timeout=120)
        assert listing.returncode == 0, listing.stderr
        found = {line.split()[0]: line.split()[2] for line in listing.stdout.splitlines()[1:]}
        assert found == {"bark-a": f"{addresses[0]}:4780", "bark-b": f"{addresses[1]}:4780"}
        probed = subprocess.run(tool + ["devices", "--no-broadcast", "--probe", addresses[1]],
                                capture_output=True, text=True, timeout=120)
        assert [ln.split()[0] for ln in probed.stdout.splitlines()[1:]] == ["bark-b"]
        script = machines[0].folder / "sweep.mnd"
        script.write_text(SWEEP)
        run = subprocess.run(tool + [str(script), "--verify"], capture_output=True, text=True,
                             timeout=1800, env={**os.environ, "FLEET_PASS": password})
        assert run.returncode == 0, run.stderr
        assert run.stdout.rstrip().endswith(
            "verify: PASS (compared local interpreter vs routed targets)")
        assert re.search(r"^m0 : ", run.stdout, re.M) and re.search(r"^l2 : ", run.stdout, re.M)
        assert password not in run.stdout + run.stderr
    finally:
        for m in machines:
            m.stop()
