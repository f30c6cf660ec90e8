"""LMST's workload generator (thesis Sec. 4.1.3.1) against its specification and closed forms."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from tieringlab.models.workloads import lmst as W
from tieringlab.units import KB, MS

SMALL = W.LmstWorkloadParams(n_high_apps=1, n_low_apps=2, aluns_per_app=4, n_slots=6, slot_s=120.0,
                             sample_s=20.0)


def test_rates_sizes_and_layout_follow_sec_4_1_3_1():
    wp = W.LmstWorkloadParams(n_high_apps=1, n_low_apps=1, aluns_per_app=10, n_slots=8, slot_s=300.0,
                              burst_ratio=0.5)
    key = jax.random.key(1)
    st = W.slot_states(key, wp)
    lay = W.alun_layout(wp)
    assert list(lay.app_class) == [0, 1] and np.all(lay.alun_class[:10] == 0) and np.all(lay.alun_class[10:] == 1)
    got_bytes = np.zeros((wp.n_aluns, wp.n_slots))
    sizes = []
    for w in range(wp.n_slots):
        s = W.generate_slot(key, wp, w, st)
        sizes.append(s.size)
        got_bytes[:, w] = np.bincount(s.alun, weights=s.size, minlength=wp.n_aluns)
        assert np.all(s.time >= s.t0) and np.all(s.time < s.t0 + wp.slot_s)
        assert np.all(np.diff(s.time) >= 0)                             # one stream in time order
        np.testing.assert_array_equal(s.counts, np.bincount(s.alun, minlength=wp.n_aluns))
        # monitoring samples add up to the slot's bytes
        np.testing.assert_allclose(s.sample_rate.sum(axis=1) * wp.sample_s, got_bytes[:, w], rtol=1e-12)
    size = np.concatenate(sizes)
    assert size.mean() == pytest.approx(100 * KB, rel=0.01)            # mean 100 KB
    assert size.std() / size.mean() == pytest.approx(1.0, abs=0.02)    # exponential: CV = 1
    rate = got_bytes / wp.slot_s
    # idle slots: 10 KB/ms (high) and 5 KB/ms (low); bursty slots double (per ALUN, reading A2)
    for cls, idle in ((0, 10 * KB / MS), (1, 5 * KB / MS)):
        m = lay.alun_class == cls
        assert rate[m][~st[m]].mean() == pytest.approx(idle, rel=0.02)
        assert rate[m][st[m]].mean() == pytest.approx(2 * idle, rel=0.08)   # MMPP slots vary more


def test_burst_mmpp_mean_and_dispersion():
    wp = W.LmstWorkloadParams(burst_high_share=0.2, burst_peak_ratio=3.0, burst_high_sojourn_s=4.0)
    mm = W.burst_mmpp(wp, 5 * KB / MS)
    assert float(mm.mean_rate()) == pytest.approx(2 * 50.0)             # 10 KB/ms / 100 KB = 100 I/O per s
    assert float(mm.lam1) == pytest.approx(300.0)
    assert float(mm.stationary()[0]) == pytest.approx(0.2)
    assert 1 / float(mm.r12) == pytest.approx(4.0)
    # counts of a long bursty run in 10 s windows: mean and index of dispersion of the MMPP(2) closed form
    wp1 = W.LmstWorkloadParams(n_high_apps=0, n_low_apps=1, aluns_per_app=1, n_slots=1, slot_s=20000.0,
                               sample_s=10.0, burst_ratio=1.0, burst_high_share=0.2, burst_peak_ratio=3.0,
                               burst_high_sojourn_s=4.0)
    s = W.generate_slot(jax.random.key(3), wp1, 0)
    counts = np.bincount((s.time / 10.0).astype(int), minlength=2000)
    assert counts.mean() == pytest.approx(1000.0, rel=0.02)
    want = float(np.ravel(W.burst_mmpp(wp1, 5 * KB / MS).index_of_dispersion_counts(10.0))[0])
    assert want > 10                                                    # premise: far from Poisson
    assert counts.var() / counts.mean() == pytest.approx(want, rel=0.15)


def test_same_key_bit_identical_and_slots_independent_of_order():
    key = jax.random.key(7)
    st = W.slot_states(key, SMALL)
    a = W.generate_slot(key, SMALL, 3, st, offsets=True)
    for _ in range(2):
        W.generate_slot(key, SMALL, 1, st)                      # generating other slots first changes nothing
    b = W.generate_slot(key, SMALL, 3, None, offsets=True)      # states re-derived from the key
    for x, y in zip(a, b):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    c = W.generate_slot(jax.random.key(8), SMALL, 3, st)
    assert c.time.size != a.time.size or not np.array_equal(c.time, a.time)
    assert np.all(a.offset >= 0) and np.all(a.offset + a.size <= SMALL.alun_bytes + 1e-6)


def test_reused_output_buffers_give_the_same_slots():
    # a simulator hands one SlotBuffers to slot after slot (growing it when a slot is larger): the draws are
    # those of fresh arrays, whatever the buffers held before
    key = jax.random.key(9)
    wp = W.LmstWorkloadParams(n_high_apps=1, n_low_apps=2, aluns_per_app=4, n_slots=6, slot_s=120.0,
                              sample_s=20.0, burst_ratio=0.5)
    st = W.slot_states(key, wp)
    buf = W.SlotBuffers()
    sizes = set()
    for w in (2, 0, 5, 1, 4, 3, 2):
        want = W.generate_slot(key, wp, w, st)
        got = W.generate_slot(key, wp, w, st, out=buf)
        sizes.add(want.time.size)
        assert np.shares_memory(got.time, buf.time) and np.shares_memory(got.alun, buf.alun)
        for x, y in zip(want, got):
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    assert len(sizes) > 3                                       # premise: the slots differ in size
    with pytest.raises(TypeError, match="SlotBuffers"):
        W.generate_slot(key, wp, 0, st, out=np.zeros(10))


def test_slot_states_ratio_persistence_and_high_priority_switch():
    wp = W.LmstWorkloadParams(n_slots=30, n_high_apps=5, n_low_apps=15, burst_ratio=0.3)
    st = W.slot_states(jax.random.key(0), wp)
    assert st.mean() == pytest.approx(0.3, abs=0.02)
    lag = np.mean([np.corrcoef(st[:, w - 1], st[:, w])[0, 1] for w in range(1, 30)])
    assert abs(lag) < 0.05
    wpp = W.LmstWorkloadParams(n_slots=30, n_high_apps=5, n_low_apps=15, burst_ratio=0.3, slot_persistence=0.6)
    sp = W.slot_states(jax.random.key(0), wpp)
    assert sp.mean() == pytest.approx(0.3, abs=0.04)
    lagp = np.mean([np.corrcoef(sp[:, w - 1], sp[:, w])[0, 1] for w in range(1, 30)])
    assert lagp == pytest.approx(0.6, abs=0.06)
    off = W.slot_states(jax.random.key(0), W.LmstWorkloadParams(bursts_high_priority=False))
    assert not off[:20].any() and off[20:].any()


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match=r"LmstWorkloadParams\.burst_ratio: expected a number in \[0\.0, 1\.0\]"):
        W.LmstWorkloadParams(burst_ratio=1.5)
    with pytest.raises(ValueError, match=r"LmstWorkloadParams\.idle_rate_low: expected a number >= 1e-09 \(bytes/s\)"):
        W.LmstWorkloadParams(idle_rate_low=-1.0)
    with pytest.raises(ValueError, match=r"LmstWorkloadParams\.mean_io_bytes: expected a number >= 1e-09 \(bytes\)"):
        W.LmstWorkloadParams(mean_io_bytes=0.0)
    with pytest.raises(ValueError, match="burst_peak_ratio k must satisfy k < 1 / burst_high_share"):
        W.LmstWorkloadParams(burst_high_share=0.2, burst_peak_ratio=6.0)
    with pytest.raises(ValueError, match=r"LmstWorkloadParams\.n_low_apps: expected an integer >= 0"):
        W.LmstWorkloadParams(n_low_apps=-1)
    with pytest.raises(ValueError, match=r"needs at least one application"):
        W.LmstWorkloadParams(n_low_apps=0, n_high_apps=0)
    with pytest.raises(ValueError, match="sample_s must divide slot_s"):
        W.LmstWorkloadParams(sample_s=7.0)
    with pytest.raises(ValueError, match=r"slot must be an integer in \[0, n_slots\)"):
        W.generate_slot(jax.random.key(0), SMALL, 6)


def test_thread_scratch_reuses_one_buffer_per_thread_and_name():
    import threading

    from tieringlab.arrays import thread_scratch

    store = threading.local()
    a = thread_scratch(store, "x", 100)
    assert a.shape == (100,) and a.dtype == np.float64
    a[:] = 7.0
    b = thread_scratch(store, "x", 50)                    # smaller: a view of the same buffer, contents kept
    assert np.shares_memory(a, b) and np.all(b == 7.0)
    c = thread_scratch(store, "x", 10_000)                # larger: a new, bigger buffer
    assert c.shape == (10_000,) and not np.shares_memory(a, c)
    d = thread_scratch(store, "x", 10, np.int16)          # another dtype: its own buffer
    assert d.dtype == np.int16 and not np.shares_memory(c, d)
    other = {}

    def run():
        other["buf"] = thread_scratch(store, "x", 10, np.int16)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert not np.shares_memory(d, other["buf"])           # each thread has its own
