"""`--version` text shared by the tools (its one home is bark_vm/version.py)."""
from bark_vm.version import version_text

__all__ = ["version_text"]
