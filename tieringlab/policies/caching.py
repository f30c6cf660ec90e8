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
  write-allocate: the page is admitted dirty, nothing is written to the MD yet); page ``j >= 2`` of a
  request with the same outcome as page ``j - 1`` (both read hits, both read misses, or a write)
  *continues a run* (the ``cont_*`` counts that the ``io_pricing="sequential_runs"`` reading of
  :mod:`tieringlab.policies.iocost` prices at the 4 KB sequential row);
* **Table 2(b)**: evicting a dirty page from Flash costs SSD read + MD write. A page becomes dirty when
  written and clean again when written back at its eviction. Pages still dirty at the end of the
  trace are not flushed (a documented choice: the trace ends, the cache keeps running).

Entry points:

* :func:`simulate` — trace mode for several Flash sizes in one call (the trace contract of
  :mod:`tieringlab.policies.contract`, registered as "LRU", "ARC", "CAR"): a Dataset over
  ``capacity_bytes`` with hits, the four operation counts of Eq. 4 and their cost. On the numba engine
  it replays the trace in chunks of whole requests through the algorithm's own numba loop and keeps
  only counts (:func:`_count`), with
  page ids taken straight from the page numbers when the trace's address span allows (no array per
  page access, no sort of the page keys): a paper-scale mix of 2 x 10^8 page accesses replays in the
  memory of its requests plus about 9 bytes per page of address span;
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

from tieringlab import native
from tieringlab.arrays import bucket, choice
from tieringlab.params import cross_field, field_problems, param
from tieringlab.policies import arc, car, lru
from tieringlab.policies._arraylist import LIST, NF, T1, T2, init_state, native_state, scan_chunk, unit_capacities
from tieringlab.policies.contract import check_capacities, check_trace, trace_result
from tieringlab.policies.iocost import CACHE_COST, IO_PRICINGS, CostModel
from tieringlab.policies.registry import PolicySpec, register
from tieringlab.progress import progress
from tieringlab.traces.split import split_arrays, unit_span
from tieringlab.units import PAGE_BYTES

__all__ = ["ENGINES", "POLICIES", "PAGE_BYTES", "CachingParams", "hits", "page_accesses", "simulate", "replay",
           "simulate_rewrites"]

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
    """Parameters of the conventional page caches (vFRM paper Sec. 5.1), each declared once."""

    #: Settings that change speed only, never a result (tests/test_caching.py: identical counts for every engine
    #: and thread count): a run that differs from params.yaml only in these is still a paper-scale run
    #: (tieringlab.results.result_values; notebooks 02 and 03 nest these parameters as ``caches``).
    speed_only = ("threads", "engine")

    page_bytes: int = param(PAGE_BYTES, "4 KB cache line, vFRM Sec. 5.1 ('4KB and 128KB' basic IO sizes) and Table 2",
                            bounds=(1, None), unit="bytes")
    engine: str = param("auto", "engine of the replay (documented choice, speed only: the results are identical): "
                        "'auto' (numba on JAX's CPU backend, the JAX scan otherwise), 'numba', 'jax'", choices=ENGINES)
    cost_model: CostModel | None = param(CACHE_COST, "Eq. 4 pricing, Table 3 rows: 4 KB random IOs "
                                         "(tieringlab.policies.iocost.CACHE_COST); applied only when its IO size "
                                         "equals page_bytes (Table 3 has 4 KB and 128 KB rows), else the result "
                                         "carries the counts without a cost; null: no cost")
    io_pricing: str = param("random", "how the pages of a multi-page request are priced (tieringlab.policies.iocost; "
                            "the paper is silent): 'random' every page at the random row, 'sequential_runs' pages "
                            "continuing a run at the sequential row; only io_cost depends on it (io_cost_by_pricing "
                            "holds both)", choices=IO_PRICINGS)
    threads: int = param(1, "numba engine: flash sizes replayed at once, one thread each (speed only; each holds its "
                         "own lists: about 9 bytes per 4 KB page of address span)", bounds=(1, None))

    def __post_init__(self):
        if self.cost_model is not None and not isinstance(self.cost_model, CostModel):
            raise TypeError(f"cost_model must be a CostModel or None; got {type(self.cost_model).__name__}")
        cross_field(field_problems(self))  # the declared checks (cost_model: a CostModel instance, or None)


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
        kernel = algo.native_loop
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
    write-backs of (b)) and their ``cont_*`` parts (pages that continue a run in their request; dirty
    write-backs never do), ``dirty_evictions``, ``io_cost`` and ``update_cost`` (Eq. 4, seconds, priced
    by ``params.io_pricing``), ``io_cost_by_pricing`` and ``request_hit`` (``capacity_bytes`` x ``request``).

    ``params.engine`` (same results): ``"numba"`` replays every policy, LRU included, with the compiled
    loops in chunks, keeping counts (:func:`_count`); ``"jax"`` computes LRU from exact stack distances
    and ARC/CAR with the jitted scan.

    The trace is checked first (:func:`~tieringlab.policies.contract.check_trace`): an empty trace, a
    non-finite or decreasing ``time`` (when the trace has one), a negative offset or a size < 1 is a
    ``ValueError`` naming the variable and the first bad request.
    """
    choice("policy", policy, POLICIES)
    check_trace(ds, _NAMES[policy], needs=("offset", "size", "is_write"))  # the contract's one trace check
    engine = _engine(params.engine)
    fb = check_capacities(capacities)
    caps = fb // params.page_bytes
    if np.any(caps < 1):
        raise ValueError(f"capacities must hold at least one {params.page_bytes}-byte page; got {capacities!r}")
    if engine == "numba":
        c, request_hit, n_pages = _count(ds, policy, caps, params)
    else:
        page, req, w = page_accesses(ds, params.page_bytes)
        n_pages = int(page.size)
        if policy == "lru":  # exact stack distances: no scan needed
            hit, n_wb = lru.lru_counts(page, caps, w)
        else:
            hit, wb = replay(policy, page, caps, w, engine=engine)
            n_wb = wb.sum(axis=1)
        starts = np.flatnonzero(np.r_[True, req[1:] != req[:-1]]) if req.size else np.zeros(0, np.int64)
        request_hit = np.logical_and.reduceat(hit, starts, axis=1) if req.size else np.zeros((fb.size, 0), bool)
        c = _counts_from_hits(hit, req, w, n_wb)
    n_req = ds.sizes["request"]
    counts = {"ssd_reads": c["read_hits"] + c["dirty_evictions"], "ssd_writes": c["read_misses"] + c["write_pages"],
              "md_reads": c["read_misses"], "md_writes": c["dirty_evictions"], "dirty_evictions": c["dirty_evictions"],
              "cont_ssd_reads": c["cont_read_hits"], "cont_ssd_writes": c["cont_read_misses"] + c["cont_write_pages"],
              "cont_md_reads": c["cont_read_misses"], "cont_md_writes": np.zeros(fb.size, np.int64)}
    priced = params.cost_model is not None and params.cost_model.io_bytes == params.page_bytes
    return trace_result(fb, policy=_NAMES[policy], source=_SOURCE[policy], requests=n_req,
                        hits=request_hit.sum(axis=1), counts=counts, io_bytes=params.page_bytes,
                        cost_model=params.cost_model if priced else None, io_pricing=params.io_pricing,
                        extra={"request_hit": (("capacity_bytes", "request"), request_hit)},
                        attrs={"page_bytes": params.page_bytes, "n_page_accesses": int(n_pages),
                               "table": "vFRM paper Sec. 5.1, Table 2(a)(b)"})


#: What the trace mode counts per flash size (:func:`_tally`, :func:`_count`): Table 2(a)(b) operations
#: by outcome, and the ``cont_*`` parts, pages ``j >= 2`` of a request with the same outcome as page ``j - 1``.
COUNT_FIELDS = ("read_hits", "read_misses", "write_pages", "dirty_evictions", "cont_read_hits", "cont_read_misses",
                "cont_write_pages")
#: Page accesses per chunk of the numba engine's replay in :func:`simulate` (memory only: the chunk's ids and
#: flags, about 7 bytes per access; whole requests, so a chunk can exceed it by one request's pages).
_COUNT_CHUNK = 1 << 22


@native.jit(nogil=True)
def _tally_row(hit, w, same):  # pragma: no cover - compiled by numba
    """:func:`_tally`'s counts for one row of outcomes, in one branch-free pass (``hit``, ``w``, ``same`` as uint8 0/1):
    ``(read_hits, read_misses, write_pages, cont_read_hits, cont_read_misses, cont_write_pages)``."""
    rh = rm = wp = crh = crm = cwp = 0
    prev = np.uint8(0)  # the outcome of the access before (none before the first: a miss)
    for t in range(hit.size):
        h = hit[t]
        wt = w[t]
        r = 1 - wt
        rs = r & same[t]
        wp += wt
        cwp += wt & same[t]
        rh += h & r
        rm += (1 - h) & r
        crh += h & prev & rs
        crm += (1 - h) & (1 - prev) & rs
        prev = h
    return rh, rm, wp, crh, crm, cwp


def _tally(hit, w, same, n_wb) -> dict:
    """The :data:`COUNT_FIELDS` counts from the outcomes ``hit`` (capacity x page access) of consecutive
    whole requests: ``w`` the write flag of each access, ``same`` whether it is page ``j >= 2`` of its
    request, ``n_wb`` the dirty write-backs per capacity. A read continues a run when it and the page
    before it in its request both hit or both miss (the same devices, Table 2(a)); every write page
    ``j >= 2`` does (an SSD write whatever the outcome). One compiled pass per row (:func:`_tally_row`; issue 35:
    seven array reductions per chunk were 4-5 % of notebooks 02 and 03)."""
    w = np.ascontiguousarray(w, dtype=np.bool_).view(np.uint8)
    same = np.ascontiguousarray(same, dtype=np.bool_).view(np.uint8)
    rows = np.array([_tally_row(np.ascontiguousarray(h, dtype=np.bool_).view(np.uint8), w, same) for h in hit],
                    dtype=np.int64).reshape(-1, 6)
    return {"read_hits": rows[:, 0], "read_misses": rows[:, 1], "write_pages": rows[:, 2],
            "dirty_evictions": np.asarray(n_wb), "cont_read_hits": rows[:, 3], "cont_read_misses": rows[:, 4],
            "cont_write_pages": rows[:, 5]}


def _counts_from_hits(hit, req, w, n_wb) -> dict:
    """:func:`_tally` for the JAX engine's whole-trace outcomes, ``req`` the request of each access."""
    same = np.zeros(req.size, bool)
    same[1:] = req[1:] == req[:-1]
    return _tally(hit, w, same, n_wb)


def _page_chunks(ds: xr.Dataset, page_bytes: int):
    """How the numba replays (:func:`_count`, :func:`simulate_rewrites`) walk a non-empty trace's page accesses:
    ``(n_ids, n_page_accesses, bounds, chunk)``; ``bounds`` cut the requests into chunks of about
    :data:`_COUNT_CHUNK` page accesses and ``chunk(r0, r1)`` gives requests ``r0 .. r1 - 1``'s page ids (see
    :func:`_count`), whether each access continues its request (``same``), each request's first access within the
    chunk (``local``) and its page count (to repeat per-request flags per access)."""
    first, n_pages = unit_span(ds["offset"].values, ds["size"].values, page_bytes)
    n_acc = int(n_pages.sum())
    base = int(first.min())
    span = int((first + n_pages).max()) - base
    ends = np.cumsum(n_pages, dtype=np.int64)
    starts = ends - n_pages
    if span < np.iinfo(np.int32).max - 1 and span <= 16 * n_acc + (1 << 20):
        n_ids, ids_all = span, None
    else:
        keys, _ = split_arrays(ds["offset"].values, ds["size"].values, page_bytes)
        uniq, inv = np.unique(keys, return_inverse=True)
        del keys
        n_ids, ids_all = uniq.size, inv.astype(np.int32)  # native_state refuses more than int32 ids
        del uniq, inv
    cuts = np.flatnonzero(np.diff(starts // _COUNT_CHUNK)) + 1
    bounds = np.r_[0, cuts, first.size]

    def chunk(r0, r1):
        a0, a1 = int(starts[r0]), int(ends[r1 - 1])
        np_ = n_pages[r0:r1]
        local = starts[r0:r1] - a0
        if ids_all is None:
            ids = (np.repeat(first[r0:r1] - base - local, np_) + np.arange(a1 - a0)).astype(np.int32)
        else:
            ids = ids_all[a0:a1]
        same = np.ones(a1 - a0, bool)
        same[local] = False
        return ids, same, local, np_

    return n_ids, n_acc, bounds, chunk


def _count(ds: xr.Dataset, policy: str, caps: np.ndarray, params: CachingParams):
    """The numba engine of :func:`simulate`: ``(counts by COUNT_FIELDS name, request_hit, n_page_accesses)``.

    The trace is replayed in chunks of whole requests (about :data:`_COUNT_CHUNK` page accesses each)
    through the algorithm's own loop (``native_loop`` of :mod:`~tieringlab.policies.lru`, ``arc``,
    ``car``) on one state carried from chunk to chunk (lists and ARC/CAR's ``p``: the same decisions as
    one call), and each chunk's flags are reduced to counts at once (:func:`_tally`): no array per page
    access of the whole trace is built. Page ids: the page numbers less the smallest when the address
    span is at most 16 page accesses per page of span (and fits int32), else dense ids from the sorted
    distinct pages (the page array is then built once). Each flash size replays from an empty cache;
    ``params.threads`` sizes at once.
    """
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    _check_trace(ds)
    w_req = np.ascontiguousarray(ds["is_write"].values, dtype=bool)
    if w_req.size == 0:
        z = np.zeros(caps.size, np.int64)
        return {k: z for k in COUNT_FIELDS}, np.zeros((caps.size, 0), bool), 0
    n_ids, n_acc, bounds, chunks = _page_chunks(ds, params.page_bytes)
    kernel = _ALGORITHMS[policy].native_loop
    request_hit = np.zeros((caps.size, w_req.size), bool)
    counts = {k: np.zeros(caps.size, np.int64) for k in COUNT_FIELDS}

    def chunk(r0, r1):
        ids, same, local, np_ = chunks(r0, r1)
        return ids, np.repeat(w_req[r0:r1], np_), same, local

    def run(k):
        state = native_state(int(n_ids))
        for r0, r1 in zip(bounds[:-1], bounds[1:]):
            ids, w, same, local = chunk(int(r0), int(r1))
            hit = np.empty((1, ids.size), bool)
            wb = np.empty(ids.size, bool)
            kernel(ids, w, int(caps[k]), *state, hit[0], wb)
            for name, v in _tally(hit, w, same, wb[None].sum(axis=1)).items():
                counts[name][k] += int(v[0])
            request_hit[k, r0:r1] = np.logical_and.reduceat(hit[0], local)

    bar = progress(total=caps.size, desc=f"{policy} cache (numba)", unit="size", leave=False)
    with ThreadPoolExecutor(max_workers=min(int(params.threads), caps.size)) as pool:
        for _ in pool.map(run, range(caps.size)):
            bar.update(1)
    bar.close()
    return counts, request_hit, n_acc


# ------------------------------------------------------------------------- other write flags, one replay
@native.jit(nogil=True)
def _dirty_pass(ids, hit, wbits, dirty, n_wb):  # pragma: no cover - compiled by numba
    """The dirty write-backs of one chunk of page accesses under up to 8 vectors of write flags at once (bit ``a`` of
    ``wbits[t]``: access ``t`` writes under vector ``a``), given the accesses' outcomes ``hit`` (which do not depend
    on the writes): a miss of a page that was accessed before means the page was evicted since its previous access
    (every access admits it), and that eviction wrote it back under vector ``a`` iff a write of ``a`` fell inside the
    residency it ended (bit ``a`` of ``dirty[x]``, carried from chunk to chunk). Adds the counts to ``n_wb[a]``."""
    for t in range(ids.size):
        x = ids[t]
        d = dirty[x]
        if not hit[t] and d:
            for a in range(n_wb.size):
                if (d >> a) & 1:
                    n_wb[a] += 1
            d = 0
        dirty[x] = d | wbits[t]


@native.jit(nogil=True)
def _dirty_left(meta, dirty, n_wb):  # pragma: no cover - compiled by numba
    """The write-backs :func:`_dirty_pass` has not seen when the replay ends: a page id ``x`` (``dirty`` and ``meta``
    one entry per id plus NIL) whose final list (``meta[x] & LIST``) is neither T1 nor T2 was evicted after its last
    access, which wrote it back under vector ``a`` iff bit ``a`` of ``dirty[x]`` is set. Adds the counts to ``n_wb[a]``
    (one pass, no temporary the size of the id space: issue 35)."""
    for x in range(dirty.size - 1):
        d = dirty[x]
        if d:
            lst = meta[x] & LIST
            if lst != T1 and lst != T2:
                for a in range(n_wb.size):
                    if (d >> a) & 1:
                        n_wb[a] += 1


def simulate_rewrites(ds: xr.Dataset, policy: str, capacities, writes,
                      params: CachingParams = CachingParams()) -> list[xr.Dataset]:
    """:func:`simulate` of trace ``ds`` with each write-flag vector of ``writes`` (bool, one per request) in place
    of ``ds``'s ``is_write`` (a read-ratio twin reading, issue 34: the same offsets and sizes): one result per
    vector, each identical to ``simulate(ds.assign(is_write=("request", w)), policy, capacities, params)``
    (tests/test_vfrm_single_vm.py checks it), from **one** replay per flash size.

    LRU, ARC and CAR decide on page ids alone (the dirty bit rides along in the meta word and is never read by a
    decision), so every access's hit and every eviction are the same under any write flags. The numba engine
    replays the trace once with the first vector (:func:`_count`'s chunks, the same kernel), and for every other
    vector counts its Table 2(a) operations from the same outcomes (:func:`_tally`) and its dirty write-backs by
    :func:`_dirty_pass` (a residency ends by eviction at the page's next miss, or, after its last access, when the
    page is not in T1/T2 of the final state). The JAX engine runs :func:`simulate` once per vector."""
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    choice("policy", policy, POLICIES)
    ws = [np.ascontiguousarray(np.asarray(w, dtype=bool)) for w in writes]
    n_req = ds.sizes.get("request", 0)
    for w in ws:
        if w.shape != (n_req,):
            raise ValueError(f"writes: each vector must hold one flag per request ({n_req}); got shape {w.shape}")
    if not ws:
        return []
    if _engine(params.engine) != "numba":
        return [simulate(ds.assign(is_write=("request", w)), policy, capacities, params) for w in ws]
    check_trace(ds, _NAMES[policy], needs=("offset", "size", "is_write"))
    fb = check_capacities(capacities)
    caps = fb // params.page_bytes
    if np.any(caps < 1):
        raise ValueError(f"capacities must hold at least one {params.page_bytes}-byte page; got {capacities!r}")
    if n_req == 0:
        return [simulate(ds.assign(is_write=("request", w)), policy, capacities, params) for w in ws]
    n_ids, n_acc, bounds, chunks = _page_chunks(ds, params.page_bytes)
    kernel = _ALGORITHMS[policy].native_loop
    request_hit = np.zeros((caps.size, n_req), bool)
    counts = [{k: np.zeros(caps.size, np.int64) for k in COUNT_FIELDS} for _ in ws]

    n_alt = len(ws) - 1
    if n_alt > 8:
        raise ValueError(f"writes: at most 9 vectors (one replayed, 8 recounted at once); got {len(ws)}")
    alt_bits = np.zeros(n_req, np.uint8)  # bit a: the request writes under vector a + 1
    for a, w in enumerate(ws[1:]):
        alt_bits |= w.astype(np.uint8) << a

    def run(k):
        state = native_state(int(n_ids))
        dirty = np.zeros(int(n_ids) + 1, np.uint8)  # bit a: dirty under vector a + 1 (a byte per page id)
        wb_alt = np.zeros(n_alt, np.int64)
        for r0, r1 in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            ids, same, local, np_ = chunks(r0, r1)
            w0 = np.repeat(ws[0][r0:r1], np_)
            hit = np.empty((1, ids.size), bool)
            wb = np.empty(ids.size, bool)
            kernel(ids, w0, int(caps[k]), *state, hit[0], wb)
            for name, v in _tally(hit, w0, same, wb[None].sum(axis=1)).items():
                counts[0][name][k] += int(v[0])
            if n_alt:
                _dirty_pass(ids, hit[0], np.repeat(alt_bits[r0:r1], np_), dirty, wb_alt)
            for a, w in enumerate(ws[1:]):
                for name, v in _tally(hit, np.repeat(w[r0:r1], np_), same, np.zeros(1, np.int64)).items():
                    counts[a + 1][name][k] += int(v[0])
            request_hit[k, r0:r1] = np.logical_and.reduceat(hit[0], local)
        if n_alt:  # a page still in T1 or T2 at the end was never evicted after its last access
            _dirty_left(state[2], dirty, wb_alt)
        for a in range(n_alt):
            counts[a + 1]["dirty_evictions"][k] += int(wb_alt[a])

    bar = progress(total=caps.size, desc=f"{policy} cache (numba, {len(ws)} write readings)", unit="size", leave=False)
    with ThreadPoolExecutor(max_workers=min(int(params.threads), caps.size)) as pool:
        for _ in pool.map(run, range(caps.size)):
            bar.update(1)
    bar.close()
    priced = params.cost_model is not None and params.cost_model.io_bytes == params.page_bytes
    out = []
    for c in counts:
        cnt = {"ssd_reads": c["read_hits"] + c["dirty_evictions"], "ssd_writes": c["read_misses"] + c["write_pages"],
               "md_reads": c["read_misses"], "md_writes": c["dirty_evictions"], "dirty_evictions": c["dirty_evictions"],
               "cont_ssd_reads": c["cont_read_hits"],
               "cont_ssd_writes": c["cont_read_misses"] + c["cont_write_pages"],
               "cont_md_reads": c["cont_read_misses"], "cont_md_writes": np.zeros(fb.size, np.int64)}
        out.append(trace_result(fb, policy=_NAMES[policy], source=_SOURCE[policy], requests=n_req,
                                hits=request_hit.sum(axis=1), counts=cnt, io_bytes=params.page_bytes,
                                cost_model=params.cost_model if priced else None, io_pricing=params.io_pricing,
                                extra={"request_hit": (("capacity_bytes", "request"), request_hit)},
                                attrs={"page_bytes": params.page_bytes, "n_page_accesses": n_acc,
                                       "table": "vFRM paper Sec. 5.1, Table 2(a)(b)"}))
    return out


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


def _example():
    from tieringlab.policies.vfrm import example_trace  # noqa: PLC0415  (vfrm imports nothing of this module)

    return (example_trace(), [64 << 10, 1 << 20]), {}


for _policy in POLICIES:
    register(PolicySpec(name=_NAMES[_policy], kind="trace", fn=_trace_fn(_policy), params_type=CachingParams,
                        source=_SOURCE[_policy], example=_example,
                        description="4 KB page cache, write-back, write-allocate"))
