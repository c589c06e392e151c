"""The numpy executor of the Bark worker: runs a decoded, validated IR module (DESIGN D1, R7).

`execute(module, inputs, quantres)` is the whole surface; `KERNELS` maps each of the 33
compute opcodes to its kernel (one module per family). Never imports `maned`.
"""
from .interpreter import execute
from .table import BY_NAME, KERNELS, Kernel

__all__ = ["execute", "KERNELS", "BY_NAME", "Kernel"]
