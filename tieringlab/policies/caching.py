"""LRU, ARC and CAR page caches in trace mode: the conventional baselines of the vFRM paper (Sec. 5, Table 2).

The vFRM paper (Tai et al., Sec. 5) treats Flash as a second-level cache with a 4 KB cache line and
compares vFRM against LRU, ARC (Megiddo & Modha, FAST'03) and CAR (Bansal & Modha, FAST'04). The
algorithms live one per module (:mod:`~tieringlab.policies.lru`, :mod:`~tieringlab.policies.arc`,
:mod:`~tieringlab.policies.car`) on the shared array lists of :mod:`~tieringlab.policies._arraylist`;
this module replays a block trace through them, page by page, and counts what vFRM Eq. 4 prices:

* a request touching pages ``offset // 4096 .. (offset + size - 1) // 4096`` accesses each page in
  ascending order (:func:`tieringlab.traces.split.split_arrays`); the request is a **Flash hit only if
  all its pages hit** (vFRM Sec. 5.1, "IO hit ratio");
* every page access is counted as one 4 KB operation of vFRM **Table 2(a)**: read hit -> SSD read;
  read miss -> MD read + SSD write (the page is admitted); write hit or miss -> SSD write (write-back,
  write-allocate: the page is admitted dirty, nothing is written to the MD yet);
* **Table 2(b)**: evicting a dirty page from Flash costs SSD read + MD write. A page becomes dirty when
  written and clean again when written back at its eviction. Pages still dirty at the end of the
  trace are not flushed (a documented choice: the trace ends, the cache keeps running).

Entry points:

* :func:`simulate` — trace mode for several Flash sizes in one call (the trace contract of
  :mod:`tieringlab.policies.contract`, registered as "LRU", "ARC", "CAR"): a Dataset over
  ``capacity_bytes`` with hits, the four operation counts of Eq. 4 and their cost;
* :func:`replay` — unit-size integer keys, one boolean per access and capacity (hit, dirty eviction);
* :func:`hits` — plain mode, the mode libcachesim's ``LRU``/``ARC`` run in with ``obj_size=1`` and
  ``cache_size=capacity``.

Engines. ARC and CAR are sequential by nature. The JAX engine runs one jitted :func:`jax.lax.scan`
over the page accesses per capacity (:func:`tieringlab.policies._arraylist.scan_chunk`; a long trace
in chunks of ``_CHUNK`` accesses with the state carried over and a progress bar), about 10 us per
access on a CPU (the fixed cost of a step's ~50 XLA kernels), too slow for the Fig. 8/9 sweep (~2.5e9
ARC+CAR page accesses at paper scale). The default on JAX's CPU backend is therefore the numba engine:
the same caches, the same state layout and the same decisions in the same order, compiled to a plain
loop (tens of nanoseconds per access). The JAX scan stays the reference and the engine on an
accelerator; ``engine="jax"`` selects it anywhere (LRU then comes from exact stack distances,
:func:`tieringlab.policies.lru.lru_counts`), and tests/test_caching.py checks that both engines give
identical hits and write-backs. No Python loop runs per request.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import xarray as xr

from tieringlab.arrays import bucket, choice
from tieringlab.policies import arc, car, lru
from tieringlab.policies._arraylist import NF, init_state, native_state, scan_chunk, unit_capacities
from tieringlab.policies.contract import check_capacities, trace_result
from tieringlab.policies.iocost import CACHE_COST, CostModel
from tieringlab.policies.registry import PolicySpec, register
from tieringlab.progress import progress
from tieringlab.traces.split import split_arrays
from tieringlab.units import PAGE_BYTES

__all__ = ["ENGINES", "POLICIES", "PAGE_BYTES", "CachingParams", "hits", "page_accesses", "simulate", "replay"]

#: The algorithms of this module, by the lower-case name :func:`replay` and :func:`hits` take.
_ALGORITHMS = {"lru": lru, "arc": arc, "car": car}
POLICIES = tuple(_ALGORITHMS)

#: Engines of the sequential caches: "auto" (numba on JAX's CPU backend, the JAX scan otherwise),
#: "numba" (compiled loops), "jax" (the jitted scan, the reference). Both give identical results.
ENGINES = ("auto", "numba", "jax")

#: Accesses per jitted scan call (a long trace runs in chunks of this many, state carried over).
_CHUNK = 1 << 20


@dataclass(frozen=True)
class CachingParams:
    """Parameters of the conventional page caches (vFRM paper Sec. 5.1)."""

    #: 4 KB cache line, vFRM Sec. 5.1 ("4KB and 128KB" basic IO sizes) and Table 2.
    page_bytes: int = PAGE_BYTES
    #: engine of the replay (:data:`ENGINES`); speed only, the results are identical.
    engine: str = "auto"
    #: Eq. 4 pricing (Table 3 rows): 4 KB random IOs (:data:`tieringlab.policies.iocost.CACHE_COST`);
    #: applied only when its IO size equals ``page_bytes`` (Table 3 has 4 KB and 128 KB rows), else
    #: the result carries the counts without a cost. None: no cost.
    cost_model: CostModel | None = CACHE_COST

    def __post_init__(self):
        if not isinstance(self.page_bytes, (int, np.integer)) or self.page_bytes <= 0:
            raise ValueError(f"page_bytes must be a positive number of bytes; got {self.page_bytes!r}")
        choice("engine", self.engine, ENGINES)
        if self.cost_model is not None and not isinstance(self.cost_model, CostModel):
            raise TypeError(f"cost_model must be a CostModel or None; got {type(self.cost_model).__name__}")


def _engine(engine: str) -> str:
    """The engine that runs: ``engine`` checked, ``"auto"`` resolved (numba on JAX's CPU backend)."""
    choice("engine", engine, ENGINES)
    if engine == "auto":
        return "numba" if jax.default_backend() == "cpu" else "jax"
    return engine


def replay(policy: str, keys, capacities, is_write=None, engine: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """Replay unit-size ``keys`` through ``policy`` (``"lru"``, ``"arc"``, ``"car"``) for each capacity
    (in units), starting empty.

    Returns ``(hit, dirty_eviction)``, both bool arrays of shape ``(len(capacities), len(keys))``:
    whether access ``t`` hit, and whether serving it wrote a dirty page back to the MD (Table 2(b)).
    ``is_write`` (bool per access) marks pages dirty; default all reads. ``engine`` is one of
    :data:`ENGINES` (same results; ``"numba"`` is ~1000x faster on a CPU).
    """
    algo = _ALGORITHMS[choice("policy", policy, POLICIES)]
    engine = _engine(engine)
    keys = np.asarray(keys)
    if keys.ndim != 1 or not np.issubdtype(keys.dtype, np.integer):
        raise ValueError(f"keys must be a 1-D integer array; got shape {keys.shape} dtype {keys.dtype}")
    caps = unit_capacities(capacities, "capacities")
    if is_write is None:
        is_write = np.zeros(keys.shape, bool)
    is_write = np.asarray(is_write, bool)
    if is_write.shape != keys.shape:
        raise ValueError(f"is_write must have the shape of keys {keys.shape}; got {is_write.shape}")
    if keys.size == 0:
        empty = np.zeros((caps.size, 0), bool)
        return empty, empty.copy()
    uniq, ids = np.unique(keys, return_inverse=True)
    n, u = keys.size, uniq.size
    hit = np.zeros((caps.size, n), bool)
    wb = np.zeros((caps.size, n), bool)
    if engine == "numba":
        kernel = algo.native_loop()
        ids = ids.astype(np.int32) if u < np.iinfo(np.int32).max else ids
        for k in progress(range(caps.size), total=caps.size, desc=f"{policy} cache (numba)", unit="size", leave=False):
            kernel(ids, is_write, int(caps[k]), *native_state(int(u)), hit[k], wb[k])
        return hit, wb
    if u + 2 > (2**31 - 1) // NF:
        raise ValueError(f"keys has {u} distinct values; at most {(2**31 - 1) // NF - 2} fit the int32 state")
    # Shapes are bucketed so that traces of similar sizes share one compilation: ids up to 1/8 above
    # the count, accesses in chunks of at most _CHUNK (a long trace runs chunk after chunk, the state
    # carried over, with a progress bar). The padding accesses (one extra id, u) come after every real
    # access and cannot change its outcome.
    u_pad = bucket(u + 1, minimum=64, fine_above=1 << 16)
    chunk = min(bucket(n, minimum=64, fine_above=1 << 16), _CHUNK)
    n_chunks = -(-n // chunk)
    ids_p = np.full(n_chunks * chunk, u, np.int32)
    ids_p[:n] = ids
    w_p = np.zeros(n_chunks * chunk, bool)
    w_p[:n] = is_write
    bar = progress(total=caps.size * n_chunks, desc=f"{policy} cache", unit="chunk", leave=False)
    for k, c in enumerate(caps):  # a handful of sizes, one scan each (see scan_chunk)
        state = (init_state(u_pad),)
        for i in range(n_chunks):
            sl = slice(i * chunk, (i + 1) * chunk)
            state, out = scan_chunk(state, algo.jax_step, u_pad, jnp.asarray(ids_p[sl]), jnp.asarray(w_p[sl]),
                                    jnp.asarray([c], jnp.int64))
            out = np.asarray(out)[: max(0, min(chunk, n - i * chunk)), 0]
            hit[k, sl][: out.size] = (out & 1) != 0
            wb[k, sl][: out.size] = (out & 2) != 0
            bar.update(1)
    bar.close()
    return hit, wb


def hits(policy: str, keys, capacity: int, engine: str = "auto") -> np.ndarray:
    """Plain mode: whether each access of unit-size integer ``keys`` hits a ``capacity``-unit cache.

    ``policy`` is ``"lru"``, ``"arc"`` or ``"car"``; the cache starts empty. The same semantics as
    libcachesim's ``LRU``/``ARC`` with ``obj_size=1`` and ``cache_size=capacity``. ``engine``: one of
    :data:`ENGINES`.
    """
    caps = unit_capacities(capacity)
    if caps.size != 1:
        raise ValueError(f"capacity must be one integer; got {capacity!r}")
    return replay(policy, keys, caps, engine=engine)[0][0]


def _check_trace(ds: xr.Dataset) -> None:
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"trace must be an xarray.Dataset with dim 'request'; got {type(ds).__name__}")
    missing = [v for v in ("offset", "size", "is_write") if v not in ds]
    if missing:
        raise ValueError(f"trace is missing variable(s) {missing}; needs offset, size, is_write over dim 'request'")
    if ds["offset"].dims != ("request",):
        raise ValueError(f"trace variable 'offset' must have dims ('request',); got {ds['offset'].dims}")


def page_accesses(ds: xr.Dataset, page_bytes: int = PAGE_BYTES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every page access of trace ``ds`` (vFRM Sec. 5.1: a request spans several pages): ``(page,
    request, is_write)`` in trace order and ascending page order within a request
    (:func:`tieringlab.traces.split.split_arrays`, whose rule rejects negative offsets and sizes <= 0)."""
    _check_trace(ds)
    page, req = split_arrays(ds["offset"].values, ds["size"].values, page_bytes)
    return page, req, np.asarray(ds["is_write"].values, bool)[req]


def simulate(ds: xr.Dataset, policy: str, capacities, params: CachingParams = CachingParams()) -> xr.Dataset:
    """Replay trace ``ds`` through the ``policy`` page cache (``"lru"``, ``"arc"``, ``"car"``) of each size in
    ``capacities`` (bytes; the cache holds ``capacity // page_bytes`` pages), vFRM Sec. 5, Table 2.

    The trace contract (:mod:`tieringlab.policies.contract`): a Dataset over ``capacity_bytes`` with
    ``hits`` (requests all of whose pages hit), ``requests``, ``hit_ratio``, the Eq. 4 operation counts
    ``ssd_reads``, ``ssd_writes``, ``md_reads``, ``md_writes`` (4 KB operations, Table 2(a) and the
    write-backs of (b)), ``dirty_evictions``, ``io_cost`` and ``update_cost`` (Eq. 4, seconds) and
    ``request_hit`` (``capacity_bytes`` x ``request``).

    ``params.engine`` (same results): ``"numba"`` replays every policy, LRU included, with the compiled
    loops; ``"jax"`` computes LRU from exact stack distances and ARC/CAR with the jitted scan.
    """
    choice("policy", policy, POLICIES)
    engine = _engine(params.engine)
    fb = check_capacities(capacities)
    caps = fb // params.page_bytes
    if np.any(caps < 1):
        raise ValueError(f"capacities must hold at least one {params.page_bytes}-byte page; got {capacities!r}")
    page, req, w = page_accesses(ds, params.page_bytes)
    if policy == "lru" and engine == "jax":  # exact stack distances: no scan needed
        hit, n_wb = lru.lru_counts(page, caps, w)
    else:
        hit, wb = replay(policy, page, caps, w, engine=engine)
        n_wb = wb.sum(axis=1)
    n_req = ds.sizes["request"]
    starts = np.flatnonzero(np.r_[True, req[1:] != req[:-1]]) if req.size else np.zeros(0, np.int64)
    request_hit = np.logical_and.reduceat(hit, starts, axis=1) if req.size else np.zeros((fb.size, 0), bool)
    r = ~w
    read_hit = (hit & r).sum(axis=1)
    read_miss = (~hit & r).sum(axis=1)
    n_writes = int(w.sum())
    counts = {"ssd_reads": read_hit + n_wb, "ssd_writes": read_miss + n_writes, "md_reads": read_miss,
              "md_writes": n_wb, "dirty_evictions": n_wb}
    priced = params.cost_model is not None and params.cost_model.io_bytes == params.page_bytes
    return trace_result(fb, policy=_NAMES[policy], source=_SOURCE[policy], requests=n_req,
                        hits=request_hit.sum(axis=1), counts=counts, io_bytes=params.page_bytes,
                        cost_model=params.cost_model if priced else None,
                        extra={"request_hit": (("capacity_bytes", "request"), request_hit)},
                        attrs={"page_bytes": params.page_bytes, "n_page_accesses": int(page.size),
                               "table": "vFRM paper Sec. 5.1, Table 2(a)(b)"})


# ------------------------------------------------------------------------------------------ registry
_NAMES = {"lru": "LRU", "arc": "ARC", "car": "CAR"}
_SOURCE = {"lru": "vFRM paper Sec. 5.1 (4 KB LRU page cache)",
           "arc": "vFRM paper Sec. 5.1; Megiddo & Modha, FAST'03, Fig. 4",
           "car": "vFRM paper Sec. 5.1; Bansal & Modha, FAST'04, Fig. 2"}


def _trace_fn(policy: str):
    def run(ds: xr.Dataset, capacities, params: CachingParams = CachingParams()) -> xr.Dataset:
        return simulate(ds, policy, capacities, params)

    run.__name__ = run.__qualname__ = f"simulate_{policy}"
    run.__doc__ = f"``simulate(ds, {policy!r}, capacities, params)``: the {_NAMES[policy]} page cache in trace mode."
    return run


for _policy in POLICIES:
    register(PolicySpec(name=_NAMES[_policy], kind="trace", fn=_trace_fn(_policy), params_type=CachingParams,
                        source=_SOURCE[_policy], description="4 KB page cache, write-back, write-allocate"))
