"""Benchmarks of the round-trip economics (DESIGN §9): what routing costs and when it pays.
Every figure is a ratio of medians measured in one run, the compared sides alternating."""
import os as _os
import sys as _sys

from bark_vm.blas import one_blas_thread as _one_blas_thread

# The kernel and METG families time the executor in this process, as a worker runs it: BLAS
# on one thread unless the user set otherwise, pinned before numpy is first imported.
BLAS_PINNED_IN_TIME = "numpy" not in _sys.modules
_one_blas_thread(_os.environ)
