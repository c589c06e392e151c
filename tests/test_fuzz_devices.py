"""Fuzz of `--device` strings (issue 24): generated and mutated device URLs, with and without
credentials, through the command line and the plan's checks (maned.cli.args, maned's
DeviceOverride and remote_of). Each ends in a network target with a host a connection can
be asked for and a port of 1..65535, or in one coded EUSAGE/EPLAN line that never shows the
planted secret; never another exception. Counts and the long mode are tests/fuzzing.py's."""
import random

import pytest

from maned.cli.args import parse_args
from maned.diagnostics import MnError
from maned.devices.specs import host_problem, remote_of

from fuzzing import cases, deadline, mutate_bytes

pytestmark = pytest.mark.fuzz

SECRET = "Sekr3tPw"
SCHEMES = ["", "http://", "https://", "HTTP://", "ftp://", "http:/"]
USERINFO = ["", f"u:{SECRET}@", f"{SECRET}@", f"u:{SECRET}:x@", "@", "u@"]
HOSTS = ["127.0.0.1", "localhost", "worker-1.lan", "a" * 63 + ".lan", "a" * 64 + ".lan",
         "a..b", ".x", "x.", "", "bücher.de", "[::1]", "10.0.0.256", "h_1", "exa mple",
         "b" * 300, "x" * 40 + "." + "y" * 64, "\u00b2", "local", "u"]
PORTS = ["", ":4780", ":1", ":65535", ":0", ":65536", ":99999", f":{SECRET}", ":-1",
         ":\u00b2", ":", ":4780:1", ":" + "9" * 5000]
TAILS = ["", "/", "/api", "?x=1", " "]


def generated(rng: random.Random) -> str:
    text = (rng.choice(SCHEMES) + rng.choice(USERINFO) + rng.choice(HOSTS) + rng.choice(PORTS)
            + rng.choice(TAILS))
    if rng.random() < 0.3:  # a byte-level mutation, read back as the shell would pass it
        text = mutate_bytes(text.encode("utf-8"), rng).decode("utf-8", "surrogateescape")
    return text


def outcome(url: str) -> str:
    """What the plan makes of `--device URL`: "remote", "local", or the refusal's code."""
    try:
        opts = parse_args(["x.mnd", "--device", url])
        spec = opts.device.spec(environ={})
        if spec.kind == "vm":
            return "local"
        remote = remote_of(spec, environ={})
    except MnError as e:
        for d in e.diagnostics:
            assert d.code in ("EUSAGE", "EPLAN"), d
            assert SECRET not in d.message, f"{url!r} shown: {d.message}"
        return e.diagnostics[0].code
    assert remote.host and host_problem(remote.host) is None and 1 <= remote.port <= 65535
    return "remote"


def test_device_strings_end_in_a_target_or_one_coded_line_without_the_secret():
    rng = random.Random(2424)
    seen = set()
    for n in cases("--device strings", 3000):
        url = generated(rng)
        try:
            with deadline():
                seen.add(outcome(url))
        except AssertionError:
            raise
        except Exception as e:
            pytest.fail(f"--device case {n} {url!r} raised {type(e).__name__}: {e}")
    assert seen >= {"remote", "EPLAN"}  # both ends were reached: the generator is no stub
