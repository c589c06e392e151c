"""A flow's golden wire pair, the fixture library of mnpk-gen, conformance and the
benchmarks: its MNPK request at an ABI and the MNRS the local interpreter expects, and the
four named mutations of a good request (spec/wire-golden.md §6.2 [W16])."""
from bark_vm.wire import ir as wire_ir
from bark_vm.wire.constants import INSTR_BYTES, IR_HEADER_BYTES, MNPK_HEADER_BYTES
from bark_vm.wire.envelope import decode_request, encode_result
from bark_vm.wire.opcodes import BY_NUMBER

from ..diagnostics import Diagnostic, MnError
from ..interp.evaluate import FAILED, evaluate
from ..lang import ast
from ..catalogue import OpContext
from ..failures import Refused
from ..tensor import Tensor
from .envelopes import encode_job, job_quant, result_entries
from .lower import lower

MUTATIONS = ("bad_magic", "bad_truncated", "bad_shape", "unsupported_op")
# The documented golden flow's inputs (examples/matmul_relu.mnd's layer, wire-golden §6.2).
DEFAULTS = {"x": "2x2:1,2,3,4", "w": "2x2:5,6,7,8", "bias": "2x2:0,0,-100,0"}


def _error(code: str, msg: str) -> MnError:
    return MnError(Diagnostic(code, msg, stage="run"))


def build_fixture(program: ast.Program, graph, inputs: list[Tensor], abi: int):
    """The golden pair of one flow: its MNPK request at `abi` and the MNRS the local
    interpreter expects. (lowered, mnpk, mnrs, quant block, local outputs); MnError."""
    try:
        lowered = lower(graph, abi)
    except Refused as e:
        raise _error("ELIMIT" if e.limit else "EPLAN", e.message) from None
    try:
        mnpk = encode_job(lowered, inputs, program.quant)
        quant = job_quant(program.quant)
    except Refused as e:
        raise _error("EPLAN", f"flow '{graph.flow}': {e.message}") from None
    try:
        local = evaluate(graph, dict(zip(graph.params, inputs)), {},
                         OpContext(program.quant.quantres))
    except FAILED as e:
        raise _error("ERUN", f"flow '{graph.flow}': {e.message}") from None
    try:
        mnrs = encode_result(result_entries(lowered, local), quant.dtype)
    except ValueError as e:
        raise _error("ERUN", f"flow '{graph.flow}': the expected result cannot travel in the "
                     f"envelope: {e}") from None
    return lowered, mnpk, mnrs, quant, local


def mutate(mnpk: bytes, which: str, module: wire_ir.Module) -> bytes:
    """One mutation of a good request; ValueError when it cannot be derived."""
    b = bytearray(mnpk)
    first_entry = MNPK_HEADER_BYTES + len(decode_request(mnpk).ir)
    if which == "bad_magic":
        b[0] = ord("X")
    elif which == "bad_truncated":
        del b[-8:]
    elif which == "bad_shape":
        at = first_entry
        if len(b) < at + 4 or b[at + 2] != 2:
            raise ValueError("bad_shape needs a rank-2 first input")
        a = int.from_bytes(b[at + 4:at + 8], "little")
        c = int.from_bytes(b[at + 8:at + 12], "little")
        if a * c == 1:
            raise ValueError("bad_shape needs a first input of more than one element")
        dims = (a * c, 1) if a == 1 else (1, a * c)
        b[at + 4:at + 12] = dims[0].to_bytes(4, "little") + dims[1].to_bytes(4, "little")
    elif which == "unsupported_op":
        isize = INSTR_BYTES[module.version]
        k = next((k for k, i in enumerate(module.instrs) if i.opcode == wire_ir.MATMUL), None)
        if k is None:  # no matmul: the first compute instruction
            k = next((k for k, i in enumerate(module.instrs)
                      if BY_NUMBER[i.opcode].mnemonic), None)
        if k is None:
            raise ValueError("unsupported_op needs a compute instruction in the flow")
        b[MNPK_HEADER_BYTES + IR_HEADER_BYTES + k * isize] = wire_ir.QUANTIZE
    else:
        raise ValueError(f"unknown mutation {which}")
    return bytes(b)
