"""Burstiness: FFT autocorrelation against the direct sum, Eq. 2 on Poisson and MMPP samples against
closed forms, and the Sec. 3.2.2 on/off predictor on a synthetic workload with known phases."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tieringlab.models import burstiness as b
from tieringlab.models.mmpp import fit_mmpp2


def acf_direct(x, max_lag):
    """Eq. 1, plain O(n k): c_k = (1/n) sum_{t<n-k} (x_t - xbar)(x_{t+k} - xbar), rho_k = c_k / c_0."""
    x = np.asarray(x, float)
    n = len(x)
    d = x - x.mean()
    c = [sum(d[t] * d[t + k] for t in range(n - k)) / n for k in range(max_lag + 1)]
    return np.array(c) / c[0]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-100, 100), min_size=2, max_size=120).filter(lambda v: np.ptp(v) > 1e-3),
       st.integers(0, 200))
def test_acf_fft_equals_direct_sum(values, lag):
    max_lag = min(lag, len(values) - 1)
    np.testing.assert_allclose(b.autocorrelation(values, max_lag), acf_direct(values, max_lag), rtol=1e-9, atol=1e-9)


def test_acf_of_long_sample_and_errors():
    x = np.random.default_rng(0).exponential(1.0, 5000)
    np.testing.assert_allclose(b.autocorrelation(x, 30), acf_direct(x, 30), atol=1e-10)
    with pytest.raises(ValueError, match="max_lag"):
        b.autocorrelation(x, 5000)
    with pytest.raises(ValueError, match="truncation"):
        b.index_of_dispersion(x, truncation="geyer")


def test_eq2_fixed_truncation_is_scv_times_one_plus_twice_the_acf_sum():
    x = np.random.default_rng(1).gamma(0.5, 2.0, 3000)
    rho = acf_direct(x, 7)
    want = x.var() / x.mean() ** 2 * (1 + 2 * rho[1:].sum())
    assert float(b.index_of_dispersion(x, max_lag=7, truncation="fixed")) == pytest.approx(want, rel=1e-9)


def test_sokal_rule_picks_the_first_lag_past_c_tau():
    x = np.random.default_rng(2).exponential(1.0, 4000)
    I, K = b.index_of_dispersion(x, max_lag=100, window_c=5.0, return_lag=True)
    rho = acf_direct(x, 100)
    tau = 1 + 2 * np.cumsum(rho[1:])
    k_want = int(np.argmax(np.arange(1, 101) >= 5.0 * tau)) + 1
    assert int(K) == k_want
    assert float(I) == pytest.approx(x.var() / x.mean() ** 2 * tau[k_want - 1], rel=1e-9)


def test_index_of_dispersion_of_poisson_is_near_one():
    x = np.random.default_rng(3).exponential(2.0, 10**6)
    assert float(b.index_of_dispersion(x)) == pytest.approx(1.0, abs=0.03)
    t = np.cumsum(x)
    c = b.counts_in_windows(t, 50.0)
    assert float(b.index_of_dispersion_counts(c)) == pytest.approx(1.0, abs=0.03)


def test_counts_in_windows_equals_histogram():
    t = np.sort(np.random.default_rng(4).uniform(0, 1000, 5000))
    c = np.asarray(b.counts_in_windows(t, 7.0))
    want, _ = np.histogram(t, bins=np.arange(0, 7.0 * (len(c) + 1) - 1e-9, 7.0))
    np.testing.assert_array_equal(c, want)


@pytest.mark.parametrize("target", [5.0, 32.25])
def test_index_of_dispersion_of_mmpp_samples_near_analytic(target):
    """Eq. 2 with the Sokal truncation on 10^6 MMPP inter-arrivals lands within 10 % of the closed form."""
    m = fit_mmpp2(10.0, target)
    x = np.asarray(m.sample(jax.random.key(17), 10**6))
    I = float(b.index_of_dispersion(x))
    assert I == pytest.approx(float(m.index_of_dispersion()), rel=0.10)


# ----------------------------------------------------------------------------- on/off predictor

def on_off_workload(seed, n_cycles=20, idle_s=2000.0, burst_s=500.0, lam_idle=0.1, lam_burst=2.0):
    """Alternating idle and burst phases of known length with Poisson arrivals in each (plain numpy)."""
    rng = np.random.default_rng(seed)
    times, phases, t = [], [], 0.0
    for _ in range(n_cycles):
        for dur, lam, on in ((idle_s, lam_idle, False), (burst_s, lam_burst, True)):
            times.append(np.sort(t + rng.uniform(0.0, dur, rng.poisson(lam * dur))))
            phases.append((t, t + dur, on))
            t += dur
    return np.concatenate(times), phases


def test_predictor_flags_bursts_of_a_known_on_off_workload():
    t, phases = on_off_workload(seed=1)
    pred = b.predict_bursts(t)
    truth = np.zeros(t.size, bool)
    for a0, a1, on in phases:
        truth[(t >= a0) & (t < a1)] = on
    state = np.asarray(b.burst_state_at(pred, t))
    # measured on this seed: 92 % of arrivals get the right state (burst arrivals 94 %, idle 82 %)
    assert (state == truth).mean() >= 0.88
    assert state[truth].mean() >= 0.90
    v = np.asarray(pred.valid)
    d, s = np.asarray(pred.decision_time)[v], np.asarray(pred.state)[v]
    turned_on = d[1:][np.diff(s.astype(int)) == 1]
    bursts = [(a0, a1) for a0, a1, on in phases if on]
    # every burst is flagged "on" within 60 s of its start (measured: 15-40 s), and no "on" comes
    # from inside an idle phase
    for a0, a1 in bursts:
        assert np.any((turned_on >= a0) & (turned_on < a0 + 60.0)), f"burst at {a0} s not flagged within 60 s"
    in_burst = np.zeros(turned_on.size, bool)
    for a0, a1 in bursts:
        in_burst |= (turned_on >= a0) & (turned_on < a1)
    assert in_burst.all()


def test_predictor_stays_off_on_poisson_arrivals():
    t = np.cumsum(np.random.default_rng(5).exponential(1.0, 100_000))
    pred = b.predict_bursts(t)
    assert not np.asarray(pred.state)[np.asarray(pred.valid)].any()


def test_predictor_window_grows_to_2m_when_samples_are_slow():
    # first half fast (rate 1), second half slow (rate 0.1): period_s = m mean gaps at rate 1
    rng = np.random.default_rng(6)
    x = np.concatenate([rng.exponential(1.0, 2000), rng.exponential(10.0, 2000)])
    p = b.BurstPredictorParams(m=64, period_s=64.0 * 1.5)
    pred = b.predict_bursts(np.cumsum(x), p)
    v = np.asarray(pred.valid)
    w = np.asarray(pred.window)[v]
    dec = np.asarray(pred.decision_time)[v]
    switch = np.cumsum(x)[1999]
    assert np.all(w[dec < switch - 200] == 64)        # fast phase: m samples arrive within period_s
    assert np.all(w[dec > switch + 2000] == 128)      # slow phase: too few samples, window 2m


def test_burst_state_at_is_causal_and_params_validate():
    pred = b.BurstPrediction(decision_time=np.array([10.0, 20.0, 30.0, np.inf]),
                             state=np.array([False, True, False, False]),
                             index_of_dispersion=np.zeros(4), rate=np.zeros(4),
                             window=np.zeros(4, int), valid=np.array([True, True, True, False]))
    got = b.burst_state_at(pred, [0.0, 10.0, 19.9, 20.0, 29.0, 30.0, 99.0])
    np.testing.assert_array_equal(got, [False, False, False, True, True, False, False])
    with pytest.raises(ValueError, match="max_lag"):
        b.BurstPredictorParams(m=8, max_lag=8)
    with pytest.raises(ValueError, match="non-decreasing"):
        b.predict_bursts(np.array([0.0, 2.0, 1.0] + list(range(3, 200))))
