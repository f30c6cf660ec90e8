"""The EAFC paper's workload generators (models.workloads.eafc): determinism, the paper's numbers,
the popularity models' defining properties, bad input."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from tieringlab.models.stackdist import lru_hit_counts
from tieringlab.models.workloads import eafc as wl
from tieringlab.units import GB, HOUR, MS, MiB


def test_paper_numbers_in_defaults():
    fb = wl.FileBenchParams()
    assert (fb.working_set_bytes, fb.n_files, fb.n_threads, fb.n_clients) == (40 * GB, 1_600_000, 400, 2)
    assert fb.population == 32  # 2 clients x 16 RPC slots, of the 400 threads
    t2 = wl.FileBenchParams(**wl.FILEBENCH_TEST2)
    assert t2.working_set_bytes == 30 * GB and t2.n_files == 2 * 750_000
    sp = wl.SpecSfsParams()
    assert sp.ops_per_s == (2000.0, 4000.0, 5000.0) and sp.phase_s == 5 * HOUR and sp.n_threads == 20
    assert [w / GB for w in sp.working_sets()] == pytest.approx([12, 24, 30])
    ph = sp.phases()
    assert sum(p.duration_s for p in ph) == 15 * HOUR
    # the think time reaches the nominal rate at the nominal response: N / (Z + r) = lambda
    for p in ph:
        assert p.population / (p.think_s + sp.nominal_response_s) == pytest.approx(p.nominal_ops_per_s)


def test_deterministic_and_key_dependent():
    p = wl.FileBenchParams(working_set_bytes=1 * GB, n_files=40_000, unit_bytes=1 * MiB)
    a = wl.filebench_webserver(jax.random.key(7), p, [5000])
    b = wl.filebench_webserver(jax.random.key(7), p, [5000])
    c = wl.filebench_webserver(jax.random.key(8), p, [5000])
    np.testing.assert_array_equal(a.keys, b.keys)
    assert not np.array_equal(a.keys, c.keys)
    s = wl.SpecSfsParams(bytes_per_op_per_s=0.5 * MB_, unit_bytes=1 * MiB)
    x = wl.specsfs2008(jax.random.key(1), s, [300, 400, 500])
    y = wl.specsfs2008(jax.random.key(1), s, [300, 400, 500])
    np.testing.assert_array_equal(x.keys, y.keys)
    np.testing.assert_array_equal(x.is_read, y.is_read)


MB_ = 10**6


def test_filebench_uniform_is_irm_over_files():
    """Unit frequencies follow the units' file counts (IRM over files, coarse-grained) and the LRU hit
    ratio at C units is about C / U once warm (notes §6.3)."""
    p = wl.FileBenchParams(working_set_bytes=2 * GB, n_files=80_000, unit_bytes=4 * MiB)
    w = wl.filebench_webserver(jax.random.key(3), p, [200_000])
    assert w.n_units == pytest.approx(2 * GB / (4 * MiB), abs=1)
    assert w.reads_per_access == pytest.approx(p.n_files / w.n_units)
    freq = np.bincount(w.keys, minlength=w.n_units) / w.keys.size
    assert np.abs(freq * w.n_units - 1).max() < 0.35  # +-35 % around uniform (file counts +-15 %, noise)
    warm = w.keys[50_000:]
    for frac in (0.25, 0.5, 0.75):
        c = int(frac * w.n_units)
        h = lru_hit_counts(np.concatenate([w.keys[:50_000], warm]), [c])[0]
        h_warm = h - lru_hit_counts(w.keys[:50_000], [c])[0]
        assert h_warm / warm.size == pytest.approx(frac, abs=0.03)


def test_filebench_rotation_sweeps_each_client_cyclically():
    p = wl.FileBenchParams(working_set_bytes=1 * GB, n_files=40_000, unit_bytes=1 * MiB, popularity="rotation")
    w = wl.filebench_webserver(jax.random.key(4), p, [20_000])
    half = w.n_units // 2
    # an LRU smaller than the sweep gets (almost) no hits; one holding both halves hits after a sweep
    small = lru_hit_counts(w.keys, [int(0.8 * w.n_units)])[0] / w.keys.size
    big = lru_hit_counts(w.keys, [w.n_units])[0] / w.keys.size
    assert small < 0.02
    assert big > 0.85
    lo = w.keys[w.keys < half]
    steps = np.diff(lo)
    assert np.all((steps >= 0) | (lo[:-1] >= half - 2))  # non-decreasing except at the wrap-around


def test_specsfs_phases_nested_zipf_and_warm_start():
    s = wl.SpecSfsParams(bytes_per_op_per_s=0.6 * MB_, unit_bytes=1 * MiB, zipf_alpha=0.8)
    w = wl.specsfs2008(jax.random.key(5), s, [20_000, 20_000, 20_000])
    n_p = w.attrs["units_per_phase"]
    assert n_p == sorted(n_p) and n_p[-1] == w.n_units
    assert not w.is_read[: w.seg_start[0]].any() and w.seg_start[0] == n_p[0]  # creation pass of phase 1
    for k in range(3):
        seg = w.keys[w.seg_start[k]:w.seg_end[k]]
        assert seg.max() < n_p[k] and w.is_read[w.seg_start[k]:w.seg_end[k]].all()
    # Zipf: frequency against popularity rank has log-log slope about -alpha (phase 3, all units)
    seg = w.keys[w.seg_start[2]:w.seg_end[2]]
    f = np.sort(np.bincount(seg, minlength=w.n_units))[::-1][:200].astype(float)
    slope = np.polyfit(np.log(np.arange(1, 201)), np.log(np.maximum(f, 1)), 1)[0]
    assert slope == pytest.approx(-0.8, abs=0.15)
    assert w.reads_per_access == (1 * MiB) / s.read_bytes


def test_bad_input():
    with pytest.raises(ValueError, match="popularity must be one of"):
        wl.FileBenchParams(popularity="zipf")
    with pytest.raises(ValueError, match="n_files must be a positive integer"):
        wl.FileBenchParams(n_files=0)
    with pytest.raises(ValueError, match="unit_bytes must be at most a quarter"):
        wl.FileBenchParams(unit_bytes=20 * GB)
    with pytest.raises(ValueError, match="ops_per_s must be"):
        wl.SpecSfsParams(ops_per_s=(2000.0, -1.0))
    with pytest.raises(ValueError, match="nominal_response_s must be below"):
        wl.SpecSfsParams(nominal_response_s=1.0)
    with pytest.raises(ValueError, match="read_frac must be in"):
        wl.SpecSfsParams(read_frac=0.95)
    with pytest.raises(ValueError, match="n_accesses must give one positive integer per phase"):
        wl.specsfs2008(jax.random.key(0), wl.SpecSfsParams(), [10, 10])
    assert MS > 0
