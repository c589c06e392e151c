"""What runs inside the Bark machine (Debian's python3 in the guest): the identity and the
network at boot (setup), the worker's launcher, and the console (boot log lines, faceplate)."""
