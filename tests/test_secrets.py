"""Secrets stay secret (issue 13, Build 5; DESIGN D13, R22): scripts with known secrets in
`env()` run against a real bark-worker, through good and bad logins, worker refusals, a
literal password and every output the tools have (stdout, stderr, the --trace file, the
--json report, --progress lines, maned-lint's report, the worker's own log), and then every
byte they produced is scanned: no secret appears anywhere. The scan says what it read, so
it cannot pass by reading nothing."""
import os
import subprocess
import sys

import pytest

from conftest import EXAMPLES
from gates import HANG_GUARD_S
from test_worker_http import start_worker

USER = "scanner"
SECRETS = {"MANED_T_PASS": "pass-3c1e9a77d0", "MANED_T_WRONG": "wrong-5b0f44e2a1",
           "MANED_T_LITERAL": "literal-9d2e71c3b8"}
RUN = [sys.executable, "-c", "from maned.cli.run import console_main; console_main()"]
LINT = [sys.executable, "-c", "from maned.cli.lint import console_main; console_main()"]
HEAD = "mnd::quantmax=1000;\nmnd::quantmin=-1000;\nmnd::quantres=0;\nin::a = [[1,2],[3,4]];\n"


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    """A bark-worker whose password is the secret, its log in a file the scan reads."""
    folder = tmp_path_factory.mktemp("secrets")
    w = start_worker(folder, "--lockout-seconds", "1",
                     env={"BARK_ALIAS": "scan", "BARK_USER": USER,
                          "BARK_PASS": SECRETS["MANED_T_PASS"]})
    yield w.port, w.err_path, folder
    assert w.stop() == 0


def device(port: int, secret_var: str, alias: str = "scan") -> str:
    return (f'device::{alias} {{ host = "127.0.0.1"; port = {port}; user = "{USER}"; '
            f'pass = env("{secret_var}"); }}\n')


def scripts(port: int) -> dict[str, str]:
    routed = "calc::lambda_flow sq(a) @device(scan) {\n    a a matmul r =\n} return r;\n"
    refused = "calc::lambda_flow bad(a) @device(scan) {\n    a a add b =\n    b {shape: [3]} " \
              "reshape r =\n} return r;\n"
    sweep = (EXAMPLES / "sweep.mnd").read_text().replace(
        'device::vm1 { host = "local"; }\n', device(port, "MANED_T_PASS", "vm1")) \
        .replace('device::vm2 { host = "local"; }\n', "").replace("@device(vm1, vm2)",
                                                                  "@device(vm1)")
    return {
        "routed": HEAD + device(port, "MANED_T_PASS") + routed,
        "wrong_login": HEAD + device(port, "MANED_T_WRONG") + routed,
        "worker_refuses": HEAD + device(port, "MANED_T_PASS") + refused,
        "sweep": sweep,
        "literal": HEAD + f'device::scan {{ host = "127.0.0.1"; port = {port}; user = "{USER}"; '
                   f'pass = "{SECRETS["MANED_T_LITERAL"]}"; }}\n' + routed,
    }


def test_no_secret_reaches_any_output(worker):
    port, log, folder = worker
    env = dict(os.environ, **SECRETS)
    produced: dict[str, str] = {}
    for name, text in scripts(port).items():
        script = folder / f"{name}.mnd"
        script.write_text(text)
        trace = folder / f"{name}.trace"
        for args in (["--verify", "--progress", "--trace", str(trace)], ["--json"]):
            p = subprocess.run(RUN + [str(script), *args], env=env, capture_output=True,
                               text=True, timeout=HANG_GUARD_S)
            produced[f"{name} {args[0]} stdout"] = p.stdout
            produced[f"{name} {args[0]} stderr"] = p.stderr
        produced[f"{name} trace"] = trace.read_text()
        lint = subprocess.run(LINT + [str(script), "--format", "json"], env=env,
                              capture_output=True, text=True, timeout=HANG_GUARD_S)
        produced[f"{name} lint"] = lint.stdout + lint.stderr
    produced["worker log"] = log.read_text(errors="replace")
    # the scan is not vacuous: the runs did what they were made to do
    assert "r : [2x2] = [7, 10, 15, 22]" in produced["routed --verify stdout"]
    assert "AUTH_FAILED" in produced["wrong_login --verify stderr"]
    assert "SHAPE_MISMATCH" in produced["worker_refuses --verify stderr"]
    assert "verify: PASS" in produced["sweep --verify stdout"]
    assert "W014" in produced["literal lint"]
    assert "fit#c2#r0" in produced["sweep trace"]
    assert "login refused" in produced["worker log"] and "login: user" in produced["worker log"]
    hits = [(where, var) for where, text in produced.items()
            for var, secret in SECRETS.items() if secret in text]
    assert hits == []
    scanned = sum(len(t) for t in produced.values())
    print(f"secrets scan: {len(produced)} outputs, {scanned:,} characters, "
          f"{len(SECRETS)} secrets, 0 hits")


@pytest.mark.parametrize("argv", [
    ["hello.mnd", "--device-pas=SECRET"], ["hello.mnd", "--device-pass-file=SECRET"],
    ["devices", "--device-pass=SECRET"]])
def test_a_mistyped_option_is_named_without_its_value(argv):
    """`--device-pas=PASSWORD` is refused naming only `--device-pas`."""
    secret = SECRETS["MANED_T_LITERAL"]
    argv = [a.replace("SECRET", secret) for a in argv]
    for cmd in ([*RUN, *argv], [*LINT, argv[-1], str(EXAMPLES / "hello.mnd")]):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=HANG_GUARD_S, cwd=EXAMPLES)
        assert p.returncode == 2 and "unknown" in p.stderr, p.stderr
        assert argv[-1].partition("=")[0] in p.stderr
        assert secret not in p.stdout + p.stderr
