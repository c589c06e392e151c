"""`--version` text shared by the tools (its one home is bark_vm/version.py), and the
answer of a tool whose whole command line is `--help` or `--version`."""
from bark_vm.version import version_text

__all__ = ["version_text", "help_or_version"]


def help_or_version(argv: list[str], usage: str, tool: str, out) -> bool:
    """Print the usage for `--help` (or `-h`), the version for `--version`; True if done."""
    if argv in (["--help"], ["-h"]):
        out.write(usage)
        return True
    if argv == ["--version"]:
        out.write(version_text(tool))
        return True
    return False
