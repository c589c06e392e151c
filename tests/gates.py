"""Long jobs by construction: the gated fakes (tests/fakes/gated_*.py) hold their jobs while
a hold file exists and log each job that reaches them, so a test waits on events, not on
the machine's speed."""
import sys
import time
from pathlib import Path

FAKES = Path(__file__).resolve().parent / "fakes"


HANG_GUARD_S = 120  # the suite's one bound on waiting for an event (a test that broke)


def until(ready, what: str) -> None:
    """Poll `ready()` until it is true. The guard only stops a broken test from hanging the
    suite; it is far beyond any machine's speed and never decides a pass (docs/testing.md)."""
    give_up = time.monotonic() + HANG_GUARD_S
    while not ready():
        if time.monotonic() > give_up:
            raise AssertionError(f"never happened: {what} (hang guard)")
        time.sleep(0.01)


class Gate:
    def __init__(self, path: Path):
        self.path, self.log = path, Path(str(path) + ".entered")

    def close(self) -> "Gate":
        self.path.touch()
        return self

    def open(self) -> None:
        self.path.unlink(missing_ok=True)

    def entries(self) -> list[list[str]]:
        """One row per job that reached a gated fake, in order (its words)."""
        return [ln.split() for ln in self.log.read_text().splitlines()] if self.log.exists() \
            else []

    def wait_for(self, ready, what: str) -> list[list[str]]:
        """Poll the log until `ready(rows)` (`until`'s hang guard)."""
        found = []
        until(lambda: ready(rows := self.entries()) and not found.append(rows), what)
        return found[0]


def launcher(folder: Path, fake: str) -> Path:
    """An executable that runs tests/fakes/FAKE.py, for a device's `vm = "..."` field."""
    path = folder / f"{fake}-launcher"
    path.write_text(f"#!{sys.executable}\nimport runpy, sys\nsys.path.insert(0, {str(FAKES)!r})"
                    f"\nrunpy.run_path({str(FAKES / (fake + '.py'))!r}, run_name='__main__')\n")
    path.chmod(0o755)
    return path
