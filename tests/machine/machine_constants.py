"""What every machine test shares: the identity it gives its copy of the image, and the
private test network's subnet (never an outside address)."""
ALIAS, USER = "bark-qemu", "certify"
SUBNET = "10.77.0"
