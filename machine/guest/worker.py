"""The worker's launcher under systemd (bark-worker.service, restarted when it dies): the
identity setup published (alias and user in identity.json, the password in a root-only
file) becomes bark-worker's environment, and it serves on every address, advertising the
port the host forwards to it, when the host says one (guest/oem.py)."""
import json
import os
import sys

from .identity import IDENTITY, PASS_FILE
from .oem import advertised_port


def main() -> None:
    with open(IDENTITY, encoding="utf-8") as f:
        identity = json.load(f)
    env = {**os.environ, "BARK_ALIAS": identity["alias"], "BARK_USER": identity["user"],
           "BARK_PASS_FILE": PASS_FILE}
    env.pop("BARK_PASS", None)
    port = advertised_port()
    os.execve(sys.executable, [sys.executable, "-m", "bark_vm.server", "serve", "--host",
                               "0.0.0.0"] + (["--advertise-port", str(port)] if port else []),
              env)


if __name__ == "__main__":
    main()
