"""AutoTiering's preconditions (``autotiering.pre.*``): each measurement against a small case computed by hand, the
noise-floor rows against identical and planted policies, the paired claim helpers, and the notebook's recording of
every row with its readings."""

from __future__ import annotations

import json
from pathlib import Path

import jax
import numpy as np
import pytest
import xarray as xr

from tieringlab import params
from tieringlab.claims import autotiering as C
from tieringlab.claims import verdict_given
from tieringlab.experiments import autotiering as X
from tieringlab.models.devices import autotiering_tier_table

REPO = Path(__file__).resolve().parents[1]
_BY_ID = {c.id: c for c in C.CLAIMS}


def _p(**kw):
    return params.validate_section("autotiering", {"n_epochs": 6, "warmup_epochs": 2, "sensitivity": ["none"], **kw})


# ----------------------------------------------------------------------------- copies


def _schedule():
    """6 epochs, 2 VMDKs. VMDK 0: copy 0 -> 2 decided at the end of epoch 1, in flight in epochs 2 and 3, served from
    tier 2 from epoch 4 (2 epochs). VMDK 1: copy 1 -> 0 decided at the end of epoch 3, in flight in 4 and 5, never
    ends."""
    tier_of = np.array([[0, 1], [0, 1], [0, 1], [0, 1], [2, 1], [2, 1]])
    dst = np.array([[0, 1], [2, 1], [2, 1], [2, 0], [2, 0], [2, 0]])
    started = np.zeros((6, 2), bool)
    started[1, 0] = started[3, 1] = True
    return started, tier_of, dst


def _copy_res(started, tier_of, dst):
    """A one-policy, one-seed result holding only what the copy measurements read."""
    dims = ("policy", "seed", "epoch", "vmdk")
    return xr.Dataset({k: (dims, v[None, None]) for k, v in (("started", started), ("tier_of", tier_of), ("dst", dst))},
                      coords={"policy": ["AutoTiering"], "seed": [0], "epoch": np.arange(6), "vmdk": [0, 1]})


def test_copy_in_flight_and_durations_by_hand():
    started, tier_of, dst = _schedule()
    flight = X.copy_in_flight(tier_of, dst)
    expect = np.zeros((6, 2), bool)
    expect[[2, 3], 0] = True
    expect[[4, 5], 1] = True
    np.testing.assert_array_equal(flight, expect)
    start, epochs = X.copy_durations(started, tier_of, dst)
    np.testing.assert_array_equal(start, [1, 3])
    np.testing.assert_array_equal(epochs, [2.0, np.inf])
    # leading (seed) dimensions broadcast
    np.testing.assert_array_equal(X.copy_in_flight(tier_of[None], dst[None])[0], expect)


def test_copy_duration_counts_and_flips_per_reading_by_hand():
    import pandas as pd

    cd = X.copy_duration_counts(_p(), _copy_res(*_schedule()), longest=3).set_index("copy (monitor epochs)")
    assert cd["copies"].to_dict() == {"1": 0, "2": 1, "3": 0, "> 3": 0, "not ended": 1}
    np.testing.assert_allclose(X.in_flight_series(_copy_res(*_schedule())).values[0], [0, 0, .5, .5, .5, .5])
    sens = pd.DataFrame({"claim": ["a.c1", "a.c2", "a.pre", "a.c1", "a.c2", "a.pre", "a.c1", "a.c2", "a.pre"],
                         "kind": ["claim", "claim", "precondition"] * 3,
                         "reading": ["default"] * 3 + ["r1"] * 3 + ["r2"] * 3,
                         "flips": [False] * 3 + [True, False, True] + [True, True, False]})
    f = X.flips_per_reading(sens)
    assert f["reading"].tolist() == ["r2", "r1"]
    assert f["claims flipped"].tolist() == [2, 1] and f["preconditions flipped"].tolist() == [0, 1]
    assert f["rows"].tolist() == ["c1, c2", "c1, pre"]


def test_copy_stats_by_hand():
    res = _copy_res(*_schedule())
    p = _p()                                                       # post-warm-up = epochs 2..5: 4 of 8 in flight
    st = X.copy_stats(p, res, within=1).sel(policy="AutoTiering", seed=0)
    assert float(st["in_flight_share"]) == pytest.approx(0.5)
    assert int(st["copies"]) == 2 and int(st["unfinished"]) == 1
    assert int(st["eligible"]) == 2 and int(st["finished_within"]) == 0      # starts 1, 3 <= 6 - 1 - 1 - 1
    st2 = X.copy_stats(p, res, within=2).sel(policy="AutoTiering", seed=0)
    assert int(st2["eligible"]) == 1 and int(st2["finished_within"]) == 1     # only the copy decided at epoch 1
    assert float(st2["pooled_median_epochs"]) == np.inf                      # median of (2, inf)
    # with warm-up 4 only epochs 4, 5 count: VMDK 1's copy, 2 of 4
    st4 = X.copy_stats(_p(warmup_epochs=4), res).sel(policy="AutoTiering", seed=0)
    assert float(st4["in_flight_share"]) == pytest.approx(0.5)
    assert X.copy_stats(_p(warmup_epochs=3), res)["in_flight_share"].item() == pytest.approx(3 / 6)


def test_in_flight_matches_the_bytes_the_simulator_copies(small):
    """Independent of the schedule reading: in the closed loop a copy moves bytes in exactly the epochs it is in
    flight (the epoch it ends in included)."""
    _, res = small
    for pol in res.policy.values:
        r = res.sel(policy=pol)
        flight = X.copy_in_flight(r["tier_of"].values, r["dst"].values)
        np.testing.assert_array_equal(flight, r["moved_bytes"].values > 0)
        assert flight.any()


# ----------------------------------------------------------------------------- slope spread


def test_slope_spread_by_hand():
    """11 data VMDKs with slopes 0, 0.1, ..., 1.0 after the warm-up: 90th - 10th percentile = 0.9 - 0.1 = 0.8; the
    system VMDKs and the warm-up epochs (slope 9) do not count; all slopes 1: spread 0, and the row fails."""
    n_v, n_e = 22, 6
    is_data = np.arange(n_v) % 2 == 1
    slope = np.full((1, 1, n_e, n_v), 9.0)
    slope[0, 0, 2:, is_data] = np.linspace(0.0, 1.0, 11)[:, None]
    res = xr.Dataset({"slope": (("policy", "seed", "epoch", "vmdk"), slope)},
                     coords={"policy": ["AutoTiering"], "seed": [0], "epoch": np.arange(n_e), "vmdk": np.arange(n_v),
                             "is_data": ("vmdk", is_data)})
    assert X.slope_spread(_p(), res) == pytest.approx([0.8])
    flat = res.copy(deep=True)
    flat["slope"][:] = 1.0
    assert X.slope_spread(_p(), flat) == pytest.approx([0.0])
    assert _BY_ID[C.PRE_SLOPE_SPREAD].verdict(0.0) == "differs"
    assert _BY_ID[C.PRE_SLOPE_SPREAD].verdict(0.8) == "holds"


# ----------------------------------------------------------------------------- saturation


def test_offered_utilisation_and_all_saturated_share_by_hand():
    """One 4 KiB read VMDK per tier offering ``x`` of its tier's Table IV read IOPS over 2 disks (4 KiB reads are
    IOPS-bound on every Table IV tier: 1 / IOPS > 4096 B / read bandwidth): offered utilisation = x. Epoch 2 (after
    warm-up 2): every tier at 1.0 >= rho_max = 0.98; epoch 3: tier 2 at 0.25. All saturated in 1 of 2 epochs."""
    t = autotiering_tier_table()
    read_iops = np.asarray(t["read_iops"], float)
    assert np.all(1 / read_iops > 4096 / np.asarray(t["read_bytes_per_s"], float))
    x = np.array([[0.1, 0.1, 0.1], [0.5, 0.5, 0.5], [1.0, 1.0, 1.0], [1.0, 0.25, 1.0]])     # (epoch, tier)
    lam = x * 2 * read_iops                                                                # VMDK v on tier v
    res = xr.Dataset(
        {"tier_of": (("policy", "seed", "epoch", "vmdk"), np.tile(np.arange(3), (1, 1, 4, 1))),
         "offered_iops": (("seed", "epoch", "vmdk"), lam[None]),
         "read_fraction": (("seed", "epoch", "vmdk"), np.ones((1, 4, 3))),
         "io_bytes": (("seed", "vmdk"), np.full((1, 3), 4096.0))},
        coords={"policy": ["AutoTiering"], "seed": [0], "epoch": np.arange(4), "tier": [1, 2, 3], "vmdk": np.arange(3)})
    p = _p()
    rho = X.offered_utilisation(p, res).sel(policy="AutoTiering", seed=0).values
    np.testing.assert_allclose(rho, x, rtol=1e-12)
    assert float(X.all_saturated_share(p, res).item()) == pytest.approx(0.5)
    assert _BY_ID[C.PRE_NOT_SATURATED].verdict(0.5) == "holds"
    assert _BY_ID[C.PRE_NOT_SATURATED].verdict(1.0) == "differs"


# ----------------------------------------------------------------------------- the "up to" noise floor


def _iops_res(at, base, name):
    """A result whose all-tier IOPS are ``at`` / ``base`` (seed, epoch), all on tier 1 reads."""
    s, e = at.shape
    iops = np.zeros((2, s, e, 3, 2))
    iops[0, :, :, 0, 0], iops[1, :, :, 0, 0] = at, base
    dims = ("policy", "seed", "epoch", "tier", "direction")
    return xr.Dataset({"iops": (dims, iops), "bytes_per_s": (dims, iops * 4096), "latency_s": (dims, iops * 0 + 1e-4)},
                      coords={"policy": ["AutoTiering", name], "seed": np.arange(s), "epoch": np.arange(e),
                              "tier": [1, 2, 3], "direction": ["read", "write"]})


def test_noise_floor_false_for_identical_policies_true_for_a_planted_gain():
    rng = np.random.default_rng(3)
    base = 1e5 * rng.lognormal(0.0, 0.2, (10, 12))
    same = _iops_res(base.copy(), base, "IDT")
    ok, v = X.up_to_noise_floor(_p(), same, "IDT")
    assert not ok and v["forward"] == pytest.approx(v["reverse"]) == pytest.approx(0.0)
    assert _BY_ID[C.PRE_C1_FLOOR].verdict(ok) == "differs"
    # noise alone: the forward best case is positive, yet does not beat its floor
    noisy = _iops_res(base * rng.lognormal(0.0, 0.05, base.shape), base, "IDT")
    ok_n, v_n = X.up_to_noise_floor(_p(), noisy, "IDT")
    assert v_n["forward"] > 0 and not ok_n
    # a planted +50 % in post-warm-up epoch 6 of every seed
    at = base * rng.lognormal(0.0, 0.05, base.shape)
    at[:, 6] = 1.5 * base[:, 6]
    ok_p, v_p = X.up_to_noise_floor(_p(), _iops_res(at, base, "EDT"), "EDT")
    assert ok_p and v_p["forward"] == pytest.approx(50.0, abs=3.0) and v_p["null_q95"] < v_p["forward"]
    assert _BY_ID[C.PRE_C2_FLOOR].verdict(ok_p) == "holds"


def test_up_to_claims_are_untestable_below_their_noise_floor():
    pre = {c.id: c for c in C.CLAIMS if c.kind == "precondition"}
    up = _BY_ID[C.C1_UP_TO]
    assert C.PRE_C1_FLOOR in up.requires and C.PRE_C2_FLOOR in _BY_ID[C.C2_UP_TO].requires
    passing = {pid: (pre[pid], True if pre[pid].check.kind == "true" else None) for pid in pre}
    assert verdict_given(up, 44.0, passing)[0] == "holds"
    failing = dict(passing, **{C.PRE_C1_FLOOR: (pre[C.PRE_C1_FLOOR], False)})
    verdict, why = verdict_given(up, 44.0, failing)
    assert verdict == "untestable" and C.PRE_C1_FLOOR in why


def test_every_precondition_is_required_and_every_claim_names_its_own():
    pres = {c.id for c in C.CLAIMS if c.kind == "precondition"}
    assert len(pres) >= 3 and all(pid.startswith("autotiering.pre.") for pid in pres)
    used = {pid for c in C.CLAIMS for pid in c.requires}
    assert used == pres
    for c in C.CLAIMS:
        if c.kind == "claim":
            assert C.PRE_COPIES_FINISH in c.requires, c.id
    assert not _BY_ID[C.C18].requires


# ----------------------------------------------------------------------------- paired helpers


def test_paired_gap_helpers_by_hand():
    a = np.array([110.0, 120.0, 130.0])
    b = np.array([100.0, 100.0, 100.0])
    # gaps 10, 20, 30 %: mean 20, sd 10, t(0.975, 2) = 4.302653 -> half 4.302653 * 10 / sqrt(3)
    half = 4.302652729911275 * 10 / np.sqrt(3)
    assert X.paired_gap_lo(a, b) == pytest.approx(20 - half)
    c = np.array([110.0, 111.0, 112.0])                             # clearly above b: the sides are symmetric
    assert X.paired_gap_lo(c, b) > 0 and X.paired_gap_lo(b, c, higher=False) > 0
    assert X.paired_gap_lo(b, c) < 0 and X.paired_gap_lo(c, b, higher=False) < 0
    # a non-finite seed is left out; fewer than 2 pairs left: NaN
    assert X.paired_gap_lo(np.array([110.0, np.nan, 130.0, 120.0]), np.array([100.0, 100.0, 100.0, 100.0])) == \
        pytest.approx(20 - half)
    assert np.isnan(X.paired_gap_lo(np.array([1.0, np.nan]), np.array([1.0, 1.0])))
    # differences over the mean: a baseline of 0 in one seed is fine
    assert X.paired_diff_lo(np.array([0.0, 0.0, 0.0]), np.array([10.0, 20.0, 0.0]), higher=False) == pytest.approx(
        100 * (10 - 4.302652729911275 * 10 / np.sqrt(3)) / 10)


# ----------------------------------------------------------------------------- the notebook records every row


@pytest.fixture(scope="module")
def small():
    # the shapes and epochs of test_autotiering's closed-loop runs (one compiled program when both run in a process)
    p = params.validate_section("autotiering", {"n_seeds": 2, "n_epochs": 9, "warmup_epochs": 4,
                                                "epochs": {"monitor_epoch_s": 300.0, "migration_epoch_s": 900.0},
                                                "sensitivity": ["history_b"]})
    res = X.run(p, jax.random.key(0))
    return p, res


def test_notebook_06_records_every_row_with_readings_and_samples(small, tmp_path, monkeypatch):
    from tieringlab.results import Outputs

    p, res = small
    vals = X.claim_values(p, res)
    assert set(vals) == {c.id for c in C.CLAIMS}
    for cid, (value, _note, samples) in vals.items():
        assert value is None or isinstance(value, (bool, np.bool_)) or not np.isinf(value), cid
        if samples is not None:
            assert len(samples) == 2, cid
    for pid in (C.PRE_COPIES_FINISH, C.PRE_IN_FLIGHT, C.PRE_SLOPE_SPREAD, C.PRE_NOT_SATURATED):
        assert vals[pid][0] is not None
    for pid in (C.PRE_C1_FLOOR, C.PRE_C2_FLOOR):
        assert isinstance(vals[pid][0], bool)
        assert all(w in vals[pid][1] for w in ("forward", "reverse", "null q95"))
    # the readings: the stand-in reading run reuses this run (the values differ only by a marker)
    monkeypatch.setattr(X, "run", lambda q, key: res)
    by_reading = X.reading_values(p, None, vals)
    assert list(by_reading) == ["default", "history_b"]
    src = "".join(c for cell in json.loads((REPO / "notebooks" / "06_autotiering.ipynb").read_text())["cells"]
                  for c in cell["source"])
    assert "by_reading = X.reading_values(P, k_run, vals)" in src
    assert "readings=X.other_readings(by_reading, cid), samples=samples" in src
    assert "X.sensitivity_table(by_reading)" in src
    out = Outputs("06_autotiering", tmp_path, params=p, seed=0)
    for cid, (value, note, samples) in vals.items():
        out.claim(cid, value, note=note, readings=X.other_readings(by_reading, cid), samples=samples)
    rec = json.loads(next(tmp_path.rglob("06_autotiering.json")).read_text())["claims"]
    assert set(rec) == {c.id for c in C.CLAIMS}
    for cid in rec:
        assert "history_b" in rec[cid]["readings"], cid
    assert len(rec[C.PRE_SLOPE_SPREAD]["samples"]) == 2
    table = X.sensitivity_table(by_reading)
    assert set(table["reading"]) == {"default", "history_b"} and set(table["claim"]) == set(rec)
    # a claim is untestable in the table exactly where one of its preconditions fails under that reading
    pre = {c.id: c for c in C.CLAIMS if c.kind == "precondition"}
    for c in C.CLAIMS:
        want = verdict_given(c, vals[c.id][0], {pid: (pre[pid], vals[pid][0]) for pid in c.requires})[0]
        got = table[(table.claim == c.id) & (table.reading == "default")]["verdict"].item()
        assert got == want, c.id
