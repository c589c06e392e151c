"""Running a decoded, validated module (wire-golden §1.3-1.5, §6.1 step 7).

PARAM k binds inputs[k]; CONST is a `[1]` register holding its sign-extended literal (v1: 0);
SYNC is a no-op (levels matter only to a parallel worker); RETURN ends; the result is the
output table's registers. Every failure is a WorkerError: SHAPE_MISMATCH for an operand
shape an op cannot take, EXEC_FAILED for anything else.

A module is first turned into a plan: each instruction's kernel, registers and parameters
resolved once, and every failure the module's text decides (an opcode without a kernel, a
read of a value nothing defined) placed where the instruction loop would meet it. Plans are
kept for the modules the worker's program cache hands out again, so a round chain's program
is planned once.
"""
from dataclasses import dataclass

import numpy as np

from ..kept import Kept
from ..wire import ir
from ..wire.constants import PROGRAMS_KEPT, WorkerError
from .ints import I32, INT32_MAX, INT32_MIN, dims, failed
from .footprint import footprint
from .table import KERNELS

PARAM_STEP, CONST_STEP, KERNEL_STEP, FAIL_STEP = range(4)


@dataclass(frozen=True)
class Plan:
    steps: tuple[tuple, ...]  # (PARAM_STEP, dst, k) | (CONST_STEP, dst, array) |
    #                   (KERNEL_STEP, dst, fn, srcs, params, name) | (FAIL_STEP, code, detail)
    registers: int            # one more than the highest register id
    outputs: tuple[int, ...]


def _register(value, k: int) -> np.ndarray:
    """An input as an int32 register of rank ≥ 1 (values must already fit int32)."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu":
        raise failed(f"input {k} has dtype {arr.dtype}, not an integer type")
    if arr.dtype.itemsize > 4 or arr.dtype == np.uint32:
        if arr.size and (int(arr.min()) < INT32_MIN or int(arr.max()) > INT32_MAX):
            raise failed(f"input {k} holds values outside int32")
    arr = np.ascontiguousarray(arr.astype(I32, copy=False))
    return arr.reshape(1) if arr.ndim == 0 else arr


def _const(value: int) -> np.ndarray:
    arr = np.full((1,), value, dtype=I32)
    arr.flags.writeable = False  # shared by every run of the plan
    return arr


def fail(detail: str) -> tuple:
    """A step that fails the job with EXEC_FAILED when the run reaches it."""
    return (FAIL_STEP, "EXEC_FAILED", detail)


def plan(module: ir.Module) -> Plan:
    """The module's instructions as steps, up to its RETURN."""
    steps: list[tuple] = []
    defined: set[int] = set()
    params = 0

    def undefined(ids, where) -> tuple | None:
        missing = next((i for i in ids if i not in defined), None)
        return None if missing is None else fail(f"{where} reads undefined value {missing}")

    for pc, instr in enumerate(module.instrs):
        op = instr.opcode
        if op == ir.PARAM:
            steps.append((PARAM_STEP, instr.dst, params))
            params += 1
        elif op == ir.CONST:
            steps.append((CONST_STEP, instr.dst,
                          _const(ir.const_value(instr) if module.version >= 2 else 0)))
        elif op == ir.SYNC:
            continue
        elif op == ir.RETURN:
            break
        else:
            kernel = KERNELS.get(op)
            if kernel is None:
                steps.append(fail(f"instruction {pc}: opcode 0x{op:02x} cannot be executed"))
                break
            srcs = tuple(ir.registers(instr, module.version))
            missing = undefined(srcs, f"instruction {pc} ({kernel.name})")
            if missing:
                steps.append(missing)
                break
            try:
                fields = kernel.params(instr)
            except WorkerError as e:
                steps.append((FAIL_STEP, e.code, e.detail))
                break
            except Exception as e:  # as execute() words any other failure
                steps.append(fail(f"{type(e).__name__}: {e}"))
                break
            steps.append((KERNEL_STEP, instr.dst, kernel.fn, srcs, fields, kernel.name))
        defined.add(instr.dst)
    if not (steps and steps[-1][0] == FAIL_STEP):
        missing = undefined(module.outputs, "the output table")
        if missing:
            steps.append(missing)
    ids = [s[1] for s in steps if s[0] != FAIL_STEP] + list(module.outputs)
    return Plan(tuple(steps), max(ids, default=-1) + 1, tuple(module.outputs))


def _mib(n: int) -> str:
    return f"{n / (1 << 20):,.0f} MiB" if n >= 1 << 20 else f"{n:,} bytes"


def over_budget(name: str, args, held: int, need: int, budget: int) -> WorkerError:
    """TOO_LARGE naming the instruction, the estimate and the budget."""
    operands = " x ".join(dims(a.shape) for a in args)
    return WorkerError("TOO_LARGE", f"{name} {operands} would need about {_mib(need)} more, "
                       f"and the job already holds {_mib(held)}: over this worker's memory "
                       f"budget of {_mib(budget)} for one job (--max-job-memory)")


PLANS = Kept(PROGRAMS_KEPT)  # by module: the program cache hands the same module out again


def execute(module: ir.Module, inputs: list, quantres: int,
            budget: int | None = None) -> list[np.ndarray]:
    """Run `module` on `inputs` at quantres q; the output table's registers as int32 arrays.
    With `budget` (bytes), an instruction that would take the job over it is refused
    (TOO_LARGE) before its kernel runs."""
    try:
        return run(PLANS.of(module, plan), list(inputs), int(quantres), budget)
    except WorkerError:
        raise
    except MemoryError:
        raise failed("out of memory") from None
    except Exception as exc:  # a bug or an unforeseen operand: still a worker answer
        raise failed(f"{type(exc).__name__}: {exc}") from None


def run(p: Plan, inputs: list, q: int, budget: int | None = None) -> list[np.ndarray]:
    regs: list = [None] * p.registers
    held = sum(np.asarray(x).nbytes for x in inputs)  # the request's tensors
    for step in p.steps:
        kind = step[0]
        if kind == KERNEL_STEP:
            _, dst, fn, srcs, params, name = step
            args = [regs[s] for s in srcs]
            if budget is not None:
                need = footprint(name, args, params)
                if held + need > budget:
                    raise over_budget(name, args, held, need, budget)
            out = fn(q, *args, **params)
            if out.dtype != I32 or out.ndim == 0:
                raise failed(f"{name} produced {out.dtype} {dims(out.shape)}")
            regs[dst] = out
            held += out.nbytes
        elif kind == PARAM_STEP:
            _, dst, k = step
            if k >= len(inputs):
                raise failed(f"PARAM {k} has no input ({len(inputs)} given)")
            regs[dst] = _register(inputs[k], k)
            if not np.may_share_memory(regs[dst], inputs[k]):  # a converted copy
                held += regs[dst].nbytes
        elif kind == CONST_STEP:
            regs[step[1]] = step[2]
        else:
            raise WorkerError(step[1], step[2])
    return [regs[i] for i in p.outputs]
