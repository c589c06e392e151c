"""equivalent.toml: survivors judged unable to change any answer a worker gives, so the
report can tell them from the defects no case sees yet.

Each `[[equivalent]]` table writes one reason once (`why`) and what it judges: `sites`,
mutants by what they are (`Mutant.site`, "<path>::<qualname>:<operator>#<n>"), and
`functions`, every mutant inside one definition ("<path>::<qualname>"), for code the
worker never runs. A judgement that names nothing enumerated is stale and reported, so
the file stays honest; a site or function judged twice is refused.
"""
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from maned.io.files import read_text_file


def default_path() -> Path:
    """The equivalent.toml shipped with the package (next to this module)."""
    return Path(str(resources.files(__package__).joinpath("equivalent.toml")))


def _in(scope: str, name: str) -> bool:
    return scope == name or scope.startswith(name + ".")


@dataclass(frozen=True)
class Judgements:
    sites: dict[str, str] = field(default_factory=dict)      # mutant site -> reason
    functions: dict[str, str] = field(default_factory=dict)  # "path::qualname" -> reason

    def reason(self, mutant) -> str | None:
        """Why this mutant is equivalent, or None when nobody judged it."""
        if mutant.site in self.sites:
            return self.sites[mutant.site]
        for key, why in self.functions.items():
            path, _, name = key.partition("::")
            if mutant.path == path and _in(mutant.scope, name):
                return why
        return None

    def stale(self, mutants, paths) -> list[str]:
        """The judgements about files in `paths` that name no mutant of `mutants`."""
        sites = {m.site for m in mutants}
        paths = set(paths)
        out = [k for k in self.sites if k.partition("::")[0] in paths and k not in sites]
        for key in self.functions:
            path, _, name = key.partition("::")
            if path in paths and not any(m.path == path and _in(m.scope, name)
                                         for m in mutants):
                out.append(key)
        return sorted(out)


JUDGEMENTS_BYTES = 16 << 20


def load(path: Path) -> Judgements:
    """The judgements of a TOML file (read through maned.io.files: a FIFO is refused, never
    waited on); OSError when unreadable, ValueError when it is no UTF-8 TOML, a table is
    not a one-line `why` with lists of keys, or a key is judged twice."""
    try:
        doc = tomllib.loads(read_text_file(str(path), JUDGEMENTS_BYTES, str(path)))
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: {e}") from None
    groups = doc.pop("equivalent", [])
    if doc or not isinstance(groups, list):
        raise ValueError(f"{path}: only [[equivalent]] tables (why, sites, functions) belong "
                         "here")
    judged: dict[str, dict[str, str]] = {"sites": {}, "functions": {}}
    for n, group in enumerate(groups, 1):
        why = group.get("why") if isinstance(group, dict) else None
        if not isinstance(why, str) or not why.strip() or "\n" in why:
            raise ValueError(f"{path}: [[equivalent]] {n} needs a one-line reason, why")
        if set(group) - {"why", "sites", "functions"} or not (
                set(group) & {"sites", "functions"}):
            raise ValueError(f"{path}: [[equivalent]] {n} holds why and sites or functions "
                             "only")
        for kind, into in judged.items():
            keys = group.get(kind, [])
            if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
                raise ValueError(f"{path}: [[equivalent]] {n}: {kind} is a list of strings")
            for key in keys:
                if key in into:
                    raise ValueError(f"{path}: {key!r} is judged twice")
                into[key] = why
    return Judgements(judged["sites"], judged["functions"])
