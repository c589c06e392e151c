"""What the machine's system is made of: the Debian suite, mirror and packages, and the key
its cached package layer is stored under (a new list or recipe is a new key, never a stale
tree)."""
import hashlib
import json

SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
# The worker's whole world: a kernel, systemd (networkd does DHCP), udev (finds the NIC and
# the stick), Python with Debian's numpy (the executor's), kmod and iproute2.
PACKAGES = ("linux-image-amd64", "systemd", "systemd-sysv", "udev", "python3", "python3-numpy",
            "kmod", "iproute2")
RECIPE = 3  # raise when the layer's recipe (rootfs.py) changes what a tree holds


def layer_key() -> str:
    """The cache key of the package layer: a digest of everything that decides its bytes."""
    text = json.dumps({"suite": SUITE, "mirror": MIRROR, "packages": sorted(PACKAGES),
                       "recipe": RECIPE}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
