"""A faulty Bark VM for the --verify MISMATCH path: the real VM whose executor adds 1 to the
first slot of its first output. Tests write a launcher for it and name it in the `vm` field
of a `device::` block."""
import sys

import numpy as np

import bark_vm.executor as executor
from bark_vm import vm

_real = executor.execute


def _skewed(module, inputs, quantres, *budget):
    outputs = _real(module, inputs, quantres, *budget)
    first = outputs[0].copy()
    first.reshape(-1)[0] += np.int32(1)
    return [first] + list(outputs[1:])


executor.execute = _skewed
if __name__ == "__main__":
    sys.exit(vm.main())
