"""`--version` text shared by the tools: `<tool> <version>` then a build line."""
import platform
import sys

from .. import __version__


def version_text(tool: str) -> str:
    impl = platform.python_implementation()
    py = ".".join(str(v) for v in sys.version_info[:3])
    return f"{tool} {__version__}\nbuild: {impl} {py} ({platform.system()} {platform.machine()})\n"
