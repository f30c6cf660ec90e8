"""Non-preemptive priority single server: tieringlab (jobs walked in service order) vs SimPy.

The queue of LMST's disks (thesis Sec. 4.1.2.2, Fig. 12): one server, logical buffers served by
priority, FIFO inside a buffer, no preemption. Both sides run the same 2 x 10^5 jobs (Poisson arrivals
at 0.9 /s, exponential service of mean 1 s, three classes with shares 0.4 / 0.4 / 0.2, fixed seed):
SimPy as a discrete-event model with a ``simpy.PriorityResource(capacity=1)`` (one process per job:
wait until its arrival, request the server with its class as priority, hold it for the service time,
release), tieringlab as one call of ``queueing.priority_response_times``. SimPy's queue orders requests
by (priority, request time, insertion order), the rule of ``priority_response_times``; the arrival
times are continuous, so no two jobs arrive together (where SimPy would serve the first requester of
an idle server whatever its class). The response times must be **identical** (asserted): each side
computes ``start = max(free, a)`` and ``D = start + s`` with the same floats (SimPy's clock reaches
``a_j`` as ``0 + a_j``).

``ratio_speedup = simpy_s / ours_s`` for the default engine (numba on a CPU); ours is timed after a
warm-up call (best of 5), and the first call's extra time (numba compilation) is ``compile_s``. The
JAX ``lax.scan`` engine is timed too (``jax_s``, one call after its warm-up) and must agree exactly.
"""

from __future__ import annotations

import time

import numpy as np
import simpy

import tieringlab  # noqa: F401  (x64)
from tieringlab.models import queueing

GOAL = '≥ 50×'  # the README's goal column (benchmarks/readme.py)


def simpy_priority(arrivals: np.ndarray, services: np.ndarray, priority: np.ndarray) -> np.ndarray:
    """Departure times from a SimPy single-server non-preemptive priority model."""
    env = simpy.Environment()
    server = simpy.PriorityResource(env, capacity=1)
    dep = np.empty(len(arrivals))

    def job(i):
        yield env.timeout(arrivals[i])          # the clock reaches 0 + a_i = a_i exactly
        with server.request(priority=int(priority[i])) as req:
            yield req
            yield env.timeout(services[i])
        dep[i] = env.now

    for i in range(len(arrivals)):
        env.process(job(i))
    env.run()
    return dep


def run(quick: bool = False) -> dict:
    n = 10**4 if quick else 2 * 10**5
    lam, mu = 0.9, 1.0
    rng = np.random.default_rng(2027)
    arrivals = np.cumsum(rng.exponential(1 / lam, n))
    services = rng.exponential(1 / mu, n)
    priority = rng.choice(3, n, p=[0.4, 0.4, 0.2])

    t0 = time.perf_counter()
    ref = simpy_priority(arrivals, services, priority) - arrivals
    simpy_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    first = queueing.priority_response_times(arrivals, services, priority)
    first_s = time.perf_counter() - t0
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        out = queueing.priority_response_times(arrivals, services, priority)
        times.append(time.perf_counter() - t0)
    ours_s = min(times)
    np.testing.assert_array_equal(out, first)
    np.testing.assert_array_equal(out, ref)       # identical schedules, identical floats

    queueing.priority_response_times(arrivals[:1000], services[:1000], priority[:1000], engine="jax")
    t0 = time.perf_counter()
    jax_out = queueing.priority_response_times(arrivals, services, priority, engine="jax")
    jax_s = time.perf_counter() - t0
    np.testing.assert_array_equal(jax_out, ref)

    return {
        "n_jobs": n,
        "utilization": lam / mu,
        "classes": 3,
        "simpy_s": simpy_s,
        "ours_s": ours_s,
        "compile_s": max(first_s - ours_s, 0.0),
        "jax_s": jax_s,
        "mean_response_by_class_s": [float(out[priority == k].mean()) for k in range(3)],
        "identical_responses": True,
        "ratio_speedup": simpy_s / ours_s,
        "ratio_speedup_jax_engine": simpy_s / jax_s,
    }
