"""Multi-VM mixes (tieringlab.traces.mix) and the Fig. 8/9 sweep (tieringlab.experiments.gvfrm_multi_vm)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

import tieringlab  # noqa: F401  (x64)
from tieringlab import params, paths
from tieringlab.claims import DIFFERS, HOLDS, registry
from tieringlab.claims import gvfrm as C
from tieringlab.experiments import gvfrm_multi_vm as G
from tieringlab.policies import caching, gvfrm
from tieringlab.policies import registry as policy_registry
from tieringlab.traces import make_dataset, member_of, mix_traces

# ------------------------------------------------------------------------------------------ mix builder


@st.composite
def member_traces(draw):
    """1-4 small traces with integer times (ties likely), arbitrary starts, offsets and sizes."""
    n_vm = draw(st.integers(1, 4))
    out = []
    for v in range(n_vm):
        n = draw(st.integers(1, 25))
        t0 = draw(st.integers(0, 10_000))
        gaps = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
        t = t0 + np.cumsum(gaps).astype(float)
        off = np.array(draw(st.lists(st.integers(0, 3 << 20), min_size=n, max_size=n)), dtype=np.int64)
        size = np.array(draw(st.lists(st.integers(1, 300_000), min_size=n, max_size=n)), dtype=np.int64)
        w = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
        out.append(make_dataset(t, off, size, w, name=f"vm{v}", source="test"))
    return out


def _units(ds, unit):
    off, size = ds["offset"].values, ds["size"].values
    return set(np.concatenate([np.arange(o // unit, (o + s - 1) // unit + 1) for o, s in zip(off, size)]).tolist())


@settings(max_examples=40, deadline=None)
@given(member_traces(), st.sampled_from([1 << 20, 1 << 22, 1 << 30]))
def test_mix_properties(traces, align):
    m = mix_traces(traces, align_bytes=align)
    n = [ds.sizes["request"] for ds in traces]
    # length is the sum; every (vm, member_request) appears once
    assert m.sizes["request"] == sum(n)
    pairs = sorted(zip(m["vm"].values.tolist(), m["member_request"].values.tolist()))
    assert pairs == [(v, i) for v in range(len(traces)) for i in range(n[v])]
    # merged by time with the stable tie rule: (time, vm, member order) non-decreasing
    key = list(zip(m["time"].values.tolist(), m["vm"].values.tolist(), m["member_request"].values.tolist()))
    assert key == sorted(key)
    for v, ds in enumerate(traces):
        mine = m["vm"].values == v
        # per-VM order preserved and contents carried over, times aligned to the common start
        assert np.all(np.diff(m["member_request"].values[mine]) == 1)
        np.testing.assert_array_equal(m["time"].values[mine], ds["time"].values - ds["time"].values.min())
        np.testing.assert_array_equal(m["size"].values[mine], ds["size"].values)
        np.testing.assert_array_equal(m["is_write"].values[mine], ds["is_write"].values)
        np.testing.assert_array_equal(m["offset"].values[mine] - m.attrs["member_offsets"][v], ds["offset"].values)
        assert m.attrs["member_offsets"][v] % align == 0
        back = member_of(m, v)
        np.testing.assert_array_equal(back["offset"].values, ds["offset"].values)
    # no address collision between VMs, for pages, bins and sub-LUNs up to the alignment
    for unit in {4096, 1 << 20, align}:
        sets = [_units(m.isel(request=np.flatnonzero(m["vm"].values == v)), unit) for v in range(len(traces))]
        for a in range(len(sets)):
            for b in range(a + 1, len(sets)):
                assert not sets[a] & sets[b]
    assert m.attrs["members"] == [ds.attrs["name"] for ds in traces]
    assert m.attrs["member_requests"] == n


def test_mix_ties_and_unsorted_member():
    a = make_dataset([5.0, 6.0, 6.0], [0, 4096, 8192], [4096] * 3, [False] * 3, name="a", source="t")
    b = make_dataset([100.0, 101.0], [0, 0], [512, 512], [True, False], name="b", source="t")
    m = mix_traces([a, b])
    # a: 0, 1, 1 ; b: 0, 1 -> ties go to the lower VM, then the member's order
    assert m["vm"].values.tolist() == [0, 1, 0, 0, 1]
    assert m["time"].values.tolist() == [0.0, 0.0, 1.0, 1.0, 1.0]
    assert m.attrs["member_offsets"] == [0, 1 << 30]
    # a member that is not in time order keeps its own file order
    c = make_dataset([0.0, 10.0, 3.0, 20.0], [0] * 4, [1] * 4, [False] * 4, name="c", source="t")
    d = make_dataset([0.0, 5.0], [0] * 2, [1] * 2, [False] * 2, name="d", source="t")
    m = mix_traces([c, d])
    mine = m["vm"].values == 0
    assert m["member_request"].values[mine].tolist() == [0, 1, 2, 3]
    assert m["time"].values[mine].tolist() == [0.0, 10.0, 3.0, 20.0]
    assert m["vm"].values.tolist() == [0, 1, 1, 0, 0, 0]


def test_mix_errors():
    a = make_dataset([0.0], [0], [10], [False], name="a", source="t")
    with pytest.raises(ValueError, match="at least one"):
        mix_traces([])
    with pytest.raises(ValueError, match="align_bytes"):
        mix_traces([a], align_bytes=0)
    with pytest.raises(ValueError, match="names"):
        mix_traces([a, a], names=["x"])
    with pytest.raises(TypeError, match=r"traces\[0\]"):
        mix_traces([np.zeros(3)])
    with pytest.raises(ValueError, match="missing"):
        mix_traces([a.drop_vars("is_write")])
    bad = make_dataset([0.0], [-5], [10], [False], name="bad", source="t")
    with pytest.raises(ValueError, match="offset"):
        mix_traces([bad])
    m = mix_traces([a, a], names=["x", "y"])
    with pytest.raises(KeyError, match="no member"):
        member_of(m, "z")
    with pytest.raises(ValueError, match="mix_traces"):
        member_of(a, 0)


# ------------------------------------------------------------------------------------------ params

def test_params_defaults_are_the_paper_and_bad_values_raise():
    p = G.GvfrmMultiVmParams()
    assert p.flash_gb == (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
    assert p.cf4 == ("mds_0", "src1_2", "stg_0", "usr_0") and p.cuf4 == ("stg_1", "usr_2", "web_2", "src2_1")
    assert p.all8 == p.cf4 + p.cuf4 and p.policy.private_fraction == 0.5
    assert (p.policy.aging_period, p.policy.private_split, p.policy.io_pricing) == (288, "equal", "random")  # issue 17
    assert p.policy == policy_registry.make_params("G1-vFRM")
    assert p.caches == policy_registry.make_params("LRU", {"threads": 2})
    yaml_p = params.load(paths.repo_root() / "params.yaml")["gvfrm_multi_vm"]
    assert (yaml_p.policy.aging_period, yaml_p.policy.private_split, yaml_p.policy.io_pricing) == (288, "equal",
                                                                                                  "random")
    assert yaml_p.policy == p.policy and yaml_p.caches == p.caches  # paper scale: the same floats as the defaults
    with pytest.raises(ValueError, match="aging_periods must include policy.aging_period"):
        G.GvfrmMultiVmParams(policy=gvfrm.GvfrmParams(aging_period=12), aging_periods=(288, 1))
    with pytest.raises(ValueError, match="LRU"):
        G.GvfrmMultiVmParams(policies=("G1-vFRM", "ARC"))
    with pytest.raises(ValueError, match="flash_gb"):
        G.GvfrmMultiVmParams(flash_gb=(1.0, 1.0))
    with pytest.raises(ValueError, match="cf4"):
        G.GvfrmMultiVmParams(cf4=("mds_0", "mds_0"))
    with pytest.raises(ValueError, match="aging_periods"):
        G.GvfrmMultiVmParams(aging_periods=(1, 1))
    with pytest.raises(params.ParamsError, match="gvfrm_multi_vm.policy.n_epochs must be an even integer"):
        params.validate_section("gvfrm_multi_vm", {"policy": {"n_epochs": 7}})  # N of Eq. 1 must be even
    for bad, where in (({"mixes": ["cf5"]}, "mixes"), ({"policies": ["LRU", "FIFO"]}, "policies"),
                       ({"flash_gb": [0.0]}, "flash_gb"),
                       ({"policy": {"private_fraction": 1.5}}, "policy.private_fraction"),
                       ({"cf4": ["nope"]}, "cf4"), ({"policy": {"aging_period": 0}}, "policy.aging_period"),
                       ({"policy": {"private_split": "fair"}}, "policy.private_split"),
                       ({"policy": {"io_pricing": "burst"}}, "policy.io_pricing"),
                       ({"caches": {"threads": 0}}, "caches.threads")):
        with pytest.raises(params.ParamsError, match=f"gvfrm_multi_vm.{where}"):
            params.validate_section("gvfrm_multi_vm", bad)
    with pytest.raises(ValueError, match="mix"):
        G.members(p, "cf5")


def test_unknown_keys_and_knobs_name_the_allowed_names():
    """Issue 27: the section's knobs used to reach G1/G2 and the page caches as one shared dict ('threads' made
    G1-vFRM refuse them); each system now gets its own params, and an unknown name at any level is an error
    naming it and the allowed names."""
    for bad, where, allowed in (({"threads": 2}, "threads", "aging_periods, all8, caches, cf4"),
                                ({"policy": {"threads": 2}}, "policy.threads", "aging_period, bin_bytes, cost_model"),
                                ({"caches": {"aging_period": 1}}, "caches.aging_period", "cost_model, engine")):
        with pytest.raises(params.ParamsError, match=rf"gvfrm_multi_vm.{where}: unknown parameter; allowed: {allowed}"):
            params.validate_section("gvfrm_multi_vm", bad)
    with pytest.raises(params.ParamsError, match=r"gvfrm_multi_vm.epoch_s: unknown parameter; allowed: .*policy"):
        params.check("gvfrm_multi_vm", {"epoch_s": 300.0})  # a stale parameters cell
    for name in ("G1-vFRM", "G2-vFRM"):
        with pytest.raises(params.ParamsError, match=rf"{name}: unknown knob 'threads'; GvfrmParams has: bin_bytes"):
            policy_registry.make_params(name, {"threads": 2})


def test_g2_aging_readings_go_through_tieringlab_readings():
    from tieringlab import readings

    p = G.GvfrmMultiVmParams(aging_periods=(288, 12, 1))
    rs = G.aging_readings(p)
    assert [r.name for r in rs] == ["aging_288", "aging_12", "aging_1"] and [r.is_default for r in rs] == [1, 0, 0]
    assert all(isinstance(r, readings.Reading) for r in rs)
    assert [r.apply(p).policy.aging_period for r in rs] == [288, 12, 1]
    # the ledger's reading names (one row per claim, the other readings recorded on it): grid names of the axes
    grid = readings.grid(C.aging_axis((288, 12, 1)), C.pricing_axis())
    assert [C.reading_name(a, pr) for a in (288, 12, 1) for pr in C.PRICINGS] == [r.name for r in grid]
    assert C.reading_name() == "default" and C.reading_name(1, "sequential_runs") == "aging_1.sequential_runs"
    with pytest.raises(ValueError, match="unknown reading"):
        C.reading_name(288, "burst")
    # no reading-suffixed ids are left in the ledger
    assert not any(".aging_" in c.id or c.id.endswith(".sequential_runs") for c in C.CLAIMS)


# ------------------------------------------------------------------------------------------ sweep

TINY = {"source": "twin", "scale": 0.0003, "max_wss_gb": 0.1}  # cuf4 at 0.00026 (usr_2 capped)


@pytest.fixture(scope="module")
def tiny_sweep():
    # ARC takes the same code path as CAR (caching.simulate); left out to keep the file fast
    p = G.GvfrmMultiVmParams(mixes=("cf4", "cuf4"), flash_gb=(1.0, 32.0), policies=("G1-vFRM", "G2-vFRM", "LRU", "CAR"),
                             aging_periods=(288, 1))
    return p, G.sweep(p, TINY, seed=0)


def test_sweep_shapes_and_lru_normalization(tiny_sweep):
    p, full = tiny_sweep
    assert dict(full["hit_ratio"].sizes) == {"mix": 2, "policy": 4, "aging_period": 2, "flash_gb": 2}
    assert dict(full["io_cost"].sizes) == {"mix": 2, "policy": 4, "aging_period": 2, "io_pricing": 2, "end_flush": 2,
                                           "hit_pricing": 2, "flash_gb": 2}
    for pol in ("G1-vFRM", "LRU", "CAR"):  # only G2-vFRM depends on the aging period
        assert (full["hits"].sel(policy=pol, aging_period=288) == full["hits"].sel(policy=pol, aging_period=1)).all()
    # Table 3's sequential rows are cheaper than the random ones: sequential_runs never prices above random
    assert (full["io_cost"].sel(io_pricing="sequential_runs") <= full["io_cost"].sel(io_pricing="random")).all()
    res = G.reading(full)
    assert dict(res["hit_ratio"].sizes) == {"mix": 2, "policy": 4, "flash_gb": 2}
    assert (res.attrs["aging_period"], res.attrs["io_pricing"]) == (288, "random")
    with pytest.raises(ValueError, match="no reading"):
        G.reading(full, aging_period=12)
    assert res["policy"].values.tolist() == list(p.policies)
    assert res["seconds"].dims == ("mix", "policy")
    np.testing.assert_array_equal(res["io_cost_norm"].sel(policy="LRU").values, 1.0)
    assert np.all((res["hit_ratio"] >= 0) & (res["hit_ratio"] <= 1))
    assert np.all(res["io_cost"] > 0) and np.all(res["update_cost"] >= 0)
    assert np.all(res["update_cost"] <= res["io_cost"])
    # every flash size is flash_gb x GiB x the mix's scale; one scale per mix = its smallest member scale
    for mix in p.mixes:
        s = float(res["scale"].sel(mix=mix))
        assert s == pytest.approx(G.mix_scale(G.members(p, mix), TINY))
        np.testing.assert_array_equal(res["flash_bytes"].sel(mix=mix).values,
                                      np.round(np.array(p.flash_gb) * (1 << 30) * s).astype(np.int64))
    # hits / requests = hit ratio; LRU is monotone in the cache size (inclusion property)
    np.testing.assert_allclose(res["hits"] / res["requests"], res["hit_ratio"])
    assert np.all(res["hit_ratio"].sel(policy="LRU").diff("flash_gb") >= 0)
    df = G.table(res)
    assert len(df) == 2 * 4 * 2 and {"hit_ratio_pct", "io_cost_norm"} <= set(df.columns)
    # the precondition counts are bin_reuse of the mix as built (each VM's bins apart); every row is recorded
    from tieringlab.experiments.vfrm_single_vm import bin_reuse, page_footprint

    mixed = G.build_mix(p, "cuf4", TINY, 0)
    b = bin_reuse(mixed, p.policy.bin_bytes, p.policy.epoch_s, p.policy.n_epochs)
    assert [int(full[k].sel(mix="cuf4")) for k in G.PAGE_VARS] == list(page_footprint(mixed))
    by_vm = b["reusable_bins_by_vm"]
    assert [int(full[k].sel(mix="cuf4")) for k in G.PRE_VARS] == [
        b["heatings"], b["heatings_never_reused"], by_vm.sum(), by_vm.min(), by_vm.max()]
    assert full.attrs["pre_reusable_bins_by_vm_cuf4"] == by_vm.tolist() and by_vm.size == 4
    vals = G.claim_values(full)
    pre = {c.id for c in C.CLAIMS if c.kind == "precondition" and c.id.split(".")[2] in p.mixes}
    assert pre <= set(vals["default"]) and set(vals) == {
        C.reading_name(a, pr, f, h) for a in (288, 1) for pr in C.PRICINGS for f in C.FLUSHES for h in C.HIT_PRICINGS}


def test_sweep_matches_direct_engine_calls(tiny_sweep):
    p, full = tiny_sweep
    res = G.reading(full)
    mixed = G.build_mix(p, "cuf4", TINY, 0)
    fb = res["flash_bytes"].sel(mix="cuf4").values
    q = p.policy
    g1 = gvfrm.g1_vfrm(mixed, fb, gvfrm.GvfrmParams(private_fraction=q.private_fraction, aging_period=q.aging_period,
                                                    epoch_s=q.epoch_s, n_epochs=q.n_epochs, lam=q.lam,
                                                    private_split=q.private_split))
    np.testing.assert_array_equal(res["hits"].sel(mix="cuf4", policy="G1-vFRM").values, g1["hits"].values)
    np.testing.assert_allclose(res["io_cost"].sel(mix="cuf4", policy="G1-vFRM").values, g1["io_cost"].values)
    car = caching.simulate(mixed, "car", fb)
    np.testing.assert_array_equal(res["hits"].sel(mix="cuf4", policy="CAR").values, car["hits"].values)


def test_aging_sensitivity_matches_direct_g2_calls(tiny_sweep):
    p, full = tiny_sweep
    ag = G.aging_sensitivity(full)
    assert dict(ag["hit_ratio"].sizes) == {"aging_period": 2, "mix": 2, "flash_gb": 2}
    mixed = G.build_mix(p, "cf4", TINY, 0)
    fb = full["flash_bytes"].sel(mix="cf4").values
    for a in (288, 1):
        q = p.policy
        g2 = gvfrm.g2_vfrm(mixed, fb, gvfrm.GvfrmParams(private_fraction=q.private_fraction, aging_period=a,
                                                        epoch_s=q.epoch_s, n_epochs=q.n_epochs, lam=q.lam))
        np.testing.assert_array_equal(ag["hit_ratio"].sel(aging_period=a, mix="cf4").values, g2["hit_ratio"].values)
        np.testing.assert_allclose(ag["io_cost"].sel(aging_period=a, mix="cf4").values, g2["io_cost"].values)
    pr = G.pricing_table(full)
    assert len(pr) == 2 * 4 * 2 and {"io_cost_norm_random", "io_cost_norm_sequential_runs"} <= set(pr.columns)


def test_page_compacted_relabels_pages_and_the_page_caches_do_not_notice(monkeypatch):
    """Issue 35: the page caches replay the mix with its untouched pages squeezed out. Brute force: each request's
    first page becomes the rank of its page among the sorted touched pages, the offset within the page and the size
    are kept; LRU, ARC and CAR then count exactly what they count on the original trace (every Table 2 count, the
    per-request hits). Small chunks and windows run the passes' seams."""
    rng = np.random.default_rng(11)
    n = 300
    off = rng.choice([0, 7 << 20, 1 << 32, (1 << 32) + (5 << 20)], n) + rng.integers(0, 600, n) * 4096 \
        + rng.integers(0, 4096, n)
    ds = make_dataset(np.arange(n, dtype=float), off, rng.integers(1, 5 * 4096, n), rng.random(n) < 0.4,
                      name="m", source="test")
    monkeypatch.setattr(G, "_MARK_PAGES", 64)
    monkeypatch.setattr(G, "_RANK_PAGES", 256)
    got = G.page_compacted(ds)
    first, last = off // 4096, (off + ds["size"].values - 1) // 4096
    touched = sorted({q for a, b in zip(first.tolist(), last.tolist()) for q in range(a, b + 1)})
    rank = {q: i for i, q in enumerate(touched)}
    np.testing.assert_array_equal(got["offset"].values, [rank[q] * 4096 + o % 4096 for q, o in zip(first, off)])
    assert got["size"].equals(ds["size"]) and got["is_write"].equals(ds["is_write"]) and set(got) == {
        "offset", "size", "is_write"}
    caps = [4096 * k for k in (1, 7, 50, 2000)]
    for pol in ("lru", "arc"):  # CAR: test_sweep_matches_direct_engine_calls (the sweep replays the compacted mix)
        a, b = caching.simulate(ds, pol, caps), caching.simulate(got, pol, caps)
        for v in a.data_vars:
            np.testing.assert_array_equal(a[v].values, b[v].values, err_msg=f"{pol} {v}")


def _cold_miss_truth(traces):
    """Requests of an infinite cache that hit: all pages seen before *by the same VM* (brute force, per VM)."""
    total = 0
    for ds in traces:
        seen = set()
        for o, s in zip(ds["offset"].values.tolist(), ds["size"].values.tolist()):
            pages = range(o // 4096, (o + s - 1) // 4096 + 1)
            total += all(pg in seen for pg in pages)
            seen.update(pages)
    return total


def test_mix_vm_address_spaces_end_to_end():
    """VMs using the same addresses: an unbounded LRU on the mix sees their data as distinct."""
    rng = np.random.default_rng(3)
    traces = [make_dataset(np.sort(rng.uniform(0, 900, 60)) + 50 * v, rng.integers(0, 64, 60) * 4096,
                           rng.integers(1, 3, 60) * 4096, rng.random(60) < 0.3, name=f"v{v}", source="t")
              for v in range(3)]
    m = mix_traces(traces)
    r = caching.simulate(m, "lru", [1 << 30])
    assert int(r["hits"].values[0]) == _cold_miss_truth(traces)
    # G1-vFRM (1 MB bins, placed at epoch starts): a request can hit only if each of its bins was accessed by
    # its own VM in an earlier epoch (upper bound, brute force per VM)
    g1 = gvfrm.g1_vfrm(m, [1 << 30], start=0.0)
    bound = 0
    for ds in traces:
        seen = {}
        for t, o, s in zip(ds["time"].values - ds["time"].values.min(), ds["offset"].values, ds["size"].values):
            e = int(t // 300)
            bins = range(o >> 20, (o + s - 1 >> 20) + 1)
            bound += all(seen.get(b, e) < e for b in bins)
            for b in bins:
                seen.setdefault(b, e)
    assert 0 < int(g1["hits"].values[0]) <= bound


# ------------------------------------------------------------------------------------------ claims


def _fake(hr, cost, flash_gb=(1.0, 2.0, 4.0, 8.0, 16.0, 32.0), mixes=("cf4", "cuf4", "all8")):
    """A sweep-shaped Dataset from hit ratios / costs given per (mix, policy) as flash-size lists."""
    F = len(flash_gb)
    shape = (len(mixes), len(G.POLICIES), F)
    h = np.zeros(shape)
    c = np.ones(shape)
    for i, _m in enumerate(mixes):
        for j, pol in enumerate(G.POLICIES):
            h[i, j] = hr.get(pol, np.full(F, 0.5))
            c[i, j] = cost.get(pol, np.ones(F))
    dims = ("mix", "policy", "flash_gb")
    res = xr.Dataset({"hit_ratio": (dims, h), "io_cost": (dims, c)},
                     coords={"mix": list(mixes), "policy": list(G.POLICIES), "flash_gb": list(flash_gb),
                             "scale": ("mix", np.ones(len(mixes)))})
    res["io_cost_norm"] = res["io_cost"] / res["io_cost"].sel(policy="LRU")
    return res


def test_claim_values_paper_shaped_results_hold():
    """A result shaped like the paper's text makes every row hold; the opposite makes them differ."""
    hr = {"G1-vFRM": np.array([.80, .88, .93, .96, .98, .99]), "G2-vFRM": np.array([.80, .90, .94, .97, .985, .995]),
          "LRU": np.array([.90, .92, .93, .93, .93, .93]), "ARC": np.array([.91, .925, .93, .93, .93, .93]),
          "CAR": np.array([.91, .925, .93, .93, .93, .93])}
    cost = {"G1-vFRM": np.array([.45, .42, .4, .38, .36, .35]), "G2-vFRM": np.array([.4, .38, .36, .34, .3, .3]),
            "LRU": np.full(6, 1.0), "ARC": np.full(6, 1.1), "CAR": np.full(6, 1.1)}
    by = G.claim_values(_fake(hr, cost))
    reg = registry()
    claims_only = {c.id for c in C.CLAIMS if c.kind != "precondition"}
    # a plain sweep counts as the default reading: every claim row (no precondition counts in a fake sweep)
    assert set(by) == {"default"} and set(by["default"]) == claims_only
    vals = by["default"]
    # a sweep with both readings of each choice gives every row under the default reading and, on the same row,
    # its values under the readings it depends on (pricing: G1 cost rows; aging: G2 hit rows; both: G2 cost rows)
    both = xr.concat([xr.concat([_fake(hr, cost)] * 2, dim="io_pricing")] * 2, dim="aging_period").assign_coords(
        aging_period=[288, 1], io_pricing=["random", "sequential_runs"])
    both.attrs.update(aging_period=288, io_pricing="random")
    b = G.claim_values(both)
    assert set(b) == {"default", "sequential_runs", "aging_1", "aging_1.sequential_runs"}
    assert set(b["default"]) == claims_only
    g1_cost = {C.CUF4_G1_MAX_REDUCTION, C.CUF4_G1_REDUCTION_GROWS} | {C.g1_cost_below_lru(m) for m in C.MIXES} | {
        C.g1_cost_much_lower(m) for m in C.UNFRIENDLY_MIXES}
    g2_hit = {f(m) for m in C.MIXES for f in (C.g2_threshold, C.g2_hit_above_g1)}
    g2_cost = {C.g2_cost_below_g1(m) for m in C.MIXES}
    assert set(b["sequential_runs"]) == g1_cost | g2_cost
    assert set(b["aging_1"]) == g2_hit | g2_cost
    assert set(b["aging_1.sequential_runs"]) == g2_cost
    assert all(reg[k].source == C.SOURCE for k in vals)
    assert vals[C.CF4_G1_TOP][0] == pytest.approx(99.0)
    assert vals[C.CUF4_G1_MAX_REDUCTION][0] == pytest.approx(65.0)
    assert vals[C.g2_threshold("cf4")][0] is True and "threshold 4 GB" in vals[C.g2_threshold("cf4")][1]
    verdicts = {k: reg[k].verdict(v) for k, (v, _) in vals.items()}
    assert verdicts == {k: HOLDS for k in vals}

    worse = {"G1-vFRM": np.array([.5, .55, .6, .58, .63, .64]), "G2-vFRM": np.array([.5, .95, .5, .5, .5, .5]),
             "LRU": np.full(6, .9), "ARC": np.full(6, .9), "CAR": np.full(6, .9)}
    cost2 = {"G1-vFRM": np.array([1.0, 0.9, 1.2, 1.1, 1.3, 1.4]), "G2-vFRM": np.full(6, 2.0)}
    vals = G.claim_values(_fake(worse, cost2))["default"]
    verdicts = {k: reg[k].verdict(v) for k, (v, _) in vals.items()}
    assert verdicts == {k: DIFFERS for k in vals}


def test_g2_threshold_and_cost_reduction_closed_form():
    hr = {"G2-vFRM": np.array([.1, .9, .2, .9, .9, .9]), "LRU": np.full(6, .5), "ARC": np.full(6, .5),
          "CAR": np.array([.5, .5, .5, .5, .5, .95])}
    res = _fake(hr, {"G1-vFRM": np.array([1, 1, 1, 1, 1, .5]), "LRU": np.full(6, 2.0)})
    assert np.isnan(G.g2_threshold_gb(res, "cf4"))  # CAR wins at 32 GB: no tail where G2 always wins
    hr["CAR"] = np.array([.5, .5, .5, .5, .95, .5])
    assert G.g2_threshold_gb(_fake(hr, {}), "cf4") == 32.0  # only the last size
    hr["CAR"] = np.full(6, .5)
    assert G.g2_threshold_gb(_fake(hr, {}), "cf4") == 8.0  # the win at 2 GB is followed by a loss at 4 GB
    red = G.cost_reduction(res).sel(mix="cuf4").values
    np.testing.assert_allclose(red, [50, 50, 50, 50, 50, 75])


def test_claim_values_skip_what_the_sweep_lacks():
    res = _fake({}, {}, mixes=("cuf4",)).sel(policy=["LRU", "ARC"])
    assert G.claim_values(res) == {"default": {}}
    with pytest.raises(ValueError, match="conventional"):
        G.g2_threshold_gb(_fake({}, {}).sel(policy=["G1-vFRM", "G2-vFRM"]), "cf4")


def test_sweep_rejects_wrong_params_type():
    with pytest.raises(TypeError, match="GvfrmMultiVmParams"):
        G.sweep(dataclasses.asdict(G.GvfrmMultiVmParams()), TINY)
    with pytest.raises(params.ParamsError, match="policies"):
        params.validate_section("gvfrm_multi_vm", {"policies": ["FIFO"]}, source="test")


def test_fig9_rows_under_the_accounting_readings(tiny_sweep):
    """Issue 34: the Fig. 9 cost rows are recorded under the flush and hit-pricing readings, re-priced from the same
    counts (tests/test_vfrm_single_vm.py checks the re-pricing by hand)."""
    _, full = tiny_sweep
    c = full["io_cost"]
    assert (c.sel(end_flush="flush") >= c.sel(end_flush="none")).all()  # a flush only adds write-backs
    conv = ["LRU", "CAR"]  # the page caches already price their hits per 4 KB page
    np.testing.assert_array_equal(c.sel(policy=conv, hit_pricing="page").values,
                                  c.sel(policy=conv, hit_pricing="paper").values)
    vals = G.claim_values(full)
    assert {"flush_at_end", "hits_4k", "sequential_runs.flush_at_end.hits_4k", "aging_1.flush_at_end.hits_4k"} <= set(
        vals)
    r = G.reading(full, None, None, "flush", "page")
    for mix in ("cf4", "cuf4"):
        want = float((r["io_cost"].sel(mix=mix, policy="G1-vFRM") / r["io_cost"].sel(mix=mix, policy="LRU")).max())
        assert vals["flush_at_end.hits_4k"][C.g1_cost_below_lru(mix)][0] == pytest.approx(want)
    t = G.accounting_table(full)
    assert {"norm.none.paper", "norm.flush.page"} <= set(t.columns) and len(t) == 2 * 4 * 2
    row = t[(t.mix == "cf4") & (t.policy == "G1-vFRM") & (t.flash_gb == 1.0)]
    assert float(row["norm.flush.page"].iloc[0]) == pytest.approx(float(
        r["io_cost_norm"].sel(mix="cf4", policy="G1-vFRM", flash_gb=1.0)))
    assert C.reading_name(1, "sequential_runs", "flush", "page") == "aging_1.sequential_runs.flush_at_end.hits_4k"
    # the billing preconditions (issue 34): the page caches evict at a size iff the mix's pages exceed the cache's
    # pages; where they do not, LRU never writes a dirty page back (no Table 2(b) cost under the paper's accounting)
    ev = G.cache_evicts(full)
    for mix in ("cf4", "cuf4"):
        cap = full["flash_bytes"].sel(mix=mix).values // 4096
        e = int(full["pre_pages"].sel(mix=mix)) > cap
        np.testing.assert_array_equal(ev.sel(mix=mix).values, e)
        lru_upd = G.reading(full)["update_cost"].sel(mix=mix, policy="LRU").values
        assert np.all(lru_upd[~e] == 0)
        assert vals["default"][C.pre_writebacks_billed(mix)][0] is bool(e.all())
        if mix in C.UNFRIENDLY_MIXES:
            assert vals["default"][C.pre_caches_evict(mix)][0] == int(e.sum())
        for name in ("flush_at_end", "aging_1.sequential_runs.flush_at_end.hits_4k"):
            assert vals[name][C.pre_writebacks_billed(mix)][0] is True
        assert C.pre_writebacks_billed(mix) not in vals["hits_4k"]  # no flush: the default value holds there
    reg = registry()
    assert C.pre_writebacks_billed("cuf4") in reg[C.g1_cost_below_lru("cuf4")].requires
    need = set(reg[C.g1_cost_much_lower("all8")].requires)
    assert {C.pre_writebacks_billed("all8"), C.pre_caches_evict("all8")} <= need
    with pytest.raises(ValueError, match="unknown reading"):
        C.reading_name(flush="always")


def test_twin_readings_on_the_mixes_share_one_replay_and_record_every_row():
    """Issue 34: the mixes rebuilt under each twin reading; the read-ratio readings (mixes that differ in is_write
    only) share one binning and one replay per cache, identical to sweeping each reading's mix apart (the reference);
    every row of the default reading is recorded under each twin reading, the preconditions included."""
    p = params.validate_section("gvfrm_multi_vm", {"mixes": ["cuf4"], "cuf4": ["stg_1", "web_2"],
                                                   "flash_gb": [1.0, 32.0], "aging_periods": [288],
                                                   "caches": {"threads": 2},
                                                   "twin_readings": ["reads_10", "reads_90"],
                                                   "run_twin_readings": True}, source="test")
    tr = {"source": "twin", "scale": 0.001, "max_wss_gb": 0.1}
    tw = G.twin_sweep(p, tr, 0)
    xr.testing.assert_identical(tw, G.twin_sweep(p, tr, 0, share_writes=False))
    # the pair rides on the main sweep (twin_parts), whose own result is unchanged; the primary aging period need
    # not come first
    q = dataclasses.replace(p, aging_periods=(12, 288, 1))
    parts = {}
    main = G.sweep(q, tr, 0, twin_parts=parts)
    xr.testing.assert_identical(main.drop_vars("seconds"), G.sweep(q, tr, 0).drop_vars("seconds"))
    assert sorted(parts) == ["reads_10", "reads_90"]
    xr.testing.assert_identical(G.twin_sweep(q, tr, 0, shared=parts), tw)
    assert G.sweep(dataclasses.replace(q, run_twin_readings=False), tr, 0, twin_parts=(none := {})) is not None
    assert none == {}
    a, b = (tw.sel(twin=t) for t in ("reads_10", "reads_90"))
    assert (a.hit_ratio == b.hit_ratio).all() and not (a.io_cost == b.io_cost).all()  # the writes move costs only
    main = tw.isel(twin=0, drop=True).assign_attrs(tw.attrs)  # a one-reading sweep stands in for the main one
    vals = G.claim_values(main, tw)
    assert set(vals["reads_90"]) == set(vals["default"]) and C.pre_never_reused("cuf4") in vals["reads_10"]
    with pytest.raises(ValueError, match="twin_readings"):
        G.GvfrmMultiVmParams(twin_readings=("reads_10", "reads_10"))
    assert G.twin_sweep(p, {"source": "msr"}) is None
    assert G.twin_sweep(dataclasses.replace(p, run_twin_readings=False), tr, 0) is None


def test_address_moving_twin_readings_run_the_named_mixes_only():
    """Issue 34: cold_packed (a full sweep of its own) runs the mixes of twin_reading_mixes only: twin_at gives it
    as a plain sweep of those mixes, equal to sweeping them under the reading directly, with the variables' own
    dtypes; the read ratios still cover every mix, and only rows of the named mixes get a cold_packed value."""
    p = params.validate_section("gvfrm_multi_vm", {"mixes": ["cuf4", "cf4"], "cuf4": ["stg_1", "web_2"],
                                                   "cf4": ["mds_0", "usr_0"], "flash_gb": [1.0, 32.0],
                                                   "aging_periods": [288], "caches": {"threads": 2},
                                                   "twin_readings": ["reads_10", "cold_packed"],
                                                   "twin_reading_mixes": ["cf4"], "run_twin_readings": True},
                                  source="test")
    tr = {"source": "twin", "scale": 0.001, "max_wss_gb": 0.1}
    parts = {}
    res = G.sweep(p, tr, 0, twin_parts=parts)
    tw = G.twin_sweep(p, tr, 0, shared=parts)
    assert tw["twin_ran"].sel(twin="cold_packed").values.tolist() == [False, True]
    assert tw["twin_ran"].sel(twin="reads_10").values.all()
    cold = G.twin_at(tw, "cold_packed")
    alone = G.sweep(dataclasses.replace(p, mixes=("cf4",)), tr, 0, twins=[{"cold_span": 1.2}])[0]
    xr.testing.assert_equal(cold, alone.drop_vars("seconds"))
    assert cold["hits"].dtype == alone["hits"].dtype and "members_cuf4" not in cold.attrs
    xr.testing.assert_equal(G.twin_at(tw, "reads_10"), parts["reads_10"].drop_vars("seconds"))
    vals = G.claim_values(res, tw)
    assert vals["cold_packed"] and all(".cf4." in cid for cid in vals["cold_packed"])
    assert any(".cuf4." in cid for cid in vals["reads_10"])
    assert set(G.twin_table(tw).query("twin == 'cold_packed'")["mix"]) == {"cf4"}
    none = G.twin_sweep(dataclasses.replace(p, twin_reading_mixes=("all8",)), tr, 0, shared=parts)
    assert list(none["twin"].values) == ["reads_10"]  # cold_packed has no mix to run
