"""Run one notebook as a pipeline stage: validate ``params.yaml``, then papermill with its section.

``tieringlab run notebooks/00_quickstart.ipynb`` (the command of each ``dvc.yaml`` stage):

1. reads and validates the whole ``params.yaml`` (a bad value stops here, naming the key);
2. passes the notebook's own section (``00_quickstart`` -> ``quickstart``), the global ``seed`` and
   ``results_dir`` as papermill parameters;
3. writes the executed notebook to ``results/notebooks/`` through a temporary file and a rename.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import tieringlab.experiments  # noqa: F401  (registers every params section)
from tieringlab import fileio, params, paths
from tieringlab.progress import enabled as progress_enabled
from tieringlab.results import plain

_STEM = re.compile(r"^(\d\d)_([a-z0-9_]+)$")


def section_of(notebook: str | Path) -> str:
    """``notebooks/00_quickstart.ipynb`` -> ``quickstart``."""
    stem = Path(notebook).stem
    m = _STEM.match(stem)
    if not m:
        raise ValueError(f"{notebook}: notebook names must look like NN_name.ipynb")
    return m.group(2)


def notebook_parameters(notebook: str | Path, params_path: str | Path, results: str | Path) -> dict:
    """The papermill parameters for ``notebook`` from a validated ``params.yaml``."""
    return parameters_from(params.load(params_path), notebook, results, source=str(params_path))


def parameters_from(loaded: dict, notebook: str | Path, results: str | Path | None, *,
                    source: str = "params.yaml") -> dict:
    """The papermill parameters for ``notebook`` from validated params (:func:`tieringlab.params.load`'s
    ``{"seed": ..., section: instance}``): the notebook's section, the shared sections it uses, the seed
    and ``results_dir`` (left out when ``results`` is None)."""
    name = section_of(notebook)
    if name not in loaded:
        raise params.ParamsError(f"{source}: no section {name!r} for {notebook}")
    section_obj = loaded[name]
    values = plain(dataclasses.asdict(section_obj))
    # Sections shared by several notebooks (for example ``traces``) are passed as one dict parameter
    # each, named after the section; a notebook lists them in its section class as ``uses = ("traces",)``.
    for shared in getattr(type(section_obj), "uses", ()):
        shared_obj = loaded.get(shared) or params.validate_section(shared, {}, source=source)
        values[shared] = plain(dataclasses.asdict(shared_obj))
    values["seed"] = loaded["seed"]
    if results is not None:
        values["results_dir"] = str(paths.results_dir(results))
    return values



def run(notebook: str | Path, *, params_path: str | Path | None = None, results: str | Path = "results",
        output: str | Path | None = None) -> Path:
    import papermill  # noqa: PLC0415  (slow import, only when running)

    root = paths.repo_root()
    nb = Path(notebook)
    nb = nb if nb.is_absolute() else root / nb
    if not nb.is_file():
        raise FileNotFoundError(f"{nb}: no such notebook")
    parameters = notebook_parameters(nb, params_path or root / "params.yaml", results)
    out = Path(output) if output else paths.results_dir(results) / "notebooks" / nb.name
    with fileio.atomic_path(out) as tmp:
        papermill.execute_notebook(str(nb), str(tmp), parameters=parameters, cwd=str(nb.parent),
                                   progress_bar=progress_enabled(), log_output=False)
    return out
