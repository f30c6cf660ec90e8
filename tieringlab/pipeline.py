"""Run one notebook as a pipeline stage: validate ``params.yaml``, then papermill with its section.

``tieringlab run notebooks/00_quickstart.ipynb`` (the command of each ``dvc.yaml`` stage):

1. reads and validates the whole ``params.yaml`` (a bad value, or a failed cross-field check of any
   section, stops here, naming the key);
2. passes the notebook's own section (``00_quickstart`` -> ``quickstart``), the global ``seed`` and
   ``results_dir`` as papermill parameters (``results_dir`` relative to the repository root when the
   results folder is inside it);
3. stages every output: the notebook writes its figures, tables, metrics and log under
   ``results/.staging/<stage>/`` and the executed notebook goes there too; only when the notebook has
   run to the end are they moved into ``results/``, all or nothing (:func:`tieringlab.fileio.install`):
   a journal naming every move is written first (the commit point), then each old output is set aside,
   the new one renamed into place, and the old ones deleted once every new one is there. A stage that
   fails or is killed (``kill -9``, Ctrl-C) before the journal exists leaves ``results/`` as it was: no
   partial output, and DVC (which removes a stage's outputs before running it) sees no output and
   reruns it. One killed after it (a window of milliseconds) is completed, all new, by whatever touches
   ``results/`` next: a run of any stage, the report, the site or a notebook's ``Outputs``
   (:func:`tieringlab.results.complete_installs`). The next run of the stage deletes what an
   interrupted one left in its staging folder.
4. makes the executed notebook reproducible: papermill's and the kernel's wall-clock metadata (start
   and end times, durations) are moved out of it into ``results/logs/<stage>.json`` (not a DVC output;
   with the kernel's CPU time, its peak resident memory, the load average at the start and where the CPU went:
   the largest functions by CPU time, from :mod:`tieringlab.profile`'s sampler in the kernel),
   and progress bars are off inside the notebook (``TIERINGLAB_PROGRESS=0`` for its kernel), so the
   same parameters and seed give the same bytes in every output (tests/test_pipeline_atomic.py); and
   it holds no path of the checkout (every path under it is written relative to it, the shared folder
   beside it as ``../shared``), so two clones at different paths write the same bytes
   (tests/test_hostile_pipeline.py).

Two runs of one stage into one results folder at once would delete each other's staged outputs: a run
holds the stage's lock (``results/.staging/<stage>.lock``, released by the system even after
``kill -9``) and a second one stops at once with :class:`StageBusyError`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import resource
import shutil
from pathlib import Path

import tieringlab.experiments  # noqa: F401  (registers every params section)
from tieringlab import fileio, params, paths, profile
from tieringlab.progress import enabled as progress_enabled
from tieringlab.results import STAGING, complete_installs, journal_path, log_path, plain, stage_lock, update_log

#: The kernel's profile records (:mod:`tieringlab.profile`) go to this folder of the stage's staging folder; the
#: log keeps the PROFILE_TOP largest functions.
PROFILE_DIR, PROFILE_TOP = ".profile", 10
#: ``TIERINGLAB_STAGE_PROFILE=0`` runs the kernel without the sampler (the log then has no ``profile``).
PROFILE_SWITCH = "TIERINGLAB_STAGE_PROFILE"

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
#: and removed by the stage's next run): ``STAGING`` (``.staging``, from :mod:`tieringlab.results`).
#: Wall-clock metadata of papermill (notebook and cells) and of the kernel (cells' ``execution``).
_VOLATILE_NB = ("start_time", "end_time", "duration")
_VOLATILE_CELL = ("start_time", "end_time", "duration")


def staging_dir(results: str | Path | None, notebook: str | Path) -> Path:
    """``<results>/.staging/<stem>``: where :func:`run` stages the outputs of ``notebook``."""
    return paths.results_dir(results) / STAGING / Path(notebook).stem


class StageBusyError(OSError):
    """Another run of the same stage into the same results folder holds the stage's lock."""


_remove = fileio.remove_tree


@contextlib.contextmanager
def _stage_locked(results_root: Path, stem: str):
    """Hold stage ``stem``'s lock in ``results_root``; :class:`StageBusyError` at once if another run holds it."""
    lock = stage_lock(results_root, stem)
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(fileio.locked(lock, wait=False))
        except BlockingIOError:
            raise StageBusyError(f"{lock}: another `tieringlab run` of {stem} into {results_root} is running "
                                 f"(process {fileio.lock_holder(lock)}); wait for it to finish") from None
        yield lock


def _check_targets(nb: Path, results_root: Path, targets: list[Path]) -> None:
    """Stop before the notebook runs if its outputs could not be installed: the results folder (or a folder
    on the way to an output) is a file, an output is on another file system than the staging folder (a
    committed install could never be completed), or the executed notebook would overwrite the notebook
    itself (``--results`` naming the repository root)."""
    def device(path: Path) -> int:  # of the nearest folder that exists
        while not path.is_dir() and path != path.parent:
            path = path.parent
        return path.stat().st_dev

    for target in targets:
        if target.resolve() == nb.resolve():
            raise ValueError(f"{target}: the executed notebook would overwrite its source notebook {nb}; "
                             f"--results must name a folder other than the repository root")
        for folder in (results_root, *reversed([p for p in target.parents if results_root in p.parents])):
            if os.path.lexists(folder) and not folder.is_dir():
                raise NotADirectoryError(f"{folder}: exists and is not a folder, so the stage's outputs cannot be "
                                         f"written under it (--results must name a folder)")
        if device(target.parent) != device(results_root):  # a rename cannot cross file systems
            raise ValueError(f"{target}: on another file system than {results_root}, where the stage's outputs "
                             f"are staged; they could not be moved there in one rename")


def kernel_env(profile_dir: Path, environ=None) -> dict[str, str]:
    """The variables ``tieringlab run`` sets for a stage's kernel: progress bars off and the stage sampler's folder
    (:mod:`tieringlab.profile`) unless ``$TIERINGLAB_STAGE_PROFILE`` is ``0``."""
    environ = os.environ if environ is None else environ
    env = {"TIERINGLAB_PROGRESS": "0"}
    switch = environ.get(PROFILE_SWITCH, "1").strip()
    if switch not in ("0", "1"):
        raise ValueError(f"{PROFILE_SWITCH}={switch!r}: allowed values are 1 (the default: profile the stage's "
                         f"kernel) and 0 (no profile)")
    if switch == "1":
        env[profile.ENV] = str(profile_dir)
    return env


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
    while being replaced (``.<name>.old-<pid>``) and temporary files of its outputs and of its install
    journal (fileio). Only once the stage's install journal, if any, has been completed (an old copy set
    aside by a committed install is deleted here only after its new copy is in place)."""
    stage = results_root / STAGING / stem
    if journal_path(results_root, stem).exists():
        raise RuntimeError(f"{journal_path(results_root, stem)}: complete this install before removing leftovers")
    if os.path.lexists(stage):
        _remove(stage)
    fileio.remove_stale_temps(results_root / STAGING, names=(journal_path(results_root, stem).name,))
    for rel in STAGE_OUTPUTS:
        target = results_root / rel.format(stem=stem)
        if target.parent.is_dir():
            for old in target.parent.glob(f".{target.name}.old-*"):
                _remove(old)
            fileio.remove_stale_temps(target.parent, names=(target.name,))


def _scrub_checkout(text: str, root: Path) -> str:
    """``text`` (JSON) with every path under the checkout ``root`` made relative to it (``root`` itself ->
    ``.``) and the shared folder beside it written ``../shared``: a clone elsewhere writes the same bytes."""
    for anchor, prefix in ((root, ""), (root.parent / "shared", "../shared/")):
        if len(anchor.parts) < 2 or (anchor != root and len(root.parts) < 3):
            continue  # "/" (or a shared folder at the top): far too common a prefix to rewrite
        esc = json.dumps(str(anchor))[1:-1]
        text = re.sub(re.escape(esc) + r"(?:(/)|(?![\w\-]|\.[\w\-]))",
                      lambda m, prefix=prefix: prefix if m.group(1) else (prefix.rstrip("/") or "."), text)
    return text


def normalize_executed(nb: dict, output_path: str, replace: dict[str, str] | None = None, *,
                       root: str | Path | None = None) -> tuple[dict, dict]:
    """An executed notebook without what differs between two runs of the same stage, and that as a log entry.

    Returns ``(notebook, log)``; the log is ``{"stage_seconds", "start_time", "end_time", "cells": [{"cell",
    "seconds"}]}``. Normalized: papermill's notebook and cell ``start_time``/``end_time``/``duration`` and the
    kernel's cell ``execution`` timestamps (moved to the log); the random id of papermill's injected
    parameters cell (``injected-parameters``); the random UUIDs of HTML reprs (xarray's ``section-<uuid>``
    element ids: numbered in order of appearance, each UUID keeping its number, so the links inside a repr
    still work); ``replace``'s strings (the staging folder -> the results folder), in order; every path
    under the checkout ``root`` (when given), which becomes relative to it, and papermill's ``output_path``
    (the same way).
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
    if root is not None:
        text = _scrub_checkout(text, Path(root))
        output_path = json.loads(_scrub_checkout(json.dumps(str(output_path)), Path(root)))
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
    profile_dir = stage / PROFILE_DIR
    kenv = kernel_env(profile_dir)  # so does a bad $TIERINGLAB_STAGE_PROFILE
    out = Path(output) if output else results_root / "notebooks" / nb.name
    moves = []  # (staged, target) of every output
    for rel in STAGE_OUTPUTS:
        rel = rel.format(stem=nb.stem)
        moves.append((stage / rel, out if rel == f"notebooks/{nb.stem}.ipynb" else results_root / rel))
    _check_targets(nb, results_root, [target for _, target in moves])
    # Relative to the repository root (as Outputs reads it, in the kernel too) when inside it: the executed
    # notebook then holds no path of this checkout.
    if paths.repo_root(nb.parent) == root:
        parameters["results_dir"] = fileio.relative(stage, root)
    complete_installs(results_root)  # what a crash interrupted after its commit point, any stage's
    with _stage_locked(results_root, nb.stem):
        journal = journal_path(results_root, nb.stem)
        if journal.exists():  # committed by a run that died since; completed before anything else
            fileio.roll_forward(journal, base=results_root)
        _remove_leftovers(results_root, nb.stem)  # what an interrupted run of this stage left
        stage.mkdir(parents=True)
        staged_nb = stage / "notebooks" / nb.name
        staged_nb.parent.mkdir(parents=True, exist_ok=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        load = os.getloadavg()[0]
        try:
            profile_dir.mkdir()
            with _kernel_env(**kenv):
                papermill.execute_notebook(str(nb), str(staged_nb), parameters=parameters, cwd=str(nb.parent),
                                           progress_bar=progress_enabled(), log_output=False)
        except BaseException as exc:
            if isinstance(exc, Exception):
                exc.add_note(f"tieringlab run: results/ is unchanged; the failed run's outputs are in {stage} "
                             f"(removed by the next run of this stage)")
            raise
        executed = json.loads(staged_nb.read_text(encoding="utf-8"))
        executed, timing = normalize_executed(
            executed, str(out),
            {str(stage): str(results_root), fileio.relative(stage, root): fileio.relative(results_root, root)},
            root=root)
        fileio.write_text(staged_nb, nbformat.writes(nbformat.from_dict(executed)) + "\n")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the kernel has exited: a waited-for child
        timing.update({
            "cpu_user_s": round(after.ru_utime - before.ru_utime, 3),
            "cpu_system_s": round(after.ru_stime - before.ru_stime, 3),
            # Linux reports KiB: the largest resident set of any child this process waited for (the kernel)
            "kernel_peak_rss_bytes": after.ru_maxrss * 1024,
            "load_average_at_start": round(load, 2),
        })
        costs = profile.collect(profile_dir, top=PROFILE_TOP)
        shutil.rmtree(profile_dir)
        if costs is not None:
            timing["profile"] = costs
        update_log(log_path(stage, nb.stem), {"notebook": nb.stem, "stage": timing})
        # a missing staged output removes its target (the stage no longer makes it, as DVC removes outputs first)
        fileio.install([(staged if os.path.lexists(staged) else None, target) for staged, target in moves],
                       journal, base=results_root, remove=(stage,))
    with contextlib.suppress(OSError):  # the shared .staging folder, once no stage uses it
        (results_root / STAGING).rmdir()
    return out
