"""The array linked lists under the page caches LRU, ARC and CAR: one shared module, two engines.

Each cache (:mod:`~tieringlab.policies.lru`, :mod:`~tieringlab.policies.arc`,
:mod:`~tieringlab.policies.car`) is a few doubly linked lists of page ids (LRU: T1; ARC and CAR: T1,
T2 and the ghost lists B1, B2) over dense ids ``0..U-1`` (``caching.replay`` remaps the keys), with a
packed meta word per id (list id, dirty bit, CAR's reference bit). This module holds what the three
share, in both engines:

* **JAX** (the reference engine, and the one on an accelerator): :class:`Cache`, one capacity's
  state as ONE flat int32 array updated in place by a jitted :func:`jax.lax.scan` (:func:`scan_chunk`),
  one access per step, with a step function of the algorithm (``jax_step``);
* **numba** (the default on a CPU): the list primitives :func:`remove`, :func:`push` and :func:`admit`
  (:func:`tieringlab.native.jit` functions, compiled on first use, so numba is imported only when its
  engine runs), :func:`native_state` allocates the arrays, and each algorithm module writes its loop over
  the accesses (``native_loop``, decorated by :data:`native_kernel`, compiled on its first call).

Both engines take the same decisions in the same order on the same layout, and the tests check that
they give identical hits and write-backs.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from tieringlab import native

__all__ = ["T1", "T2", "B1", "B2", "PREV", "NEXT", "META", "NF", "LIST", "DIRTY", "REF", "HEAD", "TAIL", "SIZE", "I32",
           "P", "FLAG", "FULL", "WB", "Cache", "init_state", "dirty", "extra", "scan_chunk", "remove", "push", "admit",
           "native_kernel",
           "native_state", "unit_capacities"]


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
#     loop flags (see extra).
#
# In place, O(1) per access. XLA updates a loop-carried array in place only when no value read from
# its old version is used after the update; it fuses reads into their consumers, so a read used after
# a write (even one finished before it in program order) makes XLA copy the whole array every step.
# A step therefore reads everything first (rows of x and of the lists' tails), decides with scalar
# selects, queues its writes and commits them with ONE scatter (a later write to a slot wins), and
# everything needed after the commit (outputs, CAR's loop flag) is read back from the new array.
# On XLA's CPU backend most of a step's cost is the fixed cost of its ~50 kernels
# (benchmarks/bench_caching.py measures it); generic store forwarding of every read through every pending
# write costs several times more.
T1, T2, B1, B2 = 1, 2, 3, 4
PREV, NEXT, META = 0, 1, 2
NF = 3
LIST, DIRTY, REF = 7, 8, 16  # meta bits
HEAD, TAIL, SIZE = 0, 5, 10  # offsets in the heads/tails/sizes vector
I32 = jnp.int32


def extra(n_ids: int) -> int:
    """Offset of the per-cache scalars after the U + 2 rows: heads/tails/sizes (15), p (2), flags."""
    return (n_ids + 2) * NF


P, FLAG, FULL, WB, NX = 15, 17, 18, 19, 20  # slots after extra(): p (float64 bits), CAR's flags


class Cache:
    """One capacity's state during one access (one flat int32 array ``a``).

    Reads come first (rows, and the heads/tails/sizes vector ``h`` and target ``p`` as values); writes
    are queued and :meth:`commit` applies them with one scatter (a later write to a slot wins), ``h``
    and ``p`` included. Values needed after a commit are read back from the new array.
    """

    def __init__(self, a, n_ids):
        self.a, self.nil = a, n_ids
        self.e = extra(n_ids)
        self.h = a[self.e:self.e + 15]
        self.p = jax.lax.bitcast_convert_type(a[self.e + P:self.e + P + 2], jnp.float64)
        self._ix = jnp.arange(15, dtype=I32)
        self._w = []

    def row(self, i):
        r = jax.lax.dynamic_slice(self.a, (i * NF,), (NF,))
        return r[PREV], r[NEXT], r[META]

    def wr(self, i, f, v):
        """Queue a write of field ``f`` of id ``i``."""
        self._w.append((jnp.asarray(i).astype(I32) * NF + f, jnp.asarray(v).astype(I32)))

    def slot(self, k, v):
        self._w.append((jnp.asarray(self.e + k, I32), jnp.asarray(v).astype(I32)))

    def commit(self, scalars=True):
        k = jnp.stack([i for i, _ in self._w])
        v = jnp.stack([v for _, v in self._w])
        later = jnp.triu(k[:, None] == k[None, :], 1).any(axis=1)
        k = jnp.where(later, (self.nil + 1) * NF + 2, k)  # overwritten writes -> a scratch slot
        if scalars:
            pb = jax.lax.bitcast_convert_type(jnp.asarray(self.p, jnp.float64), I32)
            k = jnp.concatenate([k, self.e + jnp.arange(17, dtype=I32)])
            v = jnp.concatenate([v, self.h, pb])
        self.a = self.a.at[k].set(v, mode="promise_in_bounds")
        self._w = []

    def hd(self, base, lst):
        return jax.lax.dynamic_index_in_dim(self.h, base + lst, keepdims=False)

    def hset(self, base, lst, v, en):
        self.h = jnp.where((self._ix == base + lst) & en, jnp.asarray(v).astype(I32), self.h)

    def size(self, lst):
        return self.h[SIZE + lst]

    def tail(self, lst):
        return self.h[TAIL + lst]

    def at(self, i, en):
        return jnp.where(en, i, self.nil)

    def remove(self, x, lst, px, nx, en):
        """Unlink ``x`` (row values ``px``, ``nx``) from list ``lst``; no-op when ``en`` is False."""
        nil = self.nil
        self.wr(self.at(px, en & (px != nil)), NEXT, nx)
        self.wr(self.at(nx, en & (nx != nil)), PREV, px)
        self.hset(HEAD, lst, nx, en & (px == nil))
        self.hset(TAIL, lst, px, en & (nx == nil))
        self.hset(SIZE, lst, self.hd(SIZE, lst) - 1, en)

    def push(self, x, lst, en):
        """Insert ``x`` (in no list) at the MRU end of ``lst`` (its meta word is the caller's)."""
        nil = self.nil
        h = self.hd(HEAD, lst)
        x_ = self.at(x, en)
        self.wr(x_, NEXT, h)
        self.wr(x_, PREV, nil)
        self.wr(self.at(h, en & (h != nil)), PREV, x)
        self.hset(TAIL, lst, x, en & (h == nil))
        self.hset(HEAD, lst, x, en)
        self.hset(SIZE, lst, self.hd(SIZE, lst) + 1, en)

    def output(self, hit, wb):
        self.wr(self.nil + 1, 0, hit.astype(I32) | (wb.astype(I32) << 1))
        self.commit()


def init_state(n_ids: int):
    a = jnp.zeros((n_ids + 2, NF), I32).at[:, PREV].set(n_ids).at[:, NEXT].set(n_ids).reshape(-1)
    ex = jnp.zeros(NX, I32).at[:10].set(n_ids)  # heads, tails = NIL; sizes, p (0.0), flags = 0
    return jnp.concatenate([a, ex])


def dirty(meta):
    return (meta & DIRTY) != 0


@partial(jax.jit, static_argnames=("step", "n_ids"), donate_argnums=(0,))
def scan_chunk(state, step, n_ids: int, ids, is_write, capacities):
    """One jitted scan over a chunk of accesses for the capacities given (one state each).

    The step handles several capacities in one scan body, but on XLA's CPU backend that measured 2-3x
    slower per capacity than one scan per capacity (independent kernels in one body are dispatched to
    a thread pool), so :func:`replay` calls it with one capacity at a time.

    ``state`` is a tuple over capacities of flat state arrays and is donated: the caller's buffers are
    reused, chunks of a long trace run one after another without copying it. Returns the new state and
    per access and capacity ``hit | dirty_eviction << 1`` (int8, ``(len(ids), len(capacities))``).
    """
    out_at = (n_ids + 1) * NF

    def body(st, xw):
        x, w = xw[0].astype(I32), xw[1]
        new, outs = [], []
        for k, a in enumerate(st):
            S = step(Cache(a, n_ids), x, w, capacities[k])
            new.append(S.a)
            outs.append(S.a[out_at].astype(jnp.int8))
        return tuple(new), jnp.stack(outs)

    return jax.lax.scan(body, state, (ids, is_write))


# --------------------------------------------------------------------------------------------------
# numba engine: the same lists as plain arrays (int32 links, uint8 meta), primitives compiled on first use
# --------------------------------------------------------------------------------------------------
@native.jit(inline="always")
def remove(x, lst, prev, nxt, head, tail, size, nil):
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


@native.jit(inline="always")
def push(x, lst, prev, nxt, head, tail, size, nil):
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


@native.jit(inline="always")
def admit(x, lst, keep, wbit, prev, nxt, meta, head, tail, size, nil):
    """Insert ``x`` at the MRU end of ``lst``; its meta word: the list, the dirty bit in ``keep``
    (the old meta's dirty bit, or 0) and ``wbit`` (the dirty bit when the access writes)."""
    push(x, lst, prev, nxt, head, tail, size, nil)
    meta[x] = lst | (keep & DIRTY) | wbit


#: Decorator of an algorithm's numba loop ``native_loop(ids, is_write, c, prev, nxt, meta, head, tail, size,
#: p_state, hit_out, wb_out)``, which calls the list primitives :func:`remove`, :func:`push` and :func:`admit`
#: by name: a :func:`tieringlab.native.jit` kernel (``nogil=True, cache=False``), compiled with the primitives
#: inlined on its first call, so numba is imported only when the numba engine runs. ``p_state[0]`` carries
#: the adaptive target ``p`` of ARC and CAR in and out (the loop reads it at the start and writes it at the
#: end), so a long trace can be replayed in chunks on one state, exactly as in one call.
#:
#: Each algorithm writes its own whole loop: a shared loop around an inlined per-access step was tried and
#: measured 10 % (LRU, ARC) to 2x (CAR) slower per access in numba, so the few lines of loop scaffolding stay
#: in each algorithm module.
native_kernel = native.jit(nogil=True, cache=False)


def native_state(n_ids: int):
    """Fresh numba-engine state for ``n_ids`` dense ids: the lists ``prev, nxt, meta, head, tail, size``
    (id ``n_ids`` is NIL) and ``p_state`` (one float64, ARC's and CAR's adaptive target ``p``, 0 at the
    start)."""
    if n_ids + 1 > np.iinfo(np.int32).max:
        raise ValueError(f"keys has {n_ids} distinct values; at most {np.iinfo(np.int32).max - 1} fit the int32 state")
    nil = n_ids
    prev = np.full(n_ids + 1, nil, np.int32)  # int32 links, uint8 meta: 9 bytes per id, cache-friendly
    nxt = np.full(n_ids + 1, nil, np.int32)
    meta = np.zeros(n_ids + 1, np.uint8)
    head = np.full(5, nil, np.int64)
    tail = np.full(5, nil, np.int64)
    size = np.zeros(5, np.int64)
    return prev, nxt, meta, head, tail, size, np.zeros(1, np.float64)


def unit_capacities(capacity, name: str = "capacity") -> np.ndarray:
    """Cache capacities in list units (pages), as a 1-D int64 array: whole numbers >= 1, or
    ``ValueError`` naming ``name``."""
    caps = np.atleast_1d(np.asarray(capacity))
    if caps.ndim != 1 or not np.issubdtype(caps.dtype, np.integer) and not np.all(caps == np.floor(caps)):
        raise ValueError(f"{name} must be an integer number of units (or a 1-D array of them); got {capacity!r}")
    caps = caps.astype(np.int64)
    if np.any(caps < 1):
        raise ValueError(f"{name} must be >= 1 unit; got {capacity!r}")
    return caps
