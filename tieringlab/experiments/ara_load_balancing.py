"""notebooks/04_ara_load_balancing.ipynb: ARA against Qlen and Rand under MMPP workloads (thesis Ch. 3).

Workloads (thesis Sec. 3.1, 3.2.3, 3.2.4) and the experiment grids of Table 1, Fig. 3, Fig. 5, Fig. 6,
Fig. 8 and Table 2. Every number is a mean over replications (seeds) with a 95 % confidence interval;
the replications of one configuration run in one vmapped call of
:func:`tieringlab.policies.ara.dispatch`.

Documented choices where the thesis is silent or inconsistent (all are parameters below):

1. **Time scale.** Sec. 3.1 says the three MMPP arrival processes have "mean equal to 10s", with
   N = 16 sites at 50 % utilisation. Read as a mean inter-arrival time of 10 s, the mean service
   time would be E[S] = rho N E[A] = 80 s, and then Table 1 is impossible: any FCFS job takes at
   least its service time (Qlen's 7.6 s < 80 s), and Rand on Poisson arrivals is N independent M/G/1
   queues whose Pollaczek-Khinchine mean response E[S] (1 + rho (1 + c^2) / (2 (1 - rho))) >= 1.5 E[S]
   = 120 s (Rand's 80.5 s < 120 s). Fig. 3 plots *arrivals per second*, so we read the "10" as a rate of
   10 arrivals per second: ``mean_interarrival_s = 0.1`` (then E[S] = 0.8 s, compatible with both cells).
2. **Service times.** Not stated. Table 1's non-bursty Rand (80.5 s, N = 16, rho = 0.5) pins the SCV
   through P-K: c^2 = 2 (1 - rho) (T / E[S] - 1) / rho - 1 = 198.25 at E[S] = 0.8 s. We draw a
   2-phase hyperexponential with balanced means and that SCV (``service_scv = None`` derives it;
   a number overrides it). This makes Rand's non-bursty mean match by construction (it is not an
   independent check); nothing is fitted to Qlen or to any ARA result.
3. **MMPP(2) for Fig. 3**: :func:`tieringlab.models.mmpp.fit_mmpp2` with its documented defaults
   (10 % of the time in the high-rate phase, rates 10:1), the thesis' mean and I = 313.5, 32.25, 1.
4. **Phased workload (Fig. 6-8, Table 2)**: an MMPP(2) with 51 % of the jobs in the high-rate ("burst")
   phase (Sec. 3.2.3), mean burst duration 6 s (Sec. 3.2.4: "the average duration of bursty periods
   is equal to 6s"), the same mean rate, and the burst/idle rate ratio 10 of (3). The true phase of
   each job is ARA_OPT's burst state.
5. **Table 2 thresholds**: th_s = 1 and th_l = round(14 N / 16) (Fig. 8 (b) uses th_l = 14 of N = 16).
6. Systems start empty; every job counts in the mean (no warm-up cut; the thesis does not mention one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import scipy.stats
import xarray as xr

from tieringlab.params import param, section
from tieringlab.progress import progress

# ------------------------------------------------------------------------------------------ params


@section("ara_load_balancing")
@dataclass(frozen=True)
class AraLoadBalancingParams:
    n_jobs: int = param(100_000, "jobs per replication (the thesis does not state its run length; our choice)",
                        bounds=(200, 10_000_000))
    n_reps: int = param(8, "replications (seeds) per configuration, for the 95 % confidence intervals",
                        bounds=(2, 1024))
    n_sites: int = param(16, "N computing sites (thesis Sec. 3.1, Table 1, Fig. 5, Fig. 8)", bounds=(1, 256))
    delay_s: float = param(1.0, "information query delay D (thesis Sec. 3.1, footnote 2)", bounds=(1e-6, None))
    utilization: float = param(0.5, "average site utilisation rho (thesis Sec. 3.1)", bounds=(0.01, 0.99))
    mean_interarrival_s: float = param(
        0.1, "mean inter-arrival time E[A]: Fig. 3's '10' read as 10 arrivals/s, since 10 s contradicts Table 1 "
             "(see module docstring, choice 1)", bounds=(1e-6, None))
    index_of_dispersion: tuple[float, ...] = param(
        (313.5, 32.25, 1.0), "I of the strong-, weak- and non-bursty MMPP(2) arrivals (thesis Sec. 3.1, Fig. 3)",
        bounds=(1.0, None))
    service_scv: float | None = param(
        None, "SCV of the H2 service times; None derives it by Pollaczek-Khinchine from Table 1's non-bursty "
              "Rand (choice 2)", bounds=(1.0, None))
    rand_nonbursty_response_s: float = param(
        80.5, "Table 1, Rand, non-bursty: the P-K anchor of the service SCV (thesis Table 1)", bounds=(0.0, None))
    mmpp_burst_fraction: float = param(0.1, "MMPP(2) time share of the high-rate phase (models.mmpp documented "
                                            "default; the thesis gives no MMPP parameters)", bounds=(0.001, 0.999))
    mmpp_rate_ratio: float = param(10.0, "MMPP(2) high/low rate ratio (models.mmpp documented default)",
                                   bounds=(1.0001, None))
    phased_jobs_in_burst: float = param(0.51, "share of jobs arriving in bursts, phased workload (Sec. 3.2.3)",
                                        bounds=(0.01, 0.99))
    phased_burst_s: float = param(6.0, "mean burst duration of the phased workload (Sec. 3.2.4)",
                                  bounds=(1e-3, None))
    ks: tuple[int, ...] = param(tuple(range(1, 17)), "static ARA K values of Fig. 5 (thesis: 1..N)", bounds=(1, 256))
    th_l_grid: tuple[int, ...] = param(tuple(range(1, 17)), "Fig. 8 (a): th_l from 1 to 16 with th_s = 1",
                                       bounds=(1, 256))
    th_s_grid: tuple[int, ...] = param(tuple(range(1, 17)), "Fig. 8 (b): th_s from 1 to 16 with th_l = 14",
                                       bounds=(1, 256))
    fig8_th_l: int = param(14, "Fig. 8 (b)'s fixed large threshold th_l (thesis Sec. 3.2.3)", bounds=(1, 256))
    table2_sites: tuple[int, ...] = param((8, 16, 32), "Table 2 (a) network sizes N", bounds=(1, 256))
    table2_delays_s: tuple[float, ...] = param((1.0, 2.0, 6.0), "Table 2 (b) delays D", bounds=(1e-6, None))
    table2_loads: tuple[float, ...] = param((0.3, 0.5, 0.8), "Table 2 (c) site utilisations", bounds=(0.01, 0.99))
    fig3_seconds: float = param(600.0, "length of the arrivals-per-second plots of Fig. 3 (our choice)",
                                bounds=(1.0, None))
    fig6_seconds: float = param(600.0, "length of the predictor illustration of Fig. 6 (our choice)",
                                bounds=(10.0, None))


# ------------------------------------------------------------------------------------------ workloads


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


def mmpp_arrivals(key, n: int, mean_interarrival_s: float, index_of_dispersion: float, *,
                  burst_fraction: float = 0.1, rate_ratio: float = 10.0, with_phase: bool = False):
    """Arrival times (s) of ``n`` jobs from the MMPP(2) fitted to (mean, I) by ``models.mmpp.fit_mmpp2``
    (thesis Sec. 3.1, Fig. 3); with ``with_phase`` also the high-rate-phase flag per job."""
    from tieringlab.models.mmpp import fit_mmpp2  # noqa: PLC0415

    mm = fit_mmpp2(mean_interarrival_s, index_of_dispersion, burst_fraction=burst_fraction, rate_ratio=rate_ratio)
    t, ph = phased_workload(key, n, mm)
    return (t, ph) if with_phase else t


def phased_mmpp(mean_interarrival_s: float, jobs_in_burst: float, burst_s: float, rate_ratio: float):
    """The phased burst/idle MMPP(2) (choice 4): phase 1 = burst. Returns ``models.mmpp.MMPP2``.

    With ``R = lam1 / lam2`` and a share ``f`` of jobs in bursts, the time share of bursts is
    ``p = f / (R - f (R - 1))``; ``r12 = 1 / burst_s`` (mean burst length), ``r21 = p r12 / (1 - p)``,
    ``lam2 = lambda / (p R + 1 - p)``, ``lam1 = R lam2``.
    """
    from tieringlab.models.mmpp import MMPP2  # noqa: PLC0415

    f, R = float(jobs_in_burst), float(rate_ratio)
    p = f / (R - f * (R - 1.0))
    lam = 1.0 / float(mean_interarrival_s)
    lam2 = lam / (p * R + 1.0 - p)
    r12 = 1.0 / float(burst_s)
    return MMPP2(R * lam2, lam2, r12, p * r12 / (1.0 - p))


def _rng(key) -> np.random.Generator:
    """A NumPy generator seeded from a ``jax.random`` key (same key -> same draws)."""
    return np.random.default_rng(np.asarray(jax.random.key_data(key)).astype(np.uint64).tolist())


def phased_workload(key, n: int, mm) -> tuple[np.ndarray, np.ndarray]:
    """``n`` arrivals of the 2-phase MMPP ``mm`` (``models.mmpp.MMPP2``) with the phase at each arrival.

    Returns ``(arrival_times, in_burst)``; ``in_burst`` is True for arrivals in phase 1 (the
    high-rate phase: the true burst state that ARA_OPT uses). Vectorised: the sojourns are drawn as
    arrays (the phases of an MMPP(2) alternate; the first from the stationary law), Poisson counts per
    sojourn, uniform placement inside it, one sort. (``MMPP2.sample`` gives the same process without
    the phases.)
    """
    lam = np.array([float(mm.lam1), float(mm.lam2)])
    soj = np.array([1.0 / float(mm.r12), 1.0 / float(mm.r21)])
    pi1 = float(mm.r21) / (float(mm.r12) + float(mm.r21))
    rate = float(mm.mean_rate())
    rng = _rng(key)
    M = 2 * int(math.ceil(1.3 * n / (rate * soj.sum()))) + 16
    while True:  # almost always once; more sojourns if the draw fell short
        first = int(rng.random() >= pi1)                         # 0 = burst, 1 = idle
        phase = (first + np.arange(M)) % 2
        tau = rng.exponential(1.0, M) * soj[phase]
        counts = rng.poisson(lam[phase] * tau)
        if counts.sum() >= n:
            break
        M *= 2
    start = np.cumsum(tau) - tau
    idx = np.repeat(np.arange(M), counts)
    t = start[idx] + rng.random(idx.size) * tau[idx]
    order = np.argsort(t, kind="stable")[:n]
    return t[order], phase[idx][order] == 0


# ------------------------------------------------------------------------------------------ statistics


def mean_ci(x, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """Mean and the half-width of the 95 % Student-t confidence interval over ``axis`` (replications)."""
    x = np.asarray(x, np.float64)
    r = x.shape[axis]
    m = x.mean(axis=axis)
    half = scipy.stats.t.ppf(0.975, r - 1) * x.std(axis=axis, ddof=1) / math.sqrt(r) if r > 1 else np.nan * m
    return m, half


# ------------------------------------------------------------------------------------------ experiments


def _services(P: AraLoadBalancingParams, keys, n: int, n_sites: int, utilization: float) -> np.ndarray:
    es = mean_service_s(n_sites, utilization, P.mean_interarrival_s)
    scv = service_scv(P)
    return np.stack([np.asarray(sample_services(k, n, es, scv)) for k in keys])


def service_scv(P: AraLoadBalancingParams) -> float:
    """The service SCV in use: ``P.service_scv`` or the P-K value from Table 1 (choice 2), at the base N, rho."""
    if P.service_scv is not None:
        return float(P.service_scv)
    es = mean_service_s(P.n_sites, P.utilization, P.mean_interarrival_s)
    return scv_from_rand_response(P.rand_nonbursty_response_s, es, P.utilization)


def _policy_runs(arrivals, services, runs, *, n_sites, delay, key, burst_state=None, predicted=None, desc=""):
    """Mean response per replication for each run ``(label, policy, kwargs)`` -> (len(runs), R)."""
    from tieringlab.policies import ara  # noqa: PLC0415

    out = []
    for label, policy, kw in progress(runs, total=len(runs), desc=desc):  # a few configurations
        res = ara.simulate(arrivals, services, n_sites, policy, delay=delay, key=key,
                           burst_state=burst_state, predicted_state=predicted, **kw)
        out.append(np.asarray(res.response).mean(axis=1))
    return np.stack(out)


def _dataset(resp, labels, extra_dims: dict, name="response_s"):
    m, h = mean_ci(resp, axis=-1)
    coords = {**extra_dims, "config": labels}
    dims = [*extra_dims, "config"]
    ds = xr.Dataset({name: (dims + ["seed"], resp), "mean_s": (dims, m), "ci95_s": (dims, h)},
                    coords={**coords, "seed": np.arange(resp.shape[-1])})
    ds.attrs["units"] = "seconds (mean response time per replication; ci95 = 95 % Student-t half-width)"
    return ds


def static_experiment(P: AraLoadBalancingParams, key) -> xr.Dataset:
    """Table 1 and Fig. 5: Rand, Qlen and static ARA (K in ``P.ks``) under the three MMPP(2) workloads."""
    runs = [("qlen", "qlen", {}), ("rand", "rand", {})] + [(f"ara_k{k}", "ara", {"k": k}) for k in P.ks]
    rows = []
    for i, I in enumerate(P.index_of_dispersion):
        keys = jax.random.split(jax.random.fold_in(key, i), P.n_reps)
        arr = np.stack([mmpp_arrivals(k, P.n_jobs, P.mean_interarrival_s, I, burst_fraction=P.mmpp_burst_fraction,
                                      rate_ratio=P.mmpp_rate_ratio) for k in keys])
        svc = _services(P, jax.random.split(jax.random.fold_in(key, 100 + i), P.n_reps), P.n_jobs, P.n_sites,
                        P.utilization)
        rows.append(_policy_runs(arr, svc, runs, n_sites=P.n_sites, delay=P.delay_s, key=jax.random.fold_in(key, 200 + i),
                                 desc=f"I={I}"))
    ds = _dataset(np.stack(rows), [r[0] for r in runs], {"index_of_dispersion": list(P.index_of_dispersion)})
    ds.attrs.update(n_sites=P.n_sites, delay_s=P.delay_s, utilization=P.utilization, service_scv=service_scv(P))
    return ds


def arrivals_per_second(P: AraLoadBalancingParams, key) -> xr.DataArray:
    """Fig. 3: arrivals per second of the three MMPP(2) workloads over ``P.fig3_seconds``."""
    n = int(3 * P.fig3_seconds / P.mean_interarrival_s) + 100
    out = []
    for i, I in enumerate(P.index_of_dispersion):
        t = mmpp_arrivals(jax.random.fold_in(key, i), n, P.mean_interarrival_s, I,
                          burst_fraction=P.mmpp_burst_fraction, rate_ratio=P.mmpp_rate_ratio)
        out.append(np.bincount(np.floor(t[t < P.fig3_seconds]).astype(int), minlength=int(P.fig3_seconds)))
    return xr.DataArray(np.stack(out), dims=("index_of_dispersion", "second"),
                        coords={"index_of_dispersion": list(P.index_of_dispersion),
                                "second": np.arange(int(P.fig3_seconds))}, name="arrivals_per_s")


def _phased(P: AraLoadBalancingParams, key, n_sites: int, utilization: float):
    mm = phased_mmpp(P.mean_interarrival_s, P.phased_jobs_in_burst, P.phased_burst_s, P.mmpp_rate_ratio)
    keys = jax.random.split(key, P.n_reps)
    arr, burst = zip(*[phased_workload(k, P.n_jobs, mm) for k in keys])
    arr, burst = np.stack(arr), np.stack(burst)
    from tieringlab.policies.ara import predicted_burst_state  # noqa: PLC0415

    pred = np.stack([predicted_burst_state(a) for a in arr])
    svc = _services(P, jax.random.split(jax.random.fold_in(key, 1), P.n_reps), P.n_jobs, n_sites, utilization)
    return mm, arr, svc, burst, pred


def predictor_trace(P: AraLoadBalancingParams, key) -> xr.Dataset:
    """Fig. 6: one phased run: arrivals per second, true burst phase and the predictor's on/off state
    per second, and the predictor's index of dispersion per monitoring window."""
    from tieringlab.models import burstiness  # noqa: PLC0415

    mm = phased_mmpp(P.mean_interarrival_s, P.phased_jobs_in_burst, P.phased_burst_s, P.mmpp_rate_ratio)
    n = int(1.5 * P.fig6_seconds / P.mean_interarrival_s) + 200
    t, burst = phased_workload(key, n, mm)
    pred = burstiness.predict_bursts(t)
    sec = np.arange(int(P.fig6_seconds))
    keep = t < P.fig6_seconds
    counts = np.bincount(np.floor(t[keep]).astype(int), minlength=sec.size)[: sec.size]
    # true phase per second: the phase of the last arrival at or before the second's start (or the next one)
    j = np.clip(np.searchsorted(t, sec + 0.5), 0, len(t) - 1)
    true_on = burst[j]
    pred_on = np.asarray(burstiness.burst_state_at(pred, sec + 0.5))
    valid = np.asarray(pred.valid) & (np.asarray(pred.decision_time) < P.fig6_seconds)
    ds = xr.Dataset(
        {"arrivals_per_s": ("second", counts), "true_burst": ("second", true_on), "predicted_burst": ("second", pred_on),
         "window_I": ("window", np.asarray(pred.index_of_dispersion)[valid]),
         "window_time_s": ("window", np.asarray(pred.decision_time)[valid])},
        coords={"second": sec})
    ds.attrs["predictor_agreement"] = float(np.mean(true_on == pred_on))
    ds.attrs["phased_index_of_dispersion"] = float(mm.index_of_dispersion())
    return ds


def online_experiment(P: AraLoadBalancingParams, key) -> xr.Dataset:
    """Fig. 8: ARA_PRED and ARA_OPT on the phased workload, (a) th_s = 1, th_l in ``th_l_grid``;
    (b) th_l = ``fig8_th_l``, th_s in ``th_s_grid``; with Qlen and Rand."""
    N = P.n_sites
    _, arr, svc, burst, pred = _phased(P, key, N, P.utilization)
    runs = [("qlen", "qlen", {}), ("rand", "rand", {})]
    for pol in ("ara_pred", "ara_opt"):
        runs += [(f"{pol}_a_thl{x}", pol, {"th_s": 1, "th_l": x}) for x in P.th_l_grid if x <= N]
        runs += [(f"{pol}_b_ths{x}", pol, {"th_s": x, "th_l": min(P.fig8_th_l, N)}) for x in P.th_s_grid if x <= N]
    resp = _policy_runs(arr, svc, runs, n_sites=N, delay=P.delay_s, key=jax.random.fold_in(key, 2), burst_state=burst,
                        predicted=pred, desc="Fig. 8")
    ds = _dataset(resp, [r[0] for r in runs], {})
    ds.attrs.update(jobs_in_burst=float(burst.mean()), predictor_agreement=float((burst == pred).mean()))
    return ds


def table2_experiment(P: AraLoadBalancingParams, key) -> xr.Dataset:
    """Table 2: Rand, ARA_OPT, ARA_PRED, Qlen on the phased workload for (a) N, (b) D, (c) load."""
    cells = ([("a", f"N={n}", n, P.delay_s, P.utilization) for n in P.table2_sites]
             + [("b", f"D={d:g}s", P.n_sites, d, P.utilization) for d in P.table2_delays_s]
             + [("c", f"load={int(round(100 * u))}%", P.n_sites, P.delay_s, u) for u in P.table2_loads])
    rows = []
    for i, (_, _, n, d, u) in enumerate(cells):
        th_l = max(1, min(n, int(round(P.fig8_th_l * n / 16))))
        runs = [("rand", "rand", {}), ("ara_opt", "ara_opt", {"th_s": 1, "th_l": th_l}),
                ("ara_pred", "ara_pred", {"th_s": 1, "th_l": th_l}), ("qlen", "qlen", {})]
        # the same arrival streams in every cell (common random numbers); services scale with N and load
        _, arr, svc, burst, pred = _phased(P, key, n, u)
        rows.append(_policy_runs(arr, svc, runs, n_sites=n, delay=d, key=jax.random.fold_in(key, 10),
                                 burst_state=burst, predicted=pred, desc=f"Table 2 {cells[i][1]}"))
    ds = _dataset(np.stack(rows), ["rand", "ara_opt", "ara_pred", "qlen"], {"cell": [c[1] for c in cells]})
    ds = ds.assign_coords(part=("cell", [c[0] for c in cells]))
    return ds


# ------------------------------------------------------------------------------------------ tables, claims


def table1(static: xr.Dataset) -> "pd.DataFrame":
    """Table 1: Rand and Qlen mean response (s) with 95 % CI per workload, beside the thesis' numbers."""
    import pandas as pd  # noqa: PLC0415

    paper = {("rand", 313.5): 1520.9, ("rand", 32.25): 168.5, ("rand", 1.0): 80.5,
             ("qlen", 313.5): 6541.5, ("qlen", 32.25): 466.5, ("qlen", 1.0): 7.6}
    rows = []
    for pol in ("rand", "qlen"):
        for I in static.index_of_dispersion.values:
            sel = static.sel(config=pol, index_of_dispersion=I)
            rows.append({"policy": pol, "index_of_dispersion": float(I), "mean_s": float(sel.mean_s),
                         "ci95_s": float(sel.ci95_s), "paper_s": paper.get((pol, float(I)), float("nan"))})
    return pd.DataFrame(rows)


def table2_frame(t2: xr.Dataset) -> "pd.DataFrame":
    """Table 2 as rows (part, cell, policy, mean, CI, paper)."""
    import pandas as pd  # noqa: PLC0415

    paper = {"N=8": (1089.25, 1063.39, 1064.66, 1101.02), "N=16": (1109.33, 1056.07, 1059.00, 1244.32),
             "N=32": (1148.38, 1042.79, 1051.21, 1751.43), "D=1s": (1109.33, 1056.07, 1059.00, 1244.32),
             "D=2s": (1111.07, 1057.76, 1062.97, 1692.26), "D=6s": (1110.77, 1063.23, 1070.57, 3653.21),
             "load=30%": (487.83, 471.05, 473.04, 606.62), "load=50%": (1109.33, 1056.07, 1059.00, 1244.32),
             "load=80%": (4220.09, 3964.39, 3968.77, 4138.34)}
    rows = []
    for cell, part in zip(t2.cell.values, t2.part.values):
        for j, pol in enumerate(("rand", "ara_opt", "ara_pred", "qlen")):
            sel = t2.sel(cell=cell, config=pol)
            rows.append({"part": str(part), "cell": str(cell), "policy": pol, "mean_s": float(sel.mean_s),
                         "ci95_s": float(sel.ci95_s), "paper_s": paper.get(str(cell), (np.nan,) * 4)[j]})
    return pd.DataFrame(rows)


def claim_values(static: xr.Dataset, t2: xr.Dataset) -> dict:
    """The reproduced value of every claim in :mod:`tieringlab.claims.ara` (``None`` where not computable)."""
    from tieringlab.claims.ara import absolute_claim_id  # noqa: PLC0415

    m = static.mean_s
    Is = [float(i) for i in static.index_of_dispersion.values]
    out = {}

    def at(I, cfg):
        return float(m.sel(index_of_dispersion=I, config=cfg))

    out["ara.table1.qlen_beats_rand_nonbursty"] = at(1.0, "rand") / at(1.0, "qlen") if 1.0 in Is else None
    out["ara.table1.rand_beats_qlen_strong"] = at(313.5, "qlen") / at(313.5, "rand") if 313.5 in Is else None
    ara_cfg = [c for c in static.config.values if str(c).startswith("ara_k")]
    out["ara.fig5.static_ara_beats_both"] = max(
        min(at(I, c) for c in ara_cfg) / min(at(I, "qlen"), at(I, "rand")) for I in Is)
    t = t2.mean_s
    pred, opt = t.sel(config="ara_pred"), t.sel(config="ara_opt")
    out["ara.table2.pred_within_few_percent_of_opt"] = float(100 * np.max((pred - opt) / opt))
    out["ara.table2.pred_beats_qlen_and_rand_everywhere"] = bool(
        np.all(pred < t.sel(config="qlen")) and np.all(pred < t.sel(config="rand")))
    dcells = [str(c) for c in t2.cell.values if str(c).startswith("D=")]
    if "D=1s" in dcells and "D=6s" in dcells:
        out["ara.table2b.qlen_degrades_with_delay"] = float(t.sel(cell="D=6s", config="qlen")
                                                            / t.sel(cell="D=1s", config="qlen"))
    r = np.array([float(t.sel(cell=c, config="rand")) for c in dcells])
    out["ara.table2b.rand_flat_in_delay"] = float(100 * (r.max() - r.min()) / r.min()) if len(r) > 1 else None
    for I, key in ((313.5, "313.5"), (32.25, "32.25"), (1.0, "1")):
        for pol in ("rand", "qlen"):
            out[absolute_claim_id("table1", pol, key)] = at(I, pol) if I in Is else None
    base = [str(c) for c in t2.cell.values if str(c) == "N=16"]
    for pol in ("rand", "ara_opt", "ara_pred", "qlen"):
        out[absolute_claim_id("table2", pol, "base")] = float(t.sel(cell=base[0], config=pol)) if base else None
    return out
