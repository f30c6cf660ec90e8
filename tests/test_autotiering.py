"""AutoTiering (Alg. 1-2, Eq. 6-7), IDT and EDT against plain Python references of the paper's loops,
hypothesis properties of the matching, and the closed loop's invariants."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

from tieringlab import params, readings
from tieringlab.models import allflash as af
from tieringlab.models.devices import autotiering_tier_table
from tieringlab.models.workloads import autotiering as wl
from tieringlab.params import ParamsError
from tieringlab.policies import autotiering as at
from tieringlab.policies import contract, registry
from tieringlab.units import GB, MB

TIERS = af.tier_arrays(autotiering_tier_table(), (2, 2, 2))


# ----------------------------------------------------------------------------- plain references

def scores_reference(m, b, conf, L, cal_tier, cur_tier, io, size, read_bps, used, hist, caps, spc, wet, sla, aging,
                     wet_mig, floor, mig_epoch, history="A"):
    """Alg. 1 lines 22-35 and Alg. 2 lines 1-18 written as the paper's loops (all tiers x all VMs)."""
    T, V = len(L), len(m)
    maxP, maxB, maxS = caps.P, caps.B, caps.S
    remR = [caps.B_rw[t][0] - used[t][0] for t in range(T)]
    remW = [caps.B_rw[t][1] - used[t][1] for t in range(T)]
    score = np.zeros((T, V))
    hist_next = np.zeros((T, V))
    for t in range(T):
        for v in range(V):
            lat = m[v] * (L[t] - L[cal_tier[v]]) + b[v]                      # estimateAvgLat
            iops = 1.0 / lat if lat > 0 else 0.0                              # 10^6 / Lat (seconds here)
            P, B, S = iops, iops * io[v], size[v]
            if t == cur_tier[v]:
                cost = 0.0
            else:
                spd = max(min(remR[cur_tier[v]] + read_bps[v], remW[t]), floor)
                cost = size[v] / spd / mig_epoch
            if maxP[t] < P or maxB[t] < B or maxS[t] < S:
                score[t, v] = -1
                hist_next[t, v] = 0.0 if history == "A" else aging * hist[t, v]
                continue
            ratio = (P / maxP[t], B / maxB[t], S / maxS[t])
            omega = sum(spc[t][k] * wet[t][k] * ratio[k] for k in range(3)) * sla * conf[v] / sum(wet[t])
            if history == "A":
                score[t, v] = aging * hist[t, v] + omega - wet_mig * cost
                hist_next[t, v] = score[t, v]
            else:
                hist_next[t, v] = aging * hist[t, v] + omega
                score[t, v] = hist_next[t, v] - wet_mig * cost
    return score, hist_next


def greedy_reference(score, eligible, usage, caps, pinned):
    """triggerMigration (Alg. 2 lines 19-25) literally, with pinned VMDKs counted first."""
    T, V = score.shape
    K = usage.shape[2]
    dest = [int(p) for p in pinned]
    load = [[0.0] * K for _ in range(T)]
    for v in range(V):
        if pinned[v] >= 0:
            for k in range(K):
                load[pinned[v]][k] += usage[pinned[v], v, k]
    for t in range(T):
        order = sorted(range(V), key=lambda v: (-score[t, v], v))
        for v in order:
            if dest[v] >= 0 or not eligible[t, v]:
                continue
            if all(load[t][k] + usage[t, v, k] <= caps[t, k] for k in range(K)):
                for k in range(K):
                    load[t][k] += usage[t, v, k]
                dest[v] = t
    return dest, load


# ----------------------------------------------------------------------------- scoring


def _random_inputs(rng, V, heavy=False):
    T = 3
    caps = af.capacity_caps(TIERS, 0.9, 0.9)
    return dict(
        m=rng.uniform(-0.5, 3.0, V), b=rng.uniform(50e-6, 3e-3, V) * (0.01 if heavy else 1),
        conf=rng.uniform(0.05, 1.0, V), L=rng.uniform(100e-6, 3e-3, T), cal_tier=rng.integers(0, T, V),
        cur_tier=rng.integers(0, T, V), io=rng.choice([4096.0, 8192.0, 65536.0], V),
        size=rng.uniform(10, 900, V) * GB, read_bps=rng.uniform(0, 400, V) * MB,
        used=rng.uniform(0, 2500, (T, 2)) * MB, hist=rng.uniform(-0.2, 1.0, (T, V)), caps=caps)


@pytest.mark.parametrize("history", ["A", "B"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scores_equal_the_paper_loops(history, seed):
    rng = np.random.default_rng(seed)
    d = _random_inputs(rng, 40, heavy=seed == 2)
    spc = np.array([[1, 1, 0], [1, 1, 1], [0, 0, 1]], float)
    wet = np.array([[1, 2, 1], [1, 1, 1], [0.5, 1, 3]], float)
    ref_score, ref_hist = scores_reference(d["m"], d["b"], d["conf"], d["L"], d["cal_tier"], d["cur_tier"], d["io"],
                                           d["size"], d["read_bps"], d["used"], d["hist"], d["caps"], spc, wet, 1.0,
                                           0.5, 0.1, 1 * MB, 900.0, history)
    sc = at.autotiering_scores(
        jnp.asarray(d["m"]), jnp.asarray(d["b"]), jnp.asarray(d["conf"]), jnp.asarray(d["L"]),
        jnp.asarray(d["cal_tier"]), jnp.asarray(d["cur_tier"]), jnp.asarray(d["io"]), jnp.asarray(d["size"]),
        jnp.asarray(d["read_bps"]), jnp.asarray(d["used"]), jnp.asarray(d["hist"]), caps=d["caps"], spc=spc, wet=wet,
        sla=1.0, aging_factor=0.5, wet_mig=0.1, mig_speed_floor=1 * MB, migration_epoch_s=900.0, history=history)
    np.testing.assert_allclose(sc.score, ref_score, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(sc.hist, ref_hist, rtol=1e-12, atol=1e-15)
    assert np.array_equal(np.asarray(sc.eligible), ref_score != -1)
    if seed == 2:   # tiny latencies: the predicted IOPS exceed maxP on some tiers (score -1, ratios 0)
        assert (~np.asarray(sc.eligible)).any()
        assert np.all(np.asarray(sc.ratio)[~np.asarray(sc.eligible)] == 0)


def test_fig2_example_orders_vms_by_sensitivity():
    """Fig. 2: t1 is 2,000 µs faster than t2, t2 2,000 µs faster than t3; v1 (steep) on t1, v3 (flat) on
    t3. Only P (throughput) matters here: v1 gains most from the fast tier and ranks first on it."""
    L = jnp.array([1000e-6, 3000e-6, 5000e-6])
    m = jnp.array([1.5, 0.8, 0.1])
    b = jnp.array([1000e-6, 3000e-6, 5000e-6])
    tier = jnp.array([0, 1, 2])
    caps = af.capacity_caps(TIERS, 0.9, 0.9)
    sc = at.autotiering_scores(m, b, jnp.ones(3), L, tier, tier, jnp.full(3, 4096.0), jnp.full(3, 1 * GB),
                               jnp.zeros(3), jnp.zeros((3, 2)), jnp.zeros((3, 3)), caps=caps,
                               spc=[[1, 0, 0]] * 3, wet=[[1, 1, 1]] * 3, sla=1.0, aging_factor=0.0, wet_mig=0.0,
                               mig_speed_floor=1 * MB, migration_epoch_s=900.0)
    lat = np.asarray(sc.lat) * 1e6
    np.testing.assert_allclose(lat[:, 0], [1000, 4000, 7000])        # v1 on t1, t2, t3
    np.testing.assert_allclose(lat[:, 2], [4600, 4800, 5000])        # v3 barely changes
    gain = np.asarray(sc.omega)[0] / np.asarray(sc.omega)[2]         # speed-up of moving to t1
    assert gain[0] > gain[1] > gain[2]


def test_predictions_below_the_device_are_raised_to_its_floor_and_mixed_caps_by_hand():
    """A line extrapolated to a faster tier (m = 3 from a 2 ms tier to a 0.2 ms one) predicts 2 ms - 3 x 1.8 ms < 0:
    as printed (no floor) 0 IOPS; with the floor, the tier's unloaded latency qd / IOPS + s / BW at the VMDK's read
    mix, so P = 1 / floor. The mixed caps are the harmonic mix of the read and write caps at the read fraction."""
    caps = af.capacity_caps(TIERS, 0.9, 0.9)
    L = jnp.array([0.2e-3, 2e-3, 2e-3])
    args = (jnp.array([3.0]), jnp.array([2e-3]), jnp.ones(1), L, jnp.array([1]), jnp.array([1]), jnp.full(1, 4096.0),
            jnp.full(1, 1 * GB), jnp.zeros(1), jnp.zeros((3, 2)), jnp.zeros((3, 1)))
    kw = dict(caps=caps, spc=[[1, 1, 1]] * 3, wet=[[1, 1, 1]] * 3, sla=1.0, aging_factor=0.0, wet_mig=0.0,
              mig_speed_floor=1 * MB, migration_epoch_s=900.0)
    literal = at.autotiering_scores(*args, **kw)
    assert float(literal.lat_raw[0, 0]) == pytest.approx(2e-3 - 3 * 1.8e-3)
    assert float(literal.cap[0, 0, 0]) == 0.0
    floor = at.latency_floor(TIERS, jnp.array([4096.0]), jnp.array([0.5]), 32)
    l0_t1 = 0.5 * (32 / 240e3 + 4096 / 1000e6) + 0.5 * (32 / 19e3 + 4096 / 870e6)
    assert float(floor[0, 0]) == pytest.approx(l0_t1, rel=1e-12)
    clamped = at.autotiering_scores(*args, **kw, lat_floor=floor)
    assert float(clamped.lat[0, 0]) == pytest.approx(l0_t1) and float(clamped.cap[0, 0, 0]) == pytest.approx(1 / l0_t1)
    assert float(clamped.lat[1, 0]) == pytest.approx(2e-3)             # above the floor: unchanged
    mixed = np.asarray(at.vmdk_caps(caps, jnp.array([0.25, 1.0]), True))
    assert mixed[0, 0, 0] == pytest.approx(1 / (0.25 / (0.9 * 2 * 240e3) + 0.75 / (0.9 * 2 * 19e3)))
    assert mixed[2, 1, 1] == pytest.approx(0.9 * 2 * 540 * MB)          # all reads: the read cap
    np.testing.assert_allclose(np.asarray(at.vmdk_caps(caps, jnp.array([0.25]), False))[:, 0, 0], caps.P)


def test_migration_cost_is_zero_on_the_own_tier_and_uses_the_bottleneck():
    caps = af.capacity_caps(TIERS, 0.9, 0.9)
    used = jnp.array([[500 * MB, 100 * MB], [0.0, 1000 * MB], [0.0, 0.0]])
    sc = at.autotiering_scores(jnp.ones(1), jnp.full(1, 1e-3), jnp.ones(1), jnp.full(3, 1e-3), jnp.array([0]),
                               jnp.array([0]), jnp.full(1, 4096.0), jnp.full(1, 100 * GB), jnp.full(1, 200 * MB), used,
                               jnp.zeros((3, 1)), caps=caps, spc=[[1, 1, 1]] * 3, wet=[[1, 1, 1]] * 3, sla=1.0,
                               aging_factor=0.5, wet_mig=0.1, mig_speed_floor=1 * MB, migration_epoch_s=900.0)
    cost = np.asarray(sc.mig_cost)[:, 0] * 900.0
    rem_read_src = 0.9 * 2 * 1000 * MB - 500 * MB + 200 * MB
    assert cost[0] == 0.0
    assert cost[1] == pytest.approx(100 * GB / min(rem_read_src, 0.9 * 2 * 930 * MB - 1000 * MB))
    assert cost[2] == pytest.approx(100 * GB / min(rem_read_src, 0.9 * 2 * 480 * MB))


# ----------------------------------------------------------------------------- matching


@st.composite
def matching_case(draw):
    V = draw(st.integers(1, 12))
    K = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    score = rng.choice([0.1, 0.2, 0.5, 0.7, 1.0, 2.0], (3, V))      # ties happen
    eligible = rng.random((3, V)) < 0.85
    usage = rng.integers(1, 6, (3, V, K)).astype(float)
    caps = rng.integers(2, 20, (3, K)).astype(float)
    pinned = np.where(rng.random(V) < 0.2, rng.integers(0, 3, V), -1)
    return score, eligible, usage, caps, pinned


def _pad(score, eligible, usage, caps, pinned, n=12):
    """Pad the VMDK axis to one shape (ineligible, zero-usage, free VMDKs change nothing)."""
    p = n - score.shape[1]
    return (np.pad(score, ((0, 0), (0, p))), np.pad(eligible, ((0, 0), (0, p))),
            np.pad(usage, ((0, 0), (0, p), (0, 0))), caps, np.pad(pinned, (0, p), constant_values=-1))


@settings(max_examples=60, deadline=None)
@given(matching_case())
def test_greedy_equals_reference_and_respects_caps(case):
    score, eligible, usage, caps, pinned = case
    V = score.shape[1]
    dest, load = at.tier_major_greedy(*_pad(score, eligible, usage, caps, pinned))
    dest = np.asarray(dest)[:V]
    ref_dest, ref_load = greedy_reference(score, eligible, usage, caps, pinned)
    assert list(dest) == ref_dest
    np.testing.assert_allclose(load, ref_load)
    for t in range(3):
        mine = dest == t
        free = mine & (pinned < 0)
        # caps hold for everything placed on t, unless the VMDKs pinned there already exceed them
        if np.all(usage[t, pinned == t].sum(axis=0) <= caps[t]):
            assert np.all(usage[t, mine].sum(axis=0) <= caps[t] + 1e-12)
        else:
            assert not free.any()
        assert np.all(eligible[t, free])
    # a VMDK left out had, on every tier it was eligible for, no room even at the end
    for v in np.flatnonzero(dest < 0):
        for t in range(3):
            if eligible[t, v]:
                assert np.any(np.asarray(ref_load[t]) + usage[t, v] > caps[t])


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 12))
def test_final_placement_one_tier_each_and_storage_caps_hold(seed, V):
    rng = np.random.default_rng(seed)
    size = rng.integers(1, 10, V).astype(float)
    cap_s = np.full(3, max(size.sum() / 2, size.max()) + 2 * size.max())   # room for first fit to succeed
    assert size.sum() <= cap_s.sum() - 3 * size.max()
    score = rng.random((3, V))
    eligible = rng.random((3, V)) < 0.5
    usage = size[None, :, None] * np.ones((3, 1, 1))
    dest, _ = at.tier_major_greedy(*_pad(score, eligible, usage, cap_s[:, None], np.full(V, -1)))
    current = rng.integers(0, 3, V)
    final = np.asarray(at.place_leftovers(jnp.asarray(np.asarray(dest)[:V]), jnp.asarray(current), jnp.asarray(size),
                                          jnp.asarray(cap_s)))
    assert final.shape == (V,) and np.all((final >= 0) & (final < 3))
    for t in range(3):
        assert size[final == t].sum() <= cap_s[t]


def test_idt_and_edt_inputs_by_hand():
    caps = af.capacity_caps(TIERS, 0.9, 0.9)
    iops = jnp.array([[1000.0, 0.0], [0.0, 5000.0], [300.0, 300.0]])
    size = jnp.array([100 * GB, 10 * GB, 1 * GB])
    s_idt, _, u_idt, c_idt = at.greedy_baseline_decide(False, False, caps, iops, size)
    np.testing.assert_allclose(s_idt[0], [1000, 5000, 600])
    assert np.isinf(np.asarray(c_idt)[:, 0]).all()
    s_edt, _, u_edt, c_edt = at.greedy_baseline_decide(True, True, caps, iops, size)
    np.testing.assert_allclose(s_edt[2], [1000 / (100 * GB), 5000 / (10 * GB), 600 / GB])
    # mixed budget on T1: 5000 writes / (0.9 * 2 * 19K)
    assert float(u_edt[0, 1, 0]) == pytest.approx(5000 / (0.9 * 2 * 19e3))
    assert float(u_edt[2, 2, 0]) == pytest.approx(300 / (0.9 * 2 * 99e3) + 300 / (0.9 * 2 * 18e3))
    np.testing.assert_allclose(np.asarray(c_edt)[:, 0], 1.0)
    np.testing.assert_allclose(np.asarray(c_edt)[:, 1], caps.S)


# ----------------------------------------------------------------------------- params and registry


def test_registry_names_and_fixed_fields():
    ours = [n for n in registry.names("controller") if registry.get(n).fn.__module__ == at.__name__]
    assert ours == ["AutoTiering", "EDT", "IDT"]   # other modules' controllers (EAFC, ...) may be registered too
    assert registry.get("AutoTiering").kind == "controller" and registry.get("AutoTiering").random
    assert registry.get("at").name == "AutoTiering"
    assert registry.make_params("IDT", {"gamma": 0.8}) == at.GreedyTieringParams(
        rank="iops", iops_budget=False, gamma=0.8)
    with pytest.raises(ParamsError, match=r"IDT: knob 'rank'='density' contradicts the name, which fixes "
                                          r"rank='iops'"):
        registry.make_params("IDT", {"rank": "density"})
    assert registry.make_params("EDT", {"rank": "iops"}).rank == "iops"
    assert registry.make_params("EDT").rank == "density"


def test_bad_params_name_the_field():
    with pytest.raises(ValueError, match="migration_epoch_s must be a whole multiple"):
        at.AutoTieringParams(migration_epoch_s=450.0)
    with pytest.raises(ValueError, match="aging_factor"):
        at.AutoTieringParams(aging_factor=1.0)
    with pytest.raises(ValueError, match="levels_s"):
        at.AutoTieringParams(levels_s=(0.0,))
    with pytest.raises(ValueError, match="spc"):
        at.AutoTieringParams(spc=((1, 1),))
    with pytest.raises(ValueError, match="history"):
        at.AutoTieringParams(history="C")
    with pytest.raises(ValueError, match="cadence"):
        at.GreedyTieringParams(cadence="daily")
    with pytest.raises(ValueError, match=r"AutoTieringParams\.gamma: expected a number in \[0\.01, 1\.0\], got 0"):
        at.AutoTieringParams(gamma=0)
    with pytest.raises(ValueError, match=r"AutoTieringParams\.n_samples: expected an integer in \[2, 1000\], got 1"):
        at.AutoTieringParams(n_samples=1)
    with pytest.raises(ValueError, match=r"sla must be > 0"):
        at.AutoTieringParams(sla=0.0)
    with pytest.raises(ValueError, match=r"spc and wet must have one row per tier each"):
        at.AutoTieringParams(wet=((1.0, 1.0, 1.0),))
    with pytest.raises(ValueError, match=r"GreedyTieringParams\.iops_budget: expected true or false, got 1"):
        at.GreedyTieringParams(iops_budget=1)
    with pytest.raises(ValueError, match=r"mig_min_share must lie in \(0, rho_max = 0\.6\)"):
        af.DatacenterParams(rho_max=0.6, mig_min_share=0.7)


def test_unknown_knob_names_the_allowed_fields():
    """Each system takes exactly its own parameters: AutoTiering's knobs are not IDT's (an unknown knob would
    otherwise run the default silently)."""
    with pytest.raises(ParamsError, match=r"IDT: unknown knob 'aging_factor'; GreedyTieringParams has: "
                                          r"monitor_epoch_s, migration_epoch_s, gamma, gamma_s, rank, iops_budget, "
                                          r"cadence$"):
        registry.make_params("IDT", {"aging_factor": 0.5})
    with pytest.raises(ParamsError, match=r"AutoTiering: unknown knob 'cadence'; AutoTieringParams has: "
                                          r"monitor_epoch_s, migration_epoch_s, gamma, gamma_s, spc"):
        registry.make_params("AutoTiering", {"cadence": "monitor"})


def test_params_compose_the_shared_epochs_with_each_systems_settings():
    """AutoTieringParams and GreedyTieringParams are the epochs (declared once, in TieringEpochs) and each system's
    own settings; every check still runs on the composed params and on each piece alone."""
    for cls, own in ((at.AutoTieringParams, at.AutoTieringSettings), (at.GreedyTieringParams, at.GreedySettings)):
        assert issubclass(cls, at.TieringEpochs) and issubclass(cls, own)
        names = [f.name for f in dataclasses.fields(cls)]
        assert names == [f.name for f in dataclasses.fields(at.TieringEpochs)] + [f.name for f in
                                                                                   dataclasses.fields(own)]
    shared = {f.name for f in dataclasses.fields(at.TieringEpochs)}
    assert shared == {"monitor_epoch_s", "migration_epoch_s", "gamma", "gamma_s"}
    assert not shared & {f.name for f in dataclasses.fields(at.AutoTieringSettings)}
    assert not shared & {f.name for f in dataclasses.fields(at.GreedySettings)}
    assert at.TieringEpochs(migration_epoch_s=1800.0).every == 6 and at.AutoTieringParams().every == 3
    assert at.GreedyTieringParams(cadence="monitor").every == 1 and at.GreedyTieringParams().every == 3
    with pytest.raises(ValueError, match="migration_epoch_s must be a whole multiple"):
        at.TieringEpochs(migration_epoch_s=450.0)
    with pytest.raises(ValueError, match="migration_epoch_s must be a whole multiple"):
        at.GreedyTieringParams(migration_epoch_s=450.0)
    with pytest.raises(ValueError, match=r"TieringEpochs\.gamma_s: expected a number in \[0\.01, 1\.0\], got 2"):
        at.TieringEpochs(gamma_s=2.0)
    with pytest.raises(ValueError, match=r"sla must be > 0"):
        at.AutoTieringSettings(sla=0.0)
    with pytest.raises(ValueError, match=r"spc and wet must have one row per tier each"):
        at.AutoTieringSettings(wet=((1.0, 1.0, 1.0),))
    with pytest.raises(ValueError, match=r"levels_s must be >= 2 distinct"):
        at.AutoTieringSettings(levels_s=(0.0, 0.0))
    with pytest.raises(ValueError, match=r"GreedySettings\.cadence: expected one of"):
        at.GreedySettings(cadence="daily")


def test_section_embeds_each_systems_params():
    """params.yaml's autotiering section sets the shared TieringEpochs once, AutoTiering's settings, IDT's and
    EDT's GreedySettings, the DatacenterParams and the WorkloadParams directly; unknown keys at any level (a
    former top-level knob included) are errors naming the allowed names; system_params puts each system's
    parameters together."""
    import tieringlab.experiments.autotiering as X

    p = params.validate_section("autotiering", {"policy": {"history": "B", "levels_s": [0.0, 1e-4]},
                                                "edt": {"rank": "iops"}, "datacenter": {"n_disks": [4, 4, 4]},
                                                "workload": {"sigma": 0.5}})
    assert p.epochs == at.TieringEpochs(3600.0, 10800.0)
    assert p.policy == at.AutoTieringSettings(history="B", levels_s=(0.0, 1e-4))
    assert p.idt == at.GreedySettings(rank="iops", iops_budget=False)
    assert p.edt == at.GreedySettings(rank="iops")
    assert p.datacenter == af.DatacenterParams(n_disks=(4, 4, 4)) and p.workload == wl.WorkloadParams(sigma=0.5)
    ep = {"monitor_epoch_s": 3600.0, "migration_epoch_s": 10800.0}
    assert [X.system_params(p, n) for n in X.POLICIES] == [
        at.AutoTieringParams(history="B", levels_s=(0.0, 1e-4), **ep),
        at.GreedyTieringParams(rank="iops", iops_budget=False, **ep), at.GreedyTieringParams(rank="iops", **ep)]
    assert X.system_params(X.AutoTieringExperimentParams(), "IDT") == registry.make_params("IDT", ep)
    with pytest.raises(ParamsError, match=r"autotiering\.policy\.histroy: unknown parameter; allowed: aging_factor, "
                                          r"fallback_qd, history, lat_floor, levels_s"):
        params.validate_section("autotiering", {"policy": {"histroy": "B"}})
    with pytest.raises(ParamsError, match=r"autotiering\.n_disks: unknown parameter; allowed: datacenter, edt, "
                                          r"epochs, idt, n_epochs"):
        params.validate_section("autotiering", {"n_disks": [2, 2, 2]})
    with pytest.raises(ParamsError, match=r"notebook parameters: autotiering\.history: unknown parameter; "
                                          r"allowed: datacenter, edt"):
        params.check("autotiering", {"history": "B"})
    with pytest.raises(ParamsError, match=r"autotiering\.idt\.rank must be 'iops'"):
        params.validate_section("autotiering", {"idt": {"rank": "density"}})
    with pytest.raises(ParamsError, match=r"autotiering\.datacenter\.n_disks needs one count per Table IV tier"):
        params.validate_section("autotiering", {"datacenter": {"n_disks": [2, 2]}})


def test_the_epochs_are_declared_and_set_once_for_the_three_systems():
    """The epochs and Gamma live in ``autotiering.epochs`` only: one setting reaches AutoTiering, IDT and EDT (a
    reading of the epoch length is one override), and the systems' own mappings refuse them, naming what they
    have."""
    import tieringlab.experiments.autotiering as X

    p = params.validate_section("autotiering", {"epochs": {"monitor_epoch_s": 300.0, "migration_epoch_s": 1800.0,
                                                           "gamma": 0.8}})
    for name in X.POLICIES:
        q = X.system_params(p, name)
        assert (q.monitor_epoch_s, q.migration_epoch_s, q.gamma, q.gamma_s, q.every) == (300.0, 1800.0, 0.8, 0.9, 6)
    # the section's default: monitor hourly, migrate every 3 h; a reading of the epochs is one override
    assert {X.system_params(params.validate_section("autotiering", {}), n).every for n in X.POLICIES} == {3}
    h = X._BY_NAME["epochs_5min"].apply(params.validate_section("autotiering", {}))
    assert {X.system_params(h, n).monitor_epoch_s for n in X.POLICIES} == {300.0}
    assert {X.system_params(h, n).migration_epoch_s for n in X.POLICIES} == {900.0}
    with pytest.raises(ParamsError, match=r"autotiering\.idt\.monitor_epoch_s: unknown parameter; allowed: cadence, "
                                          r"iops_budget, rank$"):
        params.validate_section("autotiering", {"idt": {"monitor_epoch_s": 60.0}})
    with pytest.raises(ParamsError, match=r"autotiering\.policy\.gamma: unknown parameter; allowed: aging_factor, "
                                          r"fallback_qd, history"):
        params.validate_section("autotiering", {"policy": {"gamma": 0.8}})
    with pytest.raises(ParamsError, match=r"autotiering\.epochs\.migration_epoch_s must be a whole multiple"):
        params.validate_section("autotiering", {"epochs": {"migration_epoch_s": 450.0}})
    with pytest.raises(ParamsError, match=r"autotiering\.epochs\.rank: unknown parameter; allowed: gamma, gamma_s, "
                                          r"migration_epoch_s, monitor_epoch_s$"):
        params.validate_section("autotiering", {"epochs": {"rank": "iops"}})


def test_readings_go_through_tieringlab_readings(monkeypatch):
    """The readings of notes 6.6 are :class:`tieringlab.readings.Reading` s over the section; sensitivity runs the
    default and each chosen reading (:func:`tieringlab.readings.run_each`), and a verdict flips exactly where the
    claim's own check differs from the default's."""
    import tieringlab.experiments.autotiering as X
    from tieringlab.claims import autotiering as C

    base = params.validate_section("autotiering", {})
    assert [r.name for r in X.READINGS] == list(base.sensitivity)
    assert all(isinstance(r, readings.Reading) and not r.is_default for r in X.READINGS)
    by = {r.name: r.apply(base) for r in X.READINGS}
    assert by["n_disks_4"].datacenter.n_disks == (4, 4, 4) and by["zipf_full"].workload.zipf_device_fraction == 1.0
    assert by["spc_t2_half"].policy.spc == ((1.0, 1.0, 0.0), (0.5, 0.5, 1.0), (0.0, 0.0, 1.0))
    assert by["cadence_monitor"].idt.cadence == by["cadence_monitor"].edt.cadence == "monitor"
    assert by["edt_rank_iops"].edt.rank == "iops" and by["edt_rank_iops"].idt == base.idt
    # sensitivity with a stand-in run: C1_MEAN (at_least 0) holds under the default, differs under history B
    p = params.validate_section("autotiering", {"sensitivity": ["history_b", "edt_rank_iops"]})
    ran = []
    monkeypatch.setattr(X, "run", lambda q, key: q)
    monkeypatch.setattr(X, "claim_values", lambda q, res: ran.append(q) or {
        C.C1_MEAN: (-1.0 if q.policy.history == "B" else 2.0, "")})
    df = X.sensitivity(p, None)
    assert ran == [p, dataclasses.replace(p, policy=dataclasses.replace(p.policy, history="B")),
                   dataclasses.replace(p, edt=dataclasses.replace(p.edt, rank="iops"))]
    assert list(dict.fromkeys(df["reading"])) == ["default", "history_b", "edt_rank_iops"]
    row = df[df.claim == C.C1_MEAN].set_index("reading")
    assert row["verdict"].tolist() == [C.CLAIMS[1].verdict(2.0), C.CLAIMS[1].verdict(-1.0), C.CLAIMS[1].verdict(2.0)]
    assert row["flips"].tolist() == [False, True, False]
    assert not df[df.claim != C.C1_MEAN]["flips"].any()
    # given the default's values, only the readings run
    ran.clear()
    X.sensitivity(p, None, base_values={C.C1_MEAN: (2.0, "")})
    assert len(ran) == 2


# ----------------------------------------------------------------------------- the closed loop


@pytest.fixture(scope="module")
def small_scenario():
    kw = dict(tier_table=autotiering_tier_table(), n_disks=(2, 2, 2), n_epochs=9)
    return xr.concat([wl.scenario(jax.random.key(s), **kw) for s in (11, 12)], dim="seed").assign_coords(seed=[0, 1])


@pytest.fixture(scope="module")
def runs(small_scenario):
    return {name: registry.run(name, small_scenario, key=jax.random.key(5)) for name in ("AutoTiering", "IDT", "EDT")}


def test_closed_loop_shapes_cadence_and_physical_capacity(runs, small_scenario):
    size = small_scenario["size_bytes"]
    raw = (small_scenario["n_disks"] * small_scenario["disk_size_bytes"]).isel(seed=0).values
    for name, r in runs.items():
        assert contract.check_controller_result(r) is r
        assert r.attrs["policy"] == name
        assert r.sizes["epoch"] == 9 and r.sizes["tier"] == 3 and r.sizes["direction"] == 2
        # decisions at the end of monitor epochs 2, 5, 8 (migration epoch = 3 monitor epochs)
        np.testing.assert_array_equal(r["decided"].isel(seed=0).values, [e % 3 == 2 for e in range(9)])
        started = r["started"].values
        assert not started[:, [e for e in range(9) if e % 3 != 2]].any()
        # a VMDK is served by exactly one tier per epoch, and no tier ever holds more than its disks
        tier_of = r["tier_of"].values
        assert tier_of.min() >= 0 and tier_of.max() <= 2
        for k in range(3):
            held = ((tier_of == k) * size.values[:, None, :]).sum(axis=-1)
            assert np.all(held <= raw[k])
        # copies move at most the VMDK's size in all
        assert np.all(r["moved_bytes"].sum("epoch").values <= 2 * size.values + 1)
    assert runs["AutoTiering"]["started"].values.any()


def test_closed_loop_is_deterministic(runs, small_scenario):
    again = registry.run("AutoTiering", small_scenario, key=jax.random.key(5))
    assert again.identical(runs["AutoTiering"])
    other = registry.run("AutoTiering", small_scenario, key=jax.random.key(6))
    assert not np.array_equal(other["slope"].values, runs["AutoTiering"]["slope"].values)


def test_first_epochs_are_identical_across_policies(runs):
    """Same scenario, same initial placement and no migration before the first decision: every policy
    measures the same thing in epochs 0-2 (the shared mechanics)."""
    a, i, e = runs["AutoTiering"], runs["IDT"], runs["EDT"]
    for v in ("iops", "bytes_per_s"):
        np.testing.assert_allclose(a[v].isel(epoch=slice(0, 3)), i[v].isel(epoch=slice(0, 3)), rtol=1e-12)
        np.testing.assert_allclose(a[v].isel(epoch=slice(0, 3)), e[v].isel(epoch=slice(0, 3)), rtol=1e-12)


def test_autotiering_needs_a_key_and_matching_epochs(small_scenario):
    with pytest.raises(ValueError, match="key"):
        registry.get("AutoTiering").fn(at.AutoTieringParams(), small_scenario, None)
    with pytest.raises(ValueError, match="monitor_epoch_s"):
        registry.run("IDT", small_scenario, knobs={"monitor_epoch_s": 60.0, "migration_epoch_s": 180.0})
