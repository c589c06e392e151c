"""A run's own files and the files it may not block on (issue 24, points 1 and 11): `--trace`
never replaces the script, an input or an out:: file, nor lands on stdout; a FIFO given as a
script, an input, an out:: target, a trace or a model file is refused at once instead of
waiting forever for a peer; Ctrl-C in maned-model is a notice, never a traceback."""
import os
import pty
import signal

import pytest

from maned.cli import model as model_cli

from support.cli import run_tool
from fuzzing import deadline
from gates import HANG_GUARD_S, until
from support.processes import MANED_MODEL, MANED_RUN, run, start

SCRIPT_BYTES = "mnd::quantmax=1000;"  # how csv_io.mnd starts: the script is still the script


def _refused_trace(given: str, what: str) -> str:
    return (f"error: --trace '{given}' is {what}: writing it would replace it: give --trace "
            "another file [EUSAGE]\n")


@pytest.mark.parametrize("argv, given, what", [
    (["csv_io.mnd"], "csv_io.mnd", "the script"),
    (["csv_io.mnd"], "./csv_io.mnd", "the script"),
    (["csv_io.mnd"], "data/points.csv", "the csv() input in::pts"),
    (["csv_io.mnd", "--in", "pts=data/other.csv"], "data/other.csv",
     "the csv() input in::pts"),
    (["csv_io.mnd"], "scaled.csv", "the out::scaled file"),
    (["csv_io.mnd", "--out-dir", "results"], "results/scaled.csv", "the out::scaled file"),
])
def test_a_trace_that_would_replace_one_of_the_runs_files_is_refused(maned_run, workdir, argv,
                                                                    given, what):
    """Point 1: refused before anything runs, every file as it was (like `gcc -o x.c x.c`)."""
    (workdir / "results").mkdir()
    (workdir / "data" / "other.csv").write_bytes((workdir / "data" / "points.csv").read_bytes())
    before = {p: p.read_bytes() for p in workdir.rglob("*") if p.is_file()}
    code, out, err = maned_run(*argv, "--trace", given)
    assert (code, out, err) == (2, "", _refused_trace(given, what))
    assert {p: p.read_bytes() for p in workdir.rglob("*") if p.is_file()} == before
    assert (workdir / "csv_io.mnd").read_text().startswith(SCRIPT_BYTES)


OUT_HEAD = ("mnd::quantmax=1000;\nmnd::quantmin=-1000;\nmnd::quantres=0;\n"
            "in::pts = csv(\"data/points.csv\");\n"
            "calc::lambda_flow f(pts) {\n    pts relu y =\n    pts tanh z =\n} return y, z;\n")


@pytest.mark.parametrize("outs, what, other", [
    ('out::y = csv("own.mnd");', "the out::y file", "the script"),
    ('out::y = csv("data/points.csv");', "the out::y file", "the csv() input in::pts"),
    ('out::y = csv("r.csv");\nout::z = csv("./r.csv");', "the out::z file",
     "the out::y file"),
])
def test_an_out_file_that_would_replace_a_file_of_the_run_is_refused(maned_run, workdir, outs,
                                                                     what, other):
    """Issue 34, the class of K2-K5: no output of a run is one of its inputs or another of
    its outputs; refused before anything runs, every file as it was."""
    script = workdir / "own.mnd"
    script.write_text(OUT_HEAD + outs + "\n")
    before = {p: p.read_bytes() for p in workdir.rglob("*") if p.is_file()}
    code, out, err = maned_run("own.mnd")
    assert (code, out) == (2, ""), err
    assert err.startswith(f"error: {what} '") and f"' is {other}: writing it would replace " \
        "it: give the out:: another path [EUSAGE]" in err and err.count("\n") == 1, err
    assert {p: p.read_bytes() for p in workdir.rglob("*") if p.is_file()} == before


def test_a_trace_of_another_name_still_runs_and_leaves_the_files_alone(maned_run, workdir):
    code, out, err = maned_run("csv_io.mnd", "--trace", "run.jsonl")
    assert (code, out.splitlines()[-1]) == (0, "out::scaled -> scaled.csv")
    assert (workdir / "csv_io.mnd").read_text().startswith(SCRIPT_BYTES)
    assert (workdir / "scaled.csv").read_text().startswith("3.00,")


@pytest.mark.parametrize("stream", ["/dev/stdout", "/dev/stderr", "/proc/self/fd/1"])
def test_a_trace_onto_the_reports_own_stream_is_refused(workdir, tmp_path, stream):
    """`--trace /dev/stdout` would mix the records into the flow blocks: refused, in a real
    process whose stdout and stderr are files."""
    with open(tmp_path / "out", "wb") as out, open(tmp_path / "err", "wb") as err:
        code = _run_process(["hello.mnd", "--trace", stream], out, err)
    name = "stdout" if stream.endswith(("stdout", "/1")) else "stderr"
    assert code == 2 and (tmp_path / "out").read_text() == ""
    assert (tmp_path / "err").read_text() == (
        f"error: --trace '{stream}' is this run's {name}, which carries the report: give the "
        "trace a file [EUSAGE]\n")


def test_a_trace_into_dev_null_is_no_clash_even_when_stdout_is_dev_null(workdir):
    with open(os.devnull, "wb") as null:
        assert _run_process(["hello.mnd", "--trace", os.devnull], null, null) == 0


def _run_process(argv, out, err) -> int:
    return run(MANED_RUN, *argv, stdout=out, stderr=err).returncode


# --- FIFOs: refused at once, never waited on ---------------------------------------------------
FIFO_REFUSAL = "it is a FIFO (named pipe), not a regular file [EIO]"


@pytest.fixture
def fifo(workdir):
    path = workdir / "pipe"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("case", ["script", "--in", "csv()", "out::", "--trace"])
def test_a_fifo_is_refused_and_never_waited_on(maned_run, workdir, fifo, case):
    """Point 11: each would block open() until a peer came; now one coded line, at once."""
    source = (workdir / "csv_io.mnd").read_text()
    if case == "csv()":
        (workdir / "csv_io.mnd").write_text(source.replace("data/points.csv", "pipe"))
    if case == "out::":
        (workdir / "csv_io.mnd").write_text(source.replace('"scaled.csv"', '"pipe"'))
    argv = {"script": ["pipe"], "--in": ["csv_io.mnd", "--in", "pts=pipe"], "csv()":
            ["csv_io.mnd"], "out::": ["csv_io.mnd"], "--trace": ["csv_io.mnd", "--trace",
                                                                "pipe"]}[case]
    with deadline():
        code, out, err = maned_run(*argv)
    line = err.splitlines()[-1]
    assert code == 2 and line.endswith(FIFO_REFUSAL), err
    if case == "out::":  # the flow's outputs were computed and printed: nothing lost
        assert "scaled : [3x2] = [300, 225, -100, 300, 2000, 13]" in out
        assert line == f"error: out::scaled: cannot write 'pipe': {FIFO_REFUSAL}"


def test_maned_model_refuses_a_fifo(workdir, fifo):
    with deadline():
        code, out, err = run_tool(model_cli, ["show", str(fifo)])
    assert (code, out, err) == (2, "", f"error: cannot read '{fifo}': {FIFO_REFUSAL}\n")


def test_ctrl_c_in_maned_model_is_a_notice_not_a_traceback():
    """A terminal is a device maned-model may read (up to its limit): it waits for input,
    and Ctrl-C there ends the tool with a notice and 130."""
    parent, child = pty.openpty()
    try:
        p = start(MANED_MODEL, "show", os.ttyname(child))
        until(lambda: _reading(p.pid), "maned-model waits on the terminal")
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=HANG_GUARD_S)
    finally:
        os.close(parent)
        os.close(child)
    assert (p.returncode, out, err) == (130, "", "notice: maned-model interrupted (SIGINT); "
                                        "nothing was written\n")


def _reading(pid: int) -> bool:
    """The process is asleep in a read of its terminal (after Python's start-up)."""
    try:
        with open(f"/proc/{pid}/wchan") as f:
            wchan = f.read()
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state == "S" and ("tty" in wchan or "wait_woken" in wchan or "read" in wchan)


def test_a_path_that_cannot_be_resolved_is_no_clash_and_no_traceback(tmp_path):
    """A NUL byte in a path (os.path raises ValueError for it): no clash here; opening the
    file later says what is wrong with it, coded."""
    from maned.io.files import overwrites, same_file
    bad = str(tmp_path / "r\0.csv")
    assert same_file(bad, bad) is False
    assert overwrites([(bad, "the out::y file")], [(str(tmp_path / "a.csv"), "an input")]) is None
