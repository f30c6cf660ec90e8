"""The workloads of the ARA chapter (thesis Ch. 3): MMPP(2) arrival streams and hyperexponential services.

- Sec. 3.1, Fig. 3: three MMPP(2) arrival processes with one mean inter-arrival time and indices of
  dispersion I = 313.5, 32.25, 1 (:func:`bursty_mmpp`: :func:`tieringlab.models.mmpp.fit_mmpp2` with the
  burst phase given by its share of jobs and the burst/idle rate ratio; :func:`mmpp_arrivals` samples one);
- Sec. 3.2.3-3.2.4: the phased burst/idle workload (:func:`phased_mmpp`; about half of the jobs in
  bursts, mean burst 6 s), sampled with its true phases by :func:`tieringlab.models.mmpp.sample_with_phases`;
- services: the thesis gives none; a 2-phase hyperexponential with balanced means and a chosen SCV
  (:func:`h2_balanced`, :func:`sample_services`, :func:`sample_services_many` for many rows; SCV 1 is
  exponential), and the Pollaczek-Khinchine relations that tie the
  SCV and E[S] to a published mean response (:func:`mean_service_s`, :func:`scv_from_rand_response`).

The documented readings of the thesis (time scale, SCV anchor, MMPP shape) are parameters of the
``ara_load_balancing`` experiment (:mod:`tieringlab.experiments.ara_load_balancing`).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from tieringlab.models.mmpp import MMPP2, fit_mmpp2, sample_with_phases

__all__ = ["mean_service_s", "scv_from_rand_response", "h2_balanced", "sample_services", "sample_services_many",
           "mmpp_arrivals", "burst_time_share", "bursty_mmpp", "phased_mmpp"]


def mean_service_s(n_sites: int, utilization: float, mean_interarrival_s: float) -> float:
    """E[S] = rho N E[A]: each of N sites gets 1/N of the arrivals (rate 1/(N E[A])) at utilisation rho."""
    return float(utilization) * int(n_sites) * float(mean_interarrival_s)


def scv_from_rand_response(rand_response_s: float, mean_service: float, utilization: float) -> float:
    """Service SCV c^2 that makes Rand = N independent M/G/1 queues (Poisson split) have mean response T.

    Pollaczek-Khinchine: ``T = E[S] + rho E[S] (1 + c^2) / (2 (1 - rho))``, so
    ``c^2 = 2 (1 - rho) (T / E[S] - 1) / rho - 1``. Raises when T is below the M/D/1 value (c^2 < 0).
    """
    T, m, rho = float(rand_response_s), float(mean_service), float(utilization)
    c2 = 2.0 * (1.0 - rho) * (T / m - 1.0) / rho - 1.0
    if c2 < 0:
        raise ValueError(f"no service SCV >= 0 gives Rand a mean response of {T} s at E[S] = {m} s and rho = {rho}: "
                         f"P-K needs T >= {m * (1 + rho / (2 * (1 - rho))):.4g} s (check mean_interarrival_s)")
    return c2


def h2_balanced(mean: float, scv: float) -> tuple[float, float, float]:
    """2-phase hyperexponential with balanced means: ``(p1, mean1, mean2)`` with
    ``p1 = (1 + sqrt((c^2 - 1) / (c^2 + 1))) / 2``, ``mean_i = E[S] / (2 p_i)`` (so p_i mean_i = E[S]/2)."""
    if not scv >= 1.0:
        raise ValueError(f"service_scv must be >= 1 for a hyperexponential; got {scv!r}")
    p1 = 0.5 * (1.0 + math.sqrt((scv - 1.0) / (scv + 1.0)))
    p2 = 1.0 - p1
    return p1, mean / (2.0 * p1), (mean / (2.0 * p2) if p2 > 0 else mean)


def sample_services(key, n: int, mean: float, scv: float) -> jax.Array:
    """``n`` i.i.d. H2 service times (seconds) with the given mean and SCV."""
    p1, m1, m2 = h2_balanced(mean, scv)
    k1, k2 = jax.random.split(key)
    ph = jax.random.uniform(k1, (n,)) < p1
    return jax.random.exponential(k2, (n,)) * jnp.where(ph, m1, m2)


def sample_services_many(key, n: int, means, scvs) -> jax.Array:
    """``(R, n)`` H2 service times, row r with mean ``means[r]`` and SCV ``scvs[r]`` (each >= 1; 1 is
    exponential), from ``jax.random.split(key, R)[r]``: :func:`h2_balanced`'s parameters as array
    expressions, one vmapped draw for all rows."""
    means = jnp.asarray(means, jnp.float64)
    scvs = jnp.asarray(scvs, jnp.float64)
    if means.ndim != 1 or scvs.shape != means.shape:
        raise ValueError(f"means and scvs must be 1-D of the same length; got {means.shape} and {scvs.shape}")
    if not bool(jnp.all(scvs >= 1.0)):
        raise ValueError(f"scvs must be >= 1 for a hyperexponential; got {np.asarray(scvs)}")
    if not bool(jnp.all(means > 0)):
        raise ValueError(f"means must be > 0 seconds; got {np.asarray(means)}")
    p1 = 0.5 * (1.0 + jnp.sqrt((scvs - 1.0) / (scvs + 1.0)))
    m1, m2 = means / (2.0 * p1), means / (2.0 * (1.0 - p1))

    def one(k, a, b, q):
        k1, k2 = jax.random.split(k)
        ph = jax.random.uniform(k1, (n,)) < q
        return jax.random.exponential(k2, (n,)) * jnp.where(ph, a, b)

    return jax.vmap(one)(jax.random.split(key, means.shape[0]), m1, m2, p1)


def burst_time_share(jobs_in_burst: float, rate_ratio: float) -> float:
    """Share of *time* in the high-rate phase of an MMPP(2) with rate ratio ``R = lam1 / lam2`` whose
    high-rate phase receives a share ``f`` of the *jobs*: ``p = f / (R - f (R - 1))`` (from
    ``f = p lam1 / (p lam1 + (1 - p) lam2)``)."""
    f, R = float(jobs_in_burst), float(rate_ratio)
    if not 0 < f < 1:
        raise ValueError(f"jobs_in_burst must lie in (0, 1); got {jobs_in_burst!r}")
    if not R > 1:
        raise ValueError(f"rate_ratio must be > 1; got {rate_ratio!r}")
    return f / (R - f * (R - 1.0))


def bursty_mmpp(mean_interarrival_s: float, index_of_dispersion: float, jobs_in_burst: float,
                rate_ratio: float) -> MMPP2:
    """The MMPP(2) of Fig. 3 (thesis Sec. 3.1) with mean inter-arrival time E[A] and index of dispersion
    I, parameterised by the share of jobs in its high-rate ("burst") phase and the burst/idle rate
    ratio: :func:`tieringlab.models.mmpp.fit_mmpp2` with ``burst_fraction = burst_time_share(f, R)``
    (I then sets how fast the phases switch: a larger I, longer bursts)."""
    return fit_mmpp2(mean_interarrival_s, index_of_dispersion,
                     burst_fraction=burst_time_share(jobs_in_burst, rate_ratio), rate_ratio=rate_ratio)


def mmpp_arrivals(key, n: int, mean_interarrival_s: float, index_of_dispersion: float, *,
                  burst_fraction: float = 0.1, rate_ratio: float = 10.0, with_phase: bool = False):
    """Arrival times (s) of ``n`` jobs from the MMPP(2) fitted to (mean, I) by ``models.mmpp.fit_mmpp2``
    (thesis Sec. 3.1, Fig. 3); with ``with_phase`` also the high-rate-phase flag per job."""
    mm = fit_mmpp2(mean_interarrival_s, index_of_dispersion, burst_fraction=burst_fraction, rate_ratio=rate_ratio)
    t, ph = sample_with_phases(mm, key, n)
    return (t, ph) if with_phase else t


def phased_mmpp(mean_interarrival_s: float, jobs_in_burst: float, burst_s: float, rate_ratio: float):
    """The phased burst/idle MMPP(2) (Sec. 3.2.3-3.2.4; phase 1 = burst). Returns an :class:`MMPP2`.

    With ``R = lam1 / lam2`` and a share ``f`` of jobs in bursts, the time share of bursts is
    ``p = f / (R - f (R - 1))``; ``r12 = 1 / burst_s`` (mean burst length), ``r21 = p r12 / (1 - p)``,
    ``lam2 = lambda / (p R + 1 - p)``, ``lam1 = R lam2``.
    """
    R = float(rate_ratio)
    p = burst_time_share(jobs_in_burst, R)
    lam = 1.0 / float(mean_interarrival_s)
    lam2 = lam / (p * R + 1.0 - p)
    r12 = 1.0 / float(burst_s)
    return MMPP2(R * lam2, lam2, r12, p * r12 / (1.0 - p))
