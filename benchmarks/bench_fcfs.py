"""FCFS single-server response times: tieringlab (Lindley recursion as cumsum + cummax) vs SimPy.

Both run the same jobs (Poisson arrivals at 0.8 /s, exponential service at 1 /s, fixed seed): SimPy
as a discrete-event model with a ``simpy.Resource(capacity=1)`` (one process per job: request the
server, hold it for the service time, release), tieringlab as one call of
``queueing.fcfs_response_times``. The results must agree to 1e-9 relative (asserted here; for
response times shorter than ~0.1 s the float64 rounding of the absolute clock, an ulp of the
last departure, is allowed as an absolute tolerance on both sides).
``ratio_speedup = simpy_s / ours_s``; ours is timed after a warm-up call (best of 5), and the
first call's extra time is reported as ``compile_s``.
"""

from __future__ import annotations

import time

import numpy as np
import simpy

import tieringlab  # noqa: F401  (x64)
from tieringlab.models import queueing

GOAL = '≥ 100×'  # the README's goal column (benchmarks/readme.py)


def simpy_fcfs(arrivals: np.ndarray, services: np.ndarray) -> np.ndarray:
    """Departure times from a SimPy single-server FIFO model."""
    env = simpy.Environment()
    server = simpy.Resource(env, capacity=1)
    dep = np.empty(len(arrivals))

    def job(i):
        with server.request() as req:
            yield req
            yield env.timeout(services[i])
        dep[i] = env.now

    def source():
        for i in range(len(arrivals)):
            yield env.timeout(arrivals[i] - env.now)
            env.process(job(i))

    env.process(source())
    env.run()
    return dep


def run(quick: bool = False) -> dict:
    n = 10**4 if quick else 10**6
    lam, mu = 0.8, 1.0
    rng = np.random.default_rng(2026)
    arrivals = np.cumsum(rng.exponential(1 / lam, n))
    services = rng.exponential(1 / mu, n)

    t0 = time.perf_counter()
    ref_dep = simpy_fcfs(arrivals, services)
    ref = ref_dep - arrivals
    simpy_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    ours = np.asarray(queueing.fcfs_response_times(arrivals, services).block_until_ready())
    first_s = time.perf_counter() - t0
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        out = queueing.fcfs_response_times(arrivals, services).block_until_ready()
        times.append(time.perf_counter() - t0)
    ours_s = min(times)
    np.testing.assert_allclose(np.asarray(out), ours, rtol=0, atol=0)
    # identical schedules: departure times agree to 1e-9 relative; response times D - a also agree
    # to 1e-9 relative, except that both sides carry the rounding of an absolute time (one ulp of
    # ~1e6 s is ~1e-10 s), which matters only for responses shorter than ~0.1 s
    ulp = float(np.spacing(ref_dep.max()))
    np.testing.assert_allclose(ours + arrivals, ref_dep, rtol=1e-9, atol=0)
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=16 * ulp)

    return {
        "n_jobs": n,
        "utilization": lam / mu,
        "simpy_s": simpy_s,
        "ours_s": ours_s,
        "compile_s": max(first_s - ours_s, 0.0),
        "max_rel_diff_departure": float(np.max(np.abs(ours + arrivals - ref_dep) / ref_dep)),
        "max_abs_diff_response_s": float(np.max(np.abs(ours - ref))),
        "ulp_of_last_departure_s": ulp,
        "mean_response_s": float(ours.mean()),
        "ratio_speedup": simpy_s / ours_s,
    }
