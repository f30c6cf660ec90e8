"""notebooks/04_ara_load_balancing.ipynb: ARA against Qlen and Rand under MMPP workloads (thesis Ch. 3).

The experiment grids of Table 1, Fig. 3, Fig. 5, Fig. 6, Fig. 8 and Table 2 on the workloads of thesis
Sec. 3.1, 3.2.3 and 3.2.4 (:mod:`tieringlab.models.workloads.ara`). Every number is a mean over
replications (seeds) with a 95 % confidence interval (:func:`tieringlab.models.intervals.mean_ci`); the
replications of one configuration run in one batched call of the dispatcher, by the policy's name
through :func:`tieringlab.policies.registry.run`.

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

from dataclasses import dataclass

import jax
import numpy as np
import pandas as pd
import xarray as xr

from tieringlab.claims import ara as C
from tieringlab.models import burstiness
from tieringlab.models.intervals import mean_ci
from tieringlab.models.mmpp import sample_with_phases
from tieringlab.models.workloads.ara import (mean_service_s, mmpp_arrivals, phased_mmpp, sample_services,
                                             scv_from_rand_response)
from tieringlab.params import param, section
from tieringlab.policies import registry
from tieringlab.policies.ara import predicted_burst_state
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

    def __post_init__(self):
        """Cross-field checks (ValueError naming the parameter): every K and threshold is a number of sites,
        so it is at most ``n_sites`` (ARA's K and th_s, th_l range over 1..N, thesis Sec. 3.2)."""
        for name in ("ks", "th_l_grid", "th_s_grid", "fig8_th_l"):
            vals = getattr(self, name)
            too_big = [v for v in (vals if isinstance(vals, tuple) else (vals,)) if v > self.n_sites]
            if too_big:
                raise ValueError(f"{name}: {too_big} exceed n_sites = {self.n_sites} (K and the thresholds count "
                                 f"sites: each must be in [1, n_sites])")


# ------------------------------------------------------------------------------------------ experiments


def mean_service(p: AraLoadBalancingParams) -> float:
    """E[S] at the base N and rho (choice 1): ``rho N E[A]``."""
    return mean_service_s(p.n_sites, p.utilization, p.mean_interarrival_s)


def _services(p: AraLoadBalancingParams, keys, n: int, n_sites: int, utilization: float) -> np.ndarray:
    es = mean_service_s(n_sites, utilization, p.mean_interarrival_s)
    scv = service_scv(p)
    return np.stack([np.asarray(sample_services(k, n, es, scv)) for k in keys])


def service_scv(p: AraLoadBalancingParams) -> float:
    """The service SCV in use: ``p.service_scv`` or the P-K value from Table 1 (choice 2), at the base N, rho."""
    if p.service_scv is not None:
        return float(p.service_scv)
    es = mean_service_s(p.n_sites, p.utilization, p.mean_interarrival_s)
    return scv_from_rand_response(p.rand_nonbursty_response_s, es, p.utilization)


def _policy_runs(arrivals, services, runs, *, n_sites, delay, key, burst_state=None, predicted=None, desc=""):
    """Mean response per replication for each run ``(label, registry name, knobs)`` -> (len(runs), R)."""
    out = []
    for label, name, kw in progress(runs, total=len(runs), desc=desc):  # a few configurations
        res = registry.run(name, arrivals, services, knobs={"n_sites": n_sites, "delay_s": delay, **kw}, key=key,
                           burst_state=burst_state, predicted_state=predicted)
        out.append(res["mean_response_s"].values)
    return np.stack(out)


def _dataset(resp, labels, extra_dims: dict, name="response_s"):
    m, h = mean_ci(resp, axis=-1)
    coords = {**extra_dims, "config": labels}
    dims = [*extra_dims, "config"]
    ds = xr.Dataset({name: (dims + ["seed"], resp), "mean_s": (dims, m), "ci95_s": (dims, h)},
                    coords={**coords, "seed": np.arange(resp.shape[-1])})
    ds.attrs["units"] = "seconds (mean response time per replication; ci95 = 95 % Student-t half-width)"
    return ds


def static_experiment(p: AraLoadBalancingParams, key) -> xr.Dataset:
    """Table 1 and Fig. 5: Rand, Qlen and static ARA (K in ``p.ks``) under the three MMPP(2) workloads."""
    runs = [("qlen", "Qlen", {}), ("rand", "Rand", {})] + [(f"ara_k{k}", "ARA", {"k": k}) for k in p.ks]
    rows = []
    for i, I in enumerate(p.index_of_dispersion):
        keys = jax.random.split(jax.random.fold_in(key, i), p.n_reps)
        arr = np.stack([mmpp_arrivals(k, p.n_jobs, p.mean_interarrival_s, I, burst_fraction=p.mmpp_burst_fraction,
                                      rate_ratio=p.mmpp_rate_ratio) for k in keys])
        svc = _services(p, jax.random.split(jax.random.fold_in(key, 100 + i), p.n_reps), p.n_jobs, p.n_sites,
                        p.utilization)
        rows.append(_policy_runs(arr, svc, runs, n_sites=p.n_sites, delay=p.delay_s, key=jax.random.fold_in(key, 200 + i),
                                 desc=f"I={I}"))
    ds = _dataset(np.stack(rows), [r[0] for r in runs], {"index_of_dispersion": list(p.index_of_dispersion)})
    ds.attrs.update(n_sites=p.n_sites, delay_s=p.delay_s, utilization=p.utilization, service_scv=service_scv(p))
    return ds


def arrivals_per_second(p: AraLoadBalancingParams, key) -> xr.DataArray:
    """Fig. 3: arrivals per second of the three MMPP(2) workloads over ``p.fig3_seconds``."""
    n = int(3 * p.fig3_seconds / p.mean_interarrival_s) + 100
    out = []
    for i, I in enumerate(p.index_of_dispersion):
        t = mmpp_arrivals(jax.random.fold_in(key, i), n, p.mean_interarrival_s, I,
                          burst_fraction=p.mmpp_burst_fraction, rate_ratio=p.mmpp_rate_ratio)
        out.append(np.bincount(np.floor(t[t < p.fig3_seconds]).astype(int), minlength=int(p.fig3_seconds)))
    return xr.DataArray(np.stack(out), dims=("index_of_dispersion", "second"),
                        coords={"index_of_dispersion": list(p.index_of_dispersion),
                                "second": np.arange(int(p.fig3_seconds))}, name="arrivals_per_s")


def _phased(p: AraLoadBalancingParams, key, n_sites: int, utilization: float):
    mm = phased_mmpp(p.mean_interarrival_s, p.phased_jobs_in_burst, p.phased_burst_s, p.mmpp_rate_ratio)
    keys = jax.random.split(key, p.n_reps)
    arr, burst = zip(*[sample_with_phases(mm, k, p.n_jobs) for k in keys])
    arr, burst = np.stack(arr), np.stack(burst)
    pred = np.stack([predicted_burst_state(a) for a in arr])
    svc = _services(p, jax.random.split(jax.random.fold_in(key, 1), p.n_reps), p.n_jobs, n_sites, utilization)
    return mm, arr, svc, burst, pred


def predictor_trace(p: AraLoadBalancingParams, key) -> xr.Dataset:
    """Fig. 6: one phased run: arrivals per second, true burst phase and the predictor's on/off state
    per second, and the predictor's index of dispersion per monitoring window."""
    mm = phased_mmpp(p.mean_interarrival_s, p.phased_jobs_in_burst, p.phased_burst_s, p.mmpp_rate_ratio)
    n = int(1.5 * p.fig6_seconds / p.mean_interarrival_s) + 200
    t, burst = sample_with_phases(mm, key, n)
    pred = burstiness.predict_bursts(t)
    sec = np.arange(int(p.fig6_seconds))
    keep = t < p.fig6_seconds
    counts = np.bincount(np.floor(t[keep]).astype(int), minlength=sec.size)[: sec.size]
    # true phase per second: the phase of the last arrival at or before the second's start (or the next one)
    j = np.clip(np.searchsorted(t, sec + 0.5), 0, len(t) - 1)
    true_on = burst[j]
    pred_on = np.asarray(burstiness.burst_state_at(pred, sec + 0.5))
    valid = np.asarray(pred.valid) & (np.asarray(pred.decision_time) < p.fig6_seconds)
    ds = xr.Dataset(
        {"arrivals_per_s": ("second", counts), "true_burst": ("second", true_on), "predicted_burst": ("second", pred_on),
         "window_I": ("window", np.asarray(pred.index_of_dispersion)[valid]),
         "window_time_s": ("window", np.asarray(pred.decision_time)[valid])},
        coords={"second": sec})
    ds.attrs["predictor_agreement"] = float(np.mean(true_on == pred_on))
    ds.attrs["phased_index_of_dispersion"] = float(mm.index_of_dispersion())
    return ds


def online_experiment(p: AraLoadBalancingParams, key) -> xr.Dataset:
    """Fig. 8: ARA_PRED and ARA_OPT on the phased workload, (a) th_s = 1, th_l in ``th_l_grid``;
    (b) th_l = ``fig8_th_l``, th_s in ``th_s_grid``; with Qlen and Rand."""
    N = p.n_sites
    _, arr, svc, burst, pred = _phased(p, key, N, p.utilization)
    runs = [("qlen", "Qlen", {}), ("rand", "Rand", {})]
    for pol, name in (("ara_pred", "ARA_PRED"), ("ara_opt", "ARA_OPT")):
        runs += [(f"{pol}_a_thl{x}", name, {"th_s": 1, "th_l": x}) for x in p.th_l_grid if x <= N]
        runs += [(f"{pol}_b_ths{x}", name, {"th_s": x, "th_l": min(p.fig8_th_l, N)}) for x in p.th_s_grid if x <= N]
    resp = _policy_runs(arr, svc, runs, n_sites=N, delay=p.delay_s, key=jax.random.fold_in(key, 2), burst_state=burst,
                        predicted=pred, desc="Fig. 8")
    ds = _dataset(resp, [r[0] for r in runs], {})
    ds.attrs.update(jobs_in_burst=float(burst.mean()), predictor_agreement=float((burst == pred).mean()))
    return ds


def table2_experiment(p: AraLoadBalancingParams, key) -> xr.Dataset:
    """Table 2: Rand, ARA_OPT, ARA_PRED, Qlen on the phased workload for (a) N, (b) D, (c) load."""
    cells = ([("a", f"N={n}", n, p.delay_s, p.utilization) for n in p.table2_sites]
             + [("b", f"D={d:g}s", p.n_sites, d, p.utilization) for d in p.table2_delays_s]
             + [("c", f"load={int(round(100 * u))}%", p.n_sites, p.delay_s, u) for u in p.table2_loads])
    rows = []
    for i, (_, _, n, d, u) in enumerate(cells):
        th_l = max(1, min(n, int(round(p.fig8_th_l * n / 16))))
        runs = [("rand", "Rand", {}), ("ara_opt", "ARA_OPT", {"th_s": 1, "th_l": th_l}),
                ("ara_pred", "ARA_PRED", {"th_s": 1, "th_l": th_l}), ("qlen", "Qlen", {})]
        # the same arrival streams in every cell (common random numbers); services scale with N and load
        _, arr, svc, burst, pred = _phased(p, key, n, u)
        rows.append(_policy_runs(arr, svc, runs, n_sites=n, delay=d, key=jax.random.fold_in(key, 10),
                                 burst_state=burst, predicted=pred, desc=f"Table 2 {cells[i][1]}"))
    ds = _dataset(np.stack(rows), ["rand", "ara_opt", "ara_pred", "qlen"], {"cell": [c[1] for c in cells]})
    ds = ds.assign_coords(part=("cell", [c[0] for c in cells]))
    return ds


# ------------------------------------------------------------------------------------------ tables, claims


def table1(static: xr.Dataset) -> pd.DataFrame:
    """Table 1: Rand and Qlen mean response (s) with 95 % CI per workload, beside the thesis' numbers."""
    paper = {("rand", 313.5): 1520.9, ("rand", 32.25): 168.5, ("rand", 1.0): 80.5,
             ("qlen", 313.5): 6541.5, ("qlen", 32.25): 466.5, ("qlen", 1.0): 7.6}
    rows = []
    for pol in ("rand", "qlen"):
        for I in static.index_of_dispersion.values:
            sel = static.sel(config=pol, index_of_dispersion=I)
            rows.append({"policy": pol, "index_of_dispersion": float(I), "mean_s": float(sel.mean_s),
                         "ci95_s": float(sel.ci95_s), "paper_s": paper.get((pol, float(I)), float("nan"))})
    return pd.DataFrame(rows)


def table2_frame(t2: xr.Dataset) -> pd.DataFrame:
    """Table 2 as rows (part, cell, policy, mean, CI, paper)."""
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


def claim_values(static: xr.Dataset, t2: xr.Dataset) -> dict[str, tuple[float | bool | None, None]]:
    """``{claim_id: (value, note)}`` for every claim of :mod:`tieringlab.claims.ara` (value ``None`` where
    this run cannot compute it; no per-run note)."""
    m = static.mean_s
    Is = [float(i) for i in static.index_of_dispersion.values]
    out = {}

    def at(I, cfg):
        return float(m.sel(index_of_dispersion=I, config=cfg))

    out[C.QLEN_BEATS_RAND_NONBURSTY] = at(1.0, "rand") / at(1.0, "qlen") if 1.0 in Is else None
    out[C.RAND_BEATS_QLEN_STRONG] = at(313.5, "qlen") / at(313.5, "rand") if 313.5 in Is else None
    ara_cfg = [c for c in static.config.values if str(c).startswith("ara_k")]
    out[C.STATIC_ARA_BEATS_BOTH] = max(
        min(at(I, c) for c in ara_cfg) / min(at(I, "qlen"), at(I, "rand")) for I in Is)
    t = t2.mean_s
    pred, opt = t.sel(config="ara_pred"), t.sel(config="ara_opt")
    out[C.PRED_WITHIN_FEW_PERCENT_OF_OPT] = float(100 * np.max((pred - opt) / opt))
    out[C.PRED_BEATS_QLEN_AND_RAND] = bool(
        np.all(pred < t.sel(config="qlen")) and np.all(pred < t.sel(config="rand")))
    dcells = [str(c) for c in t2.cell.values if str(c).startswith("D=")]
    if "D=1s" in dcells and "D=6s" in dcells:
        out[C.QLEN_DEGRADES_WITH_DELAY] = float(t.sel(cell="D=6s", config="qlen")
                                                            / t.sel(cell="D=1s", config="qlen"))
    r = np.array([float(t.sel(cell=c, config="rand")) for c in dcells])
    out[C.RAND_FLAT_IN_DELAY] = float(100 * (r.max() - r.min()) / r.min()) if len(r) > 1 else None
    for I, key in ((313.5, "313.5"), (32.25, "32.25"), (1.0, "1")):
        for pol in ("rand", "qlen"):
            out[C.absolute_claim_id("table1", pol, key)] = at(I, pol) if I in Is else None
    base = [str(c) for c in t2.cell.values if str(c) == "N=16"]
    for pol in ("rand", "ara_opt", "ara_pred", "qlen"):
        out[C.absolute_claim_id("table2", pol, "base")] = float(t.sel(cell=base[0], config=pol)) if base else None
    return {k: (v, None) for k, v in out.items()}
