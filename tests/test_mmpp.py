"""MMPP: 2x2 closed forms against the general MAP matrix formulas, samples against the analytic
moments, and the fitter against the thesis' Fig. 3 targets (mean 10 s, I = 313.5, 32.25, 1)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tieringlab.models.mmpp import MMPP, MMPP2, fit_mmpp2


def counts_idc(interarrivals, window_s):
    """Variance / mean of arrival counts in consecutive windows of ``window_s`` seconds (plain numpy)."""
    t = np.cumsum(np.asarray(interarrivals))
    n_win = int(t[-1] // window_s)
    c = np.bincount((t[t < n_win * window_s] // window_s).astype(np.int64), minlength=n_win)
    return c.var() / c.mean()


EXAMPLE = MMPP2(lam1=2.0, lam2=0.3, r12=0.05, r21=0.2)

rates = st.floats(0.01, 50.0)


@settings(max_examples=40, deadline=None)
@given(rates, rates, st.floats(0.001, 5.0), st.floats(0.001, 5.0))
def test_mmpp2_closed_forms_equal_matrix_formulas(l1, l2, a, b):
    m = MMPP2(l1, l2, a, b)
    g = m.to_mmpp()
    np.testing.assert_allclose(m.mean_rate(), g.mean_rate(), rtol=1e-9)
    np.testing.assert_allclose(m.mean_interarrival(), g.moment(1), rtol=1e-9)
    np.testing.assert_allclose(m.scv(), g.scv(), rtol=1e-7, atol=1e-9)
    k = np.arange(0, 6)
    np.testing.assert_allclose(m.autocorrelation(k), g.autocorrelation(k), rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(m.index_of_dispersion(), g.index_of_dispersion(), rtol=1e-7)
    s = a + b
    t = np.array([0.1, 1.0, 10.0]) / s
    np.testing.assert_allclose(m.index_of_dispersion_counts(t), g.index_of_dispersion_counts(t), rtol=1e-6)


def test_index_of_dispersion_equals_thesis_eq2():
    """Eq. 2, I = SCV (1 + 2 sum_{k>=1} rho_k), from the inter-arrival moments, equals the counts IDC."""
    m = EXAMPLE
    g = m.to_mmpp()
    rho = np.asarray(g.autocorrelation(np.arange(1, 3000)))
    eq2 = float(g.scv()) * (1 + 2 * rho.sum())
    assert eq2 == pytest.approx(float(g.index_of_dispersion()), rel=1e-9)
    # MMPP(2): rho_k = rho_1 gamma^(k-1) -> geometric sum
    gam = float(m.autocorrelation(2) / m.autocorrelation(1))
    assert float(m.scv()) * (1 + 2 * float(m.autocorrelation(1)) / (1 - gam)) == pytest.approx(
        float(m.index_of_dispersion()), rel=1e-9)
    # the finite-window IDC climbs to the limit
    assert float(m.index_of_dispersion_counts(1e7)) == pytest.approx(float(m.index_of_dispersion()), rel=1e-6)


def test_poisson_is_the_degenerate_case():
    m = MMPP2(0.7, 0.7, 0.3, 0.9)
    assert float(m.scv()) == pytest.approx(1.0)
    assert float(m.index_of_dispersion()) == pytest.approx(1.0)
    np.testing.assert_allclose(m.autocorrelation([1, 2, 3]), 0.0, atol=1e-12)


def test_three_state_mmpp_lumps_to_two_state():
    """Phases 2 and 3 share rate lam2, and each returns to phase 1 at r21: the process is the MMPP(2)."""
    l1, l2, r12, r21 = 2.0, 0.3, 0.05, 0.2
    D1 = np.diag([l1, l2, l2])
    off = np.array([[0.0, 0.3 * r12, 0.7 * r12], [r21, 0.0, 0.4], [r21, 1.1, 0.0]])
    D0 = off - np.diag(off.sum(axis=1) + np.diag(D1))
    g3 = MMPP(D0, D1)
    m2 = MMPP2(l1, l2, r12, r21)
    for f in ("mean_rate", "scv", "index_of_dispersion"):
        np.testing.assert_allclose(getattr(g3, f)(), getattr(m2, f)(), rtol=1e-9)
    np.testing.assert_allclose(g3.autocorrelation([1, 2, 7]), m2.autocorrelation(np.array([1, 2, 7])), rtol=1e-8)


def test_rejects_bad_matrices_and_rates():
    with pytest.raises(ValueError, match="sum to 0"):
        MMPP([[-1.0, 0.5], [0.5, -1.0]], np.diag([1.0, 1.0]))
    with pytest.raises(ValueError, match="r12, r21"):
        MMPP2(1.0, 2.0, 0.0, 1.0)
    with pytest.raises(ValueError, match=">= 1"):
        fit_mmpp2(10.0, 0.5)
    with pytest.raises(ValueError, match="burst_fraction"):
        fit_mmpp2(10.0, 5.0, burst_fraction=1.5)


def test_closed_forms_jit_and_vmap_over_parameters():
    ms = MMPP2(jnp.array([2.0, 3.0]), jnp.array([0.3, 0.1]), jnp.array([0.05, 0.1]), jnp.array([0.2, 0.4]))
    got = jax.jit(jax.vmap(lambda m: m.index_of_dispersion()))(ms)
    want = [float(MMPP2(2.0, 0.3, 0.05, 0.2).index_of_dispersion()),
            float(MMPP2(3.0, 0.1, 0.1, 0.4).index_of_dispersion())]
    np.testing.assert_allclose(got, want, rtol=1e-12)


# ----------------------------------------------------------------------------- samples vs analytic

def test_sample_moments_match_analytic():
    m = EXAMPLE                                      # I = 3.23, SCV = 1.91
    x = np.asarray(m.sample(jax.random.key(11), 10**6))
    assert x.shape == (10**6,) and np.all(x >= 0)
    # the standard error of the mean rate is about sqrt(I / n) = 0.18 %: allow 1 %
    assert 1 / x.mean() == pytest.approx(float(m.mean_rate()), rel=0.01)
    # SCV of 10^6 correlated samples: allow 5 %
    assert x.var() / x.mean() ** 2 == pytest.approx(float(m.scv()), rel=0.05)
    # lag-1 autocorrelation (0.14): allow 0.01 absolute
    assert np.corrcoef(x[:-1], x[1:])[0, 1] == pytest.approx(float(m.autocorrelation(1)), abs=0.01)
    # counts IDC in windows of 20 / s = 80 s: the finite-window value, allow 5 %
    w = 20.0 / (m.r12 + m.r21)
    assert counts_idc(x, w) == pytest.approx(float(m.index_of_dispersion_counts(w)), rel=0.05)


def test_sample_is_reproducible_from_its_key():
    a = np.asarray(EXAMPLE.sample(jax.random.key(3), 5000))
    b = np.asarray(EXAMPLE.sample(jax.random.key(3), 5000))
    c = np.asarray(EXAMPLE.sample(jax.random.key(4), 5000))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_sample_counts_match_analytic():
    m = EXAMPLE
    dt = 10.0
    c = np.asarray(m.sample_counts(jax.random.key(5), 100_000, dt))
    assert c.shape == (100_000,) and c.dtype == np.int64
    assert c.mean() / dt == pytest.approx(float(m.mean_rate()), rel=0.01)
    assert c.var() / c.mean() == pytest.approx(float(m.index_of_dispersion_counts(dt)), rel=0.05)
    three = MMPP(np.array([[-1.2, 0.1, 0.1], [0.05, -0.35, 0.0], [0.5, 0.5, -5.0]]), np.diag([1.0, 0.3, 4.0]))
    c3 = np.asarray(three.sample_counts(jax.random.key(6), 100_000, dt))
    assert c3.mean() / dt == pytest.approx(float(three.mean_rate()), rel=0.01)
    assert c3.var() / c3.mean() == pytest.approx(float(three.index_of_dispersion_counts(dt)[0]), rel=0.05)


# ----------------------------------------------------------------------------- fitter, thesis Fig. 3

@pytest.mark.parametrize("target", [313.5, 32.25, 1.0])
def test_fit_hits_targets_analytically(target):
    m = fit_mmpp2(10.0, target)
    assert float(m.mean_interarrival()) == pytest.approx(10.0, rel=1e-12)
    assert float(m.index_of_dispersion()) == pytest.approx(target, rel=1e-12)
    g = m.to_mmpp()                                  # and by the independent matrix formulas
    assert float(g.moment(1)) == pytest.approx(10.0, rel=1e-9)
    assert float(g.index_of_dispersion()) == pytest.approx(target, rel=1e-9)
    if target > 1:
        assert float(m.lam1 / m.lam2) == pytest.approx(10.0)          # rate_ratio default
        assert float(m.stationary()[0]) == pytest.approx(0.1)          # burst_fraction default


@pytest.mark.parametrize("target,n", [(313.5, 10**7), (32.25, 10**6), (1.0, 10**6)])
def test_fitted_long_samples_land_within_10pct_of_target(target, n):
    m = fit_mmpp2(10.0, target)
    x = np.asarray(m.sample(jax.random.key(int(target * 4)), n))
    # windows of 20 correlation times 1/s (10 mean inter-arrivals for Poisson): I(w) is 95 % of I
    w = 20.0 / float(m.r12 + m.r21) if target > 1 else 100.0
    got = counts_idc(x, w)
    assert got == pytest.approx(target, rel=0.10)
    assert x.mean() == pytest.approx(10.0, rel=0.05)
