"""LRU/ARC/CAR page caches (tieringlab.policies.caching) against independent oracles.

The default engine on a CPU is numba (tieringlab.policies._native): every test without an ``engine``
argument tests it. The JAX scan engine is tested against the numba engine on random traces with writes
(identical hits and write-backs), and directly against libcachesim and the reference caches below.

Oracles: libcachesim 0.3.5 (LRU, ARC; ``obj_size=1``, ``cache_size=capacity`` units, so ghost entries
do not count against the size, as in the ARC paper), plain reference caches written from the ARC and
CAR papers' pseudo-code (tests/cache_refs.py), an OrderedDict LRU, and a brute-force page simulation of
vFRM Table 2 for the operation counts.
"""

from __future__ import annotations

from collections import OrderedDict

import libcachesim as lcs
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from cache_refs import ref_replay
from hypothesis import given, settings
from hypothesis import strategies as st

from tieringlab.policies import caching, lru


def lcs_hits(policy, keys, capacity):
    cache = {"lru": lcs.LRU, "arc": lcs.ARC}[policy](capacity)
    return np.array([bool(cache.get(lcs.Request(obj_size=1, op=lcs.ReqOp.OP_GET, obj_id=int(k))))
                     for k in keys])


def ordered_dict_lru(keys, capacity):
    d, out = OrderedDict(), []
    for k in keys:
        if k in d:
            d.move_to_end(k)
            out.append(True)
        else:
            out.append(False)
            d[k] = None
            if len(d) > capacity:
                d.popitem(last=False)
    return np.array(out)


def read_cloudphysics(path, n_requests=None) -> xr.Dataset:
    """The CloudPhysics CSV (time s, op 28/2a, size bytes, lbn 512-byte sectors) as a trace Dataset."""
    d = pd.read_csv(path, nrows=n_requests)
    return xr.Dataset({"time": ("request", d["time"].to_numpy(np.float64)),
                       "offset": ("request", d["lbn"].to_numpy(np.int64) * 512),
                       "size": ("request", d["size"].to_numpy(np.int64)),
                       "is_write": ("request", (d["op"].astype(str).str.lower() == "2a").to_numpy())})


keys_st = st.lists(st.integers(0, 40), min_size=1, max_size=300)


@settings(max_examples=20, deadline=None)
@given(keys=keys_st, capacity=st.integers(1, 30))
def test_lru_matches_libcachesim_and_ordereddict(keys, capacity):
    ours = caching.hits("lru", np.array(keys), capacity)
    np.testing.assert_array_equal(ours, lcs_hits("lru", keys, capacity))
    np.testing.assert_array_equal(ours, ordered_dict_lru(keys, capacity))


@settings(max_examples=20, deadline=None)
@given(keys=keys_st, capacity=st.integers(1, 30))
def test_arc_matches_libcachesim(keys, capacity):
    np.testing.assert_array_equal(caching.hits("arc", np.array(keys), capacity), lcs_hits("arc", keys, capacity))


@settings(max_examples=20, deadline=None)
@given(keys=keys_st, capacity=st.integers(1, 30))
def test_car_matches_paper_pseudocode(keys, capacity):
    np.testing.assert_array_equal(caching.hits("car", np.array(keys), capacity),
                                  ref_replay("car", keys, capacity)[0])


@settings(max_examples=10, deadline=None)
@given(keys=keys_st, capacity=st.integers(1, 30))
@pytest.mark.parametrize("policy", ["lru", "arc"])
def test_jax_engine_matches_libcachesim(policy, keys, capacity):
    np.testing.assert_array_equal(caching.hits(policy, np.array(keys), capacity, engine="jax"),
                                  lcs_hits(policy, keys, capacity))


@settings(max_examples=25, deadline=None)
@given(keys=st.lists(st.integers(0, 60), min_size=1, max_size=400),
       caps=st.lists(st.integers(1, 40), min_size=1, max_size=4), data=st.data())
@pytest.mark.parametrize("policy", caching.POLICIES)
def test_numba_and_jax_engines_identical(policy, keys, caps, data):
    """Both engines: the same hits and dirty write-backs at every capacity, access by access."""
    writes = np.array(data.draw(st.lists(st.booleans(), min_size=len(keys), max_size=len(keys))))
    keys = np.array(keys)
    hn, wn = caching.replay(policy, keys, caps, writes, engine="numba")
    hj, wj = caching.replay(policy, keys, caps, writes, engine="jax")
    np.testing.assert_array_equal(hn, hj)
    np.testing.assert_array_equal(wn, wj)


@pytest.mark.parametrize("policy", caching.POLICIES)
def test_engines_identical_trace_counts(policy):
    """simulate's hits and Table 2 counts are the same on both engines (LRU: stack distances on JAX)."""
    rng = np.random.default_rng(11)
    n = 1500
    ds = xr.Dataset({"time": ("request", np.arange(n, dtype=float)),
                     "offset": ("request", (rng.zipf(1.2, n) % 300) * 4096 + rng.integers(0, 2, n) * 512),
                     "size": ("request", rng.choice([512, 4096, 8192, 16384], n)),
                     "is_write": ("request", rng.random(n) < 0.4)})
    flash = [16 * 4096, 64 * 4096, 200 * 4096]
    a = caching.simulate(ds, policy, flash, caching.CachingParams(engine="numba"))
    b = caching.simulate(ds, policy, flash, caching.CachingParams(engine="jax"))
    for k in ("hits", "ssd_reads", "ssd_writes", "md_reads", "md_writes", "dirty_evictions", "request_hit",
              "cont_ssd_reads", "cont_ssd_writes", "cont_md_reads", "cont_md_writes", "io_cost_by_pricing"):
        np.testing.assert_array_equal(a[k].values, b[k].values, err_msg=k)


@pytest.mark.parametrize("policy", caching.POLICIES)
def test_numba_counting_paths_agree(policy, monkeypatch):
    """The counting replay gives the same result with page ids taken from the page numbers (dense address
    span), with ids from the sorted distinct pages (a span of 2^40 bytes, far sparser than 16 page
    accesses per page), with several flash sizes on threads, and in chunks of a few dozen page accesses
    (the lists and ARC/CAR's p carried from chunk to chunk) as in one."""
    rng = np.random.default_rng(5)
    n = 1200
    block = rng.zipf(1.3, n) % 200  # requests stay inside 64 KB blocks (at most 3 x 4 KB + 512 B + 32 KB)
    off = block * 65536 + rng.integers(0, 4, n) * 4096 + rng.integers(0, 2, n) * 512
    ds = xr.Dataset({"time": ("request", np.arange(n, dtype=float)), "offset": ("request", off),
                     "size": ("request", rng.choice([512, 4096, 8192, 32768], n)),
                     "is_write": ("request", rng.random(n) < 0.4)})
    sparse = ds.assign(offset=ds.offset + (block % 7) * (1 << 37))  # the same blocks, 2^37 bytes apart
    flash = [8 * 4096, 32 * 4096, 128 * 4096]
    a = caching.simulate(ds, policy, flash)
    b = caching.simulate(sparse, policy, flash, caching.CachingParams(threads=2))
    c = caching.simulate(sparse, policy, flash, caching.CachingParams(engine="jax"))
    monkeypatch.setattr(caching, "_COUNT_CHUNK", 37)
    d = caching.simulate(ds, policy, flash)
    e = caching.simulate(sparse, policy, flash)
    for k in ("hits", "ssd_reads", "ssd_writes", "md_reads", "md_writes", "cont_ssd_reads", "cont_ssd_writes",
              "cont_md_reads", "request_hit"):
        np.testing.assert_array_equal(a[k].values, b[k].values, err_msg=k)
        np.testing.assert_array_equal(b[k].values, c[k].values, err_msg=k)
        np.testing.assert_array_equal(d[k].values, c[k].values, err_msg=k)
        np.testing.assert_array_equal(e[k].values, c[k].values, err_msg=k)


def test_arc_reference_agrees_with_libcachesim():
    """The plain ARC reference used for the write-back counts is itself checked against libcachesim."""
    rng = np.random.default_rng(1)
    for _ in range(10):
        keys = rng.zipf(1.3, 400) % 50
        c = int(rng.integers(1, 30))
        np.testing.assert_array_equal(ref_replay("arc", keys, c)[0], lcs_hits("arc", keys, c))


@settings(max_examples=20, deadline=None)
@given(keys=keys_st, capacity=st.integers(1, 30), data=st.data())
@pytest.mark.parametrize("policy", caching.POLICIES)
def test_dirty_writebacks_match_reference(policy, keys, capacity, data):
    writes = data.draw(st.lists(st.booleans(), min_size=len(keys), max_size=len(keys)))
    hit, wb = caching.replay(policy, np.array(keys), [capacity], np.array(writes))
    ref_hit, ref_wb = ref_replay(policy, keys, capacity, writes)
    np.testing.assert_array_equal(hit[0], ref_hit)
    np.testing.assert_array_equal(wb[0], ref_wb)


def brute_force_counts(ds, policy, capacity_pages, page=4096):
    """vFRM Table 2(a)(b) counted page by page with the plain reference caches."""
    from cache_refs import REFS

    cache = REFS[policy](capacity_pages)
    n = dict(hits=0, ssd_r=0, ssd_w=0, md_r=0, md_w=0, cont_ssd_r=0, cont_ssd_w=0, cont_md_r=0)
    for off, size, w in zip(ds.offset.values, ds["size"].values, ds.is_write.values):
        all_hit = True
        last = None  # the previous page's operations in this request: a run continues on the same ones
        for pg in range(off // page, (off + size - 1) // page + 1):
            hit, wb = cache.access(int(pg), bool(w))
            all_hit &= hit
            ops = {"ssd_w"} if w else {"ssd_r"} if hit else {"md_r", "ssd_w"}
            for op in ops:
                n[op] += 1
                if last is not None and op in last:
                    n["cont_" + op] += 1
            last = ops
            if wb:
                n["ssd_r"] += 1
                n["md_w"] += 1
        n["hits"] += all_hit
    return n


@pytest.mark.parametrize("policy", caching.POLICIES)
def test_trace_counts_match_brute_force(policy):
    rng = np.random.default_rng(7)
    n = 400
    ds = xr.Dataset({"time": ("request", np.arange(n, dtype=float)),
                     "offset": ("request", rng.integers(0, 60, n) * 4096 + rng.integers(0, 2, n) * 512),
                     "size": ("request", rng.choice([512, 4096, 8192, 16384], n)),
                     "is_write": ("request", rng.random(n) < 0.4)})
    flash = [8 * 4096, 20 * 4096]
    out = caching.simulate(ds, policy, flash)
    if policy == "lru":  # LRU is a stack algorithm (Mattson et al. 1970): a hit at 8 pages is a hit at 20
        rh = out.request_hit.values
        assert np.all(rh[0] <= rh[1]) and rh[0].sum() < rh[1].sum()
    for i, fb in enumerate(flash):
        ref = brute_force_counts(ds, policy, fb // 4096)
        got = out.isel(capacity_bytes=i)
        assert int(got.hits) == ref["hits"]
        assert int(got.ssd_reads) == ref["ssd_r"]
        assert int(got.ssd_writes) == ref["ssd_w"]
        assert int(got.md_reads) == ref["md_r"]
        assert int(got.md_writes) == ref["md_w"]
        assert int(got.cont_ssd_reads) == ref["cont_ssd_r"]
        assert int(got.cont_ssd_writes) == ref["cont_ssd_w"]
        assert int(got.cont_md_reads) == ref["cont_md_r"]
        assert int(got.cont_md_writes) == 0
    assert out.hit_ratio.dims == ("capacity_bytes",)
    np.testing.assert_array_equal(out.hit_ratio.values, out.hits.values / n)


def test_request_hit_needs_every_page():
    ds = xr.Dataset({"time": ("request", [0.0, 1.0, 2.0]),
                     "offset": ("request", [0, 0, 4096]),
                     "size": ("request", [4096, 8192, 4096]),
                     "is_write": ("request", [False, False, False])})
    out = caching.simulate(ds, "lru", [4 * 4096])
    # request 1 touches page 0 (hit) and page 1 (miss) -> miss; request 2 touches page 1 -> hit
    np.testing.assert_array_equal(out.request_hit.values[0], [False, False, True])


def test_errors_name_the_parameter():
    with pytest.raises(ValueError, match="policy must be one of 'lru', 'arc', 'car'"):
        caching.hits("fifo", np.array([1, 2]), 2)
    with pytest.raises(ValueError, match="capacity"):
        caching.hits("lru", np.array([1, 2]), 0)
    with pytest.raises(ValueError, match="keys"):
        caching.hits("lru", np.array([1.5]), 2)
    bad = xr.Dataset({"offset": ("request", [0]), "size": ("request", [0]), "is_write": ("request", [False])})
    with pytest.raises(ValueError, match="size"):
        caching.simulate(bad, "lru", [4096])
    with pytest.raises(ValueError, match="engine must be one of 'auto', 'numba', 'jax'"):
        caching.hits("lru", np.array([1, 2]), 2, engine="cuda")
    with pytest.raises(ValueError, match="engine"):
        caching.CachingParams(engine="numpy")
    with pytest.raises(ValueError, match="engine"):
        caching.replay("car", np.array([1]), [1], engine="")


# ---- the real CloudPhysics trace -----------------------------------------------------------------
# The first N_REAL requests (a prefix; the whole trace, 1.14 M page accesses, is pinned in
# tests/test_cloudphysics_pins.py). The ARC comparison also runs on the JAX engine, whose scan costs
# ~10 us per page access on one CPU core.
N_REAL = 8000


@pytest.fixture(scope="module")
def cp_prefix(cloudphysics_path):
    return read_cloudphysics(cloudphysics_path, N_REAL)


@pytest.mark.parametrize("policy, engine", [("lru", "auto"), ("arc", "auto"), ("arc", "jax")])
def test_real_trace_pages_match_libcachesim(cp_prefix, policy, engine):
    pages, _, _ = caching.page_accesses(cp_prefix)
    for cap in (512, 4096):
        np.testing.assert_array_equal(caching.hits(policy, pages, cap, engine=engine), lcs_hits(policy, pages, cap))


# Pinned behaviour: computed once with this implementation (after the oracle tests above passed) and
# typed in, so that any change in behaviour is seen. Correctness is established by the oracle tests.
PINNED_HITS = {  # policy -> hits (requests all of whose pages hit) at 2 MB and 16 MB of Flash
    "lru": [4509, 4903],
    "arc": [4790, 4914],
    "car": [4783, 4914],
}


@pytest.mark.parametrize("policy", caching.POLICIES)
def test_pinned_hits_on_cloudphysics_prefix(cp_prefix, policy):
    out = caching.simulate(cp_prefix, policy, [2 << 20, 16 << 20])
    assert out.hits.values.tolist() == PINNED_HITS[policy]


@settings(max_examples=20, deadline=None)
@given(keys=keys_st, capacity=st.integers(1, 30), data=st.data())
def test_lru_stack_distance_path_equals_scan(keys, capacity, data):
    writes = np.array(data.draw(st.lists(st.booleans(), min_size=len(keys), max_size=len(keys))))
    hit, n_wb = lru.lru_counts(np.array(keys), [capacity, capacity + 3], writes)
    scan_hit, scan_wb = caching.replay("lru", np.array(keys), [capacity, capacity + 3], writes)
    np.testing.assert_array_equal(hit, scan_hit)
    np.testing.assert_array_equal(n_wb, scan_wb.sum(axis=1))


def test_simulate_reports_eq4_io_cost_from_its_counts():
    """The cache's IO cost is Eq. 4 over its Table 2 counts at the 4 KB random latencies of Table 3."""
    from tieringlab.models.devices import vfrm_latency

    rng = np.random.default_rng(3)
    n = 300
    ds = xr.Dataset({"time": ("request", np.arange(n, dtype=float)),
                     "offset": ("request", rng.integers(0, 40, n) * 4096),
                     "size": ("request", np.full(n, 4096)),
                     "is_write": ("request", rng.random(n) < 0.3)})
    out = caching.simulate(ds, "arc", [8 * 4096]).isel(capacity_bytes=0)
    lat = {(d, o): vfrm_latency(d, o, "random", 4096) for d in ("ssd", "md") for o in ("read", "write")}
    expected = (int(out.ssd_reads) * lat["ssd", "read"] + int(out.ssd_writes) * lat["ssd", "write"]
                + int(out.md_reads) * lat["md", "read"] + int(out.md_writes) * lat["md", "write"])
    assert float(out.io_cost) == pytest.approx(expected, rel=1e-12)


@settings(max_examples=15, deadline=None)
@given(keys=keys_st, caps=st.lists(st.integers(1, 30), min_size=2, max_size=4), data=st.data())
@pytest.mark.parametrize("policy", caching.POLICIES)
def test_several_capacities_and_chunks_equal_one_at_a_time(policy, keys, caps, data):
    """One call over several capacities, with the trace cut into small chunks (state carried across
    scan calls), gives the hits and write-backs of one whole-trace call per capacity."""
    writes = np.array(data.draw(st.lists(st.booleans(), min_size=len(keys), max_size=len(keys))))
    keys = np.array(keys)
    one = [caching.replay(policy, keys, [c], writes) for c in caps]
    with pytest.MonkeyPatch.context() as m:  # chunks are the JAX engine's
        m.setattr(caching, "_CHUNK", 64)
        hit, wb = caching.replay(policy, keys, caps, writes, engine="jax")
    np.testing.assert_array_equal(hit, np.concatenate([h for h, _ in one]))
    np.testing.assert_array_equal(wb, np.concatenate([b for _, b in one]))
