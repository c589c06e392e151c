"""The identity every machine test gives its copy of the image."""
ALIAS, USER = "bark-qemu", "certify"
