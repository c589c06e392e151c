"""Maned: the language front end and its deliberately simple pure-Python reference.

`maned.run(path_or_source=...)` runs a script and returns a `Report` (docs/api.md). The
names below load on first use, so that a console tool's entry (maned.cli.console) runs
before the pipeline is imported, and takes Ctrl-C from its first moment."""
import importlib

# name -> the module that is its one home
_HOMES = {
    "__version__": "bark_vm.version",
    "DeviceOverride": "maned.devices.specs",
    "Report": "maned.pipeline.report",
    "run": "maned.pipeline.run_api",
    "Probing": "maned.devices.discovery",
    "Tensor": "maned.tensor",
}

__all__ = ["DeviceOverride", "Probing", "Report", "Tensor", "run", "__version__"]


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module 'maned' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
