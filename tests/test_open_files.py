"""Out of open files (issue 34, K11): a sweep over more Bark VMs than the process's open
files allow refuses the VM that would leave the run none, naming the limit, as one coded
line of the definition; never a traceback from wherever a file was next opened."""
import resource

from support.cli import EXAMPLES

from support.processes import MANED_RUN, run

LIMIT = 60  # room for a few Bark VMs (three files each), not forty


def _forty_vms() -> str:
    head = (EXAMPLES / "sweep.mnd").read_text().split("device::vm1")[0]
    names = [f"v{i}" for i in range(40)]
    return (head + "".join(f'device::{n} {{ host = "local"; }}\n' for n in names)
            + f"calc::ml::linear_regression fit(X, y) @device({', '.join(names)}) {{\n"
            + f"    iters: 20,\n    lr: [{', '.join(str(i + 1) for i in range(40))}],\n"
            + "    features: 2\n} return " + ", ".join(f"m{i}" for i in range(40)) + ";\n")


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, LIMIT))


def test_a_sweep_over_more_vms_than_open_files_allow_is_one_coded_line_a_configuration(
        tmp_path):
    """The VMs the limit leaves room for run their configurations, which print; each
    configuration whose VM could not start fails alone, with the limit's coded line."""
    script = tmp_path / "forty.mnd"
    script.write_text(_forty_vms())
    done = run(MANED_RUN, script, preexec_fn=_limited)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    note, *errors = done.stderr.splitlines()
    printed = [line.split(" : ")[0] for line in done.stdout.splitlines()[1:]]
    failed = [int(e.removeprefix("error: flow 'fit#c").split("#")[0]) for e in errors]
    assert errors and printed and sorted(failed) == failed
    assert sorted(printed + [f"m{k}" for k in failed], key=lambda n: int(n[1:])) == [
        f"m{i}" for i in range(40)]
    for k, line in zip(failed, errors):
        assert line.startswith(f"error: flow 'fit#c{k}#r0': device 'v{k}' (Bark VM): "
                               "connect_failed: the child was not started: this run has ")
        assert line.endswith(
            f" of its {LIMIT} open files in use (ulimit -n {LIMIT}), and it takes 3 more beside "
            "the 32 a run keeps for itself: raise the limit (ulimit -n), or route to fewer Bark "
            "VMs [ERUN]"), line
        assert f"m{k} had lr {k + 1} (failed)" in note


def test_the_same_sweep_runs_where_the_limit_leaves_room(tmp_path):
    """The refusal is the limit's, not the sweep's: with room for every VM it runs."""
    script = tmp_path / "forty.mnd"
    script.write_text(_forty_vms())
    done = run(MANED_RUN, script)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "m39 : " in done.stdout
