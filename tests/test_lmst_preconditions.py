"""LMST's precondition rows (bursts outlast the decision; forward migrations cut over within their window), the
replications each ordering needs, and their recording by notebook 05 (readings, samples)."""

from __future__ import annotations

import json
from pathlib import Path

import jax
import numpy as np
import pytest

from tieringlab import stats
from tieringlab.claims import lmst as CL
from tieringlab.claims import registry
from tieringlab.experiments import lmst as X
from tieringlab.models.workloads import lmst as W

REPO = Path(__file__).resolve().parent.parent


def test_burst_continuation_and_burst_left_by_hand():
    states = np.array([[1, 1, 0, 1],     # pairs (1,1) (1,0) (0,1): one both-bursty of two bursty-first
                       [0, 1, 1, 1],     # (0,1) (1,1) (1,1): two of two
                       [1, 1, 1, 1]], bool)   # not an FC ALUN: left out
    low = np.array([True, True, False])
    assert X.burst_continuation(states, low) == (3, 4)
    # q = 3/4: mean burst length 4 slots; causal (lag 1) leaves 3, look-ahead (lag 0) 4
    assert X.burst_left_after_decision(3, 4, X.DECISION_LAG["causal"], 30) == pytest.approx(3.0)
    assert X.burst_left_after_decision(3, 4, X.DECISION_LAG["lookahead"], 30) == pytest.approx(4.0)
    # q = 1/2: exactly one window left under the causal reading (the threshold's edge); q = 0.3: 1/0.7 - 1
    assert X.burst_left_after_decision(5, 10, 1, 30) == pytest.approx(1.0)
    assert X.burst_left_after_decision(3, 10, 1, 30) == pytest.approx(1 / 0.7 - 1)
    # a burst never ends within the trace: the mean length is capped at the trace; no burst at all: nothing left
    assert X.burst_left_after_decision(7, 7, 1, 3) == pytest.approx(2.0)
    assert X.burst_left_after_decision(0, 0, 0, 30) == 0.0
    assert CL.BURST_LEFT_MIN == 1.0 and X.DECISION_LAG == {"causal": 1, "lookahead": 0}


@pytest.mark.parametrize("persistence", [0.0, 0.4])
def test_burst_persistence_estimate_recovers_the_generators_chain(persistence):
    # the slot states are a 2-state chain with P(B -> B) = p + phi (1 - p) (reading A4): the estimate of
    # burst_continuation recovers it (independent truth: the chain's definition)
    wp = W.LmstWorkloadParams(n_high_apps=3, n_low_apps=7, burst_ratio=0.5, slot_persistence=persistence)
    low = W.alun_layout(wp).alun_class == 1
    bb, b = np.sum([X.burst_continuation(W.slot_states(k, wp), low) for k in jax.random.split(jax.random.key(4), 8)],
                   axis=0)
    want = 0.5 + persistence * 0.5
    assert b > 3000 and abs(bb / b - want) < 0.04


def test_migrations_in_window_by_hand():
    window = np.array([0, 0, 1, 2, 3, -1])
    kind = np.array([1, 0, 1, 1, 1, 1])
    end = np.array([50.0, 200.0, 130.0, np.inf, 240.0, 10.0])
    # forward and logged: #0 (window 0 ends at 60: 50 in time), #2 (window 1 ends at 120: 130 late), #3 (still
    # running: late), #4 (window 3 ends at 240: cutover exactly at the end counts); #1 backward, #5 padding
    assert X.migrations_in_window(window, kind, end, 60.0) == (2, 4)
    assert X.migrations_in_window(window[:0], kind[:0], end[:0], 60.0) == (0, 0)


def test_replications_needed_matches_the_standard_t_test_table():
    # a standardized paired effect of 1 needs 10 pairs for power 0.8 at the two-sided 5 % level (G*Power)
    z = np.array([-1.0, 1.0, -1.0, 1.0, 0.5, -0.5])
    d = 1.0 + z / z.std(ddof=1)
    assert stats.replications_observed(d) == 10
    assert stats.replications_observed(np.array([0.0, 0.0, 0.0])) == float("inf")     # no effect: no count detects it
    assert np.isnan(stats.replications_observed(np.array([1.0])))                     # one replication: no sd
    # unpaired: the difference of independent draws has sd sqrt(2) here; effect sqrt(2) -> standardized 1 -> 10
    a = np.sqrt(2) + z / z.std(ddof=1)
    b = z[::-1] / z.std(ddof=1)
    assert stats.replications_observed(a, b) == 10


def test_preconditions_are_rows_and_claims_require_them():
    reg = registry()
    pres = [c for c in reg.values() if c.source == X.C.SRC and c.kind == "precondition"]
    assert {c.id for c in pres} == {CL.PRE_BURST_ALL, CL.PRE_BURST_FOCUS, CL.PRE_MIG_ALL, CL.PRE_MIG_FOCUS}
    assert reg[CL.C1_LMST_BEATS_NMST].requires == (CL.PRE_BURST_ALL, CL.PRE_MIG_ALL)
    assert reg[CL.C10_RATIO_MRESP].requires == (CL.PRE_BURST_FOCUS, CL.PRE_MIG_FOCUS)
    assert reg[CL.C13_MGR_RESP].requires == ()          # Mgr_Resp: the copy's priority, not a burst's persistence


def _small(**kw):
    from tieringlab.policies import lmst as L
    from tieringlab.units import MB

    return X.LmstSection(workload=W.LmstWorkloadParams(n_slots=3, slot_s=60.0, sample_s=3.0, alun_bytes=50 * MB),
                         policy=L.LmstParams(window_s=60.0, disk_capacity_bytes=20 * 50 * MB), **kw)


@pytest.fixture(scope="module")
def small_run():
    p = _small(capacities_gb=(40, 70), burst_ratios=(0.5,), n_reps=2, readings=("a10c",))
    return p, X.cells(p, jax.random.key(3))


def test_precondition_values_of_a_run_recomputed_independently(small_run):
    p, cl = small_run
    vals = X.claim_values(cl, None, p)
    look = X.claim_readings(cl, p)
    left, share = {}, {}
    for c in (40, 70):
        wp = X.workload(p, c, 0.5)
        low = W.alun_layout(wp).alun_class == 1
        bb = b = 0
        for k in X._keys(jax.random.key(3), c, 0.5, 2):         # the states the cell's runs drew
            s = np.asarray(W.slot_states(k, wp))[low]
            for row in s:
                for w in range(1, row.size):
                    b += bool(row[w - 1])
                    bb += bool(row[w - 1] and row[w])
        left[c] = 1 / (1 - bb / b)                               # mean burst length (slots)
        m = cl.sel(capacity_gb=c, burst_ratio=0.5, config=X.MAIN)
        ok = n = 0
        for r in range(2):
            for w, kd, e in zip(m.mig_window.values[r], m.mig_kind.values[r], m.mig_end_s.values[r]):
                if w >= 0 and kd == 1:
                    n += 1
                    ok += e <= (w + 1) * 60.0
        share[c] = ok / n
    assert vals[CL.PRE_BURST_ALL][0] == pytest.approx(min(left.values()) - 1)
    assert vals[CL.PRE_BURST_FOCUS][0] == pytest.approx(left[70] - 1)
    assert look[CL.PRE_BURST_ALL]["lookahead"] == pytest.approx(min(left.values()))
    assert vals[CL.PRE_MIG_ALL][0] == pytest.approx(min(share.values()))
    assert vals[CL.PRE_MIG_FOCUS][0] == pytest.approx(share[70])


def test_notebook_05_records_every_row_with_readings_and_samples(small_run, tmp_path):
    # the notebook's ledger cell, run on a small run: every row of the system is recorded (the ones the small
    # grid can give), preconditions included, with the look-ahead reading and per-replication samples
    from tieringlab.results import Outputs

    p, cl = small_run
    src = "".join(c for cell in json.loads((REPO / "notebooks" / "05_lmst.ipynb").read_text())["cells"]
                  for c in cell["source"])
    assert "X.claim_readings(cl, P, wcells)" in src and "X.claim_samples(cl, P)" in src
    assert "wcells = X.cells_workload_readings(P, " in src
    assert "readings=other.get(cid), samples=reps.get(cid)" in src
    out = Outputs("05_lmst", tmp_path, params=p, seed=0)
    vals, other, reps = X.claim_values(cl, None, p), X.claim_readings(cl, p), X.claim_samples(cl, p)
    for cid, (value, note) in vals.items():
        out.claim(cid, value, note=note, readings=other.get(cid), samples=reps.get(cid))
    rec = json.loads(next(tmp_path.rglob("05_lmst.json")).read_text())["claims"]
    ids = {c.id for c in registry().values() if c.source == "05_lmst"}
    assert set(rec) == ids
    for pid in (CL.PRE_BURST_ALL, CL.PRE_BURST_FOCUS, CL.PRE_MIG_ALL, CL.PRE_MIG_FOCUS):
        assert rec[pid]["value"] is not None and "lookahead" in rec[pid]["readings"]
    assert {"lookahead", "a10c"} <= set(rec[CL.C1_LMST_BEATS_NMST]["readings"])
    assert "a10c" in rec[CL.PRE_MIG_ALL]["readings"]                 # preconditions measured under each reading
    assert len(rec[CL.C10_RATIO_MRESP]["samples"]) == 2
    for cid in (CL.C1_LMST_BEATS_NMST, CL.C5_RISES_WITH_CAPACITY, CL.C13_MGR_RESP, CL.C9_UTILIZATION):
        assert len(rec[cid]["samples"]) == 2                       # the orderings' per-replication counts
    assert "Replications: 2, sized for the thesis' effects (power 0.8" in rec[CL.C1_LMST_BEATS_NMST]["note"]


def _synthetic_cells():
    """Two capacities x two bursts, three replications, NMST / LMST / SMST: numbers chosen by hand."""
    import xarray as xr

    caps, bursts, cfg = [40, 70], [0.3, 0.5], [X.MAIN, X.NMST, X.SMST]
    base = np.arange(2 * 2 * 3, dtype=float).reshape(2, 2, 3) % 7 + 1.0       # (capacity, burst, replication)
    jitter = 0.5 * np.arange(3.0)                                               # per replication, NMST only
    data = {}
    for j, v in enumerate(("m_resp_s", "v_ratio", "v_time_s", "mgr_resp_s", "mgr_ratio")):
        x = np.stack([base, 2 * base + jitter, 3 * base], axis=-1) * (1 + j)    # LMST < NMST < SMST everywhere
        data[v] = (("capacity_gb", "burst_ratio", "replication", "config"), x / 100.0)
    return xr.Dataset(data, coords={"capacity_gb": caps, "burst_ratio": bursts, "replication": [0, 1, 2],
                                    "config": cfg})


def test_replications_are_sized_from_the_thesis_effects_by_hand():
    # n_reps is the sizing rule applied to the pilot (the largest need up to REPS_CAP, at least REPS_FLOOR), and
    # params.yaml and the section's default say so
    from tieringlab import params

    needs = sorted(n for *_, n in X.PILOT_SIZING.values())
    assert X.chosen_replications() == max([X.REPS_FLOOR] + [n for n in needs if n <= X.REPS_CAP]) == 10
    assert params.load(REPO / "params.yaml")["lmst"].n_reps == X.LmstSection().n_reps == X.chosen_replications()
    for _what, effect, sd, need in X.PILOT_SIZING.values():          # each constant is the rule's answer
        assert X._needed(effect, sd) == need
    # the power rule (noncentral t): a standardized effect of 1 needs 10 (G*Power); where scipy's far tail is nan
    # (13.31 +- 1.918 at n = 2: stats.replications_for stops there) the power at 2 is the near tail's 0.56
    assert X._needed(1.0, 1.0) == 10 and X._needed(13.31, 1.918272) == 3
    assert X._power(13.31, 1.918272, 2) == pytest.approx(0.559, abs=1e-3)
    # a comparison's effect is the thesis' (Table 7: 40 GB / 30 % M_Resp 29.45 -> 5.04 ms), its sd this run's
    cl = _synthetic_cells()
    df = X.replications_needed(cl)
    row = df[df.comparison == "40 GB / 30 % M_Resp improvement (%)"].iloc[0]
    imp = 100 * (cl.m_resp_s.sel(config=X.NMST) - cl.m_resp_s.sel(config=X.MAIN)) / cl.m_resp_s.sel(config=X.NMST)
    assert row.effect == pytest.approx(100 * (29.45 - 5.04) / 29.45)
    assert row.sd == pytest.approx(float(imp.sel(capacity_gb=40, burst_ratio=0.3).std(ddof=1)), abs=1e-12)
    # between cells (unpaired, non-overlapping intervals): sd_a + sd_b, in % of the lower cell's mean
    row = df[df.comparison == "NMST 40 GB M_Resp 30 -> 50 % (rise, %)"].iloc[0]
    a = cl.m_resp_s.sel(config=X.NMST, capacity_gb=40, burst_ratio=0.3).values
    b = cl.m_resp_s.sel(config=X.NMST, capacity_gb=40, burst_ratio=0.5).values
    assert row.effect == pytest.approx(100 * (66.93 - 29.45) / 29.45)
    assert row.sd == pytest.approx(100 * (a.std(ddof=1) + b.std(ddof=1)) / a.mean())
    assert row.power == pytest.approx(stats.power(row.effect, row.sd, 3))
    # the per-replication counts: LMST (x1) is below NMST (x2) on every metric of every cell in every replication
    p = X.LmstSection(capacities_gb=(40, 70), burst_ratios=(0.3, 0.5), focus_capacity_gb=70, focus_burst=0.5)
    sam = X._ordering_samples(cl, p, X.MAIN)
    assert list(sam[CL.C1_LMST_BEATS_NMST]) == [12.0, 12.0, 12.0]
    assert list(sam[CL.C13_MGR_RESP]) == [4.0, 4.0, 4.0]
    want = [sum(float(cl.m_resp_s.sel(config=pol, capacity_gb=c, burst_ratio=0.5, replication=r))
                > float(cl.m_resp_s.sel(config=pol, capacity_gb=c, burst_ratio=0.3, replication=r))
                for pol in (X.NMST, X.MAIN) for c in (40, 70)) for r in range(3)]
    assert list(sam[CL.C4_RISES_WITH_BURST]) == want
