"""The import graph runs one way: no tieringlab module imports from a layer above its own.

Layers, bottom to top (CONTRIBUTING.md): foundations (units, arrays, paths, fileio, progress, params, plots,
data) -> models -> traces -> policies -> claims -> experiments -> results, report, pipeline, sweep, simulate,
cli. Imports inside a layer are allowed. The graph is read from the source with ``ast`` (every ``import`` and
``from ... import``, including the ones inside functions), so a lazy import cannot hide an upward edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "tieringlab"

LAYERS = [
    {"tieringlab", "tieringlab.units", "tieringlab.arrays", "tieringlab.paths", "tieringlab.fileio",
     "tieringlab.progress", "tieringlab.params", "tieringlab.data", "tieringlab.stats", "tieringlab.readings",
     "tieringlab.native", "tieringlab.plots"},
    {"tieringlab.models"},
    {"tieringlab.traces"},
    {"tieringlab.policies"},
    {"tieringlab.claims"},
    {"tieringlab.experiments"},
    {"tieringlab.results", "tieringlab.report", "tieringlab.pipeline", "tieringlab.cli", "tieringlab.__main__",
     "tieringlab.site", "tieringlab.sweep", "tieringlab.simulate"},
]


def layer_of(module: str) -> int:
    """The layer of a module: its own name, else its package's (``tieringlab.models.mmpp`` -> models)."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        name = ".".join(parts[:n])
        for i, layer in enumerate(LAYERS):
            if name in layer:
                return i
    raise AssertionError(f"{module} is in no layer: add it to LAYERS (and to CONTRIBUTING.md)")


def modules():
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG.parent).with_suffix("")
        name = ".".join(rel.parts)
        yield name.removesuffix(".__init__"), path


def imports(path: Path, module: str) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("tieringlab")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("tieringlab"):
                # "from tieringlab.policies import registry": the submodule is the edge when it is one
                for a in node.names:
                    sub = f"{target}.{a.name}"
                    out.add(sub if (PKG.parent / Path(*sub.split("."))).with_suffix(".py").exists()
                            or (PKG.parent / Path(*sub.split("."))).is_dir() else target)
    return out


@pytest.mark.parametrize("module, path", list(modules()), ids=[m for m, _ in modules()])
def test_no_import_runs_up_the_layers(module, path):
    mine = layer_of(module)
    upward = sorted(m for m in imports(path, module) if layer_of(m) > mine)
    assert not upward, f"{module} (layer {mine}) imports from a layer above it: {upward}"


def test_the_checker_sees_an_upward_import(tmp_path):
    """The check itself can fail: a planted upward import (a model importing an experiment) is found."""
    f = tmp_path / "planted.py"
    f.write_text("def f():\n    from tieringlab.experiments import quickstart\n    return quickstart\n")
    found = imports(f, "tieringlab.models.planted")
    assert "tieringlab.experiments.quickstart" in found
    assert layer_of("tieringlab.experiments.quickstart") > layer_of("tieringlab.models.planted")
