"""LRU stack distances against independent truth: plain LRU simulations and libcachesim."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tieringlab.models.stackdist import (
    COLD,
    METHODS,
    hit_counts_from_distances,
    lru_hit_counts,
    lru_hit_ratios,
    lru_request_hits,
    request_stack_distances,
    stack_distances,
)

# ----------------------------------------------------------------------------- plain references


def brute_stack_distances(keys):
    """Walk an explicit LRU stack (most recent last): distance = keys above the reused one."""
    stack, out = [], []
    for k in keys:
        if k in stack:
            pos = stack.index(k)
            out.append(len(stack) - 1 - pos)
            stack.pop(pos)
        else:
            out.append(COLD)
        stack.append(k)
    return np.array(out, dtype=np.int64)


def brute_lru_hits(keys, capacity):
    """Simulate one unit-size LRU cache of the given capacity; count hits."""
    cache, hits = OrderedDict(), 0
    for k in keys:
        if k in cache:
            hits += 1
            cache.move_to_end(k)
        elif capacity > 0:
            if len(cache) >= capacity:
                cache.popitem(last=False)
            cache[k] = None
    return hits


def brute_lru_request_hits(unit_keys, request_index, capacity):
    """One LRU; the units of a request go through it in order; a request hits iff all its units hit."""
    cache, hits = OrderedDict(), 0
    req_hit, current = True, None
    for k, r in zip(unit_keys, request_index):
        if r != current:
            if current is not None and req_hit:
                hits += 1
            current, req_hit = r, True
        if k in cache:
            cache.move_to_end(k)
        else:
            req_hit = False
            if capacity > 0:
                if len(cache) >= capacity:
                    cache.popitem(last=False)
                cache[k] = None
    if current is not None and req_hit:
        hits += 1
    return hits


traces = st.lists(st.integers(min_value=0, max_value=30), min_size=1, max_size=300)


# ----------------------------------------------------------------------------- unit-level


def test_small_example_by_hand():
    # a b a c b b: a@2 saw {b}; b@4 saw {a, c}; b@5 saw nothing
    d = stack_distances([7, 9, 7, 3, 9, 9])
    assert d.dtype == np.int64
    assert d.tolist() == [COLD, COLD, 1, COLD, 2, 0]
    assert COLD == np.iinfo(np.int64).max


@settings(max_examples=150, deadline=None)
@given(traces)
def test_stack_distances_equal_explicit_stack(keys):
    expected = brute_stack_distances(keys)
    for method in METHODS:  # the compiled one-pass Fenwick tree and the numpy array passes
        np.testing.assert_array_equal(stack_distances(np.array(keys), method), expected, err_msg=method)


def test_onepass_grows_and_compacts_like_the_explicit_stack():
    """The one-pass kernel starts with 1,024 recency slots and a 1,024-entry hash table: a trace with 1,500
    distinct keys makes it rehash twice, pack its slots and double its window several times."""
    rng = np.random.default_rng(11)
    keys = np.concatenate([rng.permutation(1500), rng.integers(0, 1500, 2500), np.arange(1400, 1500)]) * 1_000_003
    np.testing.assert_array_equal(stack_distances(keys, "onepass"), brute_stack_distances(keys.tolist()))


def test_methods_agree_on_a_long_zipf_trace():
    """Over 8,192 distinct keys: the one-pass window grows past one 32,768-slot superblock and compacts there."""
    rng = np.random.default_rng(5)
    keys = rng.zipf(1.2, 300_000) * 7919 - 2**40
    assert np.unique(keys).size > 32_768 // 4
    d = stack_distances(keys, "arrays")
    np.testing.assert_array_equal(stack_distances(keys, "onepass"), d)
    sizes = np.array([0, 1, 7, 1000, 30_000, 10**9])
    np.testing.assert_array_equal(lru_hit_counts(keys, sizes, "onepass"), hit_counts_from_distances(d, sizes))
    with pytest.raises(ValueError, match="method must be one of arrays, onepass; got 'fenwick'"):
        stack_distances(keys, "fenwick")
    with pytest.raises(ValueError, match="method must be one of arrays, onepass; got 'fenwick'"):
        lru_hit_counts(keys, sizes, "fenwick")


@settings(max_examples=100, deadline=None)
@given(traces)
def test_hit_counts_equal_lru_simulation_at_every_size(keys):
    sizes = np.arange(0, len(set(keys)) + 3)
    expected = [brute_lru_hits(keys, int(c)) for c in sizes]
    for method in METHODS:  # the arrays' distances, the one-pass kernel's histogram
        got = lru_hit_counts(np.array(keys), sizes, method)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, expected, err_msg=method)
        np.testing.assert_allclose(lru_hit_ratios(np.array(keys), sizes, method), np.array(expected) / len(keys),
                                   rtol=0, atol=0, err_msg=method)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from([np.iinfo(np.int64).min, -1, 0, 1, 2**40, np.iinfo(np.int64).max]),
                min_size=1, max_size=60))
def test_arbitrary_int64_keys_are_remapped(keys):
    np.testing.assert_array_equal(stack_distances(np.array(keys, dtype=np.int64)), brute_stack_distances(keys))


def test_random_longer_trace_all_sizes():
    rng = np.random.default_rng(3)
    keys = (rng.zipf(1.3, 3000) % 400).tolist()
    sizes = np.arange(0, 420, 7)
    got = lru_hit_counts(np.array(keys), sizes)
    np.testing.assert_array_equal(got, [brute_lru_hits(keys, int(c)) for c in sizes])


def test_huge_sizes_need_no_huge_histogram():
    keys = np.array([5, 6, 5, 7, 6])
    got = lru_hit_counts(keys, np.array([0, 1, 2, 3, 10**15]))
    assert got.tolist() == [brute_lru_hits(keys.tolist(), c) for c in (0, 1, 2, 3, 4)]
    assert hit_counts_from_distances(np.array([COLD, COLD]), [10**18]).tolist() == [0]
    assert hit_counts_from_distances(np.array([], dtype=np.int64), [3]).tolist() == [0]


def test_sizes_shape_and_order_preserved():
    keys = np.array([1, 2, 1, 2, 3, 1])
    got = lru_hit_counts(keys, np.array([[3, 0], [1, 2]]))
    assert got.shape == (2, 2)
    assert got.tolist() == [[brute_lru_hits(keys.tolist(), 3), 0], [brute_lru_hits(keys.tolist(), 1), 2]]


# ----------------------------------------------------------------------------- request-level

requests = st.lists(st.lists(st.integers(min_value=0, max_value=25), min_size=1, max_size=5), min_size=1, max_size=80)


@settings(max_examples=100, deadline=None)
@given(requests)
def test_request_hits_equal_lru_simulation(reqs):
    unit_keys = [k for r in reqs for k in r]
    request_index = [i for i, r in enumerate(reqs) for _ in r]
    sizes = np.arange(0, len(set(unit_keys)) + 3)
    expected = [brute_lru_request_hits(unit_keys, request_index, int(c)) for c in sizes]
    got = lru_request_hits(np.array(unit_keys), np.array(request_index), sizes)
    np.testing.assert_array_equal(got, expected)
    assert request_stack_distances(np.array(unit_keys), np.array(request_index)).shape == (len(reqs),)


def test_request_index_may_skip_ids_but_not_decrease():
    keys = np.array([1, 2, 1, 2])
    d = request_stack_distances(keys, np.array([10, 10, 42, 42]))
    assert d.tolist() == [COLD, 1]
    with pytest.raises(ValueError, match="non-decreasing.*unit 2"):
        request_stack_distances(keys, np.array([0, 1, 0, 1]))
    with pytest.raises(ValueError, match="one entry per unit"):
        lru_request_hits(keys, np.array([0, 0, 1]), [1])


# ----------------------------------------------------------------------------- input errors


def test_errors_name_the_parameter():
    with pytest.raises(TypeError, match="keys must have an integer dtype"):
        stack_distances(np.array([1.5, 2.0]))
    with pytest.raises(ValueError, match="keys must be a 1-D"):
        stack_distances(np.zeros((2, 2), dtype=int))
    with pytest.raises(ValueError, match="sizes must be >= 0"):
        lru_hit_counts([1, 2], [-1])
    with pytest.raises(TypeError, match="sizes must be integer"):
        lru_hit_counts([1, 2], [1.5])
    with pytest.raises(ValueError, match="keys is empty"):
        lru_hit_ratios([], [1])
    with pytest.raises(ValueError, match="distances must be >= 0"):
        hit_counts_from_distances([-2], [1])
    assert stack_distances([]).shape == (0,)


# ----------------------------------------------------------------------------- libcachesim oracle


def cloudphysics_pages(path, page_bytes=4096):
    """4 KB pages of every request of the real trace, in order (lbn counts 512-byte sectors)."""
    df = pd.read_csv(path)
    first = (df["lbn"].to_numpy(np.int64) * 512) // page_bytes
    last = (df["lbn"].to_numpy(np.int64) * 512 + df["size"].to_numpy(np.int64) - 1) // page_bytes
    n_pages = last - first + 1
    request_index = np.repeat(np.arange(len(df)), n_pages)
    starts = np.repeat(np.cumsum(n_pages) - n_pages, n_pages)
    pages = np.repeat(first, n_pages) + (np.arange(n_pages.sum()) - starts)
    return pages, request_index


def test_unit_hits_equal_libcachesim_lru_on_cloudphysics(cloudphysics_path, tmp_path):
    """libcachesim 0.3.5 LRU, one cache per size, every 4 KB page a unit object (obj_size=1).

    Framing: libcachesim's LRU holds objects while their summed obj_size fits in cache_size, so with
    obj_size = 1 the capacity is the number of pages. The pages are written as an oracleGeneral binary
    trace (uint32 time, uint64 obj_id, uint32 obj_size, int64 next_access_vtime) and replayed by the
    C ``process_trace``, which returns the object miss ratio; hits = round((1 - miss_ratio) * n).
    """
    import libcachesim as lcs  # a locked dependency (requirements.lock): missing is an error, not a skip
    pages, _ = cloudphysics_pages(cloudphysics_path)
    n = pages.size
    rec = np.zeros(n, np.dtype([("t", "<u4"), ("id", "<u8"), ("sz", "<u4"), ("nv", "<i8")]))
    rec["t"] = np.arange(n)
    rec["id"] = pages
    rec["sz"] = 1
    rec["nv"] = -1
    trace = tmp_path / "cloudphysics_4k.oracleGeneral.bin"
    rec.tofile(trace)
    reader = lcs.TraceReader(str(trace), lcs.TraceType.ORACLE_GENERAL_TRACE)
    sizes = np.array([256, 4096, 65536])  # 1 MB, 16 MB, 256 MB of 4 KB pages
    ours = lru_hit_counts(pages, sizes)
    theirs = []
    for c in sizes:
        miss_ratio, _ = lcs.LRU(int(c)).process_trace(reader)
        theirs.append(int(round((1.0 - miss_ratio) * n)))
    np.testing.assert_array_equal(ours, theirs)
    assert 0 < ours[0] < ours[1] < ours[2] < n


def test_request_hits_on_cloudphysics_prefix(cloudphysics_path):
    """Request-level hits on the real trace's first 4000 IOs: libcachesim LRU fed page by page through
    ``cache.get`` (a request hits iff every page hit) and the plain OrderedDict LRU agree with ours."""
    import libcachesim as lcs  # a locked dependency (requirements.lock): missing is an error, not a skip
    pages, request_index = cloudphysics_pages(cloudphysics_path)
    keep = request_index < 4000
    pages, request_index = pages[keep], request_index[keep]
    sizes = np.array([64, 1024, 8192])
    ours = lru_request_hits(pages, request_index, sizes)
    for c, o in zip(sizes, ours):
        cache = lcs.LRU(int(c))
        req = lcs.Request()
        req.obj_size = 1
        req.op = lcs.ReqOp.OP_READ
        all_hit = np.ones(4000, dtype=bool)
        for i, (p, r) in enumerate(zip(pages.tolist(), request_index.tolist())):
            req.obj_id = p
            req.clock_time = i
            if not cache.get(req):
                all_hit[r] = False
        assert o == int(all_hit.sum())
        assert o == brute_lru_request_hits(pages.tolist(), request_index.tolist(), int(c))


def test_earlier_greater_counts_equal_brute_force():
    # the wavelet levels spread run starts two ways (np.repeat for few runs, a running maximum for
    # many); permutations of several lengths exercise both, and the levels' boundaries
    from tieringlab.models.stackdist import _earlier_greater_counts

    rng = np.random.default_rng(7)
    for m in (1, 2, 3, 16, 17, 64, 257, 1000):
        v = rng.permutation(m)
        ref = [int(np.count_nonzero(v[:p] > v[p])) for p in range(m)]
        got = _earlier_greater_counts(v)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, ref)
    v = np.arange(500)[::-1].copy()  # fully decreasing: p earlier ones are all larger
    np.testing.assert_array_equal(_earlier_greater_counts(v), np.arange(500))
