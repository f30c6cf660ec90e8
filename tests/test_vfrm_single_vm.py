"""tieringlab.experiments.vfrm_single_vm (notebook 02: vFRM paper Fig. 6/7) against plain references.

References written here: an OrderedDict LRU over 4 KB pages (request hit iff all its pages hit), the
Table 3 latencies typed in from the paper for the Flash-update cost, and hand-computed ratios.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tieringlab import params, paths
from tieringlab.claims import registry as claims_registry
from tieringlab.experiments import vfrm_single_vm as X
from tieringlab.policies import registry
from tieringlab.traces import make_dataset

MB = 1 << 20
KB = 1 << 10


def small_params(**kw) -> X.VfrmSingleVmParams:
    base = dict(fig6_traces=("mds_0",), include_cloudphysics=False, policies=("vFRM", "LRU"),
                flash_mb=(1.0, 2.0, 4.0, 8.0), cost_flash_mb=8.0)
    base.update(kw)
    return params.validate_section("vfrm_single_vm", base, source="test")


def random_trace(seed, n=400, span_mb=24, duration_s=3600.0):
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0, duration_s, n))
    hot = rng.random(n) < 0.7
    off = np.where(hot, rng.integers(0, 2 * MB, n), rng.integers(0, span_mb * MB, n)) // 512 * 512
    size = rng.choice([4 * KB, 8 * KB, 64 * KB], n)
    w = rng.random(n) < 0.4
    return make_dataset(t, off.astype(np.int64), size.astype(np.int64), w, name="rand", source="test")


def ref_lru_request_hits(ds, cap_pages, with_dirty=False):
    """Plain OrderedDict LRU over 4 KB pages; returns (request hits, dirty write-backs[, pages dirty at the end])."""
    cache, dirty, hits, wb = OrderedDict(), set(), 0, 0
    for o, s, w in zip(ds.offset.values, ds["size"].values, ds.is_write.values):
        all_hit = True
        for pg in range(o // 4096, (o + s - 1) // 4096 + 1):
            if pg in cache:
                cache.move_to_end(pg)
            else:
                all_hit = False
                if len(cache) >= cap_pages:
                    v, _ = cache.popitem(last=False)
                    wb += v in dirty
                    dirty.discard(v)
                cache[pg] = None
            if w:
                dirty.add(pg)
        hits += all_hit
    return (hits, wb, len(dirty)) if with_dirty else (hits, wb)


# -------------------------------------------------------------------------------------- params


def test_paper_defaults():
    p = X.VfrmSingleVmParams()
    assert p.fig6_traces == ("mds_0", "src1_2", "stg_0", "usr_0", "stg_1", "usr_2", "web_2", "src2_1")
    assert p.flash_mb[0] == 100 and p.flash_mb[-1] == 4096 and p.cost_flash_mb == 4096
    assert (p.policy.bin_bytes, p.policy.epoch_s, p.policy.n_epochs, p.policy.lam) == (1 << 20, 300.0, 8, 1.0)
    assert p.policy == registry.make_params("vFRM") and p.policy.idle_bins == "keep"
    assert p.policy.io_pricing == "random" and set(p.idle_rules) == {"keep", "recency", "disk"}
    assert p.caches == registry.make_params("LRU", {"threads": 2})  # the page caches: their own params
    assert 300.0 in p.epoch_sweep_s and min(p.epoch_sweep_s) < 300.0
    yaml_p = params.load(paths.repo_root() / "params.yaml")["vfrm_single_vm"]  # validated, cross-field checks too
    assert yaml_p.fig6_traces == p.fig6_traces and yaml_p.flash_mb == p.flash_mb
    assert (yaml_p.policy.idle_bins, yaml_p.policy.io_pricing, set(yaml_p.idle_rules)) == ("keep", "random",
                                                                                           set(p.idle_rules))
    assert yaml_p.policy == p.policy and yaml_p.caches == p.caches  # paper scale: the same floats as the defaults


@pytest.mark.parametrize("kw, match", [
    (dict(policies=("vFRM", "ARC")), "must include 'LRU'"),
    (dict(policies=("LRU", "ARC")), "must include 'vFRM'"),
    (dict(cost_flash_mb=3.0), "cost_flash_mb"),
    (dict(flash_mb=(1.0, 1.0, 8.0)), "flash_mb has duplicates"),
    (dict(policy={"bin_bytes": 3 * 128 * KB + 1}), "vfrm_single_vm.policy.bin_bytes"),
    (dict(policy={"n_epochs": 7}), "even"),
    (dict(policy={"idle_bins": "disk"}, idle_rules=("keep", "recency")), "idle_rules"),
    (dict(policy={"epoch_s": 120.0}), "epoch_sweep_s must list distinct epochs including policy.epoch_s"),
    (dict(epoch_sweep_s=(60.0, 150.0)), "epoch_sweep_s"),
])
def test_bad_cross_field_params_raise(kw, match):
    with pytest.raises(params.ParamsError, match=match):
        small_params(**kw)


@pytest.mark.parametrize("key, value", [("flash_mb", [0.5]), ("policies", ["FIFO"]), ("fig6_traces", ["nope"]),
                                        ("catch_up_pct", -1.0), ("policy.lam", 0.0), ("policy.idle_bins", "ssd"),
                                        ("policy.io_pricing", "burst"), ("idle_rules", ["keep", "lru"]),
                                        ("caches.threads", 0), ("caches.engine", "cuda")])
def test_bad_field_values_raise_naming_the_field(key, value):
    head, _, leaf = key.partition(".")
    with pytest.raises(params.ParamsError, match=f"vfrm_single_vm.{key}"):
        small_params(**({head: {leaf: value}} if leaf else {key: value}))


@pytest.mark.parametrize("key, allowed", [
    ("threads", "catch_up_pct, cloudphysics_max_requests"),  # a page-cache knob at the top: it is caches.threads
    ("bin_bytes", "caches, catch_up_pct"),                    # a vFRM knob at the top: it is policy.bin_bytes
    ("policy.threads", "bin_bytes, cost_model, epoch_s, idle_bins"),
    ("caches.idle_bins", "cost_model, engine, io_pricing, page_bytes, threads"),
])
def test_unknown_key_or_knob_names_it_and_the_allowed_names(key, allowed):
    """Issue 27: an unknown parameter of the section, of its vFRM policy or of its page caches is an error naming
    it and every allowed name (it used to reach the policies as a shared knob, or be ignored)."""
    head, _, leaf = key.partition(".")
    with pytest.raises(params.ParamsError, match=rf"vfrm_single_vm.{key}: unknown parameter; allowed: .*{allowed}"):
        small_params(**({head: {leaf: 1}} if leaf else {key: 1}))
    with pytest.raises(params.ParamsError, match=r"unknown parameter; allowed: .*policy"):
        params.check("vfrm_single_vm", {"threads": 2, "n_history_epochs": 8})  # a stale parameters cell
    with pytest.raises(params.ParamsError, match=r"vFRM: unknown knob 'threads'; VfrmParams has: bin_bytes"):
        registry.make_params("vFRM", {"threads": 2})


def test_the_readings_go_through_tieringlab_readings():
    """The sweep's readings are tieringlab.readings Readings (idle rule x pricing, first axis slowest, the primary
    one the default) and the ledger ids are readings.claim_id of the ledger's own readings."""
    from tieringlab import readings
    from tieringlab.claims import vfrm as C

    p = small_params(policy={"idle_bins": "recency"}, idle_rules=("keep", "recency"))
    rs = X.readings(p)
    # idle rule x pricing x end-of-trace flush x hit pricing (issue 34), first axis slowest
    assert [r.name for r in rs][:4] == ["idle_keep", "idle_keep.hits_4k", "idle_keep.flush_at_end",
                                        "idle_keep.flush_at_end.hits_4k"]
    assert len(rs) == 2 * 2 * 2 * 2 and [r.name for r in rs][8] == "default"
    assert all(isinstance(r, readings.Reading) for r in rs)
    assert rs[4].apply(p).policy == dataclasses.replace(p.policy, idle_bins="keep", io_pricing="sequential_runs")
    assert rs[3].apply(p) == dataclasses.replace(p, policy=dataclasses.replace(p.policy, idle_bins="keep"),
                                                 end_flush="flush", hit_pricing="page")
    assert rs[8].apply(p) == p  # the primary reading sets nothing
    # the ledger's reading names follow its own default (keep, random), whatever the run's primary reading
    assert C.reading_name() == "default"
    assert C.reading_name("recency", "sequential_runs") == "idle_recency.sequential_runs"
    assert [C.reading_name(i, pr, f, h) for i in C.IDLE_READINGS for pr in C.PRICINGS for f in C.FLUSHES
            for h in C.HIT_PRICINGS] == [r.name for r in readings.grid(C.idle_axis(), C.pricing_axis(),
                                                                        C.flush_axis(), C.hit_axis())]
    assert C.reading_name("keep", "random", "flush", twin="reads_10") == "reads_10.flush_at_end"
    with pytest.raises(ValueError, match="unknown twin reading"):
        C.reading_name(twin="reads_50")
    with pytest.raises(ValueError, match="unknown reading"):
        C.reading_name("lru")
    # one row per paper claim: no reading-suffixed ids are left
    assert not any(".idle_" in c.id or c.id.endswith(".sequential_runs") for c in C.CLAIMS)


def test_flash_bytes_scale_with_the_twin():
    p = small_params(flash_mb=(100.0, 4096.0), cost_flash_mb=4096.0)
    assert X.flash_bytes(p).tolist() == [100 * MB, 4096 * MB]
    assert X.flash_bytes(p, 0.25).tolist() == [25 * MB, 1024 * MB]
    with pytest.raises(ValueError, match="scale"):
        X.flash_bytes(p, 0.0)


# -------------------------------------------------------------------------------------- one trace


@pytest.fixture(scope="module")
def one():
    ds = random_trace(1)
    p = small_params(policies=("vFRM", "LRU", "ARC", "CAR"))
    return ds, p, X.run_trace(p, ds)


def test_run_trace_shapes_and_lru_against_plain_reference(one):
    ds, p, r = one
    assert r.hit_ratio.dims == ("policy", "idle_bins", "flash_mb")
    assert set(r.io_cost.dims) == {"policy", "idle_bins", "io_pricing", "end_flush", "hit_pricing", "flash_mb"}
    assert r.idle_bins.values.tolist() == list(p.idle_rules)
    for pol in ("LRU", "ARC", "CAR"):  # the page caches do not depend on vFRM's idle-bin rule
        assert (r.hits.sel(policy=pol) == r.hits.sel(policy=pol, idle_bins=p.idle_rules[0])).all()
    # sequential_runs never prices above random (Table 3's sequential rows are the cheaper ones)
    assert (r.io_cost.sel(io_pricing="sequential_runs") <= r.io_cost.sel(io_pricing="random") * (1 + 1e-12)).all()
    r = r.sel(idle_bins=p.policy.idle_bins, io_pricing=p.policy.io_pricing, end_flush="none", hit_pricing="paper")
    assert r.policy.values.tolist() == ["vFRM", "LRU", "ARC", "CAR"]
    assert r.flash_mb.values.tolist() == [1.0, 2.0, 4.0, 8.0]
    assert r.flash_bytes.values.tolist() == [MB, 2 * MB, 4 * MB, 8 * MB]
    assert (r.requests == ds.sizes["request"]).all()
    for k, fm in enumerate(p.flash_mb):
        hits, wb = ref_lru_request_hits(ds, int(fm * MB) // 4096)
        assert int(r.hits.sel(policy="LRU").values[k]) == hits
        # Table 2(b): a dirty eviction = SSD read + MD write at the 4 KB random latencies (Table 3: 135 + 3922 us)
        assert float(r.update_cost.sel(policy="LRU").values[k]) == pytest.approx(wb * (135 + 3922) * 1e-6, rel=1e-12)
    np.testing.assert_allclose(r.hit_ratio, r.hits / r.requests)
    assert (r.io_cost >= r.update_cost).all() and (r.update_cost >= 0).all()


def test_vfrm_update_cost_is_eight_sequential_128k_ios_per_bin_moved(one):
    ds, p, _ = one
    from tieringlab.policies.vfrm import vfrm

    v = vfrm(ds, X.flash_bytes(p))
    r = registry.run("vFRM", ds, X.flash_bytes(p), params=p.policy)
    # Table 3, 128 KB sequential: SSD read 558, SSD write 1242, MD read 1070, MD write 1104 us
    want = 8e-6 * (v.move_ins.values * (1070 + 1242) + v.dirty_move_outs.values * (558 + 1104))
    np.testing.assert_allclose(r.update_cost.values, want, rtol=1e-12)
    np.testing.assert_array_equal(r.hits.values, v.hits.values)


@pytest.mark.parametrize("idle_bins", ["keep", "recency", "disk"])
def test_section_passes_idle_bins_to_vfrm(idle_bins):
    from tieringlab.policies.vfrm import VfrmParams, vfrm

    # bin 0 read at t = 0 and again 12 epochs (1 h) later: moved in at epoch 1, idle (T = 0) from epoch 9,
    # kept in Flash under "keep" (it keeps its place) and "recency" (it fills the room), not under "disk"
    ds = make_dataset(np.array([0.0, 3600.0]), np.array([0, 0]), np.array([4096, 4096]), np.array([False, False]),
                      name="idle", source="test")
    p = small_params(policy={"idle_bins": idle_bins})
    r = registry.run("vFRM", ds, X.flash_bytes(p), params=p.policy)
    want = vfrm(ds, X.flash_bytes(p), VfrmParams(idle_bins=idle_bins))
    assert r.hits.values.tolist() == want.hits.values.tolist()
    other = vfrm(ds, X.flash_bytes(p), VfrmParams(idle_bins="recency" if idle_bins == "disk" else "disk"))
    assert r.hits.values.tolist() == ([0] * 4 if idle_bins == "disk" else [1] * 4)
    assert other.hits.values.tolist() != r.hits.values.tolist()


def test_lru_hit_ratio_never_falls_as_flash_grows(one):
    _, _, r = one
    assert np.all(np.diff(r.hit_ratio.sel(policy="LRU").values) >= 0)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), sizes=st.lists(st.integers(1, 32), min_size=2, max_size=5, unique=True))
def test_lru_inclusion_property_random_traces(seed, sizes):
    sizes = sorted(float(s) for s in sizes)
    p = small_params(flash_mb=tuple(sizes), cost_flash_mb=sizes[-1])
    r = registry.run("LRU", random_trace(seed, n=150), X.flash_bytes(p), params=p.caches)
    assert np.all(np.diff(r.hits.values) >= 0)


def test_bad_policy_raises(one):
    ds, p, _ = one
    with pytest.raises(KeyError, match="unknown policy 'FIFO'; known: ARA, ARA_OPT"):
        registry.run("FIFO", ds, X.flash_bytes(p), params=p.caches)


# -------------------------------------------------------------------------------------- tables


def fake_sweep(one, names=("mds_0", "stg_1")):
    """Two 'traces' from one run (the second with its costs and hits changed by hand)."""
    import xarray as xr

    _, p, r = one
    r = r.sel(idle_bins=p.policy.idle_bins, io_pricing=p.policy.io_pricing, end_flush="none", hit_pricing="paper",
              drop=True)  # one reading (X.reading)
    r2 = r.copy(deep=True)
    r2["io_cost"] = r2.io_cost * xr.DataArray([0.5, 2.0, 1.0, 3.0], dims="policy", coords={"policy": r.policy})
    res = xr.concat([r, r2], dim="trace").assign_coords(trace=np.asarray(names), scale=("trace", [1.0, 0.5]),
                                                       source=("trace", np.asarray(["twin", "twin"])))
    res.attrs.update(cost_flash_mb=p.cost_flash_mb, catch_up_pct=p.catch_up_pct, idle_bins=p.policy.idle_bins,
                     io_pricing=p.policy.io_pricing, n_history_epochs=p.policy.n_epochs, bin_bytes=p.policy.bin_bytes)
    return res


def test_io_cost_table_relative_to_lru(one):
    res = fake_sweep(one)
    t = X.io_cost_table(res)
    assert t.trace.tolist() == ["mds_0", "stg_1"] and len(t) == 2
    assert np.allclose(t["LRU_rel_lru_pct"], 100.0)
    c = res.io_cost.sel(flash_mb=8.0)
    assert t["vFRM_rel_lru_pct"][0] == pytest.approx(100 * float(c.sel(trace="mds_0", policy="vFRM") /
                                                                 c.sel(trace="mds_0", policy="LRU")))
    # stg_1: vFRM x 0.5 and LRU x 2 -> a quarter of mds_0's ratio
    assert t["vFRM_rel_lru_pct"][1] == pytest.approx(t["vFRM_rel_lru_pct"][0] / 4)
    assert t["CAR_rel_lru_pct"][1] == pytest.approx(t["CAR_rel_lru_pct"][0] * 3 / 2)
    # paper scale = as replayed / scale
    assert t["LRU_io_cost_paper_scale_s"][1] == pytest.approx(t["LRU_io_cost_s"][1] / 0.5)
    assert t["paper_vfrm_rel_lru_pct"][0] == 31.87 and np.isnan(t["paper_vfrm_rel_lru_pct"][1])
    with pytest.raises(ValueError, match="not in the sweep"):
        X.io_cost_table(res, 3.0)
    with pytest.raises(ValueError, match="no LRU"):
        X.io_cost_table(res.sel(policy=["vFRM", "ARC"]))


def test_hit_ratio_table_is_tidy(one):
    res = fake_sweep(one)
    t = X.hit_ratio_table(res)
    assert list(t.columns) == ["trace", "policy", "flash_mb", "hit_ratio_pct"]
    assert len(t) == 2 * 4 * 4
    row = t[(t.trace == "mds_0") & (t.policy == "LRU") & (t.flash_mb == 2.0)]
    assert float(row.hit_ratio_pct.iloc[0]) == pytest.approx(100 * float(res.hit_ratio.sel(
        trace="mds_0", policy="LRU", flash_mb=2.0)))


def test_fig6_summary_and_claim_values_by_hand(one):
    res = fake_sweep(one)
    hr = res.hit_ratio.copy()
    # set hit ratios by hand: mds_0 vFRM catches up (gap 5 -> 0.5), stg_1 does not (gap 10 -> 20)
    vals = {("mds_0", "vFRM"): [0.5, 0.6, 0.7, 0.795], ("mds_0", "LRU"): [0.55, 0.7, 0.75, 0.8],
            ("stg_1", "vFRM"): [0.1, 0.1, 0.1, 0.1], ("stg_1", "CAR"): [0.2, 0.2, 0.3, 0.3]}
    hr[:] = 0.0
    for (t, pol), v in vals.items():
        hr.loc[dict(trace=t, policy=pol)] = v
    res["hit_ratio"] = hr
    s = X.fig6_summary(res, 1.0).set_index("trace")
    assert s.loc["mds_0", "gap_small_pts"] == pytest.approx(5.0)
    assert s.loc["mds_0", "gap_large_pts"] == pytest.approx(0.5)
    assert bool(s.loc["mds_0", "catches_up"]) and bool(s.loc["mds_0", "gap_narrows"])
    assert s.loc["stg_1", "gap_large_pts"] == pytest.approx(20.0)
    assert not s.loc["stg_1", "catches_up"] and not s.loc["stg_1", "gap_narrows"]
    assert not X.fig6_summary(res, 0.4).set_index("trace").loc["mds_0", "catches_up"]

    by = X.claim_values(res)
    assert set(by) == {"default"}  # a plain one-reading sweep gives the default reading only
    vals = by["default"]
    known = claims_registry()
    for cid, (_value, note) in vals.items():
        assert known[cid].source == "02_vfrm_single_vm" and isinstance(note, str)
    assert vals["vfrm.fig6.catches_up.most_traces"][0] is False  # 1 of 2 is not "most"
    assert vals["vfrm.fig6.gap_narrows.most_traces"][0] is False
    costs = X.io_cost_table(res).set_index("trace")
    assert vals["vfrm.fig7.mds0_cost_rel_lru"][0] == pytest.approx(costs.loc["mds_0", "vFRM_rel_lru_pct"])
    assert vals["vfrm.fig7.cost_fraction_of_lru.every_trace"][0] == pytest.approx(costs["vFRM_rel_lru_pct"].max())
    # "most ... order of magnitude": more than half of the traces at <= 10 % of LRU's cost
    k = int((costs["vFRM_rel_lru_pct"] <= 10.0).sum())
    assert vals["vfrm.fig7.order_of_magnitude.most_traces"][0] is (k > 1)
    assert str(k) + " of 2 traces" in vals["vfrm.fig7.order_of_magnitude.most_traces"][1]
    assert "vfrm.fig7.cost_fraction_of_lru.cloudphysics" not in vals
    # Sec. 4.3: 28 bytes per 1 MB bin (8 x 2-byte counts + 8 + 4 bytes), by hand
    assert vals["vfrm.sec43.heat_map_overhead_pct"][0] == pytest.approx(100 * 28 / MB)


def test_every_single_vm_claim_is_produced_by_claim_values():
    ours = {cid for cid, c in claims_registry().items() if c.source == "02_vfrm_single_vm"}
    import tieringlab.claims.vfrm as cv

    assert ours == {c.id for c in cv.CLAIMS}
    # 3 Fig. 6 rows + 5 Fig. 7 rows (each once: its readings are recorded on it) + 2 Sec. 5.1 rows + 1 Sec. 4.3 row
    # + 9 preconditions (issue 34 added: the page caches' write-backs billed, for mds0, every trace and CloudPhysics;
    # a trace where the page caches evict, for the ARC/CAR row)
    assert len(ours) == 3 + 5 + 2 + 1 + 9
    assert {c.id for c in cv.CLAIMS if c.kind == "precondition"} == set(cv.PRECONDITIONS)
    assert {c.kind for c in cv.CLAIMS if c.id == cv.HEAT_MAP_OVERHEAD} == {"sanity"}


# -------------------------------------------------------------------------------------- sweep


def test_sweep_on_a_tiny_twin_and_the_real_trace(cloudphysics_path):
    # two epoch lengths: one shorter than the default (a new run) and the default (the sweep's own run)
    p = small_params(fig6_traces=("mds_0",), include_cloudphysics=True, cloudphysics_max_requests=1500,
                     flash_mb=(512.0, 2048.0), cost_flash_mb=2048.0, epoch_sweep_s=(150.0, 300.0))
    res = X.sweep(p, {"source": "twin", "scale": 0.002}, seed=0)
    assert dict(res.sizes) == {"trace": 2, "policy": 2, "idle_bins": 3, "io_pricing": 2, "end_flush": 2,
                               "hit_pricing": 2, "flash_mb": 2, "epoch_s": len(p.epoch_sweep_s)}
    assert res.trace.values.tolist() == ["mds_0", "cloudphysics"]
    assert res.source.values.tolist() == ["twin", "real"]
    assert res.scale.values.tolist() == [0.002, 1.0]
    assert res.flash_bytes.sel(trace="mds_0").values.tolist() == [round(0.002 * 512 * MB), round(0.002 * 2048 * MB)]
    assert res.flash_bytes.sel(trace="cloudphysics").values.tolist() == [512 * MB, 2048 * MB]
    assert (res.requests.sel(trace="cloudphysics") == 1500).all()
    assert np.all(res.hit_ratio.values >= 0) and np.all(res.hit_ratio.values <= 1)
    ep = X.epoch_sweep(p, {"source": "twin", "scale": 0.002}, seed=0)
    assert ep.trace.values.tolist() == ["mds_0"] and ep.epoch_s.values.tolist() == list(p.epoch_sweep_s)
    # issue 35: the sweep ran the epoch lengths while each trace was loaded (the default epoch: its own run at
    # cost_flash_mb); the same values as the epoch sweep that loads every trace again and replays every epoch
    assert X.epoch_sweep(p, {"source": "twin", "scale": 0.002}, seed=0, res=res).identical(ep)
    from tieringlab.claims import vfrm as C

    by = X.claim_values(res, ep)
    # every row (claims and preconditions) under the default reading; each row's other readings recorded by name
    assert set(by["default"]) == {cid for cid, c in claims_registry().items() if c.source == "02_vfrm_single_vm"}
    cost_names = {C.reading_name(i, pr, f, h) for i in C.IDLE_READINGS for pr in C.PRICINGS for f in C.FLUSHES
                  for h in C.HIT_PRICINGS} - {"default"}
    assert set(by) == {"default"} | cost_names
    billed = {C.PRE_WRITEBACKS_BILLED, C.PRE_MDS0_WRITEBACKS_BILLED, C.PRE_CLOUDPHYSICS_WRITEBACKS_BILLED}
    for name in cost_names:
        plain = not any(x in name for x in ("sequential_runs", "flush_at_end", "hits_4k"))
        expect = set(C.COST_ROWS) | billed | (set(C.IDLE_ROWS) if plain else set())
        assert set(by[name]) == expect, name
    # every reading of the sweep is the same run as a sweep with that reading as the primary one
    r1 = X.reading(res, "disk", "sequential_runs")
    one_rule = X.sweep(dataclasses.replace(p, policy=dataclasses.replace(p.policy, idle_bins="disk",
                                                                         io_pricing="sequential_runs"),
                                           idle_rules=("disk",), include_cloudphysics=False, epoch_sweep_s=()),
                       {"source": "twin", "scale": 0.002}, seed=0)
    np.testing.assert_array_equal(r1.hit_ratio.sel(trace=["mds_0"]).values, X.reading(one_rule).hit_ratio.values)
    np.testing.assert_array_equal(r1.io_cost.sel(trace=["mds_0"]).values, X.reading(one_rule).io_cost.values)
    with pytest.raises(ValueError, match="no reading"):
        X.reading(res, "keep", "burst")
    # same inputs and seed -> identical results
    again = X.sweep(p, {"source": "twin", "scale": 0.002}, seed=0)
    assert again.identical(res)


def test_sweep_refuses_bad_params():
    with pytest.raises(ValueError, match="must include 'LRU'"):
        X.sweep(dataclasses.replace(small_params(), policies=("vFRM",)), {"scale": 0.002})


# ------------------------------------------------------------------------------ accounting readings (issue 34)

# vFRM paper Table 3 (us), typed in: 4 KB random SSD read/write 135/58, MD write 3922; 128 KB random SSD read/write
# 790/1241; 128 KB sequential SSD read 558, MD write 1104.
T4_SSD_RD, T4_SSD_WR, T4_MD_WR = 135e-6, 58e-6, 3922e-6
T128_SSD_RD, T128_SSD_WR = 790e-6, 1241e-6
T128_SEQ_SSD_RD, T128_SEQ_MD_WR = 558e-6, 1104e-6


@pytest.fixture(scope="module")
def hand():
    """Epoch 0: a 4 KB write and a 4 KB read in bin 0 (both miss vFRM: nothing placed yet); epoch 1: bin 0 is in a
    1-bin Flash, a 4 KB write hit (the bin turns dirty) and a 4 KB read hit; epoch 2: a read of another bin (a miss;
    bin 0 stays, dirty, to the end). Pages 0, 1, 0, 2, 1280: a 1 MB page cache never evicts, page 0 is its one
    dirty page at the end."""
    ds = make_dataset(np.array([0.0, 10.0, 300.0, 310.0, 600.0]), np.array([0, 4096, 0, 8192, 5 * MB]),
                      np.full(5, 4096), np.array([True, False, True, False, False]), name="hand", source="test")
    p = small_params(policies=("vFRM", "LRU", "ARC"), flash_mb=(1.0,), cost_flash_mb=1.0)
    return ds, p, X.run_trace(p, ds)


def test_accounting_readings_by_hand(hand):
    ds, p, r = hand
    assert X.page_footprint(ds) == (4, 1)
    assert set(r.io_cost.dims) == {"policy", "idle_bins", "io_pricing", "end_flush", "hit_pricing", "flash_mb"}
    c = r.io_cost.sel(idle_bins="keep", flash_mb=1.0)
    for pol in ("LRU", "ARC"):  # one dirty page flushed: SSD read + MD write at 4 KB random; hits already per page
        np.testing.assert_allclose(c.sel(policy=pol, end_flush="flush") - c.sel(policy=pol, end_flush="none"),
                                   T4_SSD_RD + T4_MD_WR, rtol=1e-9)
        np.testing.assert_allclose(c.sel(policy=pol, hit_pricing="page"), c.sel(policy=pol, hit_pricing="paper"))
    v = c.sel(policy="vFRM")
    # one dirty bin flushed: 8 x (SSD read + MD write) of 128 KB, sequential (a bin is one contiguous 1 MB block)
    np.testing.assert_allclose(v.sel(end_flush="flush") - v.sel(end_flush="none"),
                               8 * (T128_SEQ_SSD_RD + T128_SEQ_MD_WR), rtol=1e-9)
    # a 4 KB read hit and a 4 KB write hit re-priced from the 128 KB rows to the 4 KB rows (one-page requests:
    # the same under both IO pricings)
    np.testing.assert_allclose(v.sel(hit_pricing="page") - v.sel(hit_pricing="paper"),
                               (T4_SSD_RD - T128_SSD_RD) + (T4_SSD_WR - T128_SSD_WR), rtol=1e-9)
    # the primary reading of the figures is the paper's accounting
    base = X.reading(r.expand_dims(trace=["hand"]).assign_attrs(idle_bins="keep", io_pricing="random",
                                                                 end_flush="none", hit_pricing="paper"))
    assert float(base.io_cost.sel(policy="vFRM").squeeze()) == pytest.approx(float(v.sel(
        io_pricing="random", end_flush="none", hit_pricing="paper")))


def test_a_page_caches_flush_is_the_fewest_dirty_pages_its_counts_allow():
    import xarray as xr

    from tieringlab.policies.iocost import CACHE_COST

    cap = {"capacity_bytes": [4096 * 8]}
    r = xr.Dataset({"io_cost_by_pricing": (("io_pricing", "capacity_bytes"), [[1.0], [0.5]]),
                    "ssd_reads": ("capacity_bytes", [0]), "dirty_evictions": ("capacity_bytes", [3])},
                   coords={**cap, "io_pricing": ["random", "sequential_runs"]})
    got = X.accounting_costs(r, CACHE_COST, written_pages=5)
    # 5 distinct written pages, 3 dirty evictions: at least 2 pages still dirty at the end
    np.testing.assert_allclose(got.sel(end_flush="flush") - got.sel(end_flush="none"), 2 * (T4_SSD_RD + T4_MD_WR))
    got = X.accounting_costs(r, CACHE_COST, written_pages=2)
    np.testing.assert_allclose(got.sel(end_flush="flush"), got.sel(end_flush="none"))
    # exact where the cache never evicts: the plain LRU's dirty pages at the end of a random trace (24 MB span)
    ds = random_trace(2)
    cap_pages = 32 * MB // 4096
    _, wb, dirty = ref_lru_request_hits(ds, cap_pages, with_dirty=True)
    assert wb == 0 and X.page_footprint(ds)[0] <= cap_pages and dirty > 0
    lru = registry.run("LRU", ds, [cap_pages * 4096], params=small_params().caches)
    got = X.accounting_costs(lru, CACHE_COST, X.page_footprint(ds)[1])
    np.testing.assert_allclose(got.sel(end_flush="flush") - got.sel(end_flush="none"),
                               dirty * (T4_SSD_RD + T4_MD_WR), rtol=1e-9)
    with pytest.raises(ValueError, match="written_pages"):
        X.accounting_costs(r, CACHE_COST)


def hand_sweep(hand, pages=None):
    """The hand run as a one-trace sweep named mds_0 (``pages``: its footprint counts, default the real ones)."""
    ds, p, r = hand
    res = r.expand_dims(trace=["mds_0"]).assign_coords(scale=("trace", [1.0]), source=("trace", ["twin"]))
    b = X.bin_reuse(ds)
    fp = X.page_footprint(ds) if pages is None else pages
    for k, v in zip(X.PRE_VARS + X.PAGE_VARS, [b[k.removeprefix("pre_")] for k in X.PRE_VARS] + list(fp)):
        res[k] = ("trace", [v])
    res.attrs.update(cost_flash_mb=p.cost_flash_mb, catch_up_pct=p.catch_up_pct, idle_bins="keep",
                     io_pricing="random", end_flush="none", hit_pricing="paper", n_history_epochs=8, bin_bytes=MB,
                     epoch_s=300.0, page_bytes=4096)
    return res


def test_fig7_rows_under_the_accounting_readings_and_their_preconditions(hand):
    from tieringlab.claims import vfrm as CV

    res = hand_sweep(hand)
    by = X.claim_values(res)
    d = by["default"]
    # the 1 MB page cache holds the whole footprint: its write-back is billed only by the flush readings
    assert d[CV.PRE_MDS0_WRITEBACKS_BILLED][0] is False and d[CV.PRE_WRITEBACKS_BILLED][0] is False
    assert by["flush_at_end"][CV.PRE_MDS0_WRITEBACKS_BILLED][0] is True
    assert by["idle_disk.sequential_runs.flush_at_end.hits_4k"][CV.PRE_WRITEBACKS_BILLED][0] is True
    # ARC never evicts either: it would cost what LRU costs, so the ARC/CAR row has no value, its precondition fails
    assert d[CV.PRE_CACHES_EVICT][0] == 0 and d[CV.COST_BELOW_ALL_CONVENTIONAL][0] is None
    c = res.io_cost.sel(trace="mds_0", idle_bins="keep", io_pricing="random", hit_pricing="paper", flash_mb=1.0)
    want = 100 * float(c.sel(policy="vFRM", end_flush="flush") / c.sel(policy="LRU", end_flush="flush"))
    assert by["flush_at_end"][CV.MDS0_COST_REL_LRU][0] == pytest.approx(want)
    base = 100 * float(c.sel(policy="vFRM", end_flush="none") / c.sel(policy="LRU", end_flush="none"))
    flushed = 100 * (float(c.sel(policy="vFRM", end_flush="none")) + 8 * (T128_SEQ_SSD_RD + T128_SEQ_MD_WR)) / (
        float(c.sel(policy="LRU", end_flush="none")) + T4_SSD_RD + T4_MD_WR)
    assert d[CV.MDS0_COST_REL_LRU][0] == pytest.approx(base) and want == pytest.approx(flushed)
    # the ledger: untestable under the paper's accounting, a verdict under flush_at_end
    flips = X.verdict_flips(by).set_index(["claim", "reading"])
    assert flips.loc[(CV.MDS0_COST_REL_LRU, "default"), "verdict"] == "untestable"
    assert flips.loc[(CV.MDS0_COST_REL_LRU, "flush_at_end"), "verdict"] in ("holds", "differs")
    # a footprint larger than the cache: the page caches evict, the ARC/CAR row counts this trace
    big = X.claim_values(hand_sweep(hand, pages=(257, 1)))["default"]
    assert big[CV.PRE_CACHES_EVICT][0] == 1 and big[CV.PRE_WRITEBACKS_BILLED][0] is True
    ca = res.io_cost.sel(trace="mds_0", idle_bins="keep", io_pricing="random", end_flush="none", hit_pricing="paper",
                         flash_mb=1.0)
    assert big[CV.COST_BELOW_ALL_CONVENTIONAL][0] == pytest.approx(100 * float(ca.sel(policy="vFRM")
                                                                             / ca.sel(policy="ARC")))
    t = X.accounting_table(res)
    assert t.loc[0, "rel_lru_pct.none.paper"] == pytest.approx(base)
    assert t.loc[0, "rel_lru_pct.flush.paper"] == pytest.approx(want) and not t.loc[0, "caches_evict"]


# -------------------------------------------------------------------------------------- twin readings (issue 34)


def test_twin_readings_keep_table1_volume_and_change_what_they_name():
    from tieringlab.traces.twins import msr_twin

    base = msr_twin("mds_0", 0.002, seed=0)
    end = int((base.offset + base["size"]).max())
    packed = msr_twin("mds_0", 0.002, seed=0, cold_span=1.2)
    assert int((packed.offset + packed["size"]).max()) == end  # Table 1's volume kept
    p0, p1 = X.page_footprint(base)[0], X.page_footprint(packed)[0]
    assert abs(p1 - p0) <= 0.02 * p0  # ... and its working set
    assert X.bin_reuse(packed)["bins_touched"] < X.bin_reuse(base)["bins_touched"] / 2  # cold data clustered
    reads = msr_twin("mds_0", 0.002, seed=0, read_ratio=0.9)
    assert abs(1 - float(reads.is_write.mean()) - 0.9) < 0.02
    small = msr_twin("mds_0", 0.002, seed=0, size_mix="4k")
    assert (small["size"] == 4096).mean() > 0.999  # every IO one page but the object stretched to the volume's end
    with pytest.raises(ValueError, match="size_mix"):
        msr_twin("mds_0", 0.002, size_mix="8k")
    with pytest.raises(ValueError, match="cold_span"):
        msr_twin("mds_0", 0.002, cold_span=0.5)


def test_twin_sweep_replays_each_twin_reading_and_names_its_rows():
    from tieringlab.claims import vfrm as CV
    from tieringlab.traces.twins import msr_twin

    # mds0 alone of two Table 1 traces: only the mds0 row and its preconditions, at cost_flash_mb, vFRM and LRU
    p = small_params(fig6_traces=("mds_0", "stg_1"), policies=("vFRM", "LRU"), flash_mb=(2.0, 4.0), cost_flash_mb=4.0,
                     twin_readings=("reads_90",))
    assert not X.twin_covers_every_trace(p)
    tw = X.twin_sweep(p, {"source": "twin", "scale": 0.002}, seed=0)
    assert tw.twin.values.tolist() == ["reads_90"] and tw.flash_mb.values.tolist() == [4.0]
    assert tw.trace.values.tolist() == ["mds_0"] and tw.attrs["every_trace"] == 0
    ds = msr_twin("mds_0", 0.002, seed=0, read_ratio=0.9)
    hits, _ = ref_lru_request_hits(ds, int(round(4.0 * MB * 0.002)) // 4096)
    assert int(tw.hits.sel(twin="reads_90", trace="mds_0", policy="LRU").squeeze()) == hits
    by = X.claim_values(hand_sweep_like(tw), None, tw)
    assert {"reads_90", "reads_90.flush_at_end", "reads_90.hits_4k", "reads_90.flush_at_end.hits_4k"} <= set(by)
    assert set(by["reads_90"]) == {CV.MDS0_COST_REL_LRU, CV.PRE_MDS0_NEVER_REUSED, CV.PRE_MDS0_WRITEBACKS_BILLED}
    assert by["reads_90"][CV.PRE_MDS0_NEVER_REUSED][0] == pytest.approx(X.bin_reuse(ds)["never_reused_pct"])
    assert X.twin_sweep(p, {"source": "msr"}) is None and X.twin_sweep(dataclasses.replace(p, twin_readings=()),
                                                                       {"source": "twin", "scale": 0.002}) is None
    with pytest.raises(ValueError, match="twin_reading_traces"):
        small_params(twin_reading_traces=("stg_1",))


def test_twin_readings_decide_the_fig6_and_every_trace_rows_when_every_trace_is_regenerated():
    """Issue 34: with every paper trace among twin_reading_traces, each twin reading replays them at the smallest,
    the Fig. 7 and the largest Flash size with every page cache, and records the Fig. 6 and every-trace rows (and the
    trace preconditions, under every accounting reading of it): the values the main sweep's rows give on the same
    regenerated traces, and the catch-up row by hand."""
    from tieringlab.claims import vfrm as CV

    p = small_params(policies=("vFRM", "LRU", "ARC"), flash_mb=(2.0, 3.0, 4.0, 8.0), cost_flash_mb=4.0,
                     twin_readings=("reads_90",))
    assert X.twin_covers_every_trace(p)
    tw = X.twin_sweep(p, {"source": "twin", "scale": 0.002}, seed=0)
    assert tw.flash_mb.values.tolist() == [2.0, 4.0, 8.0] and tw.policy.values.tolist() == ["vFRM", "LRU", "ARC"]
    main = hand_sweep_like(tw)
    by, ref = X.claim_values(main, None, tw), X.claim_values(main)
    rows = (CV.CATCHES_UP, CV.GAP_NARROWS, CV.COST_FRACTION_OF_LRU, CV.ORDER_OF_MAGNITUDE, CV.PRE_NEVER_REUSED,
            CV.PRE_WARM_REUSE, CV.MDS0_COST_REL_LRU)
    for cid in rows:
        assert by["reads_90"][cid][0] == ref["default"][cid][0], cid
    assert by["reads_90.flush_at_end"][CV.COST_FRACTION_OF_LRU][0] == ref["flush_at_end"][CV.COST_FRACTION_OF_LRU][0]
    for name in ("reads_90.flush_at_end", "reads_90.hits_4k"):  # the twin's trace properties under every name of it
        assert by[name][CV.PRE_NEVER_REUSED][0] == by["reads_90"][CV.PRE_NEVER_REUSED][0]
        assert CV.CATCHES_UP not in by[name]  # a Fig. 6 row depends on the idle rule only
    hr = 100 * tw["hit_ratio"].sel(twin="reads_90", trace="mds_0", flash_mb=8.0).squeeze()
    gap = float(hr.sel(policy=["LRU", "ARC"]).max() - hr.sel(policy="vFRM"))
    assert by["reads_90"][CV.CATCHES_UP][0] is bool(gap <= p.catch_up_pct)


def hand_sweep_like(tw):
    """The twin sweep's first reading as a plain one-reading sweep (claim_values needs a main sweep)."""
    r = tw.isel(twin=0, drop=True)
    r.attrs = tw.attrs
    return r


def test_page_footprint_against_a_set_of_pages():
    """Distinct (written) 4 KB pages per VM, against Python sets; a VM's pages never count as another's."""
    rng = np.random.default_rng(3)
    n = 600
    ds = make_dataset(np.sort(rng.uniform(0, 100, n)), rng.integers(0, 40 * 4096, n), rng.integers(1, 70000, n),
                      rng.random(n) < 0.3, name="x", source="test")
    ds["vm"] = ("request", rng.integers(0, 3, n))
    seen, written = set(), set()
    for o, s, w, v in zip(ds.offset.values, ds["size"].values, ds.is_write.values, ds.vm.values):
        for pg in range(o // 4096, (o + s - 1) // 4096 + 1):
            seen.add((v, pg))
            if w:
                written.add((v, pg))
    assert X.page_footprint(ds) == (len(seen), len(written))
    assert X.page_footprint(ds.drop_vars("vm")) == (len({p for _, p in seen}), len({p for _, p in written}))


def test_verdict_matrix_pivots_one_choice_readings_and_names_the_flips():
    """Issue 34's compact table, by hand: combinations left out, a row absent under a reading left empty."""
    import pandas as pd

    flips = pd.DataFrame([("a", "default", "holds"), ("a", "hits_4k", "differs"), ("a", "flush_at_end", "holds"),
                          ("a", "flush_at_end.hits_4k", "untestable"), ("b", "default", "differs"),
                          ("b", "reads_10", "holds")], columns=["claim", "reading", "verdict"])
    m = X.verdict_matrix(flips)
    assert list(m.columns) == ["default", "hits_4k", "flush_at_end", "reads_10", "flips_under"]
    assert m.loc["a"].tolist() == ["holds", "differs", "holds", "", "hits_4k"]
    assert m.loc["b"].tolist() == ["differs", "", "", "holds", "reads_10"]
    from tieringlab.claims import vfrm as CV

    d = X.reading_descriptions([*CV.flush_axis(), *CV.TWIN_READINGS[:1]])
    assert d["reading"].tolist() == ["flush_at_end", "reads_10"] and d["sets"].tolist() == ["end_flush = flush",
                                                                                            "read_ratio = 0.1"]


@pytest.mark.parametrize("policy", ["lru", "arc", "car"])
def test_simulate_rewrites_equal_a_full_replay_of_each_rewritten_trace(policy):
    """Issue 34: one replay of a page cache serves every vector of write flags (the hits and evictions never read
    them; the write-backs are recounted): each result is the Dataset of a full replay with those flags, bit for bit,
    at sizes that evict (dirty write-backs during the trace and residencies still dirty at its end)."""
    import xarray as xr

    from tieringlab.policies import caching

    ds = random_trace(3, n=500)
    u = np.random.default_rng(7).random(ds.sizes["request"])
    ws = [u >= q for q in (0.1, 0.5, 0.9)]
    caps = [16 * KB, 256 * KB, 2 * MB, 64 * MB]
    got = caching.simulate_rewrites(ds, policy, caps, ws, caching.CachingParams(threads=2))
    refs = [caching.simulate(ds.assign(is_write=("request", w)), policy, caps) for w in ws]
    for g, r in zip(got, refs):
        xr.testing.assert_identical(g, r)
    assert len({int(r["dirty_evictions"][1]) for r in refs}) == 3  # the write flags change what is billed


def test_read_ratio_twin_readings_ride_on_the_sweep_and_equal_separate_runs():
    """The read-ratio twins differ from the default twin in is_write only, so the sweep runs them with the default
    (one ranking, one replay per cache: twin_parts) and twin_sweeps cuts their runs to its sizes; the sweep is
    unchanged, and every twin Dataset is identical to running each reading apart (the reference)."""
    import xarray as xr

    from tieringlab.traces.twins import msr_twin

    a, b = (msr_twin("stg_1", 0.002, seed=0, read_ratio=r) for r in (0.5, 0.9))
    for v in ("time", "offset", "size"):
        assert np.array_equal(a[v].values, b[v].values)
    assert not np.array_equal(a["is_write"].values, b["is_write"].values)
    p = small_params(fig6_traces=("stg_1",), policies=("vFRM", "LRU", "ARC"), idle_rules=("keep", "disk"),
                     flash_mb=(256.0, 1024.0, 4096.0), cost_flash_mb=1024.0, epoch_sweep_s=(300.0,),
                     twin_readings=("reads_10", "reads_90", "sizes_4k"), twin_readings_every_trace=("reads_10",
                                                                                                   "reads_90"),
                     twin_reading_traces=("stg_1",))
    tr = {"source": "twin", "scale": 0.002}
    parts = {}
    xr.testing.assert_identical(X.sweep(p, tr, 0, twin_parts=parts), X.sweep(p, tr, 0))
    assert sorted(parts) == [("reads_10", "stg_1"), ("reads_90", "stg_1")]
    tws = X.twin_sweeps(p, tr, 0, shared=parts)
    every = dataclasses.replace(p, twin_readings=("reads_10", "reads_90"), twin_readings_every_trace=())
    xr.testing.assert_identical(tws[0], X.twin_sweep(every, tr, 0, share_writes=False))
    xr.testing.assert_identical(tws[1], X.twin_sweep(dataclasses.replace(every, twin_readings=("sizes_4k",)), tr, 0))
    assert [t.twin.values.tolist() for t in tws] == [["reads_10", "reads_90"], ["sizes_4k"]]
    with pytest.raises(ValueError, match="twin_readings_every_trace"):
        small_params(twin_readings_every_trace=("reads_90", "reads_90"))
