"""Committed notebooks carry no outputs, start with a `parameters` cell, and match their pipeline stage."""

from __future__ import annotations

import dataclasses
import json
import re
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
    typed = _typed_parameters(path)
    assert typed.get("results_dir") == "str|None" and typed.get("seed") == "int", typed


def _typed_parameters(path: Path) -> dict[str, str]:
    """The parameters papermill reads from the notebook (``papermill --help-notebook``), name -> type shown."""
    import papermill

    return {name: p["inferred_type_name"] for name, p in papermill.inspect_notebook(str(path)).items()}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_papermill_reads_every_parameter_with_its_type(path):
    """``papermill --help-notebook`` lists every assignment of the parameters cell (the same names the sweep's
    parser reads; a line papermill cannot parse, e.g. with a second ``=``, is missing from its list) and shows a
    type for each: an annotation, or a ``# type:`` comment where the default is None."""
    from tieringlab.sweep import notebook_defaults

    typed = _typed_parameters(path)
    assert set(typed) == set(notebook_defaults(path)), f"{path.name}: papermill and the sweep read different names"
    untyped = sorted(name for name, kind in typed.items() if kind in {"None", ""})
    assert not untyped, f"{path.name}: parameters without a type papermill can show: {untyped}"


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
        assert re.search(rf"^{f.name}\s*(:[^=]*)?=", text, re.M), f"{path.name}: parameters cell lacks {f.name}"


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


def test_dvc_plots_cover_every_notebook_with_labelled_axes():
    """``dvc.yaml`` declares plots for every notebook stage: data plots with both axis labels, and image plots of
    figures the notebook saves (the name an ``out.figure(fig, "name")`` call of the notebook gives)."""
    plots = yaml.safe_load((REPO / "dvc.yaml").read_text())["plots"]
    covered = set()
    for entry in plots:
        if isinstance(entry, str):  # an image: results/figures/<stem>/<name>.png
            parts = Path(entry).parts
            assert parts[:2] == ("results", "figures") and entry.endswith(".png"), entry
            stem, name = parts[2], Path(entry).stem
            nb = json.loads((REPO / "notebooks" / f"{stem}.ipynb").read_text())
            source = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
            assert re.search(rf'out\.figure\([^,]+,\s*"{re.escape(name)}"', source), f"{stem} saves no figure {name}"
            covered.add(stem)
        else:
            ((title, spec),) = entry.items()
            assert spec.get("x_label") and spec.get("y_label"), f"plot {title!r}: x_label and y_label"
            for table in spec["y"]:
                assert Path(table).parts[:2] == ("results", "tables"), table
                covered.add(Path(table).parts[2])
    assert covered == {p.stem for p in NOTEBOOKS}
