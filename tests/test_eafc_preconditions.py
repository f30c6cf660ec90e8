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
                                  conformance_post_min=1.0)
    out = X._ablation_claims(a)
    assert out[CE.PRE_PCT_OSC][0] == 0.5            # P90 at 5 ms; P75's own 0 does not count
    assert out[CE.PRE_BAND_OSC][0] == 2.5           # aggressive at 5 ms; the band's and conservative's 0 do not count


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
        {"workload": "sfs", "gain": "kp_inc", "value": 10.0, "default": False, CE.FIG4A_PARTITION: np.nan,
         CE.SFS_SAVING: 48.0, CE.SFS_RISES: True, CE.SFS_SPIKES: 2.0},
        {"workload": "sfs", "gain": "t_util", "value": 0.85, "default": False, CE.FIG4A_PARTITION: np.nan,
         CE.SFS_SAVING: 30.0, CE.SFS_RISES: False, CE.SFS_SPIKES: 1.2}])
    got = X.gain_readings(sweep)
    assert got == {"kp_inc_10": {CE.FIG4A_PARTITION: 39.5, CE.SFS_SAVING: 48.0,
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
    assert pres == {CE.PRE_SFS_WS_RAM, CE.PRE_PCT_OSC, CE.PRE_BAND_OSC}
    assert reg[CE.SFS_PHASE1].kind == "sanity"       # holds by construction: 12 GB fits the 14 GB RAM
    for cid in (CE.SFS_RISES, CE.SFS_SPIKES, CE.SFS_SAVING, CE.SAVINGS_RANGE):
        assert reg[cid].requires == (CE.PRE_SFS_WS_RAM,)
    assert reg[CE.P75_BEATS].requires == (CE.PRE_PCT_OSC,) and reg[CE.BAND].requires == (CE.PRE_BAND_OSC,)
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
