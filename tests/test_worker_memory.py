"""What a job costs the worker in memory (issue 13, defect 4): tensors are decoded from and
encoded into their own bytes (numpy `frombuffer`/`tobytes`), never one Python object per
element. Measured with tracemalloc, which numpy reports its buffers to: allocation sizes, not
times, so the bound holds on any machine."""
import tracemalloc

import numpy as np
import pytest

from bark_vm.executor.footprint import REGISTER_BYTES, WIDE_BYTES, footprint
from bark_vm.request_handling import WorkerConfig, handle
from bark_vm.wire.constants import DEFAULT_MAX_JOB_MEMORY, WorkerError
from bark_vm.wire.envelope import decode_result, encode_request
from maned.lowering.envelopes import job_quant
from maned.lowering.lower import lower
from maned.pipeline.intake import compile_script

from support.envelopes import outer_product_request
from support.scripts import H0, H8


def relu_request(n: int) -> tuple[bytes, np.ndarray]:
    """An int8 envelope carrying n values through relu, and the values."""
    checked = compile_script(H8 + "calc::lambda_flow f(a) {\n    a relu r =\n} return r;\n")
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


def test_a_job_over_the_memory_budget_is_too_large_before_its_kernel_allocates():
    """Issue 13, defect 4: a 256 KB request for a 32768 x 32768 product (4 GiB of int32 on
    numpy's loop, which issue 35's path rule picks for an outer product) is TOO_LARGE under
    the default budget, the detail naming the estimate and the budget, and the worker
    allocated almost nothing for it."""
    raw = outer_product_request(32768)
    tracemalloc.start()
    try:
        try:
            handle(raw, WorkerConfig())
            refused = None
        except WorkerError as e:
            refused = e
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert refused is not None and refused.code == "TOO_LARGE"
    assert refused.detail.startswith("matmul [32768, 1] x [1, 32768] would need about 4,096 MiB")
    budget = f"{DEFAULT_MAX_JOB_MEMORY >> 20:,} MiB"
    assert refused.detail.endswith(f"over this worker's memory budget of {budget} for one job "
                                   "(--max-job-memory)")
    assert peak < 8 * len(raw)


def test_the_budget_is_configurable_and_never_changes_a_number():
    raw = outer_product_request(1024)
    with pytest.raises(WorkerError) as e:  # its 4 MiB product is over a 2 MiB budget
        handle(raw, WorkerConfig(max_job_memory=2 << 20))
    assert e.value.code == "TOO_LARGE" and "budget of 2 MiB" in e.value.detail
    (shape, data), = decode_result(handle(raw, WorkerConfig(max_job_memory=64 << 20))).entries
    col = [(7 * i) % 2001 - 1000 for i in range(1024)]
    assert shape == (1024, 1024)
    assert data[:1024] == tuple(col[0] * c for c in col) and data[-1] == col[-1] * col[-1]


def test_a_one_channel_conv2d_is_counted_like_its_channel_form():
    """conv2d takes [H, W] and a [KH, KW] kernel as one channel: the estimate is the same
    as for [1, H, W] and [1, 1, KH, KW], not zero."""
    flat = footprint("conv2d", [np.zeros((64, 48), np.int32), np.zeros((3, 5), np.int32)],
                     {"padding": 1})
    chan = footprint("conv2d", [np.zeros((1, 64, 48), np.int32),
                                np.zeros((1, 1, 3, 5), np.int32)], {"padding": 1})
    assert flat == chan > 64 * 48 * WIDE_BYTES


def test_an_int32_input_is_held_once():
    """An int32 input is its register, not a copy: a budget of the input plus the relu's
    estimate runs, one byte less is TOO_LARGE."""
    checked = compile_script(H0 + "calc::lambda_flow f(a) {\n    a relu r =\n} return r;\n")
    n = 4096
    values = tuple(range(-n // 2, n // 2))
    quant = job_quant(checked.program.quant)
    raw = encode_request(quant, lower(checked.graphs["f"], 2).ir, [((n,), values)])
    need = n * REGISTER_BYTES + footprint("relu", [np.zeros(n, np.int32)], {})
    (shape, data), = decode_result(handle(raw, WorkerConfig(max_job_memory=need))).entries
    assert data == tuple(max(v, 0) for v in values)
    with pytest.raises(WorkerError) as e:
        handle(raw, WorkerConfig(max_job_memory=need - 1))
    assert e.value.code == "TOO_LARGE"
