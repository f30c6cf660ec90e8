"""Resizing LRU (the EAFC SSD partition) on 10^7 accesses: tieringlab vs the fixed-size LRU engine,
a plain OrderedDict reference and libcachesim, timed side by side in one run.

Trace: ``n`` accesses (10^7; 10^5 with ``quick``) of unit-size keys from a Zipf law (exponent 0.9)
over ``n // 10`` keys, the trace of ``bench_stackdist``. Capacity schedule: piecewise constant, a new
size every ``n // 100`` accesses drawn uniformly between 1 % and 20 % of the distinct keys (a
controller resizing at window boundaries), seed ``SEED``.

Timed (end to end, each call from its public entry point; one small warm-up call each first, so numba
compilation is excluded):

- ``resizing_lru_hits(keys, schedule)`` — ours, the schedule above;
- ``resizing_lru_hits(keys, C)`` at the constant capacity ``C`` = the schedule's mean, and the
  fixed-size engine ``caching.hits("lru", keys, C)`` (numba, the default on a CPU, dense-id remapping
  included) at the same ``C``: ``ratio_vs_fixed_engine`` = fixed / ours, the issue's goal (>= 1: at
  least as fast per access); identical hits asserted;
- ``resizing_lru_from_distances(stack_distances(keys), schedule)`` — the stack-distance path (what the
  EAFC model uses when the distances are needed for hit-ratio curves anyway), same hits asserted;
- the OrderedDict reference (Python, written as the issue defines the cache) on the schedule, identical
  hits asserted; ``ratio_vs_bruteforce``;
- libcachesim's LRU at the constant ``C`` (its C loop ``process_trace`` over an oracleGeneral file
  written beforehand, not timed; hash table presized as in ``bench_stackdist``; it has no resizable LRU):
  ``ratio_vs_libcachesim``, identical miss ratio asserted.
"""

from __future__ import annotations

import math
import tempfile
import time
from collections import OrderedDict
from pathlib import Path

import numpy as np

from benchmarks.bench_stackdist import _write_oracle_general, zipf_keys
from tieringlab.models.stackdist import resizing_lru_from_distances, resizing_lru_hits, stack_distances
from tieringlab.policies import caching

GOAL = '≥ 1× the fixed-size engine'  # the README's goal column (benchmarks/readme.py)

SEED = 20261122


def _ordered_dict(keys, cap):
    cache, out = OrderedDict(), np.zeros(len(keys), bool)
    for i, (k, c) in enumerate(zip(keys.tolist(), cap.tolist())):
        while len(cache) > c:
            cache.popitem(last=False)
        if k in cache:
            cache.move_to_end(k)
            out[i] = True
        elif c > 0:
            if len(cache) >= c:
                cache.popitem(last=False)
            cache[k] = None
    return out


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def run(quick: bool = False) -> dict:
    import libcachesim as lcs

    n = 10**5 if quick else 10**7
    keys = zipf_keys(n, n // 10)
    n_distinct = int(np.unique(keys).size)
    rng = np.random.default_rng(SEED)
    seg = n // 100
    sizes = rng.integers(n_distinct // 100, n_distinct // 5, 100)
    schedule = np.repeat(sizes, seg)
    c_const = int(round(sizes.mean()))

    resizing_lru_hits(keys[:1000], schedule[:1000])  # compile
    resizing_lru_from_distances(stack_distances(keys[:1000]), schedule[:1000])
    caching.hits("lru", keys[:1000], 10)

    ours_s, hit = _timed(lambda: resizing_lru_hits(keys, schedule))
    ours_const_s, hit_c = _timed(lambda: resizing_lru_hits(keys, c_const))
    fixed_s, hit_f = _timed(lambda: caching.hits("lru", keys, c_const))
    if not np.array_equal(hit_c, hit_f):
        raise AssertionError("constant capacity: resizing LRU and the fixed-size engine differ")
    dist_s, (hit_d, _) = _timed(lambda: resizing_lru_from_distances(stack_distances(keys), schedule))
    if not np.array_equal(hit, hit_d):
        raise AssertionError("the stack-distance path differs from the hash-table path")
    brute_s, hit_b = _timed(lambda: _ordered_dict(keys, schedule))
    if not np.array_equal(hit, hit_b):
        raise AssertionError("the OrderedDict reference differs")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "zipf.oracleGeneral.bin"
        _write_oracle_general(keys, path)
        reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)
        t0 = time.perf_counter()
        cache = lcs.LRU(c_const, hashpower=max(4, math.ceil(math.log2(c_const)) + 1))
        miss_ratio, _ = cache.process_trace(reader)
        lcs_s = time.perf_counter() - t0
    if int(round((1.0 - miss_ratio) * n)) != int(hit_c.sum()):
        raise AssertionError("libcachesim's LRU hit count differs at the constant capacity")
    return {
        "n_accesses": n,
        "n_distinct_keys": n_distinct,
        "schedule": f"100 segments of {seg} accesses, sizes uniform in [{n_distinct // 100}, {n_distinct // 5})",
        "constant_capacity": c_const,
        "hit_ratio_schedule": float(hit.mean()),
        "hit_ratio_constant": float(hit_c.mean()),
        "tieringlab_schedule_s": ours_s,
        "tieringlab_constant_s": ours_const_s,
        "fixed_engine_constant_s": fixed_s,
        "stackdist_path_schedule_s": dist_s,
        "ordereddict_schedule_s": brute_s,
        "libcachesim_constant_s": lcs_s,
        "ns_per_access_schedule": ours_s / n * 1e9,
        "identical_hits": True,
        "ratio_vs_fixed_engine": fixed_s / ours_const_s,
        "ratio_schedule_vs_fixed_engine": fixed_s / ours_s,
        "ratio_stackdist_path_vs_fixed_engine": fixed_s / dist_s,
        "ratio_vs_bruteforce": brute_s / ours_s,
        "ratio_vs_libcachesim": lcs_s / ours_const_s,
    }
