"""Running a decoded, validated module (wire-golden §1.3-1.5, §6.1 step 7).

PARAM k binds inputs[k]; CONST is a `[1]` register holding its sign-extended literal (v1: 0);
SYNC is a no-op (levels matter only to a parallel worker); RETURN ends; the result is the
output table's registers. Every failure is a WorkerError: SHAPE_MISMATCH for an operand
shape an op cannot take, EXEC_FAILED for anything else.
"""
import numpy as np

from ..wire import ir
from ..wire.constants import WorkerError
from .ints import I32, INT32_MAX, INT32_MIN, dims, failed
from .table import KERNELS


def _register(value, k: int) -> np.ndarray:
    """An input as an int32 register of rank ≥ 1 (values must already fit int32)."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu":
        raise failed(f"input {k} has dtype {arr.dtype}, not an integer type")
    if arr.dtype.itemsize > 4 or arr.dtype == np.uint32:
        if arr.size and (int(arr.min()) < INT32_MIN or int(arr.max()) > INT32_MAX):
            raise failed(f"input {k} holds values outside int32")
    arr = np.ascontiguousarray(arr.astype(I32))
    return arr.reshape(1) if arr.ndim == 0 else arr


def execute(module: ir.Module, inputs: list, quantres: int) -> list[np.ndarray]:
    """Run `module` on `inputs` at quantres q; the output table's registers as int32 arrays."""
    try:
        return _execute(module, list(inputs), int(quantres))
    except WorkerError:
        raise
    except MemoryError:
        raise failed("out of memory") from None
    except Exception as exc:  # a bug or an unforeseen operand: still a worker answer
        raise failed(f"{type(exc).__name__}: {exc}") from None


def _execute(module: ir.Module, inputs: list, q: int) -> list[np.ndarray]:
    regs: dict[int, np.ndarray] = {}
    params = 0

    def read(ids, where):
        try:
            return [regs[i] for i in ids]
        except KeyError as missing:
            raise failed(f"{where} reads undefined value {missing}") from None

    for pc, instr in enumerate(module.instrs):
        op = instr.opcode
        if op == ir.PARAM:
            if params >= len(inputs):
                raise failed(f"PARAM {params} has no input ({len(inputs)} given)")
            regs[instr.dst] = _register(inputs[params], params)
            params += 1
        elif op == ir.CONST:
            value = ir.const_value(instr) if module.version >= 2 else 0
            regs[instr.dst] = np.full((1,), value, dtype=I32)
        elif op == ir.SYNC:
            continue
        elif op == ir.RETURN:
            break
        else:
            kernel = KERNELS.get(op)
            if kernel is None:
                raise failed(f"instruction {pc}: opcode 0x{op:02x} cannot be executed")
            args = read(ir.registers(instr, module.version), f"instruction {pc} ({kernel.name})")
            out = kernel.fn(q, *args, **kernel.params(instr))
            if out.dtype != I32 or out.ndim == 0:
                raise failed(f"{kernel.name} produced {out.dtype} {dims(out.shape)}")
            regs[instr.dst] = out
    return read(module.outputs, "the output table")
