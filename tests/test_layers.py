"""The import structure, read from the source (DESIGN §1, README "Layout"): the reference's
layers in data-path order, none importing a layer above it (a function-level import counts
too), and the conformance suite and the benchmarks reaching the devices through their face,
`maned.devices`, alone."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "reference"
# bottom to top; a module may import its own layer and those below it
LAYERS = [
    {"tensor", "interrupts", "diagnostics", "catalogue"},
    {"failures"},
    {"numeric"},
    {"ops", "ml_catalogue"},
    {"lang"},
    {"graph"},
    {"ml"},
    {"interp"},
    {"io", "lowering", "static_check"},
    {"engine"},
    {"devices"},
    {"targets"},
    {"dispatch"},
    {"pipeline"},
    {"cli"},
]
LEVEL = {name: i for i, layer in enumerate(LAYERS) for name in layer}


def imported(path: Path, package: tuple[str, ...]) -> list[tuple[int, tuple[str, ...]]]:
    """(line, the path within maned) of every maned module `path` imports; `package` is its
    own package's path within maned."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
            elif node.module and node.module.split(".")[0] == "maned":
                base, node.module = (), ".".join(node.module.split(".")[1:]) or None
            else:
                continue
            parts = base + (tuple(node.module.split(".")) if node.module else ())
            out += [(node.lineno, parts or (a.name,)) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, tuple(a.name.split(".")[1:])) for a in node.names
                    if a.name.split(".")[0] == "maned" and "." in a.name]
    return out


def reference_modules():
    return sorted(p for p in REFERENCE.rglob("*.py") if p != REFERENCE / "__init__.py")


@pytest.mark.parametrize("path", reference_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_import_climbs_back_up(path):
    rel = path.relative_to(REFERENCE).with_suffix("").parts
    layer = rel[0]
    assert layer in LEVEL, f"{layer} is in no layer: add it to LAYERS"
    climbs = [(line, ".".join(parts)) for line, parts in imported(path, rel[:-1])
              if parts and LEVEL.get(parts[0], -1) > LEVEL[layer]]
    assert climbs == []


@pytest.mark.parametrize("path", sorted([*(ROOT / "conformance").rglob("*.py"),
                                         *(ROOT / "benchmarks").rglob("*.py")]),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_devices_are_reached_through_their_face(path):
    behind = [(node.lineno, node.module) for node in ast.walk(ast.parse(path.read_text()))
              if isinstance(node, ast.ImportFrom) and node.module
              and node.module.startswith("maned.devices.")]
    assert behind == []


def test_the_reading_sees_every_form_of_import(tmp_path):
    source = tmp_path / "x.py"
    source.write_text("from . import bounds\nfrom ..dispatch.fleet import Fleet\n"
                      "def f():\n    from maned.cli import run\n    import maned.pipeline.report\n"
                      "from .. import failures\nimport numpy\n")
    assert imported(source, ("devices",)) == [
        (1, ("devices",)), (2, ("dispatch", "fleet")), (6, ("failures",)),
        (4, ("cli",)), (5, ("pipeline", "report"))]
