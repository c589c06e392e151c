"""A worker alias: the one rule scripts (`device::bob-i3`), a worker's status and its
discovery reply share, so every alias a worker can report is one a script can name."""
import re

ALIAS_MAX = 64  # bytes: an alias and the op list fit a discovery reply with room to spare
_ALIAS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(-[A-Za-z0-9_]+)*")


def is_alias(text: str) -> bool:
    """An identifier, or identifiers joined by single hyphens (`bob-i3`), ASCII only."""
    return _ALIAS.fullmatch(text) is not None


def worker_alias(text: str) -> bool:
    """An alias a worker may report: a script's alias of at most ALIAS_MAX bytes."""
    return is_alias(text) and len(text) <= ALIAS_MAX  # is_alias is ASCII: characters = bytes
