"""Maned: the language front end and its deliberately simple pure-Python reference.

`maned.run(path_or_source=...)` runs a script and returns a `Report` (docs/api.md)."""

from bark_vm.version import __version__  # noqa: E402  (one home, with the tools)

from .dispatch.device_specs import DeviceOverride  # noqa: E402
from .pipeline.report import Report  # noqa: E402
from .pipeline.run_api import run  # noqa: E402
from .targets.discovery import Probing  # noqa: E402
from .tensor import Tensor  # noqa: E402

__all__ = ["DeviceOverride", "Probing", "Report", "Tensor", "run", "__version__"]
