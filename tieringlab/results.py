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
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd

from tieringlab import fileio, paths

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


class Outputs:
    """Saves one notebook's figures, tables, metrics and claim values under a results directory."""

    def __init__(self, notebook: str, results_dir: str | os.PathLike | None = None):
        if not notebook or "/" in notebook or notebook.endswith(".ipynb"):
            raise ValueError(f"notebook must be a stem like '00_quickstart', got {notebook!r}")
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
        self._metrics: dict[str, Any] = {"notebook": notebook, "values": {}, "claims": {}}
        self._timings: dict[str, Any] = {}
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

    def metric(self, key: str, value: Any) -> None:
        """Record a named number (or small structure) in this notebook's metrics JSON."""
        self._metrics["values"][key] = plain(value)
        self._write_metrics()

    def claim(self, claim_id: str, value: float | bool | None, note: str | None = None) -> None:
        """Record the reproduced value of a ledger claim (see :mod:`tieringlab.claims`)."""
        from tieringlab.claims import registry  # noqa: PLC0415

        known = registry()
        if claim_id not in known:
            raise KeyError(f"unknown claim id {claim_id!r}; define it in tieringlab/claims/ first")
        if known[claim_id].source != self.notebook:
            raise ValueError(f"claim {claim_id!r} belongs to notebook {known[claim_id].source!r}, "
                             f"not {self.notebook!r}")
        if isinstance(value, (np.bool_, bool)):
            value = bool(value)
        elif value is not None:
            value = float(value)
        self._metrics["claims"][claim_id] = {"value": value, "note": note}
        self._write_metrics()

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
