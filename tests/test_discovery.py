"""UDP discovery (issue 14, Build 1; spec/wire.md §3.8): real bark-workers answer unicast
probes on loopback (each on a free port of its own, never by broadcast), `maned-run devices`
lists them, a hostile responder breaks nothing, and `discover = true` blocks bind to the
worker that reports their alias. Issue 24: an alias two workers claim is refused before
anything is sent (point 6), a broadcast that cannot be sent costs the unicast probes
nothing (point 7), and a worker answers only the exact probe (point 8)."""
import json
import socket
import subprocess
import sys
import threading

import pytest

from bark_vm.container import free_port, worker_process
from bark_vm.wire.constants import DISCOVERY_PROBE
from maned.cli import run as run_cli

from support.cli import EXAMPLES, SEED_SWEEP_NOTE, run_tool
from support.discovery import GOOD, HOSTILE, answered
from support.scripts import device, env, sweep_with
from support.status import status_of
from support.workers import LONG_WINDOW_MS, probes, refusal

PASSWORD = "disc-pass-5e2a"
PASS = "verify: PASS (compared local interpreter vs routed targets)\n"
NOBODY = free_port()  # vm2 advertises this port, where nothing listens


@pytest.fixture(scope="module")
def pair():
    ports = free_port(udp=True), free_port(udp=True)
    with worker_process("vm1", "test", PASSWORD, ("--discovery-port", str(ports[0]))) as a, \
            worker_process("vm2", "test", PASSWORD, ("--discovery-port", str(ports[1]),
                                                     "--advertise-port", str(NOBODY))) as b:
        yield (a, ports[0]), (b, ports[1])


def ops_of(worker) -> str:
    return ",".join(status_of(worker)["ops"])


def test_two_workers_answer_unicast_probes(pair):
    (a, pa), (b, pb) = pair
    code, out, err = run_tool(run_cli, ["devices", *probes(pa, pb), "--timeout",
                                        LONG_WINDOW_MS])
    assert (code, err) == (0, "")
    width = len(f"127.0.0.1:{a.port}")
    assert out.splitlines() == [
        "ALIAS  KIND  " + "ADDRESS".ljust(width) + "  BUSY  OPS",
        f"vm1    x86   127.0.0.1:{a.port}  no    {ops_of(a)}",
        "vm2    x86   " + f"127.0.0.1:{NOBODY}".ljust(width) + f"  no    {ops_of(b)}"]


class Liar:
    """A UDP responder that answers each probe with every datagram of `replies`."""

    def __init__(self, replies: list[bytes]):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port, self.replies, self.probed = self.sock.getsockname()[1], replies, []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                data, peer = self.sock.recvfrom(64)
            except OSError:
                return
            self.probed.append(data)
            for r in self.replies:
                self.sock.sendto(r, peer)


def test_a_hostile_responder_breaks_nothing(pair):
    """Malformed, oversized and partial replies are skipped (they arrive first); the real
    worker and the one well-formed lie are listed, the lie at its source address."""
    (a, pa), _ = pair
    liar = Liar(HOSTILE + [json.dumps(GOOD).encode()])
    try:
        code, out, err = run_tool(run_cli, ["devices", *probes(pa, liar.port), "--timeout",
                                            LONG_WINDOW_MS])
    finally:
        liar.sock.close()
    assert (code, err) == (0, "")
    assert liar.probed == [DISCOVERY_PROBE]
    rows = [line.split() for line in out.splitlines()[1:]]
    assert rows == [["liar", "fake", "127.0.0.1:4242", "yes", "add"],
                    ["vm1", "x86", f"127.0.0.1:{a.port}", "no", ops_of(a)]]


def test_nobody_answering_is_no_devices_found():
    """The line says what was probed and why a worker may not have heard (issue 23, 4)."""
    silent = free_port(udp=True)
    assert run_tool(run_cli, ["devices", *probes(silent), "--timeout", "200"]) == (
        0, f"no devices found (probed 127.0.0.1:{silent} for 200 ms; a worker answers "
        "discovery on the address it serves, 127.0.0.1 unless started with --host, so a LAN "
        "broadcast reaches only workers started with --host 0.0.0.0 or their own address: "
        "try --probe HOST)\n", "")


@pytest.mark.parametrize("argv, line", [
    (["--probe", "no-such-host.invalid"], "error: maned-run devices: probe target "
     "'no-such-host.invalid' does not resolve: "),
    (["--probe", "127.0.0.1:99999"], "error: maned-run devices: bad probe target "
     "'127.0.0.1:99999': give HOST or HOST:PORT (port 1..65535) [EUSAGE]"),
    (["--timeout", "soon"], "error: --timeout takes a whole number of milliseconds, 1 to "
     "60000, not 'soon' [EUSAGE]"),
    (["--probe"], "error: --probe needs a value [EUSAGE]"),
    (["--bogus"], "error: maned-run devices: unknown argument: --bogus (see maned-run devices "
     "--help) [EUSAGE]"),
])
def test_a_bad_flag_or_target_is_exit_2(argv, line):
    code, out, err = run_tool(run_cli, ["devices", "--no-broadcast", *argv])
    assert (code, out) == (2, "") and err.startswith(line) and err.endswith("[EUSAGE]\n")


def _unicast_probe(port: int) -> list[dict]:
    """The replies one probe to 127.0.0.1:port gets within a second."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(1.0)
        s.sendto(DISCOVERY_PROBE, ("127.0.0.1", port))
        replies = []
        try:
            while True:
                replies.append(json.loads(s.recvfrom(2048)[0]))
        except socket.timeout:
            return replies


def test_two_workers_on_one_host_share_the_discovery_port_and_both_serve():
    """Issue 23, point 4: the second worker no longer exits because the UDP port is taken;
    both serve jobs, and a unicast probe is answered (by one of them: docs/fleet.md)."""
    shared = str(free_port(udp=True))
    with worker_process("rex", "u", "p", ("--discovery-port", shared)) as rex, \
            worker_process("bob", "u", "p", ("--discovery-port", shared)) as bob:
        assert (status_of(rex, 10)["alias"], status_of(bob, 10)["alias"]) == ("rex", "bob")
        replies = _unicast_probe(int(shared))
        assert len(replies) == 1 and replies[0]["alias"] in ("rex", "bob")
        assert "notice" not in rex.log() + bob.log()


def test_a_discovery_port_held_by_another_program_is_a_notice_not_a_refusal():
    """A port bound without sharing (another program) turns discovery off with one notice;
    the worker still serves jobs."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as holder:
        holder.bind(("127.0.0.1", 0))
        held = holder.getsockname()[1]
        with worker_process("rex", "u", "p", ("--discovery-port", str(held))) as rex:
            assert status_of(rex, 10)["alias"] == "rex"
            assert (f"bark-worker: notice: discovery is off: cannot bind UDP 127.0.0.1:{held}: "
                    "Address already in use; jobs are served all the same") in rex.log()


# --- discover = true ---------------------------------------------------------------------------
def sweep_by_discovery() -> str:
    return sweep_with(**{alias: device(alias, discover=True, user="test", password=env("P_DISC"))
                         for alias in ("vm1", "vm2")})


def test_a_found_worker_is_reached_at_its_advertised_port(pair, workdir, monkeypatch,
                                                         tmp_path):
    (a, pa), (b, pb) = pair
    monkeypatch.setenv("P_DISC", PASSWORD)
    script = workdir / "found.mnd"
    script.write_text(sweep_by_discovery())
    # vm2 advertises a port where nothing listens: its round fails connect_failed at the
    # advertised port, and its configuration moves to vm1 (issue 37, point 2)
    code, out, err = run_tool(run_cli, [str(script), *probes(pa, pb), "--discover-timeout",
                                        LONG_WINDOW_MS, "--trace",
                                        str(tmp_path / "t.jsonl")])
    move = err.splitlines()[0]
    assert code == 0 and move.startswith("note: fit#c1 moved from 'vm2' to 'vm1' at round 0")
    assert f"device 'vm2' (127.0.0.1:{NOBODY}): connect_failed" in move
    assert '"target": "vm1"' in (tmp_path / "t.jsonl").read_text()


def test_discover_blocks_verify_when_every_alias_is_claimed(workdir, monkeypatch):
    ports = free_port(udp=True), free_port(udp=True)
    monkeypatch.setenv("P_DISC", PASSWORD)
    script = workdir / "found.mnd"
    script.write_text(sweep_by_discovery())
    with worker_process("vm1", "test", PASSWORD, ("--discovery-port", str(ports[0]))), \
            worker_process("vm2", "test", PASSWORD, ("--discovery-port", str(ports[1]))):
        code, out, err = run_tool(run_cli, [str(script), *probes(*ports), "--verify",
                                            "--discover-timeout", LONG_WINDOW_MS])
    local = run_tool(run_cli, [str(EXAMPLES / "sweep.mnd")])[1]
    assert (code, err) == (0, SEED_SWEEP_NOTE) and out == local + PASS


def test_an_alias_nobody_claims_fails_only_its_own_flows(pair, maned_run, monkeypatch):
    (a, pa), _ = pair
    monkeypatch.setenv("P_DISC", PASSWORD)
    code, out, err = maned_run(*probes(pa), "--discover-timeout", LONG_WINDOW_MS, source=(
        "{H0}\nin::a = [[1,2],[3,4]];\n"
        'device::vm1 { discover = true; user = "test"; pass = env("P_DISC"); }\n'
        "device::ghost-7 { discover = true; }\n"
        "calc::lambda_flow f(a) @device(vm1) {\n    a a add r =\n} return r;\n"
        "calc::lambda_flow g(a) @device(ghost-7) {\n    a a mul r =\n} return r;\n"))
    assert code == 1 and out == "flow 'f' outputs:\nr : [2x2] = [2, 4, 6, 8]\n"
    # issue 23, point 4: the line says who did answer
    assert err == ("error: flow 'g': device 'ghost-7' (discover): connect_failed: no worker "
                   f"answered discovery as 'ghost-7' (probed 127.0.0.1:{pa} for {LONG_WINDOW_MS} "
                   "ms; the workers that answered: vm1) [ERUN]\n")


def test_an_unresolvable_probe_target_stops_the_run_before_anything_runs(maned_run):
    code, out, err = maned_run("--probe", "no-such-host.invalid", "--no-broadcast", source=(
        "{H0}\nin::a = 1;\ndevice::bob { discover = true; }\n"
        "calc::lambda_flow f(a) @device(bob) {\n    a a add r =\n} return r;\n"))
    assert (code, out) == (2, "")
    assert err.startswith("error: probe target 'no-such-host.invalid' does not resolve")
    assert err.endswith("[EUSAGE]\n")


@pytest.mark.parametrize("fields, at, message", [
    ('host = "10.0.0.2"; discover = true;', 15, "host and discover = true exclude each other "
     "(discovery gives the worker's address); drop one"),
    ("discover = true; port = 4780;", 32, "port and discover = true exclude each other "
     "(discovery gives the worker's port); drop one"),
    ('discover = "yes";', 15, "discover takes true or false (or 1 or 0)"),
])
def test_discover_contradictions_are_e032(maned_lint, fields, at, message):
    code, out, err = maned_lint("{H0}\ndevice::bob { " + fields + " }\n")
    assert code == 1 and f":4:{at}: error[E032]: device 'bob': {message}" in out


def test_a_probe_port_defaults_to_4781():
    from maned.devices.discovery import parse_probe
    assert parse_probe("tasks.worker") == ("tasks.worker", 4781)
    assert parse_probe("10.0.0.21:4790") == ("10.0.0.21", 4790)


def test_discovery_runs_once_per_plan_for_every_discover_block(maned_run):
    """Two discover blocks, three flows: one probe reaches the responder, whose one reply
    binds 'liar'; 'ghost' fails alone."""
    liar = Liar([json.dumps({**GOOD, "port": free_port()}).encode()])
    try:
        code, out, err = maned_run(*probes(liar.port), "--discover-timeout", LONG_WINDOW_MS,
                                   source=(
            "{H0}\nin::a = 1;\ndevice::liar { discover = true; }\n"
            "device::ghost { discover = true; }\n"
            "calc::lambda_flow f(a) @device(liar) {\n    a a add r =\n} return r;\n"
            "calc::lambda_flow g(a) @device(ghost) {\n    a a add r =\n} return r;\n"
            "calc::lambda_flow h(a) @device(liar) {\n    a a mul r =\n} return r;\n"))
    finally:
        liar.sock.close()
    assert liar.probed == [DISCOVERY_PROBE]
    lines = err.splitlines()
    assert code == 1 and len(lines) == 3
    assert ("flow 'g': device 'ghost' (discover): connect_failed: no worker answered "
            "discovery") in err
    assert all("connect_failed" in ln for ln in lines if "'ghost'" not in ln)


def test_an_alias_too_long_for_a_reply_is_refused_at_start():
    assert refusal("--discovery-port", "0", timeout=60, BARK_USER="u", BARK_PASS="p",
                   BARK_ALIAS="a" * 100) == (
        2, "bark-worker: refusing to start: BARK_ALIAS is 100 bytes; an alias has at most 64 "
           "(it travels in every discovery reply)\n")


# --- issue 24, point 6: two workers answering as one alias -------------------------------------
class Recorder:
    """A TCP listener that records every connection made to it (a worker that must not be
    reached: no status probe, no login, no job)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port, self.connections = self.sock.getsockname()[1], []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, peer = self.sock.accept()
            except OSError:
                return
            self.connections.append(peer)
            conn.close()


def test_two_workers_answering_as_one_alias_are_refused_before_any_credential(maned_run,
                                                                              monkeypatch):
    """Two real workers and a UDP responder all answer as 'bob': bob's flows fail with one
    line each naming every address, nothing reaches any of them (no login in the workers'
    logs, no connection to the responder's advertised port), and the local flow runs."""
    ports = free_port(udp=True), free_port(udp=True)
    recorder = Recorder()
    liar = Liar([json.dumps({**GOOD, "alias": "bob", "port": recorder.port}).encode()])
    monkeypatch.setenv("P_DISC", PASSWORD)
    try:
        with worker_process("bob", "test", PASSWORD, ("--discovery-port", str(ports[0]))) as a, \
                worker_process("bob", "test", PASSWORD, ("--discovery-port", str(ports[1]))) as b:
            code, out, err = maned_run(*probes(*ports, liar.port), "--discover-timeout",
                                       LONG_WINDOW_MS, source=(
                "{H0}\nin::a = [[1,2],[3,4]];\n"
                'device::bob { discover = true; user = "test"; pass = env("P_DISC"); }\n'
                "calc::lambda_flow f(a) @device(bob) {\n    a a add r =\n} return r;\n"
                "calc::lambda_flow g(a) @device(bob) {\n    a a mul s =\n} return s;\n"
                "calc::lambda_flow h(a) {\n    a a add t =\n} return t;\n"))
            logs = a.log() + b.log()
    finally:
        liar.sock.close()
        recorder.sock.close()
    where = sorted([a.port, b.port, recorder.port])
    claimants = f"127.0.0.1:{where[0]}, 127.0.0.1:{where[1]} and 127.0.0.1:{where[2]}"
    assert code == 1 and out == "flow 'h' outputs:\nt : [2x2] = [2, 4, 6, 8]\n"
    assert err.splitlines() == [
        f"error: flow '{flow}': device 'bob' (discover): connect_failed: three workers answer "
        f"discovery as 'bob' ({claimants}); give them distinct aliases (nothing was sent to any "
        "of them) [ERUN]" for flow in ("f", "g")]
    assert "login" not in logs and recorder.connections == []
    assert PASSWORD not in err


def test_one_worker_answering_twice_is_one_claimant(maned_run, monkeypatch):
    """Two replies that name one address (the same worker, answered from two sockets) are
    one claimant, not a conflict: the block binds to it."""
    recorder = Recorder()
    reply = [json.dumps({**GOOD, "alias": "bob", "port": recorder.port}).encode()]
    liars = Liar(reply), Liar(reply)
    try:
        code, out, err = maned_run(*probes(liars[0].port, liars[1].port), "--discover-timeout",
                                   LONG_WINDOW_MS, source=(
            "{H0}\nin::a = 1;\ndevice::bob { discover = true; }\n"
            "calc::lambda_flow f(a) @device(bob) {\n    a a add r =\n} return r;\n"))
    finally:
        for liar in liars:
            liar.sock.close()
        recorder.sock.close()
    # bound: the failure is the recorder's (it closes at once), not a refusal
    assert code == 1 and f"device 'bob' (127.0.0.1:{recorder.port}): " in err
    assert "distinct aliases" not in err and len(recorder.connections) >= 1


# --- issue 24, point 7: a broadcast that cannot be sent ----------------------------------------
IN_NAMESPACE = r'''
import io, json, os, subprocess, sys
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
from bark_vm.container import free_port, worker_process
from maned.cli import run as run_cli
from maned.failures import DeviceFailure
from maned.devices.discovery import discover

folder, password = sys.argv[1], sys.argv[2]
os.environ["P_DISC"] = password
results = {}

def tool(argv):
    out, err = io.StringIO(), io.StringIO()
    return [run_cli.main(argv, out, err), out.getvalue(), err.getvalue()]

def script(name, text):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write("mnd::quantmax=1000;\nmnd::quantmin=-1000;\nmnd::quantres=0;\nin::a = 1;\n"
                + text)
    return path

try:
    discover([], True, 200)
    results["broadcast only"] = "no error"
except DeviceFailure as e:
    results["broadcast only"] = str(e)
port, silent = free_port(udp=True), free_port(udp=True)
results["ports"] = [port, silent]
with worker_process("vm1", "test", password, ("--discovery-port", str(port))) as w:
    results["worker"] = w.port
    try:
        found = discover([("127.0.0.1", port)], True, 30000)
        results["discover"] = [[f.alias, f.address] for f in found] + [list(found.notes)]
    except DeviceFailure as e:
        results["discover"] = str(e)
    results["devices"] = tool(["devices", "--probe", f"127.0.0.1:{port}", "--timeout", "30000"])
    results["run"] = tool([script("found.mnd",
        'device::vm1 { discover = true; user = "test"; pass = env("P_DISC"); }\n'
        "calc::lambda_flow f(a) @device(vm1) {\n    a a add r =\n} return r;\n"),
        "--probe", f"127.0.0.1:{port}", "--discover-timeout", "30000"])
    results["nobody"] = tool([script("ghost.mnd",
        "device::ghost { discover = true; }\n"
        "calc::lambda_flow g(a) @device(ghost) {\n    a a add r =\n} return r;\n"),
        "--probe", f"127.0.0.1:{silent}", "--discover-timeout", "200"])
print(json.dumps(results))
'''


def _in_private_network(tmp_path) -> dict:
    """IN_NAMESPACE's results, run in a network namespace of its own: only `lo`, so a
    broadcast to 255.255.255.255 fails for real (ENETUNREACH) while loopback works."""
    try:
        usable = subprocess.run(["unshare", "-n", "ip", "link", "set", "lo", "up"],
                                capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        usable = False
    if not usable:
        pytest.skip("unshare -n (a private network namespace) is not available here: it "
                    "needs root or user namespaces, and ip(8)")
    p = subprocess.run(["unshare", "-n", sys.executable, "-c", IN_NAMESPACE, str(tmp_path),
                        PASSWORD], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_a_broadcast_that_cannot_be_sent_is_a_note_and_the_probes_still_go(tmp_path):
    """With no network but loopback, the unicast probe still finds the worker (discover(),
    `maned-run devices`, a routed flow); the broadcast's failure is a note of the listing and
    of the run, whether it found its workers or not."""
    r = _in_private_network(tmp_path)
    silent = r["ports"][1]
    note = ("the broadcast to 255.255.255.255:4781 was not sent (Network is unreachable); "
            "only the --probe targets were probed")
    assert r["discover"] == [["vm1", f"127.0.0.1:{r['worker']}"], [note]]
    code, out, err = r["devices"]
    assert (code, err) == (0, f"note: {note}\n") and out.splitlines()[1].split()[:3] == [
        "vm1", "x86", f"127.0.0.1:{r['worker']}"]
    assert r["run"] == [0, "flow 'f' outputs:\nr : scalar = 2\n", f"note: discovery: {note}\n"]
    code, out, err = r["nobody"]
    assert (code, out) == (1, "") and err == (
        f"note: discovery: {note}\n"
        "error: flow 'g': device 'ghost' (discover): connect_failed: no worker answered "
        f"discovery as 'ghost' (probed 127.0.0.1:{silent}, broadcast for 200 ms; a worker answers "
        "discovery on the address it serves, 127.0.0.1 unless started with --host, so a LAN "
        "broadcast reaches only workers started with --host 0.0.0.0 or their own address: "
        "try --probe HOST) [ERUN]\n")
    # nothing to probe but the broadcast: no probe could be sent at all (exit 1, as before)
    assert r["broadcast only"] == ("connect_failed: cannot send the discovery probe: the "
                                   "broadcast to "
                                   "255.255.255.255:4781: Network is unreachable")


# --- issue 24, point 8: only the exact probe is answered ---------------------------------------
@pytest.fixture(scope="module")
def responder():
    port = free_port(udp=True)
    with worker_process("rex", "u", "p", ("--discovery-port", str(port))) as w:
        yield w, port


NOT_THE_PROBE = {
    "a trailing newline": DISCOVERY_PROBE + b"\n",
    "a trailing CRLF": DISCOVERY_PROBE + b"\r\n",
    "a leading space": b" " + DISCOVERY_PROBE,
    "padding within 64 bytes": DISCOVERY_PROBE + b" " * 40,
    "padding past 64 bytes": DISCOVERY_PROBE + b" " * 100,
    "garbage past 64 bytes": DISCOVERY_PROBE + b" " * 55 + b"garbage",
    "a NUL after it": DISCOVERY_PROBE + b"\x00",
    "a prefix": DISCOVERY_PROBE[:-1],
    "lower case": DISCOVERY_PROBE.lower(),
    "another version": DISCOVERY_PROBE[:-1] + b"2",
    "empty": b"",
    "a 2 KiB datagram": DISCOVERY_PROBE * 230,
}


def test_only_the_exact_probe_is_answered(responder):
    w, port = responder
    assert answered(port, DISCOVERY_PROBE)
    wrongly = [name for name, datagram in NOT_THE_PROBE.items() if answered(port, datagram)]
    assert wrongly == []
    assert answered(port, DISCOVERY_PROBE) and w.handle.poll() is None
