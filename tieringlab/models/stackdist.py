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

Resizing LRU (:func:`resizing_lru_hits`, :func:`resizing_lru_from_distances`): an LRU whose
capacity may change at every access, the SSD partition of the EAFC paper (Sec. III: "one LRU per
workload, where LRU size can be changed"). Its resident set is always the top ``m`` entries of the LRU
stack (proof in :mod:`tieringlab.models._resizing`), so from the stack distances a hit is
``d(i) < min(m, capacity[i])`` with ``m`` a scalar recursion; from the keys a compiled one-pass LRU
with a hash table sized by the largest capacity needs no sort at all. Both are sequential one-pass
loops compiled by numba (a per-access recursion has no array form).

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
    "resizing_lru_hits",
    "resizing_lru_from_distances",
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
    """``prev[i]`` = index of the previous access to ``keys[i]`` (``-1`` if none), ``intp``.

    A stable sort of the keys orders accesses by (key, time), so consecutive entries of one key are
    (previous, current) pairs. The sort is an LSD radix sort on 16-bit digits of ``key - min(key)``
    (numpy's stable argsort of ``uint16`` is a counting sort), one pass per 16 bits of the key range;
    the digits are taken from 32-bit lanes when the key range fits (half the memory traffic).
    """
    n = keys.size
    u = keys.astype(np.int64, copy=False).view(np.uint64) ^ np.uint64(1 << 63)  # order-preserving
    u = u - u.min()
    span = int(u.max())
    if span < 2**32:
        u = u.astype(np.uint32)
    order = None
    shift = 0
    while True:
        digit = (u >> u.dtype.type(shift)).astype(np.uint16)  # astype keeps the low 16 bits
        order = np.argsort(digit, kind="stable") if order is None else order[
            np.argsort(digit[order], kind="stable")]
        del digit
        shift += 16
        if shift >= 64 or span >> shift == 0:
            break
    ks = u[order]
    del u
    same = ks[1:] == ks[:-1]
    del ks
    prev = np.empty(n, dtype=np.intp)
    prev[order[0]] = -1
    prev[order[1:]] = np.where(same, order[:-1], -1)  # one full scatter: cheaper than compressing twice
    return prev


def _earlier_greater_by_value(values: np.ndarray, acc0: np.ndarray) -> np.ndarray:
    """``res[v] = acc0[p] + #{j < p : values[j] > v}`` where ``p`` is the position of value ``v``.

    ``values`` must be a permutation of ``[0, len(values))``. Wavelet-matrix levels, most significant
    bit first. Before level ``b`` the array is stably sorted by the bit-reversed prefix
    ``values >> (b + 1)``, so each prefix is one contiguous run in original order; an element whose bit
    ``b`` is 0 is exceeded by exactly the earlier run members whose bit ``b`` is 1 (they agree above
    ``b``). Summing over levels counts every larger earlier value once, at the highest bit where the two
    differ. Each level is a few sequential passes: the run starts (while runs are few, at most m/16,
    their positions follow from the run sizes alone), an exclusive cumulative sum of the bit, the
    spread of the ones before each run start (``np.repeat`` while runs are few, a running maximum once
    they are many: numpy's ``maximum.accumulate`` is several times slower than a ``cumsum`` or a
    ``repeat`` of long runs), and the scatter of the stable partition into spare buffers (with ``intp``
    indices, which numpy scatters several times faster than ``int32`` ones that it must convert
    first). Multiplying by the bit is used instead of masked (``where=``) ufuncs, which measured an
    order of magnitude slower. The result is returned indexed by value, which is how
    :func:`_distances_from_previous` needs it.
    """
    m = values.size
    dt = np.int32 if m < 2**29 else np.int64  # narrow lanes; 3m must fit for the partition arithmetic
    cur = values.astype(dt)
    acc = acc0.astype(dt)
    if m >= 2:
        n_bits = int(m - 1).bit_length()
        ar = np.arange(m, dtype=dt)
        bit = np.empty(m, dtype=dt)
        ones = np.empty(m, dtype=dt)
        tmp = np.empty(m, dtype=dt)
        scratch = np.empty(m, dtype=dt)
        dest = np.empty(m, dtype=np.intp)
        starts = np.empty(m, dtype=bool)
        starts[0] = True
        ones[0] = 0
        cur_spare = np.empty_like(cur)
        acc_spare = np.empty_like(acc)
        run_order = np.zeros(1, dtype=np.int64)  # the prefixes in their order in the arrangement
        for b in range(n_bits - 1, -1, -1):
            n_runs = ((m - 1) >> (b + 1)) + 1  # values are 0 .. m-1: every prefix below this occurs
            few = n_runs <= m >> 4
            if few:
                # the stable partitions put prefix 2Q (bit b+1 = 0) of every earlier run Q first, then
                # every 2Q + 1; a prefix P holds min(2^(b+1), m - P 2^(b+1)) values: the runs' positions
                # follow without reading the m-element arrays
                if b < n_bits - 1:
                    run_order = np.concatenate((2 * run_order, 2 * run_order + 1))
                    run_order = run_order[run_order < n_runs]
                lengths = np.minimum(1 << (b + 1), m - (run_order << (b + 1)))
                first = np.cumsum(lengths) - lengths
            else:
                np.right_shift(cur, b + 1, out=tmp)  # the prefix above bit b: one run per value
                np.not_equal(tmp[1:], tmp[:-1], out=starts[1:])
            np.right_shift(cur, b, out=bit)
            np.bitwise_and(bit, 1, out=bit)
            np.cumsum(bit[:-1], out=ones[1:])  # ones strictly before each element
            n_zero = m - int(ones[-1]) - int(bit[-1])
            # ones before the start of each run (ones is non-decreasing): spread the value at each run
            # start over its run, by np.repeat while runs are long (few), else by a running maximum
            if few:
                tmp[...] = np.repeat(ones[first], lengths)
                del lengths, first
            else:
                np.multiply(ones, starts, out=tmp)
                np.maximum.accumulate(tmp, out=tmp)
            np.subtract(ones, tmp, out=tmp)
            np.multiply(tmp, bit, out=scratch)
            tmp -= scratch  # keep only elements whose bit is 0
            acc += tmp
            # stable partition, zeros first: a zero goes to z = i - ones, a one to n_zero + ones, i.e.
            # dest = z + bit * (n_zero + ones - z), in narrow lanes, then widened to intp
            np.subtract(ar, ones, out=tmp)
            np.add(ones, n_zero, out=scratch)
            scratch -= tmp
            scratch *= bit
            tmp += scratch
            dest[...] = tmp
            # scatter into the spare buffers and swap (no fresh allocation, so no page faults, per level)
            cur_spare[dest] = cur
            cur, cur_spare = cur_spare, cur
            acc_spare[dest] = acc
            acc, acc_spare = acc_spare, acc
        del cur_spare, acc_spare, ar, bit, ones, tmp, scratch, dest, starts
    res = np.empty(m, dtype=dt)
    res[cur] = acc  # values are distinct in [0, m): cur[k] is the value of the element with acc[k]
    return res


def _earlier_greater_counts(values: np.ndarray) -> np.ndarray:
    """``out[p] = #{j < p : values[j] > values[p]}`` (int64) for *distinct* ints in ``[0, len(values))``.

    See :func:`_earlier_greater_by_value` for the wavelet-matrix levels.
    """
    values = np.asarray(values)
    by_value = _earlier_greater_by_value(values, np.zeros(values.size, dtype=np.int64))
    return by_value[values].astype(np.int64)


def _distances_from_previous(prev: np.ndarray) -> np.ndarray:
    """Stack distances (int64, ``COLD`` for first accesses) from the previous-access links ``prev``.

    With ``r`` the accesses that have a previous one (time order) and ``q = prev[r]``, the access
    ``q[v]`` has next access ``r[v]``, so ``v`` is the rank of ``nxt(q[v])`` among ``r``. Then
    ``D(r[v]) = r[v] - v`` (every earlier access that is not a reuse brings a new key) and the
    accesses before ``q[v]`` without a next access number ``q[v] - k`` where ``k`` is the position of
    ``q[v]`` among the accesses that have a next one: that count seeds the inversion count, which
    comes back indexed by ``v``, and ``d(r[v]) = D(r[v]) - 1 - inv(q[v])``.
    """
    n = prev.size
    r = np.flatnonzero(prev >= 0)  # accesses with a previous access, in time order
    m = r.size
    if m == 0:
        return np.full(n, COLD, dtype=np.int64)
    dt = np.int32 if n < 2**31 - 1 else np.int64
    nxt = np.full(n, -1, dtype=dt)
    nxt[prev[r]] = np.arange(m, dtype=dt)  # rank of nxt(q) among r: distinct values in [0, m)
    has_next = nxt >= 0
    qs = np.flatnonzero(has_next)  # the accesses having a next one, in time order
    del has_next
    vals = nxt[qs]
    del nxt
    qs -= np.arange(m, dtype=qs.dtype)  # accesses before qs[k] without a next one: qs[k] - k
    inv = _earlier_greater_by_value(vals, qs)
    del vals, qs
    d = r - np.arange(m, dtype=r.dtype)  # D(r[v]): distinct keys before r[v]
    d -= 1
    d -= inv
    del inv
    out = np.full(n, COLD, dtype=np.int64)  # allocated last: the peak memory is in the levels above
    out[r] = d
    return out


#: How :func:`stack_distances` and :func:`lru_hit_counts` compute: ``"arrays"``, the numpy whole-array passes of
#: the module docstring (O(n log n), no compilation), or ``"onepass"``, one compiled pass over recency slots
#: (:mod:`tieringlab.models._stackdist_native`: a probe and a few cached word operations per access, memory O(K)
#: for K distinct keys; the hit counts come from counts between the sizes filled in the same pass, with no
#: per-access array).
#: Identical results (tests compare both with a brute-force LRU stack).
METHODS = ("arrays", "onepass")
#: The default of :data:`METHODS`. ``"arrays"``, because neither method is faster on every trace (measured
#: 2026-11-26 on the shared 2-core machine, numba's compiled code loaded from the disk cache): the one-pass kernel
#: is 1.5-14x faster on Zipf traces of 10^3-10^7 requests (``python -m benchmarks stackdist``) and 4x on the
#: mds_0 twin's page accesses (scale 0.5: 5.2 M accesses, 0.42 M pages), but 0.37-0.72x as fast where most
#: accesses are first touches (the usr_2 and stg_1 twins at scale 0.1: 86 % and 80 % distinct pages; src1_1 at
#: 0.5: 60 %), whose hash table and window outgrow the CPU caches while the arrays' sorts stay sequential; its
#: first call in a process also loads numba (about a second). Callers that know their trace pass ``method``.
DEFAULT_METHOD = "arrays"


def _check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    return method


def _onepass(keys: np.ndarray, distances: bool, bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The compiled pass: (the distances, or an empty array) and ``counts[k]`` = accesses whose distance has
    ``k`` of the sorted ``bounds`` at or below it (so ``cumsum(counts)[k]`` = hits at capacity ``bounds[k]``)."""
    from tieringlab.models import _stackdist_native  # noqa: PLC0415  (numba compiles or loads on first use only)

    k = np.ascontiguousarray(keys, dtype=np.int64)
    out = np.empty(k.size if distances else 0, dtype=np.int64)
    b = np.ascontiguousarray(bounds, dtype=np.int64)
    counts = np.zeros(b.size + 1 if b.size else 0, dtype=np.int64)
    _stackdist_native.lru_onepass(k, out, b, counts)
    return out, counts


def stack_distances(keys, method: str = DEFAULT_METHOD) -> np.ndarray:
    """LRU stack distance of every access (Mattson et al. 1970), ``int64``, same length as ``keys``.

    ``d(i)`` is the number of distinct *other* keys accessed since the previous access to ``keys[i]``;
    a first access gets :data:`COLD`. Access ``i`` hits in a unit-size LRU cache of capacity ``C`` iff
    ``d(i) < C``. Keys may be any integers (int64 range). ``method``: one of :data:`METHODS`.

    >>> stack_distances([1, 2, 1, 3, 2, 2]).tolist()[2:]
    [1, 9223372036854775807, 2, 0]
    """
    _check_method(method)
    keys = _as_keys(keys)
    n = keys.size
    if n == 0:
        return np.empty(0, dtype=np.int64)
    if method == "arrays":
        return _distances_from_previous(_previous_access(keys))
    return _onepass(keys, True, np.zeros(0, np.int64))[0]


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


def lru_hit_counts(keys, sizes, method: str = DEFAULT_METHOD) -> np.ndarray:
    """Hit counts of a unit-size LRU cache at each capacity in ``sizes`` (int64, shaped like ``sizes``).

    Equal to simulating LRU separately at every capacity (Mattson's inclusion property), including
    capacity 0 (no hits). ``method``: one of :data:`METHODS` (``"onepass"`` counts the distances below the
    largest size in its pass and keeps no per-access array).
    """
    _check_method(method)
    if method == "arrays":
        return hit_counts_from_distances(stack_distances(keys, "arrays"), sizes)
    keys = _as_keys(keys)
    sizes = _as_sizes(sizes)
    if sizes.size == 0 or keys.size == 0:
        return np.zeros(sizes.shape, dtype=np.int64)
    bounds, where = np.unique(sizes, return_inverse=True)   # the sorted distinct sizes; each size's position
    hits = np.cumsum(_onepass(keys, False, bounds)[1])[:bounds.size]   # hits[k] = #{d < bounds[k]}
    return hits[where.reshape(sizes.shape)].astype(np.int64)


def lru_hit_ratios(keys, sizes, method: str = DEFAULT_METHOD) -> np.ndarray:
    """Hit ratio (hits / accesses, float64) of a unit-size LRU cache at each capacity in ``sizes``.

    ``sizes`` are capacities in keys; the result has the shape of ``sizes``. Raises ``ValueError`` on
    an empty trace (the ratio is undefined). ``method``: as for :func:`lru_hit_counts`.
    """
    keys = _as_keys(keys)
    if keys.size == 0:
        raise ValueError("keys is empty: the hit ratio of an empty trace is undefined")
    return lru_hit_counts(keys, sizes, method) / float(keys.size)


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


def _per_access_capacity(capacity, n: int) -> np.ndarray:
    cap = np.asarray(capacity)
    if cap.ndim == 0:
        cap = np.broadcast_to(cap, (n,))
    if cap.ndim != 1 or cap.size != n:
        raise ValueError(f"capacity must have one entry per access ({n}) or be one number; got shape {cap.shape}")
    if cap.size and not np.issubdtype(cap.dtype, np.integer):
        if np.issubdtype(cap.dtype, np.floating) and np.all(np.isfinite(cap)) and np.all(cap == np.round(cap)):
            cap = cap.astype(np.int64)
        else:
            raise TypeError(f"capacity must be whole numbers of items (keys/units), got dtype {cap.dtype}")
    if cap.size and cap.min() < 0:
        i = int(np.argmin(cap))
        raise ValueError(f"capacity must be >= 0 items; capacity[{i}] = {int(cap[i])}")
    # more than n items can never be resident: clipping changes nothing and bounds the state
    return np.ascontiguousarray(np.minimum(cap.astype(np.int64, copy=False), n))


def resizing_lru_hits(keys, capacity) -> np.ndarray:
    """Hit flag of every access of unit-size ``keys`` in an LRU whose capacity changes per access.

    ``capacity`` has one entry per access (items; a single number is used for every access). Before
    access ``i`` is served, least recently used items are evicted until at most ``capacity[i]``
    remain; then a hit refreshes the key and a miss inserts it, evicting the least recently used item
    if the cache is full; at capacity 0 nothing is kept. The cache starts empty. At a constant
    capacity this is the plain LRU of :func:`tieringlab.policies.caching.hits` (and libcachesim's).

    This is the SSD partition of the EAFC paper (Sec. III, IV.A: a per-workload LRU resized by its
    controller; the eviction engine frees space ahead of insertions). One compiled pass, no sort: see
    :mod:`tieringlab.models._resizing`.

    >>> resizing_lru_hits([1, 2, 1, 2, 1], [2, 2, 2, 1, 1]).tolist()
    [False, False, True, True, False]
    """
    keys = _as_keys(keys)
    cap = _per_access_capacity(capacity, keys.size)
    hit = np.zeros(keys.size, dtype=bool)
    if keys.size == 0:
        return hit
    from tieringlab.models import _resizing  # noqa: PLC0415  (numba compiles on first use only)

    bits = max(4, int(int(cap.max()) + 1).bit_length() + 1)
    _resizing.resizing_lru_keys(keys.astype(np.int64, copy=False), cap, bits, hit,
                                np.empty(keys.size, dtype=np.int64))
    return hit


def resizing_lru_from_distances(distances, capacity) -> tuple[np.ndarray, np.ndarray]:
    """``(hit, occupancy)`` of the resizing LRU of :func:`resizing_lru_hits` from exact stack distances.

    ``distances`` are :func:`stack_distances` of the keys (``COLD`` for first accesses); ``occupancy[i]``
    is the number of items resident after access ``i``. The resident set is the top ``m`` of the LRU
    stack, so ``hit_i = d_i < min(m, capacity[i])`` and ``m <- min(capacity[i], m' + miss_i)``: one
    scalar pass (:mod:`tieringlab.models._resizing`). Use it when the distances are needed anyway
    (hit-ratio curves at every size, as the EAFC hybrid-store model does).
    """
    d = np.asarray(distances)
    if d.ndim != 1:
        raise ValueError(f"distances must be 1-D, got shape {d.shape}")
    if d.size and (not np.issubdtype(d.dtype, np.integer) or d.min() < 0):
        raise ValueError("distances must be integers >= 0 (stack distances; COLD for first accesses)")
    cap = _per_access_capacity(capacity, d.size)
    hit = np.zeros(d.size, dtype=bool)
    occ = np.zeros(d.size, dtype=np.int64)
    if d.size:
        from tieringlab.models import _resizing  # noqa: PLC0415

        _resizing.resizing_lru_distances(np.ascontiguousarray(d, dtype=np.int64), cap, hit, occ)
    return hit, occ
