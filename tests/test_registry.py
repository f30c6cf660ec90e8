"""The policy contract and registry (tieringlab.policies): one call shape per kind, the papers' names."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np
import pytest
import xarray as xr  # noqa: F401

from tieringlab.params import ParamsError
from tieringlab.policies import CAPACITY_DIM, ara, caching, contract, gvfrm, registry, vfrm  # noqa: F401
from tieringlab.policies.iocost import ACCESS_NAMES, CACHE_COST, io_cost
from tieringlab.traces import make_dataset

MB = 1 << 20


def small_trace(seed=0, n=300):
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0, 3600, n))
    off = rng.integers(0, 16 * MB // 4096, n) * 4096
    return make_dataset(t, off, rng.choice([4096, 8192, 65536], n), rng.random(n) < 0.3, name="t", source="test")


def test_every_paper_name_is_registered_once_with_its_kind():
    assert registry.names("trace") == ["ARC", "CAR", "FlashCache", "FlashCache pass 2", "G1-vFRM", "G2-vFRM",
                                       "HDD only", "LRU", "OTF-AST", "OTF-AST without write-back", "static tiering",
                                       "vFRM"]
    assert registry.names("queueing") == ["ARA", "ARA_OPT", "ARA_PRED", "Qlen", "Rand"]
    assert registry.names("scenario") == ["LMST", "NMST", "SMST"]
    for name in registry.names():
        spec = registry.get(name)
        assert spec.name == name and spec.kind in contract.KINDS and spec.source
    # the papers' spellings and aliases find the same spec
    assert registry.get("GLB-vFRM") is registry.get("G1-vFRM") is registry.get("g1_vfrm")
    assert registry.get("ara_pred") is registry.get("ARA_PRED")
    assert registry.get("lru").fn is registry.get("LRU").fn


def test_unknown_names_and_double_registration_are_errors():
    with pytest.raises(KeyError, match=r"unknown policy 'FIFO'; known: ARA, ARA_OPT, ARA_PRED, ARC"):
        registry.get("FIFO")
    spec = registry.get("LRU")
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(dataclasses.replace(spec, name="lru"))
    with pytest.raises(ValueError, match="kind must be one of"):
        dataclasses.replace(spec, kind="cache")
    with pytest.raises(ValueError, match="not fields of CachingParams"):
        dataclasses.replace(spec, fixed={"policy": "lru"})


def test_trace_results_are_priced_by_their_own_cost_model():
    """io_cost is Eq. 4 over the result's own counts (its params' cost model); the update cost is part of it.
    (The shape every trace system returns is tests/test_contract.py's, for every registered name.)"""
    ds = small_trace()
    for name in ("LRU", "ARC", "CAR", "vFRM", "G1-vFRM", "G2-vFRM"):
        out = registry.run(name, ds, [2 * MB, 8 * MB])
        assert (out["requests"] == ds.sizes["request"]).all()
        model = registry.make_params(name).cost_model
        np.testing.assert_allclose(out["io_cost"].values, np.asarray(io_cost(out, model)), rtol=1e-12)
        assert np.all(out["update_cost"].values <= out["io_cost"].values)


def test_registry_run_equals_the_module_function():
    ds = small_trace(1)
    caps = [MB, 4 * MB]
    for name, direct in (("LRU", caching.simulate(ds, "lru", caps)), ("vFRM", vfrm.vfrm(ds, caps)),
                         ("G2-vFRM", gvfrm.g2_vfrm(ds, caps))):
        got = registry.run(name, ds, caps)
        for v in ("hits", *ACCESS_NAMES, "io_cost"):
            np.testing.assert_array_equal(got[v].values, direct[v].values, err_msg=f"{name} {v}")


def test_knobs_are_each_systems_own_fields():
    assert registry.make_params("vFRM", {"bin_bytes": 2 * MB}) == vfrm.VfrmParams(bin_bytes=2 * MB)
    g = registry.make_params("G1-vFRM", {"bin_bytes": 2 * MB, "private_fraction": 0.25})
    assert (g.bin_bytes, g.private_fraction) == (2 * MB, 0.25)
    assert registry.make_params("ARC", {"page_bytes": 8192}) == caching.CachingParams(page_bytes=8192)
    assert registry.make_params("Rand", {"n_sites": 4}) == ara.AraParams(n_sites=4, policy="rand")
    # one experiment's knobs no longer serve all its systems: a field another system has is refused here
    with pytest.raises(ParamsError, match=r"ARC: unknown knob 'private_fraction'"):
        registry.make_params("ARC", {"page_bytes": 8192, "private_fraction": 0.25})


def test_params_of_the_wrong_type_or_fixed_field_are_refused():
    ds = small_trace()
    with pytest.raises(TypeError, match="G1-vFRM takes GvfrmParams"):
        registry.run("G1-vFRM", ds, [MB], params=vfrm.VfrmParams())
    with pytest.raises(ValueError, match="Qlen runs with policy='qlen'"):
        registry.run("Qlen", np.arange(3.0), np.ones(3), params=ara.AraParams(policy="rand"))
    with pytest.raises(ValueError, match="Rand is randomised"):
        registry.run("Rand", np.arange(3.0), np.ones(3))


def test_queueing_contract_ara():
    rng = np.random.default_rng(2)
    a = np.cumsum(rng.exponential(0.2, (3, 200)), axis=1)
    s = rng.exponential(1.0, (3, 200))
    key = jax.random.key(0)
    out = registry.run("ARA", a, s, knobs={"n_sites": 4, "k": 2}, key=key)
    assert out["response_s"].dims == ("replication", "job") and out["mean_response_s"].dims == ("replication",)
    np.testing.assert_array_equal(out["mean_response_s"].values, out["response_s"].values.mean(axis=1))
    np.testing.assert_array_equal(out["response_s"].values,
                                  ara.dispatch(ara.AraParams(n_sites=4, policy="ara", k=2), a, s, key))
    assert out["response_s"].attrs["units"] == "s" and out.attrs["policy"] == "ARA"
    one = registry.run("Qlen", a[0], s[0], knobs={"n_sites": 4})
    assert one["response_s"].dims == ("job",) and one["mean_response_s"].dims == ()


@pytest.mark.parametrize("bad, match", [([], "non-empty"), ([-1], ">= 0 bytes"), ([1.5], "whole numbers"),
                                        ([[1, 2]], "1-D"), ([True], "numbers of bytes")])
def test_capacities_are_checked_naming_the_parameter(bad, match):
    with pytest.raises(ValueError, match=match):
        contract.check_capacities(bad)


def test_trace_result_refuses_missing_or_unknown_counts():
    with pytest.raises(ValueError, match="must include"):
        contract.trace_result([MB], policy="X", source="s", requests=1, hits=[0], counts={"ssd_reads": [0]},
                              io_bytes=4096)
    counts = {k: [0] for k in ACCESS_NAMES}
    with pytest.raises(ValueError, match="unknown count name"):
        contract.trace_result([MB], policy="X", source="s", requests=1, hits=[0], counts={**counts, "moves": [1]},
                              io_bytes=4096)
    with pytest.raises(ValueError, match="one value per capacity"):
        contract.trace_result([MB, 2 * MB], policy="X", source="s", requests=1, hits=[0], counts=counts,
                              io_bytes=4096)
    out = contract.trace_result([MB], policy="X", source="s", requests=0, hits=[0], counts=counts, io_bytes=4096,
                                cost_model=CACHE_COST)
    assert float(out["hit_ratio"][0]) == 0.0 and float(out["io_cost"][0]) == 0.0
