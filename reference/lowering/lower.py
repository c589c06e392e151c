"""Lower a flow graph to a binary-IR module at one ABI (spec/wire-golden.md §1.1-1.4, D4).

Constants the instruction stream cannot carry are hoisted into extra PARAMs right after the
flow's own parameters, in graph order [W5]: every tensor literal; under v2 a scalar outside
int16; under v1 every non-zero scalar. Object parameters become the fields of §1.4 [W7],
refused when out of range [W11]. Every refusal is `Refused`, naming the flow;
`limit=True` marks the budget refusals a caller reports as ELIMIT.
"""
from dataclasses import dataclass

from bark_vm.wire import ir
from bark_vm.wire.constants import (ABSENT_DIM, MAX_DIM, MAX_LEVEL, MAX_RANK, MAX_TENSORS,
                                    RF_SLOTS)
from bark_vm.wire.ir import Instr, Module
from bark_vm.wire.opcodes import opcode_for

from ..graph.flow_graph import FlowGraph, Node
from ..catalogue import BY_NAME
from ..failures import Refused
from ..tensor import Tensor


@dataclass(frozen=True)
class Lowered:
    graph: FlowGraph
    abi: int
    module: Module
    hoisted: tuple[Tensor, ...]   # travel after the flow's params, in this order
    value_ids: tuple[int, ...]    # graph node id -> register
    ir: bytes                     # the module's bytes, encoded once

    @property
    def tensor_count(self) -> int:
        return len(self.graph.params) + len(self.hoisted)


def hoists(value: Tensor, abi: int) -> bool:
    """Whether a literal must travel as an input tensor rather than a CONST (§1.2)."""
    return bool(value.rank) or not ir.const_fits(value.data[0], abi)


def lower(graph: FlowGraph, abi: int) -> Lowered:
    if abi not in RF_SLOTS:
        raise ValueError(f"ABI {abi} is not 1 or 2")
    f = graph.flow
    nodes = graph.nodes
    for n in nodes:
        _refuse_node(f, n, abi)
    params = [n for n in nodes if n.kind == "param"]
    hoisted = [n for n in nodes if n.kind == "const" and hoists(n.value, abi)]
    rest = [n for n in nodes if n.kind != "param" and not (n.kind == "const"
                                                              and hoists(n.value, abi))]
    order = params + hoisted + rest
    if len(params) + len(hoisted) > MAX_TENSORS:
        raise Refused(
            f"flow '{f}' needs {len(params) + len(hoisted)} input tensors ({len(params)} "
            f"parameters + {len(hoisted)} hoisted constants), but a job carries at most "
            f"{MAX_TENSORS}", limit=True)
    if not graph.outputs:
        raise Refused(f"flow '{f}' returns nothing; a routed flow returns 1..{MAX_TENSORS} "
                            "values")
    if len(graph.outputs) > MAX_TENSORS:
        raise Refused(f"flow '{f}' returns {len(graph.outputs)} values, but a job carries "
                            f"at most {MAX_TENSORS} outputs", limit=True)
    slots = RF_SLOTS[abi]
    if len(order) > slots:
        raise Refused(
            f"flow '{f}' compiles to {len(order)} values, but the target register file has "
            f"{slots} slots (ABI v{abi} RF_SLOTS); split the flow or reduce intermediates",
            limit=True, cause="rf_slots")
    for n in hoisted:
        if n.value.rank > MAX_RANK:  # rank 0 travels as [1]
            raise Refused(f"flow '{f}': constant of shape {list(n.value.shape)} cannot "
                                f"travel (rank 0..{MAX_RANK})")
    reg = {n.id: k for k, n in enumerate(order)}
    instrs: list[Instr] = []
    top = None  # highest level emitted so far
    for n in order:
        level = 0 if n.kind in ("param", "const") else n.level
        if level > MAX_LEVEL[abi]:
            raise Refused(f"flow '{f}' is {level} levels deep, over ABI v{abi}'s "
                                f"{MAX_LEVEL[abi]}", limit=True)
        if top is not None and level > top:
            instrs.append(Instr(ir.SYNC, level=level))
        top = level if top is None else max(top, level)
        instrs.append(_instr(f, n, reg, abi, level))
    outputs = tuple(reg[i] for _, i in graph.outputs)
    instrs.append(Instr(ir.RETURN, dst=outputs[0]))
    module = Module(abi, tuple(instrs), outputs)
    encoded = ir.encode_module(module)  # a field that does not fit its ABI is a bug here
    value_ids = tuple(reg[n.id] for n in nodes)
    return Lowered(graph, abi, module, tuple(n.value for n in hoisted), value_ids, encoded)


def _refuse_node(f: str, n: Node, abi: int) -> None:
    if n.kind == "global":
        raise Refused(f"flow '{f}' reads in::{n.name}; a routed flow receives only its "
                            "parameters - make it a parameter")
    if n.kind != "op":
        return
    if BY_NAME[n.op].kind != "both" or opcode_for(n.op) is None:
        raise Refused(f"flow '{f}': op '{n.op}' has no binary-IR opcode; it cannot be "
                            "routed")
    if abi == 1 and opcode_for(n.op) in ir.V2_ONLY:
        raise Refused(f"flow '{f}': op '{n.op}' cannot be encoded in ABI v1; it needs "
                            "a worker of ABI v2", cause="UNSUPPORTED_OP")


def instruction(f: str, n: Node) -> Instr:
    """An op node as the ABI v2 instruction a worker would decode, its registers the node's
    own value ids: how the in-process engine reads the node's parameters (Refused when
    the wire cannot carry them)."""
    reg = {i: i for i in (n.id, *n.srcs)}
    return _instr(f, n, reg, 2, 0)


def _instr(f: str, n: Node, reg: dict[int, int], abi: int, level: int) -> Instr:
    dst = reg[n.id]
    if n.kind == "param" or (n.kind == "const" and hoists(n.value, abi)):
        return Instr(ir.PARAM, dst=dst)
    if n.kind == "const":
        return Instr(ir.CONST, dst=dst, imm=ir.int16_imm(n.value.data[0]) if abi == 2 else 0)
    code = opcode_for(n.op)
    srcs = [reg[s] for s in n.srcs]
    p = dict(n.params)
    fields = _fields(f, n.op, p)
    if n.op == "batchnorm":
        return Instr(code, dst, tuple(srcs[:4]), srcs[4], level, flags=1)
    if "extra" in fields:  # reshape dims / split selector ride src1..src3 (and imm)
        extra = fields["extra"]
        return Instr(code, dst, (srcs[0], *extra[:3]), extra[3], level)
    padded = (srcs + [0, 0, 0, 0])[:4]
    return Instr(code, dst, tuple(padded), fields.get("imm", 0), level)


def _int(f: str, op: str, key: str, value, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Refused(f"flow '{f}': op '{op}' parameter '{key}' must be an integer, "
                            f"got {value!r}")
    if not lo <= value <= hi:
        raise Refused(f"flow '{f}': op '{op}' parameter '{key}' is {value}, outside "
                            f"{lo}..{hi}")
    return value


def _fields(f: str, op: str, p: dict) -> dict:
    """The immediate (or the free-field values) of one op, per wire-golden §1.4 [W7, W11]."""
    if op in ("softmax", "tensor_sum", "tensor_mean", "tensor_max", "tensor_min"):
        if "axis" not in p:
            return {"imm": 0}
        return {"imm": _int(f, op, "axis", p["axis"], 0, 3) + 1}
    if op == "concat":
        return {"imm": _int(f, op, "axis", p.get("axis", 0), 0, 3) + 1}
    if op == "conv2d":
        if "stride" not in p and "padding" not in p:
            return {"imm": 0}
        # an explicit stride 0 means 1, as it does locally (docs/ops.md §5.1)
        stride = _int(f, op, "stride", p.get("stride", 1), 0, 255) or 1
        padding = _int(f, op, "padding", p.get("padding", 0), 0, 255)
        return {"imm": stride | padding << 8}
    if op in ("maxpool2d", "avgpool2d"):
        if "kernel_size" not in p:
            raise Refused(f"flow '{f}': op '{op}' needs {{kernel_size: k}} to be routed")
        k = _int(f, op, "kernel_size", p["kernel_size"], 1, 255)
        s = _int(f, op, "stride", p.get("stride", k), 1, 255)
        return {"imm": k | s << 8}
    if op == "reshape":
        return {"extra": _reshape_fields(f, p)}
    if op == "split":
        axis = _int(f, op, "axis", p.get("axis", 0), 0, 3)
        if "sections" not in p:
            raise Refused(f"flow '{f}': op 'split' needs {{sections: n}}")
        count = _int(f, op, "sections", p["sections"], 1, 0xFFFF)
        index = _int(f, op, "index", p.get("index", 0), 0, count - 1)
        return {"extra": (axis, count, index, 0)}
    return {"imm": 0}


def _reshape_fields(f: str, p: dict) -> tuple[int, int, int, int]:
    shape, rows, cols = p.get("shape"), p.get("rows"), p.get("cols")
    if shape is not None and (rows is not None or cols is not None):
        raise Refused(f"flow '{f}': op 'reshape' takes {{rows, cols}} or {{shape}}, "
                            "not both")
    if shape is not None:
        dims = (shape,) if isinstance(shape, int) else tuple(shape)
    elif rows is not None and cols is not None:
        dims = (rows, cols)
    else:
        raise Refused(f"flow '{f}': op 'reshape' needs {{rows: R, cols: C}} or "
                            "{shape: [d1, ...]}")
    if not 1 <= len(dims) <= MAX_RANK:
        raise Refused(f"flow '{f}': op 'reshape' target has {len(dims)} dims, not "
                      f"1..{MAX_RANK}")
    dims = tuple(_int(f, "reshape", "shape", d, 1, MAX_DIM) for d in dims)
    return tuple(dims) + (ABSENT_DIM,) * (MAX_RANK - len(dims))
