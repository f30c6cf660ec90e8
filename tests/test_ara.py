"""ARA dispatcher (thesis Ch. 3) against a plain event-by-event reference written here."""

from __future__ import annotations

import functools
import heapq
import math

import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tieringlab.policies import _ara_engine as engine
from tieringlab.policies import ara


def P(n_sites, policy, **kw):
    """The dispatcher's params: ``AraParams(n_sites, policy=...)`` with ``k``, ``delay_s``, ``th_s``, ``th_l``."""
    return ara.AraParams(n_sites=n_sites, policy=policy, **kw)


# --------------------------------------------------------------------------------------------------
# Reference: an event-driven simulation, one event at a time (refresh instants, arrivals, departures)
# --------------------------------------------------------------------------------------------------
def reference(a, s, n_sites, policy, u, *, k=1, delay=1.0, th_s=1, th_l=None, state=None):
    """Event-by-event dispatcher. Events: the balancer's refresh at w*D (it reads the number of jobs
    in system at each site), job arrivals, job departures. Returns (response, site) per job."""
    n = len(a)
    th_l = math.ceil(0.5 * n_sites) if th_l is None else th_l
    # Events in time order; at equal times: departures first (a job leaving at t is gone at t),
    # then the refresh of a window, then arrivals, in job order.
    events = []
    for w in range(int(max(a) / delay) + 2):  # every refresh instant w*D up to past the last arrival
        events.append((w * delay, 1, w))
    for j in range(n):
        events.append((a[j], 2, j))
    heapq.heapify(events)
    in_system = [0] * n_sites
    queue_free_at = [-math.inf] * n_sites
    view = [0] * n_sites
    resp = [0.0] * n
    site_of = [0] * n
    while events:
        t, kind, x = heapq.heappop(events)
        if kind == 0:       # departure from site x
            in_system[x] -= 1
        elif kind == 1:     # refresh: the balancer's stale view until the next refresh
            view = list(in_system)
        else:               # arrival of job x, assigned on the stale view
            j = x
            if policy == "rand":
                site = int(u[j] * n_sites)
            else:
                kk = {"qlen": 1, "ara": k}.get(policy)
                if kk is None:
                    kk = th_l if state[j] else th_s
                ranking = sorted(range(n_sites), key=lambda i: (view[i], i))
                site = ranking[min(int(u[j] * kk), kk - 1)]
            d = max(queue_free_at[site], a[j]) + s[j]
            queue_free_at[site] = d
            in_system[site] += 1
            heapq.heappush(events, (d, 0, site))
            resp[j] = d - a[j]
            site_of[j] = site
    return np.array(resp), np.array(site_of)


def _jobs(rng, n, mean_ia=0.3, mean_s=1.0):
    a = np.cumsum(rng.exponential(mean_ia, n))
    s = rng.exponential(mean_s, n)
    return a, s


jobs_strategy = st.integers(1, 40).flatmap(lambda n: st.tuples(
    # (XLA on CPU flushes subnormal floats to zero; times are 0 or >= 1 ms here.)
    st.lists(st.sampled_from([0.0, 0.05, 0.3, 0.7, 1.0, 1.9, 4.0]) | st.floats(1e-3, 3), min_size=n, max_size=n),
    st.lists(st.just(0.0) | st.floats(1e-3, 6), min_size=n, max_size=n),
    st.lists(st.floats(0, 1, exclude_max=True), min_size=n, max_size=n),
    st.lists(st.booleans(), min_size=n, max_size=n),
))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=jobs_strategy, n_sites=st.sampled_from([1, 3, 5]), policy=st.sampled_from(ara.POLICIES),
       delay=st.sampled_from([0.5, 1.0, 2.5]), kseed=st.integers(0, 10**6), block=st.sampled_from([4]))
def test_matches_event_driven_reference(jobs, n_sites, policy, delay, kseed, block):
    ia, s, u, state = (np.array(x) for x in jobs)
    a = np.cumsum(ia)
    rng = np.random.default_rng(kseed)
    k = int(rng.integers(1, n_sites + 1))
    th_s = int(rng.integers(1, n_sites + 1))
    th_l = int(rng.integers(1, n_sites + 1))
    got = ara.simulate(P(n_sites, policy, k=k, delay_s=delay, th_s=th_s, th_l=th_l), a, s, u=u, block=block,
                       n_blocks=64, burst_state=state, predicted_state=state)
    want_r, want_site = reference(list(a), list(s), n_sites, policy, list(u), k=k, delay=delay, th_s=th_s,
                                  th_l=th_l, state=list(state))
    np.testing.assert_array_equal(np.asarray(got["site"].values), want_site)
    np.testing.assert_array_equal(np.asarray(got["response_s"].values), want_r)  # bit-identical


@pytest.mark.parametrize("policy", ["qlen", "ara", "rand"])
def test_random_workload_identical_to_reference_with_key(policy):
    rng = np.random.default_rng(3)
    a, s = _jobs(rng, 600, mean_ia=0.1, mean_s=1.2)
    key = jax.random.key(7)
    got = ara.dispatch(P(8, policy, k=3, delay_s=1.0), a, s, key=key)
    u = np.asarray(ara.uniforms(key, len(a)))  # the documented per-job uniforms of this key
    want, _ = reference(list(a), list(s), 8, policy, list(u), k=3, delay=1.0)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_ring_buffer_regrows_and_stays_exact():
    # Strong herd: many jobs per window to one site, so jobs stay in system for many windows; a calendar
    # ring of 8 blocks must be regrown (several times), results unchanged.
    rng = np.random.default_rng(5)
    a, s = _jobs(rng, 300, mean_ia=0.02, mean_s=0.5)
    got = ara.simulate(P(4, "qlen", delay_s=1.0), a, s, buffer=8, block=4)
    want, site = reference(list(a), list(s), 4, "qlen", [0.0] * len(a), delay=1.0)
    np.testing.assert_array_equal(np.asarray(got["response_s"].values), want)
    np.testing.assert_array_equal(np.asarray(got["site"].values), site)
    # premise: some job leaves the view more than 8 windows (so more than 8 blocks) after it arrived
    assert np.max(np.floor(a + want) - np.floor(a)) > 8


def test_single_site_is_fcfs():
    rng = np.random.default_rng(1)
    a, s = _jobs(rng, 500)
    d = np.empty_like(a)
    prev = -np.inf
    for j in range(len(a)):  # Lindley recursion
        prev = max(prev, a[j]) + s[j]
        d[j] = prev
    for policy in ("qlen", "rand", "ara"):
        got = ara.dispatch(P(1, policy), a, s, key=jax.random.key(0))
        np.testing.assert_array_equal(np.asarray(got), d - a)


def jsq_reference(a, s, n_sites):
    """Join the shortest queue with exact, instantaneous information (ties to the lowest index)."""
    deps = [[] for _ in range(n_sites)]
    out = np.empty(len(a))
    for j in range(len(a)):
        q = [sum(1 for d in deps[i] if d > a[j]) for i in range(n_sites)]
        i = min(range(n_sites), key=lambda x: (q[x], x))
        d = max(deps[i][-1] if deps[i] else -np.inf, a[j]) + s[j]
        deps[i].append(d)
        out[j] = d - a[j]
    return out


def test_small_delay_qlen_is_jsq():
    rng = np.random.default_rng(2)
    a, s = _jobs(rng, 400, mean_ia=0.2, mean_s=2.0)
    got = ara.dispatch(P(6, "qlen", delay_s=1e-7), a, s)
    np.testing.assert_allclose(np.asarray(got), jsq_reference(a, s, 6), rtol=0, atol=1e-9)
    # ... while with D = 5 s the herd effect changes the answer
    assert not np.allclose(np.asarray(ara.dispatch(P(6, "qlen", delay_s=5.0), a, s)), jsq_reference(a, s, 6))


def test_qlen_herds_each_window_to_one_site():
    rng = np.random.default_rng(4)
    a, s = _jobs(rng, 800, mean_ia=0.05)
    res = ara.simulate(P(16, "qlen", delay_s=1.0), a, s)
    w = np.floor(a / 1.0)
    site = res["site"].values
    for win in np.unique(w)[:50]:
        assert len(set(site[w == win])) == 1


def test_rand_does_not_depend_on_delay():
    rng = np.random.default_rng(6)
    a, s = _jobs(rng, 300)
    key = jax.random.key(11)
    r1 = ara.dispatch(P(16, "rand", delay_s=1.0), a, s, key=key)
    r6 = ara.dispatch(P(16, "rand", delay_s=6.0), a, s, key=key)
    np.testing.assert_array_equal(np.asarray(r1), np.asarray(r6))


def test_special_cases_of_ara():
    rng = np.random.default_rng(8)
    a, s = _jobs(rng, 300, mean_ia=0.1)
    key = jax.random.key(2)
    qlen = ara.dispatch(P(8, "qlen"), a, s)
    np.testing.assert_array_equal(np.asarray(ara.dispatch(P(8, "ara", k=1), a, s, key=key)), np.asarray(qlen))
    off = np.zeros(len(a), bool)
    np.testing.assert_array_equal(
        np.asarray(ara.dispatch(P(8, "ara_opt", th_s=1, th_l=8), a, s, burst_state=off, key=key)), np.asarray(qlen))
    np.testing.assert_array_equal(
        np.asarray(ara.dispatch(P(8, "ara_opt", th_s=5, th_l=5), a, s, burst_state=~off, key=key)),
        np.asarray(ara.dispatch(P(8, "ara", k=5), a, s, key=key)))
    pred = ara.dispatch(P(8, "ara_pred", th_s=3, th_l=3), a, s, key=key, predictor=lambda x: np.ones(len(x), bool))
    np.testing.assert_array_equal(np.asarray(pred), np.asarray(ara.dispatch(P(8, "ara", k=3), a, s, key=key)))


def test_block_size_does_not_change_results():
    rng = np.random.default_rng(9)
    a, s = _jobs(rng, 500, mean_ia=0.05)
    key = jax.random.key(0)
    outs = [ara.simulate(P(5, "ara", k=2), a, s, key=key, block=b)["response_s"].values for b in (1, 3, 64)]
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], outs[2])


def test_batched_replications_equal_single_runs():
    rng = np.random.default_rng(10)
    A, S = zip(*[_jobs(rng, 200, mean_ia=0.1) for _ in range(3)])
    A, S = np.stack(A), np.stack(S)
    key = jax.random.key(5)
    keys = jax.random.split(key, 3)
    batch = np.asarray(ara.dispatch(P(4, "ara", k=2), A, S, key=key))
    for r in range(3):
        np.testing.assert_array_equal(batch[r], np.asarray(ara.dispatch(P(4, "ara", k=2), A[r], S[r], key=keys[r])))


@pytest.mark.parametrize("policy", ["qlen", "ara_opt"])
def test_replication_groups_run_concurrently_with_the_same_results(policy):
    # 16 replications in 1, 2 and 5 groups (the groups' scans run on threads) against the event-driven
    # reference, replication by replication; ara_opt mixes K = 1 and K = 3 jobs (the non-herd path).
    rng = np.random.default_rng(11)
    A, S = zip(*[_jobs(rng, 150, mean_ia=0.05, mean_s=0.5) for _ in range(16)])
    A, S = np.stack(A), np.stack(S)
    state = rng.random(A.shape) < 0.5
    u = rng.random(A.shape)
    runs = [ara.simulate(P(4, policy, delay_s=1.0, th_l=3), A, S, u=u, burst_state=state, threads=t)
            for t in (1, 2, 5)]
    for got in runs:
        for r in range(16):
            want, site = reference(list(A[r]), list(S[r]), 4, policy, list(u[r]), delay=1.0, th_l=3,
                                   state=list(state[r]))
            np.testing.assert_array_equal(got["response_s"].values[r], want)
            np.testing.assert_array_equal(got["site"].values[r], site)
    np.testing.assert_array_equal(runs[0]["departure_s"].values, runs[1]["departure_s"].values)


def test_many_empty_windows_match_reference_across_replications():
    # D = 2 ms: far more windows than jobs, so the windows come from the jobs (not a binary search per
    # window); two replications of different lengths in time, so window runs end inside the batch.
    rng = np.random.default_rng(12)
    A, S = zip(*[_jobs(rng, 120, mean_ia=m, mean_s=0.4) for m in (0.05, 0.3)])
    A, S = np.stack(A), np.stack(S)
    u = rng.random(A.shape)
    got = ara.simulate(P(3, "ara", k=2, delay_s=2e-3), A, S, u=u)
    assert np.floor(A.max() / 2e-3) > 2 * A.shape[1] + 4096  # premise: the sparse-window path
    for r in range(2):
        want, site = reference(list(A[r]), list(S[r]), 3, "ara", list(u[r]), k=2, delay=2e-3)
        np.testing.assert_array_equal(got["response_s"].values[r], want)
        np.testing.assert_array_equal(got["site"].values[r], site)


@pytest.mark.parametrize("tab_bytes", [0, 128 << 20])
def test_leave_lookup_by_table_or_by_search_matches_reference(monkeypatch, tab_bytes):
    # Windows far outnumber the blocks (D = 50 ms, a job every second on average), replications batched: the
    # block where a job leaves the view comes from the window table when it fits in _TAB_BYTES, else from a
    # binary search over the blocks' refresh instants; both exact.
    monkeypatch.setattr(engine, "_TAB_BYTES", tab_bytes)
    used = []
    plan = engine._plan

    def spy(*args, **kw):
        p = plan(*args, **kw)
        used.append(p["use_table"])
        return p

    monkeypatch.setattr(engine, "_plan", spy)
    rng = np.random.default_rng(21)
    A, S = zip(*[_jobs(rng, 300, mean_ia=m, mean_s=1.5) for m in (0.8, 1.2, 1.0)])
    A, S = np.stack(A), np.stack(S)
    u = rng.random(A.shape)
    for policy in ("qlen", "ara"):
        got = ara.simulate(P(4, policy, k=2, delay_s=0.05), A, S, u=u)
        for r in range(3):
            want, site = reference(list(A[r]), list(S[r]), 4, policy, list(u[r]), k=2, delay=0.05)
            np.testing.assert_array_equal(got["response_s"].values[r], want)
            np.testing.assert_array_equal(got["site"].values[r], site)
    assert used and all(x == (tab_bytes > 0) for x in used)  # premise: the path under test ran


def test_errors_name_the_parameter():
    a, s = np.array([0.0, 1.0]), np.array([1.0, 1.0])
    with pytest.raises(ValueError, match="'qlen', 'rand', 'ara', 'ara_pred', 'ara_opt'"):
        ara.dispatch(P(2, "jsq"), a, s)
    with pytest.raises(ValueError, match="non-decreasing"):
        ara.dispatch(P(2, "qlen"), a[::-1], s)
    with pytest.raises(ValueError, match=r"k must be an integer in \[1, n_sites=2\]"):
        ara.dispatch(P(2, "ara", k=3), a, s, key=jax.random.key(0))
    with pytest.raises(ValueError, match="key"):
        ara.dispatch(P(2, "rand"), a, s)
    with pytest.raises(ValueError, match="delay"):
        ara.dispatch(P(2, "qlen", delay_s=0.0), a, s)
    with pytest.raises(ValueError, match="burst"):
        ara.dispatch(P(2, "ara_opt"), a, s, key=jax.random.key(0))
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        ara.dispatch(P(2, "qlen"), a, s, threads=0)
    with pytest.raises(ValueError, match="block must be a positive integer"):
        ara.dispatch(P(2, "qlen"), a, s, block=0)


# --------------------------------------------------------------------------------------------------
# Workloads (models/workloads/ara.py)
# --------------------------------------------------------------------------------------------------
from tieringlab.models.mmpp import sample_with_phases  # noqa: E402
from tieringlab.models.workloads import ara as W  # noqa: E402


def test_pollaczek_khinchine_scv_and_h2_moments():
    es = W.mean_service_s(16, 0.5, 0.1)
    assert es == pytest.approx(0.8)
    c2 = W.scv_from_rand_response(80.5, es, 0.5)
    # closed form back: E[T] = E[S] + rho E[S] (1 + c2) / (2 (1 - rho))
    assert es + 0.5 * es * (1 + c2) / (2 * 0.5) == pytest.approx(80.5)
    with pytest.raises(ValueError, match="mean_interarrival_s"):
        W.scv_from_rand_response(80.5, 80.0, 0.5)  # the thesis' '10 s' reading is infeasible
    p1, m1, m2 = W.h2_balanced(2.0, 9.0)
    mean = p1 * m1 + (1 - p1) * m2
    second = 2 * (p1 * m1**2 + (1 - p1) * m2**2)
    assert mean == pytest.approx(2.0)
    assert second / mean**2 - 1 == pytest.approx(9.0)
    s = np.asarray(W.sample_services(jax.random.key(0), 400_000, 2.0, 9.0))
    assert s.mean() == pytest.approx(2.0, rel=0.03)
    assert s.var() / s.mean() ** 2 == pytest.approx(9.0, rel=0.1)


def test_mmpp_sampler_matches_closed_forms():
    mm = W.phased_mmpp(0.1, 0.51, 6.0, 10.0)
    assert float(mm.mean_rate()) == pytest.approx(10.0)
    t, burst = sample_with_phases(mm, jax.random.key(1), 400_000)
    assert np.all(np.diff(t) >= 0)
    assert len(t) / t[-1] == pytest.approx(10.0, rel=0.05)
    assert burst.mean() == pytest.approx(0.51, abs=0.04)  # Sec. 3.2.3: 51 % of jobs in bursts
    # counts in long windows: Var/E -> the MMPP(2) limiting index of dispersion (finite-window form)
    w = 200.0
    counts = np.bincount(np.floor(t / w).astype(int))[:-1]
    want = float(mm.index_of_dispersion_counts(w)[()] if np.ndim(mm.index_of_dispersion_counts(w)) == 0
                 else mm.index_of_dispersion_counts(w)[0])
    assert counts.var() / counts.mean() == pytest.approx(want, rel=0.25)
    # same key -> same workload
    t2, _ = sample_with_phases(mm, jax.random.key(1), 1000)
    np.testing.assert_array_equal(t2, sample_with_phases(mm, jax.random.key(1), 1000)[0])


def test_bursty_mmpp_puts_the_stated_share_of_jobs_in_bursts():
    # closed form: the share of arrivals in phase 1 is pi_1 lam1 / lambda, pi_1 = r21 / (r12 + r21)
    for ea, I, f, R in ((10.0, 313.5, 0.51, 700.0), (0.1, 32.25, 0.25, 10.0), (1.0, 5.0, 0.75, 100.0)):
        mm = W.bursty_mmpp(ea, I, f, R)
        pi1 = mm.r21 / (mm.r12 + mm.r21)
        assert pi1 * mm.lam1 / float(mm.mean_rate()) == pytest.approx(f, rel=1e-9)
        assert mm.lam1 / mm.lam2 == pytest.approx(R, rel=1e-9)
        assert 1.0 / float(mm.mean_rate()) == pytest.approx(ea, rel=1e-9)
        assert float(mm.index_of_dispersion()) == pytest.approx(I, rel=1e-6)
    # the phased workload uses the same job/time share relation
    mm = W.phased_mmpp(10.0, 0.51, 6.0, 700.0)
    assert (mm.r21 / (mm.r12 + mm.r21)) * mm.lam1 / float(mm.mean_rate()) == pytest.approx(0.51, rel=1e-9)
    with pytest.raises(ValueError, match="jobs_in_burst"):
        W.burst_time_share(1.0, 10.0)
    with pytest.raises(ValueError, match="rate_ratio"):
        W.burst_time_share(0.5, 1.0)


def test_sample_services_many_rows_have_their_mean_and_scv():
    means, scvs = np.array([80.0, 0.8, 8.0]), np.array([1.0, 198.25, 20.0])
    s = np.asarray(W.sample_services_many(jax.random.key(3), 400_000, means, scvs))
    assert s.shape == (3, 400_000)
    assert np.all(s > 0)
    np.testing.assert_allclose(s.mean(axis=1), means, rtol=0.05)
    # SCV of a heavy-tailed H2 converges slowly; a wrong branch probability would be off by far more
    np.testing.assert_allclose(s.var(axis=1) / s.mean(axis=1) ** 2, scvs, rtol=0.2)
    # the same key gives the same draws (again at the size above: no second compilation for another size)
    np.testing.assert_array_equal(s, np.asarray(W.sample_services_many(jax.random.key(3), 400_000, means, scvs)))
    with pytest.raises(ValueError, match="scvs"):
        W.sample_services_many(jax.random.key(0), 10, [1.0], [0.5])
    with pytest.raises(ValueError, match="means"):
        W.sample_services_many(jax.random.key(0), 10, [0.0], [1.0])
    with pytest.raises(ValueError, match="same length"):
        W.sample_services_many(jax.random.key(0), 10, [1.0, 2.0], [1.0])


# --------------------------------------------------------------------------------------------------
# The ledger's comparisons (experiments/ara_load_balancing.py): "beats" by the paired gap, separated 95 % intervals
# as the unpaired reading (tests/test_ara_preconditions.py: a pair the two rules decide differently)
# --------------------------------------------------------------------------------------------------


def _t_interval(x):
    """Plain Student-t 95 % interval (t quantiles by table for the sizes used here)."""
    t975 = {3: 3.182446305284263, 4: 2.7764451051977987, 7: 2.3646242510102993}  # t_{0.975, df}
    x = np.asarray(x, float)
    h = t975[x.size - 1] * x.std(ddof=1) / math.sqrt(x.size)
    return x.mean() - h, x.mean() + h


@pytest.mark.parametrize("shift", [0.0, 0.5, 1.0, 1.5, 3.0, -3.0])
def test_separation_is_above_one_exactly_when_intervals_separate(shift):
    from tieringlab.experiments import ara_load_balancing as X
    from tieringlab.stats import separation_ratio

    rng = np.random.default_rng(7)
    for n in (4, 5, 8):
        a = 10.0 + rng.normal(size=n)
        b = 10.0 + shift + rng.normal(size=n)
        (_, a_hi), (b_lo, _) = _t_interval(a), _t_interval(b)
        assert (separation_ratio(a, b) > 1) == (b_lo > a_hi)
        assert separation_ratio(a, b) == pytest.approx(b_lo / a_hi)
        want = "yes" if b_lo > a_hi else "REVERSED" if _t_interval(a)[0] > _t_interval(b)[1] else "undecided"
        assert X.verdict(a, b, rule="unpaired") == want  # the unpaired reading; the ledger's rule is paired


def _synthetic_datasets(qlen_first: bool, half_slow: bool = False):
    """:func:`_build_synthetic_datasets`, built once per argument pair (deterministic: a fixed seed) and handed out
    as deep copies, so that no test sees another's changes."""
    return tuple(x.copy(deep=True) for x in _build_synthetic_datasets(qlen_first, half_slow))


@functools.cache
def _build_synthetic_datasets(qlen_first: bool, half_slow: bool = False):
    """Hand-made result Datasets (N = 4) in which Qlen beats Rand everywhere (``qlen_first``) or loses
    everywhere, with ARA between them and tight replications (8 seeds); ``half_slow``: Table 2's ARA with
    th_l = ceil(N / 2) far slower than both baselines. Parameters as coordinates, as the grids make them."""
    import xarray as xr

    from tieringlab.experiments import ara_load_balancing as X

    rng = np.random.default_rng(0)
    noise = lambda *shape: 1.0 + 0.001 * rng.standard_normal(shape)
    lo, hi = (10.0, 20.0) if qlen_first else (20.0, 10.0)
    Is = [313.5, 32.25, 1.0]
    P4 = ara.AraParams(n_sites=4, th_l=4)
    runs = [X.system_run("qlen", "Qlen", P4), X.system_run("rand", "Rand", P4)] + [
        X.system_run(f"ara_k{k}", "ARA", P4, k=k) for k in range(1, 5)]
    cfgs = [r.label for r in runs]
    base = {"qlen": lo, "rand": hi, "ara_k1": lo, "ara_k2": 15.0, "ara_k3": 16.0, "ara_k4": hi}
    grow = np.array([3.0, 2.0, 1.0])[:, None, None]  # more burstiness, slower
    resp = np.array([base[c] for c in cfgs])[None, :, None] * grow * noise(3, len(cfgs), 8)
    static = X.response_dataset(resp, cfgs, {"index_of_dispersion": Is}, config=X.config_coords(runs))
    static.attrs["n_sites"] = 4
    oruns = [X.system_run("qlen", "Qlen", P4), X.system_run("rand", "Rand", P4),
             X.system_run("ara_opt_b_ths1", "ARA_OPT", P4, th_s=1), X.system_run("ara_pred_b_ths1", "ARA_PRED", P4),
             X.system_run("ara_pred_a_thl4", "ARA_PRED", P4, th_l=4)]
    ocfg = [r.label for r in oruns]
    ob = {"qlen": lo, "rand": hi, "ara_opt_b_ths1": 5.0, "ara_pred_b_ths1": 5.01, "ara_pred_a_thl4": 5.0}
    online = X.response_dataset(np.array([ob[c] for c in ocfg])[:, None] * noise(len(ocfg), 8), ocfg, {},
                                config={**X.config_coords(oruns), "fig8_part": ("config", ["", "", "b", "b", "a"])})
    acc = 0.9 if qlen_first else 0.6
    online["predictor_balanced_accuracy"] = ("seed", np.full(8, acc))
    static["predictor_balanced_accuracy"] = (("index_of_dispersion", "seed"), np.full((3, 8), acc))
    cells = ["N=8", "N=16", "N=32", "D=1s", "D=6s", "load=80%"]
    t2c = ["rand", "ara_opt", "ara_pred", "qlen", "ara_opt_half", "ara_pred_half"]
    tb = {"rand": hi, "ara_opt": 5.0, "ara_pred": 5.01, "qlen": lo, "ara_opt_half": 5.0, "ara_pred_half": 5.01}
    if half_slow:
        tb.update(ara_opt_half=50.0, ara_pred_half=50.0)
    scale = np.array([1.0, 1.5, 2.0, 1.5, 3.0, 4.0])[:, None, None]
    t2 = X.response_dataset(np.array([tb[c] for c in t2c])[None, :, None] * scale * noise(6, 6, 8), t2c,
                            {"cell": cells},
                            config={"policy": ("config", [c.removesuffix("_half") for c in t2c]),
                                    "th_l_rule": ("config", ["", "scaled", "scaled", "", "half", "half"])})
    t2 = t2.assign_coords(part=("cell", ["a", "a", "a", "b", "b", "c"]), n_sites=("cell", [8, 16, 32, 16, 16, 16]),
                          delay_s=("cell", [1.0, 1.0, 1.0, 1.0, 6.0, 1.0]),
                          utilization=("cell", [0.5, 0.5, 0.5, 0.5, 0.5, 0.8]))
    t2.attrs["base_cell"] = "N=16"
    fig6a = xr.Dataset({"index_of_dispersion": ("window", [1.0, 30.0, 1.1, 25.0, 0.9]),
                        "holds_change": ("window", [False, True, False, True, False])},
                       coords={"window": ["W1", "W2", "W3", "W4", "W5"]})
    return static, online, t2, fig6a


def _synthetic_results(qlen_first: bool):
    from tieringlab.experiments import ara_load_balancing as X

    return X.claim_values(*_synthetic_datasets(qlen_first))


def test_ledger_rows_follow_the_data_and_can_fail():
    from tieringlab.claims import ara as C
    from tieringlab.claims import registry

    reg = registry()
    for qlen_first in (True, False):
        vals = _synthetic_results(qlen_first)
        verdict = {cid: reg[cid].verdict(v) for cid, (v, _) in vals.items()}
        assert set(vals) == {c.id for c in C.CLAIMS}  # every ARA ledger row gets a value (or None)
        assert verdict[C.EC2_STUDY] == "not reproduced yet"
        want_q = "holds" if qlen_first else "differs"
        want_r = "differs" if qlen_first else "holds"
        assert verdict[C.QLEN_BEATS_RAND_NONBURSTY] == want_q
        assert verdict[C.T2C_QLEN_BEATS_RAND_AT_80] == want_q
        assert verdict[C.RAND_BEATS_QLEN_STRONG] == want_r
        assert verdict[C.RAND_BEATS_QLEN_WEAK] == want_r
        # Fig. 8 Qlen worst needs Rand below Qlen as well as both ARA
        assert verdict[C.FIG8_QLEN_WORST] == want_r
        # every workload setting is slower at higher I, for both baselines
        assert verdict[C.BURSTINESS_DEGRADES_BOTH] == "holds"
        assert verdict[C.FIG6A_I_PEAKS_AT_CHANGES] == "holds"
        assert verdict[C.T2A_ARA_DOES_NOT_WORSEN] == "differs"  # ARA scaled x2 from N=8 to 32 here
        assert verdict[C.FIG6B_PREDICTOR_PHASED] == verdict[C.FIG6C_PREDICTOR_STRONG] == want_q
        # ARA_PRED 0.2 % above ARA_OPT with a tiny interval: within 1 %
        assert verdict[C.PRED_WITHIN_FEW_PERCENT_OF_OPT] == "holds"


def test_table2_readings_go_through_tieringlab_readings():
    # Table 2's side-by-side readings (th_l = ceil(N/2); arrival rate scaled with N) are tieringlab.readings
    # Readings over a Table2Reading; with the ceil(N/2) configurations made far slower, exactly the claims that
    # read ARA in Table 2 flip under that reading and under no other.
    from tieringlab import readings
    from tieringlab.claims import ara as C
    from tieringlab.experiments import ara_load_balancing as X

    assert all(isinstance(r, readings.Reading) for r in X.READINGS)
    assert [r.name for r in X.READINGS] == ["default", "th_l_half", "n_scaling_arrivals"]
    assert X.READINGS[1].apply(X.Table2Reading()) == X.Table2Reading(th_l="half")
    data = _synthetic_datasets(True, half_slow=True)
    table, flipped = X.verdicts_by_reading(*data)
    by = X.values_by_reading(*data)  # its default reading is claim_values(*data) (Table2Reading())
    assert list(table.columns) == ["id", "kind", "value", "verdict", "th_l half, N service", "th_l scaled, N arrivals"]
    assert list(table.id) == list(by["default"])
    row = table.set_index("id")
    assert row.loc[C.PRED_BEATS_QLEN_AND_RAND, "verdict"] == "holds"
    assert row.loc[C.PRED_BEATS_QLEN_AND_RAND, "th_l half, N service"] == "differs"
    assert row.loc[C.PRED_BEATS_QLEN_AND_RAND, "th_l scaled, N arrivals"] == "holds"
    assert C.PRED_BEATS_QLEN_AND_RAND in flipped and C.QLEN_BEATS_RAND_NONBURSTY not in flipped
    for cid in flipped:
        assert readings.flips(readings.verdicts(_claim_registry()[cid], {k: v[cid][0] for k, v in by.items()}))
    with pytest.raises(Exception, match="th_l.*'scaled', 'half'"):
        X.Table2Reading(th_l="quarter")


def _claim_registry():
    from tieringlab.claims import registry

    return registry()


def test_unknown_knob_or_params_key_names_the_allowed_ones():
    from tieringlab import params
    from tieringlab.params import ParamsError
    from tieringlab.policies import registry

    a, s = np.array([0.0, 1.0]), np.array([1.0, 1.0])
    with pytest.raises(ParamsError, match=r"unknown knob 'kk'.*n_sites, delay_s, policy, k, th_s, th_l"):
        registry.run("ARA", a, s, knobs={"kk": 2}, key=jax.random.key(0))
    # the section embeds AraParams as `policy`: the old top-level knobs are unknown keys, the nested ones checked
    with pytest.raises(ParamsError, match=r"ara_load_balancing\.n_sites: unknown parameter; allowed: .*policy"):
        params.validate_section("ara_load_balancing", {"n_sites": 8})
    with pytest.raises(ParamsError, match=r"ara_load_balancing\.policy\.N: unknown parameter; allowed: delay_s, k, "
                                          r"n_sites, policy, th_l, th_s"):
        params.validate_section("ara_load_balancing", {"policy": {"N": 8}})
    with pytest.raises(ParamsError, match=r"notebook parameters: ara_load_balancing\.fig8_th_l: unknown parameter"):
        params.check("ara_load_balancing", {"fig8_th_l": 14})
    with pytest.raises(ParamsError, match=r"policy\.k = 3 would be ignored"):
        params.validate_section("ara_load_balancing", {"policy": {"k": 3}})
    with pytest.raises(ParamsError, match=r"ara_load_balancing\.policy.*th_l must be an integer in \[1, n_sites=8\]"):
        params.validate_section("ara_load_balancing", {"policy": {"n_sites": 8}})  # th_l = 14 > N
    P = params.check("ara_load_balancing", {"policy": {"n_sites": 8, "th_l": 7}, "ks": [1, 8], "th_l_grid": [1, 8],
                                            "th_s_grid": [1, 8]})
    assert P.policy == ara.AraParams(n_sites=8, th_l=7)


def test_section_defaults_are_the_paper_values():
    # the dispatcher's parameters moved under `policy`: the same floats as the pre-embedding fields
    from tieringlab.experiments import ara_load_balancing as X

    P = X.AraLoadBalancingParams()
    assert (P.policy.n_sites, P.policy.delay_s, P.policy.th_s, P.policy.th_l) == (16, 1.0, 1, 14)
    assert X.table2_th_l("scaled", 8, P.policy) == 7 and X.table2_th_l("scaled", 32, P.policy) == 28
    assert X.table2_th_l("half", 8, P.policy) == 4


def test_ara_params_declared_once_with_units_and_sources():
    import dataclasses

    for f in dataclasses.fields(ara.AraParams):
        assert f.metadata["doc"] and (f.metadata["bounds"] or f.metadata["choices"]), f.name
        assert f.metadata["unit"] or f.metadata["choices"], f.name
    with pytest.raises(ValueError, match=r"AraParams\.n_sites: expected an integer >= 1"):
        ara.AraParams(n_sites=0)
    with pytest.raises(ValueError, match=r"AraParams\.th_s: expected an integer >= 1"):
        ara.AraParams(th_s=1.5)


@pytest.mark.parametrize("name", ["Qlen", "Rand", "ARA", "ARA_PRED", "ARA_OPT"])
def test_every_dispatcher_meets_the_queueing_contract(name):
    from tieringlab.policies import registry

    rng = np.random.default_rng(13)
    A, S = zip(*[_jobs(rng, 120, mean_ia=0.1) for _ in range(2)])
    A, S = np.stack(A), np.stack(S)
    state = rng.random(A.shape) < 0.5
    res = registry.run(name, A, S, knobs={"n_sites": 4, "th_l": 3}, key=jax.random.key(1), burst_state=state)
    assert res["response_s"].dims == ("replication", "job") and res["response_s"].shape == A.shape
    assert res["mean_response_s"].dims == ("replication",)
    np.testing.assert_array_equal(res["mean_response_s"].values, res["response_s"].values.mean(axis=1))
    assert res.attrs["policy"] == name and res.attrs["source"] == registry.get(name).source
    assert np.all(res["departure_s"].values >= A + S)  # a job leaves no earlier than arrival + service


def test_default_ring_starts_afresh_each_call_and_stays_exact(monkeypatch):
    # no calendar length is remembered between calls: with the whole-run calendar refused and a 2-block first
    # ring, every call regrows its own ring and matches the reference, twice in a row
    monkeypatch.setattr(engine, "_CAL_BYTES", 0)
    monkeypatch.setattr(engine, "RING_START", 2)
    rng = np.random.default_rng(5)
    a, s = _jobs(rng, 300, mean_ia=0.02, mean_s=0.5)
    want, site = reference(list(a), list(s), 4, "qlen", [0.0] * len(a), delay=1.0)
    for _ in range(2):
        got = ara.simulate(P(4, "qlen", delay_s=1.0), a, s, block=4)
        np.testing.assert_array_equal(np.asarray(got["response_s"].values), want)
        np.testing.assert_array_equal(np.asarray(got["site"].values), site)
    assert not [k for k, v in vars(engine).items() if isinstance(v, (list, dict, set)) and not k.startswith("__")]
