"""Synthetic MSR twins: schema, determinism, MMPP sampling, Table 1 calibration at scale, observations."""

from __future__ import annotations

import numpy as np
import pytest

from tieringlab.models.mmpp import on_off_intervals, on_off_points
from tieringlab.traces import TWINS, msr_twin, stats, twins
from tieringlab.traces.twins import table1_targets
from tieringlab.units import PAGE_BYTES, GiB


def test_schema_and_attrs():
    ds = msr_twin("mids0", scale=0.01, seed=3)  # paper names work too
    assert ds.attrs["name"] == "mds_0" and ds.attrs["source"] == "twin" and ds.attrs["scale"] == 0.01
    assert ds["time"].dtype == np.float64 and ds["offset"].dtype == np.int64 and ds["is_write"].dtype == bool
    assert ds["time"].values[0] == 0.0 and np.all(np.diff(ds["time"].values) >= 0)
    assert ds["time"].values[-1] <= 7 * 86400
    assert np.all(ds["size"].values > 0) and np.all(ds["offset"].values >= 0)
    for field in ("hot_io_share", "session_mean", "pareto_alpha", "scan_fraction", "volume_bytes"):
        assert ds.attrs[f"twin_{field}"] == getattr(TWINS["mds_0"], field)
    # requests stay inside the published volume at this scale (Table 1, rounded to whole 4 KB pages)
    assert int((ds["offset"] + ds["size"]).max()) <= table1_targets("mds_0", 0.01)["volume_size"] + PAGE_BYTES


def test_same_inputs_same_arrays_and_seed_matters():
    a, b = msr_twin("src2_1", 0.01, seed=7), msr_twin("src2_1", 0.01, seed=7)
    for v in ("time", "offset", "size", "is_write"):
        np.testing.assert_array_equal(a[v].values, b[v].values)
    c = msr_twin("src2_1", 0.01, seed=8)
    assert a.sizes["request"] != c.sizes["request"] or not np.array_equal(a["offset"].values, c["offset"].values)


def test_bad_arguments_are_named():
    with pytest.raises(KeyError, match="unknown twin"):
        msr_twin("nope_9")
    with pytest.raises(ValueError, match="scale"):
        msr_twin("mds_0", scale=0.0)
    with pytest.raises(ValueError, match="hot_io_share"):
        msr_twin("mds_0", 0.01, hot_io_share=1.0)
    with pytest.raises(ValueError, match="scan_misalign_bytes"):
        msr_twin("src2_1", 0.01, scan_misalign_bytes=100)
    with pytest.raises(ValueError, match="scan_period_s"):
        msr_twin("src2_1", 0.01, scan_period_s=0.0)


def test_mmpp_on_fraction_matches_the_chain():
    # A 2-state chain with exponential sojourns spends m_on / (m_on + m_off) of the time ON.
    rng = np.random.default_rng(0)
    on = on_off_intervals(rng, 2e7, 600.0, 1800.0)
    assert np.all(on[:, 1] > on[:, 0]) and np.all(on[1:, 0] >= on[:-1, 1])
    frac = (on[:, 1] - on[:, 0]).sum() / 2e7
    assert frac == pytest.approx(0.25, abs=0.01)
    assert np.mean(on[:-1, 1] - on[:-1, 0]) == pytest.approx(600.0, rel=0.05)
    pts = on_off_points(rng, on, 10_000)
    k = np.searchsorted(on[:, 0], pts, side="right") - 1
    assert np.all(pts >= on[k, 0]) and np.all(pts <= on[k, 1]) and np.all(np.diff(pts) >= 0)


def _check(name, scale, seed=0, ratios=True):
    ds = msr_twin(name, scale, seed)
    tgt = table1_targets(name, scale)
    vol, wss = stats.volume_size(ds), stats.working_set_size(ds)
    assert vol == pytest.approx(tgt["volume_size"], rel=0.10)
    assert wss == pytest.approx(tgt["working_set_size"], rel=0.10)
    if ratios and tgt["lru_hit_ratio"] is not None:
        assert stats.lru_hit_ratio(ds, tgt["cache_bytes"]) == pytest.approx(tgt["lru_hit_ratio"], abs=0.03)
        assert stats.reaccess_ratio(ds) == pytest.approx(tgt["reaccess_ratio"], abs=0.03)
    return ds


# Scale 1 for three cache-friendly twins and src2_1 (stg_0 at 0.5: 19M page accesses at 1); the larger
# unfriendly twins at a reduced scale that differs from (and is larger than) the fitting scale, with a
# different seed: ratios are scale-invariant by construction, which test_scale_preserves_ratios checks
# directly. usr_2 at scale 1 (382.7 GB working set, ~1.7e8 page accesses) is too costly for a test; the
# notebook runs it at traces.max_wss_gb.
CASES = [("src1_2", 1.0), ("mds_0", 1.0), ("stg_0", 0.5), ("usr_0", 1.0), ("src2_1", 1.0), ("stg_1", 0.1),
         ("web_2", 0.1), ("usr_2", 0.02)]


@pytest.mark.slow
@pytest.mark.parametrize("name,scale", CASES)
def test_twin_matches_table1(name, scale):
    _check(name, scale, seed=1)


@pytest.mark.parametrize("name", ["web_0", "prn_0"])
def test_table9_sizes(name):
    _check(name, 0.05, ratios=False)


def test_otf_twins():
    for name, reads in (("src1_0", 0.11), ("src1_1", 0.99)):
        ds = msr_twin(name, 0.01)
        assert stats.volume_size(ds) == pytest.approx(293 * GiB * 0.01, rel=0.01)
        assert stats.read_ratio(ds) == pytest.approx(reads, abs=0.02)
        assert ds["time"].values[-1] <= 10 * 3600 and ds["time"].values[-1] > 9 * 3600
        # the hot region moves: the busiest 1 GB sub-LUN of one 5-min window is rarely the next one's
        keys, ridx = stats.split_arrays(ds["offset"].values, ds["size"].values, int(GiB * 0.01))
        win = (ds["time"].values[ridx] // 300).astype(int)
        top = [np.bincount(keys[win == w]).argmax() for w in range(0, 100, 10)]
        assert len(set(top)) >= 5


@pytest.mark.slow
def test_scale_preserves_ratios():
    a, b = msr_twin("stg_1", 0.01), msr_twin("stg_1", 0.04, seed=2)
    for f in (lambda d: stats.lru_hit_ratio(d, int(GiB * d.attrs["scale"])), stats.reaccess_ratio):
        assert f(a) == pytest.approx(f(b), abs=0.02)
    assert stats.working_set_size(a) / 0.01 == pytest.approx(stats.working_set_size(b) / 0.04, rel=0.03)
    assert b.sizes["request"] / a.sizes["request"] == pytest.approx(4.0, rel=0.05)


def test_observations_and_spikes():
    from tieringlab.experiments.trace_characterization import TraceCharacterizationParams, observations

    p = TraceCharacterizationParams()
    friendly, unfriendly = msr_twin("mds_0", 0.05), msr_twin("usr_2", 0.01)
    o = observations(p, friendly)
    assert o["rare_share"] > 0.5                    # Obs. 1: most bins rarely accessed
    assert o["max_daily_count"] > 1000              # ... a few thousands of times a day
    assert o["next_day_capture"] > 0.7              # Obs. 2: stable popularity
    ou = observations(p, unfriendly)
    assert ou["rare_share"] > 0.5 and ou["next_day_capture"] > 0.7
    spike = lambda d: stats.bins_per_epoch(d, duration_s=d.attrs["duration_s"]).values
    f, u = spike(friendly), spike(unfriendly)
    # Fig. 1(c)(d): much stronger spikes (peak over median accessed bins; a factor 3 is this test's choice,
    # at scales where the baseline is several bins: at paper scale the gap is wider)
    assert u.max() / np.median(u) > 3 * f.max() / np.median(f)
    # spike strength at paper scale is the documented 6,000 MB of bins per epoch (plus the baseline),
    # inside the paper's 1,800-16,000 MB
    assert 1800 <= u.max() / 0.01 <= 16000


def test_twin_table_lists_fitted_parameters():
    df = twins.twin_table()
    assert set(df["name"]) == set(TWINS) and len(TWINS) == 12
    assert {"hot_io_share", "session_mean", "volume_gb", "wss_gb"} <= set(df.columns)


def test_load_twin_through_the_traces_section():
    from tieringlab.traces import effective_scale, load

    cfg = {"source": "twin", "scale": 0.5, "max_wss_gb": 1.0}
    assert effective_scale("usr_2", cfg) == pytest.approx(1.0 / 382.7, rel=1e-6)
    assert effective_scale("mds_0", {"scale": 0.01}) == 0.01
    ds = load("src21", {"source": "twin", "scale": 0.01}, seed=4)
    ref = msr_twin("src2_1", 0.01, seed=4)
    np.testing.assert_array_equal(ds["offset"].values, ref["offset"].values)
    with pytest.raises(ValueError, match="source"):
        load("mds_0", {"source": "web"})


# --- cache-unfriendly twins: the daily scan job over fixed extents (Obs. 1-2) -----------------------

def test_scan_passes_stripe_every_bin_once_a_day_without_page_revisits():
    """Small brute-force check of twins._scan_passes: plain-Python page sets per pass and per IO."""
    from dataclasses import replace

    spec = replace(TWINS["src2_1"], spike_epoch_bytes=4 << 20, spike_on_s=120.0)
    rng = np.random.default_rng(5)
    scan_bins = np.array([3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
    scan_pages = 9 * 256 + 100                                  # last bin partly used
    off, size, t, on = twins._scan_passes(rng, spec, 1.0, scan_pages, scan_bins, 7 * 86400.0)
    assert np.all(off % 512 == 0) and np.all(size % 512 == 0) and np.all(size > 0)
    day = (t // 86400).astype(int)
    pages_of = [set(range(o // 4096, (o + s - 1) // 4096 + 1)) for o, s in zip(off.tolist(), size.tolist())]
    bins_of = [{p // 256 for p in ps} for ps in pages_of]
    assert all(len(b) == 1 for b in bins_of)                    # an IO never leaves its 1 MB bin
    allowed = {b * 256 + i for b in scan_bins.tolist() for i in range(256)}
    per_day_pages, per_day_bins = [], []
    for d in range(7):
        idx = np.flatnonzero(day == d)
        per_day_pages.append(set().union(*(pages_of[i] for i in idx)))
        per_day_bins.append(set().union(*(bins_of[i] for i in idx)))
    # the same fixed extents every day: every scan bin that has a stripe for the day is swept that day
    full_bins = set(scan_bins[:9].tolist())
    assert all(full_bins <= b <= set(scan_bins.tolist()) for b in per_day_bins)
    # ... but every page in one day only, and the days' pages together are exactly the scan region
    for a in range(7):
        for b in range(a + 1, 7):
            assert not per_day_pages[a] & per_day_pages[b]
    union = set().union(*per_day_pages)
    assert len(union) == scan_pages and union <= allowed
    # consecutive IOs of a stripe share exactly one 4 KB page (the misaligned boundary page)
    order = np.argsort(off, kind="stable")
    shared = [len(pages_of[i] & pages_of[j]) for i, j in zip(order[:-1], order[1:])]
    assert set(shared) <= {0, 1} and shared.count(1) > len(shared) // 2
    # scan IOs only while the MMPP is ON
    k = np.searchsorted(on[:, 0], t, side="right") - 1
    assert np.all(t >= on[k, 0]) and np.all(t <= on[k, 1])


def _next_day_capture(ds) -> float:
    """Obs. 2 written plainly: per pair of consecutive days, the share of day d+1's IOs that go to the
    busiest bins taking 80 % of day d's IOs (a request counts for every 1 MB bin it touches)."""
    off, size, t = ds["offset"].values, ds["size"].values, ds["time"].values
    first, last = off // (1 << 20), (off + size - 1) // (1 << 20)
    assert np.all(last - first <= 1)                            # twins' IOs span at most two bins
    bins = np.concatenate([first, last[last != first]])
    days = np.concatenate([t, t[last != first]]) // 86400
    shares = []
    for d in range(6):
        today = np.bincount(bins[days == d], minlength=int(bins.max()) + 1)
        tomorrow = np.bincount(bins[days == d + 1], minlength=int(bins.max()) + 1)
        order = np.argsort(-today, kind="stable")
        k = int(np.searchsorted(np.cumsum(today[order]), 0.8 * today.sum()) + 1)
        shares.append(tomorrow[order[:k]].sum() / tomorrow.sum())
    return float(np.mean(shares))


UNFRIENDLY_OBS2 = [("stg_1", 0.01), ("usr_2", 0.003), ("web_2", 0.01), ("src2_1", 0.05)]


@pytest.mark.parametrize("name,scale", UNFRIENDLY_OBS2)
def test_unfriendly_popularity_stable_day_to_day(name, scale):
    # Obs. 2 "does not vary significantly over time": a perfectly stable popularity gives about 0.8,
    # the ledger's documented threshold is 0.7. Per-bin counts of the scan extents do not depend on
    # the scale (a bin gets one stripe a day), so a small scale is meaningful here.
    from tieringlab.experiments.trace_characterization import TraceCharacterizationParams, observations

    ds = msr_twin(name, scale, seed=2)
    cap = _next_day_capture(ds)
    assert cap >= 0.7
    # the notebook's implementation agrees (it breaks ties among equally busy bins differently)
    assert observations(TraceCharacterizationParams(), ds)["next_day_capture"] == pytest.approx(cap, abs=0.01)


# Obs. 1 needs the hot set to span whole bins (per-bin rates are scale-invariant only then): scales
# with scale x hot_bytes >= 1 MB; src2_1's 1 MB hot set needs scale 1 (it is small: 22 GB working set).
UNFRIENDLY_OBS1 = [("stg_1", 0.05), ("usr_2", 0.02), ("web_2", 0.25), ("src2_1", 1.0)]


@pytest.mark.slow
@pytest.mark.parametrize("name,scale", UNFRIENDLY_OBS1)
def test_unfriendly_bimodal_bins_with_hot_bins_thousands_a_day(name, scale):
    assert TWINS[name].hot_bytes * scale >= 1 << 20
    ds = msr_twin(name, scale, seed=3)
    daily = stats.bin_daily_counts(ds)
    # plain recount of the busiest bin: requests touching it (IOs span at most two bins)
    off, size = ds["offset"].values, ds["size"].values
    b = np.concatenate([off >> 20, ((off + size - 1) >> 20)[(off >> 20) != ((off + size - 1) >> 20)]])
    assert daily.max() == pytest.approx(np.bincount(b).max() / 7.0)
    assert daily.max() >= 1000                    # Obs. 1: "more than thousands of times a day"
    assert (daily < 10).mean() > 0.5              # Obs. 1: most bins accessed < 10 times a day


def test_tiny_scale_hot_set_smaller_than_any_object_size():
    """At scales where the hot footprint is smaller than every sampled object size (src2_1's 1 MB hot set
    at scale 2.6e-4 is one page), the twin still has one hot object covering the footprint, not an error."""
    ds = msr_twin("src2_1", scale=2.6e-4, seed=0)
    assert ds.sizes["request"] > 0
    assert bool((ds["size"] > 0).all())
    # every request inside the volume: the published volume (vFRM Table 1) at this scale, rounded to whole pages
    # (the attribute is the twin's paper-scale volume, twin_volume_bytes; a missing one is a KeyError, not 2^62)
    assert ds.attrs["twin_volume_bytes"] == TWINS["src2_1"].volume_bytes
    assert int((ds["offset"] + ds["size"]).max()) <= table1_targets("src2_1", 2.6e-4)["volume_size"] + PAGE_BYTES
