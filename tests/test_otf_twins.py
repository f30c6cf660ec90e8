"""The OTF-AST twins (src1_0, src1_1; tieringlab.models.workloads.otf_ast via msr_twin): calibration
targets, the sub-LUN structure of the replay windows, and that every other twin stayed bit-identical."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import numpy as np
import pytest

from tieringlab.models.workloads import otf_ast as wl
from tieringlab.policies.otf_ast import OtfAstParams, hot_matrix, interval_counts
from tieringlab.traces import msr_twin
from tieringlab.units import GiB

# sha256 (first 32 hex) of (time, offset, size, is_write) of every non-OTF twin at a small scale, seed 3,
# recorded from main at a1e5bb5 before the OTF-AST twins changed (tieringlab/traces/twins.py).
OTHER_TWIN_DIGESTS = {
    ("mds_0", 0.01): "0f02ff723d207acf357d0b17c984e389",
    ("src1_2", 0.02): "6ba7ac4f7708654e5f445cc32a7e9c52",
    ("stg_0", 0.01): "6bf201e3f3a1cd9e36a2a0c831fb6a34",
    ("usr_0", 0.01): "b1b6971075efc93699d969cfc4978dbe",
    ("stg_1", 0.002): "6a7bb6e69edaade7462259bc49f1416c",
    ("usr_2", 0.0005): "493695e915480c1dcbc66a2a29f586eb",
    ("web_2", 0.002): "37857f7e97dfb37f799f6810c1993d1e",
    ("src2_1", 0.01): "0b8530896ea6e6200aeaa008eaf2a243",
    ("web_0", 0.01): "ec51baddaef30f1e29a224b830b244d4",
    ("prn_0", 0.005): "88232a5937cfa19e3d8646b7231df31a",
}


@pytest.mark.parametrize("name,scale", sorted(OTHER_TWIN_DIGESTS))
def test_other_twins_are_bit_identical(name, scale):
    ds = msr_twin(name, scale, seed=3)
    h = hashlib.sha256()
    for v in ("time", "offset", "size", "is_write"):
        h.update(np.ascontiguousarray(ds[v].values).tobytes())
    assert h.hexdigest()[:32] == OTHER_TWIN_DIGESTS[(name, scale)]


SCALE = 0.05


@pytest.fixture(scope="module", params=["src1_0", "src1_1"])
def twin(request):
    return request.param, msr_twin(request.param, SCALE, seed=1)


def _window(ds, lo, hi):
    t = ds["time"].values
    a, b = np.searchsorted(t, [lo, hi])
    return slice(int(a), int(b))


def test_windows_and_read_ratio(twin):
    """Table 2 windows (100 / 120 min, training just before) and C14's read ratio in the replay."""
    name, ds = twin
    L = {"src1_0": 6000.0, "src1_1": 7200.0}[name]
    a = ds.attrs
    assert a["replay_end_s"] - a["replay_start_s"] == L and a["replay_start_s"] - a["train_start_s"] == L
    assert a["trace_offset_min"] + a["replay_start_s"] / 60 == {"src1_0": 1920.0, "src1_1": 480.0}[name]
    rp = _window(ds, a["replay_start_s"], a["replay_end_s"])
    reads = 1 - ds["is_write"].values[rp].mean()
    assert reads == pytest.approx({"src1_0": 0.11, "src1_1": 0.99}[name], abs=0.01)


def test_calibration_targets_at_reduced_scale():
    """Static tiering's 1 %, FlashCache's pass-1 hit ratio and (src1_1) pass 2 equal to pass 1 are trace
    statistics the twins are fitted to (means over seeds 0-4 at scale 0.05: src1_0 6.3 % for the paper's 7 %,
    src1_1 36.9 % and a rise of 0.5 points, see ACHIEVED); on another seed they hold to a few points (ratios of
    counts and of bytes to the cache: scale-invariant, sub-LUNs, the cache and the IO count shrink together)."""
    for name, hit in (("src1_0", 0.07), ("src1_1", 0.37)):
        r = wl.calibration_stats(wl.OTF_TWINS[name], 0.02, seed=7, response=False)
        assert r["static_ratio"] == pytest.approx(0.01, abs=0.01)
        assert r["lru_hit_ratio"] == pytest.approx(hit, abs=0.03)
        # the footprint premise: pass 2 equal to pass 1 (src1_1) needs it well above the 24 GB cache; src1_0's pass 2
        # rises (7 % -> 19 %), so its footprint is above the cache but not far (the old twins: 0.66 and 1.01)
        if name == "src1_1":
            assert abs(r["lru_pass2_rise"]) < 0.02 and r["footprint_ratio"] > 1.5
        else:
            assert r["footprint_ratio"] > 1.0


def test_replay_window_structure(twin):
    """During the active phase (Fig. 6) the IO is concentrated (the paper's top-20 >= 50 % test holds in most
    intervals); outside it the IO is spread (the test fails in most intervals: the background, fleeting bursts and
    IO spread over the region put about 0.4 of an interval's IO in its top 20); hot spots live minutes, not the
    whole phase (the abstract's premise: hot regions move every several minutes)."""
    name, ds = twin
    a = ds.attrs
    rp = _window(ds, a["replay_start_s"], a["replay_end_s"])
    t = ds["time"].values[rp] - a["replay_start_s"]
    U = max(4096, int(round(GiB * SCALE)) // 4096 * 4096)
    sub = ds["offset"].values[rp] // U
    K = int((a["replay_end_s"] - a["replay_start_s"]) // 60)
    p = OtfAstParams()
    cnt = interval_counts(sub, t, 300, 60, 60, K)
    hot, conc = hot_matrix(cnt, p)
    ph = np.asarray(a["active_phases_s"]).reshape(-1, 2)[-1] - a["replay_start_s"]
    k_act = (np.arange(K) * 60 >= ph[0]) & (np.arange(K) * 60 + 60 <= ph[1])
    k_out = (np.arange(K) * 60 + 60 <= ph[0]) | (np.arange(K) * 60 >= ph[1])
    assert conc[k_act].mean() > 0.8
    # the top-20 share of each interval's IO: about 0.8 in the active phase, about 0.4 outside it (at scale 1, where
    # the test then fails in every quiet interval; at this scale, ~500 IOs a minute, sampling noise lifts it to
    # ~0.5: the old twin had 0.89 everywhere)
    top20 = np.sort(cnt, axis=1)[:, -20:].sum(axis=1) / np.maximum(cnt.sum(axis=1), 1)
    assert np.median(top20[k_act]) > 0.75 and np.median(top20[k_out]) < 0.6
    assert np.median(top20[k_act]) - np.median(top20[k_out]) > 0.25
    # a sub-LUN's hot runs inside the active phase: the band moves every Exp(3 min), so the IO-weighted median run
    # is minutes long (the old twin's band crept one sub-LUN per 3 min: 18-interval runs)
    from tieringlab.experiments.otf_ast import hot_runs, weighted_median
    length, ios = hot_runs(hot[k_act], cnt[k_act])
    assert 2 <= weighted_median(length, ios) <= 10


def test_band_dwell_is_exponential_and_moves_to_the_neighbouring_band():
    """The band (notes Sec. 6.2) sits on a position for an Exp(band_dwell_s) time, then moves band_width sub-LUNs
    on: on a pure band twin of width 1 (every IO in the band), the position changes are steps of +1 (mod the
    region) and the dwell times have the exponential's mean D and coefficient of variation 1."""
    spec = replace(wl.OTF_TWINS["src1_1"], background_share=0.0, band_share=1.0, band_width=1, mean_iops=100.0,
                   band_dwell_s=20.0, active_phases_min=((0.0, 120.0),), burst_ratio=1.0, region_subluns=120,
                   p_repeat=0.0)
    t, off, _size, _w, a = wl.generate(spec, 0.1, seed=3)
    rp = slice(*np.searchsorted(t, [a["replay_start_s"], a["replay_end_s"]]))
    sub = off[rp] // wl.scaled_sublun_bytes(0.1)
    tt = t[rp]
    ch = np.flatnonzero(np.diff(sub) != 0)                  # 10 IO/s: a dwell under ~0.3 s (1.5 %) can be missed
    step = (sub[ch + 1] - sub[ch]) % 293
    assert np.isin(step, [1, 293 - 119]).mean() > 0.97     # +1, or the wrap at the region's end
    dwell = np.diff(tt[ch + 1])                             # change to change: ~360 dwells, each to within ~0.1 s
    assert dwell.mean() == pytest.approx(spec.band_dwell_s, rel=0.1)
    assert dwell.std() / dwell.mean() == pytest.approx(1.0, abs=0.12)


def test_training_hot_area_is_cold_in_the_replay(twin):
    """Notes Sec. 6.2: the training window's busiest sub-LUNs (area A) are not where the replay's IO goes."""
    name, ds = twin
    a = ds.attrs
    U = max(4096, int(round(GiB * SCALE)) // 4096 * 4096)
    sub = ds["offset"].values // U
    tr = sub[_window(ds, a["train_start_s"], a["replay_start_s"])]
    rp = sub[_window(ds, a["replay_start_s"], a["replay_end_s"])]
    top_tr = np.argsort(-np.bincount(tr, minlength=300), kind="stable")[:24]
    top_rp = np.argsort(-np.bincount(rp, minlength=300), kind="stable")[:24]
    assert len(set(top_tr) & set(top_rp)) <= 2


def test_priors_are_overridable_and_checked():
    ds = msr_twin("src1_1", 0.01, seed=0, band_width=3, band_dwell_s=60.0, band_share=0.85)
    assert ds.attrs["twin_band_width"] == 3 and ds.attrs["twin_band_share"] == 0.85
    with pytest.raises(ValueError, match="unknown twin parameter"):
        msr_twin("src1_0", 0.01, hot_io_share=0.5)
    with pytest.raises(ValueError, match="background_share \\+ band_share"):
        msr_twin("src1_0", 0.01, band_share=0.95)
    with pytest.raises(ValueError, match="region_subluns"):
        replace(wl.OTF_TWINS["src1_0"], region_subluns=2)


def test_same_seed_same_twin_and_seeds_differ():
    a, b, c = (msr_twin("src1_0", 0.01, seed=s) for s in (4, 4, 5))
    for v in ("time", "offset", "size", "is_write"):
        np.testing.assert_array_equal(a[v].values, b[v].values)
    assert a.sizes["request"] != c.sizes["request"] or not np.array_equal(a["offset"].values, c["offset"].values)


def test_arrivals_are_the_mmpp2_of_the_spec():
    """The twins' arrivals inside the windows: mean rate and index of dispersion of counts at 1, 10, 100 s
    against tieringlab.models.mmpp.MMPP2's closed forms for the spec's rates and switching rates."""
    from tieringlab.models.mmpp import MMPP2

    spec = replace(wl.OTF_TWINS["src1_1"], mean_iops=20.0, duration_min=3000.0, replay_start_min=1500.0,
                   replay_min=1500.0, outside_rate_factor=1.0)   # ~1800 burst cycles of 100 s
    t = wl.arrivals(np.random.default_rng(0), spec)
    c = np.bincount(t.astype(np.int64), minlength=int(spec.duration_min * 60))
    p_on = spec.burst_on_s / (spec.burst_on_s + spec.burst_off_s)
    lo = spec.mean_iops / (p_on * spec.burst_ratio + 1 - p_on)
    m = MMPP2(lam1=lo * spec.burst_ratio, lam2=lo, r12=1 / spec.burst_on_s, r21=1 / spec.burst_off_s)
    assert c.mean() == pytest.approx(float(m.mean_rate()), rel=0.02)
    for T in (1, 10, 100):
        x = c[: c.size // T * T].reshape(-1, T).sum(1)
        assert x.var() / x.mean() == pytest.approx(float(m.index_of_dispersion_counts(T)), rel=0.1)
