"""AutoTiering Alg. 1 regression: exact lines, numpy.polyfit agreement, the CV rule, the latency estimate."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tieringlab.models.regression import (
    LOW_CONFIDENCE,
    calibrate,
    coefficient_of_variation,
    cv_confidence,
    estimate_avg_latency,
    fit_lines,
    iops_from_latency,
)


@settings(max_examples=40, deadline=None)
@given(st.floats(-50, 50), st.floats(-1e-2, 1e-2), st.integers(2, 12), st.integers(0, 2**32 - 1))
def test_fit_exact_on_noiseless_lines(m, b, n_levels, seed):
    x = np.sort(np.random.default_rng(seed).choice(np.arange(0, 5000), n_levels, replace=False)) * 1e-6
    y = m * x + b
    got_m, got_b = fit_lines(x, y)
    assert float(got_m) == pytest.approx(m, rel=1e-9, abs=1e-9)
    assert float(got_b) == pytest.approx(b, rel=1e-9, abs=1e-12)


def test_fit_matches_polyfit_on_noisy_batches():
    rng = np.random.default_rng(7)
    n_tiers, n_vms, n_levels = 3, 5, 6
    x = np.array([0.0, 0.5, 1.0, 2.0, 3.0, 4.0]) * 1e-3  # injected latency, s
    true_m = rng.uniform(0.1, 3.0, (n_tiers, n_vms, 1))
    y = true_m * x + 2e-4 + rng.normal(0, 1e-4, (n_tiers, n_vms, n_levels))
    m, b = fit_lines(x, y)
    assert m.shape == (n_tiers, n_vms)
    for t in range(n_tiers):
        for v in range(n_vms):
            pm, pb = np.polyfit(x, y[t, v], 1)
            assert float(m[t, v]) == pytest.approx(pm, rel=1e-9)
            assert float(b[t, v]) == pytest.approx(pb, rel=1e-7, abs=1e-15)


def test_fit_other_axis_and_degenerate_x():
    y = np.array([[1.0, 2.0], [3.0, 5.0], [5.0, 8.0]])  # levels on axis 0
    m, b = fit_lines(np.array([[0.0], [1.0], [2.0]]), y, axis=0)
    np.testing.assert_allclose(m, [2.0, 3.0])
    np.testing.assert_allclose(b, [1.0, 2.0], atol=1e-15)
    m, _ = fit_lines(np.array([1.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0]))
    assert np.isnan(float(m))


def test_cv_rule_hand_cases():
    # level 1: [1, 1] -> CV 0; level 2: [1, 3] -> std 1, mean 2 -> CV 0.5 ; mean CV 0.25 -> conf 0.75
    cv, conf = cv_confidence(np.array([[1.0, 1.0], [1.0, 3.0]]))
    assert float(cv) == pytest.approx(0.25) and float(conf) == pytest.approx(0.75)
    # all levels constant: CV 0, full confidence
    cv, conf = cv_confidence(np.full((3, 4), 2e-3))
    assert float(cv) == 0.0 and float(conf) == 1.0
    # [0, 2]: std 1, mean 1 -> CV exactly 1 -> low confidence 0.05 (line 16 uses >=)
    cv, conf = cv_confidence(np.array([[0.0, 2.0]]))
    assert float(cv) == 1.0 and float(conf) == LOW_CONFIDENCE == 0.05
    # [0, 0, 3]: std sqrt(2), mean 1 -> CV 1.414 > 1 -> 0.05
    _, conf = cv_confidence(np.array([[0.0, 0.0, 3.0]]))
    assert float(conf) == 0.05
    # batched over VMs: one calm, one noisy
    _, conf = cv_confidence(np.array([[[1.0, 1.0]], [[0.0, 4.0]]]))
    np.testing.assert_allclose(conf, [1.0, 0.05])


def test_cv_ddof_option():
    # sample std of [1, 3] is sqrt(2): CV = sqrt(2)/2
    assert float(coefficient_of_variation(np.array([1.0, 3.0]), ddof=1)) == pytest.approx(np.sqrt(2) / 2)


def test_calibrate_recovers_line_and_confidence():
    x = np.array([0.0, 1e-3, 2e-3])
    # two VMs; samples symmetric around the line so the level averages lie on it
    lines = np.array([[2.0, 1e-4], [0.5, 3e-4]])  # (m, b)
    centre = lines[:, :1] * x + lines[:, 1:]  # (V, L)
    spread = np.array([0.9, 1.0, 1.1])  # relative: CV = std([.9,1,1.1]) = 0.0816...
    samples = centre[..., None] * spread  # (V, L, S)
    m, b, conf, cv = calibrate(x, samples)
    np.testing.assert_allclose(m, lines[:, 0], rtol=1e-12)
    np.testing.assert_allclose(b, lines[:, 1], rtol=1e-9)
    expected_cv = np.std(spread) / np.mean(spread)
    np.testing.assert_allclose(cv, [expected_cv, expected_cv], rtol=1e-12)
    np.testing.assert_allclose(conf, 1 - expected_cv, rtol=1e-12)


def test_estimate_avg_latency_hand_case():
    # paper's Fig. 2 setting: t1 is 2000 µs faster than t2, t2 2000 µs faster than t3
    tier_latency = np.array([1000e-6, 3000e-6, 5000e-6])
    m = np.array([1.5, 0.5])
    b = np.array([2000e-6, 6000e-6])
    current = np.array([0, 2])  # VM0 on tier 1, VM1 on tier 3
    lat = np.asarray(estimate_avg_latency(m, b, tier_latency, current))
    assert lat.shape == (3, 2)
    # VM0: 2000 + 1.5 * (L_t - 1000) µs ; VM1: 6000 + 0.5 * (L_t - 5000) µs
    np.testing.assert_allclose(lat[:, 0], np.array([2000, 5000, 8000]) * 1e-6, rtol=1e-12)
    np.testing.assert_allclose(lat[:, 1], np.array([4000, 5000, 6000]) * 1e-6, rtol=1e-12)


def test_iops_from_latency():
    np.testing.assert_allclose(iops_from_latency(np.array([1e-3, 250e-6, 0.0, -1e-6])), [1000.0, 4000.0, 0.0, 0.0])
