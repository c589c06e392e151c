"""How a Bark machine can boot under QEMU, one home for the names every command and option
offers (`maned-machine boot`, `maned-certify --boot`, the conformance plugin): the firmware
modes and the accelerators."""
MODES = ("bios", "uefi", "secure")  # BIOS, UEFI (OVMF), UEFI with Secure Boot on
ACCELERATORS = ("auto", "kvm", "tcg")  # auto: KVM only where it really runs a guest


def mode_of(uefi: bool, secure_boot: bool) -> str:
    """The mode the flags `--uefi` and `--secure-boot` ask for (Secure Boot implies UEFI)."""
    return "secure" if secure_boot else "uefi" if uefi else "bios"
