"""Compiled (numba) one-pass LRU stack distances: a Fenwick tree over a compacting window of recency slots.

Each key seen so far owns one *slot*, the position of its latest access in a window of ``W`` slots, given
out in access order; a Fenwick (binary indexed) tree counts the occupied slots. When access ``i`` finds its
key in slot ``s``, the distinct other keys accessed since are exactly the keys whose latest access is later:
the occupied slots after ``s``, ``live - prefix(s)``, one ``O(log W)`` query. The key then moves to the next
free slot (two point updates). When the window is used up, the occupied slots (one per distinct key) are
packed to its start in order, the tree rebuilt in ``O(W)``, and the window doubled when they fill more than
half of it; so ``W`` follows the number of distinct keys, not the trace length (a 10^6-key working set keeps a
tree of a few MB that stays in cache), and compaction costs ``O(1)`` amortized per access.

Keys map to slots through an open-addressing hash table (linear probing, Fibonacci hashing of the int64 key,
doubled at load 1/2): no sort and no dense-id remapping, so the pass is ``O(n log K)`` for ``K`` distinct keys.
:func:`tieringlab.models.stackdist.stack_distances` is the numpy array-pass computation of the same
distances; tests compare the two, and both against a brute-force LRU stack.
"""

from __future__ import annotations

import numpy as np

from tieringlab import native

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing multiplier (2^64 / golden ratio)
_COLD = np.int64(np.iinfo(np.int64).max)


@native.jit(inline="always")
def _home(key, shift):
    return np.int64((np.uint64(key) * _GOLDEN) >> shift)


@native.jit(inline="always")
def _find(t_key, t_val, key, shift, mask):
    """The table index holding ``key``, or the empty index where it would go (``t_val < 0`` there)."""
    j = _home(key, shift) & mask
    while t_val[j] >= 0 and t_key[j] != key:
        j = (j + 1) & mask
    return j


@native.jit(inline="always")
def _fenwick_add(tree, pos, delta):
    i = pos + 1
    while i < tree.size:
        tree[i] += delta
        i += i & (-i)


@native.jit(inline="always")
def _fenwick_prefix(tree, pos):
    """Occupied slots in ``[0, pos]``."""
    total = 0
    i = pos + 1
    while i > 0:
        total += tree[i]
        i -= i & (-i)
    return total


@native.jit(cache=False, nogil=True)
def stack_distances_onepass(keys, out):
    """Write the LRU stack distance of every access of int64 ``keys`` into ``out`` (``COLD`` when first)."""
    n = keys.size
    bits = 10
    mask = (1 << bits) - 1
    shift = np.uint64(64 - bits)
    t_key = np.zeros(1 << bits, np.int64)
    t_val = np.full(1 << bits, -1, np.int64)  # the key's slot; -1: empty entry
    n_keys = 0
    width = 1024
    tree = np.zeros(width + 1, np.int32)
    slot_key = np.zeros(width, np.int64)
    slot_used = np.zeros(width, np.bool_)
    nxt = 0  # next free slot
    live = 0  # occupied slots = distinct keys seen
    for i in range(n):
        key = keys[i]
        j = _find(t_key, t_val, key, shift, mask)
        if t_val[j] >= 0:
            s = t_val[j]
            out[i] = live - _fenwick_prefix(tree, s)
            _fenwick_add(tree, s, -1)
            slot_used[s] = False
            live -= 1
        else:
            out[i] = _COLD
            t_key[j] = key
            n_keys += 1
        if nxt == width:  # pack the occupied slots to the front (and double the window when they fill half)
            if 2 * live > width:
                width *= 2
            new_key = np.zeros(width, np.int64)
            new_used = np.zeros(width, np.bool_)
            tree = np.zeros(width + 1, np.int32)
            m = 0
            for s in range(nxt):
                if slot_used[s]:
                    new_key[m] = slot_key[s]
                    new_used[m] = True
                    t_val[_find(t_key, t_val, slot_key[s], shift, mask)] = m
                    tree[m + 1] = 1
                    m += 1
            for p in range(1, width + 1):  # O(W) Fenwick build from the point values
                q = p + (p & (-p))
                if q <= width:
                    tree[q] += tree[p]
            slot_key, slot_used, nxt = new_key, new_used, m
            j = _find(t_key, t_val, key, shift, mask)  # the table did not move; the entry stays where it is
        t_val[j] = nxt
        slot_key[nxt] = key
        slot_used[nxt] = True
        _fenwick_add(tree, nxt, 1)
        nxt += 1
        live += 1
        if 2 * n_keys > mask + 1:  # rehash into a table twice as large
            bits += 1
            mask = (1 << bits) - 1
            shift = np.uint64(64 - bits)
            old_key, old_val = t_key, t_val
            t_key = np.zeros(1 << bits, np.int64)
            t_val = np.full(1 << bits, -1, np.int64)
            for e in range(old_val.size):
                if old_val[e] >= 0:
                    k = _find(t_key, t_val, old_key[e], shift, mask)
                    t_key[k] = old_key[e]
                    t_val[k] = old_val[e]
