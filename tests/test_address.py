"""The one reader of a worker's address (maned.devices.parse_address): HOST, HOST:PORT,
[V6], [V6]:PORT, for a device block's host, --device, --probe and a certified worker's URL;
what it refuses it names by part, never quoting more than the port."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from maned.cli import run as run_cli
from maned.devices import BadAddress, parse_address
from maned.devices.discovery import parse_probe
from maned.failures import Refused

from support.cli import run_tool
from support.scripts import H0

CASES = [  # text, (host, port) or the refused part
    ("worker", ("worker", None)),
    ("worker:4780", ("worker", 4780)),
    ("10.0.0.7:1", ("10.0.0.7", 1)),
    ("h:065535", ("h", 65535)),
    ("[::1]", ("::1", None)),
    ("[fe80::1%eth0]:4780", ("fe80::1%eth0", 4780)),
    ("", "host"),
    (":4780", "host"),
    ("[]:4780", "host"),
    ("h:", "port"),
    ("h:0", "port"),
    ("h:65536", "port"),
    ("h:+80", "port"),
    ("h:８０", "port"),
    ("::1", "brackets"),
    ("[::1", "brackets"),
    ("[::1]4780", "brackets"),
    ("a:b:c", "brackets"),
]


@pytest.mark.parametrize("text, expected", CASES)
def test_an_address_is_read_or_refused_by_part(text, expected):
    if isinstance(expected, tuple):
        assert parse_address(text) == expected
    else:
        with pytest.raises(BadAddress) as e:
            parse_address(text)
        assert e.value.part == expected
        assert text not in str(e.value) or not text  # never quoted back


hosts = st.one_of(st.from_regex(r"\A[a-z][a-z0-9.-]{0,30}\Z"),
                  st.ip_addresses(v=4).map(str),
                  st.ip_addresses(v=6).map(lambda a: f"[{a}]"))


@given(hosts, st.one_of(st.none(), st.integers(1, 65535)))
def test_what_is_written_host_and_port_is_read_back(host, port):
    text = host if port is None else f"{host}:{port}"
    assert parse_address(text) == (host.strip("[]"), port)


def test_a_probe_and_a_device_block_refuse_through_the_same_reader(workdir):
    with pytest.raises(Refused, match="bad probe target '::1'"):
        parse_probe("::1")
    assert parse_probe("[::1]:99") == ("::1", 99)
    (workdir / "v6.mnd").write_text(H0 + 'in::a = [1];\ndevice::w { host = "::1:4780"; }\n'
                                    "calc::lambda_flow f(a) @device(w) {\n    a a add r =\n"
                                    "} return r;\n")
    code, _, err = run_tool(run_cli, [str(workdir / "v6.mnd")])
    assert code == 1 and ("device 'w': bad host: an IPv6 address goes in brackets: "
                          "[ADDRESS]:PORT [EPLAN]") in err
