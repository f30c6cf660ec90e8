"""One contract per kind, checked on every registered name of every kind (not a hand-picked few): each system
registers a small example call (``PolicySpec.example``), runs through ``registry.run`` with its kind's call
shape, and returns what its kind promises (:mod:`tieringlab.policies.contract`)."""

from __future__ import annotations

import jax
import numpy as np
import pytest
import xarray as xr

from tieringlab.policies import contract, registry
from tieringlab.policies.contract import CAPACITY_DIM, KINDS
from tieringlab.policies.iocost import ACCESS_NAMES

ALL = [(kind, name) for kind in KINDS for name in registry.names(kind)]


def _common(out, name: str) -> None:
    assert isinstance(out, xr.Dataset), f"{name} returned {type(out).__name__}"
    assert out.attrs["policy"] == name and out.attrs["source"] == registry.get(name).source


def _trace(out, name, inputs):
    ds, caps = inputs
    assert out[CAPACITY_DIM].values.tolist() == [int(c) for c in caps]
    assert out[CAPACITY_DIM].attrs["units"] == "bytes"
    for v in ("requests", "hits", "hit_ratio", *ACCESS_NAMES):
        assert v in out and out[v].dims[0] == CAPACITY_DIM, f"{name}: {v}"
    assert np.all(out["hits"].values <= out["requests"].values)
    np.testing.assert_allclose(out["hit_ratio"].values, out["hits"].values / out["requests"].values)


def _queueing(out, name, inputs):
    arrivals, _ = inputs
    lead = ("replication", "job") if np.ndim(arrivals) == 2 else ("job",)
    assert out["response_s"].dims == lead and out["response_s"].attrs["units"] == "s"
    np.testing.assert_allclose(out["mean_response_s"].values, out["response_s"].values.mean(axis=-1))
    assert np.all(out["response_s"].values >= 0)


def _controller(out, name, inputs):
    contract.check_controller_result(out)


def _scenario(out, name, inputs):
    contract.check_scenario_result(out)
    assert np.all(np.isfinite(out["mean_response_s"].values)) and np.all(out["mean_response_s"].values > 0)


CHECKS = {"trace": _trace, "queueing": _queueing, "controller": _controller, "scenario": _scenario}


def test_every_kind_has_a_check_and_a_system():
    assert set(CHECKS) == set(KINDS)
    assert {k for k, _ in ALL} == set(KINDS), "a kind with no registered system has an untested contract"


@pytest.mark.parametrize("kind, name", ALL, ids=[f"{k}:{n}" for k, n in ALL])
def test_every_registered_system_follows_its_kinds_contract(kind, name):
    spec = registry.get(name)
    assert spec.example is not None, f"{name}: register a small example call (PolicySpec.example)"
    inputs, kw = spec.example()
    key = {"key": jax.random.key(0)} if spec.random else {}
    out = registry.run(name, *inputs, **kw, **key)
    _common(out, name)
    CHECKS[kind](out, name, inputs)
    if spec.random:  # same key, same answer (explicit randomness)
        again = registry.run(name, *inputs, **kw, **key)
        xr.testing.assert_identical(out, again)


def test_describe_lists_every_name_under_its_kind():
    text = registry.describe()
    for kind, name in ALL:
        assert f"{kind:<10} {name}" in text
