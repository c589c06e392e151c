"""Bark machines on a private network (issue 25): tap devices on a bridge inside a network
namespace the test makes (tests/machine/conftest.py's private_network), never any outside address. Two
machines with a DHCP server on the bridge are found by broadcast and by --probe (`maned-run
devices`) from a coordinator in the same namespace, and run DESIGN §6's sweep as a pool with
--verify; one machine without DHCP falls back to its documented address."""
import os
import re
import subprocess
import sys

import pytest

from maned_machine.boot import BOOT_DEADLINE_S, Machine, accelerator

from machine_constants import SUBNET, USER

pytestmark = pytest.mark.machine

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


def test_two_machines_are_found_and_run_the_sweep_with_verify(private_network, stick_copy,
                                                              password):
    ns = private_network(dhcp=True)
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
                "from maned.cli.console import maned_run; maned_run()"]
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
            m.discard()


def test_without_dhcp_the_machine_falls_back_to_its_documented_address(private_network,
                                                                       stick_copy, password):
    """No DHCP server on its network: after the DHCP wait the console says FALLBACK, the
    worker serves on 169.254.47.80 all the same, and a coordinator on that link reaches it."""
    from maned_machine.guest.network import DHCP_WAIT_S, FALLBACK_ADDRESS
    ns = private_network(dhcp=False)
    image = stick_copy("bark-alone", USER, password)
    m = Machine(image, "bios", accelerator("auto"), prefix=["ip", "netns", "exec", ns],
                nic=["-nic", "tap,ifname=tap0,script=no,downscript=no,model=rtl8139"]).start()
    try:
        assert m.wait_for("BOOT-COMPLETE", BOOT_DEADLINE_S), m.serial_text()[-3000:]
        address = FALLBACK_ADDRESS.split("/")[0]
        assert re.search(rf"FALLBACK \(\S+ {re.escape(address)}: no DHCP answer in "
                         rf"{DHCP_WAIT_S} s\)",
                         m.serial_text())
        assert "DHCP: PASS" not in m.serial_text()
        probed = subprocess.run(
            ["ip", "netns", "exec", ns, sys.executable, "-c",
             "from maned.cli.console import maned_run; maned_run()", "devices",
             "--no-broadcast", "--probe", address], capture_output=True, text=True, timeout=120)
        assert probed.stdout.splitlines()[1].split()[:3] == ["bark-alone", "x86",
                                                             f"{address}:4780"], probed
    finally:
        m.discard()
