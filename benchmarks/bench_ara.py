"""ARA dispatcher (``tieringlab.policies.ara.dispatch``) against an equivalent SimPy model, same jobs.

System (thesis Sec. 3.1): N = 16 FCFS sites, a balancer that reads each site's number in system
every D = 1 s and assigns the jobs of a window on that stale view; policy ``qlen``. Workload: the
weak-bursty MMPP(2) of Fig. 3 (I = 32.25) at 50 % utilisation with the notebook's services
(its default E[A], SCV and MMPP shape).

- ``ratio_single``: SimPy seconds / our seconds for one run (results asserted equal).
- ``ratio_per_replication``: SimPy seconds for one run / (our seconds for 32 seeded replications in
  one batched call / 32). The call splits the replications into one group per CPU core and runs the
  groups' scans concurrently (``dispatch(threads=None)``); SimPy uses one core.
- ``ratio_per_replication_one_thread``: the same with ``threads=1`` (one scan over all 32).
Every time is the best of ``repeats`` runs (the same for both sides; the machine is shared); ours are
measured after a first (compiling) call, whose time is reported separately. The SimPy model is the
natural one (Resources as FCFS sites, a refresh process, an arrival process) and, like ours, picks
the least-loaded site once per refresh rather than once per job.
"""

from __future__ import annotations

import os
import time

import jax
import numpy as np
import simpy

import tieringlab  # noqa: F401
from benchmarks import best_of
from tieringlab.claims import ara as C
from tieringlab.experiments import ara_load_balancing as X
from tieringlab.models.mmpp import sample_with_phases
from tieringlab.models.workloads.ara import bursty_mmpp, sample_services
from tieringlab.policies import ara

GOAL = '≥ 30× one run, ≥ 100× per replication batched'  # the README's goal column (benchmarks/readme.py)

QLEN = ara.AraParams(n_sites=16, delay_s=1.0, policy="qlen")


def _workload(key, n: int, P: X.AraLoadBalancingParams):
    mm = bursty_mmpp(P.mean_interarrival_s, C.WEAK_I, P.mmpp_jobs_in_burst, P.mmpp_rate_ratio)
    t, _ = sample_with_phases(mm, key, n)
    t = np.cumsum(np.diff(t, prepend=0.0))  # sequential sums: the same floats SimPy's clock produces
    s = np.asarray(sample_services(jax.random.fold_in(key, 1), n, X.mean_service(P), X.service_scv(P)))
    return t, s


def run(quick: bool = False) -> dict:
    n = 1_000 if quick else 100_000
    reps = 32
    repeats = 1 if quick else 3
    P = X.AraLoadBalancingParams()
    key = jax.random.key(0)
    a, s = _workload(key, n, P)

    simpy_s, env_resp = best_of(lambda: simpy_qlen(a, s, 16, 1.0), repeats)

    t0 = time.perf_counter()
    np.asarray(ara.dispatch(QLEN, a, s))
    first_s = time.perf_counter() - t0
    ours_s, ours = best_of(lambda: np.asarray(ara.dispatch(QLEN, a, s)), 2 * repeats + 1)
    max_diff = float(np.max(np.abs(ours - env_resp)))
    identical = bool(np.array_equal(ours, env_resp))
    if not np.allclose(ours, env_resp, rtol=1e-9, atol=1e-9):
        raise AssertionError(f"dispatch and SimPy disagree: max |diff| = {max_diff}")

    A, S = zip(*[_workload(k, n, P) for k in jax.random.split(jax.random.key(1), reps)])
    A, S = np.stack(A), np.stack(S)
    np.asarray(ara.dispatch(QLEN, A, S))  # compile
    np.asarray(ara.dispatch(QLEN, A, S, threads=1))
    batch_s, batch = best_of(lambda: np.asarray(ara.dispatch(QLEN, A, S)), repeats)
    batch1_s, batch1 = best_of(lambda: np.asarray(ara.dispatch(QLEN, A, S, threads=1)), repeats)
    if not np.array_equal(batch[0], np.asarray(ara.dispatch(QLEN, A[0], S[0]))):
        raise AssertionError("a batched replication differs from the same replication run alone")
    if not np.array_equal(batch, batch1):
        raise AssertionError("the batched call depends on the number of threads")
    return {
        "n_jobs": n, "n_sites": 16, "delay_s": 1.0, "policy": "qlen", "replications": reps, "repeats": repeats,
        "simpy_s": simpy_s, "ours_single_s": ours_s, "ours_first_call_s": first_s, "ours_batch_s": batch_s,
        "ours_batch_one_thread_s": batch1_s, "cpu_cores": len(os.sched_getaffinity(0)),
        "bit_identical": identical, "max_abs_diff_s": max_diff,
        "ratio_single": simpy_s / ours_s,
        "ratio_per_replication": simpy_s / (batch_s / reps),
        "ratio_per_replication_one_thread": simpy_s / (batch1_s / reps),
    }


def simpy_qlen(a: np.ndarray, s: np.ndarray, n_sites: int, delay: float) -> np.ndarray:
    """Event-driven peer: SimPy Resources (capacity 1, FIFO) as sites; a refresh process that every
    ``delay`` seconds reads each site's number in system and picks the least-loaded site (ties to the
    lowest index), stopping once every job has left; an arrival process sending each job to the site
    picked at the last refresh. Returns response times in job order."""
    env = simpy.Environment()
    sites = [simpy.Resource(env, capacity=1) for _ in range(n_sites)]
    best = [0]
    resp = np.empty(len(a))
    inter = np.diff(a, prepend=0.0)
    done = [0]

    def refresher():
        while done[0] < len(a):
            view = [r.count + len(r.queue) for r in sites]
            best[0] = min(range(n_sites), key=lambda i: (view[i], i))
            yield env.timeout(delay)

    def job(j, site):
        arrived = env.now
        with site.request() as req:
            yield req
            yield env.timeout(s[j])
        resp[j] = env.now - arrived
        done[0] += 1

    def source():
        for j in range(len(a)):
            yield env.timeout(inter[j])
            env.process(job(j, sites[best[0]]))

    env.process(refresher())
    env.process(source())
    env.run()
    return resp
