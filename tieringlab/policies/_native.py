"""Native (numba) engine of the LRU, ARC and CAR page caches of :mod:`tieringlab.policies.caching`.

The same caches as the jitted :func:`jax.lax.scan` steps of ``caching`` (``_lru_step``, ``_arc_step``,
``_car_step``), compiled by numba to a plain loop over the page accesses: ARC and CAR are sequential
by nature (each access depends on the lists left by the previous one), and XLA's CPU backend spends
~10 us per access on the ~50 kernels of a scan step, where a compiled loop spends tens of nanoseconds.
The JAX scan stays the reference (and accelerator) engine; ``tests/test_caching.py`` checks that both
engines give identical hits and write-backs.

Semantics, exactly those of the JAX steps (see ``caching``'s module docstring for the papers):

* ids are the dense ids ``0..U-1`` that ``caching.replay`` computes; id ``U`` is ``NIL``;
* each list (1 = T1, 2 = T2, 3 = B1, 4 = B2; 0 = in no list) is doubly linked through ``prev``/``nxt``
  with its head at the MRU end and its tail at the LRU end; ``meta`` packs the list id (bits 0-2), the
  dirty bit (bit 3) and CAR's reference bit (bit 4);
* ARC: Megiddo & Modha (FAST'03) Fig. 4 with a real-valued target ``p``, ``x`` leaving its ghost list
  before REPLACE; CAR: Bansal & Modha (FAST'04) Fig. 2, lines 1-39, real-valued ``p``;
* vFRM Table 2(b): a page's data leaving the cache (evicted, or demoted to a ghost list) writes it back
  iff it is dirty; its dirty bit is cleared then. A page becomes dirty when written.

Kept in its own module so that numba is imported (and the kernels compiled, about a second each) only
when the numba engine runs, and so that ``caching`` stays the one place that documents the policies.
Compilation is not cached on disk (``cache=True`` would write ``__pycache__`` files into the source
tree); each process compiles a kernel on its first call.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_T1, _T2, _B1, _B2 = 1, 2, 3, 4
_LIST, _DIRTY, _REF = 7, 8, 16  # meta bits, as in caching


@njit(inline="always")
def _remove(x, lst, prev, nxt, head, tail, size, nil):
    """Unlink ``x`` from list ``lst`` (its meta word is the caller's)."""
    px, nx = prev[x], nxt[x]
    if px != nil:
        nxt[px] = nx
    else:
        head[lst] = nx
    if nx != nil:
        prev[nx] = px
    else:
        tail[lst] = px
    size[lst] -= 1


@njit(inline="always")
def _push(x, lst, prev, nxt, head, tail, size, nil):
    """Insert ``x`` (in no list) at the MRU end (head) of ``lst``."""
    h = head[lst]
    nxt[x] = h
    prev[x] = nil
    if h != nil:
        prev[h] = x
    else:
        tail[lst] = x
    head[lst] = x
    size[lst] += 1


def _state(n_ids):
    if n_ids + 1 > np.iinfo(np.int32).max:
        raise ValueError(f"keys has {n_ids} distinct values; at most {np.iinfo(np.int32).max - 1} fit the int32 state")
    nil = n_ids
    prev = np.full(n_ids + 1, nil, np.int32)  # int32 links, uint8 meta: 9 bytes per id, cache-friendly
    nxt = np.full(n_ids + 1, nil, np.int32)
    meta = np.zeros(n_ids + 1, np.uint8)
    head = np.full(5, nil, np.int64)
    tail = np.full(5, nil, np.int64)
    size = np.zeros(5, np.int64)
    return prev, nxt, meta, head, tail, size


@njit(cache=False, nogil=True)
def _lru(ids, is_write, c, prev, nxt, meta, head, tail, size, hit_out, wb_out):
    """LRU, one list T1 (``caching._lru_step``)."""
    nil = prev.size - 1
    for t in range(ids.size):
        x = ids[t]
        mx = meta[x]
        hit = (mx & _LIST) == _T1
        wb = False
        if hit:
            _remove(x, _T1, prev, nxt, head, tail, size, nil)
        elif size[_T1] >= c:
            v = tail[_T1]
            wb = (meta[v] & _DIRTY) != 0
            _remove(v, _T1, prev, nxt, head, tail, size, nil)
            meta[v] = 0
        _push(x, _T1, prev, nxt, head, tail, size, nil)
        meta[x] = _T1 | (mx & _DIRTY) | (_DIRTY if is_write[t] else 0)
        hit_out[t] = hit
        wb_out[t] = wb


@njit(cache=False, nogil=True)
def _arc(ids, is_write, c, prev, nxt, meta, head, tail, size, hit_out, wb_out):
    """ARC (Megiddo & Modha, FAST'03, Fig. 4), real-valued ``p`` (``caching._arc_step``).

    Case I (x in T1 ∪ T2): hit, x to MRU of T2. Cases II/III (x in B1/B2): adapt p, x leaves its ghost
    list, REPLACE, x to MRU of T2. Case IV (x new) with |T1| + |T2| >= c: A) |T1| + |B1| >= c: if
    |T1| < c delete LRU of B1 and REPLACE, else delete LRU of T1; B) otherwise delete LRU of B2 if
    |T1| + |T2| + |B1| + |B2| >= 2c, then REPLACE; x to MRU of T1.
    """
    nil = prev.size - 1
    p = 0.0
    for t in range(ids.size):
        x = ids[t]
        mx = meta[x]
        lst = mx & _LIST
        s1, s2, b1, b2 = size[_T1], size[_T2], size[_B1], size[_B2]
        hit = lst == _T1 or lst == _T2
        in_b1 = lst == _B1
        in_b2 = lst == _B2
        fresh = lst == 0
        if in_b1:  # delta1 = max(|B2| / |B1|, 1)
            p = min(p + max(b2 / max(b1, 1), 1.0), float(c))
        elif in_b2:  # delta2 = max(|B1| / |B2|, 1)
            p = max(p - max(b1 / max(b2, 1), 1.0), 0.0)
        full = fresh and s1 + s2 >= c
        case_a = full and s1 + b1 >= c
        del_b1 = case_a and s1 < c
        del_t1 = case_a and s1 >= c
        del_b2 = full and (not case_a) and s1 + s2 + b1 + b2 >= 2 * c
        replace = in_b1 or in_b2 or del_b1 or (full and not case_a)
        if not fresh:  # x leaves its list (hit or ghost hit)
            _remove(x, lst, prev, nxt, head, tail, size, nil)
        if del_b1 or del_b2:  # directory replacement: the LRU ghost of B1 or B2 is forgotten
            lg = _B1 if del_b1 else _B2
            g = tail[lg]
            _remove(g, lg, prev, nxt, head, tail, size, nil)
            meta[g] = 0
        wb = False
        if del_t1 or replace:
            # REPLACE(x, p): LRU of T1 to MRU of B1 if |T1| > p or (x in B2 and |T1| = p), else T2 -> B2
            from_t1 = s1 > 0 and (s1 > p or (s1 == p and in_b2))
            lv = _T1 if (del_t1 or from_t1) else _T2
            v = tail[lv]
            wb = (meta[v] & _DIRTY) != 0
            _remove(v, lv, prev, nxt, head, tail, size, nil)
            if replace:
                dst = _B1 if from_t1 else _B2
                _push(v, dst, prev, nxt, head, tail, size, nil)
                meta[v] = dst
            else:
                meta[v] = 0
        lt = _T1 if fresh else _T2
        _push(x, lt, prev, nxt, head, tail, size, nil)
        meta[x] = lt | (mx & _DIRTY) | (_DIRTY if is_write[t] else 0)
        hit_out[t] = hit
        wb_out[t] = wb


@njit(cache=False, nogil=True)
def _car(ids, is_write, c, prev, nxt, meta, head, tail, size, hit_out, wb_out):
    """CAR (Bansal & Modha, FAST'04, Fig. 2), real-valued ``p`` (``caching._car_step``).

    A clock's head (the hand) is the LRU end (tail) of its list here; "the tail of a clock" is the MRU
    end (head).
    """
    nil = prev.size - 1
    p = 0.0
    for t in range(ids.size):
        x = ids[t]
        lst = meta[x] & _LIST
        hit = lst == _T1 or lst == _T2
        wb = False
        full = (not hit) and size[_T1] + size[_T2] >= c
        if full:  # replace(), lines 22-39
            while True:
                ls = _T1 if size[_T1] >= max(1.0, p) else _T2  # line 25
                hnd = tail[ls]
                mh = meta[hnd]
                r = (mh & _REF) != 0
                _remove(hnd, ls, prev, nxt, head, tail, size, nil)
                if r:  # lines 30 / 37: reset the reference bit, make it the tail (MRU) of T2
                    _push(hnd, _T2, prev, nxt, head, tail, size, nil)
                    meta[hnd] = _T2 | (mh & _DIRTY)
                else:  # lines 27-28 / 34-35: demote to MRU of B1 / B2 (its data leaves the cache)
                    wb = (mh & _DIRTY) != 0
                    _push(hnd, ls + 2, prev, nxt, head, tail, size, nil)
                    meta[hnd] = ls + 2
                    break
        mx = meta[x]  # replace() does not move x
        in_b1 = lst == _B1
        in_b2 = lst == _B2
        in_b = in_b1 or in_b2
        s1, s2, b1, b2 = size[_T1], size[_T2], size[_B1], size[_B2]
        if full and not in_b:
            lg = 0
            if s1 + b1 == c:  # lines 6-7
                lg = _B1
            elif s1 + s2 + b1 + b2 == 2 * c:  # lines 8-9
                lg = _B2
            if lg != 0:
                g = tail[lg]
                _remove(g, lg, prev, nxt, head, tail, size, nil)
                meta[g] = 0
        b1f, b2f = float(size[_B1]), float(size[_B2])
        if in_b1:  # line 15
            p = min(p + max(1.0, b2f / max(b1f, 1.0)), float(c))
        elif in_b2:  # line 18
            p = max(p - max(1.0, b1f / max(b2f, 1.0)), 0.0)
        wbit = _DIRTY if is_write[t] else 0
        if hit:  # line 2: set the reference bit
            meta[x] = mx | _REF | wbit
        else:
            if in_b:
                _remove(x, lst, prev, nxt, head, tail, size, nil)
            lt = _T2 if in_b else _T1  # lines 13, 16, 19 (reference bit 0 on insertion)
            _push(x, lt, prev, nxt, head, tail, size, nil)
            meta[x] = lt | wbit
        hit_out[t] = hit
        wb_out[t] = wb


_KERNELS = {"lru": _lru, "arc": _arc, "car": _car}


def replay_one(policy: str, ids: np.ndarray, is_write: np.ndarray, n_ids: int, capacity: int,
               hit_out: np.ndarray, wb_out: np.ndarray) -> None:
    """Replay dense ``ids`` (``0..n_ids-1``) through a ``capacity``-page cache, starting empty.

    Writes ``hit_out[t]`` (access ``t`` hit) and ``wb_out[t]`` (serving it wrote a dirty page back,
    Table 2(b)) in place; both are bool arrays of ``len(ids)``.
    """
    _KERNELS[policy](ids, is_write, int(capacity), *_state(int(n_ids)), hit_out, wb_out)
