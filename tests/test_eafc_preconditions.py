"""EAFC's precondition rows (SPECsfs' working set beyond the RAM after phase 1; the compared runs oscillate), the
paired ordering, the readings (gain sweep, readings table) and their recording by notebook 07."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from tieringlab import stats
from tieringlab.claims import eafc as CE
from tieringlab.claims import registry
from tieringlab.experiments import eafc as X

REPO = Path(__file__).resolve().parent.parent


def test_partition_reversals_by_hand():
    part = np.array([10, 12, 14, 14, 13, 15])
    nxt = np.array([12, 14, 14, 13, 15, 15])        # resizes + + 0 - + 0: two reversals (up->down, down->up)
    assert X.partition_reversals(part, nxt) == 2
    assert X.partition_reversals([1, 2, 3], [2, 3, 4]) == 0      # a monotone warm-up never oscillates
    assert X.partition_reversals([5, 5], [5, 5]) == 0
    assert X.partition_reversals([5, 4, 5, 4], [4, 5, 4, 5]) == 3


def test_metrics_count_reversals_per_replication():
    # two replications over 4 cwnds: up, down, up (2 reversals) and up, up, none (0)
    part = np.array([[10.0, 12, 11, 13], [10, 11, 12, 12]])
    nxt = np.array([[12.0, 11, 13, 13], [11, 12, 12, 12]])
    ds = xr.Dataset({"latency_mean_s": (("replication", "epoch"), np.full((2, 4), 0.001)),
                     "partition_bytes": (("replication", "epoch"), part),
                     "partition_next_bytes": (("replication", "epoch"), nxt),
                     "used_bytes": (("replication", "epoch", "sample"), np.ones((2, 4, 3)))},
                    coords={"epoch": np.arange(4)}, attrs={"cwnd_s": 600.0})
    assert list(X.metrics(ds, 0.01)["reversals"].values) == [2, 0]


def test_ablation_preconditions_take_the_compared_runs_only():
    rows = []
    for t in (10.0, 5.0):
        for q, rev in ((75.0, 0.0), (90.0, 3.0 if t == 10 else 0.5), (99.0, 2.0)):
            rows.append({"target_ms": t, "ablation": "percentile", "value": str(q), "reversals": rev})
        rows += [{"target_ms": t, "ablation": "band", "value": "0.5", "reversals": 0.0},
                 {"target_ms": t, "ablation": "band", "value": "1.0", "reversals": 4.0},
                 {"target_ms": t, "ablation": "decrease", "value": "aggressive", "reversals": 2.5 if t == 5 else 6},
                 {"target_ms": t, "ablation": "decrease", "value": "conservative", "reversals": 0.0}]
    a = pd.DataFrame(rows).assign(conformance_post=1.0, changes_per_hour=1.0, partition_post_gb=39.0,
                                  conformance_post_min=1.0, changes_vs_p75_lo=0.2)
    out = X._ablation_claims(a)
    assert out[CE.PRE_PCT_OSC][0] == 0.5            # P90 at 5 ms; P75's own 0 does not count
    assert out[CE.PRE_BAND_OSC][0] == 2.5           # aggressive at 5 ms; the band's and conservative's 0 do not count
    assert out[CE.P75_BEATS][0] is True             # every paired margin above 0, conformance tied
    # C16's margin: one stricter percentile whose paired interval reaches 0 fails the claim, however many changes
    a.loc[(a["value"] == "99.0") & (a["target_ms"] == 5.0), "changes_vs_p75_lo"] = -0.01
    assert X._ablation_claims(a)[CE.P75_BEATS][0] is False
    assert CE.FIXED_BAND not in out                 # no static rows: C18 not measured


def test_fixed_partition_band_by_hand():
    # one replication, 5 cwnds: filling (used at the first sample 0, then 5 units), then full at the cap (9)
    used = np.array([[[0, 3], [5, 9], [9, 9], [9, 9], [9, 9]]], float)
    obs = np.array([[50.0, 20.0, 4.0, 6.0, 5.0]]) * 1e-3
    ds = xr.Dataset({"used_bytes": (("replication", "epoch", "sample"), used),
                     "latency_obs_s": (("replication", "epoch"), obs)})
    assert X.fixed_obs_ratio(ds) == pytest.approx([6.0 / 4.0])        # the warm-up's 50 and 20 ms excluded
    rows = [{"target_ms": 10.0, "ablation": "static", "value": f"{g:g} GB", "fixed_gb": g, "working_set_gb": 40.0,
             "obs_ratio_min": lo, "obs_ratio_max": hi}
            for g, lo, hi in ((30.0, 1.1, 1.3), (36.0, 1.05, 2.5), (40.0, 1.0, 9.0))]
    out = X._ablation_claims(pd.DataFrame(rows))
    assert out[CE.FIXED_BAND][0] == 2.5 and out[CE.PRE_FIXED_VARIES][0] == 1.05     # 40 GB is not below 40 GB
    reg = registry()
    assert reg[CE.FIXED_BAND].verdict(2.5) == "differs" and reg[CE.FIXED_BAND].verdict(2.0) == "holds"
    assert reg[CE.PRE_FIXED_VARIES].verdict(1.0) == "differs"                      # a latency that never moves


def test_one_quantity_one_tolerance():
    reg = registry()
    lo, hi = CE.SAVINGS_RANGE_PCT
    # the 6 % end is the 5 ms partition (1 - 41/44): the edge of its row's +-3 GB, 44 GB, is a 0 % saving on 44 GB
    assert lo == pytest.approx(0.0) and hi == reg[CE.SFS_SAVING].check.hi == 65.0
    fig4b = reg[CE.FIG4B_PARTITION]
    for p_gb in (43.9, 44.0, 44.1):
        saving = 100 * (1 - p_gb / 44.0)
        assert (fig4b.verdict(p_gb) == "holds") == (saving >= lo - 1e-9)
    assert {reg[c].check.tol for c in (CE.FIG4A_PARTITION, CE.FIG4B_PARTITION, CE.FIG4C_PARTITION)} == {3.0}


def _panel(lat_ms, part_gb, target_ms):
    """A two-policy Fig. 4 panel by hand: 2 replications (the second's partitions + 1 GB), 4 cwnds, 2 samples."""
    lat = np.array([lat_ms, lat_ms], float) * 1e-3
    part = np.array([part_gb, np.add(part_gb, 1.0)], float) * 1e9
    used = np.repeat((0.9 * part)[..., None], 2, axis=-1)
    one = xr.Dataset({"latency_mean_s": (("replication", "epoch"), lat),
                      "partition_bytes": (("replication", "epoch"), part),
                      "partition_next_bytes": (("replication", "epoch"), part),
                      "used_bytes": (("replication", "epoch", "sample"), used)},
                     coords={"epoch": np.arange(4)}, attrs={"cwnd_s": 600.0})
    ds = xr.concat([one, one], dim="policy").assign_coords(policy=["EAFC", "vanilla"])
    ds.attrs.update(lat_max_s=target_ms * 1e-3, working_set_gb=[40.0], cwnd_s=600.0)
    return ds


def test_whole_run_average_reading_by_hand():
    panels = {"a": _panel([20, 8, 9, 7], [10, 20, 30, 30], 10.0), "b": _panel([20, 12, 4, 4], [10, 20, 40, 40], 5.0)}
    post = X.claim_values(panels, pd.DataFrame())
    whole = X.claim_values(panels, pd.DataFrame(), average=X.WHOLE_RUN.apply(X.EafcSection()).average)
    # warm-up ends at the first cwnd meeting the target: a from cwnd 1 (20, 30, 30), b from cwnd 2 (40, 40)
    assert post[CE.FIG4A_PARTITION][0] == pytest.approx((80 / 3 + 83 / 3) / 2)
    assert post[CE.FIG4B_PARTITION][0] == pytest.approx(40.5)
    assert whole[CE.FIG4A_PARTITION][0] == pytest.approx(23.0) and whole[CE.FIG4B_PARTITION][0] == pytest.approx(28.0)
    assert whole[CE.TIGHTER_TARGET_BIGGER][0] == pytest.approx(5.0)                # paired, no spread: 28 - 23
    assert set(X.AVERAGED_CLAIMS) >= {CE.FIG4A_PARTITION, CE.FIG4B_PARTITION, CE.TIGHTER_TARGET_BIGGER}
    with pytest.raises(ValueError, match=r"average must be one of \['post_warmup', 'whole_run'\]"):
        X.claim_values(panels, pd.DataFrame(), average="mean")


def test_working_set_over_ram_and_replications_needed_by_hand():
    assert X.ws_over_ram([12.0, 24.0, 30.0], 14.0) == pytest.approx(24 / 14)       # phase 1 (12 GB) left out
    assert X.ws_over_ram([12.0, 24.0, 30.0], 0.0) == float("inf")
    assert np.isnan(X.ws_over_ram([12.0], 14.0))
    z = np.array([-1.0, 1.0, -1.0, 1.0, 0.5, -0.5])
    assert stats.replications_observed(1.0 + z / z.std(ddof=1)) == 10                   # d = 1, power 0.8: 10 pairs
    assert stats.replications_observed(np.sqrt(2) + z / z.std(ddof=1), z[::-1] / z.std(ddof=1)) == 10   # unpaired
    assert stats.replications_observed([0.0, 0.0]) == float("inf")


def test_gain_and_reading_tables_become_readings_of_the_rows():
    sweep = pd.DataFrame([
        {"workload": "fb40", "gain": "kp_inc", "value": 20.0, "default": True, CE.FIG4A_PARTITION: 40.0,
         CE.SFS_SAVING: np.nan, CE.SFS_RISES: np.nan, CE.SFS_SPIKES: np.nan},
        {"workload": "fb40", "gain": "kp_inc", "value": 10.0, "default": False, CE.FIG4A_PARTITION: 39.5,
         CE.SFS_SAVING: np.nan, CE.SFS_RISES: np.nan, CE.SFS_SPIKES: np.nan},
        {"workload": "fb40", "gain": "kp_inc", "value": 10.0, "default": False, CE.FIG4B_PARTITION: 42.5,
         CE.SFS_SAVING: np.nan, CE.SFS_RISES: np.nan, CE.SFS_SPIKES: np.nan},
        {"workload": "sfs", "gain": "kp_inc", "value": 10.0, "default": False, CE.FIG4A_PARTITION: np.nan,
         CE.SFS_SAVING: 48.0, CE.SFS_RISES: True, CE.SFS_SPIKES: 2.0},
        {"workload": "sfs", "gain": "t_util", "value": 0.85, "default": False, CE.FIG4A_PARTITION: np.nan,
         CE.SFS_SAVING: 30.0, CE.SFS_RISES: False, CE.SFS_SPIKES: 1.2}])
    got = X.gain_readings(sweep)
    assert got == {"kp_inc_10": {CE.FIG4A_PARTITION: 39.5, CE.FIG4B_PARTITION: 42.5, CE.SFS_SAVING: 48.0,
                                 CE.SFS_RISES: True, CE.SFS_SPIKES: 2.0},
                   "t_util_0.85": {CE.SFS_SAVING: 30.0, CE.SFS_RISES: False, CE.SFS_SPIKES: 1.2}}
    why = {r.name: r.why for r in X.READINGS}
    rd = pd.DataFrame([{"reading": why[n], "target_ms": t, "partition_post_gb": 39.0 + i, "saving_pct": 10.0 - i,
                        "conformance_post_min": 1.0 - 0.1 * i}
                       for i, n in enumerate(("default", "rotation")) for t in (10.0, 5.0)])
    vals = X.reading_values(rd)
    assert list(vals) == ["rotation"]                # the default reading is the row's own value
    assert vals["rotation"] == {CE.FIG4A_PARTITION: 40.0, CE.FIG4B_PARTITION: 40.0,
                                CE.CONFORMANCE: pytest.approx(0.9)}


def test_rows_and_requirements():
    reg = registry()
    pres = {c.id for c in reg.values() if c.source == CE.SRC and c.kind == "precondition"}
    assert pres == {CE.PRE_SFS_WS_RAM, CE.PRE_PCT_OSC, CE.PRE_BAND_OSC, CE.PRE_FIXED_VARIES}
    assert reg[CE.SFS_PHASE1].kind == "sanity"       # holds by construction: 12 GB fits the 14 GB RAM
    for cid in (CE.SFS_RISES, CE.SFS_SPIKES, CE.SFS_SAVING, CE.SAVINGS_RANGE):
        assert reg[cid].requires == (CE.PRE_SFS_WS_RAM,)
    assert reg[CE.P75_BEATS].requires == (CE.PRE_PCT_OSC,) and reg[CE.BAND].requires == (CE.PRE_BAND_OSC,)
    assert reg[CE.FIXED_BAND].requires == (CE.PRE_FIXED_VARIES,) and reg[CE.FIXED_BAND].kind == "claim"
    # a failing precondition makes the claim untestable (the ledger's rule), a passing one leaves its verdict
    from tieringlab.claims import UNTESTABLE, verdict_given

    pre = {CE.PRE_PCT_OSC: (reg[CE.PRE_PCT_OSC], 0.4)}
    assert verdict_given(reg[CE.P75_BEATS], True, pre)[0] == UNTESTABLE
    assert verdict_given(reg[CE.P75_BEATS], True, {CE.PRE_PCT_OSC: (reg[CE.PRE_PCT_OSC], 1.0)})[0] == "holds"


def test_notebook_07_records_readings_samples_and_preconditions():
    src = "".join(c for cell in json.loads((REPO / "notebooks" / "07_eafc.ipynb").read_text())["cells"]
                  for c in cell["source"])
    assert "X.gain_sweep(P, key, obs, panels)" in src and "X.gain_readings(sweep)" in src
    assert "X.reading_values(rd)" in src and "X.claim_samples(panels)" in src
    assert "readings=by_claim.get(cid), samples=samples.get(cid)" in src
    assert "X.WHOLE_RUN.apply(P)" in src and "average=P.average" in src
