"""What a job costs the worker in memory (issue 13, defect 4): tensors are decoded from and
encoded into their own bytes (numpy `frombuffer`/`tobytes`), never one Python object per
element. Measured with tracemalloc, which numpy reports its buffers to: allocation sizes, not
times, so the bound holds on any machine."""
import tracemalloc

import numpy as np

from bark_vm.pipeline import WorkerConfig, handle
from bark_vm.wire.envelope import decode_result, encode_request
from maned.lowering.envelopes import job_quant
from maned.lowering.lower import lower
from maned.pipeline.compile import compile_script

INT8_HEAD = "mnd::quantmax=100;\nmnd::quantmin=-100;\nmnd::quantres=0;\n"


def relu_request(n: int) -> tuple[bytes, np.ndarray]:
    """An int8 envelope carrying n values through relu, and the values."""
    checked = compile_script(INT8_HEAD + "calc::lambda_flow f(a) {\n    a relu r =\n} return r;\n")
    values = np.random.default_rng(7).integers(-100, 101, n, dtype=np.int8)
    raw = encode_request(job_quant(checked.program.quant), lower(checked.graphs["f"], 2).ir,
                         [((n,), tuple(values.tolist()))])
    return raw, values


def test_a_large_int8_envelope_costs_bytes_per_element_not_objects():
    """4 Mi int8 values: the worker's peak is the request, its int32 registers and the
    answer (16 bytes an element), where a Python int per element cost 55."""
    n = 1 << 22
    raw, values = relu_request(n)
    handle(raw, WorkerConfig())  # warm: imports and the program cache
    tracemalloc.start()
    try:
        answer = handle(raw, WorkerConfig())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak / n < 24
    (shape, data), = decode_result(answer).entries
    assert shape == (n,) and data == tuple(np.maximum(values, 0).tolist())
