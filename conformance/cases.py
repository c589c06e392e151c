"""A conformance case is one TOML file under `cases/`; its id is its path there. Fields:

    about    = "what it checks"                 (required)
    script   = \"\"\"a .mnd script\"\"\"             (required; no device:: blocks: the runner
                                                  routes every routable flow to the target)
    inputs   = { name = "--in text" }            (optional)
    targets  = ["local", "vm", "hardware"]       (optional; default all three)
    refused  = "ERUN"                            (optional: every target refuses with it)
    [golden]                                     (optional: documented values of spec/)
    "flow.output" = [v, ...]

Which ops and algorithms a case exercises is read from its script, not written."""
import tomllib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from maned.diagnostics import MnError
from maned.lang import ast
from maned.pipeline.compile import compile_script

CASES = Path(__file__).resolve().parent / "cases"
TARGETS = ("local", "vm", "hardware")
KEYS = {"about", "script", "inputs", "targets", "refused", "golden"}


class CaseError(Exception):
    """A case file that is not a case (its id and what is wrong)."""


@dataclass(frozen=True)
class Case:
    id: str
    about: str
    script: str
    inputs: tuple[tuple[str, str], ...] = ()
    targets: tuple[str, ...] = TARGETS
    refused: str | None = None
    golden: tuple[tuple[str, tuple[int, ...]], ...] = ()
    folder: Path = field(default=CASES, compare=False)

    @cached_property
    def uses(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(ops, algorithms) the script names, each sorted; empty when it does not compile."""
        try:
            checked = compile_script(self.script)
        except MnError:
            return (), ()
        ops = {n.op for g in checked.graphs.values() for n in g.nodes if n.kind == "op"}
        algos = {d.algo for d in checked.program.of(ast.MLDef)}
        return tuple(sorted(ops)), tuple(sorted(algos))


def load(path: Path, root: Path = CASES) -> Case:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise CaseError(f"{path}: {e}") from None
    cid = path.relative_to(root).as_posix()
    unknown = set(data) - KEYS
    if unknown or not isinstance(data.get("script"), str) or not isinstance(
            data.get("about"), str):
        raise CaseError(f"{cid}: needs `about` and `script`; unknown keys {sorted(unknown)}")
    targets = tuple(data.get("targets", TARGETS))
    if not set(targets) <= set(TARGETS):
        raise CaseError(f"{cid}: targets must be among {', '.join(TARGETS)}")
    return Case(cid, data["about"], data["script"],
                tuple((k, str(v)) for k, v in data.get("inputs", {}).items()), targets,
                data.get("refused"),
                tuple((k, tuple(v)) for k, v in data.get("golden", {}).items()), path.parent)


def all_cases(root: Path = CASES) -> list[Case]:
    """Every case, in id order."""
    return [load(p, root) for p in sorted(root.rglob("*.toml"))]
