"""maned_conformance: every op and algorithm on the local, VM and hardware targets, compared
with the reference slot for slot (DESIGN §4, §8). Cases are data (`cases/`), one runner
(`runner.py`) runs them on a target (`targets.py`); `plugin.py` makes the targets pytest
fixtures; `certify.py` is `maned-certify`."""
