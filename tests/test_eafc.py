"""EAFC (policies.eafc): Fig. 3 against a plain transcription, the closed loop's invariants, vanilla,
the master controller's knapsack against brute force, bad input."""

from __future__ import annotations

import itertools
import math

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tieringlab import params
from tieringlab.models import hybridstore as hys
from tieringlab.models.workloads import eafc as wl
from tieringlab.params import ParamsError
from tieringlab.policies import contract, registry
from tieringlab.policies import eafc as pe
from tieringlab.units import GB, HOUR, MS, MiB


def fig3(p: pe.EafcParams, latency_obs, ssd_util_avg, cache_sz_prev):
    """Fig. 3 of the EAFC paper, line by line (errors in seconds, Kp per second)."""
    latency_max = p.lat_max_s
    latency_min = p.lat_min_frac * latency_max
    if latency_max >= latency_obs >= latency_min:  # CASE 1
        cur, case = cache_sz_prev, 1
    elif latency_obs > latency_max:  # CASE 2
        case = 2
        if ssd_util_avg / cache_sz_prev >= p.t_util:
            error = latency_obs - latency_max
            ratio_inc = error * p.kp_inc
            if ratio_inc > p.t_inc:
                ratio_inc = p.t_inc
            cur = cache_sz_prev * (1 + ratio_inc)
        else:
            cur = cache_sz_prev
    else:  # CASE 3
        case = 3
        error = latency_min - latency_obs
        ratio_dec = error * p.kp_dec
        if ratio_dec > p.t_dec:
            ratio_dec = p.t_dec
        cur = cache_sz_prev * (1 - ratio_dec)
    return min(max(cur, p.p_floor), p.p_ceiling), case


@settings(max_examples=100, deadline=None)
@given(lat=st.one_of(st.floats(0, 0.05), st.sampled_from([0.005, 0.010, 0.0025])),
       util=st.floats(0.0, 0.9), prev=st.floats(1.0, 160.0),
       kp=st.floats(1.0, 200.0), t_inc=st.floats(0.05, 1.0), t_dec=st.floats(0.01, 0.5))
def test_decide_is_fig3(lat, util, prev, kp, t_inc, t_dec):
    p = pe.EafcParams(lat_max_s=10 * MS, kp_inc=kp, kp_dec=kp / 2, t_inc=t_inc, t_dec=t_dec)
    cur, case, gated = pe.eafc_decide(pe.ctrl_of(p), lat, util * prev * GB, prev * GB)
    ref, ref_case = fig3(p, lat, util * prev * GB, prev * GB)
    assert int(case) == ref_case
    assert float(cur) == pytest.approx(ref, rel=1e-12)
    assert bool(gated) == (ref_case == 2 and util < p.t_util)


def test_decide_boundaries_and_static():
    p = pe.EafcParams(lat_max_s=10 * MS)
    c = pe.ctrl_of(p)
    for lat, case in ((10 * MS, 1), (5 * MS, 1), (10 * MS + 1e-9, 2), (5 * MS - 1e-9, 3)):
        assert int(pe.eafc_decide(c, lat, 9 * GB, 10 * GB)[1]) == case
    # utilization exactly at T_util grows; just below does not
    assert float(pe.eafc_decide(c, 20 * MS, 8 * GB, 10 * GB)[0]) > 10 * GB
    assert float(pe.eafc_decide(c, 20 * MS, 7.99 * GB, 10 * GB)[0]) == 10 * GB
    s = pe.ctrl_of(pe.EafcParams(controller="static"))
    assert float(pe.eafc_decide(s, 1.0, 9 * GB, 10 * GB)[0]) == 10 * GB


def test_normalized_error_reading():
    p = pe.EafcParams(lat_max_s=4 * MS, error_mode="normalized", kp_inc=0.5, t_inc=1.0)
    cur, _, _ = pe.eafc_decide(pe.ctrl_of(p), 6 * MS, 9 * GB, 10 * GB)
    assert float(cur) == pytest.approx(10 * GB * (1 + 0.5 * 2 / 4))


@pytest.mark.parametrize("kw,msg", [
    (dict(lat_max_s=0.0), "lat_max_s .* must be > 0"),
    (dict(lat_max_s=-1 * MS), r"EafcParams\.lat_max_s: expected a number >= 0\.0 \(s\), got -0\.001"),
    (dict(kp_inc=0.0), r"kp_inc must be in \(0, 1000\]"),
    (dict(kp_dec=5000.0), r"EafcParams\.kp_dec: expected a number in \[0\.0, 1000\.0\] \(1/s\), got 5000\.0"),
    (dict(t_inc=1.5), r"EafcParams\.t_inc: expected a number in \[0\.0, 1\.0\], got 1\.5"),
    (dict(t_inc=0.0), r"t_inc \(T_inc\) must be in \(0, 1\]"),
    (dict(t_dec=1.0), r"t_dec \(T_dec\) must be in \(0, 1\)"),
    (dict(t_util=0.9), r"t_util \(T_util\) must be in \(0, util_cap = 0.9\)"),
    (dict(cwnd_s=2.0), "cwnd_s must be at least the sampling period sample_s = 5.0 s"),
    (dict(cwnd_s=601.0), "whole number of samples"),
    (dict(lat_min_frac=1.5), r"EafcParams\.lat_min_frac: expected a number in \[0\.0, 1\.0\], got 1\.5"),
    (dict(lat_min_frac=0.0), r"lat_min_frac must be in \(0, 1\]"),
    (dict(p_init=0.5 * GB), "p_floor <= p_init <= p_ceiling"),
    (dict(percentile=0.0), r"percentile must be in \(0, 100\]"),
    (dict(controller="pid"), "EafcParams.controller: expected one of 'eafc', 'static', got 'pid'"),
    (dict(kp_inc=float("nan")), r"EafcParams\.kp_inc: expected a number in \[0\.0, 1000\.0\] \(1/s\), got nan"),
    (dict(p_ceiling=float("inf")), r"EafcParams\.p_ceiling: expected a number >= 0\.0 \(bytes\), got inf"),
])
def test_bad_params(kw, msg):
    with pytest.raises(ValueError, match=msg):
        pe.EafcParams(**kw)


def test_master_bad_params():
    with pytest.raises(ValueError, match=r"lat_max_s\[1\] .* must be > 0"):
        pe.MasterParams(lat_max_s=(5 * MS, 0.0), priority=(1.0, 1.0))
    with pytest.raises(ValueError, match="one entry per workload"):
        pe.MasterParams(lat_max_s=(5 * MS,), priority=(1.0, 2.0))
    with pytest.raises(ValueError, match="vanilla|cwnd_s must be at least"):
        pe.VanillaParams(cwnd_s=1.0)


def test_registered():
    assert {"EAFC", "vanilla", "EAFC-master", "EAFC-proportional", "static-partition"} <= set(
        registry.names("controller"))
    assert registry.get("naive").name == "vanilla"
    assert registry.make_params("EAFC-master").arbitration == "knapsack"


# ----------------------------------------------------------------------------------- knapsack


def brute_arbitrate(req, need, floor, prio, ssd):
    if sum(req) <= ssd:
        return list(req), [True] * len(req)
    best = None
    for x in itertools.product((0, 1), repeat=len(req)):
        w = sum(need[i] if x[i] else floor[i] for i in range(len(req)))
        if w <= ssd:
            v = sum(prio[i] for i in range(len(req)) if x[i])
            if best is None or v > best[0] or (v == best[0] and w < best[1]):
                best = (v, w, x)
    return best


@settings(max_examples=30, deadline=None)
@given(data=st.data(), n=st.integers(1, 4))
def test_knapsack_is_optimal(data, n):
    req = np.array(data.draw(st.lists(st.floats(1, 60), min_size=n, max_size=n)))
    need = np.array(data.draw(st.lists(st.one_of(st.floats(1, 60), st.just(math.inf)), min_size=n, max_size=n)))
    prio = np.array(data.draw(st.lists(st.sampled_from([1.0, 2.0, 4.0]), min_size=n, max_size=n)))
    floor = np.ones(n)
    ssd = data.draw(st.floats(n, 120))
    g, win = pe.arbitrate(req, need, floor, prio, ssd, pe._subsets(n), True)
    g, win = np.asarray(g), np.asarray(win)
    ref = brute_arbitrate(req.tolist(), need.tolist(), floor.tolist(), prio.tolist(), ssd)
    if req.sum() <= ssd:
        np.testing.assert_allclose(g, req)
        return
    v, w, x = ref
    assert float((prio * win).sum()) == pytest.approx(v)
    assert g.sum() <= ssd * (1 + 1e-12)
    assert np.all(g[win] >= need[win] - 1e-9) and np.all(g >= floor - 1e-12)
    gp, _ = pe.arbitrate(req, need, floor, prio, ssd, pe._subsets(n), False)
    np.testing.assert_allclose(np.asarray(gp), np.maximum(req * ssd / req.sum(), floor))


# ------------------------------------------------------------------------------- closed loop runs


def _obs(p, h, key=0, cwnd=600.0):
    n = []
    for ph in p.phases():
        rpa = p.unit_bytes / (p.working_set_bytes / p.n_files) if isinstance(p, wl.FileBenchParams) \
            else p.unit_bytes / p.read_bytes
        n.append(int(math.ceil(hys.max_ops_per_s(ph, h) * ph.read_frac * ph.duration_s / rpa)) + 1)
    gen = wl.filebench_webserver if isinstance(p, wl.FileBenchParams) else wl.specsfs2008
    return hys.observations(gen(jax.random.key(key), p, n), h, cwnd)


@pytest.fixture(scope="module")
def fb_obs():
    h = hys.HybridStoreParams(n_sizes=65, max_blocks=2048)
    p = wl.FileBenchParams(working_set_bytes=8 * GB, n_files=320_000, duration_s=3 * HOUR, unit_bytes=8 * MiB)
    return _obs(p, h)


def test_vanilla_caches_the_working_set(fb_obs):
    """Vanilla (Sec. V.A): after warm-up the whole working set is in the SSD and the latency is the
    all-SSD-hit latency of the queueing model."""
    r = registry.run("vanilla", fb_obs, key=jax.random.key(1))
    used = float(r["used_bytes"].isel(epoch=-1, sample=-1))
    W = int(fb_obs["n_units"]) * int(fb_obs["unit_bytes"])
    assert used == pytest.approx(W, rel=1e-9)
    _, lat = hys.op_response(hys.device_of(hys.HybridStoreParams()), 0.0, 1.0, 32, 0.5 * MS, 1.0, 0.0, 32)
    assert float(r["latency_model_s"].isel(epoch=-1).mean()) == pytest.approx(float(lat), rel=1e-6)


def test_eafc_loop_invariants_and_determinism(fb_obs):
    knobs = {"lat_max_s": 10 * MS, "p_init": 2 * GB}
    a = registry.run("EAFC", fb_obs, knobs=knobs, key=jax.random.key(3))
    b = registry.run("EAFC", fb_obs, knobs=knobs, key=jax.random.key(3))
    assert a.identical(b)
    P = a["partition_bytes"]
    assert float(P.isel(epoch=0)) == 2 * GB
    assert float((a["used_bytes"] / P).max()) <= 0.9 + 1e-12  # C19, the eviction engine
    # every window's decision is Fig. 3 of that window's feedback
    p = registry.make_params("EAFC", knobs)
    for e in range(a.sizes["epoch"]):
        ref, case = fig3(p, float(a["latency_obs_s"][e]), float(a["util_avg_bytes"][e]), float(P[e]))
        assert float(a["partition_next_bytes"][e]) == pytest.approx(ref, rel=1e-12)
        assert int(a["case"][e]) == case
    np.testing.assert_allclose(P.values[1:], a["partition_next_bytes"].values[:-1])
    # the observed percentile is of the window's 5 s samples
    np.testing.assert_allclose(a["latency_obs_s"].values, np.percentile(a["latency_s"].values, 75, axis=1))
    # warm-up above target, then the cache is grown
    assert float(a["latency_mean_s"][0]) > 10 * MS and float(P.max()) > 2 * GB


def test_static_partition_keeps_its_size(fb_obs):
    r = registry.run("static-partition", fb_obs, knobs={"p_init": 4 * GB}, key=jax.random.key(3))
    assert np.all(r["partition_bytes"].values == 4 * GB)
    assert float(r["used_bytes"].max()) <= 0.9 * 4 * GB


def test_controller_results_follow_the_contract(fb_obs):
    """Every EAFC-module system's result has the controller shape: dim epoch, attrs policy and source."""
    for name, knobs in (("EAFC", {}), ("static-partition", {"p_init": 4 * GB}), ("vanilla", {})):
        r = registry.run(name, fb_obs, knobs=knobs, key=jax.random.key(3))
        assert contract.check_controller_result(r) is r
        assert r.attrs["policy"] == name and r.attrs["source"].startswith("EAFC paper")


def test_unknown_knob_names_the_allowed_fields():
    """Each system takes exactly its own parameters: a knob of another system (or a typo) is an error naming
    the fields there are."""
    with pytest.raises(ParamsError, match=r"EAFC: unknown knob 'kp'; EafcParams has: controller, cwnd_s, sample_s"):
        registry.make_params("EAFC", {"kp": 1.0})
    with pytest.raises(ParamsError, match=r"vanilla: unknown knob 'p_init'; VanillaParams has: cwnd_s, sample_s, "
                                          r"ssd_bytes"):
        registry.make_params("vanilla", {"p_init": 1.0 * GB})
    with pytest.raises(ParamsError, match=r"EAFC-master: unknown knob 'kp_inc'; MasterParams has: eafc, lat_max_s"):
        registry.make_params("EAFC-master", {"kp_inc": 1.0})


def test_section_embeds_the_policy_and_the_store():
    """params.yaml's eafc section sets EafcParams and HybridStoreParams fields directly (SI units); an unknown
    key at any level, or a former top-level knob, is an error naming it and the allowed names."""
    import tieringlab.experiments.eafc as X

    p = params.validate_section("eafc", {"policy": {"kp_inc": 10.0, "p_init": 5 * GB}, "store": {"n_sizes": 65}})
    assert p.policy == pe.EafcParams(kp_inc=10.0, p_init=5 * GB) and p.store == hys.HybridStoreParams(n_sizes=65)
    assert X.eafc_params(p, 3 * MS, t_dec=0.2) == pe.EafcParams(kp_inc=10.0, p_init=5 * GB, lat_max_s=3 * MS,
                                                                t_dec=0.2)
    assert X.vanilla_params(p) == pe.VanillaParams(cwnd_s=600.0, sample_s=5.0, ssd_bytes=160 * GB)
    with pytest.raises(ParamsError, match=r"eafc\.policy\.kpinc: unknown parameter; allowed: controller, cwnd_s, "
                                          r"error_mode, kp_dec, kp_inc"):
        params.validate_section("eafc", {"policy": {"kpinc": 10.0}})
    with pytest.raises(ParamsError, match=r"eafc\.kp_inc: unknown parameter; allowed: .*policy.*store"):
        params.validate_section("eafc", {"kp_inc": 10.0})
    with pytest.raises(ParamsError, match=r"eafc\.store\.ssd_gb: unknown parameter; allowed: hdd_write_s, k_hdd"):
        params.validate_section("eafc", {"store": {"ssd_gb": 100.0}})
    with pytest.raises(ParamsError, match=r"notebook parameters: eafc\.p_init_gb: unknown parameter; "
                                          r"allowed: .*policy"):
        params.check("eafc", {"p_init_gb": 10.0})
    with pytest.raises(ParamsError, match=r"eafc\.policy\.p_ceiling \(1\.6e\+11 bytes\) must be <= store\.ssd_bytes"):
        params.validate_section("eafc", {"store": {"ssd_bytes": 100 * GB}})
    with pytest.raises(ParamsError, match=r"eafc\.policy\.lat_max_s is set per run from fb_targets_ms"):
        params.validate_section("eafc", {"policy": {"lat_max_s": 5 * MS}})


def test_readings_go_through_tieringlab_readings():
    """The readings are :class:`tieringlab.readings.Reading` s over the section's parameters; their verdicts and
    flips are the claims' own checks (claim.verdict) under each, against the default's."""
    import tieringlab.experiments.eafc as X
    from tieringlab import readings as rdg
    from tieringlab.claims import eafc as CE
    from tieringlab.claims import registry as claims

    base = params.validate_section("eafc", {})
    assert all(isinstance(r, rdg.Reading) for r in X.READINGS) and X.READINGS[0].is_default
    assert len({r.name for r in X.READINGS}) == len(X.READINGS)
    for r in X.READINGS[1:]:
        q = r.apply(base)
        assert q != base and type(q) is type(base)
    assert X.READINGS[2].apply(base).policy.error_mode == "normalized"
    assert X.READINGS[3].apply(base).store.ram_bytes == 14 * GB
    # a synthetic readings table: the second reading moves Fig. 4a's partition far from the paper's 39 GB
    rows = []
    for label, part in (("default", 39.0), ("other", 80.0)):
        for t in (10.0, 5.0):
            rows.append({"reading": label, "target_ms": t, "partition_post_gb": part if t == 10.0 else 41.0,
                         "saving_pct": 11.0 if t == 10.0 else 6.0, "conformance_post_min": 1.0})
    import pandas as pd

    v = X.reading_verdicts(pd.DataFrame(rows)).set_index("reading")
    reg = claims()
    assert v.loc["default", CE.FIG4A_PARTITION] == reg[CE.FIG4A_PARTITION].verdict(39.0)
    assert v.loc["other", CE.FIG4A_PARTITION] == reg[CE.FIG4A_PARTITION].verdict(80.0)
    assert reg[CE.FIG4A_PARTITION].verdict(39.0) != reg[CE.FIG4A_PARTITION].verdict(80.0)
    assert v.loc["default", "flips_against_default"] == "none"
    assert v.loc["other", "flips_against_default"] == CE.FIG4A_PARTITION


def test_cwnd_mismatch_is_an_error(fb_obs):
    with pytest.raises(ValueError, match="cwnd_s = 300.0 s but the observations were built for cwnd_s = 600.0"):
        registry.run("EAFC", fb_obs, knobs={"cwnd_s": 300.0}, key=jax.random.key(0))


def test_master_respects_the_ssd_and_priorities(fb_obs):
    """Two copies of one workload (the module's FileBench observations and a second trace of the same
    parameters), both asking for more than half of a small SSD: the knapsack satisfies the higher priority one;
    the sum of partitions never exceeds the SSD."""
    h = hys.HybridStoreParams(n_sizes=65, max_blocks=2048)
    p = wl.FileBenchParams(working_set_bytes=8 * GB, n_files=320_000, duration_s=3 * HOUR, unit_bytes=8 * MiB)
    o = hys.stack_observations([fb_obs, _obs(p, h, 2)], names=["gold", "silver"])
    mp = pe.MasterParams(eafc=pe.EafcParams(p_init=2 * GB), lat_max_s=(5 * MS, 5 * MS), priority=(2.0, 1.0),
                         ssd_bytes=11 * GB)
    r = registry.run("EAFC-master", o, params=mp, key=jax.random.key(4))
    contract.check_controller_result(r)
    total = r["partition_bytes"].sum("workload")
    assert float(total.max()) <= 11 * GB * (1 + 1e-9)
    late = r.isel(epoch=slice(-6, None))
    assert float(late["latency_mean_s"].sel(workload="gold").mean()) < float(
        late["latency_mean_s"].sel(workload="silver").mean())
    assert float(late["partition_bytes"].sel(workload="gold").mean()) > float(
        late["partition_bytes"].sel(workload="silver").mean())


def test_replications_run_vmapped_equal_single_runs(fb_obs):
    """Observations stacked along ``replication`` run in one vmapped call; each replication equals the
    single run with its own key (jax.random.split of the call's key)."""
    o2 = hys.stack_observations([fb_obs, fb_obs], dim="replication")
    knobs = {"lat_max_s": 5 * MS, "p_init": 2 * GB}
    both = registry.run("EAFC", o2, knobs=knobs, key=jax.random.key(11))
    k = jax.random.split(jax.random.key(11), 2)
    for r in range(2):
        one = registry.run("EAFC", fb_obs, knobs=knobs, key=k[r])
        np.testing.assert_allclose(both["partition_bytes"].isel(replication=r).values, one["partition_bytes"].values,
                                   rtol=1e-12)
        np.testing.assert_allclose(both["latency_s"].isel(replication=r).values, one["latency_s"].values, rtol=1e-9)


def test_calibration_anchor():
    """The one anchor: the calibrated SSD service time gives the all-SSD-hit FileBench read latency asked."""
    h = hys.HybridStoreParams()
    ph = wl.FileBenchParams().phases()[0]
    s = hys.calibrate_s_ssd(h, ph, 1 * MS)
    dev = hys.device_of(h)._replace(s_ssd=np.float64(s))
    _, lat = hys.op_response(dev, 0.0, 1.0, ph.population, ph.think_s, 1.0, 0.0, ph.population)
    assert float(lat) == pytest.approx(1 * MS, rel=1e-9)
    with pytest.raises(ValueError, match="latency_s must exceed the RAM hit time"):
        hys.calibrate_s_ssd(h, ph, 0.01 * MS)
