"""bark-worker's start-up and shutdown (DESIGN D13; spec/wire.md §3): credentials from the
environment or a password file (first line, a byte order mark dropped, a FIFO refused),
refusals that never show the password, an alias no script could name refused, SIGTERM on
any thread stopping an idle worker, `python -m` and --help, and the server package never
loading `maned`.
"""
import os
import signal
import sys

import pytest

from support.processes import BARK_WORKER, run
from support.raw_http import login
from support.signals import other_threads, signal_thread
from support.workers import PASSWORD, USER, refusal, start_worker


@pytest.mark.parametrize("env, missing", [({"BARK_USER": "", "BARK_PASS": ""}, "BARK_USER"),
                                          ({"BARK_PASS": ""}, "BARK_PASS"),
                                          ({"BARK_USER": ""}, "BARK_USER")])
def test_refuses_to_start_without_credentials(env, missing):
    p = run(BARK_WORKER, "serve", "--port", "0",
            env={"BARK_USER": USER, "BARK_PASS": PASSWORD, **env}, timeout=30)
    assert p.returncode == 2
    assert missing in p.stderr and "refusing to start" in p.stderr
    assert PASSWORD not in p.stderr + p.stdout


def test_the_password_may_come_from_a_file(tmp):
    """BARK_PASS_FILE (a Docker secret, deploy/stack.yaml): its first line is the password."""
    secret = tmp / "bark_pass"
    secret.write_text("from-a-file-77\n")
    w = start_worker(tmp, env={"BARK_PASS": "", "BARK_PASS_FILE": str(secret)})
    try:
        assert login(w, password="from-a-file-77")[0] == 200
        assert login(w, password=PASSWORD)[0] == 401
    finally:
        assert w.stop() == 0
    assert refusal(timeout=30, BARK_PASS="", BARK_PASS_FILE=str(tmp / "none")) == (
        2, "bark-worker: refusing to start: the file BARK_PASS_FILE names cannot be read (No "
           "such file or directory); it holds the path of a file whose first line is the "
           "password\n")


def test_a_byte_order_mark_in_the_password_file_is_not_part_of_the_password(tmp):
    """Issue 24, point 10: an editor's UTF-8 BOM before the first line is dropped, so the
    password written is the password a user types."""
    secret = tmp / "bark_pass"
    secret.write_bytes(b"\xef\xbb\xbfwith-a-bom-31\r\n")
    w = start_worker(tmp, env={"BARK_PASS": "", "BARK_PASS_FILE": str(secret)})
    try:
        assert login(w, password="with-a-bom-31")[0] == 200
    finally:
        assert w.stop() == 0


@pytest.mark.parametrize("where", ["BARK_PASS", "BARK_PASS_FILE"])
def test_a_password_no_login_could_carry_is_refused_at_start(tmp, where):
    """Issue 24, point 10: a login body is at most 4,096 bytes; a worker whose password
    cannot fit one would start and let nobody in. Non-ASCII counts as the client sends it
    (\\uXXXX, six bytes a character), and the refusal never shows the password."""
    password = "\u00e9" * 700  # 1,400 bytes of UTF-8, 4,236 of login JSON
    env = {"BARK_PASS": password}
    if where == "BARK_PASS_FILE":
        (tmp / "long").write_text(password + "\n", encoding="utf-8")
        env = {"BARK_PASS": "", "BARK_PASS_FILE": str(tmp / "long")}
    code, err = refusal(**env)
    assert (code, err) == (2, "bark-worker: refusing to start: a login with this user and "
                              "password would be over the 4096-byte login body a worker "
                              "reads, so nobody could log in; choose a shorter password or "
                              "user name\n")


def test_a_password_given_where_the_file_path_goes_is_never_echoed(tmp):
    """Issue 24, point 4: BARK_PASS_FILE=hunter2 (the password, not a path) is refused
    without quoting the variable's value."""
    code, err = refusal(BARK_PASS="", BARK_PASS_FILE="hunter2-not-a-path")
    assert code == 2 and "hunter2" not in err
    assert err.startswith("bark-worker: refusing to start: the file BARK_PASS_FILE names "
                          "cannot be read (No such file or directory)")


def test_a_password_file_that_is_no_regular_file_is_refused_without_blocking(tmp):
    """A FIFO would block open() until a writer came: it is refused at once."""
    fifo = tmp / "fifo"
    os.mkfifo(fifo)
    assert refusal(BARK_PASS="", BARK_PASS_FILE=str(fifo)) == (
        2, "bark-worker: refusing to start: the file BARK_PASS_FILE names cannot be read "
           "(not a regular file); it holds the path of a file whose first line is the "
           "password\n")


@pytest.mark.parametrize("alias, why", [
    ("bob.i3", "is not an alias"), ("bob i3", "is not an alias"), ("3bob", "is not an alias"),
    ("bøb", "is not an alias")])
def test_an_alias_no_script_could_name_is_refused_at_start(tmp, alias, why):
    code, err = refusal(BARK_ALIAS=alias)
    assert code == 2 and err.startswith("bark-worker: refusing to start: BARK_ALIAS ")
    assert why in err and PASSWORD not in err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="tgkill is Linux's")
def test_sigterm_delivered_to_another_thread_still_stops_an_idle_worker(tmp):
    """The kernel may hand a process's SIGTERM to any of its threads; the idle worker must
    stop all the same (its main thread waits on the signal wakeup fd, not in accept())."""
    w = start_worker(tmp)
    tids = other_threads(w.popen.pid)
    assert tids, "the worker has an executor thread"
    signal_thread(w.popen.pid, tids[0], signal.SIGTERM)
    assert w.popen.wait(timeout=30) == 0
    assert "bark-worker: bob stopped" in w.stderr()


def test_python_m_entry_and_help():
    p = run([sys.executable, "-m", "bark_vm.server"], "serve", "--help", timeout=30)
    assert p.returncode == 0
    for flag in ("--host", "--port", "--abi", "--max-payload", "--lockout-seconds"):
        assert flag in p.stdout


def test_server_package_does_not_import_maned():
    code = ("import sys, bark_vm.server, bark_vm.server.cli, bark_vm.server.endpoints\n"
            "bad = [m for m in sys.modules if m == 'maned' or m.startswith('maned.')]\n"
            "assert not bad, bad\n")
    p = run([sys.executable, "-c", code], timeout=30, cwd="/")
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("value", ["-1", "1.5", "ten", "60001", ""])
def test_a_hold_that_is_not_whole_milliseconds_is_refused(value):
    """--hold-ms (benchmarks: a slower machine elsewhere) takes 0..60000 whole milliseconds;
    anything else is a usage error before the worker listens."""
    code, err = refusal("--hold-ms", value)
    assert code == 2
    assert "--hold-ms" in err and "not a whole number of milliseconds from 0 to 60000" in err


def test_a_held_job_sleeps_out_what_its_execution_left_of_the_hold(monkeypatch):
    """The hold is measured from the job's start on the executor: what the execution took
    is not slept again, and a job slower than the hold is not held at all."""
    from bark_vm.server import endpoints
    from bark_vm.server.auth import Authenticator
    now, slept = [100.0], []
    worker = endpoints.Endpoints(endpoints.default_config("bark", 2, 1 << 20),
                                 Authenticator(USER, PASSWORD, 60), clock=lambda: now[0],
                                 hold_s=0.5)
    monkeypatch.setattr(endpoints.time, "sleep", slept.append)
    now[0] = 100.25  # the job ran a quarter of a second: a quarter is left to sleep
    worker._hold(100.0)
    now[0] = 100.75  # the job ran past the hold: no sleep
    worker._hold(100.0)
    assert slept == [0.25]
