"""The all-flash datacenter model (AutoTiering Table IV, Eq. 5) against closed forms and plain references:
M/M/c (Erlang C), M/M/1, Little's law, max-min fair shares, hand-computed tier figures, migrations."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tieringlab.models import allflash as af
from tieringlab.models import queueing as q
from tieringlab.models.devices import autotiering_tier_table
from tieringlab.units import GB, MB, KiB, MiB

TABLE_IV = autotiering_tier_table()


def tiers(n_disks=(2, 2, 2)):
    return af.tier_arrays(TABLE_IV, n_disks)


# ----------------------------------------------------------------------------- M/M/c closed forms

def erlang_c_textbook(c: int, a: float) -> float:
    """P_W of M/M/c written plainly: (a^c / c!) (c / (c - a)) / (sum_{k<c} a^k/k! + (a^c / c!) c / (c - a))."""
    top = a**c / math.factorial(c) * c / (c - a)
    return top / (sum(a**k / math.factorial(k) for k in range(c)) + top)


@pytest.mark.parametrize("c", [1, 2, 3, 8, 32, 64])
@pytest.mark.parametrize("rho", [0.0, 0.1, 0.5, 0.9, 0.98])
def test_erlang_c_matches_textbook_formula(c, rho):
    got = float(q.erlang_c(c, rho, c_max=128))
    assert got == pytest.approx(erlang_c_textbook(c, c * rho), rel=1e-9, abs=1e-300)


def test_erlang_c_small_cases_by_hand():
    assert float(q.erlang_c(1, 0.5)) == pytest.approx(0.5)            # M/M/1: P_W = rho
    assert float(q.erlang_c(2, 0.5)) == pytest.approx(2 * 0.25 / 1.5)  # M/M/2: 2 rho^2 / (1 + rho)
    np.testing.assert_allclose(q.erlang_c(np.array([1, 2, 4]), 0.5, c_max=4),
                               [erlang_c_textbook(c, 0.5 * c) for c in (1, 2, 4)], rtol=1e-12)


def test_mmc_reduces_to_mm1_and_is_inf_when_unstable():
    for lam, mu in [(0.3, 1.0), (0.9, 1.0), (5.0, 8.0)]:
        expected = float(q.mm1_mean_response(lam, mu))
        assert float(q.mmc_mean_response(lam, 1 / mu, 1)) == pytest.approx(expected, rel=1e-12)
    # M/M/2 mean wait: C(2, a) / (2 mu - lam)
    lam, es = 1.2, 1.0
    assert float(q.mmc_mean_wait(lam, es, 2)) == pytest.approx(erlang_c_textbook(2, lam * es) / (2 / es - lam))
    assert np.isinf(float(q.mmc_mean_wait(3.0, 1.0, 2)))


def test_erlang_c_rejects_bad_servers():
    with pytest.raises(ValueError, match="c must be whole numbers"):
        q.erlang_c(0, 0.5)
    with pytest.raises(ValueError, match="c_max"):
        q.erlang_c(5, 0.5, c_max=4)


# ----------------------------------------------------------------------------- tiers and caps

def test_table_iv_unloaded_latencies_and_device_times_by_hand():
    t = tiers()
    l0 = np.asarray(af.unloaded_latency(t, 4 * KiB, 32))
    # T1 4 KiB read: 32 / 240K + 4096 / 1e9 = 133.33 + 4.096 µs
    assert l0[0, 0] == pytest.approx(32 / 240e3 + 4096 / 1e9)
    # T2 4 KiB write: 32 / 37K + 4096 / 930e6
    assert l0[1, 1] == pytest.approx(32 / 37e3 + 4096 / 930e6)
    u = np.asarray(af.device_time(t, np.array([4 * KiB, 64 * KiB])))
    assert u.shape == (3, 2, 2)
    assert u[0, 0, 0] == pytest.approx(1 / 240e3)                       # IOPS-bound 4 KiB read
    assert u[0, 0, 1] == pytest.approx(64 * KiB / 1e9)                  # bandwidth-bound 64 KiB read
    assert u[2, 1, 0] == pytest.approx(1 / 18e3)


def test_capacity_caps_eq5_by_hand():
    c = af.capacity_caps(tiers((2, 3, 4)), 0.9, 0.8)
    np.testing.assert_allclose(c.P, [0.9 * 2 * 240e3, 0.9 * 3 * 200e3, 0.9 * 4 * 99e3])
    np.testing.assert_allclose(c.B, [0.9 * 2 * 1000 * MB, 0.9 * 3 * 1400 * MB, 0.9 * 4 * 540 * MB])
    np.testing.assert_allclose(c.S, [0.8 * 2 * 480 * GB, 0.8 * 3 * 960 * GB, 0.8 * 4 * 960 * GB])
    np.testing.assert_allclose(c.B_rw[:, 1], [0.9 * 2 * 870 * MB, 0.9 * 3 * 930 * MB, 0.9 * 4 * 480 * MB])


def test_tier_table_errors_name_table_row_and_column():
    with pytest.raises(ValueError, match=r"tier table.*missing column.*write_iops"):
        af.tier_arrays(TABLE_IV.drop(columns=["write_iops"]), (2, 2, 2))
    bad = TABLE_IV.copy()
    bad.loc[2, "read_bytes_per_s"] = -5.0
    with pytest.raises(ValueError, match=r"row 1 \(tier 2\), column 'read_bytes_per_s'"):
        af.tier_arrays(bad, (2, 2, 2))
    with pytest.raises(ValueError, match=r"row 2 \(tier 3\), column 'n_disks'"):
        af.tier_arrays(TABLE_IV, (2, 2, 0))
    with pytest.raises(ValueError, match="one entry per tier"):
        af.tier_arrays(TABLE_IV, (2, 2))


def test_check_fits_names_the_tier_and_the_vmdk():
    with pytest.raises(ValueError, match=r"row 0 \(tier 1\), column 'disk_size_bytes'.*smaller than one VMDK"
                                         r".*row 1 \(big\)"):
        af.check_fits(np.array([10e9, 900e9]), np.array([500e9, 2000e9]), vmdk_labels=["a", "big"])
    with pytest.raises(ValueError, match="sums to"):
        af.check_fits(np.array([400e9] * 5), np.array([500e9, 500e9]))


def test_datacenter_params_reject_bad_values():
    with pytest.raises(ValueError, match="n_disks"):
        af.DatacenterParams(n_disks=(2, 0))
    with pytest.raises(ValueError, match="rho_max"):
        af.DatacenterParams(rho_max=1.0)
    with pytest.raises(ValueError, match="n_iter_probe"):
        af.DatacenterParams(n_iter_probe=0)


# ----------------------------------------------------------------------------- max-min fair shares

def waterfill_reference(d, cap):
    """Progressive filling, plainly: raise every unmet demand together until the capacity is used."""
    d = list(map(float, d))
    alloc = [0.0] * len(d)
    left = float(cap)
    active = [i for i in range(len(d))]
    while active and left > 1e-15:
        share = left / len(active)
        need = min(d[i] - alloc[i] for i in active)
        step = min(share, need)
        for i in active:
            alloc[i] += step
        left -= step * len(active)
        active = [i for i in active if d[i] - alloc[i] > 1e-12]
    return np.array(alloc)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 10), min_size=1, max_size=12), st.floats(0, 40))
def test_waterfill_equals_progressive_filling(d, cap):
    padded = np.zeros(12)                       # zero demands change nothing: one compiled shape
    padded[: len(d)] = d
    got = np.asarray(af.waterfill(padded[None, :], np.array([cap])))[0][: len(d)]
    np.testing.assert_allclose(got, waterfill_reference(d, cap), atol=1e-9)
    assert got.sum() <= max(cap, 0) + 1e-9 or got.sum() == pytest.approx(sum(d))
    assert np.all(got <= np.array(d) + 1e-12)


# ----------------------------------------------------------------------------- the serving fixed point

def one_vmdk(t, sim, lam, f, s, window, tier=0, mig=0.0):
    return af.serve(t, sim, jnp.array([tier]), jnp.array([lam]), jnp.array([f]), jnp.array([s]), jnp.array([window]),
                    jnp.array([mig, 0.0, 0.0]))


@pytest.mark.parametrize("lam", [1e3, 2e4, 6e4])
def test_open_vmdk_on_single_server_tier_is_mm1(lam):
    # QD_ref = 1 and one disk: the tier is one server; an IO of 4 KiB read on T2 holds it u = 1/200K s
    t = tiers((1, 1, 1))
    sim = af.DatacenterParams(n_disks=(1, 1, 1), qd_ref=1, source="closed")
    r = one_vmdk(t, sim, lam, 1.0, 4 * KiB, 1e9, tier=1)
    u = 1 / 200e3
    assert float(r.x[0]) == pytest.approx(lam)
    l0 = 1 / 200e3 + 4 * KiB / 1400e6
    # latency = L0 + W_q, and W_q + u is the M/M/1 response 1 / (mu - lam)
    assert float(r.lat[0]) - l0 + u == pytest.approx(float(q.mm1_mean_response(lam, 1 / u)), rel=1e-9)
    assert float(r.rho[1]) == pytest.approx(lam * u)


def test_open_vmdk_on_many_servers_is_mmc():
    t = tiers()
    sim = af.DatacenterParams(source="closed")
    lam = 300e3                                         # 4 KiB reads on T1: rho = 300K / 480K
    r = one_vmdk(t, sim, lam, 1.0, 4 * KiB, 1e9, tier=0)
    es = 32 / 240e3                                     # mean server time QD_ref u
    wq = erlang_c_textbook(64, lam * es) * es / (64 - lam * es)
    assert float(r.x[0]) == pytest.approx(lam)
    assert float(r.wq[0]) == pytest.approx(wq, rel=1e-9)
    assert float(r.lat[0]) == pytest.approx(32 / 240e3 + 4 * KiB / 1e9 + wq, rel=1e-12)


def test_window_bound_vmdk_obeys_littles_law():
    t = tiers()
    sim = af.DatacenterParams(source="closed")
    r = one_vmdk(t, sim, 1e6, 0.8, 8 * KiB, 4.0, tier=1)   # 4 outstanding IOs, demand far above
    x, lat = float(r.x[0]), float(r.lat[0])
    assert x < 1e6
    assert x * lat == pytest.approx(4.0, rel=1e-6)       # L = X W
    assert float(r.rho[1]) < sim.rho_max
    # open source: the same VMDK's offered IOs queue in the guest, g = min(lam L / q, rho_max) = rho_max
    r_open = one_vmdk(t, af.DatacenterParams(), 1e6, 0.8, 8 * KiB, 4.0, tier=1)
    assert float(r_open.x[0]) == pytest.approx(x, rel=1e-12)   # the window, not the source, sets the rate
    assert float(r_open.lat[0]) == pytest.approx(4.0 / x / (1 - 0.98), rel=1e-6)


def test_open_source_guest_queue_by_hand():
    """Open source below its window: latency L / (1 - lam L / q) with L the closed-loop latency, and the
    TSSCS slope d lat / d inject = 1 / (1 - g)^2 (a light tier: the tier's wait barely moves)."""
    t = tiers()
    lam, q = 2e3, 1.0
    closed = one_vmdk(t, af.DatacenterParams(source="closed"), lam, 1.0, 4 * KiB, q, tier=1)
    opened = one_vmdk(t, af.DatacenterParams(), lam, 1.0, 4 * KiB, q, tier=1)
    L = float(closed.lat[0])
    g = lam * L / q                                     # about 0.33 on T2 (163 µs)
    assert 0.2 < g < 0.5
    assert float(opened.x[0]) == pytest.approx(lam)
    assert float(opened.lat[0]) == pytest.approx(L / (1 - g), rel=1e-9)
    dx = 1e-6
    r2 = af.serve(t, af.DatacenterParams(), jnp.array([1]), jnp.array([lam]), jnp.array([1.0]),
                  jnp.array([4.0 * KiB]), jnp.array([q]), jnp.zeros(3), inject=dx)
    slope = (float(r2.lat[0]) - float(opened.lat[0])) / dx
    assert slope == pytest.approx(1 / (1 - g) ** 2, rel=1e-2)


def test_saturated_tier_splits_device_time_max_min_fair():
    t = tiers()
    sim = af.DatacenterParams(source="closed")
    # three write streams on T3 (18K write IOPS per disk, 2 disks), windows huge: demand >> capacity
    lam = jnp.array([50e3, 50e3, 1e3])
    r = af.serve(t, sim, jnp.array([2, 2, 2]), lam, jnp.zeros(3), jnp.full(3, 4 * KiB), jnp.full(3, 1e4), jnp.zeros(3))
    x = np.asarray(r.x)
    assert float(r.rho[2]) == pytest.approx(sim.rho_max, rel=1e-6)
    assert x[2] == pytest.approx(1e3, rel=1e-6)                        # the small one is served in full
    total = sim.rho_max * 2 * 18e3                                     # write IOs the tier can do
    assert x[0] == pytest.approx(x[1], rel=1e-9)
    assert x.sum() == pytest.approx(total, rel=1e-6)
    # backlogged at its window: latency q / X
    assert float(r.lat[0]) == pytest.approx(1e4 / x[0], rel=1e-6)


def test_fixed_point_is_self_consistent_on_random_mixes():
    """At the solution each tier's wait is the M/M/c wait of the load it produces (unsaturated tiers),
    and every VMDK runs at its window rate at that wait unless the tier is full."""
    t = tiers()
    sim = af.DatacenterParams()
    rng = np.random.default_rng(3)
    for _ in range(6):
        V = 20
        place = rng.integers(0, 3, V)
        lam = rng.uniform(10, 8e4, V)
        f = rng.uniform(0, 1, V)
        s = rng.choice([4 * KiB, 8 * KiB, 64 * KiB], V)
        w = rng.choice([1.0, 4.0, 32.0, 256.0], V)
        r = af.serve(t, sim, jnp.asarray(place), jnp.asarray(lam), jnp.asarray(f), jnp.asarray(s), jnp.asarray(w),
                     jnp.zeros(3))
        x, wq, rho = np.asarray(r.x), np.asarray(r.wq), np.asarray(r.rho)
        u_all = np.asarray(af.device_time(t, s))            # (T, 2, V)
        l0_all = np.asarray(af.unloaded_latency(t, s, 32))
        for k in range(3):
            on = place == k
            if not on.any():
                continue
            u = f[on] * u_all[k, 0, on] + (1 - f[on]) * u_all[k, 1, on]
            l0 = f[on] * l0_all[k, 0, on] + (1 - f[on]) * l0_all[k, 1, on]
            assert rho[k] == pytest.approx(min((x[on] * u).sum() / 2, 0.98), rel=1e-9)
            if rho[k] < 0.98 - 1e-6:
                es = 32 * (x[on] * u).sum() / x[on].sum()
                a = rho[k] * 64
                expected = erlang_c_textbook(64, a) * es / (64 * (1 - rho[k]))
                assert wq[k] == pytest.approx(expected, rel=1e-6, abs=1e-12)
                np.testing.assert_allclose(x[on], np.minimum(lam[on], w[on] / (l0 + wq[k])), rtol=1e-6)
            assert np.all(x[on] <= lam[on] * (1 + 1e-12))


# ----------------------------------------------------------------------------- TSSCS ground truth

def test_probe_slopes_and_sampling_noise():
    """A light open-loop VMDK feels every injected µs (slope 1, intercept = its latency); write streams
    that saturate their tier absorb the delay in the tier queue (slope < 1); the samples' CV is
    ``cv_io / sqrt(n_io)``."""
    from tieringlab.models.regression import calibrate

    t = tiers()
    sim = af.DatacenterParams(source="closed")
    levels = jnp.array([0.0, 50e-6, 100e-6, 200e-6])
    place = jnp.array([0, 2, 2, 1])
    lam = jnp.array([1e3, 60e3, 60e3, 4.0])
    f = jnp.array([1.0, 0.0, 0.0, 1.0])
    w = jnp.array([1e6, 64.0, 64.0, 1.0])
    args = (place, lam, f, jnp.full(4, 4 * KiB), w, jnp.zeros(3))
    samples, n_io = af.probe_samples(jax.random.key(0), t, sim, *args, levels, 400, 1.0)
    m, b, conf, cv = calibrate(levels, samples)
    base = af.serve(t, sim, *args)
    assert float(m[0]) == pytest.approx(1.0, abs=0.02)
    assert float(b[0]) == pytest.approx(float(base.lat[0]), abs=0.5e-6)
    assert float(m[1]) < 0.5 and float(m[2]) < 0.5                  # injected delay absorbed by the queue
    assert float(n_io[0, 0]) == pytest.approx(1e3)
    assert float(n_io[3, 0]) == pytest.approx(4.0)
    assert float(cv[3]) == pytest.approx(1 / np.sqrt(4.0), rel=0.15)  # n_io = 4
    assert float(cv[0]) == pytest.approx(1 / np.sqrt(1e3), rel=0.15)
    assert float(conf[3]) == pytest.approx(1 - float(cv[3]))


# ----------------------------------------------------------------------------- migrations

def test_one_copy_runs_at_the_bottleneck_of_source_read_and_target_write():
    t = tiers()
    sim = af.DatacenterParams()
    size = 800 * GB
    moved, util, done = af.migration_step(t, sim, jnp.array([size, 0.0]), jnp.array([0, 1]), jnp.array([2, 1]),
                                          jnp.zeros(3), 300.0, jnp.zeros(2))
    # 1 MiB IOs are bandwidth-bound everywhere: read share 0.98 * 2 * 1000 MB/s, write 0.98 * 2 * 480 MB/s
    rate = min(0.98 * 2 * 1000 * MB, 0.98 * 2 * 480 * MB)
    assert float(moved[0]) == pytest.approx(rate * 300.0)
    assert float(moved[1]) == 0.0 and not bool(done[0])
    np.testing.assert_allclose(util, [rate / (1000 * MB) / 2, 0.0, 0.98], rtol=1e-12)
    # a small copy finishes within the epoch and uses device time only for its bytes
    moved, util, done = af.migration_step(t, sim, jnp.array([1 * GB]), jnp.array([0]), jnp.array([2]), jnp.zeros(3),
                                          300.0, jnp.zeros(1))
    assert bool(done[0]) and float(moved[0]) == 1 * GB
    assert float(util[2]) == pytest.approx(1 * GB / 300.0 / (480 * MB) / 2)


def test_copies_share_a_tier_and_a_busy_tier_lends_only_its_floor():
    t = tiers()
    sim = af.DatacenterParams(mig_share="floor")
    moved, _, _ = af.migration_step(t, sim, jnp.array([1e15, 1e15]), jnp.array([0, 1]), jnp.array([2, 2]),
                                    jnp.zeros(3), 1.0)
    np.testing.assert_allclose(moved, [0.98 * 2 * 480 * MB / 2] * 2)
    moved, _, _ = af.migration_step(t, sim, jnp.array([1e15]), jnp.array([0]), jnp.array([1]),
                                    jnp.array([0.0, 0.99, 0.0]), 1.0)
    assert float(moved[0]) == pytest.approx(sim.mig_min_share * 2 * 930 * MB)
    assert sim.mig_io_bytes == MiB


def test_a_copy_is_one_more_stream_in_the_fair_share():
    """mig_share = 'fair': on a saturated T2 (2 disks, 0.98 x 2 disk-s/s) with VMDKs wanting 0.1, 1.5 and 1.5
    disk-s/s, a copy into T2 is a fourth stream: the light VMDK keeps 0.1, the other three get the water level
    (1.96 - 0.1) / 3 = 0.62 disk-s/s; the copy writes 1 MiB IOs at 930 MB/s per disk. On an idle source (T1) it
    could read faster, so T2's share sets the rate."""
    t = tiers()
    sim = af.DatacenterParams()
    assert sim.mig_share == "fair"
    src = jnp.array([0, 1, 1, 1])                       # VMDK 0 is copied T1 -> T2; 1-3 live on T2
    work = jnp.array([0.0, 0.1, 1.5, 1.5])
    moved, util, done = af.migration_step(t, sim, jnp.array([1e15, 0.0, 0.0, 0.0]), src, jnp.array([1, 1, 1, 1]),
                                          jnp.array([0.0, 0.98, 0.0]), 1.0, work)
    level = (0.98 * 2 - 0.1) / 3
    assert float(moved[0]) == pytest.approx(level * 930 * MB, rel=1e-9)
    assert float(util[1]) == pytest.approx(level / 2, rel=1e-9)
    with pytest.raises(ValueError, match="fg_work"):
        af.migration_step(t, sim, jnp.array([1.0]), jnp.array([0]), jnp.array([1]), jnp.zeros(3), 1.0)


# ----------------------------------------------------------------------------- first fit

def first_fit_reference(pref, sizes, caps):
    load = [0.0] * len(caps)
    out, fits = [], []
    for p, s in zip(pref, sizes):
        room = [k for k in range(len(caps)) if load[k] + s <= caps[k]]
        t = p if p in room else (room[0] if room else p)
        load[t] += s
        out.append(t)
        fits.append(bool(room))
    return out, fits


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(1, 9)), min_size=1, max_size=15),
       st.tuples(st.integers(1, 20), st.integers(1, 20), st.integers(1, 20)))
def test_first_fit_equals_reference(items, caps):
    pref = np.array([p for p, _ in items])
    sizes = np.array([float(s) for _, s in items])
    n = len(items)
    pad = 16 - n                                 # trailing zero-size items change no load: one shape
    tier, fitted, load = af.first_fit(np.concatenate([pref, np.zeros(pad, int)]),
                                      np.concatenate([sizes, np.zeros(pad)]), np.array(caps, float))
    tier, fitted = np.asarray(tier)[:n], np.asarray(fitted)[:n]
    ref_tier, ref_fits = first_fit_reference(pref, sizes, caps)
    assert list(np.asarray(tier)) == ref_tier
    assert list(np.asarray(fitted)) == ref_fits
    np.testing.assert_allclose(load, [sizes[np.asarray(tier) == k].sum() for k in range(3)])


def test_tier_table_from_dataframe_keeps_its_labels():
    df = pd.DataFrame({c: [1.0, 2.0] for c in af.TIER_COLUMNS}, index=["fast", "slow"])
    df.loc["slow", "write_iops"] = np.nan
    with pytest.raises(ValueError, match=r"row 1 \(tier slow\), column 'write_iops'"):
        af.tier_arrays(df, (1, 1))


def test_tier_latency_measured_and_datasheet_readings():
    t = tiers()
    meas = af.Measured(tier=jnp.array([0, 0, 2]), iops_rw=jnp.array([[100.0, 0.0], [0.0, 300.0], [50.0, 50.0]]),
                       bytes_rw=jnp.zeros((3, 2)), lat=jnp.array([1e-4, 1e-3, 5e-3]), size=jnp.ones(3))
    f = 150.0 / 500.0                                   # global read share
    l0 = np.asarray(af.unloaded_latency(t, 4 * KiB, 32))
    sheet = f * l0[:, 0] + (1 - f) * l0[:, 1]
    got = np.asarray(af.tier_latency(meas, t, 32))
    np.testing.assert_allclose(got, [(100 * 1e-4 + 300 * 1e-3) / 400, sheet[1], 5e-3])   # T2 served nothing
    np.testing.assert_allclose(af.tier_latency(meas, t, 32, True), sheet)
