"""The EAFC hybrid-store model (models.hybridstore) against independent truth: the closed-form
finite-source queue, a brute-force CTMC of the closed network, plain OrderedDict LRUs for the hit
curves, and an exact access-by-access replay of a realised partition schedule."""

from __future__ import annotations

import itertools
import math
from collections import OrderedDict

import jax
import numpy as np
import pytest

from tieringlab.models import hybridstore as hys
from tieringlab.models.stackdist import resizing_lru_from_distances, stack_distances
from tieringlab.models.workloads import eafc as wl
from tieringlab.units import GB, HOUR, MS, MiB

# ----------------------------------------------------------------------------------------- queueing


def machine_repairman_throughput(N, S, Z):
    """M/M/1//N (one exponential server, N jobs thinking for exp(Z)): X = (1 - p0) / S with
    p0 = 1 / sum_n N! / (N - n)! (S / Z)^n."""
    terms = [math.factorial(N) / math.factorial(N - n) * (S / Z) ** n for n in range(N + 1)]
    return (1.0 - 1.0 / sum(terms)) / S


@pytest.mark.parametrize("N", [1, 2, 5, 12, 32])
def test_mva_single_queue_is_machine_repairman(N):
    S, Z = 8 * MS, 20 * MS
    X, R, _ = hys.mva(np.array([S]), np.array([1.0]), Z, N, 40)
    assert float(X) == pytest.approx(machine_repairman_throughput(N, S, Z), rel=1e-12)
    assert float(R[0]) == pytest.approx(N / float(X) - Z, rel=1e-12)  # Little's law


def ctmc_closed_network(N, probs, services, Z):
    """Brute force: stations k (exp service services[k]) fed from a think stage (exp(Z) per job) with
    routing probabilities probs (sum 1); state = jobs at each station. Returns throughput."""
    K = len(probs)
    states = [s for s in itertools.product(range(N + 1), repeat=K) if sum(s) <= N]
    index = {s: i for i, s in enumerate(states)}
    Q = np.zeros((len(states), len(states)))
    for s in states:
        i = index[s]
        thinking = N - sum(s)
        for k in range(K):
            if thinking and probs[k] > 0:
                t = list(s)
                t[k] += 1
                Q[i, index[tuple(t)]] += thinking / Z * probs[k]
            if s[k]:
                t = list(s)
                t[k] -= 1
                Q[i, index[tuple(t)]] += 1.0 / services[k]
        Q[i, i] = -Q[i].sum()
    A = np.vstack([Q.T, np.ones(len(states))])
    b = np.zeros(len(states) + 1)
    b[-1] = 1.0
    pi = np.linalg.lstsq(A, b, rcond=None)[0]
    return sum(pi[index[s]] * sum(1.0 / services[k] for k in range(K) if s[k]) for s in states)


@pytest.mark.parametrize("N,h_ssd", [(1, 0.9), (3, 0.7), (4, 0.95)])
def test_op_response_matches_ctmc(N, h_ssd):
    """Two SSD units and two HDD spindles, reads only, no RAM: MVA throughput and read latency equal the
    CTMC's (latency = N / X - think, Little's law)."""
    h = hys.HybridStoreParams(k_ssd=2, k_hdd=2, s_ssd=0.5 * MS, s_hdd=6 * MS)
    Z = 2 * MS
    X, lat = hys.op_response(hys.device_of(h), 0.0, h_ssd, N, Z, 1.0, 0.0, 8)
    miss = 1 - h_ssd
    x_ref = ctmc_closed_network(N, [h_ssd / 2, h_ssd / 2, miss / 2, miss / 2],
                                [h.s_ssd, h.s_ssd, h.s_hdd, h.s_hdd], Z)
    assert float(X) == pytest.approx(x_ref, rel=1e-9)
    assert float(lat) == pytest.approx(N / x_ref - Z, rel=1e-9)


def test_op_response_limits():
    """All hits in RAM: latency l_ram and X = N / (Z + l_ram); more misses -> slower and fewer ops."""
    h = hys.HybridStoreParams()
    dev = hys.device_of(h)
    X, lat = hys.op_response(dev, 1.0, 0.0, 20, 1 * MS, 1.0, 0.0, 20)
    assert float(lat) == pytest.approx(h.l_ram)
    assert float(X) == pytest.approx(20 / (1 * MS + h.l_ram))
    lats = [float(hys.op_response(dev, 0.0, 1 - m, 32, 0.5 * MS, 1.0, 0.0, 32)[1]) for m in (0.0, 0.05, 0.2, 0.5)]
    assert all(a < b for a, b in zip(lats, lats[1:]))


# ---------------------------------------------------------------------------------- hit curves


def brute_curves(keys, is_read, ram_units, sizes, block):
    """RAM: one OrderedDict LRU of ram_units over every access; SSD: one OrderedDict LRU per size over
    the RAM-miss reads. Returns per-block reads, RAM hits, SSD hits (blocks x sizes), cumulated."""
    n = len(keys)
    nb = -(-n // block)
    reads = np.zeros(nb, int)
    ram_h = np.zeros(nb, int)
    ssd_h = np.zeros((nb, len(sizes)), int)
    ram = OrderedDict()
    ssd = [OrderedDict() for _ in sizes]
    for i, (k, r) in enumerate(zip(keys, is_read)):
        b = i // block
        hit_ram = k in ram
        if hit_ram:
            ram.move_to_end(k)
        elif ram_units > 0:
            if len(ram) >= ram_units:
                ram.popitem(last=False)
            ram[k] = None
        if not r:
            continue
        reads[b] += 1
        if hit_ram:
            ram_h[b] += 1
            continue
        for j, c in enumerate(sizes):
            d = ssd[j]
            if k in d:
                d.move_to_end(k)
                ssd_h[b, j] += 1
            elif c > 0:
                if len(d) >= c:
                    d.popitem(last=False)
                d[k] = None
    cum = lambda a: np.concatenate([np.zeros((1,) + a.shape[1:], int), np.cumsum(a, axis=0)])
    return cum(reads), cum(ram_h), cum(ssd_h)


@pytest.mark.parametrize("ram_units", [0, 7])
def test_trace_curves_match_plain_lrus(ram_units):
    rng = np.random.default_rng(3)
    n = 3000
    keys = (rng.zipf(1.2, n) % 60).astype(np.int64)
    is_read = rng.random(n) < 0.85
    cur = hys.trace_curves(keys, is_read, ram_units, n_sizes=9, max_blocks=40)
    sizes = np.ceil(np.arange(9) * cur["step"] - 1e-9).astype(int)
    nb = -(-n // cur["block"])
    r, rh, sh = brute_curves(keys.tolist(), is_read.tolist(), ram_units, sizes.tolist(), cur["block"])
    np.testing.assert_array_equal(cur["cum_reads"][: nb + 1], r)
    np.testing.assert_array_equal(cur["cum_ram"][: nb + 1], rh)
    np.testing.assert_array_equal(cur["cum_ssd"][: nb + 1], sh)
    assert np.all(cur["cum_ssd"][nb:] == cur["cum_ssd"][nb])  # padding repeats the last edge
    assert sizes[-1] == cur["n_distinct_ssd"]


# ------------------------------------------------------------------------------- the closed loop


@pytest.fixture(scope="module")
def small_filebench():
    h = hys.HybridStoreParams(n_sizes=65, max_blocks=2048)
    p = wl.FileBenchParams(working_set_bytes=4 * GB, n_files=160_000, duration_s=2 * HOUR, unit_bytes=4 * MiB)
    ph = p.phases()[0]
    n = int(math.ceil(hys.max_ops_per_s(ph, h) * ph.duration_s / (p.unit_bytes / (p.working_set_bytes / p.n_files))))
    w = wl.filebench_webserver(jax.random.key(0), p, [n + 1])
    return w, h, hys.observations(w, h, 600.0)


def test_max_ops_bound_holds_and_stream_positions(small_filebench):
    """The scan never runs out of stream (the bound is an upper bound) and its throughput never exceeds
    max_ops_per_s."""
    from tieringlab.policies import registry

    w, h, obs = small_filebench
    r = registry.run("vanilla", obs, key=jax.random.key(1))
    assert float(r["ops_per_s"].max()) <= hys.max_ops_per_s(w.phases[0], h) * (1 + 1e-9)
    assert float(r["position"].max()) <= w.keys.size


def test_step_approximation_against_exact_replay(small_filebench):
    """Replay the realised partition schedule access by access (resizing_lru_from_distances on the
    exact stack distances) and compare each window's SSD hit ratio with the scan's bilinear, step-level
    estimate: within 0.02 absolute in every window. Also C19: usage never above 90 % of the partition."""
    from tieringlab.policies import registry
    from tieringlab.units import MS

    w, h, obs = small_filebench
    r = registry.run("EAFC", obs, knobs={"lat_max_s": 10 * MS}, key=jax.random.key(2))
    assert float((r["used_bytes"] / r["partition_bytes"]).max()) <= 0.9 + 1e-12
    ends = np.concatenate([[0.0], r["position"].isel(sample=-1).values])
    cap_units = np.floor(0.9 * r["partition_bytes"].values / w.unit_bytes + 1e-9).astype(np.int64)
    n_used = int(np.ceil(ends[-1]))
    acc = np.arange(n_used)
    epoch_of = np.minimum(np.searchsorted(ends[1:], acc, side="right"), len(cap_units) - 1)
    hit, _ = resizing_lru_from_distances(stack_distances(w.keys[:n_used]), cap_units[epoch_of])
    exact = (np.bincount(epoch_of, weights=hit, minlength=len(cap_units))
             / np.bincount(epoch_of, minlength=len(cap_units)))
    est = (r["ssd_hit_ratio"] * r["reads_per_s"]).sum("sample") / r["reads_per_s"].sum("sample")
    np.testing.assert_allclose(est.values, exact, atol=0.02)


def test_observations_bad_input(small_filebench):
    w, h, _ = small_filebench
    with pytest.raises(ValueError, match="cwnd_s must be at least the sampling period"):
        hys.observations(w, h, 4.0)
    with pytest.raises(ValueError, match="whole number of samples"):
        hys.observations(w, h, 602.5)
    with pytest.raises(ValueError, match=r"HybridStoreParams\.noise_sigma: expected a number in \[0\.0, 2\.0\], "
                                         r"got -0\.1"):
        hys.HybridStoreParams(noise_sigma=-0.1)
    with pytest.raises(ValueError, match=r"HybridStoreParams\.k_hdd: expected an integer in \[1, 1024\], got 0"):
        hys.HybridStoreParams(k_hdd=0)


def test_with_cwnd_regrids_only_the_windows(small_filebench):
    """Regridding to another controller window keeps the curves and gives the grid observations() builds."""
    w, h, obs = small_filebench
    for c in (300.0, 1200.0):
        a = hys.with_cwnd(obs, c)
        b = hys.observations(w, h, c)
        assert a.sizes["epoch"] == b.sizes["epoch"] and a.sizes["sample"] == b.sizes["sample"]
        np.testing.assert_array_equal(a["phase_of_sample"].values, b["phase_of_sample"].values)
        np.testing.assert_array_equal(a["cum_ssd_hits"].values, obs["cum_ssd_hits"].values)
        assert a.attrs["cwnd_s"] == c
    with pytest.raises(ValueError, match="cwnd_s must be at least the sampling period"):
        hys.with_cwnd(obs, 1.0)
