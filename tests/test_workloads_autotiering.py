"""AutoTiering Table V workloads and scenarios: derived sizes, VMDK sizing, MMPP-driven dynamics,
bad tables, determinism."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

from tieringlab.models.devices import autotiering_tier_table
from tieringlab.models.mmpp import MMPP2
from tieringlab.models.workloads import autotiering as wl
from tieringlab.units import GB, KiB


def test_table_v_implied_io_sizes():
    df = wl.vm_table()
    assert len(df) == 14
    io = df["io_bytes"]
    for w in ("BasicVerify", "SSDSteady", "Zipf IOs", "AsyncRead", "RandZone"):
        assert io[w] == pytest.approx(4 * KiB, rel=2e-3)
    assert io["Flow"] == pytest.approx(8 * KiB, rel=1e-3)
    assert io["SurfaceScan"] == pytest.approx(64 * KiB, rel=1e-3)
    assert io["SyncWrite"] == pytest.approx(4 * KiB)
    assert df.loc["SSDTest", "read_fractions"] == (1.0, 1.0, 0.0, 0.0)


def test_window_phases_match_the_closed_form_transition_matrix():
    mm = MMPP2(3.0, 1.0, 1 / 300.0, 1 / 300.0 * 0.05 / 0.95)
    P = np.asarray(mm.window_transition(300.0))
    Q = np.array([[-mm.r12, mm.r12], [mm.r21, -mm.r21]])
    np.testing.assert_allclose(P, scipy.linalg.expm(Q * 300.0), rtol=1e-12)
    ph = np.asarray(mm.sample_window_phases(jax.random.key(4), 4000, 300.0, shape=(50,)))
    assert ph.shape == (4000, 50)
    assert np.mean(ph == 0) == pytest.approx(0.05, abs=0.005)        # stationary share of spikes
    prev, nxt = ph[:-1].ravel(), ph[1:].ravel()
    assert np.mean(nxt[prev == 0] == 0) == pytest.approx(P[0, 0], abs=0.02)
    assert np.mean(nxt[prev == 1] == 0) == pytest.approx(P[1, 0], abs=0.003)


def test_vmdk_sizes_fill_the_chosen_fraction_and_zipf_is_scaled():
    wp = wl.WorkloadParams()
    raw = 4800 * GB
    v = wl.make_vmdks(jax.random.key(0), wl.vm_table(), raw, wp)
    assert v.size_bytes.shape == (28,)
    assert float(jnp.sum(v.size_bytes)) == pytest.approx(0.6 * raw)
    np.testing.assert_allclose(np.asarray(v.size_bytes)[~v.is_data], 40 * GB)
    zipf_data = np.flatnonzero(v.is_data)[2]
    assert float(v.base_iops[zipf_data]) == pytest.approx(0.02 * 1942e3)
    assert float(v.base_iops[zipf_data - 1]) == pytest.approx(0.01 * 0.02 * 1942e3)   # system disk: 1 % of the VM
    assert float(v.io_bytes[zipf_data - 1]) == 4 * KiB


def test_pooled_utilisation_by_hand_and_the_scenario_scales_every_rate_by_one_factor():
    from tieringlab.models import allflash as af

    t = af.tier_arrays(autotiering_tier_table(), (2, 2, 2))
    # 4 KiB reads: the pooled tiers do 2 x (240K + 200K + 99K) IO/s (IOPS-bound on every tier); 4 KiB writes:
    # 2 x (19K + 37K + 18K); 64 KiB reads on T3: 540 MB/s / 64 KiB per disk (bandwidth-bound)
    c_r4, c_w4 = 2 * (240e3 + 200e3 + 99e3), 2 * (19e3 + 37e3 + 18e3)
    got = wl.pooled_utilisation(t, [1e5, 3e4], [4 * KiB, 4 * KiB], [1.0, 0.25])
    assert got == pytest.approx(1e5 / c_r4 + 3e4 * (0.25 / c_r4 + 0.75 / c_w4), rel=1e-12)
    c_r64 = 2 * (min(240e3, 1000e6 / (64 * KiB)) + min(200e3, 1400e6 / (64 * KiB)) + min(99e3, 540e6 / (64 * KiB)))
    assert wl.pooled_utilisation(t, [1e3], [64 * KiB], [1.0]) == pytest.approx(1e3 / c_r64, rel=1e-12)
    kw = dict(tier_table=autotiering_tier_table(), n_disks=(2, 2, 2), n_epochs=3)
    key = jax.random.key(4)
    printed = wl.scenario(key, wp=wl.WorkloadParams(pooled_utilisation=None), **kw)
    scaled = wl.scenario(key, **kw)
    ratio = scaled["base_iops"].values / printed["base_iops"].values
    np.testing.assert_allclose(ratio, scaled.attrs["load_scale"], rtol=1e-12)
    assert printed.attrs["load_scale"] == 1.0 and 1.5 < printed.attrs["pooled_utilisation_printed"] < 2.5
    v = wl.make_vmdks(jax.random.split(key, 3)[0], wl.vm_table(), 4800 * GB)
    f = wl.mean_read_fraction(v)
    assert f[np.flatnonzero(v.is_data)[0]] == 0.5 and f[np.flatnonzero(v.is_data)[9]] == 0.5   # BasicVerify, SSDTest
    assert wl.pooled_utilisation(t, scaled["base_iops"].values, scaled["io_bytes"].values, f) == pytest.approx(0.7)


def test_offered_load_mean_and_phase_cycles():
    wp = wl.WorkloadParams(spike_probability=0.05, sigma=0.25)
    v = wl.make_vmdks(jax.random.key(0), wl.vm_table(), 4800 * GB, wp)
    lam, read, spike, phase = wl.offered_load(jax.random.key(1), v, 2000, 300.0, wp)
    ratio = np.asarray(lam / v.base_iops[None, :])
    # E[multiplier] = 1 + (3 - 1) * 0.05 = 1.1; the lognormal factor has mean 1
    assert ratio.mean() == pytest.approx(1.1, rel=0.02)
    # SSDTest (row 9) cycles read, read, write, write every 10 epochs
    data = np.flatnonzero(v.is_data)[9]
    r = np.asarray(read[:, data])
    ph = np.asarray(phase[:, data])
    np.testing.assert_array_equal(r, np.array([1.0, 1.0, 0.0, 0.0])[ph])
    changes = np.flatnonzero(np.diff(ph))
    assert np.all(np.diff(changes) == 10)


def test_scenario_is_deterministic_and_feasible():
    kw = dict(tier_table=autotiering_tier_table(), n_disks=(2, 2, 2), n_epochs=8)
    a = wl.scenario(jax.random.key(7), **kw)
    b = wl.scenario(jax.random.key(7), **kw)
    assert a.identical(b)
    c = wl.scenario(jax.random.key(8), **kw)
    assert not np.array_equal(a["offered_iops"].values, c["offered_iops"].values)
    load = np.array([a["size_bytes"].values[a["initial_tier"].values == k].sum() for k in range(3)])
    caps = 0.9 * np.array([2 * 480, 2 * 960, 2 * 960]) * GB
    assert np.all(load <= caps)
    assert a.sizes == {"tier": 3, "vmdk": 28, "epoch": 8}
    assert str(a["label"].values[5]) == "Zipf IOs/data"


def test_bad_vm_table_names_row_and_column():
    df = wl.vm_table()
    with pytest.raises(ValueError, match=r"VM table.*missing column.*window"):
        wl.check_vm_table(df.drop(columns=["window"]))
    bad = df.copy()
    bad.loc["Flow", "iops"] = -1.0
    with pytest.raises(ValueError, match=r"row 5 \(Flow\), column 'iops'"):
        wl.check_vm_table(bad)
    bad = df.copy()
    bad.at["JESD", "read_fractions"] = (0.4, 1.5)
    with pytest.raises(ValueError, match=r"row 7 \(JESD\), column 'read_fractions'"):
        wl.check_vm_table(bad)


def test_scenario_rejects_a_tier_smaller_than_one_vmdk():
    tt = autotiering_tier_table().copy()
    tt.loc[1, "disk_size_bytes"] = 100 * GB           # 2 disks x 100 GB x 0.9 < the largest data VMDK
    with pytest.raises(ValueError, match=r"row 0 \(tier 1\), column 'disk_size_bytes'.*smaller than one VMDK"):
        wl.scenario(jax.random.key(0), tier_table=tt, n_disks=(2, 2, 2), n_epochs=2)
    tt = autotiering_tier_table().drop(columns=["read_iops"])
    with pytest.raises(ValueError, match=r"tier table.*missing column.*read_iops"):
        wl.scenario(jax.random.key(0), tier_table=tt, n_disks=(2, 2, 2), n_epochs=2)
