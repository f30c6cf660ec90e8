"""Queueing models against closed forms and a plain event-by-event reference."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tieringlab.models import queueing as q

# ----------------------------------------------------------------------------- plain references

def fcfs_reference(arrivals, services, sites, n_sites, free_at0=None):
    """Event-by-event FCFS: walk jobs in arrival order (ties by index); each site keeps the time
    its server becomes free."""
    free_at = [-np.inf] * n_sites if free_at0 is None else list(free_at0)
    resp = np.empty(len(arrivals))
    for n in sorted(range(len(arrivals)), key=lambda i: (arrivals[i], i)):
        k = sites[n]
        start = max(free_at[k], arrivals[n])
        free_at[k] = start + services[n]
        resp[n] = free_at[k] - arrivals[n]
    return resp


# ----------------------------------------------------------------------------- closed forms

def test_mm1_mean_response_within_2pct_of_formula():
    lam, mu, n = 0.5, 1.0, 10**6
    rng = np.random.default_rng(20261121)
    a = np.cumsum(rng.exponential(1 / lam, n))
    s = rng.exponential(1 / mu, n)
    w = float(np.mean(q.fcfs_response_times(a, s)))
    assert q.mm1_mean_response(lam, mu) == pytest.approx(2.0)
    assert w == pytest.approx(float(q.mm1_mean_response(lam, mu)), rel=0.02)


def test_md1_mean_response_within_2pct_of_formula():
    lam, d, n = 0.5, 1.0, 10**6
    rng = np.random.default_rng(7)
    a = np.cumsum(rng.exponential(1 / lam, n))
    s = np.full(n, d)
    w = float(np.mean(q.fcfs_response_times(a, s)))
    assert float(q.md1_mean_response(lam, d)) == pytest.approx(1.5)  # 1 + 0.5*1/(2*0.5)
    assert w == pytest.approx(float(q.md1_mean_response(lam, d)), rel=0.02)


def test_mg1_reduces_to_mm1_for_exponential_service():
    assert float(q.mg1_mean_response(0.3, 2.0, 1.0)) == pytest.approx(float(q.mm1_mean_response(0.3, 0.5)))


def test_closed_forms_reject_unstable_queues():
    with pytest.raises(ValueError, match="unstable"):
        q.mm1_mean_response(1.0, 1.0)
    with pytest.raises(ValueError, match="rho"):
        q.mg1_mean_response(1.0, 2.0, 0.5)


def test_littles_law_on_simulated_sample():
    lam, mu, n = 0.5, 1.0, 10**5
    rng = np.random.default_rng(3)
    a = np.cumsum(rng.exponential(1 / lam, n))
    s = rng.exponential(1 / mu, n)
    d = np.asarray(q.fcfs_departure_times(a, s))
    horizon = a[-1]
    done = d <= horizon                                   # jobs fully inside [0, horizon]
    grid = np.linspace(0.0, horizon, 10**6, endpoint=False)
    L = float(np.mean(q.number_in_system(a, d, grid)))    # time-average number in system
    lam_hat = n / horizon
    W = float(np.mean((d - a)[done]))
    assert L == pytest.approx(float(q.littles_law(arrival_rate=lam_hat, mean_response=W)), rel=0.02)
    assert float(q.littles_law(mean_number=2.0, arrival_rate=0.5)) == 4.0
    assert float(q.littles_law(mean_number=2.0, mean_response=4.0)) == 0.5
    with pytest.raises(ValueError, match="exactly two"):
        q.littles_law(arrival_rate=1.0)


# ----------------------------------------------------------------------------- FCFS against the reference

def test_single_server_hand_case():
    # a = 0, 1, 2 ; s = 3, 1, 1 -> D = 3, 4, 5 ; R = 3, 3, 3
    np.testing.assert_allclose(q.fcfs_response_times([0.0, 1.0, 2.0], [3.0, 1.0, 1.0]), [3, 3, 3])
    # idle gap: a = 0, 10 ; s = 1, 1 -> R = 1, 1 ; busy until 12 first -> D = 13, 14 -> R = 13, 4
    np.testing.assert_allclose(q.fcfs_response_times([0.0, 10.0], [1.0, 1.0]), [1, 1])
    np.testing.assert_allclose(q.fcfs_response_times([0.0, 10.0], [1.0, 1.0], initial_departure=12.0), [13, 4])


def test_unsorted_arrivals_raise_naming_the_index():
    with pytest.raises(ValueError, match=r"non-decreasing.*arrival_times\[2\]"):
        q.fcfs_response_times([0.0, 2.0, 1.0], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="service_times"):
        q.fcfs_response_times([0.0, 1.0], [1.0, -1.0])
    with pytest.raises(ValueError, match="site values"):
        q.fcfs_per_site([0.0, 1.0], [1.0, 1.0], np.array([0, 3]), 2)


def test_fcfs_is_jittable():
    f = jax.jit(q.fcfs_response_times)
    a = np.array([0.0, 0.5, 0.6, 4.0])
    s = np.array([1.0, 1.0, 1.0, 0.5])
    np.testing.assert_allclose(f(a, s), fcfs_reference(a, s, [0] * 4, 1), rtol=1e-12)
    g = jax.jit(q.fcfs_per_site, static_argnums=3)
    np.testing.assert_allclose(g(a, s, np.array([0, 1, 0, 1]), 2),
                               fcfs_reference(a, s, [0, 1, 0, 1], 2), rtol=1e-12)
    # vmap over independent replications (e.g. seeds)
    A = np.stack([a, a + 0.25])
    S = np.stack([s, s[::-1]])
    got = jax.vmap(q.fcfs_response_times)(A, S)
    np.testing.assert_allclose(got[1], fcfs_reference(A[1], S[1], [0] * 4, 1), rtol=1e-12)


jobs = st.integers(min_value=1, max_value=60).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 40), min_size=n, max_size=n),          # arrival ticks (ties likely)
        st.lists(st.integers(0, 15), min_size=n, max_size=n),          # service ticks (zeros allowed)
        st.lists(st.integers(0, 3), min_size=n, max_size=n),           # sites
        st.lists(st.integers(-5, 30), min_size=4, max_size=4),         # initial free-at per site
        st.booleans()))


@settings(max_examples=100, deadline=None)
@given(jobs)
def test_per_site_fcfs_equals_event_by_event_reference(case):
    ticks_a, ticks_s, sites, free0, use_free0 = case
    a = np.asarray(ticks_a, float) * 0.25
    s = np.asarray(ticks_s, float) * 0.5
    sites = np.asarray(sites, np.int64)
    d0 = np.asarray(free0, float) if use_free0 else None
    want = fcfs_reference(a, s, sites, 4, d0)
    got = np.asarray(q.fcfs_per_site(a, s, sites, 4, initial_departure=d0))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # one site and sorted arrivals: the single-server function agrees too
    order = np.argsort(a, kind="stable")
    one = np.asarray(q.fcfs_response_times(a[order], s[order]))
    np.testing.assert_allclose(one, fcfs_reference(a[order], s[order], [0] * len(a), 1), rtol=1e-12, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(jobs, st.lists(st.integers(-2, 80), min_size=1, max_size=30))
def test_number_in_system_equals_brute_force(case, t_ticks):
    ticks_a, ticks_s, sites, _, _ = case
    a = np.asarray(ticks_a, float) * 0.25
    s = np.asarray(ticks_s, float) * 0.5
    sites = np.asarray(sites, np.int64)
    d = np.asarray(q.fcfs_per_site_departure_times(a, s, sites, 4))
    t = np.asarray(t_ticks, float) * 0.25
    inside = (a[None, :] <= t[:, None]) & (t[:, None] < d[None, :])          # (instants, jobs)
    np.testing.assert_array_equal(q.number_in_system(a, d, t), inside.sum(axis=1))
    per_site = np.stack([(inside & (sites[None, :] == k)).sum(axis=1) for k in range(4)])
    np.testing.assert_array_equal(q.number_in_system(a, d, t, site=sites, n_sites=4), per_site)


# ----------------------------------------------------------------------------- LMST Sec. 4.1.2 hand cases

def test_lmst_eq3_and_cumulative_class_rates():
    lam_A = [10.0, 20.0, 30.0, 40.0]
    disk_of = [0, 0, 1, 1]
    cls = [0, 1, 0, 1]
    np.testing.assert_allclose(q.lmst_disk_arrival_rate(lam_A, disk_of, 2), [30.0, 70.0])
    np.testing.assert_allclose(q.lmst_class_cumulative_arrival_rate(lam_A, disk_of, cls, 2, 2),
                               [[10.0, 30.0], [30.0, 70.0]])


def test_lmst_eq6_eq9_hand_values():
    # Eq. 6: QL = lam_bar / (mu - lam_bar) * s ; lam_bar = 100, mu = 400, s = 8 -> 100/300*8
    assert float(q.lmst_queue_length(100.0, 400.0, 8.0)) == pytest.approx(8.0 / 3.0)
    assert float(q.lmst_queue_length(400.0, 400.0, 8.0)) == np.inf
    # Eq. 9: RT = s / (mu - lam) ; 8 / 300
    assert float(q.lmst_response_time(100.0, 400.0, 8.0)) == pytest.approx(8.0 / 300.0)
    assert float(q.lmst_response_time(500.0, 400.0, 8.0)) == np.inf
    # (m, l) broadcasting, ML = SLA_k * mu_j
    lam_bar = np.array([[10.0, 30.0], [30.0, 70.0]])
    ql = q.lmst_queue_length(lam_bar, [100.0, 80.0], [4.0, 2.0])
    np.testing.assert_allclose(ql, [[10 / 90 * 4, 30 / 70 * 4], [30 / 50 * 2, 70 / 10 * 2]])
    np.testing.assert_allclose(q.lmst_max_queue_length([0.001, 0.02], [100.0, 80.0]),
                               [[0.1, 2.0], [0.08, 1.6]])


def test_lmst_sla_constraint_eq7_eq8():
    # two disks, two classes; candidate ALUN with rate 5 of class 1 (the looser SLA)
    lam_D = np.array([30.0, 70.0])
    lam_bar = np.array([[10.0, 30.0], [30.0, 70.0]])
    mu = np.array([100.0, 80.0])
    s = np.array([4.0, 2.0])
    sla = np.array([0.01, 0.05])
    # disk 0: 35 < 100 ok; QL' = 35/65*4 = 2.154 <= ML = 0.05*100 = 5 -> True
    # disk 1: 75 < 80 ok; QL' = 75/5*2 = 30 > ML = 0.05*80 = 4 -> False
    np.testing.assert_array_equal(q.lmst_sla_constraint(5.0, 1, lam_D, lam_bar, mu, s, sla), [True, False])
    # rate 20 of class 0: disk 0 fails Eq. 8 (QL' = 30/70*4 = 1.71 > ML = 1), disk 1 fails Eq. 7 (90 >= 80)
    np.testing.assert_array_equal(q.lmst_sla_constraint(20.0, 0, lam_D, lam_bar, mu, s, sla), [False, False])


def priority_queue_reference(arrivals, services, classes):
    """Plain event-by-event non-preemptive priority server: at each service end, the waiting job of
    the lowest class index (FIFO within a class) starts."""
    import heapq
    n = len(arrivals)
    resp = np.empty(n)
    waiting = []                          # (class, arrival index)
    t, i = 0.0, 0
    while i < n or waiting:
        if not waiting:                   # idle: jump to the next arrival
            t = max(t, arrivals[i])
        while i < n and arrivals[i] <= t:
            heapq.heappush(waiting, (classes[i], i))
            i += 1
        _, j = heapq.heappop(waiting)
        t += services[j]                  # serve j to completion
        resp[j] = t - arrivals[j]
    return resp


def test_priority_buffers_mean_response_against_simulation():
    # three SLA classes sharing one disk queue (thesis Fig. 12), Poisson arrivals, exponential service
    lam = np.array([0.2, 0.3, 0.25])
    es = np.array([1.0, 0.8, 1.2])                         # total load 0.2 + 0.24 + 0.3 = 0.74
    rng = np.random.default_rng(8)
    n = 200_000
    a = np.cumsum(rng.exponential(1 / lam.sum(), n))
    cls = rng.choice(3, n, p=lam / lam.sum())
    s = rng.exponential(es[cls])
    resp = priority_queue_reference(a, s, cls)
    want = np.asarray(q.priority_mean_response(lam, es, np.ones(3)))
    got = np.array([resp[cls == k].mean() for k in range(3)])
    np.testing.assert_allclose(got, want, rtol=0.04)
    assert want[0] < want[1] < want[2]
    # one class: the M/G/1 Pollaczek-Khinchine value
    assert float(q.priority_mean_response([0.5], [1.0], [0.0])[0]) == pytest.approx(
        float(q.md1_mean_response(0.5, 1.0)))
    with pytest.raises(ValueError, match="unstable"):
        q.priority_mean_response([0.5, 0.6], [1.0, 1.0], [1.0, 1.0])
