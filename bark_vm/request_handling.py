"""The request handling every worker of ours runs (bark-vm over stdio, bark-worker over HTTP).

`handle(raw, config)` follows wire-golden §6.1 [W15] exactly; the first failure is the
answer, as a `WorkerError` carrying its CDP code:
  1 size (TOO_LARGE) · 2 envelope · 3 IR header (BAD_ENVELOPE) · 4 capability
  (UNSUPPORTED_OP, naming the missing mnemonics in first-use order) · 5 instructions ·
  6 binding (BAD_ENVELOPE) · 7 execution (SHAPE_MISMATCH / EXEC_FAILED) · 8 MNRS status 0.
"""
import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass

from .wire.constants import (
    DEFAULT_ABI, DEFAULT_MAX_JOB_MEMORY, DEFAULT_MAX_PAYLOAD, MAX_RANK, PROGRAMS_KEPT, RF_SLOTS,
    WorkerError)
from .wire.dtypes import DTYPE_NAME, DTYPE_RANGE, ELEM_BYTES
from .wire.envelope import Request, decode_request, encode_result
from .wire.ir import PARAM, V2_ONLY, Module, missing_ops, parse_module, validate_module
from .wire.opcodes import BY_MNEMONIC, COMPUTE_MNEMONICS
from .wire.status import Status, encode_status


def ops_for(abi: int) -> tuple[str, ...]:
    """The compute mnemonics a worker of this ABI advertises, in opcode order (wire-golden §8):
    33 under ABI 2, 30 under ABI 1 (no reshape, split, batchnorm)."""
    if abi not in RF_SLOTS:
        raise ValueError(f"ABI {abi} is not 1 or 2")
    if abi == 2:
        return COMPUTE_MNEMONICS
    return tuple(m for m in COMPUTE_MNEMONICS if BY_MNEMONIC[m].number not in V2_ONLY)


@dataclass(frozen=True)
class WorkerConfig:
    alias: str = "bark-vm"
    kind: str = "vm"
    abi: int = DEFAULT_ABI
    max_payload: int = DEFAULT_MAX_PAYLOAD
    capacity: int = 1
    max_job_memory: int = DEFAULT_MAX_JOB_MEMORY  # bytes; an instruction past it: TOO_LARGE

    @property
    def ops(self) -> tuple[str, ...]:
        return ops_for(self.abi)

    @property
    def rf_slots(self) -> int:
        return RF_SLOTS[self.abi]

    def status(self, uptime_s: int = 0, requests: int = 0, jobs_running: int = 0,
               **worker_counters) -> Status:
        """The status record (HELO payload / GET /api/status); bark-worker passes
        jobs_sync, jobs_async and jobs_done."""
        return Status(alias=self.alias, kind=self.kind, uptime_s=uptime_s, requests=requests,
                      jobs_running=jobs_running, jobs_capacity=self.capacity, ops=self.ops,
                      max_payload=self.max_payload, ir=self.abi, rf_slots=self.rf_slots,
                      **worker_counters)

    def status_json(self, **kw) -> bytes:
        return encode_status(self.status(**kw))


class Programs:
    """Validated programs by the SHA-256 of their IR bytes and the worker's ABI (DESIGN §9):
    a round chain sends one program many times, and parsing and validating it again would
    answer the same. A miss is steps 3-5 as written; nothing on the wire changes."""

    def __init__(self, size: int = PROGRAMS_KEPT):
        self.size, self._lock, self._known = size, threading.Lock(), OrderedDict()

    def checked(self, ir: bytes, config: WorkerConfig) -> Module:
        key = (hashlib.sha256(ir).digest(), config.abi)
        with self._lock:
            module = self._known.get(key)
            if module is not None:
                self._known.move_to_end(key)
                return module
        module = parse_module(ir, config.abi)
        missing = missing_ops(module, config.ops)
        if missing:
            raise WorkerError("UNSUPPORTED_OP", "this worker does not support: "
                              + ", ".join(missing))
        validate_module(module, config.rf_slots)
        with self._lock:
            self._known[key] = module
            if len(self._known) > self.size:
                self._known.popitem(last=False)
        return module


PROGRAMS = Programs()


def check_request(raw: bytes, config: WorkerConfig) -> tuple[Request, Module]:
    """Steps 1-6: everything short of execution."""
    if len(raw) > config.max_payload:
        raise WorkerError("TOO_LARGE", f"request of {len(raw)} bytes is over max_payload "
                          f"{config.max_payload}")
    request = decode_request(raw, buffers=True)
    module = PROGRAMS.checked(request.ir, config)
    params = sum(1 for i in module.instrs if i.opcode == PARAM)
    if params != len(request.entries):
        raise WorkerError("BAD_ENVELOPE", f"the module has {params} PARAMs but the request "
                          f"carries {len(request.entries)} tensors")
    return request, module


def execute_request(request: Request, module: Module,
                    max_job_memory: int = DEFAULT_MAX_JOB_MEMORY) -> bytes:
    """Step 7-8: run the module on the entries, answer the MNRS (status 0). Whatever fails
    on the way, memory included, is a WorkerError: every job ends in an answer. An
    instruction that would take the job over `max_job_memory` bytes is TOO_LARGE before
    it runs."""
    try:
        return _execute_request(request, module, max_job_memory)
    except WorkerError:
        raise
    except MemoryError:
        raise WorkerError("EXEC_FAILED", "out of memory while running the job or encoding "
                          "its result") from None
    except Exception as e:  # a worker answers; it never dies on a job
        raise WorkerError("EXEC_FAILED", f"{type(e).__name__}: {e}") from None


def _execute_request(request: Request, module: Module, max_job_memory: int) -> bytes:
    import numpy as np

    from .executor import execute

    dtype = request.quant.dtype
    wire = np.dtype(f"<i{ELEM_BYTES[dtype]}")
    inputs = [np.frombuffer(data, dtype=wire).reshape(shape) for shape, data in request.entries]
    outputs = execute(module, inputs, request.quant.quantres, max_job_memory)
    if len(outputs) != len(module.outputs):
        raise WorkerError("EXEC_FAILED", f"the executor returned {len(outputs)} outputs, "
                          f"expected {len(module.outputs)}")
    lo, hi = DTYPE_RANGE[dtype]
    entries = []
    for k, out in enumerate(outputs):
        arr = np.asarray(out)
        shape = tuple(int(d) for d in arr.shape)
        if not 1 <= len(shape) <= MAX_RANK or 0 in shape:
            raise WorkerError("EXEC_FAILED", f"output {k} has shape {list(shape)}, which no "
                              "tensor entry can carry")
        if not lo <= int(arr.min()) <= int(arr.max()) <= hi:
            bad = int(arr[(arr < lo) | (arr > hi)].reshape(-1)[0])
            raise WorkerError("EXEC_FAILED", outside_envelope(k, bad, request.quant, lo,
                                                              hi))
        entries.append((shape, arr.astype(wire).tobytes()))
    return encode_result(entries, dtype)


def handle(raw: bytes, config: WorkerConfig) -> bytes:
    """One request to its MNRS bytes; raises WorkerError (wire-golden §6.1)."""
    request, module = check_request(raw, config)
    return execute_request(request, module, config.max_job_memory)


def outside_envelope(k: int, value: int, quant, lo: int, hi: int) -> str:
    """Why output k cannot travel, and how the script widens its wire type (the words of
    the coordinator's own refusal of an input, so both sides say the same)."""
    return (f"output {k} holds {value}, outside the {DTYPE_NAME[quant.dtype]} envelope "
            f"[{lo}, {hi}] that quantmin {quant.quantmin}, quantmax {quant.quantmax} and "
            f"quantres {quant.quantres} choose for routed values; widen mnd::quantmin/"
            "mnd::quantmax (a range over 8 bits travels as int32) to route it")
