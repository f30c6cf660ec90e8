"""Run one notebook as a pipeline stage: validate ``params.yaml``, then papermill with its section.

``tieringlab run notebooks/00_quickstart.ipynb`` (the command of each ``dvc.yaml`` stage):

1. reads and validates the whole ``params.yaml`` (a bad value, or a failed cross-field check of any
   section, stops here, naming the key);
2. passes the notebook's own section (``00_quickstart`` -> ``quickstart``), the global ``seed`` and
   ``results_dir`` as papermill parameters;
3. stages every output: the notebook writes its figures, tables, metrics and log under
   ``results/.staging/<stage>/`` and the executed notebook goes there too; only when the notebook has
   run to the end are they moved into ``results/`` (one rename per output). A stage that fails or is
   killed (``kill -9``) leaves ``results/`` as it was: no partial output, and DVC (which removes a
   stage's outputs before running it) sees no output and reruns it. The next run of the stage deletes
   what an interrupted one left in its staging folder.
4. makes the executed notebook reproducible: papermill's and the kernel's wall-clock metadata (start
   and end times, durations) are moved out of it into ``results/logs/<stage>.json`` (not a DVC output),
   and progress bars are off inside the notebook (``TIERINGLAB_PROGRESS=0`` for its kernel), so the
   same parameters and seed give the same bytes in every output (tests/test_pipeline_atomic.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shutil
from pathlib import Path

import tieringlab.experiments  # noqa: F401  (registers every params section)
from tieringlab import fileio, params, paths
from tieringlab.progress import enabled as progress_enabled
from tieringlab.results import log_path, plain, update_log

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



#: A stage's outputs under the results folder (``{stem}``: the notebook's stem); the paths of dvc.yaml's outs,
#: plus its log.
STAGE_OUTPUTS = ("notebooks/{stem}.ipynb", "figures/{stem}", "tables/{stem}", "metrics/{stem}.json", "logs/{stem}.json")
#: Where a stage's outputs are staged until it completes (removed then; left for inspection after a failure
#: and removed by the stage's next run).
STAGING = ".staging"
#: Wall-clock metadata of papermill (notebook and cells) and of the kernel (cells' ``execution``).
_VOLATILE_NB = ("start_time", "end_time", "duration")
_VOLATILE_CELL = ("start_time", "end_time", "duration")


def staging_dir(results: str | Path | None, notebook: str | Path) -> Path:
    """``<results>/.staging/<stem>``: where :func:`run` stages the outputs of ``notebook``."""
    return paths.results_dir(results) / STAGING / Path(notebook).stem


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _install(staged: Path, target: Path) -> None:
    """Move ``staged`` (file or folder) onto ``target``, replacing it; a missing ``staged`` removes ``target``
    (the stage no longer produces it, as DVC removes outputs before a stage runs)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if not staged.exists():
        if target.exists():
            _remove(target)
        return
    if staged.is_dir():
        old = target.parent / f".{target.name}.old-{os.getpid()}"
        _remove(old)
        if target.exists():
            os.replace(target, old)
        os.replace(staged, target)
        _remove(old)
    else:
        if target.is_dir():
            _remove(target)
        os.replace(staged, target)


@contextlib.contextmanager
def _kernel_env(**env: str):
    """Set environment variables for the notebook's kernel (a child process) while it runs. Progress bars are
    off inside a stage's notebook: their rates and times would be wall-clock output in the executed notebook
    (the stage's own bar, over cells, still shows on a terminal)."""
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _remove_leftovers(results_root: Path, stem: str) -> None:
    """Delete what an interrupted run of stage ``stem`` can leave: its staging folder, an output set aside
    while being replaced (``.<name>.old-<pid>``) and temporary files of its outputs (fileio)."""
    stage = results_root / STAGING / stem
    if stage.exists():
        _remove(stage)
    for rel in STAGE_OUTPUTS:
        target = results_root / rel.format(stem=stem)
        if target.parent.is_dir():
            for old in target.parent.glob(f".{target.name}.old-*"):
                _remove(old)
            fileio.remove_stale_temps(target.parent, names=(target.name,))


def normalize_executed(nb: dict, output_path: str, replace: dict[str, str] | None = None) -> tuple[dict, dict]:
    """An executed notebook without what differs between two runs of the same stage, and that as a log entry.

    Returns ``(notebook, log)``; the log is ``{"stage_seconds", "start_time", "end_time", "cells": [{"cell",
    "seconds"}]}``. Normalized: papermill's notebook and cell ``start_time``/``end_time``/``duration`` and the
    kernel's cell ``execution`` timestamps (moved to the log); the random id of papermill's injected
    parameters cell (``injected-parameters``); the random UUIDs of HTML reprs (xarray's ``section-<uuid>``
    element ids: numbered in order of appearance, each UUID keeping its number, so the links inside a repr
    still work); ``replace``'s strings (the staging folder -> the results folder), and papermill's
    ``output_path``.
    """
    meta = nb.setdefault("metadata", {}).setdefault("papermill", {})
    log: dict = {"stage_seconds": meta.get("duration"), "start_time": meta.get("start_time"),
                 "end_time": meta.get("end_time"), "cells": []}
    for k in _VOLATILE_NB:
        meta.pop(k, None)
    for i, cell in enumerate(nb.get("cells", [])):
        cmeta = cell.get("metadata", {})
        pm = cmeta.get("papermill", {})
        if pm.get("duration") is not None:
            log["cells"].append({"cell": i, "seconds": pm.get("duration")})
        for k in _VOLATILE_CELL:
            pm.pop(k, None)
        cmeta.pop("execution", None)
        if "injected-parameters" in cmeta.get("tags", []) and "id" in cell:
            cell["id"] = "injected-parameters"
    text = json.dumps(nb, ensure_ascii=False)
    for old, new in (replace or {}).items():
        text = text.replace(json.dumps(old)[1:-1], json.dumps(new)[1:-1])
    numbers: dict[str, str] = {}
    text = _UUID.sub(lambda m: numbers.setdefault(m.group(0), f"00000000-0000-4000-8000-{len(numbers):012d}"), text)
    nb = json.loads(text)
    nb["metadata"]["papermill"]["output_path"] = output_path
    return nb, log


def run(notebook: str | Path, *, params_path: str | Path | None = None, results: str | Path = "results",
        output: str | Path | None = None) -> Path:
    """Run ``notebook`` as a stage (module docstring); return the executed notebook's path."""
    import nbformat  # noqa: PLC0415
    import papermill  # noqa: PLC0415  (slow import, only when running)

    root = paths.repo_root()
    nb = Path(notebook)
    nb = nb if nb.is_absolute() else root / nb
    if not nb.is_file():
        raise FileNotFoundError(f"{nb}: no such notebook")
    results_root = paths.results_dir(results)
    stage = staging_dir(results_root, nb)
    parameters = notebook_parameters(nb, params_path or root / "params.yaml", stage)  # a bad value stops here
    _remove_leftovers(results_root, nb.stem)  # what an interrupted run of this stage left
    stage.mkdir(parents=True)
    out = Path(output) if output else results_root / "notebooks" / nb.name
    staged_nb = stage / "notebooks" / nb.name
    staged_nb.parent.mkdir(parents=True, exist_ok=True)
    try:
        with _kernel_env(TIERINGLAB_PROGRESS="0"):
            papermill.execute_notebook(str(nb), str(staged_nb), parameters=parameters, cwd=str(nb.parent),
                                       progress_bar=progress_enabled(), log_output=False)
    except BaseException as exc:
        if isinstance(exc, Exception):
            exc.add_note(f"tieringlab run: results/ is unchanged; the failed run's outputs are in {stage} "
                         f"(removed by the next run of this stage)")
        raise
    executed = json.loads(staged_nb.read_text(encoding="utf-8"))
    executed, timing = normalize_executed(executed, str(out), {str(stage): str(results_root)})
    fileio.write_text(staged_nb, nbformat.writes(nbformat.from_dict(executed)) + "\n")
    update_log(log_path(stage, nb.stem), {"notebook": nb.stem, "stage": timing})
    for rel in STAGE_OUTPUTS:
        rel = rel.format(stem=nb.stem)
        target = out if rel == f"notebooks/{nb.stem}.ipynb" else results_root / rel
        _install(stage / rel, target)
    _remove(stage)
    with contextlib.suppress(OSError):  # the shared .staging folder, once no stage uses it
        (results_root / STAGING).rmdir()
    return out
