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
"""

from __future__ import annotations

import json
import math
import os
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
        # temporaries an interrupted earlier run of this notebook left behind (kill -9 between write and rename)
        for d in (self.figures_dir, self.tables_dir):
            fileio.remove_stale_temps(d)
        fileio.remove_stale_temps(self.metrics_path.parent, names=(self.metrics_path.name,))
        fileio.remove_stale_temps(self.log_path.parent, names=(self.log_path.name,))
        self._metrics: dict[str, Any] = {"notebook": notebook, "values": {}, "claims": {}}
        self._timings: dict[str, Any] = {}
        self._write_metrics()

    def __repr__(self) -> str:
        return f"Outputs({self.notebook!r}, root={str(self.root)!r})"

    def figure(self, fig, name: str, *, formats: tuple[str, ...] = ("png", "svg"), dpi: int = 150) -> list[Path]:
        """Save a matplotlib figure as PNG and SVG (no timestamps in the files)."""
        written = []
        for fmt in formats:
            meta = {"Date": None} if fmt == "svg" else {"Software": None} if fmt == "png" else None
            path = self.figures_dir / f"{name}.{fmt}"
            fileio.write_with(path, lambda tmp, fmt=fmt, meta=meta: fig.savefig(
                tmp, format=fmt, dpi=dpi, bbox_inches="tight", metadata=meta))
            written.append(path)
        return written

    def table(self, data, name: str, *, index: bool = False, floatfmt: str = ".4g") -> list[Path]:
        """Save a DataFrame (or an xarray Dataset/DataArray, flattened) as CSV and Markdown."""
        if hasattr(data, "to_dataframe") and not isinstance(data, pd.DataFrame):
            data = data.to_dataframe().reset_index() if hasattr(data, "dims") else data.to_dataframe()
        if not isinstance(data, pd.DataFrame):
            raise TypeError(f"table {name!r}: expected a pandas DataFrame or xarray object, got {type(data).__name__}")
        csv_path = fileio.write_text(self.tables_dir / f"{name}.csv", data.to_csv(index=index, lineterminator="\n"))
        md_path = fileio.write_text(self.tables_dir / f"{name}.md",
                                    data.to_markdown(index=index, floatfmt=floatfmt) + "\n")
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

    def _write_metrics(self) -> None:
        fileio.write_text(self.metrics_path, json.dumps(plain(self._metrics), indent=2, sort_keys=True) + "\n")


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
