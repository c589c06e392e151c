"""Long jobs by construction: the gated fakes (tests/fakes/gated_*.py) hold their jobs while
a hold file exists and log each job that reaches them, so a test waits on events, not on
the machine's speed."""
import sys
import time
from pathlib import Path

FAKES = Path(__file__).resolve().parent / "fakes"


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

    def wait_for(self, ready, what: str, timeout: float = 120) -> list[list[str]]:
        """Poll the log until `ready(rows)`; fail naming `what` past `timeout` (a hang
        guard, far beyond any machine's speed, not a measurement)."""
        deadline = time.monotonic() + timeout
        while not ready(rows := self.entries()):
            assert time.monotonic() < deadline, f"never happened: {what}"
            time.sleep(0.01)
        return rows


def launcher(folder: Path, fake: str) -> Path:
    """An executable that runs tests/fakes/FAKE.py, for a device's `vm = "..."` field."""
    path = folder / f"{fake}-launcher"
    path.write_text(f"#!{sys.executable}\nimport runpy, sys\nsys.path.insert(0, {str(FAKES)!r})"
                    f"\nrunpy.run_path({str(FAKES / (fake + '.py'))!r}, run_name='__main__')\n")
    path.chmod(0o755)
    return path
