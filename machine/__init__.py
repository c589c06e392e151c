"""The Bark machine (DESIGN §12): a bootable worker image built from Debian packages and the
project's wheel (`maned-machine build`), and booted under QEMU (`maned-machine boot`)."""
