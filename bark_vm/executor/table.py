"""The kernel table: one row per compute opcode (wire-golden §1.4), keyed by opcode number.

A row names the kernel `fn(q, *operands, **params)` (the same operands and parameters as the
reference op of that name) and how the instruction's immediate fields become `params`.
Which fields are registers is `bark_vm.wire.ir.registers`' business.
"""
from dataclasses import dataclass
from typing import Callable

from ..wire import ir
from ..wire.opcodes import BY_MNEMONIC
from . import activation, elementwise, linalg, nn, reduce, shape


@dataclass(frozen=True)
class Kernel:
    name: str                         # the worker mnemonic (= the reference op name)
    fn: Callable                      # fn(q, *operands, **params) -> int32 ndarray
    params: Callable[[ir.Instr], dict]


def _none(instr: ir.Instr) -> dict:
    return {}


def _axis(instr: ir.Instr) -> dict:
    return {"axis": ir.axis_param(instr.imm)}


def _concat(instr: ir.Instr) -> dict:
    return {"axis": ir.concat_axis(instr.imm)}


def _conv(instr: ir.Instr) -> dict:
    stride, padding = ir.conv_params(instr.imm)
    return {"stride": stride, "padding": padding}


def _pool(instr: ir.Instr) -> dict:
    kernel, stride = ir.pool_params(instr.imm)
    return {"kernel_size": kernel, "stride": stride}


def _reshape(instr: ir.Instr) -> dict:
    return {"shape": ir.reshape_dims(instr)}


def _split(instr: ir.Instr) -> dict:
    axis, sections, index = ir.split_selector(instr)
    return {"axis": axis, "sections": sections, "index": index}


_ROWS = (
    ("matmul", linalg.matmul, _none),
    ("add", elementwise.add, _none),
    ("sub", elementwise.sub, _none),
    ("mul", elementwise.mul, _none),
    ("div", elementwise.div, _none),
    ("scalar_mul", elementwise.scalar_mul, _none),
    ("relu", activation.relu, _none),
    ("sigmoid", activation.sigmoid, _none),
    ("tanh", activation.tanh, _none),
    ("softmax", activation.softmax, _axis),
    ("conv2d", nn.conv2d, _conv),
    ("maxpool2d", nn.maxpool2d, _pool),
    ("avgpool2d", nn.avgpool2d, _pool),
    ("transpose", linalg.transpose, _none),
    ("concat", shape.concat, _concat),
    ("reshape", shape.reshape, _reshape),
    ("split", shape.split, _split),
    ("layernorm", nn.layernorm, _none),
    ("batchnorm", nn.batchnorm, _none),
    ("tensor_sum", reduce.tensor_sum, _axis),
    ("tensor_mean", reduce.tensor_mean, _axis),
    ("tensor_max", reduce.tensor_max, _axis),
    ("tensor_min", reduce.tensor_min, _axis),
    ("gt", elementwise.gt, _none),
    ("lt", elementwise.lt, _none),
    ("eq", elementwise.eq, _none),
    ("ge", elementwise.ge, _none),
    ("le", elementwise.le, _none),
    ("ne", elementwise.ne, _none),
    ("and", elementwise.logical_and, _none),
    ("or", elementwise.logical_or, _none),
    ("xor", elementwise.logical_xor, _none),
    ("not", elementwise.logical_not, _none),
)

KERNELS: dict[int, Kernel] = {BY_MNEMONIC[n].number: Kernel(n, fn, p) for n, fn, p in _ROWS}
BY_NAME: dict[str, Kernel] = {k.name: k for k in KERNELS.values()}
