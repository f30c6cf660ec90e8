"""vFRM heating/cooling, G2-vFRM aged counters and AutoTiering score aging against plain loops and hand values."""

from __future__ import annotations

from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from tieringlab.models.temperature import (
    aged_counters,
    aged_scores,
    cooling_factors,
    cooling_factors_exact,
    heat,
    perf_score,
    temperature_from_history,
    temperatures,
)


def test_cooling_factors_paper_n8_exact():
    expected = [1, Fraction(7, 8), Fraction(3, 4), Fraction(5, 8), Fraction(1, 4), Fraction(1, 8),
                Fraction(1, 16), Fraction(1, 32)]
    assert cooling_factors_exact(8) == expected
    c = cooling_factors(8)
    assert c.dtype == np.float64
    assert c.tolist() == [float(x) for x in expected]  # exact: all are dyadic
    assert cooling_factors().tolist() == c.tolist()  # N = 8 is the default


def test_cooling_factors_other_even_n_follow_eq3_as_printed():
    # N = 6: linear (7-j)/6 for j = 1..3, then 1/2^(j-3) for j = 4..6
    assert cooling_factors_exact(6) == [1, Fraction(5, 6), Fraction(2, 3),
                                        Fraction(1, 2), Fraction(1, 4), Fraction(1, 8)]
    # N = 10: linear for j = 1..5, then 1/2^(j-3) for j = 6..10
    assert cooling_factors_exact(10)[4:6] == [Fraction(6, 10), Fraction(1, 8)]
    for n in (6, 8, 10, 12, 20):
        assert np.all(np.diff(cooling_factors(n)) < 0)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 7, 9, -8])
def test_cooling_factors_reject_undefined_n(n):
    with pytest.raises(ValueError, match="n_epochs must be an even integer >= 6"):
        cooling_factors(n)


def test_cooling_factors_reject_non_int():
    with pytest.raises(TypeError, match="n_epochs must be a Python int"):
        cooling_factors(8.0)


def test_heat_is_lambda_times_count():
    np.testing.assert_array_equal(heat(np.array([0, 3, 5]), 2.5), [0.0, 7.5, 12.5])
    assert heat(np.array([1]), 1).dtype == jnp.float64


def loop_temperatures(counts, lam, n):
    """Eq. 1-3 written per bin and per epoch, with the factors typed from Eq. 3."""
    c = {j: ((n + 1 - j) / n if j < n / 2 + 1 else 1 / 2 ** (j - 3)) for j in range(1, n + 1)}
    n_ep, n_bins = counts.shape
    lam = np.broadcast_to(lam, (n_bins,))
    t = np.zeros((n_ep, n_bins))
    for i in range(n_ep):
        for b in range(n_bins):
            for j in range(1, n + 1):
                if i - j >= 0:
                    t[i, b] += lam[b] * counts[i - j, b] * c[j]
    return t


count_matrices = arrays(np.int64, st.tuples(st.integers(1, 25), st.integers(1, 6)),
                        elements=st.integers(0, 1000))


@settings(max_examples=40, deadline=None)
@given(count_matrices, st.sampled_from([6, 8, 10]), st.floats(0.1, 10.0))
def test_temperatures_equal_double_loop(counts, n, lam):
    got = np.asarray(temperatures(counts, lam, n_epochs=n))
    np.testing.assert_allclose(got, loop_temperatures(counts, lam, n), rtol=1e-12, atol=1e-9)


@settings(max_examples=20, deadline=None)
@given(count_matrices, st.data())
def test_temperatures_per_bin_lambda(counts, data):
    lam = np.array(data.draw(st.lists(st.floats(0.0, 5.0), min_size=counts.shape[1], max_size=counts.shape[1])))
    got = np.asarray(temperatures(counts, lam))
    np.testing.assert_allclose(got, loop_temperatures(counts, lam, 8), rtol=1e-12, atol=1e-9)


def test_temperatures_hand_case():
    # one burst of 8 IOs in epoch 0: T_i = 8 * C_i for i = 1..8, then 0
    counts = np.zeros((11, 1), dtype=int)
    counts[0, 0] = 8
    t = np.asarray(temperatures(counts))[:, 0]
    assert t.tolist() == [0, 8, 7, 6, 5, 2, 1, 0.5, 0.25, 0, 0]


def test_temperatures_jit_and_vmap_over_lambda():
    counts = np.arange(40).reshape(10, 4)
    lams = jnp.array([0.5, 1.0, 2.0])
    batched = jax.vmap(lambda l: temperatures(counts, l))(lams)
    assert batched.shape == (3, 10, 4)
    for k, l in enumerate([0.5, 1.0, 2.0]):
        np.testing.assert_allclose(batched[k], loop_temperatures(counts, l, 8), rtol=1e-12)
    jitted = jax.jit(lambda c: temperatures(c, 1.0))(counts)
    np.testing.assert_allclose(jitted, loop_temperatures(counts, 1.0, 8), rtol=1e-12)


def test_temperatures_extra_axes_vm_by_bin():
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 50, (12, 2, 3))  # epoch x VM x bin
    lam = np.array([[1.0], [3.0]])  # per VM
    got = np.asarray(temperatures(counts, lam))
    for v in range(2):
        np.testing.assert_allclose(got[:, v, :], loop_temperatures(counts[:, v, :], lam[v, 0], 8), rtol=1e-12)


def test_temperature_from_history_equals_rows():
    rng = np.random.default_rng(2)
    counts = rng.integers(0, 30, (20, 4))
    lam = np.array([1.0, 2.0, 0.5, 3.0])
    t = np.asarray(temperatures(counts, lam))
    for i in (8, 13, 19):
        recent = counts[i - 8:i][::-1]  # M_{i-1}, ..., M_{i-8}
        np.testing.assert_allclose(temperature_from_history(recent, lam), t[i], rtol=1e-12)
    with pytest.raises(ValueError, match="n_epochs must be an even integer"):
        temperature_from_history(counts[:5])


def test_temperatures_need_epoch_axis():
    with pytest.raises(ValueError, match="epoch axis"):
        temperatures(np.int64(3))
    with pytest.raises(ValueError, match="without adding or changing the epoch axis"):
        temperatures(np.ones((5, 3)), np.ones((2, 1, 1)))


# ----------------------------------------------------------------------------- G2-vFRM counters


def test_aged_counters_hand_cases():
    counts = np.array([[4, 1], [2, 0], [0, 0], [7, 3]])
    # period 1: F = 4, (4>>1)+2 = 4, (4>>1)+0 = 2, (2>>1)+7 = 8 ; 1, 0, 0, 3
    np.testing.assert_array_equal(aged_counters(counts, period=1), [[4, 1], [4, 0], [2, 0], [8, 3]])
    # period 2: shift only entering epochs 2: F = 4, 6, 3, 10 ; 1, 1, 0, 3
    np.testing.assert_array_equal(aged_counters(counts, period=2), [[4, 1], [6, 1], [3, 0], [10, 3]])
    # never aging (period longer than the trace) is the plain cumulative count
    np.testing.assert_array_equal(aged_counters(counts, period=100), np.cumsum(counts, axis=0))


@settings(max_examples=25, deadline=None)
@given(count_matrices, st.integers(1, 5))
def test_aged_counters_equal_loop(counts, period):
    expected = np.zeros_like(counts)
    f = np.zeros(counts.shape[1], dtype=np.int64)
    for e in range(counts.shape[0]):
        if e > 0 and e % period == 0:
            f = f // 2
        f = f + counts[e]
        expected[e] = f
    np.testing.assert_array_equal(aged_counters(counts, period), expected)


def test_aged_counters_and_scores_jit():
    counts = np.array([[4, 1], [2, 0], [0, 0], [7, 3]])
    np.testing.assert_array_equal(jax.jit(lambda c: aged_counters(c, 2))(counts), [[4, 1], [6, 1], [3, 0], [10, 3]])
    scores = jax.vmap(lambda a: aged_scores(np.array([1.0, 0.0, 2.0]), a))(jnp.array([0.5, 1.0]))
    np.testing.assert_allclose(scores, [[1.0, 0.5, 2.25], [1.0, 1.0, 3.0]], atol=1e-15)


def test_aged_counters_errors():
    with pytest.raises(ValueError, match="period must be a positive int"):
        aged_counters(np.ones((3, 2), int), period=0)
    with pytest.raises(TypeError, match="integer access counts"):
        aged_counters(np.ones((3, 2)), period=1)


# ----------------------------------------------------------------------------- AutoTiering Eq. 7


def test_perf_score_eq7_hand_case():
    # 0.5 * 2 + 3 - 0.1 * 10 = 3
    assert float(perf_score(2.0, 3.0, 0.5, wet_mig=0.1, mig_cost=10.0)) == pytest.approx(3.0, abs=1e-15)


def test_aged_scores_hand_case():
    curr = np.array([1.0, 0.0, 2.0, 0.0])
    # S0 = 1, S1 = 0.5, S2 = 0.25 + 2 = 2.25, S3 = 1.125
    np.testing.assert_allclose(aged_scores(curr, 0.5), [1.0, 0.5, 2.25, 1.125], rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match="wet_mig of shape"):
        aged_scores(curr, 0.5, wet_mig=np.ones((2, 4)), mig_cost=1.0)
    # with a migration penalty and a starting history of 4
    got = aged_scores(curr, 0.5, wet_mig=2.0, mig_cost=np.array([0.5, 0.0, 0.0, 1.0]), initial=4.0)
    # S0 = 2 + 1 - 1 = 2, S1 = 1, S2 = 0.5 + 2 = 2.5, S3 = 1.25 - 2 = -0.75
    np.testing.assert_allclose(got, [2.0, 1.0, 2.5, -0.75], rtol=0, atol=1e-15)


@settings(max_examples=20, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 15), st.integers(1, 4)), elements=st.floats(-100, 100)),
       st.floats(0.0, 1.0))
def test_aged_scores_equal_plain_recurrence(curr, a):
    s = np.zeros(curr.shape[1])
    expected = []
    for row in curr:
        s = a * s + row
        expected.append(s)
    np.testing.assert_allclose(aged_scores(curr, a), np.array(expected), rtol=1e-12, atol=1e-9)
