"""Compiled (numba) one-pass LRU stack distances: occupancy bits and counts over a compacting window of recency slots.

Each key seen so far owns one *slot*, the position of its latest access in a window of ``W`` slots, given
out in access order. When access ``i`` finds its key in slot ``s``, the distinct other keys accessed since
are exactly the keys whose latest access is later: the occupied slots after ``s``. The key then moves to the
next free slot. When the window is used up, the occupied slots (one per distinct key) are packed to its start
in order, and the window doubled when they would fill more than a quarter of it; so ``W`` follows the number
``K`` of distinct keys, not the trace length, and compaction costs ``O(1)`` amortized per access (at most one
write per live key every ``3W/4`` accesses).

Counting the occupied slots after ``s`` (the stack distance) uses three levels of counts instead of a Fenwick
tree: a bitmap with one bit per slot (64 slots per word), the occupied slots per *block* of 512 slots (one
64-byte line of the bitmap) and per *superblock* of 32,768 slots. The count is the bits after ``s`` in its
word and the rest of its block (at most 8 words, hardware popcount), the blocks after it in its superblock (at
most 63 contiguous int32) and the superblocks after it up to the newest slot (``W / 32768`` contiguous int32,
a few hundred at most for 10^6 keys). An access updates one bit and two counts where a Fenwick tree over the
slots updates ``2 log2 W`` scattered nodes; the bitmap of ``10^6`` keys' window is a few hundred KB and the
counts a few tens of KB, so they stay in the CPU's caches (figures: ``python -m benchmarks stackdist``).

Keys map to slots through an open-addressing hash table (linear probing, Fibonacci hashing of the int64 key,
doubled at load 1/2), key and slot side by side in one array (one cache line per probe); each slot records its
key's table entry, so compaction moves a key without probing. No sort and no dense-id remapping: an access
costs a probe, at most 8 popcounts and 63 additions, and one addition per superblock (``K / 8192`` at most);
memory ``O(K)``.

:func:`lru_onepass` writes the distances and/or counts them between the requested cache sizes (the hit count
at every size is a cumulative sum of those counts, :func:`tieringlab.models.stackdist.lru_hit_counts`), so a
hit-ratio curve needs no per-access array. :func:`tieringlab.models.stackdist.stack_distances` with
``method="arrays"`` is the numpy array-pass computation of the same distances; tests compare the two, and both
against a brute-force LRU stack.
"""

from __future__ import annotations

import numpy as np

from tieringlab import native

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing multiplier (2^64 / golden ratio)
_COLD = np.int64(np.iinfo(np.int64).max)
_ONE = np.uint64(1)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)
#: Initial window (slots, a multiple of the 512-slot block) and hash table (log2 of its entries): small, so
#: that short traces stay small; both double as the trace needs (tests exercise every growth path).
WIDTH0 = 1024
TABLE_BITS0 = 10


@native.jit(inline="always")
def _popcount(x):
    """Set bits of a uint64 (LLVM compiles this idiom to the CPU's popcount instruction)."""
    x = x - ((x >> _ONE) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return np.int64((x * _H01) >> np.uint64(56))


@native.jit(inline="always")
def _find(tab, key, shift, mask):
    """The entry holding ``key`` (``tab[2e]`` key, ``tab[2e + 1]`` slot), or the empty one where it would go."""
    j = np.int64((np.uint64(key) * _GOLDEN) >> shift) & mask
    while tab[2 * j + 1] >= 0 and tab[2 * j] != key:
        j = (j + 1) & mask
    return j


@native.jit(cache=False, nogil=True)
def lru_onepass(keys, out, bounds, counts):
    """LRU stack distances of int64 ``keys`` (``COLD`` when first): into ``out`` unless it is empty, and counted
    by bucket unless ``bounds`` is empty: ``counts[k] += 1`` where ``k = #{bounds <= d}`` (``bounds`` sorted
    ascending, ``counts`` of ``bounds.size + 1``), so the hits at capacity ``bounds[k]`` are
    ``counts[:k + 1].sum()``. A binary search over a hundred sizes stays in L1, where a histogram over every
    distance (megabytes, incremented at random) does not."""
    n = keys.size
    n_bounds = bounds.size
    write = out.size > 0
    bits = TABLE_BITS0
    mask = (1 << bits) - 1
    shift = np.uint64(64 - bits)
    tab = np.full(2 << bits, -1, np.int64)
    n_keys = 0
    width = WIDTH0
    occ = np.zeros(width >> 6, np.uint64)                   # one bit per occupied slot
    blk = np.zeros(width >> 9, np.int32)                    # occupied slots per block of 512
    sup = np.zeros((width + 32767) >> 15, np.int32)         # occupied slots per superblock of 32768
    slot_ent = np.zeros(width, np.int64)                    # the table entry of each slot's key
    nxt = 0  # next free slot
    live = 0  # occupied slots = distinct keys seen
    for i in range(n):
        key = keys[i]
        j = _find(tab, key, shift, mask)
        s = tab[2 * j + 1]
        if s >= 0:
            w = s >> 6
            b = s >> 9
            sb = s >> 15
            sh = np.uint64(s & 63)
            d = _popcount(occ[w] >> sh) - 1                 # after s in its word (s itself is set)
            for q in range(w + 1, (b + 1) << 3):            # the rest of its block
                d += _popcount(occ[q])
            for q in range(b + 1, min((sb + 1) << 6, blk.size)):    # the rest of its superblock
                d += blk[q]
            for q in range(sb + 1, ((nxt - 1) >> 15) + 1):  # the superblocks up to the newest slot
                d += sup[q]
            occ[w] ^= _ONE << sh
            blk[b] -= 1
            sup[sb] -= 1
            live -= 1
        else:
            d = _COLD
            tab[2 * j] = key
            n_keys += 1
        if write:
            out[i] = d
        if n_bounds > 0:
            lo = 0
            hi = n_bounds
            while lo < hi:                                   # lo = #{bounds <= d}
                mid = (lo + hi) >> 1
                if bounds[mid] <= d:
                    lo = mid + 1
                else:
                    hi = mid
            counts[lo] += 1
        if nxt == width:  # pack the occupied slots to the front (and double the window while they fill > 1/4)
            while 4 * live > width:
                width *= 2
            new_ent = np.empty(width, np.int64)
            m = 0
            for q in range(nxt >> 6):
                x = occ[q]
                while x:
                    t = _popcount((x & (-x)) - _ONE)        # the lowest set bit
                    x &= x - _ONE
                    e = slot_ent[(q << 6) + t]
                    tab[2 * e + 1] = m
                    new_ent[m] = e
                    m += 1
            slot_ent = new_ent
            occ = np.zeros(width >> 6, np.uint64)
            for q in range(m >> 6):
                occ[q] = _ALL
            if m & 63:
                occ[m >> 6] = (_ONE << np.uint64(m & 63)) - _ONE
            blk = np.zeros(width >> 9, np.int32)
            for q in range(blk.size):
                blk[q] = min(512, max(0, m - (q << 9)))
            sup = np.zeros((width + 32767) >> 15, np.int32)
            for q in range(sup.size):
                sup[q] = min(32768, max(0, m - (q << 15)))
            nxt = m                                          # the table did not move: entry j is still the key's
        tab[2 * j + 1] = nxt
        slot_ent[nxt] = j
        occ[nxt >> 6] |= _ONE << np.uint64(nxt & 63)
        blk[nxt >> 9] += 1
        sup[nxt >> 15] += 1
        nxt += 1
        live += 1
        if 2 * n_keys > mask + 1:  # rehash into a table twice as large (the slots learn their keys' new entries)
            bits += 1
            mask = (1 << bits) - 1
            shift = np.uint64(64 - bits)
            old = tab
            tab = np.full(2 << bits, -1, np.int64)
            for e in range(old.size >> 1):
                v = old[2 * e + 1]
                if v >= 0:
                    k = _find(tab, old[2 * e], shift, mask)
                    tab[2 * k] = old[2 * e]
                    tab[2 * k + 1] = v
                    slot_ent[v] = k
