"""The engine rule of the sequential page caches (LRU, ARC, CAR; :mod:`tieringlab.policies.caching`)
on an accelerator: ``engine="auto"`` is the numba engine only on JAX's CPU backend and the JAX scan on
any other backend (a GPU, a TPU), so the same code runs unchanged on a GPU; an explicit ``engine`` is
used as given. No GPU is lent to these tests: the backend JAX reports is monkeypatched, and the numba
engine is made to fail, so that a GPU run that still reached it would be seen.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from tieringlab.policies import caching


@pytest.mark.parametrize("backend, auto", [("cpu", "numba"), ("gpu", "jax"), ("cuda", "jax"), ("rocm", "jax"),
                                           ("tpu", "jax")])
def test_auto_engine_follows_the_backend(monkeypatch, backend, auto):
    monkeypatch.setattr(caching.jax, "default_backend", lambda: backend)
    assert caching._engine("auto") == auto
    assert caching._engine("numba") == "numba" and caching._engine("jax") == "jax"  # explicit: as given


def no_numba(*args, **kwargs):
    raise AssertionError("the numba engine ran on a GPU backend")


def test_gpu_backend_runs_the_jax_engine_with_the_same_results(monkeypatch):
    rng = np.random.default_rng(0)
    keys = rng.zipf(1.3, 400) % 97
    is_write = rng.random(400) < 0.3
    hit, wb = caching.replay("arc", keys, [16], is_write)  # numba on this CPU
    trace = xr.Dataset({"offset": ("request", (keys * 4096).astype(np.int64)),
                        "size": ("request", np.full(400, 4096)), "is_write": ("request", is_write)})
    lru_cpu = caching.simulate(trace, "lru", [16 * 4096])

    monkeypatch.setattr(caching.jax, "default_backend", lambda: "gpu")
    for algo in caching._ALGORITHMS.values():  # each algorithm module's compiled loop
        monkeypatch.setattr(algo, "native_loop", no_numba)
    scans = []
    scan_chunk = caching.scan_chunk
    monkeypatch.setattr(caching, "scan_chunk", lambda *a, **k: scans.append(1) or scan_chunk(*a, **k))
    gpu_hit, gpu_wb = caching.replay("arc", keys, [16], is_write)
    assert scans, "the JAX scan did not run"
    np.testing.assert_array_equal(gpu_hit, hit)
    np.testing.assert_array_equal(gpu_wb, wb)
    lru_gpu = caching.simulate(trace, "lru", [16 * 4096])  # LRU on the JAX engine: exact stack distances
    for var in ("hits", "ssd_reads", "ssd_writes", "md_reads", "md_writes"):
        np.testing.assert_array_equal(lru_gpu[var].values, lru_cpu[var].values)
    with pytest.raises(AssertionError, match="numba engine ran"):  # the guard itself works
        caching.replay("arc", keys, [4], is_write, engine="numba")
