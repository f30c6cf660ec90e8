"""Facebook FlashCache as the OTF-AST paper evaluates it (Table 3: 4 KB blocks, 24 GB, LRU, write-back;
Sec. 4.1: replayed twice; notes Sec. 3.2-3.3), registered as "FlashCache" (pass 1, cold) and "FlashCache
pass 2" (warm: the same window replayed on the cache pass 1 left)."""

from __future__ import annotations

import dataclasses
import threading

import jax
import numpy as np
import xarray as xr

from tieringlab import native
from tieringlab.models.storage import HDD, SSD
from tieringlab.policies.contract import check_capacities
from tieringlab.policies.otf_ast.example import example
from tieringlab.policies.otf_ast.parameters import SOURCE, FlashCacheParams
from tieringlab.policies.otf_ast.replay import replay
from tieringlab.policies.otf_ast.result import pages, result, serve_and_count
from tieringlab.policies.registry import PolicySpec, register
from tieringlab.traces.split import split_arrays

__all__ = ["flashcache", "flashcache_passes"]


@native.jit(nogil=True, cache=False)
def _relabel(keys, table, ids):
    """Dense ids of ``keys`` (int64, >= 0) in order of first appearance, into ``ids`` (int32), through ``table``
    (int32, -1 filled, one entry per possible key); returns how many distinct keys. LRU only compares keys for
    equality, so any one-to-one relabelling gives the same hits as the sorted one of ``np.unique`` (without the
    sort of every access)."""
    u = 0
    for i in range(keys.shape[0]):
        k = keys[i]
        x = table[k]
        if x < 0:
            x = u
            table[k] = x
            u += 1
        ids[i] = x
    return u


@native.jit(nogil=True, cache=False)
def _unlabel(keys, table):
    """Undo :func:`_relabel` on ``table``: every entry ``keys`` touched back to -1 (O(len(keys)), not O(table))."""
    for i in range(keys.shape[0]):
        table[keys[i]] = -1


#: One -1 filled table per thread, kept between calls: a table over every 4 KiB block of a paper-scale LUN is
#: ~300 MB, and filling a fresh one costs more than the relabelling itself (first-touch page faults); each call
#: leaves its table all -1 again through :func:`_unlabel`.
_TABLES = threading.local()


def _dense_ids(keys) -> tuple[np.ndarray, int]:
    """``(ids int32, distinct)``: :func:`_relabel` over a table spanning ``keys.max() + 1`` (the LUN's blocks),
    this thread's table reused when it is large enough."""
    ids = np.empty(keys.size, np.int32)
    if keys.size == 0:
        return ids, 0
    keys = np.ascontiguousarray(keys, np.int64)
    need = int(keys.max()) + 1
    table = getattr(_TABLES, "table", None)
    if table is None or table.size < need:
        table = _TABLES.table = None  # free the old one before allocating the larger one
        table = _TABLES.table = np.full(need, -1, np.int32)
    try:
        return ids, int(_relabel(keys, table, ids))
    finally:
        _unlabel(keys, table)


@native.jit(nogil=True, cache=False)
def _lru_stamp_pass(ids, is_write, cap, g0, last, st, state, hit_out, wb_out):
    """One replay of ``ids`` (access ``t`` at global position ``g0 + t``) through an LRU of ``cap`` blocks kept as
    access stamps instead of a linked list: ``last[x]`` is block ``x``'s latest position (-1: never), ``st[g]`` bit 1
    marks position ``g`` as some resident block's latest access and bit 2 that block's dirty bit. The LRU order is
    the order of the marked positions, so the victim is the first marked position at or after the sweep pointer
    ``state[0]``, and ``x`` is resident iff ``last[x] >= state[0]`` (``state[1]``: resident blocks). The same
    decisions as :func:`tieringlab.policies.lru.native_loop` (tests check), with two scattered memory accesses per
    hit instead of the list's five or six."""
    n = ids.shape[0]
    tail = state[0]
    size = state[1]
    for t in range(n):
        x = ids[t]
        g = g0 + t
        lx = last[x]
        hit = lx >= tail
        wb = False
        d = np.uint8(2) if is_write[t] else np.uint8(0)
        if hit:
            d |= st[lx] & np.uint8(2)
            st[lx] = np.uint8(0)
        elif size >= cap:
            while (st[tail] & np.uint8(1)) == 0:
                tail += 1
            wb = (st[tail] & np.uint8(2)) != 0
            st[tail] = np.uint8(0)
            tail += 1
        else:
            size += 1
        st[g] = d | np.uint8(1)
        last[x] = g
        hit_out[t] = hit
        wb_out[t] = wb
    state[0] = tail
    state[1] = size


def _lru_passes(ids, n_ids: int, is_write, cap: int, passes) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """The block LRU of :func:`tieringlab.policies.lru.native_loop` (the project's engine, as
    ``caching.replay("lru", ...)`` runs it) over ``max(passes)`` back-to-back replays of ``ids``, the state carried
    over (the replay of ``np.tile(ids, max(passes))`` without the copy): ``{P: (hit, dirty_eviction)}`` of pass
    ``P`` for each ``P`` in ``passes``. Computed by :func:`_lru_stamp_pass` (the same hits and dirty evictions, about
    twice as fast on a paper-scale window whose blocks do not fit the CPU caches)."""
    P = max(passes)
    n = ids.size
    last = np.full(int(n_ids) + 1, -1, np.int64 if P * n >= 2**31 else np.int32)
    st = np.zeros(P * n + 1, np.uint8)
    state = np.zeros(2, np.int64)
    w = np.ascontiguousarray(is_write, np.bool_)
    out = {}
    for q in range(1, P + 1):
        hit = np.zeros(n, bool)
        wb = np.zeros(n, bool)
        _lru_stamp_pass(ids, w, int(cap), (q - 1) * n, last, st, state, hit, wb)
        if q in passes:
            out[q] = (hit, wb)
    return out


@native.jit(nogil=True, cache=False)
def _cleaning_writes(ev, victim, nw, wpos, ridx, ci, t, keys, B, merge, out_t, out_off, out_len):
    """FlashCache's cleaning writes to the HDD, in one pass over the dirty set's evictions: eviction ``j`` happens
    at write ``ev[j]`` of the passes' write stream (``nw`` writes per pass, write ``w`` of a pass is block
    ``wpos[w]`` of the replay, of cacheable request ``ridx[...]``, request ``ci[...]`` of the replay, at time ``t``)
    and cleans the block written at ``victim[j]`` (none if negative: nothing written that early). Cleaned blocks
    contiguous with the one cleaned before merge into one write, at most ``merge`` blocks each: the write starts
    at its first block's eviction. Fills ``out_t, out_off, out_len`` (s, bytes, bytes); returns how many."""
    m = 0
    prev = np.int64(-1)
    pos = 0
    first = True
    for j in range(ev.shape[0]):
        v = victim[j]
        if v < 0:
            continue
        off = keys[wpos[v % nw]] * B
        if first or off != prev + B:
            pos = 0
        else:
            pos += 1
        first = False
        prev = off
        if pos % merge == 0:
            out_t[m] = t[ci[ridx[wpos[ev[j] % nw]]]]
            out_off[m] = off
            out_len[m] = B
            m += 1
        else:
            out_len[m - 1] += B
    return m


@native.jit(nogil=True, cache=False)
def _per_set_lru(sets, wids, n_sets, d_set, n_ids, hit_out, victim_at):
    """The per-set dirty LRUs of :func:`_per_set_dirty` in one pass: the writes grouped by set (a counting sort,
    stable: each set's writes in time order), then an LRU of ``d_set`` blocks per set kept as access stamps (as
    :func:`_lru_stamp_pass`, one sweep pointer per set's group). ``hit_out[i]``: write ``i`` hits its set's dirty
    blocks; ``victim_at[i]``: the write ``d_set`` writes of the same set before write ``i`` when ``i`` forces a
    cleaning (its set's LRU full), else -1."""
    n = sets.shape[0]
    start = np.zeros(n_sets + 1, np.int64)
    for i in range(n):
        start[sets[i] + 1] += 1
    for s in range(n_sets):
        start[s + 1] += start[s]
    fill = start[:n_sets].copy()
    order = np.empty(n, np.int64)
    for i in range(n):
        s = sets[i]
        order[fill[s]] = i
        fill[s] += 1
    last = np.full(n_ids, -1, np.int64)
    live = np.zeros(n, np.uint8)
    for s in range(n_sets):
        tail = start[s]
        size = 0
        for g in range(start[s], start[s + 1]):
            i = order[g]
            x = wids[i]
            lx = last[x]
            hit = lx >= tail
            victim_at[i] = -1
            if hit:
                live[lx] = 0
            elif size >= d_set:
                while live[tail] == 0:
                    tail += 1
                live[tail] = 0
                tail += 1
                victim_at[i] = order[g - d_set]
            else:
                size += 1
            live[g] = 1
            last[x] = g
            hit_out[i] = hit


def _per_set_dirty(wkeys, cap_blocks: int, p: FlashCacheParams, wids=None, n_ids: int | None = None):
    """Per-set cleaning (reading ``cleaning="per_set"``, notes Sec. 3.2): block ``b`` is in set ``(b // ways) mod
    n_sets`` (FlashCache maps ``ways`` consecutive blocks to a set), ``n_sets = cap_blocks // ways``; each set keeps
    at most ``ways x dirty_thresh_pct`` dirty blocks, its least recently written cleaned first. Over the write
    stream ``wkeys``: whether each write hits its set's dirty blocks, and the cleaning events (write-stream index of
    the write that forces one, and of the write whose block is cleaned: the write that many writes of the same set
    earlier, the global rule's choice applied per set, C). ``wids``: the blocks' dense ids (``n_ids`` of them), if
    the caller has them (:func:`_dense_ids`). One compiled pass (:func:`_per_set_lru`): the same events as the
    stack distances of the writes grouped by set (tests check against a brute-force LRU per set)."""
    ways = min(int(p.set_ways), int(cap_blocks))
    n_sets = max(1, int(cap_blocks) // ways)
    d_set = max(1, int(ways * p.dirty_thresh_pct / 100.0))
    wkeys = np.asarray(wkeys, np.int64)
    sets = np.ascontiguousarray((wkeys // ways) % n_sets)
    if wids is None:
        wids, n_ids = _dense_ids(wkeys)
    whit = np.zeros(wkeys.size, bool)
    victim_at = np.empty(wkeys.size, np.int64)
    _per_set_lru(sets, np.ascontiguousarray(wids, np.int32), n_sets, d_set, max(int(n_ids), 1), whit, victim_at)
    ev = np.flatnonzero(victim_at >= 0)
    return whit, ev, victim_at[ev]


def flashcache(ds: xr.Dataset, capacities, params: FlashCacheParams | None = None, key=None) -> xr.Dataset:
    """FlashCache (Table 3; notes Sec. 3.2-3.3): a 4 KB-block LRU write-back cache, pass ``pass_number``.

    - **Cacheable** IOs are block-aligned whole blocks; others go straight to the HDD (FlashCache's
      uncached path; the invalidation of overlapping cached blocks is left out, C).
    - The block LRU is the project's engine (:func:`tieringlab.policies.lru.native_loop`, as
      :func:`tieringlab.policies.caching.replay` runs it); pass ``P`` is the last of ``P`` back-to-back replays of
      the window (the cache state carries over; the disks' queues start empty).
    - A request is a **hit** (an SSD access of Table 4) when all its blocks hit. Reads that miss go to
      the HDD (the fill is an SSD write in the background); writes go to the SSD (write-back,
      write-allocate) with a synchronous metadata write.
    - **Cleaning**: dirty blocks are kept to ``dirty_thresh_pct`` of the cache, the least recently written
      cleaned first (FlashCache cleans per set in LRU order; one global set here, C). The dirty set is then
      the LRU of the write stream at ``dirty_thresh_pct`` x capacity blocks (the same engine on the writes):
      a write that hits it is a **dirty write hit** (Table 4), an eviction from it is a cleaning write to
      the HDD (address: the write that many write-blocks earlier, C); contiguous blocks cleaned one after
      another merge into one write of at most ``clean_merge_bytes``.
    """
    p = FlashCacheParams() if params is None else params
    P = int(p.pass_number)
    return flashcache_passes(ds, capacities, p, key, passes=(P,))[P]


def flashcache_passes(ds: xr.Dataset, capacities, params: FlashCacheParams | None = None, key=None, *,
                      passes=(1, 2)) -> dict[int, xr.Dataset]:
    """:func:`flashcache` for each pass number in ``passes`` at once: ``{P: the result of pass_number=P}`` (each
    identical to its own call, attrs included), the block LRU replayed once up to the last pass (the
    experiment's "FlashCache" and "FlashCache pass 2" share their first pass). ``params.pass_number`` is
    ignored."""
    p = FlashCacheParams() if params is None else params
    key = jax.random.key(0) if key is None else key
    passes = sorted({int(q) for q in passes})
    if not passes or passes[0] < 1:
        raise ValueError(f"passes must be pass numbers >= 1; got {passes!r}")
    caps = check_capacities(capacities)
    lun = int(p.lun_subluns) * int(p.sublun_bytes)
    if np.any(caps > lun):
        raise ValueError(f"capacities: a cache of {int(caps.max())} bytes is larger than the LUN ({lun} bytes)")
    rq = replay(ds, p)
    B = int(p.block_bytes)
    off, sz, w, t = rq["offset"], rq["size"], rq["is_write"], rq["time"]
    n = t.size
    cacheable = (off % B == 0) & (sz % B == 0) & (sz > 0)
    ci = np.flatnonzero(cacheable)

    keys, ridx = split_arrays(off[ci], sz[ci], B)
    wk = w[ci][ridx]
    wpos = np.flatnonzero(wk)                     # the write stream (one pass; pass q's is wpos + q x keys.size)
    nw = wpos.size
    ids, n_ids = _dense_ids(keys)
    wids = np.ascontiguousarray(ids[wpos])
    blocks_per_req = np.bincount(ridx, minlength=ci.size)
    starts = np.cumsum(blocks_per_req) - blocks_per_req
    per = {P: [] for P in passes}
    for c in caps:   # a handful of cache sizes
        cap_blocks = int(c) // B
        if cap_blocks > 0:
            main = _lru_passes(ids, n_ids, wk, cap_blocks, passes)
            if p.cleaning == "global":
                d_cap = max(1, int(cap_blocks * p.dirty_thresh_pct / 100.0))
                wlru = _lru_passes(wids, n_ids, np.ones(nw, bool), d_cap, passes)
        for P in passes:
            if cap_blocks == 0:
                hit_pg = np.zeros(keys.size, bool)
                dirty_pg = np.zeros(keys.size, bool)
                n_dirty_ev = 0
                clean_t = np.zeros(0)
                clean_off = clean_len = np.zeros(0, np.int64)
            else:
                hit_pg, dev = main[P]
                n_dirty_ev = int(dev.sum())
                # the write stream of the P passes, indexed 0 .. P x nw - 1; ev: its evictions in the last pass
                if p.cleaning == "global":
                    whit, wev = wlru[P]
                    # cleaning writes: at each write-stream eviction, the block written d_cap writes before
                    ev = np.flatnonzero(wev) + (P - 1) * nw
                    victim = ev - d_cap
                else:
                    keys_all = np.tile(keys, P)
                    wpos_all = (np.arange(P)[:, None] * keys.size + wpos[None, :]).ravel()
                    whit_all, ev, victim = _per_set_dirty(keys_all[wpos_all], cap_blocks, p, np.tile(wids, P), n_ids)
                    whit = whit_all[(P - 1) * nw:]
                    last_ev = ev >= (P - 1) * nw
                    ev, victim = ev[last_ev], victim[last_ev]
                dirty_all = np.zeros(keys.size, bool)
                dirty_all[wpos] = whit
                dirty_pg = dirty_all & hit_pg & wk
                # contiguous dirty blocks cleaned one after the other merge into one write (FlashCache's
                # cleaner does), up to clean_merge_bytes
                clean_t = np.empty(ev.size, np.float64)
                clean_off = np.empty(ev.size, np.int64)
                clean_len = np.empty(ev.size, np.int64)
                m = _cleaning_writes(np.ascontiguousarray(ev, np.int64), np.ascontiguousarray(victim, np.int64),
                                     max(nw, 1), wpos, ridx, ci, np.ascontiguousarray(t, np.float64), keys, B,
                                     max(1, int(p.clean_merge_bytes) // B), clean_t, clean_off, clean_len)
                clean_t, clean_off, clean_len = clean_t[:m], clean_off[:m], clean_len[:m]
            r_hit = np.zeros(n, bool)
            r_dirty = np.zeros(n, bool)
            if keys.size:
                r_hit[ci] = np.logical_and.reduceat(hit_pg, starts)
                r_dirty[ci] = np.logical_and.reduceat(dirty_pg, starts) & w[ci]
            route = np.where(cacheable & (r_hit | w), SSD, HDD).astype(np.int64)
            fill = cacheable & ~w & ~r_hit                       # read misses fill the cache (background SSD writes)
            bg_ssd = dict(time=t[fill], size=sz[fill], is_write=np.ones(int(fill.sum()), bool))
            bg_hdd = dict(time=clean_t, offset=clean_off, size=clean_len, is_write=np.ones(clean_t.size, bool))
            extra = np.where(w & (route == SSD), int(p.metadata_bytes), 0)
            d, out = serve_and_count(p, key, rq, route, bg_hdd=bg_hdd, bg_ssd=bg_ssd, ssd_extra=extra)
            d.update(hits=int(r_hit.sum()), dirty_write_hits=int(r_dirty.sum()),
                     dirty_write_hit_ratio=float(r_dirty.sum()) / max(n, 1), dirty_evictions=n_dirty_ev,
                     cleaning_writes=int(clean_t.size), uncacheable=int((~cacheable).sum()))
            d["ssd_writes"] += int(pages(sz[fill]).sum())
            d["md_writes"] += int(pages(clean_len).sum()) if clean_len.size else 0
            d["hdd_util_per_s"] = out["hdd_util"]
            d["request_hit"] = r_hit
            per[P].append(d)
    out = {}
    for P in passes:
        name = "FlashCache" if P == 1 else f"FlashCache pass {P}"
        res = result(name, dataclasses.replace(p, pass_number=P), caps, rq, per[P],
                     extra_dims={"hdd_util_per_s": (("second",), lambda d: d["hdd_util_per_s"]),
                                 "request_hit": (("replay_request",), lambda d: d["request_hit"])})
        res["request_hit"].attrs["long_name"] = "all the request's 4 KB blocks were in the cache (Table 4 SSD access)"
        out[P] = res
    return out



register(PolicySpec(name="FlashCache", kind="trace", fn=flashcache, params_type=FlashCacheParams,
                    source=SOURCE + "; Table 3, ref. [1]", fixed={"pass_number": 1}, random=True,
                    example=example(FlashCacheParams, {"pass_number": 1}),
                    aliases=("FlashCache pass 1",), description="4 KB LRU write-back cache, cold (first pass)"))
register(PolicySpec(name="FlashCache pass 2", kind="trace", fn=flashcache, params_type=FlashCacheParams,
                    source=SOURCE + "; Table 3-5 (second run)", fixed={"pass_number": 2}, random=True,
                    example=example(FlashCacheParams, {"pass_number": 2}),
                    aliases=("FlashCache warm",), description="4 KB LRU write-back cache, warm (second pass)"))
