"""Burstiness: FFT autocorrelation against the direct sum, Eq. 2 on Poisson and MMPP samples against
closed forms, and the Sec. 3.2.2 on/off predictor on a synthetic workload with known phases."""

from __future__ import annotations

import math

import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tieringlab.models import burstiness as b
from tieringlab.models.mmpp import fit_mmpp2
from tieringlab.policies import ara


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
    for a0, _a1 in bursts:
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
    # rows out of decision order (a 2m window listed before an earlier decision) are refused
    with pytest.raises(ValueError, match="decision order"):
        b.burst_state_at(pred._replace(decision_time=np.array([10.0, 30.0, 20.0, np.inf])), [15.0])
    with pytest.raises(ValueError, match="max_lag"):
        b.BurstPredictorParams(m=8, max_lag=8)
    with pytest.raises(ValueError, match="non-decreasing"):
        b.predict_bursts(np.array([0.0, 2.0, 1.0] + list(range(3, 200))))


# ----------------------------------------------------------------------------- causality (issue 16)

def ref_online(t, m=64, hop=16, max_lag=8, i_th=4.0, rc=1.5):
    """The Sec. 3.2.2 predictor as an online loop, one arrival at a time (plain Python, reads only
    ``t[: j + 1]`` at arrival j). The window starting at sample p (a multiple of hop) chooses its size when
    its m-th sample arrives (arrival p + m): 2m if those m samples took longer than m times the mean gap
    so far, else m; it decides at arrival p + w. Decisions completed by the same arrival are applied in
    order of start. Returns the state at each arrival (after the decisions that arrival completes) and
    the (decision arrival, start, window) of every decision in the order applied."""
    n = len(t)
    state, states, pending, applied = False, [], {}, []
    for j in range(n):
        p = j - m
        if p >= 0 and p % hop == 0:
            w = 2 * m if t[j] - t[p] > m * (t[j] - t[0]) / (p + m) else m
            pending.setdefault(p + w, []).append((p, w))
        for p, w in sorted(pending.pop(j, [])):
            applied.append((j, p, w))
            x = [t[i + 1] - t[i] for i in range(p, p + w)]
            span = t[p + w] - t[p]
            mean = span / w
            d = [xi - mean for xi in x]
            c0 = sum(di * di for di in d) / w
            rho = [sum(d[i] * d[i + k] for i in range(w - k)) / w / (c0 if c0 > 0 else 1.0)
                   for k in range(1, max_lag + 1)]
            I = c0 / (mean if mean > 0 else 1.0) ** 2 * (1 + 2 * sum(rho))
            rate = w / span if span > 0 else math.inf
            if p >= w and I >= i_th:
                sp = t[p] - t[p - w]
                prev = w / sp if sp > 0 else math.inf
                if rate >= rc * prev:
                    state = True
                elif rate * rc <= prev:
                    state = False
        states.append(state)
    return np.array(states, bool), applied


GAPS = st.sampled_from(["exp", "exp", "const", "ties"])


@st.composite
def mixed_streams(draw):
    """Arrival streams made of segments (exponential, constant or tied gaps; mean gap from 10 ms to
    100 s) around a fast-slow-fast stretch, so the stream has m and 2m windows decided out of order."""
    segs = draw(st.lists(st.tuples(st.integers(20, 300), GAPS, st.sampled_from([0.01, 0.1, 1.0, 10.0, 100.0])),
                         min_size=0, max_size=5))
    # fast, slow, fast: slow windows after a fast stretch grow to 2m and decide after the next, m-sized
    # windows (decisions out of window order); inserted among the drawn segments at a drawn position
    at = draw(st.integers(0, len(segs)))
    segs[at:at] = [(draw(st.integers(150, 300)), "exp", 0.05), (draw(st.integers(150, 300)), "exp", 20.0),
                   (draw(st.integers(150, 300)), "exp", 0.05)]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    gaps = []
    for k, kind, mean in segs:
        if kind == "exp":
            g = rng.exponential(mean, k)
        elif kind == "const":
            g = np.full(k, mean)
        else:  # bunches of simultaneous arrivals
            g = np.where(rng.random(k) < 0.8, 0.0, rng.exponential(5 * mean, k))
        gaps.append(g)
    return float(draw(st.sampled_from([0.0, 3.7, 1e6]))) + np.cumsum(np.concatenate(gaps))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=mixed_streams(), data=st.data())
def test_predictor_is_causal_on_every_prefix(t, data):
    """predicted_burst_state(a[:n]) == predicted_burst_state(a)[:n] (default parameters), for prefixes
    drawn at random and at the decision arrivals of 2m windows, which decide after later windows."""
    full_pred = b.predict_bursts(t)
    full = np.asarray(ara.predicted_burst_state(t))
    v = np.asarray(full_pred.valid)
    w, e, start = (np.asarray(x)[v] for x in (full_pred.window, full_pred.decision_index, full_pred.start))
    # premise: both window sizes, and a 2m window decided after a window that starts later (the drawn
    # segments around the fast-slow-fast stretch can move the running-mean period so that no window grows;
    # such streams are discarded, and hypothesis fails the test if too few examples satisfy the premise)
    assume((w == 64).any() and (w == 128).any() and np.any(np.diff(start) < 0))
    big = e[w == 128]
    ns = data.draw(st.lists(st.integers(0, len(t)), min_size=3, max_size=6))
    ns += [int(x) + d for x in data.draw(st.lists(st.sampled_from(list(big)), min_size=1, max_size=2)) for d in (0, 1)]
    for n in ns:
        n = min(n, len(t))
        np.testing.assert_array_equal(ara.predicted_burst_state(t[:n]), full[:n], err_msg=f"prefix n={n}")


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=mixed_streams())
def test_predictor_equals_the_online_reference(t):
    want, applied = ref_online(list(t))
    np.testing.assert_array_equal(ara.predicted_burst_state(t), want)
    pred = b.predict_bursts(t)
    v = np.asarray(pred.valid)
    got = list(zip(*(np.asarray(x)[v].tolist() for x in (pred.decision_index, pred.start, pred.window))))
    assert got == applied


def test_predictor_on_short_and_batched_streams():
    t = np.cumsum(np.random.default_rng(7).exponential(1.0, 700))
    t[300:400] = t[300]  # a bunch of simultaneous arrivals
    t[400:] += np.cumsum(np.full(300, 5.0))
    for n in (0, 1, 2, 64, 65):  # no full window yet: every arrival sees "off"
        np.testing.assert_array_equal(ara.predicted_burst_state(t[:n]), np.zeros(n, bool))
    two = np.stack([t, t[::-1].max() - t[::-1] + 0.0])
    batch = ara.predicted_burst_state(two)
    for r in range(2):
        np.testing.assert_array_equal(batch[r], ara.predicted_burst_state(two[r]))
    assert batch.any()  # premise: the streams hold bursts
