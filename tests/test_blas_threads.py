"""Every process that runs the executor runs BLAS on one thread unless the user set it
(issue 23, point 11): under load a 256x256 matmul took 86 ms with BLAS's default threads
against 12.6 ms with one. A Bark VM child (maned.devices.vm.child_env), bark-worker, and
maned-bench's own process (the kernel and METG figures time the executor in-process)."""
import json
import os
import subprocess
import sys

from bark_vm.blas import BLAS_THREADS

SHOW = ("import json, os, sys\nprint(json.dumps({'numpy_before': 'numpy' in sys.modules, "
        "'env': {n: os.environ.get(n) for n in %r}}))\n" % (BLAS_THREADS,))
WORKER = ("import sys\nimport bark_vm.server.cli as cli\nnumpy = 'numpy' in sys.modules\n"
          "try:\n    cli.main(['--version'])\nexcept SystemExit:\n    pass\n"
          + SHOW.replace("'numpy' in sys.modules", "numpy"))
BENCH = "import sys\nnumpy = 'numpy' in sys.modules\nimport maned_bench\n" + \
    SHOW.replace("'numpy' in sys.modules", "numpy")


def _run(code: str, **env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if k not in BLAS_THREADS}
    p = subprocess.run([sys.executable, "-c", code], env={**clean, **env}, capture_output=True,
                       text=True, timeout=60, cwd="/")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.splitlines()[-1])


def test_bark_worker_runs_blas_on_one_thread_unless_told():
    shown = _run(WORKER)
    assert not shown["numpy_before"]  # pinned before numpy (and its BLAS) is loaded
    assert shown["env"] == dict.fromkeys(BLAS_THREADS, "1")
    told = _run(WORKER, OPENBLAS_NUM_THREADS="2")
    assert told["env"] == {**dict.fromkeys(BLAS_THREADS, "1"), "OPENBLAS_NUM_THREADS": "2"}


def test_maned_bench_runs_blas_on_one_thread_unless_told():
    shown = _run(BENCH)
    assert not shown["numpy_before"]
    assert shown["env"] == dict.fromkeys(BLAS_THREADS, "1")
    told = _run(BENCH, MKL_NUM_THREADS="4")
    assert told["env"] == {**dict.fromkeys(BLAS_THREADS, "1"), "MKL_NUM_THREADS": "4"}


def test_maned_bench_loads_blas_as_with_one_thread_set_by_hand():
    """The pin takes effect: numpy's BLAS starts as many threads as with the three
    variables set to 1 by hand (none beyond the main one, where it is OpenBLAS)."""
    count = ("import numpy, os\nnumpy.ones((64, 64)) @ numpy.ones((64, 64))\n"
             "print(json.dumps({'threads': len(os.listdir('/proc/self/task'))}))\n")
    pinned = _run("import json, maned_bench\n" + count)
    by_hand = _run("import json\n" + count, **dict.fromkeys(BLAS_THREADS, "1"))
    assert pinned == by_hand
