"""Parameter sweeps of a notebook on Dask distributed: ``tieringlab sweep`` and :func:`sweep`.

::

    tieringlab sweep notebooks/00_quickstart.ipynb -p line_bytes 4096 8192 -p seed 0 1 \\
        --scheduler local:2 --out build/sweep

runs the notebook once per point of the grid (the Cartesian product of the ``-p`` lists) and writes

- ``DIR/notebooks/<point>.ipynb``: each executed notebook (``<point>`` is ``line_bytes=4096,seed=0``);
- ``DIR/results/<point>/``: what the notebook saved there (figures, tables, metrics);
- ``DIR/sweep.nc``: one :class:`xarray.Dataset` gathering every run's scalar metrics and claim values,
  with one dimension per swept parameter (named after it, in ``-p`` order), ``ok`` and ``error`` per
  point, the scheduler in ``attrs["scheduler"]`` and the parameters held fixed in
  ``attrs["fixed_parameters"]`` (JSON).

Parameters. Every value of every point is validated against the ``params.yaml`` schema
(:mod:`tieringlab.params`, including the sections' cross-field checks) before anything runs; a bad
value stops the sweep with a message naming it. A swept name is a field of the notebook's section
(``line_bytes``; ``quickstart.line_bytes`` is the same), ``seed``, or a field of a shared section the
notebook uses (``traces.scale``). The values not swept come from ``params.yaml`` (``base="params"``,
the default: a sweep around the paper-scale run, as ``dvc repro`` runs it), or are the notebook's own
small defaults (``base="notebook"``: only the swept values are passed; the section's cross-field
checks then see the schema's defaults for the others, and the notebook's own ``params.check`` sees
its real values when it runs).

Where it runs. ``scheduler`` is the address of a running Dask distributed scheduler
(``tcp://host:8786``), or ``local:N`` for a :class:`distributed.LocalCluster` of N single-threaded
worker processes started for the sweep and closed after it (default: ``local:N`` with N the smaller of
the number of points and of CPUs). Both take the same path: a :class:`distributed.Client` on the
address, one task per point (:func:`execute` runs the notebook with papermill on the worker, in a
temporary folder, and returns the executed notebook and the files it saved as bytes, so the workers
need no shared file system with the client; they need the same environment: tieringlab installed and
its pinned data, ``make venv && make data`` in a checkout). The client writes every file as its point
completes. A point whose notebook raises, or whose worker dies, is reported with its parameters
(``ok`` false, ``error`` its exception) and its variables are NaN; the other points are kept. Wall
times go to no output: the same grid and seed give the same files.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import math
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

import numpy as np

from tieringlab import fileio, params, paths
from tieringlab.progress import progress

if TYPE_CHECKING:
    import xarray as xr

# This module is imported on every Dask worker (it holds the task, :func:`execute`); what only the
# client needs (the experiment sections, the pipeline, xarray, matplotlib via results) is imported
# where it is used, so that a worker starts fast.

__all__ = ["SWEEP_FILE", "Point", "SweepError", "parse_value", "plan", "execute", "sweep", "scheduler_spec"]

#: The gathered metrics under the output folder.
SWEEP_FILE = "sweep.nc"
_LOCAL = re.compile(r"^local:(\d+)$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._=,+-]+")


class SweepError(ValueError):
    """A sweep that cannot start: a bad scheduler, a duplicated value, an empty grid."""


@dataclasses.dataclass(frozen=True)
class Point:
    """One point of the grid: its swept values (validated, in grid order) and its papermill parameters."""

    index: int
    values: tuple[tuple[str, Any], ...]
    label: str
    parameters: Mapping[str, Any] = dataclasses.field(compare=False, repr=False)

    def describe(self) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in self.values)


def parse_value(text: str) -> Any:
    """A command-line value read as YAML, as ``params.yaml`` would read it (``8192`` -> int,
    ``0.5`` -> float, ``true`` -> bool, ``[1, 4]`` -> list, anything else a string)."""
    import yaml  # noqa: PLC0415

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def plain(value: Any) -> Any:
    from tieringlab.results import plain as to_plain  # noqa: PLC0415

    return to_plain(value)


def _coord(value: Any) -> Any:
    """A coordinate value: scalars as they are, lists as their JSON text (``"[1.0, 4.0]"``)."""
    value = plain(value)
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return value


def _label(values: Sequence[tuple[str, Any]]) -> str:
    """``line_bytes=4096,seed=0`` (a list value as ``1.0+4.0``), safe as a file name."""
    def text(v: Any) -> str:
        v = plain(v)
        return "+".join(text(x) for x in v) if isinstance(v, list) else str(v)

    return _UNSAFE.sub("-", ",".join(f"{k}={text(v)}" for k, v in values)).strip("-") or "point"


def _resolve(name: str, section: str, cls: type) -> tuple[str, str, str]:
    """A swept name -> (dimension name, where: "seed" | "own" | a shared section, field)."""
    fields = [f.name for f in dataclasses.fields(cls)]
    shared = tuple(getattr(cls, "uses", ()))
    if name in params.GLOBAL_KEYS:
        return name, "seed", name
    if name in fields:
        return name, "own", name
    head, _, tail = name.partition(".")
    if head == section and tail in fields:
        return tail, "own", tail
    if head in shared and tail:
        shared_fields = [f.name for f in dataclasses.fields(params.sections()[head])]
        if tail in shared_fields:
            return name, head, tail
    allowed = [*params.GLOBAL_KEYS, *fields, *(f"{s}.<field>" for s in shared)]
    raise params.ParamsError(f"sweep: -p {name}: not a parameter of section {section!r}; allowed: "
                             f"{', '.join(allowed)}")


def _check_global(key: str, value: Any, where: str) -> Any:
    tp, bounds, _doc = params.GLOBAL_KEYS[key]
    return params._coerce(value, tp, {"bounds": bounds}, where)  # noqa: SLF001  (the schema's own check)


def plan(notebook: str | Path, grid: Mapping[str, Sequence[Any]], *, params_path: str | Path | None = None,
         base: str = "params") -> list[Point]:
    """Validate every point of ``grid`` (``{name: [values]}``) for ``notebook``; return the points.

    Raises :class:`tieringlab.params.ParamsError` naming the parameter and point of the first bad
    value, :class:`SweepError` for an empty grid or a value given twice. Nothing runs.
    """
    import tieringlab.experiments  # noqa: F401, PLC0415  (registers every params section)
    from tieringlab import pipeline  # noqa: PLC0415

    if base not in ("params", "notebook"):
        raise SweepError(f"sweep: base must be 'params' or 'notebook', got {base!r}")
    section = pipeline.section_of(notebook)
    cls = params.sections().get(section)
    if cls is None:
        raise params.ParamsError(f"sweep: {notebook}: no params section {section!r} (import its experiment module)")
    if not grid:
        raise SweepError("sweep: no parameter to sweep (give at least one -p NAME VALUE ...)")
    axes: list[tuple[str, str, str, list[Any]]] = []
    for name, values in grid.items():
        values = list(values) if isinstance(values, (list, tuple)) else [values]
        if not values:
            raise SweepError(f"sweep: -p {name}: no values")
        dim, where, field = _resolve(name, section, cls)
        if any(dim == a[0] for a in axes):
            raise SweepError(f"sweep: -p {name}: swept twice")
        axes.append((dim, where, field, values))

    root = paths.repo_root()
    params_path = Path(params_path) if params_path else root / "params.yaml"
    loaded = params.load(params_path) if base == "params" else {}
    points = []
    for index, combo in enumerate(itertools.product(*(a[3] for a in axes))):
        raw = tuple((a[0], v) for a, v in zip(axes, combo))
        where_point = f"sweep point ({_label(raw)})"
        own: dict[str, Any] = {}
        shared: dict[str, dict[str, Any]] = {}
        seed = loaded.get("seed")
        for (dim, where, field, _), value in zip(axes, combo):
            if where == "seed":
                seed = _check_global(field, value, f"{where_point}: {field}")
            elif where == "own":
                own[field] = value
            else:
                shared.setdefault(where, {})[field] = value
        if base == "params":
            start = {f.name: getattr(loaded[section], f.name) for f in dataclasses.fields(cls)} \
                if section in loaded else {}
        else:
            start = {}
        sec = params.validate_section(section, {**start, **own}, source=where_point)
        point_loaded = {**loaded, section: sec, "seed": seed}
        for sname, over in shared.items():
            scls = params.sections()[sname]
            sstart = loaded.get(sname)
            sbase = {f.name: getattr(sstart, f.name) for f in dataclasses.fields(scls)} if sstart else {}
            point_loaded[sname] = params.validate_section(sname, {**sbase, **over}, source=where_point)
        if base == "params":
            parameters = pipeline.parameters_from(point_loaded, notebook, None, source=str(params_path))
        else:  # only the swept values (a shared section is passed whole: the notebook takes it as one dict)
            parameters = {field: plain(getattr(sec, field)) for _, where, field, _ in axes if where == "own"}
            parameters |= {sname: plain(dataclasses.asdict(point_loaded[sname])) for sname in shared}
            if seed is not None:
                parameters["seed"] = seed
        validated = []
        for dim, where, field, _ in axes:
            if where == "seed":
                validated.append((dim, seed))
            elif where == "own":
                validated.append((dim, getattr(sec, field)))
            else:
                validated.append((dim, getattr(point_loaded[where], field)))
        points.append(Point(index, tuple(validated), _label(validated), parameters))

    for i, (dim, *_rest) in enumerate(axes):
        coords = [_coord(v) for v in dict.fromkeys(_coord(p.values[i][1]) for p in points)]
        if len(coords) != len(axes[i][3]):
            raise SweepError(f"sweep: -p {dim}: a value is given twice (after validation: {coords})")
    labels = [p.label for p in points]
    if len(set(labels)) != len(labels):  # two values that differ only in characters unsafe in file names
        points = [dataclasses.replace(p, label=f"{p.index:04d}-{p.label}") for p in points]
    return points


def scheduler_spec(scheduler: str | None, n_points: int) -> str:
    """The scheduler a sweep uses: ``scheduler`` checked, or ``local:N`` (N = min(points, CPUs))."""
    if scheduler is None:
        return f"local:{max(1, min(n_points, os.cpu_count() or 1))}"
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise SweepError(f"sweep: scheduler must be an address such as tcp://host:8786 or local:N, got {scheduler!r}")
    m = _LOCAL.match(scheduler)
    if m and int(m.group(1)) < 1:
        raise SweepError(f"sweep: scheduler {scheduler!r}: local:N needs N >= 1 workers")
    if scheduler.startswith("local") and not m:
        raise SweepError(f"sweep: scheduler {scheduler!r}: expected local:N with N a number of workers")
    if not m and ":" not in scheduler:
        raise SweepError(f"sweep: scheduler {scheduler!r}: expected an address such as tcp://host:8786, or local:N")
    return scheduler


@contextlib.contextmanager
def _client(spec: str) -> Iterator[Any]:
    """A :class:`distributed.Client` on ``spec``: a scheduler address, or ``local:N`` (a LocalCluster
    of N single-threaded worker processes, started here and closed on exit, whose address the client
    then connects to like any other)."""
    from distributed import Client, LocalCluster  # noqa: PLC0415  (slow import, only when sweeping)

    with contextlib.ExitStack() as stack:
        m = _LOCAL.match(spec)
        if m:
            cluster = stack.enter_context(LocalCluster(n_workers=int(m.group(1)), threads_per_worker=1,
                                                       processes=True, dashboard_address=None))
            address = cluster.scheduler_address
        else:
            address = spec
        yield stack.enter_context(Client(address, set_as_default=False))


def execute(notebook_text: str, notebook_name: str, parameters: Mapping[str, Any],
            cwd: str | None = None) -> dict[str, Any]:
    """Run one point (on a Dask worker): the notebook with ``parameters`` by papermill, in a temporary
    folder that is also its ``results_dir``.

    Returns ``{"error": None | "Type: message", "notebook": bytes | None, "files": {relative path:
    bytes}}``: the executed notebook (also when it failed: it shows the failing cell) and every file the
    notebook saved. ``cwd`` is the kernel's working folder when it exists on the worker (the
    notebooks' folder of the same checkout), else the temporary folder.
    """
    import papermill  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="tieringlab-sweep-") as tmp:
        tmp_path = Path(tmp)
        src = tmp_path / notebook_name
        src.write_text(notebook_text, encoding="utf-8")
        dst = tmp_path / f"executed-{notebook_name}"
        results = tmp_path / "results"
        error = None
        try:
            papermill.execute_notebook(str(src), str(dst), parameters={**parameters, "results_dir": str(results)},
                                       cwd=cwd if cwd and Path(cwd).is_dir() else tmp, progress_bar=False,
                                       log_output=False)
        except Exception as exc:  # noqa: BLE001  (a failed point is reported, never raised past its task)
            error = f"{getattr(exc, 'ename', None) or type(exc).__name__}: {getattr(exc, 'evalue', None) or exc}"
        files = {str(p.relative_to(results)): p.read_bytes() for p in sorted(results.rglob("*")) if p.is_file()} \
            if results.is_dir() else {}
        return {"error": error, "notebook": dst.read_bytes() if dst.is_file() else None, "files": files}


def _scalars(metrics: Mapping[str, Any]) -> dict[str, tuple[float, dict]]:
    """The scalar metrics (numbers, booleans) and claim values of one metrics JSON, as floats."""
    out: dict[str, tuple[float, dict]] = {}
    for key, value in (metrics.get("values") or {}).items():
        if isinstance(value, (bool, int, float)) or value is None:
            out[key] = (math.nan if value is None else float(value), {"kind": "metric"})
    for cid, entry in (metrics.get("claims") or {}).items():
        value = entry.get("value") if isinstance(entry, dict) else None
        if isinstance(value, (bool, int, float)) or value is None:
            name = cid if cid not in out else f"claim:{cid}"
            out[name] = (math.nan if value is None else float(value), {"kind": "claim value", "claim": cid})
    return out


def _dataset(points: list[Point], outcomes: dict[int, dict], stem: str, attrs: dict) -> xr.Dataset:
    import xarray as xr  # noqa: PLC0415

    dims = [name for name, _ in points[0].values]
    coords = {d: list(dict.fromkeys(_coord(p.values[i][1]) for p in points)) for i, d in enumerate(dims)}
    shape = tuple(len(coords[d]) for d in dims)

    def at(p: Point) -> tuple[int, ...]:
        return tuple(coords[d].index(_coord(v)) for d, (_, v) in zip(dims, p.values))

    data: dict[str, np.ndarray] = {}
    var_attrs: dict[str, dict] = {}
    ok = np.zeros(shape, bool)
    error = np.full(shape, "", dtype=object)
    for p in points:
        outcome = outcomes.get(p.index, {"error": "not run"})
        idx = at(p)
        if outcome.get("error"):
            error[idx] = outcome["error"]
            continue
        ok[idx] = True
        metrics_bytes = outcome.get("files", {}).get(f"metrics/{stem}.json")
        metrics = json.loads(metrics_bytes) if metrics_bytes else {}
        for key, (value, a) in _scalars(metrics).items():
            if key not in data:
                data[key] = np.full(shape, np.nan)
                var_attrs[key] = a
            data[key][idx] = value
    variables = {k: (dims, data[k], var_attrs[k]) for k in sorted(data)}
    variables["ok"] = (dims, ok, {"long_name": "the point's notebook ran to the end"})
    variables["error"] = (dims, error.astype(str), {"long_name": "the point's exception ('' when ok)"})
    return xr.Dataset(variables, coords={d: (d, _coord_array(coords[d])) for d in dims}, attrs=attrs)


def _coord_array(values: list) -> np.ndarray:
    arr = np.asarray(values)
    # netCDF3 (scipy, the writer this environment has) stores no int64: keep ints as int32 where they
    # fit, else as text, so that a seed near 2**63 survives exactly.
    if arr.dtype.kind in "iu":
        info = np.iinfo(np.int32)
        return arr.astype(np.int32) if arr.min() >= info.min and arr.max() <= info.max else arr.astype(str)
    return arr


def sweep(notebook: str | Path, grid: Mapping[str, Sequence[Any]], *, out: str | Path,
          scheduler: str | None = None, params_path: str | Path | None = None, base: str = "params",
          report=None) -> xr.Dataset:
    """Run ``notebook`` at every point of ``grid`` on Dask distributed; return (and write) ``out/sweep.nc``.

    ``grid``: ``{"line_bytes": [4096, 8192], "seed": [0, 1]}`` (see the module docstring for the names
    allowed, ``base`` and ``scheduler``). Use it from a notebook as from the command line::

        from tieringlab.sweep import sweep
        ds = sweep("../notebooks/00_quickstart.ipynb", {"line_bytes": [4096, 8192]}, out="../build/sweep",
                   scheduler="local:2", base="notebook")

    ``report(point, error)`` is called for each failed point (default: a line on stderr).
    """
    from tieringlab import pipeline  # noqa: PLC0415

    root = paths.repo_root()
    nb = Path(notebook)
    if not nb.is_file() and not nb.is_absolute() and (root / nb).is_file():
        nb = root / nb
    if not nb.is_file():
        raise FileNotFoundError(f"{notebook}: no such notebook")
    points = plan(nb, grid, params_path=params_path, base=base)
    spec = scheduler_spec(scheduler, len(points))
    out = Path(out).resolve()
    stem = nb.stem
    nb_text = nb.read_text(encoding="utf-8")
    report = report or (lambda p, err: print(f"tieringlab sweep: point {p.describe()} failed: {err}", file=sys.stderr))
    try:
        shown_nb = str(nb.resolve().relative_to(root))
    except ValueError:  # a notebook outside the repository
        shown_nb = str(nb.resolve())
    fixed = {k: v for k, v in points[0].parameters.items() if k not in {d for d, _ in points[0].values}}
    attrs = {
        "scheduler": spec,
        "notebook": shown_nb,
        "section": pipeline.section_of(nb),
        "base": f"params file {params_path or 'params.yaml'}" if base == "params" else "the notebook's own defaults",
        "fixed_parameters": json.dumps(plain(fixed), sort_keys=True),
        "points": len(points),
    }

    outcomes: dict[int, dict] = {}

    def keep(point: Point, outcome: dict) -> None:
        outcomes[point.index] = {"error": outcome.get("error"), "files": outcome.get("files", {})}
        if outcome.get("notebook") is not None:
            fileio.write_with(out / "notebooks" / f"{point.label}.ipynb",
                              lambda tmp, b=outcome["notebook"]: tmp.write_bytes(b))
        for rel, blob in outcome.get("files", {}).items():
            fileio.write_with(out / "results" / point.label / rel, lambda tmp, b=blob: tmp.write_bytes(b))
        if outcome.get("error"):
            report(point, outcome["error"])

    from distributed import as_completed  # noqa: PLC0415

    with contextlib.ExitStack() as stack:
        try:
            client = stack.enter_context(_client(spec))
        except OSError as exc:  # an address nobody answers at (TimeoutError is an OSError)
            raise SweepError(f"sweep: cannot reach the Dask scheduler {spec}: {exc}") from None
        try:
            futures = {client.submit(execute, nb_text, nb.name, dict(p.parameters), str(nb.parent.resolve()),
                                     pure=False, key=f"tieringlab-sweep-{stem}-{p.label}-{os.getpid()}-{id(points)}"): p
                       for p in points}
            bar = progress(total=len(futures), desc=f"sweep {stem}", unit="run")
            try:
                for fut in as_completed(list(futures), loop=client.loop):
                    point = futures[fut]
                    try:
                        outcome = fut.result()
                    except Exception as exc:  # noqa: BLE001  (a lost worker, a task that could not run)
                        outcome = {"error": f"{type(exc).__name__}: {exc}", "notebook": None, "files": {}}
                    keep(point, outcome)
                    bar.update(1)
            finally:
                bar.close()
                for fut in futures:
                    fut.cancel()
        finally:  # also after an interrupt: the points that finished are kept in sweep.nc
            failed = [p.label for p in points if outcomes.get(p.index, {"error": "not run"}).get("error")]
            attrs["failed_points"] = json.dumps(failed)
            ds = _dataset(points, outcomes, stem, attrs)
            fileio.write_with(out / SWEEP_FILE, lambda tmp: ds.to_netcdf(tmp))
    return ds
