"""queueing.priority_response_times (the disk queue of thesis Fig. 12) against independent truth:
a plain event-by-event heap simulation written here, SimPy's PriorityResource, the FCFS model with one
class, the M/G/1 non-preemptive priority closed form, and the properties that define the schedule."""

from __future__ import annotations

import heapq

import numpy as np
import pytest
import simpy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tieringlab.models import queueing as q

ENGINES = ("numba", "jax")


# ----------------------------------------------------------------------------- plain references

def heap_reference(a, s, prio, free_at=-np.inf):
    """Event by event: whenever the server frees at t, every job with a <= t joins a heap keyed by
    (priority, arrival, index) and the smallest starts; with nothing waiting the clock jumps to the next
    arrival. Returns departure times in input order."""
    n = len(a)
    dep = [0.0] * n
    waiting, t, i, done = [], free_at, 0, 0
    while done < n:
        while i < n and a[i] <= t:
            heapq.heappush(waiting, (prio[i], a[i], i))
            i += 1
        if not waiting:
            t = a[i]                       # idle until the next arrival(s)
            continue
        _, _, j = heapq.heappop(waiting)
        t = max(t, a[j]) + s[j]
        dep[j] = t
        done += 1
    return np.array(dep)


def simpy_reference(a, s, prio):
    env = simpy.Environment()
    server = simpy.PriorityResource(env, capacity=1)
    dep = np.empty(len(a))

    def job(i):
        yield env.timeout(a[i])
        with server.request(priority=int(prio[i])) as req:
            yield req
            yield env.timeout(s[i])
        dep[i] = env.now

    for i in range(len(a)):
        env.process(job(i))
    env.run()
    return dep


# (XLA on CPU flushes subnormal floats to zero; times here are 0 or >= 1e-3.)
jobs = st.integers(1, 40).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from([0.0, 0.0, 0.5, 1.0, 2.0]) | st.floats(1e-3, 3), min_size=n, max_size=n),
    st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.5]) | st.floats(1e-3, 4), min_size=n, max_size=n),
    st.lists(st.integers(-2, 3), min_size=n, max_size=n),
))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=jobs, free_at=st.sampled_from([-np.inf, 0.0, 3.0]))
def test_engines_equal_heap_reference_bit_for_bit(jobs, free_at):
    ia, s, prio = (np.array(x) for x in jobs)
    a = np.cumsum(ia)                      # many exact ties (zero gaps) and simultaneous frees
    want = heap_reference(list(a), list(s), list(prio), free_at)
    for engine in ENGINES:
        got = q.priority_departure_times(a, s, prio, initial_departure=free_at, engine=engine)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(q.priority_response_times(a, s, prio, initial_departure=free_at,
                                                                 engine=engine), want - a)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=jobs)
def test_schedule_properties(jobs):
    """The four properties that define the schedule, checked on the output alone."""
    ia, s, prio = (np.array(x) for x in jobs)
    a = np.cumsum(ia)
    d = q.priority_departure_times(a, s, prio)
    n = len(a)
    # service order: by departure; at equal departures a zero-length job was served after the other one
    order = np.lexsort((s == 0, d))
    start = np.empty(n)
    prev = -np.inf
    for j in order:                               # exact start times, and a consistent order
        start[j] = max(prev, a[j])
        assert start[j] + s[j] == d[j]
        prev = d[j]
    # one server, never before arrival, intervals do not overlap
    assert np.all(start >= a)
    assert np.all(start[order][1:] >= d[order][:-1])
    # work conserving: no idle gap of the server overlaps the wait (a_j, start_j) of any job
    gaps = [(d[order][i], start[order][i + 1]) for i in range(n - 1) if start[order][i + 1] > d[order][i]]
    for j in range(n):
        for g0, g1 in gaps:
            assert not max(g0, a[j]) < min(g1, start[j])
    # priority rule: nobody with a better key was waiting when a job started
    for j in range(n):
        for i in range(n):
            if i != j and a[i] <= start[j] and start[i] > start[j]:
                assert (prio[i], a[i], i) > (prio[j], a[j], j)
    # FIFO inside a class
    for k in np.unique(prio):
        m = prio == k
        assert np.all(np.diff(start[m]) >= 0)
    # relabelling the classes by an increasing map changes nothing
    np.testing.assert_array_equal(q.priority_departure_times(a, s, 10 * prio + 7), d)


@settings(max_examples=20, deadline=None)
@given(jobs=jobs)
def test_work_conserving_makespan_equals_fcfs(jobs):
    ia, s, prio = (np.array(x) for x in jobs)
    a = np.cumsum(ia)
    d = q.priority_departure_times(a, s, prio)
    fcfs = np.asarray(q.fcfs_departure_times(a, s))
    assert d.max() == pytest.approx(fcfs.max(), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("load", [0.7, 1.4])   # 1.4: overload, the low classes starve and queues grow
def test_equals_simpy_priority_resource(load):
    rng = np.random.default_rng(int(load * 10))
    n = 3000
    a = np.cumsum(rng.exponential(1 / load, n))     # continuous: no simultaneous arrivals
    s = rng.exponential(1.0, n)
    prio = rng.choice(3, n, p=[0.3, 0.5, 0.2])
    want = simpy_reference(a, s, prio)
    for engine in ENGINES:
        np.testing.assert_array_equal(q.priority_departure_times(a, s, prio, engine=engine), want)
    if load > 1:  # premise of the overload case: the lowest class waits far longer than the highest
        r = want - a
        assert r[prio == 2].mean() > 50 * r[prio == 0].mean()


def test_one_class_is_fcfs():
    rng = np.random.default_rng(3)
    a = np.cumsum(rng.exponential(1.0, 5000))
    s = rng.exponential(0.95, 5000)
    fcfs = np.asarray(q.fcfs_response_times(a, s))
    for engine in ENGINES:
        got = q.priority_response_times(a, s, np.zeros(5000, np.int64), engine=engine)
        # same schedule; FCFS sums service times by prefix sums, so the last bits may differ
        np.testing.assert_allclose(got, fcfs, rtol=1e-9, atol=1e-9)
    got = q.priority_response_times(a, s, np.full(5000, 4), initial_departure=a[0] + 30.0)
    np.testing.assert_allclose(got, np.asarray(q.fcfs_response_times(a, s, initial_departure=a[0] + 30.0)),
                               rtol=1e-9, atol=1e-9)


def test_mean_response_matches_nonpreemptive_priority_closed_form():
    # two SLA classes on one disk (Fig. 12), Poisson arrivals, exponential service (Cobham's formula)
    lam = np.array([0.35, 0.4])
    es = np.array([1.0, 1.1])                      # load 0.35 + 0.44 = 0.79
    rng = np.random.default_rng(21)
    n = 400_000
    a = np.cumsum(rng.exponential(1 / lam.sum(), n))
    cls = rng.choice(2, n, p=lam / lam.sum())
    s = rng.exponential(es[cls])
    r = q.priority_response_times(a, s, cls, n_classes=2)
    want = np.asarray(q.priority_mean_response(lam, es, np.ones(2)))
    np.testing.assert_allclose([r[cls == 0].mean(), r[cls == 1].mean()], want, rtol=0.05)


def test_hand_case():
    # t=0: low job (1) arrives alone and starts (non-preemptive); t=1: high (0) and low (1) arrive and wait;
    # at t=3 the high one starts although the low one arrived first... no: same time, so priority decides.
    a = np.array([0.0, 1.0, 1.0, 1.5])
    s = np.array([3.0, 1.0, 1.0, 0.5])
    prio = np.array([1, 1, 0, 0])
    # order: job0 [0,3], job2 (high, a=1) [3,4], job3 (high, a=1.5) [4,4.5], job1 (low) [4.5,5.5]
    np.testing.assert_array_equal(q.priority_departure_times(a, s, prio), [3.0, 5.5, 4.0, 4.5])
    np.testing.assert_array_equal(q.priority_response_times(a, s, prio), [3.0, 4.5, 3.0, 3.0])
    # simultaneous arrivals at an idle server: the better class starts
    np.testing.assert_array_equal(q.priority_departure_times([0.0, 0.0], [1.0, 1.0], [1, 0]), [2.0, 1.0])
    assert q.priority_response_times([], [], []).shape == (0,)


def test_errors_name_the_parameter():
    a, s, p = np.array([0.0, 1.0]), np.array([1.0, 1.0]), np.array([0, 1])
    with pytest.raises(ValueError, match=r"non-decreasing.*arrival_times\[1\]"):
        q.priority_response_times(a[::-1], s, p)
    with pytest.raises(ValueError, match=r"service_times must be >= 0"):
        q.priority_response_times(a, [1.0, -1.0], p)
    with pytest.raises(ValueError, match="priority must hold integers"):
        q.priority_response_times(a, s, [0.5, 1.0])
    with pytest.raises(ValueError,
                       match=r"priority must lie in the classes \[0, n_classes\) = \[0, 2\); priority\[1\] = 5"):
        q.priority_response_times(a, s, [0, 5], n_classes=2)
    with pytest.raises(ValueError, match="one entry per job"):
        q.priority_response_times(a, s, [0])
    with pytest.raises(ValueError, match="engine must be one of 'auto', 'numba', 'jax'"):
        q.priority_response_times(a, s, p, engine="simpy")
    with pytest.raises(ValueError, match="arrival_times must be finite"):
        q.priority_response_times([0.0, np.nan], s, p)
