"""LRU, ARC and CAR page caches: the conventional baselines of the vFRM paper (Sec. 5, Table 2).

The vFRM paper (Tai et al., Sec. 5) treats Flash as a second-level cache with a 4 KB cache line and
compares vFRM against LRU, ARC (Megiddo & Modha, FAST'03) and CAR (Bansal & Modha, FAST'04). This
module replays a block trace through those three policies, page by page:

* a request touching pages ``offset // 4096 .. (offset + size - 1) // 4096`` accesses each page in
  ascending order; the request is a **Flash hit only if all its pages hit** (vFRM Sec. 5.1, "IO hit
  ratio");
* every page access is counted as one 4 KB operation of vFRM **Table 2(a)**: read hit -> SSD read;
  read miss -> MD read + SSD write (the page is admitted); write hit or miss -> SSD write (write-back,
  write-allocate: the page is admitted dirty, nothing is written to the MD yet);
* **Table 2(b)**: evicting a dirty page from Flash costs SSD read + MD write. A page becomes dirty when
  written and clean again when written back at its eviction. Pages still dirty at the end of the
  trace are not flushed (a documented choice: the trace ends, the cache keeps running).

Two entry points:

* :func:`hits` — plain mode on unit-size integer keys, the mode libcachesim's ``LRU``/``ARC`` run in
  with ``obj_size=1`` and ``cache_size=capacity``: one boolean per access.
* :func:`simulate` — the trace mode above, for several Flash sizes in one call; returns an
  :class:`xarray.Dataset` over ``flash_bytes`` with hits and the four operation counts of Eq. 4.

Implementation. ARC and CAR are sequential by nature: each is one jitted :func:`jax.lax.scan` over
the page accesses whose carry is O(1)-per-step array state (keys remapped to dense ids ``0..U-1``;
per-id list membership, doubly-linked-list ``prev``/``next`` arrays for T1/T2/B1/B2, reference bits
for CAR's clocks, dirty bits), updated with ``.at[].set`` and run once per capacity. LRU uses
the same machinery with one list (:func:`replay`), and :func:`simulate` computes it without a
scan from exact stack distances (:func:`lru_counts`). No Python loop runs per request.

ARC framing. The adaptation step is the paper's: ``p <- min(p + max(|B2|/|B1|, 1), c)`` on a B1 hit and
``p <- max(p - max(|B1|/|B2|, 1), 0)`` on a B2 hit, with a real-valued ``p``. libcachesim 0.3.5 (the
oracle of the tests) behaves the same way; an integer ``p`` with floor division (as in some libCacheSim
source versions) gives different hits on about a quarter of small random traces. Only ``|T1| + |T2| <= c``
pages hold data; the ghost lists B1, B2 hold ids and do not count against the capacity, as in the
paper. CAR follows the pseudo-code of the CAR paper (Fig. 2) literally, also with a real-valued ``p``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import xarray as xr

from tieringlab.policies.iocost import CACHE_COST, io_cost

__all__ = ["POLICIES", "PAGE_BYTES", "CachingParams", "hits", "lru_counts", "page_accesses", "simulate", "replay"]

#: The policies this module implements.
POLICIES = ("lru", "arc", "car")

#: 4 KB cache line of the conventional caches (vFRM paper Sec. 5.1: "4KB and 128KB" basic IO sizes).
PAGE_BYTES = 4096


@dataclass(frozen=True)
class CachingParams:
    """Parameters of the conventional page caches (vFRM paper Sec. 5.1)."""

    page_bytes: int = PAGE_BYTES  # 4 KB cache line, vFRM Sec. 5.1 and Table 2


# --------------------------------------------------------------------------------------------------
# Array-state linked lists, one transaction per access
# --------------------------------------------------------------------------------------------------
# List ids: 0 = in no list, 1 = T1, 2 = T2, 3 = B1, 4 = B2. Each list is doubly linked with its head
# at the MRU end and its tail at the LRU end. The whole state is ONE flat int64 array: per-id fields
# (id i, field f at i * 5 + f) for U + 1 ids — id NIL = U is a scratch slot absorbing the writes of
# disabled operations (a disabled operation is the same code with x = NIL) — then the heads, tails
# and sizes of the five lists, CAR/ARC's target p (float64 bits) and two output slots.
#
# Why one array and one scatter per access: XLA updates a loop-carried array in place only when no
# value read from its old version is used after the update. A step therefore reads the old array
# only, keeps its writes pending (later reads see them: store forwarding), commits them with one
# multi-index scatter, and its outputs are read back from the new array. Otherwise XLA copies the
# whole array every step (O(U) per access).
_T1, _T2, _B1, _B2 = 1, 2, 3, 4
_WHERE, _PREV, _NEXT, _DIRTY, _REF = 0, 1, 2, 3, 4
_NF = 5
_IB = "promise_in_bounds"


def _layout(n_ids: int) -> dict:
    base = (n_ids + 1) * _NF
    return dict(nil=n_ids, head=base, tail=base + 5, size=base + 10, p=base + 15, hit=base + 16,
                wb=base + 17, flag=base + 18, full=base + 19, n=base + 20)


class _Tx:
    """Pending writes to the state array for one access (or one move of CAR's clock hand)."""

    def __init__(self, a, n_ids):
        self.a = a
        self.L = _layout(n_ids)
        self.nil = n_ids
        self.idx: list = []
        self.val: list = []

    def rd(self, k):
        k = jnp.asarray(k).astype(jnp.int32)
        v = self.a.at[k].get(mode=_IB)
        for j, w in zip(self.idx, self.val):
            v = jnp.where(k == j, w, v)
        return v

    def wr(self, k, v):
        self.idx.append(jnp.asarray(k).astype(jnp.int32))
        self.val.append(jnp.asarray(v).astype(jnp.int64))

    def get(self, i, f):
        return self.rd(i * _NF + f)

    def set(self, i, f, v):
        self.wr(i * _NF + f, v)

    def head(self, lst):
        return self.rd(self.L["head"] + lst)

    def tail(self, lst):
        return self.rd(self.L["tail"] + lst)

    def size(self, lst):
        return self.rd(self.L["size"] + lst)

    @property
    def p(self):
        return jax.lax.bitcast_convert_type(self.rd(self.L["p"]), jnp.float64)

    @p.setter
    def p(self, value):
        self.wr(self.L["p"], jax.lax.bitcast_convert_type(jnp.asarray(value, jnp.float64), jnp.int64))

    def commit(self):
        k = jnp.stack(self.idx)
        later = jnp.triu(k[:, None] == k[None, :], 1).any(axis=1)  # the last write wins
        k = jnp.where(later, self.nil * _NF + _NF - 1, k)  # earlier duplicates -> scratch field
        return self.a.at[k].set(jnp.stack(self.val), mode=_IB)

    def remove(self, x, en):
        """Unlink ``x`` from the list it is in (no-op when ``en`` is False)."""
        nil, L = self.nil, self.L
        x = jnp.where(en, x, nil)
        lst = jnp.where(en, self.get(x, _WHERE), 0)
        p = jnp.where(en, self.get(x, _PREV), nil)
        n = jnp.where(en, self.get(x, _NEXT), nil)
        hd = jnp.where(p == nil, n, self.head(lst))
        tl = jnp.where(n == nil, p, self.tail(lst))
        sz = self.size(lst) - 1
        self.set(p, _NEXT, n)
        self.set(n, _PREV, p)
        self.wr(L["head"] + lst, hd)
        self.wr(L["tail"] + lst, tl)
        self.wr(L["size"] + lst, sz)
        self.set(x, _WHERE, 0)
        self.set(x, _PREV, nil)
        self.set(x, _NEXT, nil)

    def push_mru(self, x, lst, en):
        """Insert ``x`` (in no list) at the MRU end of list ``lst`` (no-op when ``en`` is False)."""
        nil, L = self.nil, self.L
        x = jnp.where(en, x, nil)
        lst = jnp.where(en, lst, 0)
        h = jnp.where(en, self.head(lst), nil)
        tl = jnp.where(h == nil, x, self.tail(lst))
        sz = self.size(lst) + 1
        self.set(x, _NEXT, h)
        self.set(x, _PREV, nil)
        self.set(h, _PREV, x)
        self.set(x, _WHERE, lst)
        self.wr(L["tail"] + lst, tl)
        self.wr(L["head"] + lst, x)
        self.wr(L["size"] + lst, sz)

    def evict_data(self, v, en):
        """The data of page ``v`` leaves Flash; returns whether it was dirty (a write-back, Table 2(b))."""
        v = jnp.where(en, v, self.nil)
        was_dirty = en & (self.get(v, _DIRTY) != 0)
        self.set(v, _DIRTY, 0)
        return was_dirty

    def touch(self, x, w):
        """A write marks page ``x`` dirty (write-back cache)."""
        self.set(x, _DIRTY, self.get(x, _DIRTY) | w.astype(jnp.int64))


def _init_state(n_ids: int):
    L = _layout(n_ids)
    nil = n_ids
    node = jnp.zeros((n_ids + 1, _NF), jnp.int64).at[:, _PREV].set(nil).at[:, _NEXT].set(nil)
    meta = jnp.zeros(L["n"] - L["head"], jnp.int64).at[:10].set(nil)
    return jnp.concatenate([node.reshape(-1), meta])


def _outputs(a, n_ids):
    L = _layout(n_ids)
    return a[L["hit"]] != 0, a[L["wb"]] != 0


# --------------------------------------------------------------------------------------------------
# One access of each policy: (state, id, is_write, capacity c) -> new state (hit, write-back inside)
# --------------------------------------------------------------------------------------------------
def _lru_step(a, x, w, c, n_ids):
    t = _Tx(a, n_ids)
    lst = t.get(x, _WHERE)
    hit = lst == _T1
    evict = (~hit) & (t.size(_T1) >= c)
    v = t.tail(_T1)
    wb = t.evict_data(v, evict)
    t.remove(v, evict)
    t.remove(x, hit)
    t.push_mru(x, _T1, True)
    t.touch(x, w)
    t.wr(t.L["hit"], hit)
    t.wr(t.L["wb"], wb)
    return t.commit()


def _arc_step(a, x, w, c, n_ids):
    """ARC (Megiddo & Modha, FAST'03, Fig. 4) with a real-valued target ``p``.

    Case I (x in T1 ∪ T2): hit, move x to MRU of T2. Case II/III (x in B1/B2): adapt p, REPLACE,
    move x to MRU of T2. Case IV (x new), cache full: A) |T1|+|B1| = c: if |T1| < c delete LRU of B1
    and REPLACE, else delete LRU of T1; B) otherwise, if |T1|+|T2|+|B1|+|B2| = 2c delete LRU of B2,
    then REPLACE; x goes to MRU of T1.
    """
    t = _Tx(a, n_ids)
    lst = t.get(x, _WHERE)
    s1, s2, b1, b2 = t.size(_T1), t.size(_T2), t.size(_B1), t.size(_B2)
    hit = (lst == _T1) | (lst == _T2)
    in_b1, in_b2 = lst == _B1, lst == _B2
    fresh = lst == 0
    # adaptation (Fig. 4 cases II/III): delta1 = max(|B2|/|B1|, 1), delta2 = max(|B1|/|B2|, 1), real p
    d1 = jnp.maximum(b2.astype(jnp.float64) / jnp.maximum(b1, 1), 1.0)
    d2 = jnp.maximum(b1.astype(jnp.float64) / jnp.maximum(b2, 1), 1.0)
    p = t.p
    p = jnp.where(in_b1, jnp.minimum(p + d1, c), jnp.where(in_b2, jnp.maximum(p - d2, 0), p))
    full = fresh & (s1 + s2 >= c)
    case_a = full & (s1 + b1 >= c)
    del_b1 = case_a & (s1 < c)
    del_t1 = case_a & (s1 >= c)
    del_b2 = full & (~case_a) & (s1 + s2 + b1 + b2 >= 2 * c)
    replace = in_b1 | in_b2 | del_b1 | (full & ~case_a)
    # delete the LRU ghost of B1 or B2 (directory replacement)
    g = jnp.where(del_b1, t.tail(_B1), t.tail(_B2))
    t.remove(g, del_b1 | del_b2)
    # REPLACE(x, p): LRU of T1 to MRU of B1 if |T1| > p or (x in B2 and |T1| = p), else T2 -> B2
    from_t1 = (s1 > 0) & ((s1 > p) | ((s1 == p) & in_b2))
    v = jnp.where(del_t1 | from_t1, t.tail(_T1), t.tail(_T2))
    ev = del_t1 | replace
    wb = t.evict_data(v, ev)
    t.remove(v, ev)
    t.push_mru(v, jnp.where(from_t1, _B1, _B2), replace)
    # x to MRU of T2 (hit or ghost hit) or of T1 (new)
    t.remove(x, ~fresh)
    t.push_mru(x, jnp.where(fresh, _T1, _T2), True)
    t.p = p
    t.touch(x, w)
    t.wr(t.L["hit"], hit)
    t.wr(t.L["wb"], wb)
    return t.commit()


def _car_step(a, x, w, c, n_ids):
    """CAR (Bansal & Modha, FAST'04, Fig. 2): lines 1-21 around replace() (lines 22-39).

    A clock's head (the hand) is the LRU end of its list here; "the tail of a clock" is the MRU end.
    """
    L = _layout(n_ids)
    # phase 0: hit? cache full? (flag slot: 1 while replace() has not found its victim)
    t = _Tx(a, n_ids)
    lst = t.get(x, _WHERE)
    hit = (lst == _T1) | (lst == _T2)
    full = (~hit) & (t.size(_T1) + t.size(_T2) >= c)
    t.wr(L["hit"], hit)
    t.wr(L["wb"], 0)
    t.wr(L["flag"], full)
    t.wr(L["full"], full)  # remembers "full" across the loop
    a = t.commit()

    def body(a):  # one move of the clock hand, lines 25-39
        t = _Tx(a, n_ids)
        use_t1 = t.size(_T1) >= jnp.maximum(1.0, t.p)  # line 25
        lst = jnp.where(use_t1, _T1, _T2)
        h = t.tail(lst)
        r = t.get(h, _REF) != 0
        found = ~r
        wb = t.evict_data(h, found)  # lines 27-28 / 34-35: demote to MRU of B1 / B2
        t.set(h, _REF, 0)  # lines 30 / 37: reset the bit, move to the tail of T2
        t.remove(h, True)
        t.push_mru(h, jnp.where(r, _T2, lst + 2), True)
        t.wr(L["wb"], wb)
        t.wr(L["flag"], r)
        return t.commit()

    a = jax.lax.while_loop(lambda a: a[L["flag"]] != 0, body, a)
    t = _Tx(a, n_ids)
    full = t.rd(L["full"]) != 0
    hit = t.rd(L["hit"]) != 0
    lst = t.get(x, _WHERE)  # replace() does not touch x: x is not in T1 ∪ T2 when it runs
    in_b1, in_b2 = lst == _B1, lst == _B2
    in_b = in_b1 | in_b2
    s1, s2, b1, b2 = t.size(_T1), t.size(_T2), t.size(_B1), t.size(_B2)
    del_b1 = full & (~in_b) & (s1 + b1 == c)  # lines 6-7
    del_b2 = full & (~in_b) & (~del_b1) & (s1 + s2 + b1 + b2 == 2 * c)  # lines 8-9
    g = jnp.where(del_b1, t.tail(_B1), t.tail(_B2))
    t.remove(g, del_b1 | del_b2)
    b1, b2 = t.size(_B1).astype(jnp.float64), t.size(_B2).astype(jnp.float64)
    p = t.p
    p = jnp.where(in_b1, jnp.minimum(p + jnp.maximum(1.0, b2 / jnp.maximum(b1, 1.0)), c), p)  # line 15
    p = jnp.where(in_b2, jnp.maximum(p - jnp.maximum(1.0, b1 / jnp.maximum(b2, 1.0)), 0.0), p)  # line 18
    t.p = p
    t.remove(x, in_b)
    t.push_mru(x, jnp.where(in_b, _T2, _T1), ~hit)  # lines 13, 16, 19
    t.set(x, _REF, hit)  # line 2 (hit) / bit 0 on insertion
    t.touch(x, w)
    return t.commit()


_STEPS = {"lru": _lru_step, "arc": _arc_step, "car": _car_step}


@partial(jax.jit, static_argnames=("policy", "n_ids"))
def _run(policy: str, n_ids: int, ids, is_write, capacity):
    """One jitted scan over the accesses for one capacity (traced: sizes share one compilation).

    Capacities are looped over in Python rather than vmapped: on CPU, batching the scatters (and
    CAR's inner while loop) costs 2-4x per access, more than the loop over a handful of sizes.
    """
    step = _STEPS[policy]

    def body(a, xw):
        a = step(a, xw[0].astype(jnp.int64), xw[1], capacity, n_ids)
        return a, _outputs(a, n_ids)

    _, out = jax.lax.scan(body, _init_state(n_ids), (ids, is_write))
    return out


def _check_policy(policy: str) -> str:
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(map(repr, POLICIES))}; got {policy!r}")
    return policy


def _capacities(capacity, name: str = "capacity") -> np.ndarray:
    caps = np.atleast_1d(np.asarray(capacity))
    if caps.ndim != 1 or not np.issubdtype(caps.dtype, np.integer) and not np.all(caps == np.floor(caps)):
        raise ValueError(f"{name} must be an integer number of units (or a 1-D array of them); got {capacity!r}")
    caps = caps.astype(np.int64)
    if np.any(caps < 1):
        raise ValueError(f"{name} must be >= 1 unit; got {capacity!r}")
    return caps


def replay(policy: str, keys, capacities, is_write=None) -> tuple[np.ndarray, np.ndarray]:
    """Replay unit-size ``keys`` through ``policy`` for each capacity (in units).

    Returns ``(hit, dirty_eviction)``, both bool arrays of shape ``(len(capacities), len(keys))``:
    whether access ``t`` hit, and whether serving it wrote a dirty page back to the MD (Table 2(b)).
    ``is_write`` (bool per access) marks pages dirty; default all reads.
    """
    _check_policy(policy)
    keys = np.asarray(keys)
    if keys.ndim != 1 or not np.issubdtype(keys.dtype, np.integer):
        raise ValueError(f"keys must be a 1-D integer array; got shape {keys.shape} dtype {keys.dtype}")
    caps = _capacities(capacities, "capacities")
    if is_write is None:
        is_write = np.zeros(keys.shape, bool)
    is_write = np.asarray(is_write, bool)
    if is_write.shape != keys.shape:
        raise ValueError(f"is_write must have the shape of keys {keys.shape}; got {is_write.shape}")
    if keys.size == 0:
        empty = np.zeros((caps.size, 0), bool)
        return empty, empty.copy()
    uniq, ids = np.unique(keys, return_inverse=True)
    # Shapes are padded to powers of two so that traces of similar sizes share one compilation: the
    # padding accesses (one extra id) come after every real access and cannot change its outcome.
    n, u = keys.size, uniq.size
    n_pad, u_pad = _bucket(n), _bucket(u + 1)
    ids_p = np.full(n_pad, u, np.int64)
    ids_p[:n] = ids
    w_p = np.zeros(n_pad, bool)
    w_p[:n] = is_write
    ids_j, w_j = jnp.asarray(ids_p), jnp.asarray(w_p)
    out = [_run(policy, u_pad, ids_j, w_j, jnp.int64(c)) for c in caps]
    return (np.stack([np.asarray(h)[:n] for h, _ in out]), np.stack([np.asarray(b)[:n] for _, b in out]))


def _bucket(n: int) -> int:
    return max(64, 1 << int(np.ceil(np.log2(max(n, 1)))))


def lru_counts(keys, capacities, is_write=None) -> tuple[np.ndarray, np.ndarray]:
    """LRU without a scan: ``(hit, n_dirty_evictions)`` from exact stack distances (Mattson et al.).

    ``hit[k, t]`` = stack distance of access ``t`` < ``capacities[k]``
    (:func:`tieringlab.models.stackdist.stack_distances`). A residency of a page (from the miss that
    admits it to its last access before it leaves) ends by eviction iff the page's next access misses,
    or, after its last access in the trace, iff at least ``c`` distinct other pages follow it; it
    writes back iff a write falls inside it. Same results as :func:`replay` with ``"lru"``.
    """
    from tieringlab.models.stackdist import stack_distances

    keys = np.asarray(keys)
    caps = _capacities(capacities, "capacities")
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
        dirty = np.bincount(seg, weights=wo, minlength=seg[-1] + 1) > 0
        nxt_miss = np.r_[miss[1:], True]
        ends = np.r_[seg[1:] != seg[:-1], True]
        evicted = np.where(last_of_page, False, nxt_miss)
        evicted[last_of_page] = after >= c
        n_wb[k] = int((dirty[seg[ends & evicted]]).sum())
    return hit, n_wb


def hits(policy: str, keys, capacity: int) -> np.ndarray:
    """Plain mode: whether each access of unit-size integer ``keys`` hits a ``capacity``-unit cache.

    ``policy`` is ``"lru"``, ``"arc"`` or ``"car"``; the cache starts empty. The same semantics as
    libcachesim's ``LRU``/``ARC`` with ``obj_size=1`` and ``cache_size=capacity``.
    """
    caps = _capacities(capacity)
    if caps.size != 1:
        raise ValueError(f"capacity must be one integer; got {capacity!r}")
    return replay(policy, keys, caps)[0][0]


# --------------------------------------------------------------------------------------------------
# Trace mode
# --------------------------------------------------------------------------------------------------
def _check_trace(ds: xr.Dataset) -> None:
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"trace must be an xarray.Dataset with dim 'request'; got {type(ds).__name__}")
    missing = [v for v in ("offset", "size", "is_write") if v not in ds]
    if missing:
        raise ValueError(f"trace is missing variable(s) {missing}; needs offset, size, is_write over dim 'request'")
    if ds["offset"].dims != ("request",):
        raise ValueError(f"trace variable 'offset' must have dims ('request',); got {ds['offset'].dims}")


def page_accesses(ds: xr.Dataset, page_bytes: int = PAGE_BYTES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split each request into the pages it touches (vFRM Sec. 5.1: a request spans several pages).

    Returns ``(page, request, is_write)`` per page access, in trace order and ascending page order
    within a request: page number ``offset // page_bytes + k``, the index of the request along dim
    ``request``, and whether the request is a write.
    """
    _check_trace(ds)
    if page_bytes <= 0:
        raise ValueError(f"page_bytes must be > 0; got {page_bytes}")
    off = np.asarray(ds["offset"].values, np.int64)
    size = np.asarray(ds["size"].values, np.int64)
    if np.any(off < 0):
        raise ValueError(f"trace variable 'offset' must be >= 0 bytes; request {int(np.argmax(off < 0))} is negative")
    if np.any(size <= 0):
        raise ValueError(f"trace variable 'size' must be > 0 bytes; request {int(np.argmax(size <= 0))} is not")
    first = off // page_bytes
    n = (off + size - 1) // page_bytes - first + 1
    req = np.repeat(np.arange(off.size, dtype=np.int64), n)
    starts = np.cumsum(n) - n
    page = np.repeat(first, n) + (np.arange(req.size, dtype=np.int64) - np.repeat(starts, n))
    is_write = np.asarray(ds["is_write"].values, bool)[req]
    return page, req, is_write


def simulate(ds: xr.Dataset, policy: str, flash_bytes, params: CachingParams = CachingParams()) -> xr.Dataset:
    """Replay trace ``ds`` through a page cache of each size in ``flash_bytes`` (vFRM Sec. 5, Table 2).

    Returns a Dataset over ``flash_bytes`` with ``hits`` (requests all of whose pages hit),
    ``hit_ratio``, the Eq. 4 operation counts ``ssd_reads``, ``ssd_writes``, ``md_reads``,
    ``md_writes`` (4 KB operations, Table 2(a)(b)), ``dirty_evictions``, ``io_cost`` (Eq. 4, seconds) and ``request_hit``
    (``flash_bytes`` x ``request``). The cache holds ``flash_bytes // page_bytes`` pages.
    """
    _check_policy(policy)
    fb = np.atleast_1d(np.asarray(flash_bytes, np.int64))
    caps = fb // params.page_bytes
    if np.any(caps < 1):
        raise ValueError(f"flash_bytes must hold at least one {params.page_bytes}-byte page; got {flash_bytes!r}")
    page, req, w = page_accesses(ds, params.page_bytes)
    if policy == "lru":  # exact stack distances: no scan needed
        hit, n_wb = lru_counts(page, caps, w)
    else:
        hit, wb = replay(policy, page, caps, w)
        n_wb = wb.sum(axis=1)
    n_req = ds.sizes["request"]
    starts = np.flatnonzero(np.r_[True, req[1:] != req[:-1]]) if req.size else np.zeros(0, np.int64)
    request_hit = np.logical_and.reduceat(hit, starts, axis=1) if req.size else np.zeros((fb.size, 0), bool)
    r = ~w
    read_hit = (hit & r).sum(axis=1)
    read_miss = (~hit & r).sum(axis=1)
    n_writes = int(w.sum())
    out = xr.Dataset(
        {
            "hits": ("flash_bytes", request_hit.sum(axis=1)),
            "hit_ratio": ("flash_bytes", request_hit.mean(axis=1) if n_req else np.zeros(fb.size)),
            "ssd_reads": ("flash_bytes", read_hit + n_wb),
            "ssd_writes": ("flash_bytes", read_miss + n_writes),
            "md_reads": ("flash_bytes", read_miss),
            "md_writes": ("flash_bytes", n_wb),
            "dirty_evictions": ("flash_bytes", n_wb),
            "request_hit": (("flash_bytes", "request"), request_hit),
        },
        coords={"flash_bytes": fb},
        attrs={"policy": policy, "page_bytes": params.page_bytes, "n_requests": n_req,
               "n_page_accesses": int(page.size), "io_bytes": params.page_bytes,
               "source": "vFRM paper Sec. 5.1, Table 2(a)(b)"},
    )
    out["flash_bytes"].attrs["units"] = "bytes"
    if params.page_bytes == CACHE_COST.io_bytes:  # Table 3 has 4 KB latencies only
        out["io_cost"] = io_cost(out, CACHE_COST)
        out["io_cost"].attrs.update(units="s", long_name="IO cost (vFRM Eq. 4, Table 3 latencies)")
    return out
