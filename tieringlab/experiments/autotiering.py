"""notebooks/06_autotiering.ipynb: AutoTiering against IDT and EDT in a simulated 3-tier all-flash
datacenter (Yang et al., AutoTiering paper Sec. V, Tables I, IV, V, Fig. 2-7).

The paper measured a VMware ESXi testbed and printed no traces, parameter values or run lengths; this
notebook runs the algorithms of :mod:`tieringlab.policies.autotiering` in the declared model of
:mod:`tieringlab.models.allflash` on the Table V workloads of
:mod:`tieringlab.models.workloads.autotiering`. Everything it produces is **simulated**: it can test
whether the paper's orderings and rough magnitudes follow from the algorithm under a declared device
and workload model, not reproduce the testbed's numbers.

Grid: ``n_seeds`` seeds (one scenario each: VMDK sizes, demand dynamics, initial placement, the same for
every policy) x the three policies, one vmapped call per policy, each with its own settings embedded in the
section (``policy``, ``idt``, ``edt``) and the epochs and Gamma the three share embedded once (``epochs``;
:func:`system_params` puts each system's parameters together), beside the model's ``datacenter`` and
``workload``; then the readings of the reading notes' Sec. 6.6 side by side (:data:`READINGS`,
:mod:`tieringlab.readings`, chosen by ``sensitivity``).
Intervals are 95 % Student-t intervals over seeds (:mod:`tieringlab.stats`). Epochs before ``warmup_epochs`` (the
paper's "warming up periods from 0-3 epochs", Sec. V-C) are left out of every comparison.

Documented choices (the paper is silent; reading notes ``autotiering.md`` Sec. 6; each is a parameter):

1. 2 disks per tier; datasheet IOPS at queue depth 32; utilisation cap 0.98 (``models.allflash``).
2. 300 s monitor epochs, 900 s migration epochs (first migration at epoch 3), 60 epochs.
3. 14 VMs x (system VMDK of 40 GB + data VMDK carrying the Table V workload); all VMDKs fill 60 % of
   the raw capacity; Zipf's device demand 2 % of its printed 1942K IOPS; lognormal epoch noise
   (sigma 0.25) and MMPP(2) spikes (x3, 5 % of the time); read fractions and windows from fio's
   example jobs of the same names (``models.workloads.autotiering``).
4. Gamma = 0.9 for every resource; spc T1 (1,1,0), T2 (1,1,1), T3 (0,0,1); weights and SLA 1;
   agingFactor 0.5; wetMig 0.1 (migration time in migration epochs); Eq. 7 history (reading A);
   ``L_t`` = the IO-weighted latency the tier's VMDKs measured; TSSCS levels 0/50/100/200 µs x 5 samples
   of 1 s windows.
5. IDT ranks by measured IOPS with the storage cap only; EDT by IOPS density with an IOPS budget and
   the storage cap; both decide every migration epoch (as AutoTiering).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import jax
import numpy as np
import pandas as pd
import xarray as xr

from tieringlab import readings
from tieringlab.models import allflash as af
from tieringlab.models.devices import autotiering_ssd_table, autotiering_tier_table
from tieringlab.models.workloads import autotiering as wl
from tieringlab.params import cross_field, param, section
from tieringlab.policies import registry
from tieringlab.policies.autotiering import SPC_DEFAULT, AutoTieringSettings, GreedySettings, TieringEpochs
from tieringlab.readings import Reading
from tieringlab.stats import fmt_ci, mean_ci, relative_separation
from tieringlab.units import GB, MB, US

POLICIES = ("AutoTiering", "IDT", "EDT")
BASELINES = ("IDT", "EDT")

_SPC_T1, _, _SPC_T3 = SPC_DEFAULT

#: The readings run side by side (reading notes Sec. 6.6): the parameters each sets (key paths into the section)
#: and why it is plausible. The default reading is the section's documented defaults. A reading of the epochs or
#: Gamma sets ``epochs.<field>`` once: the three systems decide on it together.
READINGS = (
    Reading("n_disks_1", {"datacenter.n_disks": (1, 1, 1)}, "1 disk per tier (instead of 2)"),
    Reading("n_disks_4", {"datacenter.n_disks": (4, 4, 4)}, "4 disks per tier"),
    Reading("zipf_full", {"workload.zipf_device_fraction": 1.0},
            "Zipf IOs offers its full 1942K IOPS (instead of 2 %)"),
    Reading("history_b", {"policy.history": "B"}, "A2.14's history (aged capacity score) instead of Eq. 7's"),
    Reading("tier_latency_datasheet", {"policy.tier_latency": "datasheet"},
            "L_t = the tier's unloaded datasheet latency, not the latency its VMDKs measured"),
    Reading("spc_t2_110", {"policy.spc": (_SPC_T1, (1.0, 1.0, 0.0), _SPC_T3)},
            "tier 2 specialty (1, 1, 0) instead of (1, 1, 1)"),
    Reading("spc_t2_half", {"policy.spc": (_SPC_T1, (0.5, 0.5, 1.0), _SPC_T3)}, "tier 2 specialty (0.5, 0.5, 1)"),
    Reading("cadence_monitor", {"idt.cadence": "monitor", "edt.cadence": "monitor"},
            "IDT and EDT decide every monitor epoch (EDT 'updates ... for every epoch')"),
    Reading("edt_rank_iops", {"edt.rank": "iops"},
            "EDT ranks by IOPS (not IOPS density), constrained by IOPS and capacity"),
)
_BY_NAME = {r.name: r for r in READINGS}


# ------------------------------------------------------------------------------------------ params


@section("autotiering")
@dataclass(frozen=True)
class AutoTieringExperimentParams:
    """The notebook's section: the run's size, the epochs and Gamma the three systems share (``epochs``, set
    once for all three: a fair comparison), each system's own settings (embedded: ``params.yaml`` and papermill
    set their fields, ``autotiering: {policy: {history: "B"}, epochs: {migration_epoch_s: 1800.0}}``), the
    simulated testbed and workloads, and the readings run side by side. :func:`system_params` gives each system
    its parameters (``epochs`` + its settings)."""

    n_seeds: int = param(10, "seeds (scenarios) per policy; the paper reports no repetitions (notes 6.1: >= 10)",
                         bounds=(2, 256))
    n_epochs: int = param(60, "monitor epochs per run (not printed; notes 6.1: 20 migration epochs)",
                          bounds=(6, 10_000))
    warmup_epochs: int = param(4, "epochs 0-3 left out of comparisons (Sec. V-C: warm-up 0-3 epochs)", bounds=(0, 1000))
    epochs: TieringEpochs = param(TieringEpochs(), "the monitor and migration epochs and Eq. 5's Gamma that "
                                                   "AutoTiering, IDT and EDT all decide on (notes 6.1; one value "
                                                   "for the three)")
    policy: AutoTieringSettings = param(AutoTieringSettings(), "AutoTiering's own settings (Alg. 1-2, Eq. 6-7; no "
                                                               "value printed: notes 6.1-6.3)")
    idt: GreedySettings = param(GreedySettings(rank="iops", iops_budget=False),
                                "IDT (Sec. V-A: greedy by measured IOPS, storage cap only; the name fixes "
                                "rank = 'iops' and iops_budget = false)")
    edt: GreedySettings = param(GreedySettings(), "EDT (Sec. V-A, after Guerra et al.: IOPS density under an IOPS "
                                                  "budget; the name fixes iops_budget = true)")
    datacenter: af.DatacenterParams = param(af.DatacenterParams(), "the simulated testbed of Table IV's tiers "
                                                                   "(notes 6.1, 6.5)")
    workload: wl.WorkloadParams = param(wl.WorkloadParams(), "the Table V workloads (notes 6.4)")
    sensitivity: tuple[str, ...] = param(tuple(_BY_NAME), "readings run side by side (notes 6.6); 'none' for none",
                                         choices=(*_BY_NAME, "none"))

    def __post_init__(self):
        """Cross-field checks (ValueError naming the parameter; every failed check is reported)."""
        problems = []
        if self.warmup_epochs >= self.n_epochs - 1:
            problems.append(f"warmup_epochs ({self.warmup_epochs}) must leave at least 2 of the n_epochs "
                            f"({self.n_epochs}) for comparisons")
        if len(self.datacenter.n_disks) != 3:
            problems.append(f"datacenter.n_disks needs one count per Table IV tier (3); got "
                            f"{self.datacenter.n_disks!r}")
        if len(self.policy.spc) != 3 or len(self.policy.wet) != 3:
            problems.append(f"policy.spc and policy.wet need one (P, B, S) row per Table IV tier (3); got "
                            f"{self.policy.spc!r} and {self.policy.wet!r}")
        if self.idt.rank != "iops" or self.idt.iops_budget:
            problems.append(f"idt.rank must be 'iops' and idt.iops_budget false (IDT: 'greedy IOPS-only', Sec. V-A); "
                            f"got {self.idt.rank!r} and {self.idt.iops_budget!r}")
        if not self.edt.iops_budget:
            problems.append("edt.iops_budget must be true (EDT: 'based on both VM capacity and IOPS requirements', "
                            "Sec. V-A)")
        cross_field(problems)


# ------------------------------------------------------------------------------------------ inputs


def table_i() -> pd.DataFrame:
    """Table I (SSD types, July 2017) in the paper's units."""
    t = autotiering_ssd_table()
    return pd.DataFrame({"cost ($/GB)": t["cost_usd_per_gb"], "max size": t["max_size_printed"],
                         "read time (µs)": t["read_time_s"] / US, "write time (µs)": t["write_time_s"] / US})


def table_iv(p: AutoTieringExperimentParams) -> pd.DataFrame:
    """Table IV per disk in the paper's units, with our disks per tier and the Eq. 5 caps."""
    t = autotiering_tier_table()
    caps = af.capacity_caps(af.tier_arrays(t, p.datacenter.n_disks), p.epochs.gamma, p.epochs.gamma_s)
    return pd.DataFrame({
        "model": t["model"], "protocol": t["protocol"],
        "read IOPS": t["read_iops"], "write IOPS": t["write_iops"],
        "read MB/s": t["read_bytes_per_s"] / MB, "write MB/s": t["write_bytes_per_s"] / MB,
        "disk size (GB)": t["disk_size_bytes"] / GB, "disks (ours)": list(p.datacenter.n_disks),
        "maxP (IOPS)": np.asarray(caps.P), "maxB (MB/s)": np.asarray(caps.B) / MB,
        "maxS (GB)": np.asarray(caps.S) / GB})


def table_v() -> pd.DataFrame:
    """Table V as printed beside our readings (derived IO size, read fractions per phase, window)."""
    v = wl.vm_table()
    t = wl.table_v()
    return pd.DataFrame({"load": t["load"], "scenario": t["scenario"], "IOPS (printed)": t["iops_printed"],
                         "BPS (printed)": t["bandwidth_printed"], "IO size (KiB, derived)": v["io_bytes"] / 1024,
                         "read fraction per phase (ours)": [", ".join(f"{x:g}" for x in r)
                                                            for r in v["read_fractions"]],
                         "window (ours)": v["window"]})


def system_params(p: AutoTieringExperimentParams, name: str):
    """The parameters the section gives system ``name`` (one of :data:`POLICIES`): the shared ``epochs`` and the
    system's own settings (``policy``, ``idt`` or ``edt``), with the fields its name fixes from the registry."""
    own = {"AutoTiering": p.policy, "IDT": p.idt, "EDT": p.edt}[name]
    knobs = {f.name: getattr(part, f.name) for part in (p.epochs, own) for f in dataclasses.fields(part)}
    return registry.make_params(name, knobs)


def scenarios(p: AutoTieringExperimentParams, key) -> xr.Dataset:
    """One scenario per seed (dimension ``seed``): the observations every policy gets."""
    per = [wl.scenario(jax.random.fold_in(key, s), tier_table=autotiering_tier_table(), n_disks=p.datacenter.n_disks,
                       n_epochs=p.n_epochs, epoch_s=p.epochs.monitor_epoch_s, gamma_s=p.epochs.gamma_s, wp=p.workload)
           for s in range(p.n_seeds)]  # a loop over seeds (scenario assembly), never over VMDKs
    return xr.concat(per, dim="seed", data_vars="all", coords="minimal", compat="override").assign_coords(
        seed=np.arange(p.n_seeds))


def run(p: AutoTieringExperimentParams, key) -> xr.Dataset:
    """AutoTiering, IDT and EDT on the same scenarios: one Dataset with dims ``policy, seed, epoch, ...``."""
    k_scen, k_pol = jax.random.split(key)
    obs = scenarios(p, k_scen)
    outs = [registry.run(name, obs, params=system_params(p, name), key=k_pol, sim=p.datacenter) for name in POLICIES]
    res = xr.concat(outs, dim="policy", coords="minimal", compat="override").assign_coords(policy=list(POLICIES))
    for v in ("size_bytes", "read_fraction", "offered_iops", "io_bytes", "window"):
        res[v] = obs[v]
    res.attrs.update(warmup_epochs=p.warmup_epochs,
                     simulated="yes: declared device and workload model, not the testbed")
    return res


# ------------------------------------------------------------------------------------------ statistics


def _post(p, res):
    return res.isel(epoch=slice(p.warmup_epochs, None))


def all_tier(res: xr.Dataset) -> xr.Dataset:
    """Per-epoch all-tier series per direction: total IOPS and bytes/s, IO-weighted mean latency."""
    iops = res["iops"].sum("tier")
    bw = res["bytes_per_s"].sum("tier")
    latw = (res["latency_s"].fillna(0.0) * res["iops"]).sum("tier")
    lat = latw / iops.where(iops > 0)
    return xr.Dataset({"iops": iops, "bytes_per_s": bw, "latency_s": lat, "latency_weight": latw})


def io_weighted_latency(r: xr.Dataset) -> xr.DataArray:
    """Time mean of each tier x direction's latency, weighted by the IOs served (NaN where none were)."""
    n = r["iops"].sum("epoch")
    return (r["latency_s"].fillna(0.0) * r["iops"]).sum("epoch") / n.where(n > 0)


# ------------------------------------------------------------------------------------------ figures


def fig3(res: xr.Dataset) -> xr.Dataset:
    """Fig. 3: average throughput, bandwidth and normalized latency of all tiers over time (Rd, Wt):
    the all-tier mean per epoch (mean over seeds and its 95 % half-width). Latency is normalized per
    direction by the largest seed-mean value of any policy and epoch."""
    a = all_tier(res)
    n_t = res.sizes["tier"]
    out = {}
    for v, scale in (("iops", 1.0 / n_t), ("bytes_per_s", 1.0 / n_t), ("latency_s", 1.0)):
        m, hw = mean_ci(a[v].transpose("seed", ...).values * scale, axis=0)
        dims = [d for d in a[v].transpose("seed", ...).dims if d != "seed"]
        out[v] = (dims, m)
        out[v + "_ci95"] = (dims, hw)
    ds = xr.Dataset(out, coords={d: res[d] for d in ("policy", "epoch", "direction")})
    norm = ds["latency_s"].max(["policy", "epoch"])
    ds["normalized_latency"] = ds["latency_s"] / norm
    ds["normalized_latency_ci95"] = ds["latency_s_ci95"] / norm
    return ds


def fig4(p: AutoTieringExperimentParams, res: xr.Dataset) -> pd.DataFrame:
    """Fig. 4: time-mean IOPS, MB/s and IO-weighted latency of each tier x direction after warm-up, per
    policy (mean over seeds with the 95 % half-width)."""
    r = _post(p, res)
    iops = r["iops"].mean("epoch")
    bw = r["bytes_per_s"].mean("epoch") / MB
    lat = io_weighted_latency(r)
    rows = []
    for pol in res.policy.values:
        for t in res.tier.values:
            for d in res.direction.values:
                row = {"policy": pol, "tier": int(t), "direction": d}
                for name, da, unit in (("IOPS", iops, 1.0), ("MB/s", bw, 1.0), ("latency (µs)", lat, 1 / US)):
                    x = da.sel(policy=pol, tier=t, direction=d).values * unit
                    m, hw = mean_ci(x[np.isfinite(x)], axis=0) if np.isfinite(x).sum() > 1 else (np.nanmean(x), np.nan)
                    row[name] = float(m)
                    row[name + " ±95%"] = float(hw)
                rows.append(row)
    return pd.DataFrame(rows)


def fig5(p: AutoTieringExperimentParams, res: xr.Dataset) -> xr.Dataset:
    """Fig. 5: empirical CDF of the per-epoch all-tier total IOPS and MB/s (samples: seeds x post-warm-up
    epochs), per policy, on a common grid of quantiles."""
    a = all_tier(_post(p, res))
    q = np.linspace(0, 1, 101)
    tot_iops = a["iops"].sum("direction")
    tot_bw = a["bytes_per_s"].sum("direction") / MB
    data = {}
    for name, da in (("iops", tot_iops), ("mb_per_s", tot_bw)):
        vals = np.stack([np.quantile(da.sel(policy=pol).values.ravel(), q) for pol in res.policy.values])
        data[name] = (("policy", "quantile"), vals)
    return xr.Dataset(data, coords={"policy": res.policy.values, "quantile": q})


def fig6(res: xr.Dataset) -> xr.Dataset:
    """Fig. 6: per tier x direction series over epochs (mean over seeds) of IOPS, MB/s and latency, for
    stacked areas per policy."""
    return xr.Dataset({"iops": res["iops"].mean("seed"), "mb_per_s": res["bytes_per_s"].mean("seed") / MB,
                       "latency_us": res["latency_s"].mean("seed") / US})


def migration_totals(res: xr.Dataset) -> xr.Dataset:
    """Per policy and seed: total bytes copied and distinct VMs with at least one migration started
    ("multiple migrations on a single VM is counted as 1", Sec. V-D), and migrations started."""
    moved = res["moved_bytes"].sum(["epoch", "vmdk"])
    vm_moved = res["started"].any("epoch").groupby(res["vm"]).any().sum("vm")
    starts = res["started"].sum(["epoch", "vmdk"])
    return xr.Dataset({"moved_bytes": moved, "vms_migrated": vm_moved, "migrations": starts})


def fig7(res: xr.Dataset) -> pd.DataFrame:
    """Fig. 7: normalized total migrated data and number of migrated VMs (each policy's seed mean divided
    by the largest policy's), with 95 % half-widths on the same scale."""
    m = migration_totals(res)
    rows = []
    for v in ("moved_bytes", "vms_migrated", "migrations"):
        means = {pol: mean_ci(m[v].sel(policy=pol).values, axis=0) for pol in res.policy.values}
        top = max(mm for mm, _ in means.values())
        for pol, (mm, hw) in means.items():
            rows.append({"quantity": v, "policy": pol, "mean": float(mm), "±95%": float(hw),
                         "normalized": float(mm / top) if top > 0 else np.nan,
                         "normalized ±95%": float(hw / top) if top > 0 else np.nan})
    return pd.DataFrame(rows)


def tsscs_example(p: AutoTieringExperimentParams, res: xr.Dataset, seed: int = 0, epoch: int = 0,
                  n_show: int = 3) -> xr.Dataset:
    """Fig. 2: AutoTiering's TSSCS session of one epoch of one seed. For ``n_show`` busy data VMDKs (one per
    tier where possible): the probe samples at each injected latency, the fitted line ``y = m x + b``, the
    tiers' ``L_t`` (Table II ``tierLatency``, as AutoTiering measured it), the predicted latency on every tier
    (estimateAvgLat, A1.35) and the simulator's latency after actually moving the VMDK there (what-if solves
    of the same epoch: the truth AutoTiering never sees)."""
    r = res.sel(policy="AutoTiering").isel(seed=seed, epoch=epoch)
    tiers = af.tier_arrays(autotiering_tier_table(), p.datacenter.n_disks)
    sim = p.datacenter
    place = np.asarray(r["tier_of"].values)
    lam = np.asarray(res["offered_iops"].isel(seed=seed, epoch=epoch).values)
    rd = np.asarray(res["read_fraction"].isel(seed=seed, epoch=epoch).values)
    io = np.asarray(res["io_bytes"].isel(seed=seed).values)
    win = np.asarray(res["window"].isel(seed=seed).values)
    x_rw = np.asarray(r["vmdk_iops"].values)
    meas = af.Measured(tier=place, iops_rw=x_rw, bytes_rw=x_rw * io[:, None],
                       lat=np.asarray(r["vmdk_latency_s"].values),
                    size=np.asarray(res["size_bytes"].isel(seed=seed).values))
    lt = np.asarray(af.tier_latency(meas, tiers, p.policy.fallback_qd))
    mig = np.asarray(r["mig_util"].values)
    busy = np.flatnonzero(res["is_data"].values & (x_rw.sum(axis=1) > 100))
    chosen = []
    for t in range(3):
        on = [v for v in busy if place[v] == t]
        if on:
            chosen.append(on[0])
    chosen += [v for v in busy if v not in chosen][: max(0, n_show - len(chosen))]
    chosen = np.array(chosen[:n_show])
    truth = np.zeros((3, len(chosen)))
    for j, v in enumerate(chosen):       # a few what-if moves for the figure
        for t in range(3):
            pl = place.copy()
            pl[v] = t
            truth[t, j] = float(af.serve(tiers, sim, pl, lam, rd, io, win, mig).lat[v])
    pick = lambda name: r[name].isel(vmdk=chosen).values  # noqa: E731
    return xr.Dataset(
        {"samples_s": (("vmdk", "level", "sample"), pick("samples")), "slope": ("vmdk", pick("slope")),
         "intercept_s": ("vmdk", pick("intercept")), "conf": ("vmdk", pick("conf")),
         "host_tier": ("vmdk", place[chosen] + 1),
         "tier_latency_s": ("tier", lt), "predicted_s": (("tier", "vmdk"), r["pred_lat"].isel(vmdk=chosen).values),
         "true_s": (("tier", "vmdk"), truth)},
        coords={"vmdk": [str(x) for x in res["label"].values[chosen]], "level": res["level"].values, "tier": [1, 2, 3]})


# ------------------------------------------------------------------------------------------ claims


def per_seed_metrics(p: AutoTieringExperimentParams, res: xr.Dataset) -> dict:
    """Every per-seed number the claims use, as arrays over (policy, seed) or finer."""
    r = _post(p, res)
    a = all_tier(r)
    tot = a["iops"].sum("direction")                                        # (policy, seed, epoch)
    lat_dir = a["latency_weight"].sum("epoch") / a["iops"].sum("epoch")    # (policy, seed, direction)
    t_iops = r["iops"].mean("epoch")                                       # (policy, seed, tier, direction)
    t_bw = r["bytes_per_s"].mean("epoch")
    t_lat = io_weighted_latency(r)
    return dict(tot=tot, bw=a["bytes_per_s"].sum("direction"), lat_dir=lat_dir, t_iops=t_iops, t_bw=t_bw, t_lat=t_lat,
                mig=migration_totals(res))


def claim_values(p: AutoTieringExperimentParams, res: xr.Dataset,
                 example: xr.Dataset | None = None) -> dict[str, tuple[float, str]]:
    """``{claim_id: (value, note)}`` for :mod:`tieringlab.claims.autotiering` (definitions and tolerances
    there). ``example``: :func:`tsscs_example`'s Dataset, for C18's note."""
    from tieringlab.claims import autotiering as C  # noqa: PLC0415

    s = per_seed_metrics(p, res)
    out = {}
    n_seeds = res.sizes["seed"]
    at = "AutoTiering"

    def sel(da, pol, **kw):
        return np.asarray(da.sel(policy=pol, **kw).values)

    def each(da, scale=1.0, unit="", **kw):
        return "; ".join(f"{pol} {fmt_ci(sel(da, pol, **kw), scale, unit, axis=0)}" for pol in POLICIES)

    # C1, C2: per-epoch gain of the all-tier IOPS; "up to" = max over epochs; the mean gain with its interval
    per_dir = all_tier(_post(p, res))["iops"]
    for cid_up, cid_mean, base in ((C.C1_UP_TO, C.C1_MEAN, "IDT"), (C.C2_UP_TO, C.C2_MEAN, "EDT")):
        a_, b_ = sel(s["tot"], at), sel(s["tot"], base)                  # (seed, epoch)
        gain = 100 * (a_ - b_) / b_
        up, mean_gain = gain.max(axis=1), gain.mean(axis=1)
        m, hw = mean_ci(mean_gain, axis=0)
        rev = (100 * (b_ - a_) / a_).max(axis=1)       # the same statistic with the roles swapped: its noise floor
        d_up = {d: float(np.mean((100 * (sel(per_dir, at, direction=d) - sel(per_dir, base, direction=d))
                                  / sel(per_dir, base, direction=d)).max(axis=1))) for d in ("read", "write")}
        out[cid_up] = (float(np.mean(up)),
                       f"max over epochs {fmt_ci(up, unit=' %', axis=0)} (seeds); read {d_up['read']:.3g} %, write "
                       f"{d_up['write']:.3g} %; mean gain {m:.3g} ± {hw:.2g} %; the same 'up to' with {base} over AT: "
                       f"{np.mean(rev):.3g} %")
        out[cid_mean] = (float(m - hw), f"mean over epochs {m:.3g} ± {hw:.2g} % over {n_seeds} seeds; "
                                        f"{int(np.sum(mean_gain > 0))}/{n_seeds} seeds > 0")

    # C3: all-tier bandwidth (time mean); C4: IO-weighted all-tier latency, read and write
    bw_mean = s["bw"].mean("epoch")
    out[C.C3] = (100 * min(relative_separation(sel(bw_mean, at), sel(bw_mean, b), True, axis=0) for b in BASELINES),
                 each(bw_mean, 1 / MB, " MB/s"))
    out[C.C4] = (100 * min(relative_separation(sel(s["lat_dir"], at, direction=d), sel(s["lat_dir"], b, direction=d),
                                               False, axis=0)
                           for b in BASELINES for d in ("read", "write")),
                 " | ".join(f"{d}: " + each(s["lat_dir"], 1 / US, " µs", direction=d) for d in ("read", "write")))

    # C5: tier 1, 3 quantities x 2 directions x 2 baselines with separated intervals
    failed = [f"T1 {d} {name} vs {b}"
              for name, da, higher in (("IOPS", s["t_iops"], True), ("MB/s", s["t_bw"], True),
                                       ("latency", s["t_lat"], False))
              for d in ("read", "write") for b in BASELINES
              if not relative_separation(sel(da, at, tier=1, direction=d), sel(da, b, tier=1, direction=d), higher,
                                         axis=0) > 0]
    out[C.C5] = (12 - len(failed), "not separated: " + (", ".join(failed) if failed else "none"))
    # C6: a baseline's interval above AT's in some T2/T3 x direction x {IOPS, MB/s} cell
    cells = [f"T{t} {d} {name}: {b} > AT"
             for name, da in (("IOPS", s["t_iops"]), ("MB/s", s["t_bw"])) for t in (2, 3) for d in ("read", "write")
             for b in BASELINES
             if relative_separation(sel(da, b, tier=t, direction=d), sel(da, at, tier=t, direction=d), True,
                                    axis=0) > 0]
    out[C.C6] = (len(cells), "; ".join(cells) if cells else "no cell where a baseline's interval lies above AT's")
    # C7: EDT > AT on T3 write IOPS
    e3, a3 = (sel(s["t_iops"], pol, tier=3, direction="write") for pol in ("EDT", at))
    out[C.C7] = (100 * relative_separation(e3, a3, True, axis=0),
                 f"T3 write IOPS: EDT {fmt_ci(e3, axis=0)}, AT {fmt_ci(a3, axis=0)}; "
                 f"EDT/AT = {np.mean(e3) / np.mean(a3):.3g}")
    # C8: lowest latency in every cell but T2 write, and not the lowest there
    ok, notes = 0, []
    for t in (1, 2, 3):
        for d in ("read", "write"):
            at_l = sel(s["t_lat"], at, tier=t, direction=d)
            if (t, d) == (2, "write"):
                lowest = all(np.nanmean(at_l) <= np.nanmean(sel(s["t_lat"], b, tier=t, direction=d)) for b in BASELINES)
                ok += int(not lowest)
                notes.append(f"T2 write: AT {'is' if lowest else 'is not'} the lowest")
            elif all(relative_separation(at_l, sel(s["t_lat"], b, tier=t, direction=d), False, axis=0) > 0
                     for b in BASELINES):
                ok += 1
            else:
                notes.append(f"T{t} {d}: AT not separated below both")
    out[C.C8] = (ok, "; ".join(notes))

    # C9-C11 on the pooled post-warm-up samples, scale-free; the literal thresholds in the notes
    tot = {pol: sel(s["tot"], pol).ravel() for pol in POLICIES}
    bw = {pol: sel(s["bw"], pol).ravel() / MB for pol in POLICIES}
    med, p90 = np.median(tot[at]), {b: np.quantile(tot[b], 0.9) for b in BASELINES}
    out[C.C9] = (100 * min((med - p90[b]) / p90[b] for b in BASELINES),
                 f"AT median {med / 1e3:.4g}K IOPS; 90th percentiles IDT {p90['IDT'] / 1e3:.4g}K, EDT "
                 f"{p90['EDT'] / 1e3:.4g}K. Literal: P(AT > 100K) = {np.mean(tot[at] > 100e3):.2f}, "
                 f"AT median >= 125K: {med >= 125e3}")
    below = {b: float(np.mean(tot[b] < med)) for b in BASELINES}
    out[C.C10] = (min(below.values()), f"P(baseline < AT median): IDT {below['IDT']:.2f}, EDT {below['EDT']:.2f}. "
                                       f"Literal P(< 100K): IDT {np.mean(tot['IDT'] < 100e3):.2f}, "
                                       f"EDT {np.mean(tot['EDT'] < 100e3):.2f}")
    med_bw, p90bw = np.median(bw[at]), {b: np.quantile(bw[b], 0.9) for b in BASELINES}
    out[C.C11] = (100 * min((med_bw - p90bw[b]) / p90bw[b] for b in BASELINES),
                  f"AT median {med_bw:.4g} MB/s; 90th percentiles IDT {p90bw['IDT']:.4g}, EDT {p90bw['EDT']:.4g}. "
                  f"Literal: P(< 1200 MB/s) IDT {np.mean(bw['IDT'] < 1200):.2f}, EDT {np.mean(bw['EDT'] < 1200):.2f}; "
                  f"P(AT > 1200) {np.mean(bw[at] > 1200):.2f}")

    # C12: areas over time (post warm-up)
    areas = {"IOPS": s["tot"].sum("epoch"), "MB/s": s["bw"].sum("epoch")}
    n_sep = sum(relative_separation(sel(da, at), sel(da, b), True, axis=0) > 0
                for da in areas.values() for b in BASELINES)
    out[C.C12_AREAS] = (n_sep, "; ".join(f"{k} area AT/{b} {np.mean(sel(da, at)) / np.mean(sel(da, b)):.3g}"
                                         for k, da in areas.items() for b in BASELINES))
    lat_area = _post(p, res)["latency_s"].fillna(0.0).sum(["epoch", "tier", "direction"])
    ratios = {b: float(np.mean(sel(lat_area, at)) / np.mean(sel(lat_area, b))) for b in BASELINES}
    out[C.C12_LATENCY] = (max(ratios.values()), f"AT latency area / IDT {ratios['IDT']:.3g}, / EDT {ratios['EDT']:.3g}")
    # C13: first AT migration at the first migration epoch; more even per-tier IOPS shares after warm-up
    every = p.epochs.every
    started_at = res["started"].sel(policy=at).any("vmdk").values                   # (seed, epoch)
    first = np.where(started_at.any(axis=1), np.argmax(started_at, axis=1), -1)
    share = s["t_iops"].sum("direction") / s["t_iops"].sum(["direction", "tier"])
    min_share = share.min("tier")
    n_even = sum(relative_separation(sel(min_share, at), sel(min_share, b), True, axis=0) > 0 for b in BASELINES)
    out[C.C13] = (int(np.all(first == every - 1)) + n_even,
                  f"first AT migration decided at the end of epoch {sorted(set(first.tolist()))} (expected {every - 1})"
                  f"; smallest per-tier IOPS share: " + each(min_share))
    # C14: tier 3 holds the largest share of AT's latency area
    lat_t = _post(p, res)["latency_s"].sel(policy=at).fillna(0.0).sum(["epoch", "direction"])    # (seed, tier)
    sh = lat_t / lat_t.sum("tier")
    out[C.C14] = (float(np.mean(sh.argmax("tier").values == 2)), "AT latency-area share per tier: " + ", ".join(
        f"T{t} {fmt_ci(sh.sel(tier=t).values, axis=0)}" for t in (1, 2, 3)))
    # C15: after warm-up, AT's T3 VMDKs have a higher mean read fraction and size than its T1+T2 VMDKs
    r = _post(p, res)
    on3 = r["tier_of"].sel(policy=at) == 2                                          # (seed, epoch, vmdk)

    def mean_on(x, mask):
        return (x * mask).sum(["epoch", "vmdk"]) / mask.sum(["epoch", "vmdk"])

    rf3, rf12 = mean_on(r["read_fraction"], on3), mean_on(r["read_fraction"], ~on3)
    sz3, sz12 = mean_on(res["size_bytes"], on3), mean_on(res["size_bytes"], ~on3)
    both = (rf3 > rf12).values & (sz3 > sz12).values
    out[C.C15] = (float(np.mean(both)),
                  f"T3 vs T1+T2: read fraction {fmt_ci(rf3.values, axis=0)} vs {fmt_ci(rf12.values, axis=0)}; size "
                  f"{fmt_ci(sz3.values, 1 / GB, ' GB', axis=0)} vs {fmt_ci(sz12.values, 1 / GB, ' GB', axis=0)}")
    # C16, C17: migration totals
    mig = s["mig"]
    for cid, v, scale, unit in ((C.C16, "moved_bytes", 1 / GB, " GB"), (C.C17, "vms_migrated", 1.0, " VMs")):
        out[cid] = (100 * min(relative_separation(sel(mig[v], at), sel(mig[v], b), False, axis=0) for b in BASELINES),
                    each(mig[v], scale, unit))
    # C18 (sanity): linearity of the TSSCS lines, and the prediction error after real moves
    err = prediction_errors(res)
    note = (f"mean R² of the per-VMDK lines over post-warm-up epochs; |predicted - measured| / measured latency "
            f"on the destination after {err.size} completed AT moves: median "
            f"{100 * np.median(err) if err.size else np.nan:.3g} %")
    if example is not None:
        e = np.abs(example["predicted_s"] - example["true_s"]) / example["true_s"]
        note += f"; Fig. 2 example, predicted vs true on every tier: median error {100 * float(np.median(e)):.3g} %"
    out[C.C18] = (float(res["r2"].sel(policy=at).isel(epoch=slice(p.warmup_epochs, None)).mean()), note)
    return out


def prediction_errors(res: xr.Dataset) -> np.ndarray:
    """|estimateAvgLat on the destination at decision time - the latency measured there in the first epoch
    after the copy completed| / measured, for every completed AutoTiering move (all seeds)."""
    at_ = res.sel(policy="AutoTiering")
    started = at_["started"].values          # (seed, epoch, vmdk)
    dst = at_["dst"].values
    tier_of = at_["tier_of"].values
    pred = at_["pred_lat"].values            # (seed, epoch, tier, vmdk)
    lat = at_["vmdk_latency_s"].values
    s_i, e_i, v_i = np.nonzero(started)
    errs = []
    for s, e, v in zip(s_i, e_i, v_i):      # a loop over the (few hundred) moves, for a diagnostic
        d = dst[s, e, v]
        later = np.flatnonzero(tier_of[s, e + 1:, v] == d)
        if later.size and lat[s, e + 1 + later[0], v] > 0:
            meas = lat[s, e + 1 + later[0], v]
            errs.append(abs(pred[s, e, d, v] - meas) / meas)
    return np.asarray(errs)


# ------------------------------------------------------------------------------------------ sensitivity


def sensitivity(p: AutoTieringExperimentParams, key, base_values: dict | None = None) -> pd.DataFrame:
    """The claims' verdicts under each reading of :data:`READINGS` named in ``p.sensitivity``, beside the default
    (same seeds and key; ``base_values``: the default reading's :func:`claim_values`, when already computed).
    Returns one row per (claim, reading): value, verdict and whether it flips against the default's."""
    from tieringlab.claims import autotiering as C  # noqa: PLC0415

    chosen = [_BY_NAME[name] for name in p.sensitivity if name != "none"]
    values = {readings.DEFAULT.name: base_values} if base_values is not None else {}
    values.update(readings.run_each(chosen if base_values is not None else (readings.DEFAULT, *chosen), p,
                                    lambda q: claim_values(q, run(q, key))))
    rows = []
    for c in C.CLAIMS:
        value = {rd: vals.get(c.id, (None, ""))[0] for rd, vals in values.items()}
        by_reading = readings.verdicts(c, value)
        flipped = set(readings.flips(by_reading))
        rows += [{"claim": c.id, "reading": rd, "value": v, "verdict": by_reading[rd], "flips": rd in flipped}
                 for rd, v in value.items()]
    return pd.DataFrame(rows)
