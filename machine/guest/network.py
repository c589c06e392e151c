"""The machine's network at boot: systemd-networkd asks DHCP on every wired NIC (RTL8139,
e1000, virtio, a USB CDC-ECM adapter); this waits for an IPv4 address and says `DHCP: PASS`,
or after DHCP_WAIT_S says `FALLBACK` and puts the documented static address on the first
wired NIC (nothing will find the worker there: discovery needs a network with DHCP)."""
import json
import os
import subprocess
import time

from .consoles import say

DHCP_WAIT_S = 30
FALLBACK_ADDRESS = "169.254.47.80/16"  # link-local: a cable straight to one coordinator
NO_NIC_WAIT_S = 10  # how long the drivers get to show a wired NIC at all


def wired() -> list[str]:
    """The wired NICs (not loopback, not wireless), in name order."""
    names = []
    for name in sorted(os.listdir("/sys/class/net")):
        base = f"/sys/class/net/{name}"
        try:
            with open(f"{base}/type") as f:
                kind = f.read().strip()
        except OSError:
            continue
        if kind == "1" and not os.path.exists(f"{base}/wireless") and os.path.exists(
                f"{base}/device"):
            names.append(name)
    return names


def addresses() -> list[tuple[str, str]]:
    """(NIC, IPv4 address) of every global IPv4 address."""
    out = subprocess.run(["ip", "-j", "-4", "addr", "show", "scope", "global"],
                         capture_output=True, text=True).stdout
    try:
        links = json.loads(out or "[]")
    except ValueError:
        return []
    return [(link["ifname"], a["local"]) for link in links for a in link.get("addr_info", [])]


def main() -> int:
    give_up = time.monotonic() + NO_NIC_WAIT_S
    while not wired() and time.monotonic() < give_up:
        time.sleep(0.2)
    nics = wired()
    if not nics:
        say("DHCP: FAIL (no wired network adapter was found)")
        return 1
    give_up = time.monotonic() + DHCP_WAIT_S
    while time.monotonic() < give_up:
        found = addresses()
        if found:
            say(f"DHCP: PASS ({found[0][0]} {found[0][1]})")
            return 0
        time.sleep(0.2)
    subprocess.run(["ip", "addr", "add", FALLBACK_ADDRESS, "dev", nics[0]])
    subprocess.run(["ip", "link", "set", nics[0], "up"])
    say(f"FALLBACK ({nics[0]} {FALLBACK_ADDRESS.split('/')[0]}: no DHCP answer in "
        f"{DHCP_WAIT_S} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
