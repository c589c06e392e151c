"""Secrets stay secret (issue 13, Build 5; DESIGN D13, R22): scripts with known secrets in
`env()` run against a real bark-worker, through good and bad logins, worker refusals, a
literal password and every output the tools have (stdout, stderr, the --trace file, the
--json report, --progress lines, maned-lint's report, the worker's own log), and then every
byte they produced is scanned: no secret appears anywhere. The scan says what it read, so
it cannot pass by reading nothing."""
import pytest

from support.cli import EXAMPLES
from support.processes import MANED_LINT, MANED_RUN, run
from support.scripts import H0, device, env, sweep_with
from support.workers import start_worker

USER = "scanner"
SECRETS = {"MANED_T_PASS": "pass-3c1e9a77d0", "MANED_T_WRONG": "wrong-5b0f44e2a1",
           "MANED_T_LITERAL": "literal-9d2e71c3b8"}
HEAD = H0 + "in::a = [[1,2],[3,4]];\n"


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    """A bark-worker whose password is the secret, its log in a file the scan reads."""
    folder = tmp_path_factory.mktemp("secrets")
    w = start_worker(folder, "--lockout-seconds", "1",
                     env={"BARK_ALIAS": "scan", "BARK_USER": USER,
                          "BARK_PASS": SECRETS["MANED_T_PASS"]})
    yield w.port, w.err_path, folder
    assert w.stop() == 0


def scan(port: int, password, alias: str = "scan") -> str:
    """The device:: block of the scanned worker."""
    return device(alias, host="127.0.0.1", port=port, user=USER, password=password)


def scripts(port: int) -> dict[str, str]:
    routed = "calc::lambda_flow sq(a) @device(scan) {\n    a a matmul r =\n} return r;\n"
    refused = "calc::lambda_flow bad(a) @device(scan) {\n    a a add b =\n    b {shape: [3]} " \
              "reshape r =\n} return r;\n"
    return {
        "routed": HEAD + scan(port, env("MANED_T_PASS")) + routed,
        "wrong_login": HEAD + scan(port, env("MANED_T_WRONG")) + routed,
        "worker_refuses": HEAD + scan(port, env("MANED_T_PASS")) + refused,
        "sweep": sweep_with(vm1=scan(port, env("MANED_T_PASS"), "vm1"), vm2="", route="vm1"),
        "literal": HEAD + scan(port, SECRETS["MANED_T_LITERAL"]) + routed,
    }


def test_no_secret_reaches_any_output(worker):
    port, log, folder = worker
    produced: dict[str, str] = {}
    for name, text in scripts(port).items():
        script = folder / f"{name}.mnd"
        script.write_text(text)
        trace = folder / f"{name}.trace"
        for args in (["--verify", "--progress", "--trace", str(trace)], ["--json"]):
            p = run(MANED_RUN, script, *args, env=SECRETS)
            produced[f"{name} {args[0]} stdout"] = p.stdout
            produced[f"{name} {args[0]} stderr"] = p.stderr
        produced[f"{name} trace"] = trace.read_text()
        lint = run(MANED_LINT, script, "--format", "json", env=SECRETS)
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
    for cmd, args in ((MANED_RUN, argv), (MANED_LINT, [argv[-1], EXAMPLES / "hello.mnd"])):
        p = run(cmd, *args, cwd=EXAMPLES)
        assert p.returncode == 2 and "unknown" in p.stderr, p.stderr
        assert argv[-1].partition("=")[0] in p.stderr
        assert secret not in p.stdout + p.stderr
