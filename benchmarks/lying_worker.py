"""A bark-worker that lies (issue 37, point 4): the real worker whose executor, from its
MANED_BENCH_LIE_FROM-th job on (default 6), adds MANED_BENCH_LIE_BY (default 1) to the first
slot of its first output: `python -m maned_bench.lying_worker serve [options]`, the liar
of the --replicas tests and benchmarks."""
import itertools
import os
import sys

import numpy as np

import bark_vm.executor as executor
from bark_vm.server import cli

_real = executor.execute
_jobs = itertools.count(1)
_FROM = int(os.environ.get("MANED_BENCH_LIE_FROM", "6"))
_BY = np.int32(int(os.environ.get("MANED_BENCH_LIE_BY", "1")))


def _lying(module, inputs, quantres, *rest):
    outputs = _real(module, inputs, quantres, *rest)
    if next(_jobs) < _FROM:
        return outputs
    first = outputs[0].copy()
    first.reshape(-1)[0] += _BY
    return [first] + list(outputs[1:])


executor.execute = _lying
if __name__ == "__main__":
    sys.exit(cli.main())
