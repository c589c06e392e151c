"""A conformance case is one TOML file under `cases/`; its id is its path there. Fields:

    about    = "what it checks"                 (required)
    script   = \"\"\"a .mnd script\"\"\"             (required; no device:: blocks: the runner
                                                  routes every routable flow to the target)
    inputs   = { name = "--in text" }            (optional)
    targets  = ["local", "vm", "hardware"]       (optional; default all three)
    refused  = { code = "ERUN", by = "worker", cdp = "SHAPE_MISMATCH" }
               (optional: the refusal every target must give, and who gives it on a routed
               target: `by = "worker"`, answering the CDP code `cdp` to the request it was
               sent, or `by = "planning"`, before anything is sent; on `local` the
               reference refuses with `code`. A refusal of any other cause is never a pass)
    mutation = "read_before_write"               (optional: a request case; the script's
               flow is lowered and encoded, the named malformation of
               `maned_conformance.malformations` is applied to its bytes, and the bytes are
               sent to the worker as they are; it needs `refused` with by = "worker". Or
               an equivalent encoding of its EQUIVALENTS, with no `refused`: the worker
               must answer what the reference computes)
    abi      = 1                                 (optional, request cases: the module's ABI;
                                                  default the worker's own)
    [golden]                                     (optional: documented values of spec/)
    "flow.output" = [v, ...]

A request case's `refused` may add `cdp_abi1`, the code an ABI-1 worker answers instead.
Which ops and algorithms a case exercises is read from its script, not written."""
import tomllib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from maned.diagnostics import MnError
from maned.lang import ast
from maned.pipeline.intake import compile_script

from .malformations import EQUIVALENTS, MALFORMATIONS

CASES = Path(__file__).resolve().parent / "cases"
TARGETS = ("local", "vm", "hardware")
ROUTED = ("vm", "hardware")
KEYS = {"about", "script", "inputs", "targets", "refused", "golden", "mutation", "abi"}
REFUSED_KEYS = {"code", "by", "cdp", "cdp_abi1"}
REFUSERS = ("worker", "planning")


class CaseError(Exception):
    """A case file that is not a case (its id and what is wrong)."""


@dataclass(frozen=True)
class Refusal:
    """The refusal a case expects: the run's diagnostic code (None for a request case), who
    refuses on a routed target, and the worker's CDP code when the worker does."""

    code: str | None
    by: str
    cdp: str | None = None
    cdp_abi1: str | None = None

    def cdp_for(self, abi: int) -> str | None:
        """The CDP code a worker of this ABI must answer."""
        return self.cdp_abi1 if abi == 1 and self.cdp_abi1 else self.cdp

    def words(self, target: str = "") -> str:
        """How a report says what was expected."""
        if target in ("local", "reference") or self.by == "planning":
            who = ("planning, before anything is sent" if target not in ("local", "reference")
                   else "the reference")
            return f"a refusal [{self.code}] by {who}"
        return f"a refusal by the worker with {self.cdp}" + (
            f" (ABI 1: {self.cdp_abi1})" if self.cdp_abi1 else "")


@dataclass(frozen=True)
class Case:
    id: str
    about: str
    script: str
    inputs: tuple[tuple[str, str], ...] = ()
    targets: tuple[str, ...] = TARGETS
    refused: Refusal | None = None
    golden: tuple[tuple[str, tuple[int, ...]], ...] = ()
    folder: Path = field(default=CASES, compare=False)
    mutation: str | None = None
    abi: int | None = None

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


def _refusal(cid: str, data) -> Refusal | None:
    """The `refused` table, checked: who refuses, and the code each side gives."""
    if data is None:
        return None
    if not isinstance(data, dict) or set(data) - REFUSED_KEYS or data.get("by") not in REFUSERS:
        raise CaseError(f"{cid}: refused must be a table of {sorted(REFUSED_KEYS)} with by "
                        f"one of {', '.join(REFUSERS)}")
    if (data["by"] == "worker") != isinstance(data.get("cdp"), str):
        raise CaseError(f"{cid}: a refusal by the worker names its CDP code (cdp), and only "
                        "that one")
    return Refusal(data.get("code"), data["by"], data.get("cdp"), data.get("cdp_abi1"))


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
    refused = _refusal(cid, data.get("refused"))
    mutation = data.get("mutation")
    if mutation is not None and ((refused is not None and refused.by != "worker")
                                 or not set(targets) <= set(ROUTED)):
        raise CaseError(f"{cid}: a request case (mutation) runs on {' and '.join(ROUTED)} "
                        "only and expects a refusal by the worker, or the reference's answer")
    if mutation is not None and not (
            (mutation in MALFORMATIONS and refused is not None)
            or (mutation in EQUIVALENTS and refused is None)):
        raise CaseError(f"{cid}: mutation {mutation!r} names no malformation (which needs "
                        "`refused`) nor equivalent encoding (which has none)")
    if mutation is None and refused is not None and not isinstance(refused.code, str):
        raise CaseError(f"{cid}: a script case's refusal names the run's code (code)")
    if refused is not None and refused.by == "planning" and "hardware" in targets:
        raise CaseError(f"{cid}: a refusal by planning never reaches a worker, so it "
                        "certifies nothing: leave `hardware` out of its targets")
    return Case(cid, data["about"], data["script"],
                tuple((k, str(v)) for k, v in data.get("inputs", {}).items()), targets,
                refused, tuple((k, tuple(v)) for k, v in data.get("golden", {}).items()),
                path.parent, mutation, data.get("abi"))


def all_cases(root: Path = CASES) -> list[Case]:
    """Every case, in id order."""
    return [load(p, root) for p in sorted(root.rglob("*.toml"))]
