"""tieringlab.stats against closed forms and brute force: the Student-t interval, the separation tests, the
paired gaps. Every experiment's verdicts stand on these few lines."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tieringlab import stats

# t_{0.975} quantiles with 1, 2 and 4 degrees of freedom (printed tables: 12.706, 4.303, 2.776)
T975 = {1: 12.706204736174698, 2: 4.302652729749464, 4: 2.7764451051977934, 7: 2.3646242515927849}


def test_mean_ci_is_the_student_t_interval():
    m, h = stats.mean_ci([1.0, 2.0, 3.0])  # mean 2, sample sd 1
    assert m == 2.0
    assert h == pytest.approx(T975[2] / math.sqrt(3), rel=1e-9)
    m, h = stats.mean_ci([[0.0, 2.0], [1.0, 1.0]])  # two rows, over the last axis
    np.testing.assert_allclose(m, [1.0, 1.0])
    np.testing.assert_allclose(h, [T975[1] * math.sqrt(2) / math.sqrt(2), 0.0])
    m0, h0 = stats.mean_ci(np.array([[1.0, 5.0], [3.0, 5.0], [5.0, 5.0], [7.0, 5.0], [9.0, 5.0]]), axis=0)
    np.testing.assert_allclose(m0, [5.0, 5.0])
    np.testing.assert_allclose(h0, [T975[4] * math.sqrt(10.0) / math.sqrt(5), 0.0])


def test_one_replication_has_no_interval_and_decides_nothing():
    m, h = stats.mean_ci([4.0])
    assert m == 4.0 and math.isnan(h)
    assert not stats.separated([10.0], [1.0])
    assert not stats.paired_above([3.0])
    assert math.isnan(stats.interval([1.0]).half)


def test_interval_ends():
    iv = stats.interval([1.0, 2.0, 3.0])
    assert (iv.lo, iv.hi) == (iv.mean - iv.half, iv.mean + iv.half)


def test_separation_tests_agree_with_their_definitions():
    a, b = [10.0, 11.0, 12.0], [1.0, 2.0, 3.0]
    ia, ib = stats.interval(a), stats.interval(b)
    assert stats.separated(a, b) is (ia.lo > ib.hi) is True
    assert stats.separated(b, a) is False
    assert stats.separation_ratio(b, a) == pytest.approx(ia.lo / ib.hi)
    assert stats.separation_ratio(b, a) > 1 > stats.separation_ratio(a, b)
    assert stats.relative_separation(a, b, higher=True) == pytest.approx((ia.lo - ib.hi) / ib.mean)
    assert stats.relative_separation(b, a, higher=False) == pytest.approx((ia.lo - ib.hi) / ia.mean)
    assert math.isnan(stats.relative_separation(a, [0.0, 0.0, 0.0], higher=True))


def test_pairing_finds_what_overlapping_intervals_hide():
    # common random numbers: the runs move together, b is 2 % above a in every replication
    base = np.array([100.0, 140.0, 80.0, 120.0, 95.0])
    a, b = base, base * 1.02
    assert not stats.separated(b, a)                 # marginal intervals overlap
    m, h = stats.paired_gap_pct(b, a)
    assert m == pytest.approx(2.0) and h == pytest.approx(0.0, abs=1e-9)
    assert stats.paired_above(b - a)
    d, hd = stats.paired_diff(b, a)
    assert d == pytest.approx(0.02 * base.mean())


def test_fmt_ci():
    assert stats.fmt_ci([1.0, 2.0, 3.0], scale=1000.0, unit=" ms") == \
        f"{2000.0:.4g} ± {1000.0 * T975[2] / math.sqrt(3):.2g} ms"


@settings(max_examples=60)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=12),
       st.floats(0.0, 1e6, allow_nan=False))
def test_interval_is_shift_equivariant_and_a_constant_has_zero_width(xs, c):
    x = np.asarray(xs)
    m, h = stats.mean_ci(x)
    m2, h2 = stats.mean_ci(x + c)
    assert m2 == pytest.approx(m + c, rel=1e-9, abs=1e-6)
    assert h2 == pytest.approx(h, rel=1e-6, abs=1e-3)
    assert stats.mean_ci(np.full(len(xs), c))[1] == pytest.approx(0.0, abs=1e-6 * max(1.0, c))


@settings(max_examples=60)
@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=2, max_size=10), st.floats(1.0, 1e3))
def test_a_shift_beyond_both_widths_separates(xs, gap):
    a = np.asarray(xs)
    _, h = stats.mean_ci(a)
    b = a + 2 * h + gap  # the same spread, moved past both half-widths
    assert stats.separated(b, a) and not stats.separated(a, b)
    assert stats.paired_above(b - a)


# ---------------------------------------------------------------- power, replications, "up to" noise floors


@pytest.mark.parametrize(("d", "n"), [(1.0, 10), (0.8, 15), (0.5, 34)])
def test_replications_match_published_sample_sizes(d, n):
    """The one-sample (paired) two-sided t-test at alpha 0.05 and power 0.8: n = 10 for d = 1, 15 for d = 0.8,
    34 for d = 0.5 (Cohen 1988, Table 2.4.1; G*Power gives the same)."""
    assert stats.replications_for(d, 1.0) == n
    assert stats.power(d, 1.0, n) >= 0.8 > stats.power(d, 1.0, n - 1)
    assert stats.replications_for(2 * d, 2.0) == n  # only effect / sd matters


def test_power_agrees_with_simulated_t_tests():
    rng = np.random.default_rng(7)
    n, d, sims = 8, 0.9, 20_000
    x = rng.normal(d, 1.0, (sims, n))
    t = x.mean(axis=1) / (x.std(axis=1, ddof=1) / math.sqrt(n))
    crit = T975[n - 1]
    simulated = float(np.mean(np.abs(t) > crit))
    assert stats.power(d, 1.0, n) == pytest.approx(simulated, abs=0.01)


def test_power_at_a_large_effect_and_two_replications_is_the_near_tail():
    """At 13.31 +- 1.918 with n = 2 (one degree of freedom) scipy's far tail is nan; the power is the near tail,
    checked by simulating the t-test, and the replications needed are more than 2."""
    rng = np.random.default_rng(3)
    x = rng.normal(13.31, 1.918, (200_000, 2))
    t = x.mean(axis=1) / (x.std(axis=1, ddof=1) / math.sqrt(2))
    simulated = float(np.mean(np.abs(t) > T975[1]))
    assert stats.power(13.31, 1.918, 2) == pytest.approx(simulated, abs=0.01)
    assert stats.replications_for(13.31, 1.918) == 3


def test_replications_refuse_what_cannot_be_detected():
    with pytest.raises(ValueError, match="effect of 0"):
        stats.replications_for(0.0, 1.0)
    with pytest.raises(ValueError, match="more than 50 replications"):
        stats.replications_for(0.01, 1.0, n_max=50)
    assert stats.power(1.0, 1.0, 1) == 0.0


def test_an_up_to_statistic_between_identical_systems_does_not_beat_its_noise_floor():
    rng = np.random.default_rng(3)
    base = rng.normal(100.0, 5.0, (6, 10))     # 6 conditions, 10 seeds: A and B differ by noise only
    a, b = base + rng.normal(0, 3, base.shape), base + rng.normal(0, 3, base.shape)
    fwd, rev = stats.best_case(a, b)
    assert fwd > 0 and rev > 0  # "up to" is positive both ways between identical systems
    ok, nums = stats.beats_noise_floor(a, b)
    assert not ok and nums["forward"] == fwd and nums["reverse"] == rev
    # a real gain of 20 % in one condition clears it
    a2 = a.copy()
    a2[2] *= 1.2
    ok, nums = stats.beats_noise_floor(a2, b)
    assert ok and nums["forward"] > nums["null_q95"] > 0


def test_best_case_is_the_maximum_relative_gain_and_the_null_is_deterministic():
    a = np.array([[110.0, 110.0], [100.0, 100.0]])
    b = np.array([[100.0, 100.0], [125.0, 125.0]])
    assert stats.best_case(a, b) == (pytest.approx(10.0), pytest.approx(25.0))
    assert stats.sign_flip_null(a, b, n=200, seed=5) == stats.sign_flip_null(a, b, n=200, seed=5)
    with pytest.raises(ValueError, match="paired"):
        stats.best_case(a, b[:1])
