"""The call shapes every paper system follows, and the helpers that build their results.

Four kinds of system, one call shape each (the package docstring of :mod:`tieringlab.policies` says
which system is which kind):

**trace** — trace-driven placement and caching (LRU, ARC, CAR, vFRM, G1/G2-vFRM; next FlashCache,
static tiering, OTF-AST, an EAFC partition)::

    fn(ds: xarray.Dataset, capacities, params: <frozen dataclass>[, key]) -> xarray.Dataset

- ``ds`` is a trace of :mod:`tieringlab.traces` (dim ``request``; ``time`` s, ``offset``/``size`` bytes,
  ``is_write``; optional ``vm``), checked first by :func:`check_trace`, the one trace validation every
  trace policy runs: a ``ValueError`` naming the variable and the first bad request for a non-finite or
  decreasing ``time``, a negative offset, a size < 1 or a request beyond 2^53 bytes, and for an **empty
  trace** (no requests: every trace policy refuses it, as does ``stats.lru_hit_ratio``);
- ``capacities`` is a 1-D sequence of fast-tier sizes in **bytes** (:func:`check_capacities`); one call
  covers them all;
- ``params`` is the system's frozen parameter dataclass, paper defaults (default: ``params_type()``);
- ``key`` (a ``jax.random`` key) only for randomised systems.

The result (:func:`trace_result` builds it) has the one dimension :data:`CAPACITY_DIM` =
``"capacity_bytes"`` (coordinate: the capacities, ``units = "bytes"``) and at least

- ``requests``, ``hits`` (requests all of whose units were in the fast tier), ``hit_ratio``;
- the operation counts :mod:`tieringlab.policies.iocost` prices: ``ssd_reads``, ``ssd_writes``,
  ``md_reads``, ``md_writes`` (operations of ``attrs["io_bytes"]`` bytes) and, for systems that
  migrate whole units, ``update_ssd_reads`` ... ``update_md_writes`` (``attrs["update_io_bytes"]``);
  page caches add ``dirty_evictions``; optionally the continuation counts ``cont_*`` (the part of each
  access count that continues a run inside one request, :data:`~tieringlab.policies.iocost.CONTINUATION_NAMES`);
- ``io_cost`` and ``update_cost`` (seconds, vFRM Eq. 4 with the params' cost model and ``io_pricing``)
  when the system is priced by Eq. 4 (its params carry a ``cost_model``); with the ``cont_*`` counts
  also ``io_cost_by_pricing`` over the dimension ``io_pricing`` (every reading of
  :data:`~tieringlab.policies.iocost.IO_PRICINGS`, from the same counts);
- attrs ``policy`` (the registry name), ``source`` (where the paper defines it).

Systems add their own variables beside these (``request_hit``, ``move_ins``, ...).

**queueing** — dispatch over queues (ARA and its baselines Qlen, Rand; next LMST, NMST, SMST)::

    fn(params: <frozen dataclass>, arrivals, services[, key], **inputs) -> xarray.Dataset

- ``arrivals`` (s, non-decreasing) and ``services`` (s), shape ``(n,)`` or ``(R, n)`` for R
  replications in one call; ``inputs`` are the per-job side inputs a system needs (ARA_OPT's true
  burst state);
- the result has dims ``job`` (and ``replication`` for 2-D input) with per-job ``response_s`` and
  a summary ``mean_response_s`` per replication (:func:`queue_result`).

**controller** — epoch controllers (AutoTiering, IDT, EDT, EAFC)::

    fn(params: <frozen dataclass>, observations: xarray.Dataset[, key]) -> xarray.Dataset

- ``observations`` has a dimension ``epoch`` (what the controller can measure at each epoch);
- the result has the dimension ``epoch`` with the decisions taken at each (a ``lax.scan`` over
  epochs where the state is small).

**scenario** — systems whose paper defines the workload with the system (LMST, NMST, SMST: thesis Sec. 4.1
specifies the ALUNs, their slots and the disks together)::

    fn(params: <frozen dataclass>, workload: <frozen dataclass>, key) -> xarray.Dataset

- ``workload`` is the scenario's parameters (the system makes the arrivals from it and ``key``, so every
  system of the scenario runs on the same I/Os for the same key: common random numbers);
- the result (:func:`check_scenario_result`) has the dims ``replication`` (one per key: ``key`` may hold
  several) and ``config`` (one per parameter set the params hold: a sequence-valued knob runs several in one
  call), a summary ``mean_response_s`` over both, and attrs ``policy`` and ``source``.

Every system is registered under the papers' name (:mod:`tieringlab.policies.registry`); experiments
look systems up there and never import a policy module for its functions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

from tieringlab.arrays import whole_bytes
from tieringlab.policies.iocost import (
    ACCESS_NAMES,
    CONTINUATION_NAMES,
    IO_PRICINGS,
    UPDATE_NAMES,
    CostModel,
    io_cost,
    update_cost,
)
from tieringlab.traces.readers import check_trace

__all__ = ["CAPACITY_DIM", "KINDS", "check_capacities", "check_trace", "trace_result", "queue_result",
           "check_scenario_result", "check_controller_result"]

#: The one capacity dimension of every trace-policy result (fast-tier size in bytes).
CAPACITY_DIM = "capacity_bytes"

#: The kinds of system and their call shapes (see the module docstring).
KINDS = ("trace", "queueing", "controller", "scenario")


def check_capacities(capacities, name: str = "capacities") -> np.ndarray:
    """``capacities`` as a 1-D int64 array of byte counts (>= 0), or ``ValueError`` naming ``name``.

    A scalar is one capacity. Floats are accepted when they are whole numbers of bytes.
    """
    arr = np.atleast_1d(np.asarray(capacities))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of byte counts; got {capacities!r}")
    return np.atleast_1d(whole_bytes(capacities, name))  # the message shows the value as given


def trace_result(capacities, *, policy: str, source: str, requests: int, hits, counts: Mapping[str, Any],
                 io_bytes: int, cost_model: CostModel | None = None, extra: Mapping[str, Any] | None = None,
                 coords: Mapping[str, Any] | None = None, attrs: Mapping[str, Any] | None = None,
                 io_pricing: str = "random") -> xr.Dataset:
    """The result of a trace policy over :data:`CAPACITY_DIM` (see the module docstring).

    ``hits`` and every entry of ``counts`` have one value per capacity; ``counts`` holds the names of
    :data:`~tieringlab.policies.iocost.ACCESS_NAMES` (required) and optionally
    :data:`~tieringlab.policies.iocost.UPDATE_NAMES`, ``dirty_evictions`` and
    :data:`~tieringlab.policies.iocost.CONTINUATION_NAMES`. ``extra`` adds variables (a ``(dims,
    values)`` tuple, or values over the capacity dimension); ``coords`` adds coordinates over it. With
    ``cost_model``, ``io_cost`` and ``update_cost`` (s) are priced by vFRM Eq. 4 (``io_pricing``: how
    the IOs of a multi-IO request are priced), and, when the continuation counts are given,
    ``io_cost_by_pricing`` holds ``io_cost`` under every pricing.
    """
    caps = check_capacities(capacities)
    n = caps.size
    missing = [k for k in ACCESS_NAMES if k not in counts]
    if missing:
        raise ValueError(f"{policy}: the counts must include {list(ACCESS_NAMES)}; missing {missing}")
    known = set(ACCESS_NAMES) | set(UPDATE_NAMES) | set(CONTINUATION_NAMES) | {"dirty_evictions"}
    unknown = sorted(set(counts) - known)
    if unknown:
        raise ValueError(f"{policy}: unknown count name(s) {unknown}; allowed {sorted(known)}")

    def over_caps(name, v):
        v = np.asarray(v)
        if v.shape != (n,):
            raise ValueError(f"{policy}: {name} must have one value per capacity ({n}); got shape {v.shape}")
        return v

    # Every variable is computed on numpy arrays and the Dataset built once: the same numbers (the same
    # operations in the same order) as arithmetic on its DataArrays, at a tenth of the cost on the small calls
    # of tests and sweeps (xarray's per-operation overhead was ~95 % of a small vFRM call).
    hits = over_caps("hits", hits)
    arrays = {k: over_caps(k, v) for k, v in counts.items()}
    req = np.full(n, int(requests), dtype=np.int64)
    data: dict[str, Any] = {"hits": (CAPACITY_DIM, hits), "requests": (CAPACITY_DIM, req)}
    for k, v in arrays.items():
        size = io_bytes if k in ACCESS_NAMES else (cost_model.update_io_bytes if cost_model else io_bytes)
        units = (f"{io_bytes}-byte operations (part of {k[5:]} that continues a run)" if k in CONTINUATION_NAMES
                 else None if k == "dirty_evictions" else f"{size}-byte operations")
        data[k] = (CAPACITY_DIM, v, {"units": units} if units else {})
    data["hit_ratio"] = (CAPACITY_DIM, hits / req if requests else np.zeros(n, dtype=np.float64),
                         {"units": "1",
                          "long_name": "IO hit ratio (requests all of whose units were in the fast tier)"})
    for k, v in (extra or {}).items():
        data[k] = v if isinstance(v, tuple) else (CAPACITY_DIM, over_caps(k, v))
    if cost_model is not None:  # every count is one array over the capacities, so every cost is one too
        data["io_cost"] = (CAPACITY_DIM, io_cost(arrays, cost_model, io_pricing),
                           {"units": "s", "long_name": "IO cost C_IO (vFRM Eq. 4, Table 3 latencies)",
                            "io_pricing": io_pricing})
        if all(k in counts for k in CONTINUATION_NAMES):
            data["io_cost_by_pricing"] = (("io_pricing", CAPACITY_DIM),
                                          np.stack([io_cost(arrays, cost_model, pr) for pr in IO_PRICINGS]),
                                          {"units": "s", "long_name": "C_IO under each io_pricing reading"})
        if any(k in counts for k in UPDATE_NAMES) or "dirty_evictions" in counts:
            upd = update_cost(arrays, cost_model)
        else:  # no migrations and no write-backs: nothing updates the fast tier
            upd = np.zeros_like(data["io_cost"][1])
        data["update_cost"] = (CAPACITY_DIM, upd, {"units": "s",
                                                   "long_name": "C_FlashUpdate (the Table 2(b) part of C_IO)"})
    coord_vars = {"io_pricing": list(IO_PRICINGS)} if "io_cost_by_pricing" in data else {}
    ds = xr.Dataset(data, coords={CAPACITY_DIM: (CAPACITY_DIM, caps, {"units": "bytes"}),
                                  **{k: (CAPACITY_DIM, np.asarray(v)) for k, v in (coords or {}).items()},
                                  **coord_vars})
    ds.attrs.update({"policy": policy, "source": source, "io_bytes": int(io_bytes), **(attrs or {})})
    if cost_model is not None:
        ds.attrs["io_pricing"] = io_pricing
    return ds


def queue_result(response, *, policy: str, source: str, extra: Mapping[str, Any] | None = None,
                 attrs: Mapping[str, Any] | None = None) -> xr.Dataset:
    """The result of a queueing system: per-job ``response_s`` over ``job`` (and ``replication`` for a
    2-D input) and ``mean_response_s`` per replication. ``extra`` adds per-job variables of the same
    shape (``departure_s``, ``site``, ...); ``None`` values are left out."""
    response = np.asarray(response)
    dims = ("job",) if response.ndim == 1 else ("replication", "job")
    if response.ndim not in (1, 2):
        raise ValueError(f"{policy}: response must be 1-D (jobs) or 2-D (replications x jobs); got {response.shape}")
    data = {"response_s": (dims, response), "mean_response_s": (dims[:-1], response.mean(axis=-1))}
    for k, v in (extra or {}).items():
        if v is not None:
            data[k] = (dims, np.asarray(v))
    ds = xr.Dataset(data)
    ds["response_s"].attrs.update(units="s", long_name="response time (waiting + service)")
    ds["mean_response_s"].attrs.update(units="s", long_name="mean response time")
    ds.attrs.update({"policy": policy, "source": source, **(attrs or {})})
    return ds


def _missing(res: xr.Dataset, dims: tuple[str, ...], variables: tuple[str, ...]) -> list[str]:
    out = [f"dimension {d!r}" for d in dims if d not in res.dims]
    out += [f"variable {v!r}" for v in variables if v not in res.variables]
    out += [f"attrs[{a!r}]" for a in ("policy", "source") if a not in res.attrs]
    return out


def check_controller_result(res: xr.Dataset) -> xr.Dataset:
    """``res`` when it has a controller's shape (dim ``epoch``; attrs ``policy``, ``source``), else a
    ``ValueError`` naming what is missing."""
    bad = _missing(res, ("epoch",), ())
    if bad:
        raise ValueError(f"a controller result needs {', '.join(bad)}; got dims {dict(res.sizes)}")
    return res


def check_scenario_result(res: xr.Dataset) -> xr.Dataset:
    """``res`` when it has a scenario system's shape (dims ``replication`` and ``config``, ``mean_response_s``
    over both; attrs ``policy``, ``source``), else a ``ValueError`` naming what is missing."""
    bad = _missing(res, ("replication", "config"), ("mean_response_s",))
    if not bad and set(res["mean_response_s"].dims) != {"replication", "config"}:
        bad = [f"mean_response_s over (replication, config), not {res['mean_response_s'].dims}"]
    if bad:
        raise ValueError(f"a scenario result needs {', '.join(bad)}; got dims {dict(res.sizes)}")
    return res
