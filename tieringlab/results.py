"""The one helper notebooks use to save what they produce.

``out = Outputs("00_quickstart", results_dir)`` then

- ``out.figure(fig, "lru_hit_ratio")``  -> ``figures/00_quickstart/lru_hit_ratio.{png,svg}``
- ``out.table(df, "table1")``           -> ``tables/00_quickstart/table1.{csv,md}``
- ``out.metric("n_requests", 113872)``  -> ``metrics/00_quickstart.json`` (``values``)
- ``out.claim("vfrm.obs2...", 0.93)``   -> ``metrics/00_quickstart.json`` (``claims``), read by the ledger
- ``out.timing("sweep", seconds)``       -> ``logs/00_quickstart.json`` (``timings``): NOT a DVC output

Every file is written atomically (temporary file, then rename). Figures are written without
timestamps so the same inputs give the same bytes: figures, tables and metrics are the DVC outputs
and must be bit-identical when a stage reruns with the same parameters and seed. Wall-clock times
differ on every run, so they never go there: :meth:`Outputs.timing` writes them to ``logs/``, which
no stage declares and git ignores (the pipeline adds the stage's own wall time to the same file).

Captions. ``figure`` and ``table`` take an optional ``caption`` (one sentence saying what is shown) and
``reproduces`` (the paper figure or table it regenerates, e.g. ``"vFRM Fig. 6"``; None for a figure of
our own). Both are recorded, in the order the notebook saves them, in a small manifest beside the
files (``figures/<notebook>/manifest.json``, ``tables/<notebook>/manifest.json``) that the results
site (:mod:`tieringlab.site`) reads. A figure saved without a caption gets its matplotlib title
(its suptitle, or the title of its only titled panel).

Provenance. ``Outputs("00_quickstart", results_dir, params=P, seed=seed)`` (plus ``shared={"traces": TR}``
for a notebook whose section ``uses = ("traces",)``) records in the metrics JSON, under ``provenance``,
where the numbers come from: ``commit`` (HEAD of the git checkout at the repository root), ``dirty``
(whether a tracked file differs from it, not counting ``results/``, ``build/`` and ``dvc.lock``, which
the pipeline itself writes), ``params_hash`` (:func:`params_hash` of the notebook's parameters: its
section, the shared sections it uses and the seed, less the speed-only settings, :func:`result_values`),
``scale`` (``"paper"`` when those parameters are the ones ``params.yaml`` gives the notebook, else
``"reduced"``: a run that differs from ``params.yaml`` only in a speed-only setting is a paper-scale run)
and ``commit_date`` (the commit's date).
``commit`` and ``dirty`` are None outside a git checkout. Only what is fixed for a given tree and
parameters goes there, so a rerun with the same parameters, seed and code still writes the same bytes:
the *commit's* date, not the run's. The wall-clock date of the run goes, with the same provenance, to
``logs/<notebook>.json`` (``provenance.run_date``). The old call ``Outputs(stem, results_dir)`` still
works and records ``params_hash`` None and ``scale`` ``"unknown"``. The ledger and the site show each
notebook's :func:`provenance_status` (a reduced-scale or stale run is marked as such; a metrics file
without provenance, such as one committed to git, gives no verdict: see :mod:`tieringlab.report`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import hashlib
import json
import math
import os
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd

from tieringlab import fileio, params, paths

matplotlib.rcParams["svg.hashsalt"] = "tieringlab"  # deterministic SVG element ids


def plain(value: Any) -> Any:
    """Convert numpy/jax scalars and arrays to JSON-ready Python values."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "tolist"):
        return plain(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    raise TypeError(f"cannot store {type(value).__name__} in metrics JSON")


#: The caption manifest beside each notebook's figures and tables (see the module docstring).
MANIFEST = "manifest.json"


def _figure_title(fig) -> str | None:
    """The figure's suptitle, else the title of its one titled axes (None otherwise: the titles of
    several panels do not make a caption)."""
    sup = getattr(fig, "_suptitle", None)
    if sup is not None and sup.get_text().strip():
        return sup.get_text().strip()
    titles = [ax.get_title().strip() for ax in fig.get_axes() if ax.get_title().strip()]
    return titles[0] if len(titles) == 1 else None


def _check_caption(kind: str, name: str, caption, reproduces) -> None:
    for what, text in (("caption", caption), ("reproduces", reproduces)):
        if text is not None and not isinstance(text, str):
            raise TypeError(f"{kind} {name!r}: {what} must be a string or None, got {type(text).__name__}")


#: Where the numbers of a metrics file come from (module docstring): what :class:`Outputs` records.
PROVENANCE_KEYS = ("commit", "dirty", "params_hash", "scale", "commit_date")
#: What the repository's own runs write and so never make a tree "dirty" (pathspecs from the repository root).
_NOT_DIRTY = ("results", "build", "dvc.lock")


def params_hash(values: Mapping[str, Any]) -> str:
    """sha256 (hex) of the canonical JSON of a notebook's parameters (``{field: value, ..., shared_section:
    {...}, "seed": seed}``, as :func:`tieringlab.pipeline.parameters_from` gives them without ``results_dir``):
    plain values, sorted keys, no spaces, a whole float written as the integer it equals (``params.yaml``'s
    ``160000000`` and a notebook's ``160000000.0`` are one parameter value: validation may give either). The one
    hash both a run (:class:`Outputs`) and the current ``params.yaml`` (:func:`current_params_hash`) are given."""
    def canonical(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: canonical(x) for k, x in v.items()}
        if isinstance(v, list):
            return [canonical(x) for x in v]
        return int(v) if isinstance(v, float) and v.is_integer() else v

    text = json.dumps(canonical(plain(dict(values))), sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def notebook_values(section_obj: Any, *, shared: Mapping[str, Any] | None = None, seed: Any = None) -> dict:
    """A notebook's parameters as :func:`tieringlab.pipeline.parameters_from` passes them: the validated section
    (``P``), each shared section it ``uses`` (``shared["traces"]``: a dict, validated here, or the section
    instance) and the seed. A shared section the section uses and ``shared`` lacks, or one it does not use, is
    an error: the hash would not be the one ``params.yaml`` gives."""
    if not dataclasses.is_dataclass(section_obj) or isinstance(section_obj, type):
        raise TypeError(f"params must be the notebook's validated section (P = params.check(...)), "
                        f"got {type(section_obj).__name__}")
    shared = dict(shared or {})
    uses = tuple(getattr(type(section_obj), "uses", ()))
    name = getattr(type(section_obj), "section_name", type(section_obj).__name__)
    missing, extra = [u for u in uses if u not in shared], sorted(set(shared) - set(uses))
    if missing or extra:
        raise ValueError(f"section {name!r} uses the shared sections {list(uses)}: pass shared= with exactly "
                         f"those (missing {missing}, not used {extra})")
    values = plain(dataclasses.asdict(section_obj))
    for key in uses:
        obj = shared[key]
        if not dataclasses.is_dataclass(obj):
            obj = params.validate_section(key, obj, source="notebook parameters")
        values[key] = plain(dataclasses.asdict(obj))
    values["seed"] = plain(seed)
    return values


def _speed_only_paths(cls: type, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The speed-only settings of the params class ``cls`` as key paths: those its ``speed_only`` class attribute
    names (dotted paths into its fields, e.g. ``("caches.threads",)``), and those of every params class nested in
    its fields, prefixed by the field's name."""
    out = [prefix + tuple(str(p).split(".")) for p in getattr(cls, "speed_only", ())]
    if params.is_params(cls):
        for name, tp in params.field_types(cls).items():
            if params.is_params(tp):
                out += _speed_only_paths(tp, (*prefix, name))
    return out


def result_values(values: Mapping[str, Any], section_cls: type) -> dict:
    """A notebook's parameters (:func:`notebook_values`, :func:`tieringlab.pipeline.parameters_from`) less the
    settings that change speed only, never a result: those the section class ``section_cls``, the params classes
    nested in it and the shared sections it ``uses`` declare in a ``speed_only`` class attribute (e.g. a page
    cache's ``threads``). Such a setting is neither a scale nor a staleness: a paper-scale run with 1 thread is a
    paper-scale run."""
    out = json.loads(json.dumps(plain(dict(values))))  # a deep copy of plain values
    paths = _speed_only_paths(section_cls)
    for shared in getattr(section_cls, "uses", ()):
        if shared in params.sections():
            paths += _speed_only_paths(params.sections()[shared], (shared,))
    for path in paths:
        node = out
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(path[-1], None)
    return out


def current_params_hash(stem: str, root: str | os.PathLike | None = None) -> str | None:
    """:func:`params_hash` of the parameters ``params.yaml`` (at ``root``, default the repository root) gives
    notebook ``stem`` now; None when it has no section for it or cannot be read or validated."""
    from tieringlab import pipeline  # noqa: PLC0415  (same layer; pipeline imports this module)

    root = Path(root) if root is not None else paths.repo_root()
    try:
        loaded = params.load(root / "params.yaml")
        values = pipeline.parameters_from(loaded, stem, None)
    except (ValueError, OSError):  # ParamsError is a ValueError, as is a stem that names no notebook
        return None
    return params_hash(result_values(values, type(loaded[pipeline.section_of(stem)])))


def _git(root: Path, *args: str) -> str | None:
    """``git args`` run in ``root``: its stdout, or None when git is missing or fails (not a checkout)."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    try:
        proc = subprocess.run(["git", "--no-optional-locks", *args], cwd=root, env=env, capture_output=True,
                              text=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def git_state(root: str | os.PathLike | None = None) -> dict[str, Any]:
    """``{"commit", "dirty", "commit_date"}`` of the git checkout at ``root`` (default the repository root):
    HEAD's hash, whether a tracked file differs from it (outside ``results/``, ``build/`` and ``dvc.lock``;
    read without taking git's index lock) and HEAD's committer date (ISO 8601). All None outside a checkout,
    without git, or in a repository with no commit."""
    root = Path(root) if root is not None else paths.repo_root()
    head = _git(root, "show", "-s", "--format=%H%n%cI", "HEAD")
    status = _git(root, "status", "--porcelain", "--untracked-files=no", "--", ".",
                  *(f":(exclude){p}" for p in _NOT_DIRTY)) if head else None
    if not head or status is None:
        return {"commit": None, "dirty": None, "commit_date": None}
    commit, date = (head.splitlines() + ["", ""])[:2]
    return {"commit": commit.strip() or None, "dirty": bool(status.strip()), "commit_date": date.strip() or None}


def provenance(notebook: str, section_obj: Any = None, *, shared: Mapping[str, Any] | None = None,
               seed: Any = None, root: str | os.PathLike | None = None) -> dict[str, Any]:
    """The ``provenance`` entry of ``notebook``'s metrics (module docstring) for a run with ``section_obj``
    (None: not known, ``params_hash`` None and ``scale`` ``"unknown"``), ``shared`` and ``seed``."""
    root = Path(root) if root is not None else paths.repo_root()
    prov: dict[str, Any] = {**git_state(root), "params_hash": None, "scale": "unknown"}
    if section_obj is not None:
        prov["params_hash"] = params_hash(result_values(notebook_values(section_obj, shared=shared, seed=seed),
                                                        type(section_obj)))
        current = current_params_hash(notebook, root)
        prov["scale"] = "unknown" if current is None else "paper" if current == prov["params_hash"] else "reduced"
    return {k: prov[k] for k in PROVENANCE_KEYS}


#: :func:`provenance_status`'s first words, one per case.
NO_RUN, REDUCED, STALE, PAPER, UNKNOWN_SCALE = ("no run here", "reduced scale",
                                                 "stale (params.yaml changed since the run)", "paper scale",
                                                 "unknown scale")


def provenance_kind(prov: Mapping[str, Any] | None, current_hash: str | None) -> str:
    """Which of :data:`NO_RUN`, :data:`REDUCED`, :data:`UNKNOWN_SCALE`, :data:`STALE`, :data:`PAPER` a metrics
    file's ``provenance`` is, given the hash ``params.yaml`` gives its notebook now (:func:`current_params_hash`).
    No provenance (a metrics file committed to git, or written before provenance existed): no run here. A run
    recorded at paper scale whose parameters are no longer ``params.yaml``'s: stale."""
    if not isinstance(prov, Mapping):
        return NO_RUN
    if prov.get("scale") == "reduced":
        return REDUCED
    if prov.get("scale") != "paper" or not prov.get("params_hash"):
        return UNKNOWN_SCALE
    return PAPER if prov["params_hash"] == current_hash else STALE


def provenance_status(prov: Mapping[str, Any] | None, current_hash: str | None) -> str:
    """A short label for a metrics file's ``provenance``: :func:`provenance_kind`, then the commit's short hash
    and date and "(dirty tree)" when the tree differed from it, e.g. ``"paper scale, commit 7f05e7c of
    2026-11-24 (dirty tree)"``; ``"no run here"`` alone when there is no provenance."""
    kind = provenance_kind(prov, current_hash)
    if kind == NO_RUN:
        return kind
    commit, date = prov.get("commit"), prov.get("commit_date")
    where = f"commit {str(commit)[:7]}" if commit else "no git commit"
    if commit and date:
        where += f" of {str(date)[:10]}"
    if prov.get("dirty"):
        where += " (dirty tree)"
    return f"{kind}, {where}"


def _reading_name(name: str) -> bool:
    """Whether ``name`` is a reading's name by :class:`tieringlab.readings.Reading`'s one rule."""
    from tieringlab.readings import Reading  # noqa: PLC0415  (only when readings are recorded)

    try:
        Reading(name)
    except ValueError:
        return False
    return True


def _claim_value(what: str, value: Any) -> float | bool | None:
    """A claim's value as the metrics store it: a bool, a float or None."""
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"claim {what}: expected a number, a bool or None, got {value!r}") from None


class Outputs:
    """Saves one notebook's figures, tables, metrics and claim values under a results directory.

    ``params`` (the notebook's validated section, ``P``), ``seed`` and ``shared`` (the shared sections the
    section ``uses``, e.g. ``{"traces": TR}``) are recorded as the metrics' provenance (module docstring)."""

    def __init__(self, notebook: str, results_dir: str | os.PathLike | None = None, *, params: Any = None,
                 seed: Any = None, shared: Mapping[str, Any] | None = None):
        if not notebook or "/" in notebook or notebook.endswith(".ipynb"):
            raise ValueError(f"notebook must be a stem like '00_quickstart', got {notebook!r}")
        prov = provenance(notebook, params, shared=shared, seed=seed)  # a bad params/shared stops here
        self.notebook = notebook
        self.root = paths.results_dir(results_dir)
        self.figures_dir = self.root / "figures" / notebook
        self.tables_dir = self.root / "tables" / notebook
        self.metrics_path = self.root / "metrics" / f"{notebook}.json"
        self.log_path = log_path(self.root, notebook)
        complete_installs(self.root)  # a stage install a crash interrupted, before anything here is written
        # temporaries an interrupted earlier run of this notebook left behind (kill -9 between write and rename)
        for d in (self.figures_dir, self.tables_dir):
            fileio.remove_stale_temps(d)
        fileio.remove_stale_temps(self.metrics_path.parent, names=(self.metrics_path.name,))
        fileio.remove_stale_temps(self.log_path.parent, names=(self.log_path.name,))
        self._metrics: dict[str, Any] = {"notebook": notebook, "values": {}, "claims": {}, "provenance": prov}
        self._timings: dict[str, Any] = {}
        # the run's wall-clock date goes to the log (not a DVC output), beside the same provenance
        run_date = datetime.datetime.now(datetime.UTC).astimezone().isoformat(timespec="seconds")
        update_log(self.log_path, {"notebook": notebook, "provenance": {**prov, "run_date": run_date}})
        # Caption manifests, written on the first save of each kind (so a run replaces the last run's).
        self._manifests: dict[str, list[dict[str, Any]]] = {"figures": [], "tables": []}
        self._write_metrics()

    def __repr__(self) -> str:
        return f"Outputs({self.notebook!r}, root={str(self.root)!r})"

    def figure(self, fig, name: str, *, formats: tuple[str, ...] = ("png", "svg"), dpi: int = 150,
               caption: str | None = None, reproduces: str | None = None) -> list[Path]:
        """Save a matplotlib figure as PNG and SVG (no timestamps in the files).

        ``caption`` (default: the figure's title, see the module docstring) and ``reproduces`` (the
        paper figure, e.g. ``"vFRM Fig. 6"``) go to ``figures/<notebook>/manifest.json`` for the site.
        """
        _check_caption("figure", name, caption, reproduces)
        written = []
        for fmt in formats:
            meta = {"Date": None} if fmt == "svg" else {"Software": None} if fmt == "png" else None
            path = self.figures_dir / f"{name}.{fmt}"
            fileio.write_with(path, lambda tmp, fmt=fmt, meta=meta: fig.savefig(
                tmp, format=fmt, dpi=dpi, bbox_inches="tight", metadata=meta))
            written.append(path)
        if caption is None:
            caption = _figure_title(fig)
        self._record("figures", name, caption, reproduces, [p.name for p in written])
        return written

    def table(self, data, name: str, *, index: bool = False, floatfmt: str = ".4g", caption: str | None = None,
              reproduces: str | None = None) -> list[Path]:
        """Save a DataFrame (or an xarray Dataset/DataArray, flattened) as CSV and Markdown.

        ``caption`` and ``reproduces`` (the paper table, e.g. ``"vFRM Table 1"``) go to
        ``tables/<notebook>/manifest.json`` for the results site.
        """
        _check_caption("table", name, caption, reproduces)
        if hasattr(data, "to_dataframe") and not isinstance(data, pd.DataFrame):
            data = data.to_dataframe().reset_index() if hasattr(data, "dims") else data.to_dataframe()
        if not isinstance(data, pd.DataFrame):
            raise TypeError(f"table {name!r}: expected a pandas DataFrame or xarray object, got {type(data).__name__}")
        csv_path = fileio.write_text(self.tables_dir / f"{name}.csv", data.to_csv(index=index, lineterminator="\n"))
        md_path = fileio.write_text(self.tables_dir / f"{name}.md",
                                    data.to_markdown(index=index, floatfmt=floatfmt) + "\n")
        self._record("tables", name, caption, reproduces, [csv_path.name, md_path.name])
        return [csv_path, md_path]

    def metric(self, key: str, value: Any, *, units: str | None = None, dims: tuple[str, ...] | None = None,
               coords: Mapping[str, Any] | None = None) -> None:
        """Record a named number (or small structure) in this notebook's metrics JSON.

        ``units``: the value's units (``"s"``, ``"bytes"``, ``"1"`` for a ratio); sweeps carry them into
        ``sweep.nc``. An array along named dimensions (a hit-ratio curve over cache sizes) is recorded whole: an
        :class:`xarray.DataArray` (its dims, coordinates and ``attrs["units"]``), or an array with ``dims`` and
        ``coords`` (one coordinate list per dim). It goes to the JSON's ``arrays`` and a sweep keeps it along its
        own dimensions beside the swept ones.
        """
        if units is not None and (not isinstance(units, str) or not units):
            raise ValueError(f"metric {key!r}: units must be a non-empty string such as 's' or '1', got {units!r}")
        if hasattr(value, "dims") and hasattr(value, "coords"):  # an xarray.DataArray
            dims = tuple(str(d) for d in value.dims)
            coords = {d: value[d].values if d in value.coords else np.arange(value.sizes[d]) for d in dims}
            units = units or value.attrs.get("units")
            value = value.values
        if dims is not None:
            data = np.asarray(value, dtype=np.float64)
            dims = tuple(dims)
            coords = dict(coords or {})
            if data.ndim != len(dims) or set(coords) != set(dims):
                raise ValueError(f"metric {key!r}: an array of shape {data.shape} needs one dim name per axis and "
                                 f"one coordinate list per dim; got dims {dims} and coords for {sorted(coords)}")
            for axis, d in enumerate(dims):
                if len(coords[d]) != data.shape[axis]:
                    raise ValueError(f"metric {key!r}: dim {d!r} has {data.shape[axis]} values but "
                                     f"{len(coords[d])} coordinates")
            self._metrics.setdefault("arrays", {})[key] = {
                "dims": list(dims), "coords": {d: plain(list(np.asarray(coords[d]).tolist())) for d in dims},
                "data": plain(data.tolist()), "units": units}
        else:
            self._metrics["values"][key] = plain(value)
            if units is not None:
                self._metrics.setdefault("units", {})[key] = units
        self._write_metrics()

    def claim(self, claim_id: str, value: float | bool | None, note: str | None = None, *,
              readings: Mapping[str, float | bool | None] | None = None, samples=None) -> None:
        """Record the reproduced value of a ledger claim (see :mod:`tieringlab.claims`) under the default reading.

        ``readings``: the same claim's value under each other reading the notebook ran (``{reading name: value}``,
        names as :class:`tieringlab.readings.Reading` gives them; the ledger shows the verdict under each and a
        diagnosis). ``samples``: the default reading's value per replication (seed), when the value is a statistic
        over replications: the ledger's audit compares rows by them (two rows computing the same quantity).
        """
        from tieringlab.claims import registry  # noqa: PLC0415

        known = registry()
        if claim_id not in known:
            raise KeyError(f"unknown claim id {claim_id!r}; define it in tieringlab/claims/ first")
        if known[claim_id].source != self.notebook:
            raise ValueError(f"claim {claim_id!r} belongs to notebook {known[claim_id].source!r}, "
                             f"not {self.notebook!r}")
        entry: dict[str, Any] = {"value": _claim_value(claim_id, value), "note": note}
        if readings:
            bad = [name for name in readings
                   if not isinstance(name, str) or name == "default" or not _reading_name(name)]
            if bad:
                raise ValueError(f"claim {claim_id!r}: readings must be named by the non-default readings' names "
                                 f"(letters, digits, '_', '-', parts joined by '.'); got {bad!r}")
            entry["readings"] = {name: _claim_value(f"{claim_id} under {name}", v) for name, v in readings.items()}
        if samples is not None:
            entry["samples"] = [float(x) for x in np.asarray(samples, np.float64).ravel()]
        self._metrics["claims"][claim_id] = entry
        self._write_metrics()

    def claims_by_reading(self, values: Mapping[str, Mapping[str, Any]], default: str = "default") -> None:
        """Record every claim of ``values = {reading name: {claim id: value or (value, note)}}``: the ``default``
        reading's value (and note) as the claim's value, the other readings' as its ``readings``. A claim the
        default reading does not give is not recorded."""
        if default not in values:
            raise KeyError(f"no values under the default reading {default!r}; readings: {list(values)}")

        def split(v):
            return (v[0], v[1] if len(v) > 1 else None) if isinstance(v, tuple) else (v, None)

        for cid, v in values[default].items():
            value, note = split(v)
            others = {name: split(vals[cid])[0] for name, vals in values.items() if name != default and cid in vals}
            self.claim(cid, value, note, readings=others or None)

    def timing(self, name: str, seconds: Any) -> Path:
        """Record wall-clock seconds (a number, or a pandas/xarray object or dict of them) under ``name`` in
        ``logs/<notebook>.json``, outside the DVC outputs: a rerun with the same parameters and seed then
        writes the same figures, tables and metrics, byte for byte. Returns the log's path."""
        if hasattr(seconds, "to_dict") and not isinstance(seconds, dict):  # pandas Series/DataFrame
            seconds = seconds.to_dict()
        elif hasattr(seconds, "to_series"):  # xarray DataArray
            seconds = seconds.to_series().to_dict()
        if isinstance(seconds, dict):
            seconds = {"/".join(map(str, k)) if isinstance(k, tuple) else str(k): v for k, v in seconds.items()}
        self._timings[name] = plain(seconds)
        update_log(self.log_path, {"notebook": self.notebook, "timings": self._timings})
        return self.log_path

    def _record(self, kind: str, name: str, caption: str | None, reproduces: str | None, files: list[str]) -> None:
        """Add ``name`` to the ``kind`` manifest (in place when saved again) and write it atomically."""
        entry = {"name": name, "caption": caption or None, "reproduces": reproduces or None, "files": files}
        entries = self._manifests[kind]
        at = next((i for i, e in enumerate(entries) if e["name"] == name), None)
        if at is None:
            entries.append(entry)
        else:
            entries[at] = entry
        folder = self.figures_dir if kind == "figures" else self.tables_dir
        fileio.write_text(folder / MANIFEST, json.dumps({"notebook": self.notebook, kind: entries}, indent=2) + "\n")

    def _write_metrics(self) -> None:
        fileio.write_text(self.metrics_path, json.dumps(plain(self._metrics), indent=2, sort_keys=True) + "\n")


#: Where ``tieringlab run`` stages a stage's outputs (``<results>/.staging/<stem>/``), and beside them its
#: install journal (``<stem>.install.json``) and its lock (``<stem>.lock``): see :mod:`tieringlab.pipeline`.
STAGING = ".staging"
JOURNAL_SUFFIX = ".install.json"


def journal_path(results_dir: str | os.PathLike | None, notebook: str) -> Path:
    """``<results>/.staging/<notebook>.install.json``: the journal of the stage's install into ``results``."""
    return paths.results_dir(results_dir) / STAGING / f"{notebook}{JOURNAL_SUFFIX}"


def stage_lock(results_dir: str | os.PathLike | None, notebook: str) -> Path:
    """``<results>/.staging/<notebook>.lock``: held by a run of the stage (and by whoever completes its install)."""
    return paths.results_dir(results_dir) / STAGING / f"{notebook}.lock"


def complete_installs(results_dir: str | os.PathLike | None) -> list[str]:
    """Complete every stage install into ``results_dir`` that a crash interrupted after its commit point
    (a journal in ``.staging/``), so what is read next is all new; returns the stages completed.

    Called before anything reads or writes results: by ``tieringlab run``, the report, the site and
    :class:`Outputs`. Each is completed holding the stage's lock (waiting while another process holds it
    and the journal is still there: an install in progress, milliseconds). A journal that cannot be read
    raises :class:`tieringlab.fileio.JournalError` naming it; a folder without journals costs one ``stat``.
    """
    root = paths.results_dir(results_dir)
    staging = root / STAGING
    if not staging.is_dir():
        return []
    done = []
    for journal in sorted(staging.glob(f"*{JOURNAL_SUFFIX}")):
        stem = journal.name[: -len(JOURNAL_SUFFIX)]
        if not stem or stem.startswith("."):
            continue
        while journal.is_file():
            try:
                with fileio.locked(stage_lock(root, stem), wait=False):
                    if journal.is_file():
                        fileio.roll_forward(journal, base=root)
                        done.append(stem)
                break
            except BlockingIOError:  # its installer is at work (or a new run of the stage is completing it
                time.sleep(0.02)     # before running its notebook): wait for the journal, not for that run
    if done:
        with contextlib.suppress(OSError):
            staging.rmdir()  # once no stage uses it
    return done


def log_path(results_dir: str | os.PathLike | None, notebook: str) -> Path:
    """``<results>/logs/<notebook>.json``: a stage's wall-clock times (not a DVC output, ignored by git)."""
    return paths.results_dir(results_dir) / "logs" / f"{notebook}.json"


def update_log(path: str | os.PathLike, entries: dict) -> Path:
    """Merge ``entries`` into the JSON log at ``path`` (created if missing; an unreadable one is replaced)."""
    path = Path(path)
    data: dict = {}
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, OSError):
            data = {}
        if not isinstance(data, dict):
            data = {}
    data.update(plain(entries))
    return fileio.write_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n")
