"""The project's version, one home (pyproject reads it), and the `--version` text every
tool prints: `<tool> <version>` then a build line."""
import platform
import sys

__version__ = "0.1.0"


def version_text(tool: str) -> str:
    impl = platform.python_implementation()
    py = ".".join(str(v) for v in sys.version_info[:3])
    return f"{tool} {__version__}\nbuild: {impl} {py} ({platform.system()} {platform.machine()})\n"
