"""Deliberately broken Bark workers (issue: conformance): the real worker with one defect
each. `apply(name)` installs a defect into this process's executor or request handling;
`tests/mutants/worker.py NAME serve ...` runs bark-worker with it. Certification must fail
every one, and its report must name the case that caught it."""
import os
import time

import numpy as np

from bark_vm import request_handling
from bark_vm.executor import activation, elementwise, reduce, shape, table
from bark_vm.server import endpoints, job_table
from bark_vm.executor.ints import I32, I64, INT32_MIN, wrap32
from bark_vm.wire.constants import WorkerError


def _kernel(name: str, fn) -> None:
    k = table.BY_NAME[name]
    number = next(n for n, row in table.KERNELS.items() if row is k)
    table.KERNELS[number] = table.BY_NAME[name] = table.Kernel(name, fn, k.params)


def floor_div():
    """Division rounds toward minus infinity instead of truncating."""
    def div(q, a, b):
        a, b = np.broadcast_arrays(a.astype(I64), b.astype(I64))
        out = np.zeros(a.shape, dtype=I64)
        nz = b != 0
        out[nz] = np.floor_divide(a[nz], b[nz])
        return wrap32(out)
    _kernel("div", div)


def saturating_add():
    """add saturates at the int32 ends instead of wrapping."""
    def add(q, a, b):
        s = a.astype(I64) + b.astype(I64)
        return np.clip(s, -2 ** 31, 2 ** 31 - 1).astype(I32)
    _kernel("add", add)


def trap_min_div():
    """INT32_MIN / -1 traps instead of giving INT32_MIN."""
    real = elementwise.div

    def div(q, a, b):
        a2, b2 = np.broadcast_arrays(a, b)
        if np.any((a2 == INT32_MIN) & (b2 == -1)):
            raise WorkerError("EXEC_FAILED", "integer overflow in division")
        return real(q, a, b)
    _kernel("div", div)


def sigmoid_shift():
    """The sigmoid table read one entry off."""
    values = activation._TABLES["sigmoid"]
    activation._TABLES["sigmoid"] = np.concatenate([values[1:], values[-1:]])


def float_matmul():
    """matmul through plain float64: inexact once products pass 2^53."""
    def matmul(q, a, b):
        return wrap32(np.rint(a.astype(np.float64) @ b.astype(np.float64)).astype(np.int64))
    _kernel("matmul", matmul)


def wrong_axis():
    """Reductions along an axis use the next axis."""
    for name in ("tensor_sum", "tensor_mean", "tensor_max", "tensor_min"):
        real = getattr(reduce, name)

        def fn(q, x, axis=None, real=real):
            return real(q, x, None if axis is None else (axis + 1) % x.ndim)
        _kernel(name, fn)


def transpose_in_place():
    """transpose relabels the shape without moving the data (right on square input only)."""
    def transpose(q, x):
        return np.ascontiguousarray(x).reshape(x.shape[:-2] + (x.shape[-1], x.shape[-2]))
    _kernel("transpose", transpose)


def lying_status():
    """Advertises tanh (every op) but refuses it."""
    real = endpoints.execute_request

    def execute(request, module, *budget):
        if any(table.KERNELS.get(i.opcode) and table.KERNELS[i.opcode].name == "tanh"
               for i in module.instrs):
            raise WorkerError("UNSUPPORTED_OP", "tanh is not implemented here")
        return real(request, module, *budget)
    endpoints.execute_request = execute


def stale_answer():
    """Answers each job with the result of the job before it."""
    real = endpoints.execute_request
    last = {}

    def execute(request, module, *budget):
        fresh = real(request, module, *budget)
        answer = last.get("mnrs", fresh)
        last["mnrs"] = fresh
        return answer
    endpoints.execute_request = execute


def stall_on_tanh():
    """A job with tanh never finishes."""
    real = activation.tanh

    def tanh(q, x):
        while True:
            time.sleep(1)
        return real(q, x)
    _kernel("tanh", tanh)


def crash_on_softmax():
    """The worker process dies on a softmax."""
    def softmax(q, x, axis=None):
        os._exit(3)
    _kernel("softmax", softmax)


def concat_swapped():
    """concat puts b before a."""
    real = shape.concat

    def concat(q, a, b, axis=0):
        return real(q, b, a, axis)
    _kernel("concat", concat)


def relu_leaky():
    """relu lets -1 through."""
    def relu(q, x):
        x = x.astype(I32)
        return np.where(x == -1, x, np.maximum(x, 0)).astype(I32)
    _kernel("relu", relu)


def never_busy():
    """Every job slot always looks free: no submit is ever refused BUSY."""
    job_table.JobTable._occupied = lambda self: 0


def int8_wraps():
    """An output outside the int8 envelope wraps into it instead of failing the job."""
    ranges, real = request_handling.DTYPE_RANGE, request_handling.encode_result
    request_handling.DTYPE_RANGE = {d: (-2 ** 31, 2 ** 31 - 1) for d in ranges}

    def encode(entries, dtype):
        lo, hi = ranges[dtype]
        return real([(s, tuple((v - lo) % (hi - lo + 1) + lo for v in data))
                     for s, data in entries], dtype)
    request_handling.encode_result = encode


def ready_early():
    """A result asked before its job is done answers NO_SUCH_JOB, not NOT_READY (and a big
    matmul is held a second, so a job queued behind one is surely not done when asked)."""
    real_take, real_matmul = job_table.JobTable.take_result, table.BY_NAME["matmul"].fn

    def take_result(self, job_id):
        with self._lock:
            job = self._jobs.get(job_id)
            if job is not None and job.state in (job_table.QUEUED, job_table.RUNNING):
                raise WorkerError("NO_SUCH_JOB", f"no job {job_id}")
        return real_take(self, job_id)

    def matmul(q, a, b):
        if a.size >= 10_000:
            time.sleep(1)
        return real_matmul(q, a, b)
    job_table.JobTable.take_result = take_result
    _kernel("matmul", matmul)


MUTANTS = {f.__name__: f for f in (floor_div, saturating_add, trap_min_div, sigmoid_shift,
                                   float_matmul, wrong_axis, transpose_in_place, lying_status,
                                   stale_answer, stall_on_tanh, crash_on_softmax, concat_swapped,
                                   relu_leaky, never_busy, int8_wraps, ready_early)}


def apply(name: str) -> None:
    MUTANTS[name]()


# The cases aimed at each defect (a case id prefix): certifying only those must catch it.
AIMED_AT = {"floor_div": "ops/div/", "saturating_add": "ops/add/", "trap_min_div": "ops/div/",
            "sigmoid_shift": "ops/sigmoid/", "float_matmul": "ops/matmul/",
            "wrong_axis": "ops/tensor_sum/", "transpose_in_place": "ops/transpose/",
            "lying_status": "ops/tanh/", "stale_answer": "ops/add/",
            "stall_on_tanh": "ops/tanh/", "crash_on_softmax": "ops/softmax/",
            "concat_swapped": "ops/concat/", "relu_leaky": "ops/relu/",
            "never_busy": "protocol/busy", "int8_wraps": "protocol/exec_failed",
            "ready_early": "protocol/not_ready"}
