"""equivalent.toml: survivors judged unable to change any answer a worker gives, each with
a one-line reason, so the report can tell them from the defects no case sees yet.

Top-level keys are mutant ids; the `[functions]` table judges every mutant inside one
definition (`"<path>::<qualname>"`), for code the worker never runs. A judgement that
names nothing enumerated is stale and reported, so the file stays honest.
"""
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from maned.io.files import read_text_file


def default_path() -> Path:
    """The equivalent.toml shipped with the package (next to this module)."""
    return Path(str(resources.files(__package__).joinpath("equivalent.toml")))


@dataclass(frozen=True)
class Judgements:
    mutants: dict[str, str] = field(default_factory=dict)    # mutant id -> reason
    functions: dict[str, str] = field(default_factory=dict)  # "path::qualname" -> reason

    def reason(self, mutant) -> str | None:
        """Why this mutant is equivalent, or None when nobody judged it."""
        if mutant.id in self.mutants:
            return self.mutants[mutant.id]
        for key, why in self.functions.items():
            path, _, name = key.partition("::")
            if mutant.path == path and (mutant.scope == name
                                        or mutant.scope.startswith(name + ".")):
                return why
        return None

    def stale(self, mutants, paths) -> list[str]:
        """The judgements about files in `paths` that name no mutant of `mutants`."""
        ids = {m.id for m in mutants}
        paths = set(paths)
        out = [k for k in self.mutants if k.split(":", 1)[0] in paths and k not in ids]
        for key in self.functions:
            path, _, name = key.partition("::")
            if path in paths and not any(
                    m.path == path and (m.scope == name or m.scope.startswith(name + "."))
                    for m in mutants):
                out.append(key)
        return sorted(out)


JUDGEMENTS_BYTES = 16 << 20


def load(path: Path) -> Judgements:
    """The judgements of a TOML file (read through maned.io.files: a FIFO is refused, never
    waited on); OSError when unreadable, ValueError when it is no UTF-8 TOML or a value is
    not a one-line reason."""
    try:
        doc = tomllib.loads(read_text_file(str(path), JUDGEMENTS_BYTES, str(path)))
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: {e}") from None
    if not isinstance(doc.get("functions", {}), dict):
        raise ValueError(f"{path}: [functions] is a table of \"path::name\" = \"reason\"")
    functions = doc.pop("functions", {})
    for key, why in [*doc.items(), *functions.items()]:
        if not isinstance(why, str) or not why.strip() or "\n" in why:
            raise ValueError(f"{path}: judgement {key!r} needs a one-line reason")
    return Judgements(dict(doc), dict(functions))
