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
the page accesses whose carry is one flat int32 array per capacity (keys remapped to dense ids
``0..U-1``; per id ``prev``/``next`` links of the doubly-linked T1/T2/B1/B2 lists and a packed word of
list id, dirty bit and CAR's reference bit; then the lists' heads, tails and sizes and the target p).
A step reads the rows it needs up front, decides with scalar selects, and commits its writes with one
scatter, so the array is updated in place (O(1) per access). A long trace runs in chunks of
``_CHUNK`` accesses with the state carried over (and a progress bar), one scan per capacity. LRU uses
the same machinery with one list (:func:`replay`), and :func:`simulate` computes it without a scan
from exact stack distances (:func:`lru_counts`). No Python loop runs per request.

Engines. The scan above costs about 10 us per access and capacity on a CPU (the fixed cost of its
~50 XLA kernels per step), too slow for the Fig. 8/9 sweep (~2.5e9 ARC+CAR page accesses at paper
scale). The default engine on JAX's CPU backend is therefore :mod:`tieringlab.policies._native`: the
same three caches, the same state layout (dense ids, prev/next links, packed meta word) and the same
decisions in the same order, compiled by numba to a plain loop (tens of nanoseconds per access). The
JAX scan stays the reference and the engine on an accelerator; ``engine="jax"`` selects it anywhere,
and tests/test_caching.py checks that both engines give identical hits and write-backs.

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
from tieringlab.progress import progress

__all__ = ["ENGINES", "POLICIES", "PAGE_BYTES", "CachingParams", "hits", "lru_counts", "page_accesses", "simulate",
           "replay"]

#: The policies this module implements.
POLICIES = ("lru", "arc", "car")

#: Engines of the sequential caches: "auto" (numba on JAX's CPU backend, the JAX scan otherwise),
#: "numba" (compiled loops of :mod:`tieringlab.policies._native`), "jax" (the jitted scan below, the
#: reference). Both engines give identical results (tests/test_caching.py).
ENGINES = ("auto", "numba", "jax")

#: 4 KB cache line of the conventional caches (vFRM paper Sec. 5.1: "4KB and 128KB" basic IO sizes).
PAGE_BYTES = 4096


@dataclass(frozen=True)
class CachingParams:
    """Parameters of the conventional page caches (vFRM paper Sec. 5.1)."""

    page_bytes: int = PAGE_BYTES  # 4 KB cache line, vFRM Sec. 5.1 and Table 2


# --------------------------------------------------------------------------------------------------
# Array-state linked lists: one capacity's cache, updated in place, one access at a time
# --------------------------------------------------------------------------------------------------
# List ids: 0 = in no list, 1 = T1, 2 = T2, 3 = B1, 4 = B2. Each list is doubly linked with its head
# at the MRU end and its tail at the LRU end. Per capacity the state is ONE flat int32 array:
#   * 3 fields per id (id i, field f at 3 i + f): prev, next and a packed "meta" word (bits 0-2: list
#     id, bit 3: dirty, bit 4: CAR's reference bit), for U + 2 ids: id NIL = U is a scratch row
#     absorbing the writes of disabled operations (a disabled operation is the same code aimed at
#     NIL), id OUT = U + 1 holds the access's outputs;
#   * then the five lists' heads, tails and sizes (15), the target p (float64 as two int32) and CAR's
#     loop flags (see _extra).
#
# In place, O(1) per access. XLA updates a loop-carried array in place only when no value read from
# its old version is used after the update; it fuses reads into their consumers, so a read used after
# a write (even one finished before it in program order) makes XLA copy the whole array every step.
# A step therefore reads everything first (rows of x and of the lists' tails), decides with scalar
# selects, queues its writes and commits them with ONE scatter (a later write to a slot wins), and
# everything needed after the commit (outputs, CAR's loop flag) is read back from the new array.
# Measured on XLA's CPU backend (benchmarks/bench_caching.py): about 10 us per access and capacity,
# most of it the fixed cost of the ~50 kernels of a step; the previous design (generic store
# forwarding of every read through every pending write, int64) took 40-60 us.
_T1, _T2, _B1, _B2 = 1, 2, 3, 4
_PREV, _NEXT, _META = 0, 1, 2
_NF = 3
_LIST, _DIRTY, _REF = 7, 8, 16  # meta bits
_HEAD, _TAIL, _SIZE = 0, 5, 10  # offsets in the heads/tails/sizes vector
_I32 = jnp.int32


def _extra(n_ids: int) -> int:
    """Offset of the per-cache scalars after the U + 2 rows: heads/tails/sizes (15), p (2), flags."""
    return (n_ids + 2) * _NF


_P, _FLAG, _FULL, _WB, _NX = 15, 17, 18, 19, 20  # slots after _extra(): p (float64 bits), CAR's flags


class _Cache:
    """One capacity's state during one access (one flat int32 array ``a``).

    Reads come first (rows, and the heads/tails/sizes vector ``h`` and target ``p`` as values); writes
    are queued and :meth:`commit` applies them with one scatter (a later write to a slot wins), ``h``
    and ``p`` included. Values needed after a commit are read back from the new array.
    """

    def __init__(self, a, n_ids):
        self.a, self.nil = a, n_ids
        self.e = _extra(n_ids)
        self.h = a[self.e:self.e + 15]
        self.p = jax.lax.bitcast_convert_type(a[self.e + _P:self.e + _P + 2], jnp.float64)
        self._ix = jnp.arange(15, dtype=_I32)
        self._w = []

    def row(self, i):
        r = jax.lax.dynamic_slice(self.a, (i * _NF,), (_NF,))
        return r[_PREV], r[_NEXT], r[_META]

    def wr(self, i, f, v):
        """Queue a write of field ``f`` of id ``i``."""
        self._w.append((jnp.asarray(i).astype(_I32) * _NF + f, jnp.asarray(v).astype(_I32)))

    def slot(self, k, v):
        self._w.append((jnp.asarray(self.e + k, _I32), jnp.asarray(v).astype(_I32)))

    def commit(self, scalars=True):
        k = jnp.stack([i for i, _ in self._w])
        v = jnp.stack([v for _, v in self._w])
        later = jnp.triu(k[:, None] == k[None, :], 1).any(axis=1)
        k = jnp.where(later, (self.nil + 1) * _NF + 2, k)  # overwritten writes -> a scratch slot
        if scalars:
            pb = jax.lax.bitcast_convert_type(jnp.asarray(self.p, jnp.float64), _I32)
            k = jnp.concatenate([k, self.e + jnp.arange(17, dtype=_I32)])
            v = jnp.concatenate([v, self.h, pb])
        self.a = self.a.at[k].set(v, mode="promise_in_bounds")
        self._w = []

    def hd(self, base, lst):
        return jax.lax.dynamic_index_in_dim(self.h, base + lst, keepdims=False)

    def hset(self, base, lst, v, en):
        self.h = jnp.where((self._ix == base + lst) & en, jnp.asarray(v).astype(_I32), self.h)

    def size(self, lst):
        return self.h[_SIZE + lst]

    def tail(self, lst):
        return self.h[_TAIL + lst]

    def at(self, i, en):
        return jnp.where(en, i, self.nil)

    def remove(self, x, lst, px, nx, en):
        """Unlink ``x`` (row values ``px``, ``nx``) from list ``lst``; no-op when ``en`` is False."""
        nil = self.nil
        self.wr(self.at(px, en & (px != nil)), _NEXT, nx)
        self.wr(self.at(nx, en & (nx != nil)), _PREV, px)
        self.hset(_HEAD, lst, nx, en & (px == nil))
        self.hset(_TAIL, lst, px, en & (nx == nil))
        self.hset(_SIZE, lst, self.hd(_SIZE, lst) - 1, en)

    def push(self, x, lst, en):
        """Insert ``x`` (in no list) at the MRU end of ``lst`` (its meta word is the caller's)."""
        nil = self.nil
        h = self.hd(_HEAD, lst)
        x_ = self.at(x, en)
        self.wr(x_, _NEXT, h)
        self.wr(x_, _PREV, nil)
        self.wr(self.at(h, en & (h != nil)), _PREV, x)
        self.hset(_TAIL, lst, x, en & (h == nil))
        self.hset(_HEAD, lst, x, en)
        self.hset(_SIZE, lst, self.hd(_SIZE, lst) + 1, en)

    def output(self, hit, wb):
        self.wr(self.nil + 1, 0, hit.astype(_I32) | (wb.astype(_I32) << 1))
        self.commit()


def _init_state(n_ids: int):
    a = jnp.zeros((n_ids + 2, _NF), _I32).at[:, _PREV].set(n_ids).at[:, _NEXT].set(n_ids).reshape(-1)
    ex = jnp.zeros(_NX, _I32).at[:10].set(n_ids)  # heads, tails = NIL; sizes, p (0.0), flags = 0
    return jnp.concatenate([a, ex])


def _dirty(meta):
    return (meta & _DIRTY) != 0


# --------------------------------------------------------------------------------------------------
# One access of each policy: (cache, id x, is_write w, capacity c) -> None (updates the cache)
# --------------------------------------------------------------------------------------------------
def _lru_step(S, x, w, c):
    px, nx, mx = S.row(x)
    v = S.tail(_T1)
    pv, _, mv = S.row(v)
    hit = (mx & _LIST) == _T1
    ev = (~hit) & (S.size(_T1) >= c)
    wb = ev & _dirty(mv)
    S.remove(x, _T1, px, nx, hit)
    S.remove(v, _T1, pv, S.nil, ev)
    S.wr(S.at(v, ev), _META, 0)
    S.push(x, _T1, True)
    S.wr(x, _META, _T1 | (mx & _DIRTY) | jnp.where(w, _DIRTY, 0))
    S.output(hit, wb)
    return S


def _arc_step(S, x, w, c):
    """ARC (Megiddo & Modha, FAST'03, Fig. 4) with a real-valued target ``p``.

    Case I (x in T1 ∪ T2): hit, move x to MRU of T2. Case II/III (x in B1/B2): adapt p, REPLACE,
    move x to MRU of T2. Case IV (x new), cache full: A) |T1|+|B1| = c: if |T1| < c delete LRU of B1
    and REPLACE, else delete LRU of T1; B) otherwise, if |T1|+|T2|+|B1|+|B2| = 2c delete LRU of B2,
    then REPLACE; x goes to MRU of T1. (x leaves its ghost list before REPLACE runs, which moves a
    page between T and B lists only: the lists end up the same as in the paper's order.)
    """
    nil = S.nil
    px, nx, mx = S.row(x)
    t1, t2, g1, g2 = S.tail(_T1), S.tail(_T2), S.tail(_B1), S.tail(_B2)
    r_t1, r_t2, r_g1, r_g2 = S.row(t1), S.row(t2), S.row(g1), S.row(g2)
    s1, s2, b1, b2 = S.size(_T1), S.size(_T2), S.size(_B1), S.size(_B2)
    lst = mx & _LIST
    hit = (lst == _T1) | (lst == _T2)
    in_b1, in_b2 = lst == _B1, lst == _B2
    fresh = lst == 0
    # adaptation (Fig. 4 cases II/III): delta1 = max(|B2|/|B1|, 1), delta2 = max(|B1|/|B2|, 1), real p
    d1 = jnp.maximum(b2.astype(jnp.float64) / jnp.maximum(b1, 1), 1.0)
    d2 = jnp.maximum(b1.astype(jnp.float64) / jnp.maximum(b2, 1), 1.0)
    p = S.p
    p = jnp.where(in_b1, jnp.minimum(p + d1, c), jnp.where(in_b2, jnp.maximum(p - d2, 0), p))
    full = fresh & (s1 + s2 >= c)
    case_a = full & (s1 + b1 >= c)
    del_b1 = case_a & (s1 < c)
    del_t1 = case_a & (s1 >= c)
    del_b2 = full & (~case_a) & (s1 + s2 + b1 + b2 >= 2 * c)
    replace = in_b1 | in_b2 | del_b1 | (full & ~case_a)
    # x leaves its list (hit or ghost hit)
    S.remove(x, lst, px, nx, ~fresh)
    # delete the LRU ghost of B1 or B2 (directory replacement; only when x is new)
    del_g = del_b1 | del_b2
    g = jnp.where(del_b1, g1, g2)
    pg = jnp.where(del_b1, r_g1[0], r_g2[0])
    S.remove(g, jnp.where(del_b1, _B1, _B2), pg, nil, del_g)
    S.wr(S.at(g, del_g), _META, 0)
    # REPLACE(x, p): LRU of T1 to MRU of B1 if |T1| > p or (x in B2 and |T1| = p), else T2 -> B2
    from_t1 = (s1 > 0) & ((s1 > p) | ((s1 == p) & in_b2))
    v_t1 = del_t1 | from_t1
    v = jnp.where(v_t1, t1, t2)
    pv = jnp.where(v_t1, r_t1[0], r_t2[0])
    mv = jnp.where(v_t1, r_t1[2], r_t2[2])
    ev = del_t1 | replace
    wb = ev & _dirty(mv)
    S.remove(v, jnp.where(v_t1, _T1, _T2), pv, nil, ev)
    dst = jnp.where(from_t1, _B1, _B2)
    S.push(v, dst, replace)
    S.wr(S.at(v, ev), _META, jnp.where(replace, dst, 0))
    # x to MRU of T2 (hit or ghost hit) or of T1 (new)
    lt = jnp.where(fresh, _T1, _T2)
    S.push(x, lt, True)
    S.wr(x, _META, lt | (mx & _DIRTY) | jnp.where(w, _DIRTY, 0))
    S.p = p
    S.output(hit, wb)
    return S


def _car_step(S, x, w, c):
    """CAR (Bansal & Modha, FAST'04, Fig. 2): lines 1-21 around replace() (lines 22-39).

    A clock's head (the hand) is the LRU end of its list here; "the tail of a clock" is the MRU end.
    """
    nil = S.nil
    _, _, mx = S.row(x)
    lst = mx & _LIST
    hit = (lst == _T1) | (lst == _T2)
    full = (~hit) & (S.size(_T1) + S.size(_T2) >= c)
    S.slot(_FLAG, full)  # 1 while replace() has not found its victim
    S.slot(_FULL, full)
    S.slot(_WB, 0)
    S.commit(scalars=False)
    e = S.e

    def body(a):  # one move of the clock hand, lines 25-39
        T = _Cache(a, nil)
        use_t1 = T.size(_T1).astype(jnp.float64) >= jnp.maximum(1.0, T.p)  # line 25
        ls = jnp.where(use_t1, _T1, _T2)
        hnd = T.hd(_TAIL, ls)
        ph, _, mh = T.row(hnd)
        r = (mh & _REF) != 0
        T.slot(_WB, (~r) & _dirty(mh))  # lines 27-28 / 34-35: demote to MRU of B1 / B2
        T.slot(_FLAG, r)
        T.remove(hnd, ls, ph, nil, True)
        dst = jnp.where(r, _T2, ls + 2)  # lines 30 / 37: reset the bit, move to the tail of T2
        T.push(hnd, dst, True)
        T.wr(hnd, _META, jnp.where(r, _T2 | (mh & _DIRTY), dst))
        T.commit()
        return T.a

    S = _Cache(jax.lax.while_loop(lambda a: a[e + _FLAG] != 0, body, S.a), nil)
    full, wb = S.a[e + _FULL] != 0, S.a[e + _WB] != 0
    px, nx, mx = S.row(x)  # replace() does not move x, but may have changed its neighbours
    lst = mx & _LIST
    hit = (lst == _T1) | (lst == _T2)  # as before replace(), which runs only on a miss
    in_b1, in_b2 = lst == _B1, lst == _B2
    in_b = in_b1 | in_b2
    s1, s2, b1, b2 = S.size(_T1), S.size(_T2), S.size(_B1), S.size(_B2)
    del_b1 = full & (~in_b) & (s1 + b1 == c)  # lines 6-7
    del_b2 = full & (~in_b) & (~del_b1) & (s1 + s2 + b1 + b2 == 2 * c)  # lines 8-9
    del_g = del_b1 | del_b2
    lg = jnp.where(del_b1, _B1, _B2)
    g = S.hd(_TAIL, lg)
    pg, _, _ = S.row(g)
    S.remove(g, lg, pg, nil, del_g)
    S.wr(S.at(g, del_g), _META, 0)
    b1, b2 = S.size(_B1).astype(jnp.float64), S.size(_B2).astype(jnp.float64)
    p = S.p
    p = jnp.where(in_b1, jnp.minimum(p + jnp.maximum(1.0, b2 / jnp.maximum(b1, 1.0)), c), p)  # line 15
    p = jnp.where(in_b2, jnp.maximum(p - jnp.maximum(1.0, b1 / jnp.maximum(b2, 1.0)), 0.0), p)  # line 18
    S.p = p
    S.remove(x, lst, px, nx, in_b)
    lt = jnp.where(in_b, _T2, _T1)
    S.push(x, lt, ~hit)  # lines 13, 16, 19
    wbit = jnp.where(w, _DIRTY, 0)
    S.wr(x, _META, jnp.where(hit, mx | _REF | wbit, lt | wbit))  # line 2 (hit: bit 1) / bit 0 on insertion
    S.output(hit, wb)
    return S


_STEPS = {"lru": _lru_step, "arc": _arc_step, "car": _car_step}


@partial(jax.jit, static_argnames=("policy", "n_ids"), donate_argnums=(0,))
def _run(state, policy: str, n_ids: int, ids, is_write, capacities):
    """One jitted scan over a chunk of accesses for the capacities given (one state each).

    The step handles several capacities in one scan body, but on XLA's CPU backend that measured 2-3x
    slower per capacity than one scan per capacity (independent kernels in one body are dispatched to
    a thread pool), so :func:`replay` calls it with one capacity at a time.

    ``state`` is a tuple over capacities of flat state arrays and is donated: the caller's buffers are
    reused, chunks of a long trace run one after another without copying it. Returns the new state and
    per access and capacity ``hit | dirty_eviction << 1`` (int8, ``(len(ids), len(capacities))``).
    """
    step = _STEPS[policy]
    out_at = (n_ids + 1) * _NF

    def body(st, xw):
        x, w = xw[0].astype(_I32), xw[1]
        new, outs = [], []
        for k, a in enumerate(st):
            S = step(_Cache(a, n_ids), x, w, capacities[k])
            new.append(S.a)
            outs.append(S.a[out_at].astype(jnp.int8))
        return tuple(new), jnp.stack(outs)

    return jax.lax.scan(body, state, (ids, is_write))


def _engine(engine: str) -> str:
    """The engine that runs: ``engine`` checked, ``"auto"`` resolved (numba on JAX's CPU backend)."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(map(repr, ENGINES))}; got {engine!r}")
    if engine == "auto":
        return "numba" if jax.default_backend() == "cpu" else "jax"
    return engine


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


def replay(policy: str, keys, capacities, is_write=None, engine: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """Replay unit-size ``keys`` through ``policy`` for each capacity (in units).

    Returns ``(hit, dirty_eviction)``, both bool arrays of shape ``(len(capacities), len(keys))``:
    whether access ``t`` hit, and whether serving it wrote a dirty page back to the MD (Table 2(b)).
    ``is_write`` (bool per access) marks pages dirty; default all reads. ``engine`` is one of
    :data:`ENGINES` (same results; ``"numba"`` is ~1000x faster on a CPU).
    """
    _check_policy(policy)
    engine = _engine(engine)
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
    n, u = keys.size, uniq.size
    if engine == "numba":
        return _replay_numba(policy, ids, is_write, u, caps)
    if u + 2 > (2**31 - 1) // _NF:
        raise ValueError(f"keys has {u} distinct values; at most {(2**31 - 1) // _NF - 2} fit the int32 state")
    # Shapes are bucketed so that traces of similar sizes share one compilation: ids up to 1/16 above
    # the count, accesses in chunks of at most _CHUNK (a long trace runs chunk after chunk, the state
    # carried over, with a progress bar). The padding accesses (one extra id, u) come after every real
    # access and cannot change its outcome.
    u_pad = _bucket(u + 1)
    chunk = min(_bucket(n), _CHUNK)
    n_chunks = -(-n // chunk)
    ids_p = np.full(n_chunks * chunk, u, np.int32)
    ids_p[:n] = ids
    w_p = np.zeros(n_chunks * chunk, bool)
    w_p[:n] = is_write
    hit = np.zeros((caps.size, n), bool)
    wb = np.zeros((caps.size, n), bool)
    bar = progress(total=caps.size * n_chunks, desc=f"{policy} cache", unit="chunk", leave=False)
    for k, c in enumerate(caps):  # a handful of sizes, one scan each (see _run)
        state = (_init_state(u_pad),)
        for i in range(n_chunks):
            sl = slice(i * chunk, (i + 1) * chunk)
            state, out = _run(state, policy, u_pad, jnp.asarray(ids_p[sl]), jnp.asarray(w_p[sl]),
                              jnp.asarray([c], jnp.int64))
            out = np.asarray(out)[: max(0, min(chunk, n - i * chunk)), 0]
            hit[k, sl][: out.size] = (out & 1) != 0
            wb[k, sl][: out.size] = (out & 2) != 0
            bar.update(1)
    bar.close()
    return hit, wb


def _replay_numba(policy, ids, is_write, u, caps):
    """:func:`replay` on the numba engine: one compiled pass over the dense ids per capacity."""
    from tieringlab.policies import _native  # numba is imported (and compiles) only when used

    ids = ids.astype(np.int32) if u < np.iinfo(np.int32).max else ids
    hit = np.zeros((caps.size, ids.size), bool)
    wb = np.zeros((caps.size, ids.size), bool)
    for k in progress(range(caps.size), total=caps.size, desc=f"{policy} cache (numba)", unit="size", leave=False):
        _native.replay_one(policy, ids, is_write, u, int(caps[k]), hit[k], wb[k])
    return hit, wb


#: Accesses per jitted scan call (a long trace runs in chunks of this many, state carried over).
_CHUNK = 1 << 20


def _bucket(n: int) -> int:
    """``n`` rounded up: to a power of two (at least 64) up to 2^16, above that to a multiple of 1/16
    of the next power of two (at most 1/16 of padding on large traces)."""
    n = max(int(n), 64)
    e = int(np.ceil(np.log2(n)))
    step = 1 << (e if e <= 16 else e - 4)
    return -(-n // step) * step


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


def hits(policy: str, keys, capacity: int, engine: str = "auto") -> np.ndarray:
    """Plain mode: whether each access of unit-size integer ``keys`` hits a ``capacity``-unit cache.

    ``policy`` is ``"lru"``, ``"arc"`` or ``"car"``; the cache starts empty. The same semantics as
    libcachesim's ``LRU``/``ARC`` with ``obj_size=1`` and ``cache_size=capacity``. ``engine``: one of
    :data:`ENGINES`.
    """
    caps = _capacities(capacity)
    if caps.size != 1:
        raise ValueError(f"capacity must be one integer; got {capacity!r}")
    return replay(policy, keys, caps, engine=engine)[0][0]


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


def simulate(ds: xr.Dataset, policy: str, flash_bytes, params: CachingParams = CachingParams(),
             engine: str = "auto") -> xr.Dataset:
    """Replay trace ``ds`` through a page cache of each size in ``flash_bytes`` (vFRM Sec. 5, Table 2).

    Returns a Dataset over ``flash_bytes`` with ``hits`` (requests all of whose pages hit),
    ``hit_ratio``, the Eq. 4 operation counts ``ssd_reads``, ``ssd_writes``, ``md_reads``,
    ``md_writes`` (4 KB operations, Table 2(a)(b)), ``dirty_evictions``, ``io_cost`` (Eq. 4, seconds) and ``request_hit``
    (``flash_bytes`` x ``request``). The cache holds ``flash_bytes // page_bytes`` pages.

    ``engine`` (one of :data:`ENGINES`, same results): ``"numba"`` replays every policy, LRU included,
    with the compiled loops; ``"jax"`` computes LRU from exact stack distances (:func:`lru_counts`)
    and ARC/CAR with the jitted scan.
    """
    _check_policy(policy)
    engine = _engine(engine)
    fb = np.atleast_1d(np.asarray(flash_bytes, np.int64))
    caps = fb // params.page_bytes
    if np.any(caps < 1):
        raise ValueError(f"flash_bytes must hold at least one {params.page_bytes}-byte page; got {flash_bytes!r}")
    page, req, w = page_accesses(ds, params.page_bytes)
    if policy == "lru" and engine == "jax":  # exact stack distances: no scan needed
        hit, n_wb = lru_counts(page, caps, w)
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
