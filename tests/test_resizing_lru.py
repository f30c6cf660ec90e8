"""The resizing LRU (models.stackdist.resizing_lru_hits / resizing_lru_from_distances) against
independent truth: a plain OrderedDict LRU that is resized access by access (written here from the
issue's definition), libcachesim's LRU at a constant capacity, and hypothesis properties."""

from __future__ import annotations

from collections import OrderedDict

import libcachesim as lcs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tieringlab.models.stackdist import resizing_lru_from_distances, resizing_lru_hits, stack_distances


def brute_resizing_lru(keys, capacity):
    """Before access i: evict LRU items until <= capacity[i] remain; hit refreshes; miss inserts
    (evicting the LRU item if full); capacity 0 keeps nothing. Returns (hits, occupancy)."""
    cache, hits, occ = OrderedDict(), [], []
    for k, c in zip(keys, capacity):
        while len(cache) > c:
            cache.popitem(last=False)
        if k in cache:
            cache.move_to_end(k)
            hits.append(True)
        else:
            hits.append(False)
            if c > 0:
                if len(cache) >= c:
                    cache.popitem(last=False)
                cache[k] = None
        occ.append(len(cache))
    return np.array(hits, dtype=bool), np.array(occ, dtype=np.int64)


def lcs_lru_hits(keys, capacity):
    cache = lcs.LRU(capacity)
    return np.array([bool(cache.get(lcs.Request(obj_size=1, op=lcs.ReqOp.OP_GET, obj_id=int(k)))) for k in keys])


@st.composite
def trace_and_capacity(draw, max_n=300):
    n = draw(st.integers(1, max_n))
    keys = draw(st.lists(st.integers(-30, 30), min_size=n, max_size=n))
    # piecewise-constant schedules (a controller resizing at window boundaries) and arbitrary ones
    if draw(st.booleans()):
        cap = draw(st.lists(st.integers(0, 35), min_size=n, max_size=n))
    else:
        steps = draw(st.lists(st.integers(0, 35), min_size=1, max_size=8))
        cap = np.repeat(steps, -(-n // len(steps)))[:n].tolist()
    return keys, cap


@settings(max_examples=40, deadline=None)
@given(tc=trace_and_capacity(), scale=st.sampled_from([1, 2**40 + 7, -(2**50)]))
def test_matches_brute_force(tc, scale):
    keys, cap = tc
    keys = np.array(keys, dtype=np.int64) * scale  # far-apart and negative keys exercise the hash
    ref_hit, ref_occ = brute_resizing_lru(keys.tolist(), cap)
    np.testing.assert_array_equal(resizing_lru_hits(keys, cap), ref_hit)
    hit, occ = resizing_lru_from_distances(stack_distances(keys), cap)
    np.testing.assert_array_equal(hit, ref_hit)
    np.testing.assert_array_equal(occ, ref_occ)


@settings(max_examples=30, deadline=None)
@given(keys=st.lists(st.integers(0, 50), min_size=1, max_size=300), capacity=st.integers(1, 40))
def test_constant_capacity_is_libcachesim_lru(keys, capacity):
    ours = resizing_lru_hits(np.array(keys), np.full(len(keys), capacity))
    np.testing.assert_array_equal(ours, lcs_lru_hits(keys, capacity))
    np.testing.assert_array_equal(resizing_lru_hits(np.array(keys), capacity), ours)  # scalar broadcast


def test_large_random_trace_with_hash_collisions():
    """10^4 Zipf-like accesses over 2000 keys, capacities jumping between 0 and 1500 (many deletions
    with backward shifts in a half-full table), against the brute force."""
    rng = np.random.default_rng(5)
    keys = (rng.zipf(1.3, 10_000) % 2000) * 4096  # multiples of 4096: low bits all equal
    cap = np.repeat(rng.integers(0, 1500, 50), 200)
    ref_hit, ref_occ = brute_resizing_lru(keys.tolist(), cap.tolist())
    np.testing.assert_array_equal(resizing_lru_hits(keys, cap), ref_hit)
    hit, occ = resizing_lru_from_distances(stack_distances(keys), cap)
    np.testing.assert_array_equal(hit, ref_hit)
    np.testing.assert_array_equal(occ, ref_occ)


@settings(max_examples=40, deadline=None)
@given(tc=trace_and_capacity())
def test_properties(tc):
    """Invariants: occupancy never exceeds the capacity; a first access never hits; capacity 0 never
    hits and keeps nothing; a larger capacity schedule never loses a hit (LRU inclusion holds for
    resized caches too, since both hold the top of the same stack)."""
    keys, cap = tc
    keys = np.array(keys)
    cap = np.array(cap)
    hit, occ = resizing_lru_from_distances(stack_distances(keys), cap)
    assert np.all(occ <= cap)
    first = np.ones(keys.size, bool)
    first[np.unique(keys, return_index=True)[1]] = False
    assert not np.any(hit[~first])
    assert not np.any(hit[cap == 0]) and np.all(occ[cap == 0] == 0)
    bigger = resizing_lru_hits(keys, cap + 3)
    assert np.all(bigger >= resizing_lru_hits(keys, cap))


def test_bad_input():
    with pytest.raises(ValueError, match="one entry per access"):
        resizing_lru_hits([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match=r"capacity\[1\] = -1"):
        resizing_lru_hits([1, 2, 3], [1, -1, 2])
    with pytest.raises(TypeError, match="whole numbers"):
        resizing_lru_hits([1, 2], [1.5, 2])
    with pytest.raises(TypeError, match="integer dtype"):
        resizing_lru_hits([1.0, 2.0], [1, 2])
    assert resizing_lru_hits(np.zeros(0, np.int64), np.zeros(0, np.int64)).shape == (0,)
