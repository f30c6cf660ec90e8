"""LRU page cache (the vFRM paper's first baseline, Sec. 5.1): one list T1, MRU at its head.

A hit moves the page to the MRU end; a miss admits it there, evicting the LRU page when the cache
holds ``c`` pages; a write marks the page dirty, and evicting a dirty page writes it back (vFRM
Table 2(b)). Two engines on the shared lists of :mod:`tieringlab.policies._arraylist`
(:func:`jax_step`, :func:`native_loop`), and the scan-free :func:`lru_counts` from exact stack
distances (LRU is a stack algorithm, Mattson et al. 1970). Trace mode and the registry entry "LRU"
are in :mod:`tieringlab.policies.caching`.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from tieringlab.models.stackdist import stack_distances
from tieringlab.policies._arraylist import DIRTY, LIST, META, T1, admit, dirty, native_kernel, remove, unit_capacities

__all__ = ["jax_step", "native_loop", "lru_counts"]


def jax_step(S, x, w, c):
    """One access of page id ``x`` (a write if ``w``) to the ``c``-page LRU held by list state ``S``
    (:class:`tieringlab.policies._arraylist.Cache`, JAX engine): a hit moves x to the MRU end, a miss
    evicts the LRU page when full (written back iff dirty) and admits x."""
    px, nx, mx = S.row(x)
    v = S.tail(T1)
    pv, _, mv = S.row(v)
    hit = (mx & LIST) == T1
    ev = (~hit) & (S.size(T1) >= c)
    wb = ev & dirty(mv)
    S.remove(x, T1, px, nx, hit)
    S.remove(v, T1, pv, S.nil, ev)
    S.wr(S.at(v, ev), META, 0)
    S.push(x, T1, True)
    S.wr(x, META, T1 | (mx & DIRTY) | jnp.where(w, DIRTY, 0))
    S.output(hit, wb)
    return S


@native_kernel
def native_loop(ids, is_write, c, prev, nxt, meta, head, tail, size, p_state, hit_out, wb_out):
    """LRU, one list T1 (the same decisions as :func:`jax_step`)."""
    nil = prev.size - 1
    for t in range(ids.size):
        x = ids[t]
        mx = meta[x]
        hit = (mx & LIST) == T1
        wb = False
        if hit:
            remove(x, T1, prev, nxt, head, tail, size, nil)
        elif size[T1] >= c:
            v = tail[T1]
            wb = (meta[v] & DIRTY) != 0
            remove(v, T1, prev, nxt, head, tail, size, nil)
            meta[v] = 0
        admit(x, T1, mx, DIRTY if is_write[t] else 0, prev, nxt, meta, head, tail, size, nil)
        hit_out[t] = hit
        wb_out[t] = wb


def lru_counts(keys, capacities, is_write=None) -> tuple[np.ndarray, np.ndarray]:
    """LRU without a scan: ``(hit, n_dirty_evictions)`` from exact stack distances (Mattson et al.).

    ``hit[k, t]`` = stack distance of access ``t`` < ``capacities[k]``
    (:func:`tieringlab.models.stackdist.stack_distances`). A residency of a page (from the miss that
    admits it to its last access before it leaves) ends by eviction iff the page's next access misses,
    or, after its last access in the trace, iff at least ``c`` distinct other pages follow it; it
    writes back iff a write falls inside it. Same results as ``caching.replay("lru", ...)``.
    """
    keys = np.asarray(keys)
    caps = unit_capacities(capacities, "capacities")
    w = np.zeros(keys.shape, bool) if is_write is None else np.asarray(is_write, bool)
    if keys.size == 0:
        return np.zeros((caps.size, 0), bool), np.zeros(caps.size, np.int64)
    sd = np.asarray(stack_distances(keys))
    hit = sd[None, :] < caps[:, None]
    uniq, ids = np.unique(keys, return_inverse=True)
    order = np.argsort(ids, kind="stable")  # accesses grouped by page, in time order
    sid = ids[order]
    last_of_page = np.r_[sid[1:] != sid[:-1], True]
    # distinct pages accessed after a page's last access = pages whose last access comes later
    last_idx = order[last_of_page]  # one per page, in page order
    after = uniq.size - 1 - np.argsort(np.argsort(last_idx))
    wo = w[order]
    n_wb = np.zeros(caps.size, np.int64)
    for k, c in enumerate(caps):  # a handful of sizes; whole-array work each
        miss = ~hit[k][order]
        seg = np.cumsum(miss) - 1  # the first access of a page is always a miss
        seg_dirty = np.bincount(seg, weights=wo, minlength=seg[-1] + 1) > 0
        nxt_miss = np.r_[miss[1:], True]
        ends = np.r_[seg[1:] != seg[:-1], True]
        evicted = np.where(last_of_page, False, nxt_miss)
        evicted[last_of_page] = after >= c
        n_wb[k] = int((seg_dirty[seg[ends & evicted]]).sum())
    return hit, n_wb
