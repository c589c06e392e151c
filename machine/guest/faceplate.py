"""The machine's console once the worker runs: the boot log lines `HTTP-LISTEN: PASS`
(the worker answers GET /api/status on 4780), `DISCOVERY-LISTEN: PASS` (it answers the
probe on UDP 4781) and `BOOT-COMPLETE`, then the status faceplate: IDENTITY (alias, user,
IP, READY or SERVING (n)), RESOURCES (memory), NODE (CPU model and count), OPERATIONS.
The screen's faceplate is redrawn every second; the serial console gets it again only when
its identity, address or node change, not with every job (so a capture stays readable)."""
import glob
import json
import os
import socket
import time
import urllib.request

from bark_vm.wire.constants import DEFAULT_PORT, DISCOVERY_PORT, DISCOVERY_PROBE, STATUS_PATH

from .consoles import devices, say
from .network import addresses

LISTEN_WAIT_S = 600  # the worker's start under emulation (numpy's import) is slow
HOME_CLEAR = "\x1b[H\x1b[2J"


def status() -> dict | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{DEFAULT_PORT}{STATUS_PATH}",
                                    timeout=2) as r:
            return json.loads(r.read())
    except (OSError, ValueError):
        return None


def discovery_answers() -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(2)
        try:
            s.sendto(DISCOVERY_PROBE, ("127.0.0.1", DISCOVERY_PORT))
            return bool(s.recvfrom(2048)[0])
        except OSError:
            return False


def _wait(check, line: str) -> bool:
    give_up = time.monotonic() + LISTEN_WAIT_S
    while time.monotonic() < give_up:
        if check():
            say(f"{line}: PASS")
            return True
        time.sleep(0.5)
    say(f"{line}: FAIL (no answer in {LISTEN_WAIT_S} s)")
    return False


def node() -> str:
    model, count = "unknown CPU", 0
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and model == "unknown CPU":
                model = line.split(":", 1)[1].strip()
            count += line.startswith("processor")
    return f"{model} x{count}"


def memory() -> str:
    info = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, value = line.split(":", 1)
            info[key] = int(value.split()[0])
    used = info["MemTotal"] - info.get("MemAvailable", info["MemFree"])
    return f"{used * 100 // info['MemTotal']}% of {info['MemTotal'] // 1024} MiB"


def firmware() -> str:
    """How the machine booted: BIOS, or UEFI with Secure Boot on or off (its EFI variable)."""
    if not os.path.isdir("/sys/firmware/efi"):
        return "BIOS"
    found = glob.glob("/sys/firmware/efi/efivars/SecureBoot-*")
    try:
        with open(found[0], "rb") as f:
            on = f.read()[-1:] == b"\x01"
    except (IndexError, OSError):
        on = False
    return f"UEFI, Secure Boot {'on' if on else 'off'}"


def lines(s: dict, ip: str) -> list[str]:
    running = s.get("jobs_running", 0)
    state = f"SERVING ({running})" if running else "READY"
    return ["BARK MACHINE", "",
            "IDENTITY", f"  alias   {s.get('alias', '?')}", f"  user    {_user()}",
            f"  ip      {ip}", f"  status  {state}", "",
            "RESOURCES", f"  memory  {memory()}", "",
            "NODE", f"  cpu     {node()}", f"  boot    {firmware()}", "",
            "OPERATIONS", f"  {len(s.get('ops', []))} ops: {' '.join(s.get('ops', []))}", "",
            f"{DEFAULT_PORT} · {DISCOVERY_PORT}"]


def _user() -> str:
    try:
        with open("/run/bark/identity.json") as f:
            return json.load(f)["user"]
    except (OSError, ValueError, KeyError):
        return "?"


def main() -> int:
    if not (_wait(lambda: status() is not None, "HTTP-LISTEN")
            and _wait(discovery_answers, "DISCOVERY-LISTEN")):
        return 1
    say("BOOT-COMPLETE")
    screens = [d for d in devices() if not d.startswith("/dev/ttyS")]
    serials = [d for d in devices() if d.startswith("/dev/ttyS")]
    last_serial = None
    while True:
        s = status() or {"alias": "?", "ops": []}
        found = addresses()
        face = lines(s, found[0][1] if found else "none")
        if screens:
            say(HOME_CLEAR + "\n".join(face), screens)
        key = [ln for ln in face if not ln.startswith(("  memory", "  status"))]
        if serials and key != last_serial:
            say("\n".join(face), serials)
            last_serial = key
        time.sleep(1)


if __name__ == "__main__":
    raise SystemExit(main())
