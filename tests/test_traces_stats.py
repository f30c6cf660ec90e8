"""Units and statistics against plain per-request reference implementations written here."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tieringlab.traces import make_dataset, split_units, stats


def trace(times, offsets, sizes, writes=None, **attrs):
    writes = np.zeros(len(times), bool) if writes is None else writes
    return make_dataset(times, offsets, sizes, writes, name="t", source="test", **attrs)


requests = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 30_000), st.integers(1, 20_000)),
                    min_size=1, max_size=60)


def as_trace(reqs):
    reqs = sorted(reqs, key=lambda r: r[0])
    t, o, s = map(np.array, zip(*reqs))
    return trace(t.astype(float) * 10.0, o, s, np.arange(len(t)) % 3 == 0)


def pages_of(o, s, unit):
    return list(range(o // unit, (o + s - 1) // unit + 1))


@settings(max_examples=60, deadline=None)
@given(requests, st.sampled_from([512, 4096, 1 << 20]))
def test_split_units_matches_loop(reqs, unit):
    ds = as_trace(reqs)
    keys, ridx = split_units(ds, unit)
    ref_k, ref_r = [], []
    for i, (o, s) in enumerate(zip(ds["offset"].values, ds["size"].values)):
        p = pages_of(int(o), int(s), unit)
        ref_k += p
        ref_r += [i] * len(p)
    np.testing.assert_array_equal(keys, ref_k)
    np.testing.assert_array_equal(ridx, ref_r)
    assert keys.dtype == np.int64 and ridx.dtype == np.int64


def test_split_units_sizes():
    ds = trace([0, 1, 2], [4095, (1 << 30) - 1, 0], [2, 2, 1 << 20])
    k, r = split_units(ds, 4096)
    assert list(r).count(0) == 2 and list(r).count(2) == 256
    k, r = split_units(ds, 1 << 30)
    np.testing.assert_array_equal(k, [0, 0, 1, 0])


def lru_reference(ds, cache_lines, line):
    """A request hits iff all its lines are in an LRU of cache_lines lines (vFRM Sec. 5.1)."""
    cache: OrderedDict = OrderedDict()
    hits = 0
    for o, s in zip(ds["offset"].values, ds["size"].values):
        lines = pages_of(int(o), int(s), line)
        hit = all(p in cache for p in lines)
        for p in lines:
            cache.pop(p, None)
            cache[p] = True
            if len(cache) > cache_lines:
                cache.popitem(last=False)
        hits += hit
    return hits / len(ds["offset"])


def reaccess_reference(ds, window, page, definition):
    last: dict = {}
    within = reacc = 0
    for t, o, s in zip(ds["time"].values, ds["offset"].values, ds["size"].values):
        gaps = [t - last[p] for p in pages_of(int(o), int(s), page) if p in last]
        if gaps:
            reacc += 1
            within += min(gaps) <= window
        for p in pages_of(int(o), int(s), page):
            last[p] = t
    denom = reacc if definition == "among_reaccesses" else len(ds["time"])
    return within / denom if denom else float("nan")


@settings(max_examples=40, deadline=None)
@given(requests)
def test_statistics_match_references(reqs):
    ds = as_trace(reqs)
    page = 4096
    o, s = ds["offset"].values, ds["size"].values
    all_pages = {p for oo, ss in zip(o, s) for p in pages_of(int(oo), int(ss), page)}
    assert stats.volume_size(ds) == int(max(o + s))
    assert stats.working_set_size(ds, page) == len(all_pages) * page
    assert stats.read_ratio(ds) == pytest.approx(1 - ds["is_write"].values.mean())
    for definition in stats.REACCESS_DEFINITIONS:
        got = stats.reaccess_ratio(ds, 25.0, page, definition=definition)
        ref = reaccess_reference(ds, 25.0, page, definition)
        assert (np.isnan(got) and np.isnan(ref)) or got == pytest.approx(ref)
    sizes = np.array([0, 1, 2, 3, 5, 8, 40]) * page
    got = stats.lru_hit_ratio(ds, sizes, page)
    assert got.shape == sizes.shape
    np.testing.assert_allclose(got, [lru_reference(ds, c // page, page) for c in sizes])
    assert stats.lru_hit_ratio(ds, int(sizes[3]), page) == pytest.approx(got[3])


def test_reaccess_definition_hand_case():
    # page 0 at t=0, 100, 1000; page 1 once: 2 re-accesses, 1 within 300 s, 4 IOs in all
    ds = trace([0, 100, 500, 1000], [0, 0, 4096, 0], [4096] * 4)
    assert stats.reaccess_ratio(ds, 300.0) == pytest.approx(0.5)
    assert stats.reaccess_ratio(ds, 300.0, definition="all_ios") == pytest.approx(0.25)
    with pytest.raises(ValueError, match="definition"):
        stats.reaccess_ratio(ds, definition="per_page")


def test_bins_per_epoch_and_popularity_hand_case():
    mb = 1 << 20
    ds = trace([0, 10, 20, 400, 3700], [0, 0, mb - 1, 5 * mb, 0], [100, 100, 2, 100, 100], duration_s=4000.0)
    bpe = stats.bins_per_epoch(ds, mb, 300.0)
    assert bpe.values[:3].tolist() == [2, 1, 0] and bpe.values[12] == 1 and bpe.sum() == 4
    pop = stats.popularity_matrix(ds, mb, 3600.0)
    assert pop.shape == (6, 2)
    assert pop.values[0].tolist() == [3, 1] and pop.values[1].tolist() == [1, 0] and pop.values[5].tolist() == [1, 0]
    grouped = stats.popularity_matrix(ds, mb, 3600.0, max_bins=3)
    assert grouped.values.sum() == pop.values.sum() and grouped.shape[0] <= 3


def test_arrivals_and_dispersion():
    t = np.array([0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5])  # two per second: counts (2,2,2,2) -> I = 0
    ds = trace(t, np.zeros(8, int), np.full(8, 512))
    np.testing.assert_array_equal(stats.arrival_counts(ds, 1.0, duration_s=4.0).values, [2, 2, 2, 2])
    assert stats.index_of_dispersion_counts(ds, 1.0, duration_s=4.0) == pytest.approx(0.0)
    rng = np.random.default_rng(3)
    poisson = np.sort(rng.uniform(0, 20000, 20000))
    ds = trace(poisson, np.zeros(poisson.size, int), np.full(poisson.size, 512))
    assert stats.index_of_dispersion_counts(ds, 10.0, duration_s=20000.0) == pytest.approx(1.0, abs=0.1)


def test_table1_row_on_cloudphysics(cloudphysics_path):
    from tieringlab.traces import read_cloudphysics

    ds = read_cloudphysics(cloudphysics_path)
    row = stats.table1_row(ds)
    assert set(row) >= {"volume_size", "working_set_size", "lru_hit_ratio", "reaccess_ratio", "read_ratio"}
    # independent truth for the sizes: numpy on the raw columns
    o, s = ds["offset"].values, ds["size"].values
    assert row["volume_size"] == int((o + s).max())
    k, _ = split_units(ds, 4096)
    assert row["working_set_size"] == np.unique(k).size * 4096
    assert 0.0 < row["lru_hit_ratio"] < 1.0 and 0.0 < row["reaccess_ratio"] <= 1.0
