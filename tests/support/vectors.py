"""The golden vectors (tests/vectors/*.toml): each case's script or source, arguments, and
the exit code, stdout and stderr maned-run must give."""
import tomllib
from pathlib import Path

VECTORS = Path(__file__).resolve().parent.parent / "vectors"
CASES = [case for f in sorted(VECTORS.glob("*.toml"))
         for case in tomllib.loads(f.read_text(encoding="utf-8"))["case"]]
