"""What the host says to the guest in SMBIOS OEM strings (type 11: QEMU's `-smbios
type=11,value=...`, read at /sys/firmware/dmi/entries/11-*/raw): the port a client reaches the
worker at, when the host forwards one of its own to the guest's. A laptop's firmware has
none of ours, and the worker then advertises the port it listens on."""
import glob

ADVERTISE_PORT = "bark.advertise-port"
ENTRIES = "/sys/firmware/dmi/entries"


def oem_string(port: int) -> str:
    """The OEM string the host gives for `port` (QEMU's `-smbios type=11,value=` text)."""
    return f"{ADVERTISE_PORT}={port}"


def strings(entries: str = ENTRIES) -> list[str]:
    """Every OEM string of every type-11 structure: past its formatted area (its length is
    byte 1), NUL-terminated strings up to an empty one."""
    found = []
    for path in sorted(glob.glob(f"{entries}/11-*/raw")):
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except OSError:
            continue
        if len(raw) < 2:
            continue
        for text in raw[raw[1]:].split(b"\0"):
            if not text:
                break
            found.append(text.decode("ascii", "replace"))
    return found


def advertised_port(entries: str = ENTRIES) -> int | None:
    """The port of the host's `bark.advertise-port=N` string, or None (none, or not 1..65535)."""
    for text in strings(entries):
        key, _, value = text.partition("=")
        if key == ADVERTISE_PORT and value.isdigit() and len(value) <= 5 and (
                1 <= int(value) <= 65535):
            return int(value)
    return None
