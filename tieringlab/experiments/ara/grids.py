"""The experiment grids of the ARA chapter: Table 1, Fig. 3, 5, 6, 8, Table 2 and the sensitivity study.

Each grid runs its systems by name through :func:`tieringlab.policies.registry.run`, each configuration with its
own :class:`AraParams` (the section's ``policy`` with the fields the configuration sets, :func:`system_run`),
and returns a labelled Dataset whose ``config`` coordinate carries those parameters (``system``, ``k``,
``th_s``, ``th_l``, ...): tables and claims select by coordinate, never by parsing a label.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import NamedTuple

import jax
import numpy as np
import pandas as pd
import xarray as xr

from tieringlab.claims import ara as C
from tieringlab.experiments.ara.preconditions import herding_exposure, measured_index_of_dispersion
from tieringlab.experiments.ara.section import (
    AraLoadBalancingParams,
    AraParams,
    _fig3_mmpps,
    _phased_mmpp,
    _services,
    _streams,
    balanced_accuracy,
    mean_service,
    predictor,
    service_scv,
)
from tieringlab.models import burstiness
from tieringlab.models.mmpp import sample_with_phases
from tieringlab.models.workloads.ara import mean_service_s
from tieringlab.policies import registry
from tieringlab.policies.ara import predicted_burst_state
from tieringlab.progress import progress
from tieringlab.stats import interval, mean_ci

# ------------------------------------------------------------------------------------------ experiments


class Run(NamedTuple):
    """One configuration: its ``label`` (the ``config`` coordinate), the registry ``system`` it runs and the
    :class:`AraParams` it runs with (their fields become coordinates of the result)."""

    label: str
    system: str
    params: AraParams


def system_run(label: str, system: str, base: AraParams, **fields) -> Run:
    """``system`` (a registry name) on ``base`` with ``fields`` set; the name fixes ``policy``."""
    return Run(label, system, dataclasses.replace(base, **registry.get(system).fixed, **fields))


def _policy_runs(arrivals, services, runs, *, key, burst_state=None, predicted=None, desc=""):
    """Mean response per replication for each :class:`Run` -> (len(runs), R). One batched dispatcher call per
    run (a few configurations; the replications are the batch), the run's own params."""
    out = []
    for run in progress(runs, total=len(runs), desc=desc):
        res = registry.run(run.system, arrivals, services, params=run.params, key=key, burst_state=burst_state,
                           predicted_state=predicted)
        out.append(res["mean_response_s"].values)
    return np.stack(out)


def rand_extension(p: AraLoadBalancingParams, mms, key, *, arrival_key, settings, params: AraParams,
                   mean_service_s: float, desc: str = "") -> np.ndarray:
    """Rand alone on replications ``n_reps .. calibration_n_reps - 1`` of the arrival streams of ``mms`` -> (len(mms),
    calibration_n_reps - n_reps): the continuation (``start = n_reps``, ids ``settings``) of the streams the main run
    drew from ``arrival_key``, so that with the main run's ``n_reps`` Rand replications they are ``calibration_n_reps``
    replications of one workload. Services (mean ``mean_service_s``, the section's SCV) and Rand's dispatch keys of
    the j-th MMPP come from ``key`` (folds 0 and 1, each folded with j), fresh draws; one batched call per MMPP, so
    memory stays at one workload's replications. Rand queries no state: these runs are the cheap ones."""
    extra = p.calibration_n_reps - p.n_reps
    if extra <= 0:
        return np.empty((len(mms), 0))
    out = []
    for j, (mm, s) in enumerate(zip(mms, settings, strict=True)):
        arr, _ = _streams([mm], arrival_key, p.n_jobs, extra, start=p.n_reps, settings=[s])
        svc = _services(jax.random.fold_in(jax.random.fold_in(key, 0), j), p.n_jobs, [mean_service_s] * extra,
                        [service_scv(p)] * extra)
        out.append(_policy_runs(arr, svc, [system_run("rand", "Rand", params)],
                                key=jax.random.fold_in(jax.random.fold_in(key, 1), j), desc=desc)[0])
    return np.stack(out)


def config_coords(runs) -> dict:
    """The coordinates along ``config`` of ``runs``: the registry name (``system``) and the dispatcher
    parameters each ran with (``policy``, ``k``, ``th_s``, ``th_l``: th_l resolved, Fig. 7 step 1a)."""
    return {"system": ("config", [r.system for r in runs]), "policy": ("config", [r.params.policy for r in runs]),
            "k": ("config", [int(r.params.k) for r in runs]),
            "th_s": ("config", [int(r.params.th_s) for r in runs]),
            "th_l": ("config", [r.params.large_threshold() for r in runs])}


def response_dataset(resp, labels, extra_dims: dict, name="response_s", config: dict | None = None) -> xr.Dataset:
    """``resp`` (extra dims..., config, seed) with its mean and 95 % half-width over the seeds
    (:func:`tieringlab.stats.mean_ci`); ``config``: coordinates along ``config`` (:func:`config_coords`)."""
    m, h = mean_ci(resp, axis=-1)
    coords = {**extra_dims, "config": labels}
    dims = [*extra_dims, "config"]
    ds = xr.Dataset({name: (dims + ["seed"], resp), "mean_s": (dims, m), "ci95_s": (dims, h)},
                    coords={**coords, "seed": np.arange(resp.shape[-1])})
    if config:
        ds = ds.assign_coords(config)
    ds.attrs["units"] = "seconds (mean response time per replication; ci95 = 95 % Student-t half-width)"
    return ds


def static_experiment(p: AraLoadBalancingParams, key) -> xr.Dataset:
    """Table 1 and Fig. 5: Rand, Qlen and static ARA (K in ``p.ks``) under the three MMPP(2) workloads
    (the three workloads' replications in one batch per configuration). Also the on/off predictor's
    balanced accuracy against the true MMPP phase on each bursty workload (Fig. 6 (c)), and the preconditions
    measured on the same streams: ``herding_exposure`` and ``measured_index_of_dispersion`` (Eq. 2) per workload
    and replication (:mod:`tieringlab.experiments.ara.preconditions`). ``rand_calibration_s``
    (calibration_index_of_dispersion, calibration_seed): Rand on Table 1's two bursty workloads (the calibration
    rows), ``calibration_n_reps`` replications: the ``n_reps`` above, then Rand-only ones on the same workloads'
    next streams (:func:`rand_extension`)."""
    base = p.policy
    runs = ([system_run("qlen", "Qlen", base), system_run("rand", "Rand", base)]
            + [system_run(f"ara_k{k}", "ARA", base, k=k) for k in p.ks if k <= base.n_sites])
    nI, R = len(p.index_of_dispersion), p.n_reps
    arr, phase = _streams(_fig3_mmpps(p), jax.random.fold_in(key, 0), p.n_jobs, R)
    svc = _services(jax.random.fold_in(key, 1), p.n_jobs, [mean_service(p)] * (nI * R), [service_scv(p)] * (nI * R))
    resp = _policy_runs(arr, svc, runs, key=jax.random.fold_in(key, 2), desc="Table 1 / Fig. 5")
    resp = resp.reshape(len(runs), nI, R).transpose(1, 0, 2)
    ds = response_dataset(resp, [r.label for r in runs], {"index_of_dispersion": list(p.index_of_dispersion)},
                          config=config_coords(runs))
    # the calibration rows (Table 1's bursty Rand cells): Rand's n_reps replications above, continued to
    # calibration_n_reps by Rand-only runs on the same workloads' next streams
    cal_I = [I for I in TABLE1_CALIBRATION_TARGETS if I in p.index_of_dispersion]
    if cal_I:
        idx = [list(p.index_of_dispersion).index(I) for I in cal_I]
        mms = _fig3_mmpps(p)
        rand = [r.label for r in runs].index("rand")
        more = rand_extension(p, [mms[i] for i in idx], jax.random.fold_in(key, 3),
                              arrival_key=jax.random.fold_in(key, 0), settings=idx, params=runs[rand].params,
                              mean_service_s=mean_service(p), desc="Table 1 calibration rows")
        ds["rand_calibration_s"] = (("calibration_index_of_dispersion", "calibration_seed"),
                                    np.concatenate([resp[idx, rand, :], more], axis=1))
        ds = ds.assign_coords(calibration_index_of_dispersion=cal_I,
                              calibration_seed=np.arange(p.calibration_n_reps))
    acc = balanced_accuracy(predicted_burst_state(arr, predictor(p)), phase).reshape(nI, R)
    acc[np.asarray(p.index_of_dispersion) == 1.0] = np.nan  # Poisson: no phases to follow
    ds["predictor_balanced_accuracy"] = (("index_of_dispersion", "seed"), acc)
    # preconditions (experiments.ara.preconditions): the streams as run
    ds["herding_exposure"] = (("index_of_dispersion", "seed"),
                              herding_exposure(arr, phase, base.delay_s).reshape(nI, R))
    ds["measured_index_of_dispersion"] = (("index_of_dispersion", "seed"),
                                          measured_index_of_dispersion(arr).reshape(nI, R))
    ds.attrs.update(n_sites=base.n_sites, delay_s=base.delay_s, utilization=p.utilization, service_scv=service_scv(p),
                    mean_service_s=mean_service(p))
    return ds


def arrivals_per_second(p: AraLoadBalancingParams, key) -> xr.Dataset:
    """Fig. 3 (and Fig. 6 (c)): arrivals per second of the three MMPP(2) workloads over ``p.fig3_seconds``,
    with the true burst phase and the on/off predictor's state per second."""
    mms = _fig3_mmpps(p)
    n = int(3 * p.fig3_seconds / p.mean_interarrival_s) + 200
    sec = np.arange(int(p.fig3_seconds))
    counts, true_on, pred_on = [], [], []
    for i, mm in enumerate(mms):  # three workloads
        t, ph = sample_with_phases(mm, jax.random.fold_in(key, i), n)
        counts.append(np.bincount(np.floor(t[t < p.fig3_seconds]).astype(int), minlength=sec.size)[: sec.size])
        j = np.clip(np.searchsorted(t, sec + 0.5), 0, len(t) - 1)  # the phase of the next arrival
        true_on.append(ph[j])
        pred_on.append(np.asarray(burstiness.burst_state_at(burstiness.predict_bursts(t, predictor(p)), sec + 0.5)))
    dims = ("index_of_dispersion", "second")
    return xr.Dataset({"arrivals_per_s": (dims, np.stack(counts)), "true_burst": (dims, np.stack(true_on)),
                       "predicted_burst": (dims, np.stack(pred_on))},
                      coords={"index_of_dispersion": list(p.index_of_dispersion), "second": sec})


#: Fig. 6 (a)'s five monitoring windows (seconds, thesis Sec. 3.2.2): W2 and W4 hold a change of phase.
FIG6A_WINDOWS = ((40_000.0, 50_000.0), (50_000.0, 55_000.0), (55_000.0, 64_000.0), (64_000.0, 70_000.0),
                 (70_000.0, 75_000.0))


def fig6a_windows(p: AraLoadBalancingParams, key) -> xr.Dataset:
    """Fig. 6 (a): I (Eq. 2, :func:`tieringlab.models.burstiness.index_of_dispersion`) of the inter-arrival
    times in each of W1..W5 on a reconstruction of the thesis' trace: idle, one peak, idle, Poisson within
    each phase, the peak from the middle of W2 (52.5 Ks) to the middle of W4 (67 Ks) (our reading of the
    figure's description), at ``p.fig6a_rates_per_s`` (default: the phased workload's phase rates)."""
    if p.fig6a_rates_per_s is None:
        mm = _phased_mmpp(p)
        idle, peak = float(mm.lam2), float(mm.lam1)
    else:
        idle, peak = (float(x) for x in p.fig6a_rates_per_s)
    edges = np.array([40_000.0, 52_500.0, 67_000.0, 75_000.0])
    rates = np.array([idle, peak, idle])
    rng = np.random.default_rng(np.asarray(jax.random.key_data(key)).astype(np.uint64).tolist())
    counts = rng.poisson(rates * np.diff(edges))
    seg = np.repeat(np.arange(3), counts)
    t = np.sort(edges[seg] + rng.random(seg.size) * np.diff(edges)[seg])
    rows = []
    for a, b in FIG6A_WINDOWS:
        x = np.diff(t[(t >= a) & (t < b)])
        rows.append((float(burstiness.index_of_dispersion(x)), x.size + 1))
    per100 = np.bincount(((t - 40_000.0) // 100).astype(int), minlength=350)[:350]
    ds = xr.Dataset({"index_of_dispersion": ("window", [r[0] for r in rows]),
                     "arrivals": ("window", [r[1] for r in rows]),
                     "start_s": ("window", [w[0] for w in FIG6A_WINDOWS]),
                     "end_s": ("window", [w[1] for w in FIG6A_WINDOWS]),
                     "holds_change": ("window", [False, True, False, True, False]),
                     "arrivals_per_100s": ("time_100s", per100)},
                    coords={"window": ["W1", "W2", "W3", "W4", "W5"], "time_100s": 40_000.0 + 100.0 * np.arange(350)})
    ds.attrs.update(idle_rate_per_s=idle, peak_rate_per_s=peak)
    return ds


def predictor_trace(p: AraLoadBalancingParams, key) -> xr.Dataset:
    """Fig. 6 (b): one phased run: arrivals per second, true burst phase and the predictor's on/off state
    per second, and the predictor's index of dispersion per monitoring window."""
    mm = _phased_mmpp(p)
    n = int(1.5 * p.fig6_seconds / p.mean_interarrival_s) + 200
    t, burst = sample_with_phases(mm, key, n)
    pred = burstiness.predict_bursts(t, predictor(p))
    sec = np.arange(int(p.fig6_seconds))
    keep = t < p.fig6_seconds
    counts = np.bincount(np.floor(t[keep]).astype(int), minlength=sec.size)[: sec.size]
    # true phase per second: the phase of the next arrival at or after the middle of the second
    j = np.clip(np.searchsorted(t, sec + 0.5), 0, len(t) - 1)
    true_on = burst[j]
    pred_on = np.asarray(burstiness.burst_state_at(pred, sec + 0.5))
    valid = np.asarray(pred.valid) & (np.asarray(pred.decision_time) < p.fig6_seconds)
    ds = xr.Dataset(
        {"arrivals_per_s": ("second", counts), "true_burst": ("second", true_on),
         "predicted_burst": ("second", pred_on),
         "window_I": ("window", np.asarray(pred.index_of_dispersion)[valid]),
         "window_time_s": ("window", np.asarray(pred.decision_time)[valid])},
        coords={"second": sec})
    ds.attrs["predictor_agreement_per_second"] = float(np.mean(true_on == pred_on))
    ds.attrs["phased_index_of_dispersion"] = float(mm.index_of_dispersion())
    return ds


def _phased(p: AraLoadBalancingParams, key, *, mean_interarrival_s=None):
    """The phased workload's ``p.n_reps`` streams: arrivals, true burst state, predicted state."""
    arr, burst = _streams([_phased_mmpp(p, mean_interarrival_s)], key, p.n_jobs, p.n_reps)
    return arr, burst, predicted_burst_state(arr, predictor(p))


def online_experiment(p: AraLoadBalancingParams, key) -> xr.Dataset:
    """Fig. 8: ARA_PRED and ARA_OPT on the phased workload, (a) th_s = ``policy.th_s`` (1), th_l in
    ``th_l_grid``; (b) th_l = ``policy.th_l`` (14), th_s in ``th_s_grid``; with Qlen and Rand. Coordinates along
    ``config``: ``system``, ``k``, ``th_s``, ``th_l`` and ``fig8_part`` ("a", "b"; "" for Qlen and Rand). Also
    the predictor's balanced accuracy and the herding exposure per replication (Fig. 6 (b);
    :mod:`tieringlab.experiments.ara.preconditions`)."""
    base = p.policy
    N = base.n_sites
    arr, burst, pred = _phased(p, jax.random.fold_in(key, 0))
    svc = _services(jax.random.fold_in(key, 1), p.n_jobs, [mean_service(p)] * p.n_reps, [service_scv(p)] * p.n_reps)
    runs, parts = [system_run("qlen", "Qlen", base), system_run("rand", "Rand", base)], ["", ""]
    for pol, name in (("ara_pred", "ARA_PRED"), ("ara_opt", "ARA_OPT")):
        a = [system_run(f"{pol}_a_thl{x}", name, base, th_l=x) for x in p.th_l_grid if x <= N]
        b = [system_run(f"{pol}_b_ths{x}", name, base, th_s=x, th_l=base.large_threshold()) for x in p.th_s_grid
             if x <= N]
        runs += a + b
        parts += ["a"] * len(a) + ["b"] * len(b)
    resp = _policy_runs(arr, svc, runs, key=jax.random.fold_in(key, 2), burst_state=burst, predicted=pred,
                        desc="Fig. 8")
    ds = response_dataset(resp, [r.label for r in runs], {},
                          config={**config_coords(runs), "fig8_part": ("config", parts)})
    ds["predictor_balanced_accuracy"] = ("seed", balanced_accuracy(pred, burst))
    ds["herding_exposure"] = ("seed", herding_exposure(arr, burst, base.delay_s))
    ds.attrs.update(jobs_in_burst=float(burst.mean()), predictor_agreement=float((burst == pred).mean()))
    return ds


#: Table 2's policies, in the thesis' column order (the ``config`` labels of the default th_l reading).
TABLE2_POLICIES = C.TABLE2_POLICIES
#: Table 2's rules for th_l at N sites (choice 5): Fig. 8's th_l scaled with N (the default), Fig. 7's ceil(N/2).
TH_L_RULES = ("scaled", "half")


def table2_th_l(rule: str, n: int, base: AraParams) -> int:
    """th_l at ``n`` sites under ``rule``: ``round(th_l n / N)`` of the base dispatcher (Fig. 8 (b)'s 14 of 16;
    "scaled") or ceil(n / 2) (Fig. 7 step 1a; "half")."""
    if rule == "half":
        return int(math.ceil(n / 2))
    return max(1, min(n, int(round(base.large_threshold() * n / base.n_sites))))


def _table2_runs(base: AraParams, n: int, d: float) -> tuple[list[Run], list[str]]:
    """Table 2's six configurations at ``n`` sites and delay ``d``: Rand, ARA_OPT, ARA_PRED, Qlen (th_l scaled
    with N), then ARA_OPT and ARA_PRED with th_l = ceil(N / 2) (choice 5); th_s is the base's (1). Also each
    one's th_l rule ("" for Qlen and Rand, which use no threshold)."""
    cell = dataclasses.replace(base, n_sites=n, delay_s=d, th_l=table2_th_l("scaled", n, base))
    half = table2_th_l("half", n, base)
    runs = [system_run("rand", "Rand", cell), system_run("ara_opt", "ARA_OPT", cell),
            system_run("ara_pred", "ARA_PRED", cell), system_run("qlen", "Qlen", cell),
            system_run("ara_opt_half", "ARA_OPT", cell, th_l=half),
            system_run("ara_pred_half", "ARA_PRED", cell, th_l=half)]
    return runs, ["", "scaled", "scaled", "", "half", "half"]


def table2_experiment(p: AraLoadBalancingParams, key) -> xr.Dataset:
    """Table 2: Rand, ARA_OPT, ARA_PRED, Qlen on the phased workload for (a) N, (b) D, (c) load, plus the
    side-by-side readings: ARA with th_l = ceil(N / 2) (``ara_opt_half``, ``ara_pred_half``; choice 5) and
    (a) with the arrival rate scaled with N instead of the service time (part ``a_arrivals``; choice 6).

    Cells that are the same simulation (N = 16, D = 1 s, 50 %) run once; the load cells share their
    arrival streams and run in one batch (services scaled to the load). Every cell uses the same phased
    arrival streams (common random numbers) except the arrival-scaled ones. ``rand_calibration_s``
    (calibration_seed): Rand at the base cell (the calibration row), ``calibration_n_reps`` replications: its
    ``n_reps`` above, then Rand-only ones on the phased workload's next streams (:func:`rand_extension`); only when
    the base cell runs. Coordinates: along ``cell`` its
    ``part``, ``n_sites``, ``delay_s``, ``utilization``, ``scaling`` ("service", "arrivals") and both th_l;
    along ``config`` the ``system``, its ``policy`` and ``th_l_rule`` ("scaled", "half"; "" for Qlen and Rand)."""
    P0 = p.policy
    base = (P0.n_sites, P0.delay_s, p.utilization, "service")
    cells = ([("a", f"N={n}", (n, P0.delay_s, p.utilization, "service")) for n in p.table2_sites]
             + [("b", f"D={d:g}s", (P0.n_sites, d, p.utilization, "service")) for d in p.table2_delays_s]
             + [("c", f"load={int(round(100 * u))}%", (P0.n_sites, P0.delay_s, u, "service")) for u in p.table2_loads]
             + [("a_arrivals", f"N={n} arrivals", (n, P0.delay_s, p.utilization, "arrivals"))
                for n in p.table2_sites if n != P0.n_sites])
    sims = list(dict.fromkeys(c[2] for c in cells))       # unique simulations, in order
    arr, burst, pred = _phased(p, jax.random.fold_in(key, 0))
    R = p.n_reps
    out = {}
    # one batch per (N, D, scaling): the loads of one (N, D) are stacked as replications
    groups = {}
    for s in sims:
        groups.setdefault((s[0], s[1], s[3]), []).append(s)
    for gi, ((n, d, scaling), members) in enumerate(progress(list(groups.items()), desc="Table 2")):
        if scaling == "arrivals":  # per-site arrival rate kept: E[A] scaled by N0 / N, E[S] as at N0
            ea = p.mean_interarrival_s * P0.n_sites / n
            a, b, pr = _phased(p, jax.random.fold_in(key, 100 + gi), mean_interarrival_s=ea)
        else:
            ea, a, b, pr = p.mean_interarrival_s, arr, burst, pred
        means = np.repeat([mean_service_s(n, u, ea) for (_, _, u, _) in members], R)
        svc = _services(jax.random.fold_in(key, 1), p.n_jobs, means, [service_scv(p)] * means.size)
        k = len(members)
        a, b, pr = (np.tile(x, (k, 1)) for x in (a, b, pr))
        runs, _ = _table2_runs(P0, n, d)
        resp = _policy_runs(a, svc, runs, key=jax.random.fold_in(key, 2), burst_state=b, predicted=pr,
                            desc=f"N={n} D={d:g}")
        for j, s in enumerate(members):
            out[s] = resp[:, j * R:(j + 1) * R]
    resp = np.stack([out[c[2]] for c in cells])
    runs, rules = _table2_runs(P0, P0.n_sites, P0.delay_s)
    cal = None
    if base in out:  # the calibration row (Table 2's base Rand): its n_reps, continued by Rand-only runs
        more = rand_extension(p, [_phased_mmpp(p)], jax.random.fold_in(key, 3), arrival_key=jax.random.fold_in(key, 0),
                              settings=[0], params=runs[0].params, mean_service_s=mean_service(p),
                              desc="Table 2 calibration row")
        cal = np.concatenate([out[base][0], more[0]])
    ds = response_dataset(resp, [r.label for r in runs], {"cell": [c[1] for c in cells]},
                          config={"system": ("config", [r.system for r in runs]),
                                  "policy": ("config", [r.params.policy for r in runs]),
                                  "th_l_rule": ("config", rules)})
    ds = ds.assign_coords(part=("cell", [c[0] for c in cells]), n_sites=("cell", [c[2][0] for c in cells]),
                          delay_s=("cell", [float(c[2][1]) for c in cells]),
                          utilization=("cell", [float(c[2][2]) for c in cells]),
                          scaling=("cell", [c[2][3] for c in cells]),
                          th_l=("cell", [table2_th_l("scaled", c[2][0], P0) for c in cells]),
                          th_l_half=("cell", [table2_th_l("half", c[2][0], P0) for c in cells]))
    ds.attrs["base_cell"] = [c[1] for c in cells if c[2] == base][0] if any(c[2] == base for c in cells) else ""
    if cal is not None:
        ds["rand_calibration_s"] = ("calibration_seed", cal)
        ds = ds.assign_coords(calibration_seed=np.arange(cal.size))
    return ds


# ------------------------------------------------------------------------------------------ sensitivity


def sensitivity_settings(p: AraLoadBalancingParams) -> pd.DataFrame:
    """The workload settings of the sensitivity study: every (E[A], SCV, rate ratio) at the default share of jobs in
    bursts, every (rate ratio, share) at the default E[A] and SCV, every ``sens_rate_ratio_between`` at the default
    E[A], SCV and share, and the default workload itself. A setting's rate ratio R applies to every MMPP
    (``rate_ratio``: the phased workload's, ``t1_rate_ratio``: Table 1's); the default setting has the two
    calibrated ratios (``mmpp_rate_ratio``, ``table1_rate_ratio``)."""
    ea0, scv0, f0 = p.mean_interarrival_s, service_scv(p), p.mmpp_jobs_in_burst
    rows = [(ea, scv, R, R, f0) for ea, scv, R in
            itertools.product(p.sens_mean_interarrival_s, p.sens_service_scv, p.sens_rate_ratio)]
    rows += [(ea0, scv0, R, R, f) for R, f in itertools.product(p.sens_rate_ratio, p.sens_jobs_in_burst) if f != f0]
    rows += [(ea0, scv0, R, R, f0) for R in p.sens_rate_ratio_between]
    rows += [(ea0, scv0, p.mmpp_rate_ratio, p.table1_rate_ratio, f0)]
    rows = list(dict.fromkeys(rows))
    df = pd.DataFrame(rows, columns=["mean_interarrival_s", "service_scv", "rate_ratio", "t1_rate_ratio",
                                     "jobs_in_burst"])
    df.insert(1, "mean_service_s", [mean_service_s(p.policy.n_sites, p.utilization, ea)
                                    for ea in df.mean_interarrival_s])
    df["default"] = ((df.mean_interarrival_s == ea0) & (df.service_scv == scv0) & (df.rate_ratio == p.mmpp_rate_ratio)
                     & (df.t1_rate_ratio == p.table1_rate_ratio) & (df.jobs_in_burst == f0))
    return df


SENS_T1_POLICIES = ("qlen", "rand")
SENS_F8_POLICIES = ("qlen", "rand", "ara_opt", "ara_pred")
#: The registry name of each policy of the sensitivity study.
SENS_SYSTEMS = {"qlen": "Qlen", "rand": "Rand", "ara_opt": "ARA_OPT", "ara_pred": "ARA_PRED"}


def sensitivity(p: AraLoadBalancingParams, key) -> xr.Dataset:
    """The workload sensitivity study: for every setting of :func:`sensitivity_settings`, (i) Qlen and Rand
    under the three Fig. 3 workloads (Table 1's orderings) and (ii) Qlen, Rand, ARA_OPT and ARA_PRED
    (th_s = ``policy.th_s``, th_l = ``policy.th_l``) on the phased workload (Fig. 8's orderings), ``sens_n_reps`` x
    ``sens_n_jobs`` each. All settings and replications of one policy run in ONE batched dispatcher call
    (the settings are stacked as replications). Returns ``t1_response_s`` (setting, index_of_dispersion,
    policy, seed) and ``f8_response_s`` (setting, policy, seed), and the preconditions measured on the same
    streams (:mod:`tieringlab.experiments.ara.preconditions`): ``t1_herding_exposure``,
    ``t1_measured_index_of_dispersion`` (setting, index_of_dispersion, seed), ``f8_herding_exposure`` and
    ``f8_predictor_balanced_accuracy`` (setting, seed)."""
    st = sensitivity_settings(p)
    base = p.policy
    S, nI, R, n = len(st), len(p.index_of_dispersion), p.sens_n_reps, p.sens_n_jobs
    es = np.repeat(st.mean_service_s.values, R)
    scv = np.repeat(st.service_scv.values, R)
    # (i) Table 1: settings x I x replications, one batch
    mms = [mm for row in st.itertuples() for mm in _fig3_mmpps(p, row.mean_interarrival_s, row.jobs_in_burst,
                                                                  row.t1_rate_ratio)]
    arr, phase = _streams(mms, jax.random.fold_in(key, 0), n, R)
    t1_herd = herding_exposure(arr, phase, base.delay_s).reshape(S, nI, R)
    t1_I = measured_index_of_dispersion(arr).reshape(S, nI, R)
    svc = _services(jax.random.fold_in(key, 1), n, np.repeat(es.reshape(S, R), nI, axis=0).ravel(),
                    np.repeat(scv.reshape(S, R), nI, axis=0).ravel())
    t1 = _policy_runs(arr, svc, [system_run(x, SENS_SYSTEMS[x], base) for x in SENS_T1_POLICIES],
                      key=jax.random.fold_in(key, 2), desc="sensitivity, Table 1")
    t1 = t1.reshape(len(SENS_T1_POLICIES), S, nI, R).transpose(1, 2, 0, 3)
    # (ii) Fig. 8: settings x replications of the phased workload, one batch
    mms = [_phased_mmpp(p, row.mean_interarrival_s, row.jobs_in_burst, row.rate_ratio) for row in st.itertuples()]
    arr, burst = _streams(mms, jax.random.fold_in(key, 3), n, R)
    svc = _services(jax.random.fold_in(key, 4), n, es, scv)
    pred = predicted_burst_state(arr, predictor(p))
    f8 = _policy_runs(arr, svc, [system_run(x, SENS_SYSTEMS[x], base) for x in SENS_F8_POLICIES],
                      key=jax.random.fold_in(key, 5), burst_state=burst, predicted=pred,
                      desc="sensitivity, Fig. 8")
    f8 = f8.reshape(len(SENS_F8_POLICIES), S, R).transpose(1, 0, 2)
    coords = {c: ("setting", st[c].values) for c in st.columns}
    t1_dims, f8_dims = ("setting", "index_of_dispersion", "seed"), ("setting", "seed")
    return xr.Dataset({"t1_response_s": (("setting", "index_of_dispersion", "t1_policy", "seed"), t1),
                       "f8_response_s": (("setting", "f8_policy", "seed"), f8),
                       "t1_herding_exposure": (t1_dims, t1_herd),
                       "t1_measured_index_of_dispersion": (t1_dims, t1_I),
                       "f8_herding_exposure": (f8_dims, herding_exposure(arr, burst, base.delay_s).reshape(S, R)),
                       "f8_predictor_balanced_accuracy": (f8_dims, balanced_accuracy(pred, burst).reshape(S, R))},
                      coords={"setting": np.arange(S), "index_of_dispersion": list(p.index_of_dispersion),
                              "t1_policy": list(SENS_T1_POLICIES), "f8_policy": list(SENS_F8_POLICIES),
                              "seed": np.arange(R), **coords})


def _rand_by_ratio(p: AraLoadBalancingParams, mms_by_ratio, key, desc: str) -> np.ndarray:
    """Rand alone, ``calibration_n_reps`` replications of each MMPP of each ratio's list -> (ratios, MMPPs, reps).
    The MMPPs are numbered s = 0, 1, ... in ratio-major order: stream (s, r) from key's fold 0 (:func:`_streams`),
    services and dispatch keys from folds 1 and 2 folded with s; one batched call per MMPP, so memory stays at one
    workload's replications."""
    M = p.calibration_n_reps
    flat = [mm for mms in mms_by_ratio for mm in mms]
    out = []
    for s, mm in enumerate(flat):
        arr, _ = _streams([mm], jax.random.fold_in(key, 0), p.n_jobs, M, settings=[s])
        svc = _services(jax.random.fold_in(jax.random.fold_in(key, 1), s), p.n_jobs, [mean_service(p)] * M,
                        [service_scv(p)] * M)
        out.append(_policy_runs(arr, svc, [system_run("rand", "Rand", p.policy)],
                                key=jax.random.fold_in(jax.random.fold_in(key, 2), s), desc=desc)[0])
    return np.stack(out).reshape(len(mms_by_ratio), -1, M)


def rate_ratio_calibration(p: AraLoadBalancingParams, key) -> pd.DataFrame:
    """Rand on the phased workload (N, D, rho of the base; ``n_jobs`` x ``calibration_n_reps``) for each of
    ``p.calibration_rate_ratios``, beside Table 2's 1109.33 s: the calibration of ``mmpp_rate_ratio`` (choice 3).
    ``log_error``: ln(ours / thesis) (:func:`fit_rate_ratio`)."""
    Rs = list(p.calibration_rate_ratios)
    resp = _rand_by_ratio(p, [[_phased_mmpp(p, rate_ratio=r)] for r in Rs], key, "calibration")[:, 0]
    m, h = mean_ci(resp, axis=-1)
    return pd.DataFrame({"rate_ratio": Rs, "rand_mean_s": m, "rand_ci95_s": h, "thesis_rand_s": 1109.33,
                         "log_error": np.log(m / 1109.33), "default": [r == p.mmpp_rate_ratio for r in Rs]})


def fit_rate_ratio(cal: pd.DataFrame) -> float:
    """The rate ratio of :func:`rate_ratio_calibration`'s table whose Rand is closest in log to Table 2's base Rand
    (least |log error|: :func:`fit_table1_rate_ratio`'s rule with one cell; the first on a tie)."""
    if cal.empty:
        raise ValueError("the calibration table is empty: calibration_rate_ratios must name at least one ratio")
    return float(cal.rate_ratio.iloc[int(np.argmin(np.abs(cal.log_error.to_numpy())))])


#: Table 1's Rand cells the rate ratio of its bursty workloads is calibrated on (I -> s): the non-bursty cell is
#: Poisson at every ratio, so it cannot inform the ratio.
TABLE1_CALIBRATION_TARGETS = {C.STRONG_I: C.TABLE1_PAPER[("rand", C.STRONG_I)],
                              C.WEAK_I: C.TABLE1_PAPER[("rand", C.WEAK_I)]}


def table1_rate_ratio_calibration(p: AraLoadBalancingParams, key) -> pd.DataFrame:
    """Rand on Table 1's two bursty workloads (N, D, rho of the base; ``n_jobs`` x ``calibration_n_reps``) at each of
    ``p.table1_calibration_rate_ratios`` (one batched call per ratio and workload), beside Table 1's Rand: the
    calibration of ``table1_rate_ratio`` on Table 1's own Rand column (issue 34). Rand assigns without looking at
    the load view, so this column does not depend on herding; Qlen and ARA are never run here. ``log_error``:
    ln(ours / thesis); ``sse``: the sum of the squared log errors of the ratio's two cells
    (:func:`fit_table1_rate_ratio`)."""
    Rs = list(p.table1_calibration_rate_ratios)
    Is = [I for I in TABLE1_CALIBRATION_TARGETS if I in p.index_of_dispersion]
    resp = _rand_by_ratio(p, [[bursty_mmpp_for(p, I, R) for I in Is] for R in Rs], key, "Table 1 calibration")
    m, h = mean_ci(resp, axis=-1)
    rows = [{"rate_ratio": R, "index_of_dispersion": I, "rand_mean_s": m[i, j], "rand_ci95_s": h[i, j],
             "thesis_rand_s": TABLE1_CALIBRATION_TARGETS[I],
             "log_error": float(np.log(m[i, j] / TABLE1_CALIBRATION_TARGETS[I]))}
            for i, R in enumerate(Rs) for j, I in enumerate(Is)]
    df = pd.DataFrame(rows)
    df["sse"] = df.groupby("rate_ratio").log_error.transform(lambda e: float(np.sum(np.square(e))))
    df["default"] = df.rate_ratio == p.table1_rate_ratio
    return df


def fit_table1_rate_ratio(cal: pd.DataFrame) -> float:
    """The rate ratio of :func:`table1_rate_ratio_calibration`'s table with the least sum of squared log errors
    against Table 1's Rand cells (the rule fixed before the calibration first ran; the first on a tie)."""
    if cal.empty:
        raise ValueError("the calibration table is empty: table1_calibration_rate_ratios must name at least one ratio")
    sse = cal.groupby("rate_ratio", sort=False).sse.first()
    return float(sse.idxmin())


def bursty_mmpp_for(p: AraLoadBalancingParams, index_of_dispersion: float, rate_ratio: float):
    """One of Fig. 3's MMPP(2)s (``index_of_dispersion``) at ``rate_ratio``, the section's E[A] and burst share."""
    from tieringlab.models.workloads.ara import bursty_mmpp  # noqa: PLC0415

    return bursty_mmpp(p.mean_interarrival_s, index_of_dispersion, p.mmpp_jobs_in_burst, rate_ratio)


def _runs(flags: np.ndarray):
    """Start index and length of each maximal run of equal values of a 1-D bool array."""
    change = np.flatnonzero(np.diff(flags.astype(np.int8))) + 1
    starts = np.concatenate([[0], change])
    return starts, np.diff(np.concatenate([starts, [flags.size]]))


def detection_lags(arrivals, truth, pred) -> tuple[float, float, float, float]:
    """The predictor's detection lags on one stream (1-D, arrival-ordered): for each run of true burst jobs (of true
    idle jobs), the seconds from its first job to its first job predicted "on" ("off"); a run with no such job is
    missed. Returns (mean onset lag s, share of bursts missed, mean end lag s, share of idle runs missed); the run
    in progress when the stream starts is skipped (its start is unseen); NaN where no run counts."""
    a, t, q = np.asarray(arrivals, float), np.asarray(truth, bool), np.asarray(pred, bool)
    starts, lengths = _runs(t)
    out = {True: ([], 0), False: ([], 0)}
    for st, ln in zip(starts[1:], lengths[1:]):
        state = bool(t[st])
        hit = np.flatnonzero(q[st:st + ln] == state)
        lags, missed = out[state]
        if hit.size:
            lags.append(a[st + hit[0]] - a[st])
        else:
            missed += 1
        out[state] = (lags, missed)

    def summary(state):
        lags, missed = out[state]
        n = len(lags) + missed
        return (float(np.mean(lags)) if lags else float("nan"), missed / n if n else float("nan"))

    return (*summary(True), *summary(False))


def predictor_m_sweep(p: AraLoadBalancingParams, key) -> pd.DataFrame:
    """The on/off predictor at each window m of ``p.predictor_m_sweep`` (its other parameters at their defaults) on
    the phased workload and on Table 1's strong-bursty workload (``sens_n_reps`` streams of ``sens_n_jobs`` jobs):
    balanced accuracy against the true phase, and the mean detection lags (s) and missed shares of burst starts and
    ends (:func:`detection_lags`), mean over streams. The predictor alone: no dispatcher runs, so the choice of m
    (``predictor_m``, from the thesis' text) can be read against accuracy and lag, never against a policy."""
    R, n = p.sens_n_reps, p.sens_n_jobs
    workloads = {"phased": _phased_mmpp(p)}
    if C.STRONG_I in p.index_of_dispersion:
        workloads["strong (Table 1)"] = bursty_mmpp_for(p, C.STRONG_I, p.table1_rate_ratio)
    rows = []
    for w, (name, mm) in enumerate(workloads.items()):
        arr, burst = _streams([mm], jax.random.fold_in(key, w), n, R)
        for m in p.predictor_m_sweep:
            pred = predicted_burst_state(arr, predictor(p, m))
            lags = np.array([detection_lags(arr[r], burst[r], pred[r]) for r in range(R)])
            with np.errstate(invalid="ignore"):
                on, on_miss, off, off_miss = (float(np.nanmean(lags[:, i])) if np.isfinite(lags[:, i]).any()
                                              else float("nan") for i in range(4))
            acc = balanced_accuracy(pred, burst)
            rows.append({"workload": name, "m": int(m), "balanced_accuracy": float(np.nanmean(acc)),
                         "accuracy_ci95": interval(acc[np.isfinite(acc)]).half if np.isfinite(acc).sum() > 1
                         else float("nan"),
                         "onset_lag_s": on, "bursts_missed": on_miss, "end_lag_s": off, "idle_runs_missed": off_miss,
                         "default": int(m) == int(p.predictor_m)})
    return pd.DataFrame(rows)
