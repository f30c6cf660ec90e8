"""Compiled (numba) kernels of the resizing LRU of :mod:`tieringlab.models.stackdist`.

An LRU whose capacity changes at every access is sequential by nature: whether access ``i`` hits
depends on how many items survived every earlier shrink. Both kernels are one pass over the accesses
(tens of nanoseconds each), the shape the fixed-size page caches of :mod:`tieringlab.policies._arraylist`
have; they are :func:`tieringlab.native.jit` kernels, so numba is imported (and the kernels compiled, about a
second each) only when they first run, in each process.

:func:`resizing_lru_keys` — from the keys. An open-addressing hash table (linear probing,
backward-shift deletion, multiplicative hashing of the int64 key) maps each *resident* key to a node
of a pool of ``max(capacity) + 1`` nodes; the nodes form one doubly linked list, most recently used at
the head. Memory and the table size follow the largest capacity, not the trace length or its number
of distinct keys, so there is no sort and no dense-id remapping (which is most of the cost of the
fixed-size engine on a long trace).

:func:`resizing_lru_distances` — from exact stack distances ``d``. The resident set of an LRU that
inserts on a miss, evicts from the tail and may be shrunk at any time is always the top ``m`` entries
of the trace's LRU stack (a hit at depth < m leaves the top-m set unchanged; a miss pushes a new top
and either m grows by one or the old m-th entry, now at depth m + 1, is evicted; a shrink drops tail
entries; a growth changes nothing until later misses). So, with ``m`` the number of resident items:

    m' = min(m, capacity[i])                 (evict down to the capacity before access i)
    hit_i = d_i < m'
    m  = min(capacity[i], m' + (1 - hit_i))   (a miss inserts; at capacity 0 nothing is kept)

a scalar recursion, no per-item state.
"""

from __future__ import annotations

import numpy as np

from tieringlab import native

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing multiplier (2^64 / golden ratio)


@native.jit(inline="always")
def _slot(key, shift, mask):
    return np.int64((np.uint64(key) * _GOLDEN) >> shift) & mask


@native.jit(inline="always")
def _evict_tail(head, tail, count, n_free, prv, nxt, node_key, t_key, t_node, free, shift, mask):
    """Drop the least recently used node: unlink it, delete its key from the table (backward-shift
    deletion: the cluster after the hole moves up unless its home lies cyclically in ``(hole, k]``),
    free the node. Returns the new ``(head, tail, count, n_free)``."""
    v = tail
    tail = prv[v]
    if tail >= 0:
        nxt[tail] = -1
    else:
        head = -1
    j = _slot(node_key[v], shift, mask)
    while t_node[j] != v:
        j = (j + 1) & mask
    k = (j + 1) & mask
    while t_node[k] >= 0:
        home = _slot(t_key[k], shift, mask)
        if ((k - home) & mask) >= ((k - j) & mask):
            t_key[j] = t_key[k]
            t_node[j] = t_node[k]
            j = k
        k = (k + 1) & mask
    t_node[j] = -1
    free[n_free] = v
    return head, tail, count - 1, n_free + 1


@native.jit(cache=False, nogil=True)
def resizing_lru_keys(keys, capacity, table_bits, hit_out, occupancy_out):
    """Resizing LRU over int64 ``keys`` with per-access ``capacity`` (int64, >= 0).

    ``table_bits``: log2 of the hash-table size (at least one bit more than ``max(capacity) + 1``
    needs, so the load stays <= 1/2). Writes ``hit_out[i]`` and ``occupancy_out[i]`` (items resident
    after access i).
    """
    n_nodes = 1
    for i in range(capacity.size):
        if capacity[i] + 1 > n_nodes:
            n_nodes = capacity[i] + 1
    size = np.int64(1) << table_bits
    mask = size - 1
    shift = np.uint64(64 - table_bits)
    t_key = np.zeros(size, np.int64)
    t_node = np.full(size, -1, np.int64)  # -1: empty slot
    node_key = np.zeros(n_nodes, np.int64)
    prv = np.full(n_nodes, -1, np.int64)
    nxt = np.full(n_nodes, -1, np.int64)
    free = np.arange(n_nodes - 1, -1, -1)  # stack of free node ids
    n_free = n_nodes
    head = -1  # most recently used
    tail = -1  # least recently used
    count = 0
    for i in range(keys.size):
        c = capacity[i]
        while count > c:  # evict least recently used items until at most c remain
            head, tail, count, n_free = _evict_tail(head, tail, count, n_free, prv, nxt, node_key, t_key, t_node,
                                                    free, shift, mask)
        x = keys[i]
        j = _slot(x, shift, mask)
        while t_node[j] >= 0 and t_key[j] != x:
            j = (j + 1) & mask
        if t_node[j] >= 0:  # hit: move to the head
            hit_out[i] = True
            u = t_node[j]
            if u != head:
                p, q = prv[u], nxt[u]
                nxt[p] = q
                if q >= 0:
                    prv[q] = p
                else:
                    tail = p
                prv[u] = -1
                nxt[u] = head
                prv[head] = u
                head = u
        else:
            hit_out[i] = False
            if c > 0:
                if count >= c:  # full: evict the tail first
                    head, tail, count, n_free = _evict_tail(head, tail, count, n_free, prv, nxt, node_key, t_key,
                                                            t_node, free, shift, mask)
                    # the deletion may have shifted entries into x's probe path: find x's slot again
                    j = _slot(x, shift, mask)
                    while t_node[j] >= 0:
                        j = (j + 1) & mask
                n_free -= 1
                u = free[n_free]
                node_key[u] = x
                t_key[j] = x
                t_node[j] = u
                prv[u] = -1
                nxt[u] = head
                if head >= 0:
                    prv[head] = u
                else:
                    tail = u
                head = u
                count += 1
        occupancy_out[i] = count


@native.jit(cache=False, nogil=True)
def resizing_lru_distances(distances, capacity, hit_out, occupancy_out):
    """The scalar recursion of the module docstring over exact stack distances (int64)."""
    m = 0
    for i in range(distances.size):
        c = capacity[i]
        if m > c:
            m = c
        h = distances[i] < m
        hit_out[i] = h
        if not h and m < c:
            m += 1
        occupancy_out[i] = m
