"""Out of open files (issue 34, K11): a sweep over more Bark VMs than the process's open
files allow refuses the VM that would leave the run none, naming the limit in a coded line
(since issue 37, the note of the configuration's move to a VM that started); never a
traceback from wherever a file was next opened."""
import re
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


def test_configurations_whose_vm_the_open_file_limit_refuses_move_to_the_vms_that_started(
        tmp_path):
    """The VMs the limit leaves room for start; each configuration whose VM is refused
    (the limit's coded line) moves to another VM of the list that has not failed (issue 37,
    point 2), and the run prints what a run with room for every VM prints."""
    script = tmp_path / "forty.mnd"
    script.write_text(_forty_vms())
    roomy = run(MANED_RUN, script)
    assert roomy.returncode == 0, roomy.stderr[-3000:]
    done = run(MANED_RUN, script, preexec_fn=_limited)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.stdout == roomy.stdout and "m39 : " in done.stdout
    *moves, note = done.stderr.splitlines()
    assert moves and note == roomy.stderr.rstrip("\n")
    final, refused = {}, set()
    for line in moves:
        k, old, new = re.match(r"note: fit#c(\d+) moved from 'v(\d+)' to 'v(\d+)' at round 0: "
                               r"flow 'fit#c\1#r0': device 'v\2' \(Bark VM\): connect_failed: "
                               r"the child was not started: this run has \d+ of its "
                               rf"{LIMIT} open files in use", line).groups()
        final[k] = new
        refused.add(old)
    assert not set(final.values()) & refused  # every chain ended on a VM that started


def test_the_same_sweep_runs_where_the_limit_leaves_room(tmp_path):
    """The refusal is the limit's, not the sweep's: with room for every VM it runs."""
    script = tmp_path / "forty.mnd"
    script.write_text(_forty_vms())
    done = run(MANED_RUN, script)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "m39 : " in done.stdout
