"""Exact LRU stack (reuse) distances and hit-ratio curves at every cache size at once.

Mattson, Gecsei, Slutz and Traiger ("Evaluation techniques for storage hierarchies", IBM Systems
Journal 9(2), 1970) observed that LRU is a *stack algorithm*: the content of an LRU cache of capacity
``C`` is always the ``C`` most recently used keys. An access therefore hits in every LRU cache whose
capacity exceeds its **stack distance** ``d(i)``: the number of *distinct other* keys accessed since the
previous access to the same key. One pass over the trace gives the hit count at every capacity:

    hits(C) = #{i : d(i) < C}                                   (unit-size keys, capacity in keys)

How the distances are computed (no Python loop per access). Let ``p(i)`` be the previous access to
the key of access ``i`` and ``nxt(j)`` the next access to the key of access ``j`` (``+inf`` if none).
Each distinct key seen in ``(p(i), i)`` is counted once, at its last access ``j`` in that window, which
is the access with ``nxt(j) > i``:

    d(i) = #{j : p(i) < j < i, nxt(j) > i}
         = #{j < i : nxt(j) > i} - #{j <= p(i) : nxt(j) > i}
         = (D(i) - 1) - #{j < p(i) : nxt(j) > nxt(p(i))}          since nxt(p(i)) = i,

where ``D(i)`` is the number of distinct keys in accesses ``0 .. i-1`` (a prefix sum). In the last term,
accesses that are never reused (``nxt = inf``) exceed every finite ``nxt`` and are counted by another
prefix sum; what remains is the per-element inversion count of the finite ``nxt`` values (how many
earlier entries are larger), an offline 2-D dominance count. It is computed level by level over the
bits of the ranks of ``nxt`` (the wavelet-matrix construction): after stably partitioning by the most
significant bits, equal bit-prefixes form contiguous runs in original order, and at bit ``b`` an
element with bit 0 gains the number of earlier elements in its run that have bit 1. Each of the
``ceil(log2 n)`` levels is a handful of sequential numpy passes (shift, cumulative sum, running
maximum, scatter of a stable partition), and the previous-access links come from an LSD radix sort of
the keys, so the whole trace costs ``O(n log n)`` array work and no Python loop per access.

Why numpy and not JAX here: the algorithm is sorting, partitioning and gathering over 10^7-element
arrays. A jitted ``lax.scan`` over accesses with a Fenwick tree (the other candidate) was measured
during development at 7.7 s for 10^5 Zipf accesses on this project's 2-core CPU machine, against
0.06 s for these whole-array passes, so numpy it is. The functions are deterministic and take no key.

Sentinel: a first access to a key has no previous access; its distance is :data:`COLD`
(``np.iinfo(np.int64).max``), so ``d < C`` is false at every capacity and cold misses need no special
case. Distances are int64.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "COLD",
    "stack_distances",
    "hit_counts_from_distances",
    "lru_hit_counts",
    "lru_hit_ratios",
    "request_stack_distances",
    "lru_request_hits",
]

#: Stack distance of a first (cold) access: larger than any capacity, so it misses at every size.
COLD: int = int(np.iinfo(np.int64).max)


def _as_keys(keys, name: str = "keys") -> np.ndarray:
    arr = np.asarray(keys)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of integer keys, got shape {arr.shape}")
    if arr.size and not (np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_):
        raise TypeError(f"{name} must have an integer dtype (any int64 key is allowed), got {arr.dtype}")
    return arr


def _as_sizes(sizes) -> np.ndarray:
    arr = np.asarray(sizes)
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        if np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise TypeError(f"sizes must be integer cache capacities (in keys/units), got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    if arr.size and arr.min() < 0:
        raise ValueError(f"sizes must be >= 0 (cache capacity in keys/units), got min {int(arr.min())}")
    return arr


def _previous_access(keys: np.ndarray) -> np.ndarray:
    """``prev[i]`` = index of the previous access to ``keys[i]`` (``-1`` if none).

    A stable sort of the keys orders accesses by (key, time), so consecutive entries of one key are
    (previous, current) pairs. The sort is an LSD radix sort on 16-bit digits of ``key - min(key)``
    (numpy's stable argsort of ``uint16`` is a counting sort), one pass per 16 bits of the key range.
    """
    n = keys.size
    u = keys.astype(np.int64, copy=False).view(np.uint64) ^ np.uint64(1 << 63)  # order-preserving
    u = u - u.min()
    span = int(u.max())
    order = None
    shift = 0
    while True:
        digit = ((u >> np.uint64(shift)) & np.uint64(0xFFFF)).astype(np.uint16)
        order = np.argsort(digit, kind="stable") if order is None else order[
            np.argsort(digit[order], kind="stable")]
        shift += 16
        if shift >= 64 or span >> shift == 0:
            break
    ks = u[order]
    same = ks[1:] == ks[:-1]
    prev = np.full(n, -1, dtype=np.int64)
    prev[order[1:][same]] = order[:-1][same]
    return prev


def _earlier_greater_counts(values: np.ndarray) -> np.ndarray:
    """``out[p] = #{j < p : values[j] > values[p]}`` for *distinct* ints in ``[0, len(values))``.

    Wavelet-matrix levels, most significant bit first. Before level ``b`` the array is stably sorted by
    the bit-reversed prefix ``values >> (b + 1)``, so each prefix is one contiguous run in original
    order; an element whose bit ``b`` is 0 is exceeded by exactly the earlier run members whose bit
    ``b`` is 1 (they agree above ``b``). Summing over levels counts every larger earlier value once,
    at the highest bit where the two differ. Each level is a few sequential passes: a cumulative sum,
    a running maximum and the scatter of the stable partition (with ``intp`` indices, which numpy
    scatters several times faster than ``int32`` ones that it must convert first).
    """
    n = values.size
    out = np.zeros(n, dtype=np.int64)
    if n < 2:
        return out
    n_bits = int(n - 1).bit_length()
    dt = np.int32 if n < 2**29 else np.int64  # narrow lanes; 3n must fit for the partition arithmetic
    cur = values.astype(dt)
    acc = np.zeros(n, dtype=dt)
    ar = np.arange(n, dtype=dt)
    bit = np.empty(n, dtype=dt)
    ones = np.empty(n, dtype=dt)
    tmp = np.empty(n, dtype=dt)
    scratch = np.empty(n, dtype=dt)
    dest = np.empty(n, dtype=np.intp)  # scatter indices in intp: numpy would convert narrower ones
    starts = np.empty(n, dtype=bool)
    starts[0] = True
    for b in range(n_bits - 1, -1, -1):
        np.right_shift(cur, b + 1, out=tmp)  # the prefix above bit b: one run per value
        np.not_equal(tmp[1:], tmp[:-1], out=starts[1:])
        np.right_shift(cur, b, out=bit)
        np.bitwise_and(bit, 1, out=bit)
        np.cumsum(bit, out=ones)
        ones -= bit  # ones strictly before each element
        n_zero = n - int(ones[-1] + bit[-1])
        # ones before the start of each run (ones is non-decreasing: a running max spreads it)
        np.multiply(ones, starts, out=tmp)
        np.maximum.accumulate(tmp, out=tmp)
        np.subtract(ones, tmp, out=tmp)
        np.multiply(tmp, bit, out=scratch)
        tmp -= scratch  # keep only elements whose bit is 0
        acc += tmp
        # stable partition, zeros first: a zero goes to i - ones, a one to n_zero + ones, i.e.
        # dest = (i - ones) + bit * (n_zero + 2 ones - i), in narrow lanes, then widened to intp
        np.subtract(ar, ones, out=tmp)
        np.add(ones, ones, out=scratch)
        scratch += n_zero
        scratch -= ar
        scratch *= bit
        tmp += scratch
        dest[...] = tmp
        moved = np.empty_like(cur)
        moved[dest] = cur
        cur = moved
        moved = np.empty_like(acc)
        moved[dest] = acc
        acc = moved
    # values are distinct in [0, n): cur[k] is the value of the element whose count is acc[k]
    where = np.empty(n, dtype=np.int64)
    where[values] = np.arange(n)
    out[where[cur]] = acc
    return out


def stack_distances(keys) -> np.ndarray:
    """LRU stack distance of every access (Mattson et al. 1970), ``int64``, same length as ``keys``.

    ``d(i)`` is the number of distinct *other* keys accessed since the previous access to ``keys[i]``;
    a first access gets :data:`COLD`. Access ``i`` hits in a unit-size LRU cache of capacity ``C`` iff
    ``d(i) < C``. Keys may be any integers (int64 range).

    >>> stack_distances([1, 2, 1, 3, 2, 2]).tolist()[2:]
    [1, 9223372036854775807, 2, 0]
    """
    keys = _as_keys(keys)
    n = keys.size
    if n == 0:
        return np.empty(0, dtype=np.int64)
    prev = _previous_access(keys)
    reuse = prev >= 0
    r = np.flatnonzero(reuse)  # accesses with a previous access, in time order
    q = prev[r]  # their previous accesses: the accesses that have a next one (nxt(q[k]) = r[k])
    out = np.full(n, COLD, dtype=np.int64)
    if r.size == 0:
        return out
    # inv(p) = #{j < p : nxt(j) > nxt(p)} for p in q. Accesses without a next access (nxt = inf) are
    # larger than every finite nxt: count them with a prefix sum; the rest is an inversion count over
    # the accesses that have a next access, in time order, with nxt ranked by position among r.
    has_next = np.zeros(n, dtype=bool)
    has_next[q] = True
    qs = np.flatnonzero(has_next)  # the accesses having a next one, in time order
    nxt = np.empty(n, dtype=np.int64)
    nxt[q] = np.arange(r.size)  # rank of nxt(q) among r: distinct values in [0, len(r))
    no_next_before = np.cumsum(~has_next) - (~has_next)
    inv = np.empty(n, dtype=np.int64)
    inv[qs] = _earlier_greater_counts(nxt[qs]) + no_next_before[qs]
    # D(i): distinct keys among accesses 0 .. i-1
    distinct_before = np.cumsum(~reuse) - (~reuse)
    out[r] = distinct_before[r] - 1 - inv[q]
    return out


def hit_counts_from_distances(distances, sizes) -> np.ndarray:
    """``hits[k] = #{i : distances[i] < sizes[k]}`` (int64), for any distances (``COLD`` never hits).

    The shared last step of :func:`lru_hit_counts` and :func:`lru_request_hits`: one clipped histogram
    and a cumulative sum give every capacity at once.
    """
    d = np.asarray(distances)
    sizes = _as_sizes(sizes)
    if sizes.size == 0:
        return np.zeros(sizes.shape, dtype=np.int64)
    if d.size and d.min() < 0:
        raise ValueError("distances must be >= 0 (use COLD for accesses that never hit)")
    cap = int(sizes.max())
    small = d[d < cap].astype(np.int64)  # the only distances that hit at some requested size
    hist = np.bincount(small)  # length max(small) + 1, never more than the distances seen
    cum = np.concatenate(([0], np.cumsum(hist)))  # cum[C] = #{d < C} for C <= len(hist)
    return cum[np.minimum(sizes, hist.size)].astype(np.int64)


def lru_hit_counts(keys, sizes) -> np.ndarray:
    """Hit counts of a unit-size LRU cache at each capacity in ``sizes`` (int64, shaped like ``sizes``).

    Equal to simulating LRU separately at every capacity (Mattson's inclusion property), including
    capacity 0 (no hits).
    """
    return hit_counts_from_distances(stack_distances(keys), sizes)


def lru_hit_ratios(keys, sizes) -> np.ndarray:
    """Hit ratio (hits / accesses, float64) of a unit-size LRU cache at each capacity in ``sizes``.

    ``sizes`` are capacities in keys; the result has the shape of ``sizes``. Raises ``ValueError`` on
    an empty trace (the ratio is undefined).
    """
    keys = _as_keys(keys)
    if keys.size == 0:
        raise ValueError("keys is empty: the hit ratio of an empty trace is undefined")
    return lru_hit_counts(keys, sizes) / float(keys.size)


def _request_starts(request_index, n_units: int) -> np.ndarray:
    ri = np.asarray(request_index)
    if ri.ndim != 1 or ri.size != n_units:
        raise ValueError(
            f"request_index must be 1-D with one entry per unit ({n_units}), got shape {ri.shape}")
    if ri.size and not np.issubdtype(ri.dtype, np.integer):
        raise TypeError(f"request_index must be integers, got dtype {ri.dtype}")
    if n_units == 0:
        return np.empty(0, dtype=np.int64)
    step = np.diff(ri)
    if step.size and step.min() < 0:
        bad = int(np.flatnonzero(step < 0)[0]) + 1
        raise ValueError(
            "request_index must be non-decreasing (the units of one request are contiguous and in "
            f"order); it decreases at unit {bad}")
    return np.concatenate(([0], np.flatnonzero(step) + 1)).astype(np.int64)


def request_stack_distances(unit_keys, request_index) -> np.ndarray:
    """Stack distance of each multi-unit request: the max over its units (int64, one per request).

    ``unit_keys`` lists the units (e.g. 4 KB pages) of every request in order and ``request_index``
    (non-decreasing, same length) says which request each unit belongs to. All units go through one
    LRU in order, and a request hits at capacity ``C`` iff all its units hit, i.e. iff this maximum is
    ``< C`` (``COLD`` if any unit is a first access). Requests appear in order of ``request_index``.
    """
    keys = _as_keys(unit_keys, "unit_keys")
    starts = _request_starts(request_index, keys.size)
    if keys.size == 0:
        return np.empty(0, dtype=np.int64)
    return np.maximum.reduceat(stack_distances(keys), starts)


def lru_request_hits(unit_keys, request_index, sizes) -> np.ndarray:
    """Request-level LRU hit counts at each capacity in ``sizes`` (capacity in units), int64.

    A request made of several units (the 4 KB pages of one IO, in order) is a hit iff all of its units
    hit; see :func:`request_stack_distances`. This is the vFRM paper's IO hit ratio numerator
    (Sec. 5.1: "an IO request [is] Flash hit only when all of its associated pages are cached").
    """
    return hit_counts_from_distances(request_stack_distances(unit_keys, request_index), sizes)
