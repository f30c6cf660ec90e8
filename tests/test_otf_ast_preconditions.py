"""OTF-AST's preconditions (issue 28/30): the replay footprint over the cache, the hot-spot lifetime and the share
of intervals the concentration test rejects, each measured against a hand-computed small case; the rows and what
requires them; the duplicate rows gone; and every row the notebook records, with its readings and samples."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr

from tieringlab.claims import otf_ast as C
from tieringlab.claims import registry as claim_registry
from tieringlab.experiments import otf_ast as X
from tieringlab.params import validate_section
from tieringlab.paths import repo_root
from tieringlab.units import KiB, MiB

BLOCK = 4 * KiB


# ------------------------------------------------------------------------------------ footprint

def test_footprint_counts_distinct_blocks_by_hand():
    # blocks touched: [0], [0, 1] (crosses the boundary), [1], [10], nothing (size 0), [0, 1] (overlap)
    off = [0, 4095, 4096, 10 * BLOCK + 5, 20 * BLOCK, 2000]
    size = [4096, 2, 100, 1, 0, 5000]
    assert X.footprint_bytes(off, size, BLOCK) == 3 * BLOCK          # blocks 0, 1, 10
    assert X.footprint_bytes([], [], BLOCK) == 0
    # a run of adjacent requests merges into one range; a gap is not counted
    assert X.footprint_bytes([0, BLOCK, 3 * BLOCK], [BLOCK, BLOCK, 2 * BLOCK], BLOCK) == 4 * BLOCK


def test_footprint_matches_a_set_of_blocks_on_random_requests():
    rng = np.random.default_rng(3)
    off = rng.integers(0, 400 * BLOCK, 500)
    size = rng.integers(0, 20 * BLOCK, 500)
    truth = set()
    for o, s in zip(off, size):
        if s > 0:
            truth.update(range(o // BLOCK, (o + s - 1) // BLOCK + 1))
    assert X.footprint_bytes(off, size, BLOCK) == len(truth) * BLOCK


def _trace(time, offset, size, start, end):
    n = len(time)
    ds = xr.Dataset({"time": ("request", np.asarray(time, float)), "offset": ("request", np.asarray(offset, np.int64)),
                     "size": ("request", np.asarray(size, np.int64)), "is_write": ("request", np.zeros(n, bool))})
    ds.attrs.update(replay_start_s=float(start), replay_end_s=float(end), source="handmade")
    return ds


def _params(**policy):
    # 50 sub-LUNs of 1 MiB, an SSD of 2 of them; n = 20, i = 50 %, t = 60 s, c = 3 (Table 3)
    return validate_section("otf_ast", {"ssd_subluns": 2, "measure": {"sublun_bytes": MiB, "lun_subluns": 50},
                                        "policy": policy})


def test_trace_footprint_ratio_counts_the_replay_window_only():
    p = _params()
    # in the window [100, 700): 3 MiB of distinct data (sub-LUNs 0 and 1 whole, half of 2 and half of 3, 2 MiB
    # again re-read); before it: 10 MiB elsewhere, not counted
    time = [10.0, 20.0, 100.0, 150.0, 200.0, 300.0, 400.0]
    offset = [20 * MiB, 30 * MiB, 0, MiB, 0, 2 * MiB, 3 * MiB + MiB // 2]
    size = [10 * MiB, MiB, MiB, MiB, 2 * MiB, MiB // 2, MiB // 2]
    pre = X.trace_preconditions(p, _trace(time, offset, size, 100.0, 700.0))
    assert pre["footprint_gib"] == pytest.approx(3 * MiB / 2**30)
    assert pre["footprint_ratio"] == pytest.approx(3 * MiB / (2 * MiB))


# ------------------------------------------------------------------------------------ concentration failures

def _planted(kinds, t_s=60.0):
    """A trace whose interval k is concentrated ("c": 100 IOs to sub-LUN 0) or spread ("s": one IO to each of 50
    sub-LUNs: the top 20 take 40 % < 50 %)."""
    time, offset = [], []
    for k, kind in enumerate(kinds):
        subs = [0] * 100 if kind == "c" else list(range(50))
        time += list(k * t_s + 1.0 + np.linspace(0, 50, len(subs)))
        offset += [s * MiB for s in subs]
    o = np.argsort(time, kind="stable")
    return _trace(np.asarray(time)[o], np.asarray(offset)[o], np.full(len(time), BLOCK), 0.0, len(kinds) * t_s)


def test_concentration_fail_share_on_a_planted_interval_series():
    kinds = "ccsccsscccsc"                                     # 4 spread intervals of 12
    pre = X.trace_preconditions(_params(), _planted(kinds))
    assert pre["conc_fail_share"] == pytest.approx(4 / 12)
    assert X.trace_preconditions(_params(), _planted("cccc"))["conc_fail_share"] == 0.0
    # a reading whose test is looser: i = 40 % makes the spread intervals concentrated too
    assert X.trace_preconditions(_params(i_pct=40.0), _planted(kinds))["conc_fail_share"] == 0.0


# ------------------------------------------------------------------------------------ hot-spot lifetime

def test_hot_runs_by_hand():
    hot = np.array([[1, 0, 1],
                    [1, 0, 0],
                    [1, 1, 1],
                    [0, 1, 1]], bool)
    cnt = np.arange(12).reshape(4, 3)
    length, ios = X.hot_runs(hot, cnt)
    got = sorted(zip(length.tolist(), ios.tolist()))
    # sub-LUN 0: intervals 0-2 (0 + 3 + 6); 1: 2-3 (7 + 10); 2: interval 0 (2), then 2-3 (8 + 11), cut by the end
    assert got == sorted([(3, 9), (2, 17), (1, 2), (2, 19)])


def test_weighted_median_by_hand():
    assert X.weighted_median([1, 2, 10], [1, 1, 10]) == 10.0
    assert X.weighted_median([1, 2, 10], [5, 1, 1]) == 1.0
    assert X.weighted_median([4, 1], [1, 1]) == 1.0             # half the weight is reached at 1
    assert X.weighted_median([], []) == 0.0


def test_hot_lifetime_on_a_planted_trace():
    """Sub-LUN 0 hot for 12 minutes with 30 IOs a minute, sub-LUN 1 hot for 4 minutes with 10, sub-LUN 2 hot for 2
    minutes (shorter than c = 3: not a hot spot) with 50: the hot spots' IO-weighted median lifetime is 12 min,
    their unweighted median (12 + 4) / 2 = 8 min, and 100 of the 500 hot IOs fall in runs shorter than c."""
    time, offset = [], []
    for sub, (a, b), per in ((0, (0, 12), 30), (1, (5, 9), 10), (2, (14, 16), 50)):
        for k in range(a, b):
            time += list(k * 60.0 + 1.0 + np.linspace(0, 50, per))
            offset += [sub * MiB] * per
    o = np.argsort(time, kind="stable")
    ds = _trace(np.asarray(time)[o], np.asarray(offset)[o], np.full(len(time), BLOCK), 0.0, 20 * 60.0)
    pre = X.trace_preconditions(_params(), ds)
    assert pre["hot_lifetime_min"] == 12.0
    assert pre["hot_lifetime_median_min"] == 8.0
    assert pre["hot_short_io_share"] == pytest.approx(100 / 500)
    # c = 5: sub-LUN 1's 4-minute run is no hot spot either
    assert X.trace_preconditions(_params(c_intervals=5), ds)["hot_lifetime_median_min"] == 12.0


# ------------------------------------------------------------------------------------ the rows

def test_precondition_rows_and_what_requires_them():
    reg = claim_registry()
    pre = [c for c in C.CLAIMS if c.kind == "precondition"]
    assert len(pre) == 6 and all(c.id.startswith("otf_ast.pre.") for c in pre)
    assert {c.id for c in pre} == {d[tr] for d in (C.PRE_FOOTPRINT, C.PRE_LIFETIME, C.PRE_CONC_FAIL) for tr in C.TWINS}
    # thresholds from the paper (Table 3: c = 3, t = 60 s, o = 10; Table 1: copies of 2-3 s)
    assert reg[C.PRE_FOOTPRINT["src1_0"]].check.passes(1.01) and not reg[C.PRE_FOOTPRINT["src1_0"]].check.passes(0.66)
    life = reg[C.PRE_LIFETIME["src1_1"]].check
    assert life.passes(5.0) and not life.passes(3.0) and not life.passes(18.0) and life.passes(10.0)
    conc = reg[C.PRE_CONC_FAIL["src1_0"]].check
    assert conc.passes(0.05) and not conc.passes(0.0)
    # every claim on FlashCache pass 2 needs its twin's footprint; the ones on src1_1 need src1_1's
    for cid, tr in ((C.C3_FC2_RISE, "src1_0"), (C.C3_FC2_FLAT, "src1_1"), (C.C7_FC_BEATS, "src1_0"),
                    (C.C10_WORSE, "src1_1"), (C.C11_CROSS, "src1_1"), (C.C15_FC, "src1_0")):
        assert C.PRE_FOOTPRINT[tr] in reg[cid].requires, cid
    assert set(reg[C.C1_ORDER].requires) == {c.id for c in pre}
    assert C.PRE_LIFETIME["src1_0"] in reg[C.C6_BEATS].requires
    assert C.PRE_CONC_FAIL["src1_1"] in reg[C.C12_SRC11].requires
    for c in C.CLAIMS:
        if c.kind != "claim":
            assert not c.requires, c.id
        for pid in c.requires:                                 # a claim on one twin needs that twin's rows only
            if "src1_0" in c.id and "src1_1" not in c.id:
                assert pid.endswith("src1_0"), (c.id, pid)
            if "src1_1" in c.id and "src1_0" not in c.id:
                assert pid.endswith("src1_1"), (c.id, pid)


def test_duplicate_and_cannot_fail_rows_are_gone():
    ids = {c.id for c in C.CLAIMS}
    assert "otf_ast.abstract.response_gain_pct" not in ids and "otf_ast.abstract.ssd_ratio_gain_points" not in ids
    assert "otf_ast.tables4_5.src1_0_flashcache_more_hits_slower" not in ids
    reg = claim_registry()
    # C9 is measured on the user IO's own HDD utilisation (copies cannot make it true): a claim, recorded only when
    # the engine reports that utilisation (run_one leaves NaN otherwise)
    assert reg[C.C9_UTIL].kind == "claim"
    res = _fake()
    res["demotion_saturated_share"][:] = np.nan
    assert C.C9_UTIL not in X.claim_rows(res)
    res["demotion_saturated_share"].loc[dict(trace="src1_0", policy="OTF-AST")] = [0.0, 1.0, np.nan, 0.5]
    v, _note, samples = X.claim_rows(res)[C.C9_UTIL]
    assert v == pytest.approx(0.5) and len(samples) == 4


def test_dirty_write_hits_checked_on_both_passes():
    """C3_DWH is pass 2's share on src1_0 and C3_DWH_P1 pass 1's: a twin with 5 % in both passes holds C3_DWH
    but not C3_DWH_P1 (the paper: 0 % then 5 %)."""
    res = _fake()
    for pol in ("FlashCache", "FlashCache pass 2"):
        res["dirty_write_hit_ratio"].loc[dict(trace="src1_0", policy=pol)] = 5.0
    rows, reg = X.claim_rows(res), claim_registry()
    assert reg[C.C3_DWH].verdict(rows[C.C3_DWH][0]) == "holds"
    assert reg[C.C3_DWH_P1].verdict(rows[C.C3_DWH_P1][0]) == "differs"
    res["dirty_write_hit_ratio"].loc[dict(trace="src1_0", policy="FlashCache")] = 0.0
    assert reg[C.C3_DWH_P1].verdict(X.claim_rows(res)[C.C3_DWH_P1][0]) == "holds"


def test_histogram_means_are_a_reading_of_the_response_rows(fake_by_reading):
    """The reading hist_means recomputes the response rows from the 10 us - 1 s histogram's means on the same runs:
    C6's gap under it is the paired gap of the histogram means; rows that use no mean keep their value."""
    res, by = fake_by_reading
    ot, st = (res["hist_mean_ms"].sel(trace="src1_0", policy=q).values for q in ("OTF-AST", "static tiering"))
    assert by[X.HIST_MEANS][C.C6_GAP][0] == pytest.approx((100 * (st - ot) / st).mean())
    assert by[X.HIST_MEANS][C.C6_GAP][0] != pytest.approx(by["default"][C.C6_GAP][0])
    assert by[X.HIST_MEANS][C.C1_SRC10][0] == by["default"][C.C1_SRC10][0]
    le = [res["hist_le_cut_ms"].sel(trace="src1_1", policy=q).values for q in ("OTF-AST", "static tiering")]
    assert np.allclose(by[X.HIST_MEANS][C.C10_LE100][2],
                       np.minimum(le[0] - le[1], res["hist_le_cut_ms"].sel(trace="src1_1", policy="OTF-AST").values
                                  - res["hist_le_cut_ms"].sel(trace="src1_1", policy="FlashCache pass 2").values))


def _fake(n_seeds=4, seed=0):
    rng = np.random.default_rng(seed)
    tr, pol = ["src1_0", "src1_1"], list(X.POLICIES)
    shape = (len(tr), len(pol), n_seeds)
    data = {k: (("trace", "policy", "seed"), rng.uniform(1, 50, shape)) for k in X._SCALARS}
    res = xr.Dataset(data, coords={"trace": tr, "policy": pol, "seed": range(n_seeds)})
    res["quantile_ms"] = (("trace", "policy", "seed", "quantile"),
                          np.sort(rng.uniform(0.1, 100, shape + (X.QUANTILES.size,)), axis=-1))
    res["resident"] = (("trace", "policy", "seed", "minute"), rng.integers(0, 25, shape + (121,)).astype(float))
    return res.assign_coords(quantile=X.QUANTILES, minute=np.arange(121))


@pytest.fixture(scope="module")
def fake_by_reading():
    """_fake()'s result and its rows under the default reading and hist_means (one computation for the tests that
    only read them)."""
    res = _fake()
    return res, X.claims_by_reading(res)


def test_duplicates_measure_distinct_quantities():
    """C15 is no longer a function of C3's hit-ratio rise, nor C7 of FC1 - FC2: changing the FC hit ratios leaves
    C15, and changing FC1 - FC2 leaves C7 (when OTF-AST is slower than both)."""
    res = _fake()
    v = X.claim_values(res)
    res2 = res.copy(deep=True)
    res2["ssd_ratio"].loc[dict(trace="src1_0", policy="FlashCache pass 2")] += 30.0
    v2 = X.claim_values(res2)
    assert v2[C.C15_FC][0] == v[C.C15_FC][0] and v2[C.C3_FC2_RISE][0] != v[C.C3_FC2_RISE][0]
    # OTF-AST far slower than both passes, pass 2 faster than pass 1: C7 holds (it no longer asks FC1 < FC2 ...)
    res3 = res.copy(deep=True)
    res3["mean_ms"].loc[dict(trace="src1_0", policy="OTF-AST")] = 1000.0
    res3["mean_ms"].loc[dict(trace="src1_0", policy="FlashCache pass 2")] = \
        res3["mean_ms"].sel(trace="src1_0", policy="FlashCache").values - 10.0
    v3 = X.claim_values(res3)
    assert claim_registry()[C.C7_FC_BEATS].verdict(v3[C.C7_FC_BEATS][0]) == "holds"
    # ... and C15, which does, differs
    assert v3[C.C15_FC][0] == pytest.approx(-10.0) and claim_registry()[C.C15_FC].verdict(v3[C.C15_FC][0]) == "differs"


def test_response_rows_are_paired_per_seed_with_samples(fake_by_reading):
    res, by = fake_by_reading
    rows = by["default"]
    s = lambda tr, pol, var="mean_ms": res[var].sel(trace=tr, policy=pol).values
    ot, st = s("src1_0", "OTF-AST"), s("src1_0", "static tiering")
    gap = 100 * (st - ot) / st
    assert rows[C.C6_GAP][0] == pytest.approx(gap.mean()) and np.allclose(rows[C.C6_GAP][2], gap)
    assert np.allclose(rows[C.C6_BEATS][2], ot - st)
    o1 = s("src1_1", "OTF-AST")
    ratios = [o1 / s("src1_1", b) for b in ("static tiering", "FlashCache pass 2")]
    assert rows[C.C10_WORSE][0] == pytest.approx(min(r.mean() for r in ratios))
    sk = s("src1_1", "OTF-AST without write-back")
    assert rows[C.C11_SKIP][0] == pytest.approx((sk / o1).mean()) and np.allclose(rows[C.C11_SKIP][2], sk / o1)
    sk0, fc2 = s("src1_0", "OTF-AST without write-back"), s("src1_0", "FlashCache pass 2")
    assert rows[C.C8_SKIP_FC2][0] == pytest.approx(abs((100 * (sk0 - fc2) / fc2).mean()))
    for cid in (C.C6_GAP, C.C6_BEATS, C.C7_FC_BEATS, C.C8_SKIP, C.C8_SKIP_FC2, C.C8_FIRST20, C.C9_CDF, C.C10_WORSE,
                C.C10_LE100, C.C11_SKIP, C.C11_LE100, C.C11_CROSS, C.C15_FC):
        assert rows[cid][2] is not None and len(rows[cid][2]) == 4, cid
    # preconditions: the mean over seeds of OTF-AST's rows, per twin
    fp = s("src1_1", "OTF-AST", "footprint_ratio")
    assert rows[C.PRE_FOOTPRINT["src1_1"]][0] == pytest.approx(fp.mean())


def test_every_row_is_recorded_with_its_readings():
    """Every ledger row of the notebook comes out of claim_rows (with the copy times); ledger_entries gives each
    claim its value under every reading and prior, each precondition only under those that change it, and
    calibration and sanity rows none."""
    res = _fake()
    copy_s = {"up": 2.5, "down": 6.5}
    rd = res.sel(policy=["OTF-AST", "OTF-AST without write-back"], seed=[0, 1]).expand_dims(
        reading=["n2", "f2"]).copy(deep=True)
    rd["mean_ms"].loc[dict(reading="n2")] = 5.0
    rd["conc_fail_share"].loc[dict(reading="n2")] = 0.5                 # n2 changes the test; f2 does not
    pr = res.sel(seed=[0, 1]).expand_dims(prior=["q_0p5"]).copy(deep=True)
    pr["footprint_ratio"] += 1.0                                        # this twin prior changes two of them
    pr["hot_lifetime_min"] += 1.0
    by = X.claims_by_reading(res, copy_s, reading=rd, prior=pr)
    rows = by["default"]
    assert set(rows) == {c.id for c in C.CLAIMS}
    entries = X.ledger_entries(by)
    reg = claim_registry()
    assert set(entries) == set(rows)
    for cid, e in entries.items():
        kind = reg[cid].kind
        if kind == "claim":
            assert set(e["readings"]) == {"n2", "f2", "q_0p5", X.HIST_MEANS}, cid
        elif kind in ("calibration", "sanity"):
            assert e["readings"] is None, cid
    assert set(entries[C.PRE_CONC_FAIL["src1_0"]]["readings"]) == {"n2"}
    assert set(entries[C.PRE_FOOTPRINT["src1_1"]]["readings"]) == {"q_0p5"}
    assert entries[C.PRE_LIFETIME["src1_0"]]["readings"] == {"q_0p5": pytest.approx(
        float(pr["hot_lifetime_min"].sel(prior="q_0p5", trace="src1_0", policy="OTF-AST").mean()))}
    assert len(entries[C.C6_GAP]["samples"]) == 4


def test_the_notebook_records_every_row_with_readings_and_samples():
    nb = json.loads((repo_root() / "notebooks" / "08_otf_ast.ipynb").read_text())
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert "X.ledger_entries(X.claims_by_reading(res, copy_s, reading=rd, prior=pr))" in code
    assert 'out.claim(cid, e["value"], note=f"{e[\'note\']}; seed {seed}", readings=e["readings"], ' \
           'samples=e["samples"])' in code
    assert code.count("out.claim(") == 1                      # one row per claim, no reading-suffixed ids
    assert "X.preconditions_table(res)" in code
