"""Committed notebooks carry no outputs, start with a `parameters` cell, and match their pipeline stage."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from tieringlab import params, pipeline

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def test_notebooks_and_pipeline_stages_match_one_to_one():
    """The notebooks on disk are exactly the notebook stages of dvc.yaml (what `make reproduce` runs), each
    stage running its own notebook: a deleted or renamed notebook, or one without a stage, fails here (and an
    empty notebooks/ folder cannot pass by leaving the parametrized tests below without cases)."""
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    runs = {name: st["cmd"] for name, st in stages.items() if str(st.get("cmd", "")).startswith("tieringlab run ")}
    assert set(runs) == set(stages) - {"report"}, "every stage but the report runs a notebook"
    assert {p.stem for p in NOTEBOOKS} == set(runs)
    for name, cmd in runs.items():
        assert cmd == f"tieringlab run notebooks/{name}.ipynb" and (REPO / "notebooks" / f"{name}.ipynb").is_file()
    assert {"00_quickstart", "01_trace_characterization"} <= set(runs)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_has_no_outputs_and_a_parameters_cell(path):
    nb = json.loads(path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    with_outputs = [i for i, c in enumerate(code) if c.get("outputs") or c.get("execution_count")]
    assert not with_outputs, f"{path.name}: code cells {with_outputs} carry outputs; clear them before committing"
    assert "parameters" in code[0].get("metadata", {}).get("tags", []), \
        f"{path.name}: the first code cell must be tagged 'parameters'"
    source = "".join(code[0]["source"])
    assert "results_dir = None" in source and "seed =" in source


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_has_a_stage_and_a_params_section(path):
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    stage = stages.get(path.stem)
    assert stage is not None, f"dvc.yaml has no stage {path.stem}"
    assert stage["cmd"] == f"tieringlab run notebooks/{path.name}"
    name = pipeline.section_of(path)
    assert name in params.sections()
    assert name in stage["params"] and "seed" in stage["params"]
    assert f"results/metrics/{path.stem}.json" in stages["report"]["deps"]
    # the parameters cell names every field of the notebook's section (so papermill can override each)
    nb = json.loads(path.read_text())
    first_code = next(c for c in nb["cells"] if c["cell_type"] == "code")
    text = "".join(first_code["source"])
    for f in dataclasses.fields(params.sections()[name]):
        assert f"{f.name} =" in text, f"{path.name}: parameters cell lacks {f.name}"


def test_pipeline_parameters_come_from_params_yaml():
    p = pipeline.notebook_parameters(REPO / "notebooks/00_quickstart.ipynb", REPO / "params.yaml", "results")
    raw = yaml.safe_load((REPO / "params.yaml").read_text())
    assert p["seed"] == raw["seed"]
    assert p["line_bytes"] == raw["quickstart"]["line_bytes"]
    assert p["cache_sizes_mb"] == [float(x) for x in raw["quickstart"]["cache_sizes_mb"]]
    assert p["results_dir"] == str(REPO / "results")


def test_section_of_rejects_bad_names():
    assert pipeline.section_of("notebooks/12_foo_bar.ipynb") == "foo_bar"
    with pytest.raises(ValueError, match="NN_name"):
        pipeline.section_of("notebooks/quickstart.ipynb")
