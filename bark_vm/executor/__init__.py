"""The numpy executor of the Bark worker: runs a decoded, validated IR module (DESIGN D1, R7).

`execute(module, inputs, quantres)` is the whole surface; `KERNELS` maps each of the 33
compute opcodes to its kernel (one module per family). Never imports `maned`.
"""
import importlib

__all__ = ["execute", "KERNELS", "BY_NAME", "Kernel"]
_HOMES = {"execute": ".interpreter", "KERNELS": ".table", "BY_NAME": ".table",
          "Kernel": ".table"}  # loaded on first use: the local engine needs only the kernels


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module 'bark_vm.executor' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name], __name__), name)
