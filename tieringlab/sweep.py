"""Parameter sweeps of a notebook on Dask distributed: ``tieringlab sweep`` and :func:`sweep`.

::

    tieringlab sweep notebooks/00_quickstart.ipynb -p line_bytes 4096 8192 -p seed 0 1 \\
        --scheduler local:2 --out build/sweep

runs the notebook once per point of the grid (the Cartesian product of the ``-p`` lists) and writes

- ``DIR/notebooks/<point>.ipynb``: each executed notebook (``<point>`` is ``line_bytes=4096,seed=0``;
  a label longer than :data:`MAX_LABEL` characters is cut and ends in a hash of the whole);
- ``DIR/results/<point>/``: what the notebook saved there (figures, tables, metrics);
- ``DIR/sweep.nc``: one :class:`xarray.Dataset` gathering every run's metrics (scalars, and arrays recorded
  with their own dims, e.g. a hit-ratio curve over ``cache_mb``, kept along them; ``units`` attributes), claim values,
  with one dimension per swept parameter (named after it, in ``-p`` order), ``ok``, ``error`` and
  ``ran`` per point, the scheduler in ``attrs["scheduler"]``, the parameters held fixed in
  ``attrs["fixed_parameters"]`` (JSON; a swept value, also a swept field of a shared section, is never
  listed there) and how the sweep ended in ``attrs["status"]``.

Parameters. Every value of every point is validated against the ``params.yaml`` schema
(:mod:`tieringlab.params`, including the sections' cross-field checks) before anything runs; a bad value stops
the sweep with a message naming it. A swept name is a field of the notebook's section (``line_bytes``;
``quickstart.line_bytes`` is the same), a field of the parameters the section embeds (``policy.e``: the
system's own declaration checks it, and the notebook receives the whole embedded dict with the swept value),
``seed``, or a field of a shared section the notebook uses (``traces.scale``). A grid has at most
:data:`MAX_POINTS` points (counted before it is expanded). The notebook must have a cell tagged ``parameters``
(papermill puts the values after it; without one they would come first and the notebook's own assignments
would replace them). The values not swept come from ``params.yaml`` (``base="params"``, the default: a sweep
around the paper-scale run, as ``dvc repro`` runs it), or are the notebook's own small defaults
(``base="notebook"``): the values its parameters cell assigns (read, never run: ``NAME = literal``) are the
base, the cross-field checks see them with the swept values, and only the swept values are passed; a shared
section (one dict parameter, ``traces``) is passed as the notebook's own dict with the swept fields replaced
(``traces.max_wss_gb`` stays the notebook's 0.3 when ``traces.scale`` is swept).

Where it runs. ``scheduler`` (``--scheduler``) is the address of a running Dask distributed scheduler
(``tcp://host:8786``, ``tls://host:8786``, ``ws://``, ``wss://``, or ``host:8786`` for tcp; the port
from 1 to 65535), or ``local:N`` for a :class:`distributed.LocalCluster` of N single-threaded worker
processes started for the sweep and closed after it, N from 1 to :func:`max_local_workers` (the CPUs of
this machine, at least 2), and no more than there are points (a larger N starts one worker per point).
Default: ``local:N`` with N the smaller of the number of points and of CPUs. The address is checked
before anything runs; a scheduler that does not answer within ``connect_timeout`` seconds
(:data:`CONNECT_TIMEOUT_S`, or Dask's ``distributed.comm.timeouts.connect`` where that is shorter) is
an error naming it. Both take the same path: a :class:`distributed.Client` on the address, one task per
point (:func:`execute` runs the notebook with papermill on the worker, in a temporary folder, and
returns the executed notebook and the files it saved as bytes, so the workers need no shared file
system with the client; they need the same environment: tieringlab installed and its pinned data,
``make venv && make data`` in a checkout).

The output folder. ``out`` (``--out``) is checked before anything runs, and nothing is written there
until the scheduler answers: it must be a new folder, an empty one, or, with ``overwrite=True``
(``--overwrite``), the folder of a previous sweep (one that holds ``sweep.nc``), whose ``sweep.nc``,
``notebooks/`` and ``results/`` are then deleted first (so two grids' notebooks are never mixed; other
files there are left alone). A file, a folder this process cannot write in, a previous sweep without
``overwrite``, or a folder holding anything else is an error naming ``--out``. One sweep at a time
writes in a folder (a second is refused while the first runs).

Nothing finished is lost. The client writes every file atomically as its point completes, and
``sweep.nc`` when the sweep starts (every point "not run", ``status`` "running") and again when it
ends, however it ends: every point completed (``status`` "complete"), Ctrl-C (``KeyboardInterrupt``:
the pending points are cancelled, the cluster is closed, ``status`` "interrupted", and
:class:`SweepInterrupted` is raised; ``tieringlab sweep`` then exits 130), or an error such as a file
that cannot be written (``status`` "stopped: ..."; the error is raised). ``ran`` is true for the points
that completed, ok or not; the others are "not run" (``attrs["not_run_points"]``). A point whose
notebook raises, or whose worker dies, is reported with its parameters (``ok`` false, ``error`` its
exception, listed in ``attrs["failed_points"]``) and its variables are NaN; the other points are kept.
Wall times go to no output: the same grid and seed give the same files.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import hashlib
import itertools
import json
import math
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tieringlab import fileio, params, paths
from tieringlab.progress import progress

if TYPE_CHECKING:
    import xarray as xr

# This module is imported on every Dask worker (it holds the task, :func:`execute`); what only the
# client needs (the experiment sections, the pipeline, xarray, matplotlib via results) is imported
# where it is used, so that a worker starts fast.

__all__ = ["SWEEP_FILE", "MAX_POINTS", "MAX_LABEL", "CONNECT_TIMEOUT_S", "Point", "SweepError", "SweepInterrupted",
           "parse_value", "plan", "execute", "sweep", "scheduler_spec", "check_out", "notebook_defaults",
           "max_local_workers"]

#: The gathered metrics under the output folder.
SWEEP_FILE = "sweep.nc"
#: The most points one sweep may have: a larger grid is refused before it is expanded.
MAX_POINTS = 10_000
#: A point's label (its file names) longer than this is cut and ends in a hash of the whole label, so that
#: ``<label>.ipynb`` and its temporary name stay within the 255 bytes a file name may have.
MAX_LABEL = 200
#: Seconds a sweep waits for a scheduler address to answer (``connect_timeout``'s default; Dask's
#: ``distributed.comm.timeouts.connect`` is used where it is shorter).
CONNECT_TIMEOUT_S = 10.0
#: Held by the sweep writing in an output folder (a second sweep there is refused while it runs).
LOCK_FILE = ".sweep.lock"
_LOCAL = re.compile(r"^local:(\d{1,9})$")
_SCHEMES = ("tcp", "tls", "ws", "wss")
_ADDRESS = re.compile(r"^(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://)?"
                      r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?)"
                      r":(?P<port>\d{1,5})$")
_FORMS = ("local:N (N from 1 to {n}) or the address of a running Dask scheduler, tcp://HOST:PORT "
          "(also tls://, ws://, wss://, or HOST:PORT)")
_UNSAFE = re.compile(r"[^A-Za-z0-9._=,+-]+")


class SweepError(ValueError):
    """A sweep that cannot start (a bad scheduler or output folder, a duplicated value, an empty grid), or
    one stopped by an error (the points that completed are kept)."""


class SweepInterrupted(KeyboardInterrupt):
    """A sweep stopped by Ctrl-C, after it cancelled the pending points and wrote the completed ones."""


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
    ``0.5`` -> float, ``true`` -> bool, ``[1, 4]`` -> list, anything else a string), through the same
    bounded reader (:func:`tieringlab.params.loads`: an alias bomb or a YAML 1.1 surprise such as ``010``
    is a :class:`tieringlab.params.ParamsError`)."""
    try:
        return params.loads(text, source=f"sweep: -p value {params._short(text)}")
    except params.NotYamlError:
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
    """``line_bytes=4096,seed=0`` (a list value as ``1.0+4.0``), safe as a file name: at most
    :data:`MAX_LABEL` characters (a longer one is cut and ends in 16 hex digits of its SHA-256)."""
    def text(v: Any) -> str:
        if isinstance(v, float) and not math.isfinite(v):
            return str(v)  # named as given ("nan"), where plain() would make it None
        v = plain(v)
        return "+".join(text(x) for x in v) if isinstance(v, (list, tuple)) else str(v)

    label = _UNSAFE.sub("-", ",".join(f"{k}={text(v)}" for k, v in values)).strip("-") or "point"
    if len(label) > MAX_LABEL:
        digest = hashlib.sha256(label.encode()).hexdigest()[:16]
        label = f"{label[:MAX_LABEL - 18]}--{digest}"
    return label


def _embedded_path(cls: type, path: str) -> bool:
    """Whether the dotted ``path`` names a field inside a params dataclass embedded in ``cls`` (``policy.e``)."""
    hints = params.field_types(cls)
    head, _, tail = path.partition(".")
    if not tail or head not in hints or not params.is_params(hints[head]):
        return False
    sub = hints[head]
    return _embedded_path(sub, tail) or tail in {f.name for f in dataclasses.fields(sub)}


def _resolve(name: str, section: str, cls: type) -> tuple[str, str, str]:
    """A swept name -> (dimension name, where: "seed" | "own" | a shared section, field). A field of parameters
    embedded in the section (``policy.e``, or ``lmst.policy.e``) is "own", its field the dotted path."""
    fields = [f.name for f in dataclasses.fields(cls)]
    shared = tuple(getattr(cls, "uses", ()))
    if name in params.GLOBAL_KEYS:
        return name, "seed", name
    if name in fields:
        return name, "own", name
    if _embedded_path(cls, name):
        return name, "own", name
    head, _, tail = name.partition(".")
    if head == section and (tail in fields or _embedded_path(cls, tail)):
        return tail, "own", tail
    if head in shared and tail:
        shared_fields = [f.name for f in dataclasses.fields(params.sections()[head])]
        if tail in shared_fields:
            return name, head, tail
    hints = params.field_types(cls)
    embedded = [f"{f}.<field>" for f in fields if params.is_params(hints[f])]
    allowed = [*params.GLOBAL_KEYS, *fields, *embedded, *(f"{s}.<field>" for s in shared)]
    raise params.ParamsError(f"sweep: -p {name}: not a parameter of section {section!r}; allowed: "
                             f"{', '.join(allowed)}")


def _set_path(values: dict[str, Any], path: str, value: Any) -> None:
    """``values`` with the dotted ``path`` set to ``value``; an embedded dataclass on the way becomes its dict."""
    head, _, tail = path.partition(".")
    if not tail:
        values[head] = value
        return
    sub = values.get(head)
    sub = dataclasses.asdict(sub) if dataclasses.is_dataclass(sub) else dict(sub) if isinstance(sub, Mapping) else {}
    _set_path(sub, tail, value)
    values[head] = sub


def _as_value(value: Any) -> Any:
    """A section field's value as papermill passes it: embedded parameters as their dict."""
    return dataclasses.asdict(value) if dataclasses.is_dataclass(value) else value


def _get_path(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _check_global(key: str, value: Any, where: str) -> Any:
    tp, bounds, _doc = params.GLOBAL_KEYS[key]
    return params._coerce(value, tp, {"bounds": bounds}, where)  # the schema's own check


def notebook_defaults(notebook: str | Path) -> dict[str, Any]:
    """The values the notebook's parameters cell (its first cell tagged ``parameters``, where papermill
    puts the values after) assigns: every ``NAME = literal`` at its top level, read with
    :func:`ast.literal_eval`, never run (a name set to anything else is left out).

    Raises :class:`SweepError` naming the file for a file that is not a notebook or has no such cell.
    """
    path = Path(notebook)
    try:
        nb = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise SweepError(f"sweep: {notebook}: not a Jupyter notebook (not UTF-8 text)") from None
    except json.JSONDecodeError as exc:
        raise SweepError(f"sweep: {notebook}: line {exc.lineno}: not a Jupyter notebook (not valid JSON: "
                         f"{exc.msg})") from None
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        raise SweepError(f"sweep: {notebook}: not a Jupyter notebook (no 'cells' list)")

    def tags(cell: Any) -> list:
        meta = cell.get("metadata") if isinstance(cell, dict) else None
        found = meta.get("tags") if isinstance(meta, dict) else None
        return found if isinstance(found, list) else []

    cell = next((c for c in cells if "parameters" in tags(c)), None)
    if cell is None:
        raise SweepError(f"sweep: {notebook}: no cell tagged 'parameters': papermill would put the swept values "
                         "first, and the notebook's own assignments would then replace them; tag the cell that "
                         "sets the parameters")
    source = cell.get("source", "")
    source = "".join(source) if isinstance(source, list) else str(source)
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise SweepError(f"sweep: {notebook}: the parameters cell, line {exc.lineno}: {exc.msg}") from None
    values: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name):
            try:
                values[target.id] = ast.literal_eval(value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                values.pop(target.id, None)  # not a literal: unknown until the notebook runs
    return values


def _grid_size(grid: Mapping[str, Sequence[Any]]) -> int:
    """The number of points of ``grid``, counted without expanding it."""
    return math.prod(len(v) if isinstance(v, (list, tuple)) else 1 for v in grid.values())


def plan(notebook: str | Path, grid: Mapping[str, Sequence[Any]], *, params_path: str | Path | None = None,
         base: str = "params") -> list[Point]:
    """Validate every point of ``grid`` (``{name: [values]}``) for ``notebook``; return the points.

    Raises :class:`tieringlab.params.ParamsError` naming the parameter and point of the first bad
    value, :class:`SweepError` for an empty grid, a grid of more than :data:`MAX_POINTS` points, a
    value given twice or a file that is not a notebook with a parameters cell. Nothing runs.
    """
    import tieringlab.experiments  # noqa: F401, PLC0415  (registers every params section)
    from tieringlab import pipeline  # noqa: PLC0415

    if base not in ("params", "notebook"):
        raise SweepError(f"sweep: base must be 'params' or 'notebook', got {base!r}")
    section = pipeline.section_of(notebook)
    cls = params.sections().get(section)
    if cls is None:
        raise params.ParamsError(f"sweep: {notebook}: no params section {section!r} (import its experiment module)")
    if not isinstance(grid, Mapping) or not grid:
        raise SweepError("sweep: no parameter to sweep (give at least one -p NAME VALUE ...)")
    size = _grid_size(grid)
    if size > MAX_POINTS:
        sizes = " x ".join(str(_grid_size({k: v})) for k, v in grid.items())
        raise SweepError(f"sweep: the grid has {size} points ({sizes}); "
                         f"at most {MAX_POINTS} are allowed: sweep fewer values, or split the grid")
    axes: list[tuple[str, str, str, list[Any]]] = []
    for name, values in grid.items():
        values = list(values) if isinstance(values, (list, tuple)) else [values]
        if not values:
            raise SweepError(f"sweep: -p {name}: no values")
        dim, where, field = _resolve(name, section, cls)
        if any(dim == a[0] for a in axes):
            raise SweepError(f"sweep: -p {name}: swept twice")
        axes.append((dim, where, field, values))
    own_defaults = notebook_defaults(notebook)  # also checks that it is a notebook with a parameters cell

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
        for (_dim, where, field, _), value in zip(axes, combo):
            if where == "seed":
                seed = _check_global(field, value, f"{where_point}: {field}")
            elif where == "own":
                own[field] = value
            else:
                shared.setdefault(where, {})[field] = value
        if base == "params":
            start = {f.name: getattr(loaded[section], f.name) for f in dataclasses.fields(cls)} \
                if section in loaded else {}
        else:  # the notebook's own values: the section's cross-field checks see what the notebook will use
            start = {f.name: own_defaults[f.name] for f in dataclasses.fields(cls) if f.name in own_defaults}
        values = dict(start)
        for field, value in own.items():  # a dotted field (policy.e) sets one field of embedded parameters
            _set_path(values, field, value)
        sec = params.validate_section(section, values, source=where_point)
        point_loaded = {**loaded, section: sec, "seed": seed}
        for sname, over in shared.items():
            scls = params.sections()[sname]
            if base == "params":
                sstart = loaded.get(sname)
                sbase = {f.name: getattr(sstart, f.name) for f in dataclasses.fields(scls)} if sstart else {}
            else:
                sbase = own_defaults.get(sname)
                sbase = dict(sbase) if isinstance(sbase, dict) else {}
            point_loaded[sname] = params.validate_section(sname, {**sbase, **over}, source=where_point)
        if base == "params":
            parameters = pipeline.parameters_from(point_loaded, notebook, None, source=str(params_path))
        else:  # only the swept values; a shared section is one dict parameter: the notebook's own dict (its
            # keys), the swept fields replaced, so that its other values stay the notebook's
            # (a swept field of embedded parameters passes the whole embedded dict: the notebook's own values
            # with the swept one replaced, as the section validated them)
            parameters = {field.partition(".")[0]: plain(_as_value(getattr(sec, field.partition(".")[0])))
                          for _, where, field, _ in axes if where == "own"}
            for sname, over in shared.items():
                mine = own_defaults.get(sname)
                keys = [*(mine if isinstance(mine, dict) else {}), *(k for k in over if not (isinstance(mine, dict)
                                                                                             and k in mine))]
                parameters[sname] = {k: plain(getattr(point_loaded[sname], k)) for k in keys}
            if seed is not None:
                parameters["seed"] = seed
        validated = []
        for dim, where, field, _ in axes:
            if where == "seed":
                validated.append((dim, seed))
            elif where == "own":
                validated.append((dim, _get_path(sec, field)))
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


def max_local_workers() -> int:
    """The largest N of ``local:N``: the CPUs of this machine, at least 2."""
    return max(2, os.cpu_count() or 1)


def scheduler_spec(scheduler: str | None, n_points: int) -> str:
    """The scheduler a sweep uses: ``scheduler`` checked (see the module docstring for the forms allowed;
    ``local:N`` with N above the number of points becomes ``local:<points>``), or ``local:N`` with
    N = min(points, CPUs). Raises :class:`SweepError` naming ``--scheduler`` and the forms allowed."""
    most = max_local_workers()
    forms = _FORMS.format(n=most)
    if scheduler is None:
        return f"local:{max(1, min(n_points, os.cpu_count() or 1))}"
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise SweepError(f"sweep: --scheduler {scheduler!r}: expected {forms}")
    m = _LOCAL.match(scheduler)
    if scheduler.startswith("local"):
        if not m:
            shown = params._short(scheduler)  # a 5,000-digit N is named, not printed
            raise SweepError(f"sweep: --scheduler {shown}: expected local:N with N a number of workers from 1 to "
                             f"{most}")
        n = int(m.group(1))
        if not 1 <= n <= most:
            raise SweepError(f"sweep: --scheduler {scheduler}: local:N needs N from 1 to {most} workers (the CPUs of "
                             f"this machine; start a Dask cluster and give its address for more)")
        return f"local:{min(n, max(1, n_points))}"
    a = _ADDRESS.match(scheduler)
    scheme = (a.group("scheme") or "tcp").lower() if a else None
    if not a or scheme not in _SCHEMES or not 1 <= int(a.group("port")) <= 65535:
        why = (f"unknown scheme {scheme!r}" if a and scheme not in _SCHEMES else
               f"port {int(a.group('port'))} is not from 1 to 65535" if a else "not an address")
        raise SweepError(f"sweep: --scheduler {params._short(scheduler)}: {why}; expected {forms}")
    return scheduler


def _connect_timeout(connect_timeout: float | None) -> float:
    """``connect_timeout``, or :data:`CONNECT_TIMEOUT_S` (Dask's connect timeout where that is shorter)."""
    if connect_timeout is not None:
        if isinstance(connect_timeout, bool) or not isinstance(connect_timeout, (int, float)) \
                or not 0 < connect_timeout < math.inf:
            raise SweepError(f"sweep: --connect-timeout {connect_timeout!r}: expected a number of seconds > 0")
        return float(connect_timeout)
    import dask  # noqa: PLC0415
    from dask.utils import parse_timedelta  # noqa: PLC0415

    configured = parse_timedelta(dask.config.get("distributed.comm.timeouts.connect", None), default="seconds")
    return min(CONNECT_TIMEOUT_S, configured) if configured else CONNECT_TIMEOUT_S


@contextlib.contextmanager
def _client(spec: str, timeout: float) -> Iterator[Any]:
    """A :class:`distributed.Client` on ``spec``: a scheduler address, or ``local:N`` (a LocalCluster
    of N single-threaded worker processes, started here and closed on exit, whose address the client
    then connects to like any other). Raises :class:`SweepError` when the scheduler does not answer
    within ``timeout`` seconds or the cluster cannot start."""
    from distributed import Client, LocalCluster  # noqa: PLC0415  (slow import, only when sweeping)

    class _Client(Client):
        def start(self, **kwargs: Any) -> Any:
            try:
                return super().start(**kwargs)
            except BaseException:
                # never connected: nothing to close (else its __del__ would wait twice the timeout, then
                # print a traceback)
                self.status = "closed"
                with contextlib.suppress(Exception):
                    self._loop_runner.stop()
                raise

    with contextlib.ExitStack() as stack:
        m = _LOCAL.match(spec)
        try:
            if m:
                cluster = stack.enter_context(LocalCluster(n_workers=int(m.group(1)), threads_per_worker=1,
                                                           processes=True, dashboard_address=":0"))
                address = cluster.scheduler_address
            else:
                address = spec
            client = stack.enter_context(_Client(address, set_as_default=False, timeout=timeout))
            link = client.dashboard_link if client.scheduler_info().get("services", {}).get("dashboard") else None
        except Exception as exc:  # noqa: BLE001  (nobody answers: TimeoutError; not a Dask scheduler: anything)
            text = str(exc) if len(str(exc)) <= 200 else f"{str(exc)[:200]}..."
            why = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
            what = f"cannot start the local cluster {spec}" if m else \
                f"cannot reach the Dask scheduler {spec} within {timeout:g} s"
            raise SweepError(f"sweep: --scheduler {spec}: {what} ({why})") from None
        print(f"tieringlab sweep: Dask dashboard at {link}" if link else
              f"tieringlab sweep: the scheduler {spec} serves no dashboard", file=sys.stderr)
        yield client


def check_out(out: str | Path, *, overwrite: bool = False) -> Path:
    """``out`` as a sweep can use it (absolute); raises :class:`SweepError` naming ``--out`` otherwise (see the
    module docstring: a new or empty folder, or a previous sweep's with ``overwrite``). Writes nothing
    (this process's permission to write there is tried with a temporary file, removed at once)."""
    given = out
    out = Path(out).expanduser().absolute()
    if os.path.lexists(out) and not out.is_dir():
        what = "a file" if out.is_file() else "a broken link" if out.is_symlink() else "not a folder"
        raise SweepError(f"sweep: --out {given}: {what}, not a folder; give a new or empty folder")
    there = out
    while not there.exists():
        if os.path.lexists(there):
            raise SweepError(f"sweep: --out {given}: {there} is a broken link")
        there = there.parent
    if not there.is_dir():
        raise SweepError(f"sweep: --out {given}: {there} is a file, not a folder")
    try:
        fd, probe = tempfile.mkstemp(prefix=".tieringlab-sweep-probe-", suffix=".tmp", dir=there)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise SweepError(f"sweep: --out {given}: cannot write in {there} ({exc.strerror or exc})") from None
    if there != out:
        return out
    try:
        entries = sorted(p.name for p in out.iterdir() if p.name != LOCK_FILE)
    except OSError as exc:
        raise SweepError(f"sweep: --out {given}: cannot list it ({exc.strerror or exc})") from None
    if not entries:
        return out
    if (out / SWEEP_FILE).is_file():
        if not overwrite:
            raise SweepError(f"sweep: --out {given} holds a previous sweep ({SWEEP_FILE}, notebooks/, results/); "
                             "give a new folder, or --overwrite to replace it")
        return out
    shown = ", ".join(entries[:5]) + (f" and {len(entries) - 5} more" if len(entries) > 5 else "")
    raise SweepError(f"sweep: --out {given}: a folder that holds other files ({shown}) and no {SWEEP_FILE}; give a "
                     "new or empty folder" + (" (--overwrite replaces only a previous sweep)" if overwrite else ""))


@contextlib.contextmanager
def _locked(out: Path) -> Iterator[None]:
    """Hold ``out/.sweep.lock`` (an exclusive ``flock``, dropped by the system if this process dies) while a
    sweep writes in ``out``; :class:`SweepError` if another sweep holds it."""
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(fileio.locked(out / LOCK_FILE, wait=False))  # creates out
        except BlockingIOError:
            raise SweepError(f"sweep: --out {out}: another sweep is writing there") from None
        yield


def _clear_previous(out: Path) -> None:
    """Delete what a previous sweep wrote in ``out`` (``sweep.nc``, ``notebooks/``, ``results/`` and the
    temporary files of an interrupted write of ``sweep.nc``); other files are left alone."""
    for name in ("notebooks", "results"):
        target = out / name
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif os.path.lexists(target):
            target.unlink()
    with contextlib.suppress(FileNotFoundError):
        (out / SWEEP_FILE).unlink()
    fileio.remove_stale_temps(out, (SWEEP_FILE,))


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
    units = metrics.get("units") or {}
    for key, value in (metrics.get("values") or {}).items():
        if isinstance(value, (bool, int, float)) or value is None:
            a = {"kind": "metric", **({"units": units[key]} if isinstance(units.get(key), str) else {})}
            out[key] = (math.nan if value is None else float(value), a)
    for cid, entry in (metrics.get("claims") or {}).items():
        value = entry.get("value") if isinstance(entry, dict) else None
        if isinstance(value, (bool, int, float)) or value is None:
            name = cid if cid not in out else f"claim:{cid}"
            out[name] = (math.nan if value is None else float(value), {"kind": "claim value", "claim": cid})
    return out


def _arrays(metrics: Mapping[str, Any], swept: Sequence[str]) -> dict[str, tuple[list[str], dict, np.ndarray, dict]]:
    """The array metrics of one metrics JSON (``Outputs.metric`` with dims): name -> (dims, coords, data, attrs).
    A dim named like a swept parameter is renamed ``<metric>_<dim>`` (the sweep's own dims keep their names)."""
    out = {}
    for key, entry in (metrics.get("arrays") or {}).items():
        if not isinstance(entry, dict) or not isinstance(entry.get("dims"), list):
            continue
        names = [f"{key}_{d}" if d in swept else str(d) for d in entry["dims"]]
        coords = {n: list(entry["coords"][d]) for n, d in zip(names, entry["dims"])}
        data = np.array(entry["data"], dtype=object)
        data = np.where(data == None, np.nan, data).astype(np.float64)  # noqa: E711  (JSON null: a NaN)
        attrs = {"kind": "metric", **({"units": entry["units"]} if isinstance(entry.get("units"), str) else {})}
        out[key] = (names, coords, data, attrs)
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
    arrays: dict[str, list[tuple[tuple[int, ...], list[str], dict, np.ndarray]]] = {}
    array_coords: dict[str, list] = {}  # each array dim's coordinates, the union over points and metrics
    array_attrs: dict[str, tuple[list[str], dict]] = {}
    ok = np.zeros(shape, bool)
    ran = np.zeros(shape, bool)
    error = np.full(shape, "", dtype=object)
    for p in points:
        outcome = outcomes.get(p.index, {"error": "not run"})
        idx = at(p)
        ran[idx] = p.index in outcomes
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
        for key, (names, acoords, values, a) in _arrays(metrics, dims).items():
            arrays.setdefault(key, []).append((idx, names, acoords, values))
            array_attrs.setdefault(key, (names, a))
            for n in names:
                known = array_coords.setdefault(n, [])
                known.extend(c for c in acoords[n] if c not in known)
    variables = {k: (dims, data[k], var_attrs[k]) for k in sorted(data)}
    for key in sorted(arrays):
        names, a = array_attrs[key]
        full = np.full(shape + tuple(len(array_coords[n]) for n in names), np.nan)
        for idx, point_names, acoords, values in arrays[key]:
            if point_names != names:
                continue  # the same metric along other dims at this point: not comparable, left NaN
            where = np.ix_(*[[array_coords[n].index(c) for c in acoords[n]] for n in names])
            full[idx][where] = values
        variables[key] = (dims + names, full, a)
    variables["ok"] = (dims, ok, {"long_name": "the point's notebook ran to the end"})
    variables["error"] = (dims, error.astype(str), {"long_name": "the point's exception ('' when ok)"})
    variables["ran"] = (dims, ran, {"long_name": "the point's run completed, ok or not (false: not run, the sweep "
                                                 "stopped first)"})
    all_coords = {d: (d, _coord_array(coords[d])) for d in dims}
    all_coords.update({n: (n, _coord_array(values)) for n, values in array_coords.items()})
    return xr.Dataset(variables, coords=all_coords, attrs=attrs)


def _coord_array(values: list) -> np.ndarray:
    arr = np.asarray(values)
    # netCDF3 (scipy, the writer this environment has) stores no int64: keep ints as int32 where they
    # fit, else as text, so that a seed near 2**63 survives exactly.
    if arr.dtype.kind in "iu":
        info = np.iinfo(np.int32)
        return arr.astype(np.int32) if arr.min() >= info.min and arr.max() <= info.max else arr.astype(str)
    return arr


def _fixed(points: list[Point], base: str, own_defaults: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters a sweep holds fixed: those passed (and, with ``base="notebook"``, the notebook's own
    literal values) less every swept one, also a swept field of a shared section (``traces.scale``)."""
    swept = {d for d, _ in points[0].values}
    values = dict(points[0].parameters) if base == "params" else \
        {**{k: v for k, v in own_defaults.items() if k != "results_dir"}, **points[0].parameters}
    fixed: dict[str, Any] = {}
    for key, value in values.items():
        if key in swept:
            continue
        if isinstance(value, dict):
            value = {k: v for k, v in value.items() if f"{key}.{k}" not in swept}
        fixed[key] = value
    return fixed


def sweep(notebook: str | Path, grid: Mapping[str, Sequence[Any]], *, out: str | Path,
          scheduler: str | None = None, params_path: str | Path | None = None, base: str = "params",
          report=None, overwrite: bool = False, connect_timeout: float | None = None) -> xr.Dataset:
    """Run ``notebook`` at every point of ``grid`` on Dask distributed; return (and write) ``out/sweep.nc``.

    ``grid``: ``{"line_bytes": [4096, 8192], "seed": [0, 1]}`` (see the module docstring for the names
    allowed, ``base``, ``scheduler``, ``connect_timeout``, ``out`` and ``overwrite``). Use it from a
    notebook as from the command line::

        from tieringlab.sweep import sweep
        ds = sweep("../notebooks/00_quickstart.ipynb", {"line_bytes": [4096, 8192]}, out="../build/sweep",
                   scheduler="local:2", base="notebook")

    ``report(point, error)`` is called for each failed point (default: a line on stderr). Ctrl-C stops
    the sweep: the completed points are written and :class:`SweepInterrupted` is raised; an error after
    the start (a file that cannot be written) is raised as :class:`SweepError` once the completed
    points are written.
    """
    from tieringlab import pipeline  # noqa: PLC0415

    root = paths.repo_root()
    nb = Path(notebook)
    if not nb.is_file() and not nb.is_absolute() and (root / nb).is_file():
        nb = root / nb
    if not nb.is_file():
        raise FileNotFoundError(f"{notebook}: no such notebook" if not nb.exists() else
                                f"{notebook}: not a notebook file")
    points = plan(nb, grid, params_path=params_path, base=base)
    spec = scheduler_spec(scheduler, len(points))
    timeout = _connect_timeout(connect_timeout)
    out_given = out
    out = check_out(out, overwrite=overwrite)
    stem = nb.stem
    nb_text = nb.read_text(encoding="utf-8")
    report = report or (lambda p, err: print(f"tieringlab sweep: point {p.describe()} failed: {err}", file=sys.stderr))
    asked = _LOCAL.match(scheduler) if isinstance(scheduler, str) else None
    if asked and int(asked.group(1)) > int(_LOCAL.match(spec).group(1)):
        print(f"tieringlab sweep: --scheduler {scheduler}: {len(points)} point(s) need no more workers; "
              f"starting {spec}", file=sys.stderr)
    try:
        shown_nb = str(nb.resolve().relative_to(root))
    except ValueError:  # a notebook outside the repository
        shown_nb = str(nb.resolve())
    attrs = {
        "scheduler": spec,
        "notebook": shown_nb,
        "section": pipeline.section_of(nb),
        "base": f"params file {params_path or 'params.yaml'}" if base == "params" else "the notebook's own defaults",
        "fixed_parameters": json.dumps(plain(_fixed(points, base, notebook_defaults(nb))), sort_keys=True),
        "points": len(points),
    }

    outcomes: dict[int, dict] = {}

    def keep(point: Point, outcome: dict) -> None:
        try:
            if outcome.get("notebook") is not None:
                fileio.write_with(out / "notebooks" / f"{point.label}.ipynb",
                                  lambda tmp, b=outcome["notebook"]: tmp.write_bytes(b))
            for rel, blob in outcome.get("files", {}).items():
                fileio.write_with(out / "results" / point.label / rel, lambda tmp, b=blob: tmp.write_bytes(b))
        except OSError as exc:
            raise SweepError(f"sweep: --out {out_given}: cannot write the files of point {point.describe()} "
                             f"({exc})") from exc
        outcomes[point.index] = {"error": outcome.get("error"), "files": outcome.get("files", {})}
        if outcome.get("error"):
            report(point, outcome["error"])

    def write(status: str) -> xr.Dataset:
        ds = _dataset(points, outcomes, stem, {
            **attrs,
            "status": status,
            "failed_points": json.dumps([p.label for p in points if outcomes.get(p.index, {}).get("error")]),
            "not_run_points": json.dumps([p.label for p in points if p.index not in outcomes]),
        })
        fileio.write_with(out / SWEEP_FILE, lambda tmp: ds.to_netcdf(tmp))
        return ds

    from distributed import as_completed  # noqa: PLC0415

    with contextlib.ExitStack() as stack:
        client = stack.enter_context(_client(spec, timeout))
        try:
            stack.enter_context(_locked(out))
            check_out(out, overwrite=overwrite)  # again, now that no other sweep can write there
            if overwrite:
                _clear_previous(out)
            write("running")  # marks the folder as a sweep's from the start, whatever happens next
        except OSError as exc:  # changed since it was checked
            raise SweepError(f"sweep: --out {out_given}: cannot write there ({exc})") from None
        futures: dict[Any, Point] = {}
        stopped: BaseException | None = None
        try:
            for p in points:
                fut = client.submit(execute, nb_text, nb.name, dict(p.parameters), str(nb.parent.resolve()),
                                    pure=False, key=f"tieringlab-sweep-{stem}-{p.label}-{os.getpid()}-{id(points)}")
                futures[fut] = p
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
        except BaseException as exc:  # noqa: BLE001  (Ctrl-C, a file that cannot be written: kept, then raised)
            stopped = exc
        if futures and len(outcomes) < len(points):
            with contextlib.suppress(Exception):  # the pending points: nothing more of them is wanted
                client.cancel([f for f, p in futures.items() if p.index not in outcomes], force=True)
        status = "complete" if stopped is None else "interrupted" if isinstance(stopped, KeyboardInterrupt) \
            else f"stopped: {stopped}"
        try:
            ds = write(status)
        except OSError as exc:
            raise SweepError(f"sweep: --out {out_given}: cannot write {SWEEP_FILE} ({exc}); {len(outcomes)} of "
                             f"{len(points)} points completed (their files are in {out})") from stopped
        kept = f"{len(outcomes)} of {len(points)} points completed, kept in {out / SWEEP_FILE}"
        if isinstance(stopped, KeyboardInterrupt):
            raise SweepInterrupted(f"sweep: interrupted; {kept}") from None
        if isinstance(stopped, SweepError):
            raise SweepError(f"{stopped}; {kept}") from stopped.__cause__
        if isinstance(stopped, Exception):  # the scheduler lost, a report callback that raised
            raise SweepError(f"sweep: stopped by {type(stopped).__name__}: {stopped}; {kept}") from stopped
        if stopped is not None:
            raise stopped
    return ds
