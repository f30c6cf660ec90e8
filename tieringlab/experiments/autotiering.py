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
Intervals are 95 % Student-t intervals over seeds (:mod:`tieringlab.stats`); the three policies share scenarios and
seeds, so their comparisons are paired per seed (:func:`paired_gap_lo`). Epochs before ``warmup_epochs`` (the
paper's "warming up periods from 0-3 epochs", Sec. V-C) are left out of every comparison. The ledger's
preconditions (:func:`precondition_values`: copies that end within the warm-up, :func:`copy_stats`; the spread of the
fitted TSSCS slopes, :func:`slope_spread`; tiers not all saturated, :func:`all_saturated_share`; C1/C2's "up to"
against its noise floor, :func:`up_to_noise_floor`) are measured on the same runs, under every reading.

**The scenario** (issue 29: chosen from the paper and the notes before any policy ran in it; a placement policy
can matter only where its decisions take effect and where VMDKs differ in what a faster tier gives them):

- *Offered load the tiers can serve.* Table V's rates sum to about 1.8x the device time of the tiers pooled into
  one device (and to 499K IOPS against Fig. 5's 100-150K totals: they cannot all be offered at once). Every rate is
  scaled by one factor to 70 % of the pooled device time (``workload.pooled_utilisation``); Table V as printed is
  the ``load_table_v`` reading (the overload the runs of issue 28 were in).
- *Copies compete as IO streams.* A storage live migration is a sequential IO stream beside the VMDKs' own; on a
  busy tier it gets its max-min fair share of device time (``datacenter.mig_share = "fair"``), not a 5 % floor
  (the ``copy_floor`` reading).
- *Epochs from the paper's context.* The paper prints no epoch length; the only time scale near it is its
  related work's "periodically recompute VM assignments in every few hours" (Sec. II, [14]): migration every 3 h,
  monitoring every hour (migrationEpoch = 3 monitorEpochs keeps the first migration at epoch 3, Fig. 6's "warm-up
  0-3"). 5/15 min (the earlier default) and 20/60 min are the ``epochs_5min`` and ``epochs_20min`` readings.
- *Burn-in instead of a saturated start.* The seeded random initial placement (notes 6.1, the same for every
  policy) is undone in the first decision round by every policy; the migration cost of Fig. 7 (C16, C17) is counted
  after the warm-up (epochs 0-3, the paper's own warm-up), so it measures the policies' steady migrations, not the
  random start (the whole run is in the notes).
- *Tier sensitivity that exists.* With closed-loop sources a VMDK's latency grows exactly by what is injected (TSSCS
  slope 1 for every VMDK that is not held): no VMDK gains more from a faster tier than another, against Fig. 2's
  premise (Sec. IV-2: "VMs ... have varying performance sensitivity to the tier"). The sources are open
  (``datacenter.source = "open"``, notes 6.5's variant): the application offers its rate and IOs wait in a guest
  queue, so a VMDK that fills its window gains more. ``tsscs_closed_loop`` is the reading.
- *Predictions below the device.* A TSSCS line extrapolated to a faster tier can fall below the tier's unloaded
  latency, even to <= 0 (A1.26-29 then give 0 IOPS: "much faster" scored as "no throughput"); it is raised to the
  tier's unloaded datasheet latency (``policy.lat_floor``; ``lat_floor_zero`` is A1.26-29 as printed), and the
  shares are in C18's note. ``maxp_mixed``: Eq. 5's maxP/maxB at each VMDK's read/write mix instead of the read
  direction.

Other documented choices (the paper is silent; reading notes ``autotiering.md`` Sec. 6; each is a parameter):

1. 2 disks per tier; datasheet IOPS at queue depth 32; utilisation cap 0.98 (``models.allflash``).
2. 60 monitor epochs.
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
from tieringlab.stats import beats_noise_floor, fmt_ci, mean_ci, paired_diff, paired_gap_pct
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
    Reading("epochs_5min", {"epochs.monitor_epoch_s": 300.0, "epochs.migration_epoch_s": 900.0},
            "5-minute monitor and 15-minute migration epochs (notes 6.1; the epochs are not printed)"),
    Reading("epochs_20min", {"epochs.monitor_epoch_s": 1200.0, "epochs.migration_epoch_s": 3600.0},
            "20-minute monitor and hourly migration epochs"),
    Reading("load_table_v", {"workload.pooled_utilisation": None},
            "Table V's rates as printed: about 1.8x what the pooled tiers serve (overload)"),
    Reading("copy_floor", {"datacenter.mig_share": "floor"},
            "a copy gets the time the VMDKs leave idle but at least 5 % of a tier (notes 6.5), not a fair share"),
    Reading("tsscs_closed_loop", {"datacenter.source": "closed"},
            "closed-loop sources: latency = device latency, TSSCS slope 1 (notes 6.5's default model)"),
    Reading("lat_floor_zero", {"policy.lat_floor": "zero"},
            "A1.26-29 as printed: a predicted latency <= 0 gives 0 IOPS, no floor"),
    Reading("maxp_mixed", {"policy.max_mix": "mixed"},
            "maxP and maxB at each VMDK's read/write mix instead of the read direction (notes 6.2 item 9)"),
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
    epochs: TieringEpochs = param(TieringEpochs(3600.0, 10800.0), "the monitor and migration epochs and Eq. 5's "
                                  "Gamma that AutoTiering, IDT and EDT all decide on (one value for the three): "
                                  "monitor hourly, migrate every 3 h (Sec. II: its related work [14] recomputes VM "
                                  "assignments 'in every few hours'; no epoch length printed)")
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


def migration_totals(res: xr.Dataset, from_epoch: int = 0) -> xr.Dataset:
    """Per policy and seed, over the migrations decided from epoch ``from_epoch`` on: the data they copy (each copies
    its whole VMDK; a copy still running at the end counts in full), distinct VMs with at least one of them
    ("multiple migrations on a single VM is counted as 1", Sec. V-D), and migrations started."""
    started = res["started"].isel(epoch=slice(from_epoch, None))
    moved = (res["size_bytes"] * started).sum(["epoch", "vmdk"])
    vm_moved = started.any("epoch").groupby(res["vm"]).any().sum("vm")
    starts = started.sum(["epoch", "vmdk"])
    return xr.Dataset({"moved_bytes": moved, "vms_migrated": vm_moved, "migrations": starts})


def fig7(res: xr.Dataset, from_epoch: int = 0) -> pd.DataFrame:
    """Fig. 7: normalized total migrated data and number of migrated VMs (each policy's seed mean divided
    by the largest policy's), with 95 % half-widths on the same scale; migrations decided from epoch
    ``from_epoch`` on (:func:`migration_totals`)."""
    m = migration_totals(res, from_epoch)
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


# ------------------------------------------------------------------------------------------ preconditions


def copy_in_flight(tier_of, dst) -> np.ndarray:
    """Whether a VMDK's copy is in flight during each epoch: ``tier_of`` / ``dst`` ``(..., epoch, vmdk)`` as the run
    records them (the tier serving the VMDK in the epoch; its destination after the epoch's decision). A copy is in
    flight in epoch ``e`` exactly when the destination set at the end of ``e - 1`` is not the tier serving in ``e``
    (a copy that ends switches tier at the end of the epoch it ends in; none is in flight in epoch 0)."""
    tier_of, dst = np.asarray(tier_of), np.asarray(dst)
    out = np.zeros(tier_of.shape, bool)
    out[..., 1:, :] = dst[..., :-1, :] != tier_of[..., 1:, :]
    return out


def copy_durations(started, tier_of, dst) -> tuple[np.ndarray, np.ndarray]:
    """The copies of one run (``(epoch, vmdk)`` arrays): ``(start, epochs)``, the epoch at whose end each copy was
    decided and the monitor epochs it took (it serves from the source meanwhile; 1 = ended in the next epoch), ``inf``
    for a copy that had not ended when the run did. Ordered by (epoch, vmdk)."""
    started, tier_of, dst = np.asarray(started, bool), np.asarray(tier_of), np.asarray(dst)
    s_i, v_i = np.nonzero(started)
    epochs = np.full(s_i.shape, np.inf)
    for k, (s, v) in enumerate(zip(s_i, v_i)):   # a loop over the copies (a few hundred per run), for a diagnostic
        later = np.flatnonzero(tier_of[s + 1:, v] == dst[s, v])
        if later.size:
            epochs[k] = float(later[0])
    return s_i, epochs


def copy_stats(p: AutoTieringExperimentParams, res: xr.Dataset, within: int | None = None) -> xr.Dataset:
    """Per policy and seed: copies started, those that had not ended by the end of the run, those started at least
    ``within + 1`` epochs before the end (``eligible``: they could be seen ending within ``within`` epochs) and of
    those the ones that did (``finished_within``); the median and 90th percentile copy duration in monitor epochs
    (unfinished copies count as infinitely long, so these are lower bounds when many are unfinished), and the share
    of post-warm-up VMDK-epochs with a copy in flight; per policy, the same quantiles pooled over seeds
    (``pooled_*``). ``within``: default the ledger's ``COPY_WITHIN_EPOCHS``."""
    from tieringlab.claims import autotiering as C  # noqa: PLC0415

    within = C.COPY_WITHIN_EPOCHS if within is None else within
    n_e = res.sizes["epoch"]
    pols, seeds = list(res.policy.values), list(res.seed.values)
    names = ("copies", "unfinished", "eligible", "finished_within", "median_epochs", "p90_epochs", "in_flight_share")
    data = {k: np.zeros((len(pols), len(seeds))) for k in names}
    pooled = np.full((2, len(pols)), np.nan)
    for i, pol in enumerate(pols):
        r = res.sel(policy=pol)
        tier_of, dst, started = (r[v].transpose("seed", "epoch", "vmdk").values for v in ("tier_of", "dst", "started"))
        flight = copy_in_flight(tier_of, dst)[:, p.warmup_epochs:, :]
        all_ep = []
        for j in range(len(seeds)):
            start, ep = copy_durations(started[j], tier_of[j], dst[j])
            all_ep.append(ep)
            ok = start + within + 1 <= n_e - 1
            data["copies"][i, j] = start.size
            data["unfinished"][i, j] = np.sum(~np.isfinite(ep))
            data["eligible"][i, j] = ok.sum()
            data["finished_within"][i, j] = np.sum(ep[ok] <= within)
            data["median_epochs"][i, j] = np.median(ep) if ep.size else np.nan
            data["p90_epochs"][i, j] = np.quantile(ep, 0.9, method="higher") if ep.size else np.nan
            data["in_flight_share"][i, j] = flight[j].mean()
        ep = np.concatenate(all_ep)
        if ep.size:
            pooled[:, i] = np.median(ep), np.quantile(ep, 0.9, method="higher")
    out = {k: (("policy", "seed"), v) for k, v in data.items()}
    out.update(pooled_median_epochs=("policy", pooled[0]), pooled_p90_epochs=("policy", pooled[1]))
    return xr.Dataset(out, coords={"policy": pols, "seed": seeds}, attrs={"within_epochs": within})


def copy_table(p: AutoTieringExperimentParams, res: xr.Dataset) -> pd.DataFrame:
    """:func:`copy_stats` per policy, pooled over seeds: copies, unfinished, the share finishing within the warm-up
    (of those that could), the pooled median and 90th percentile copy duration (monitor epochs; inf: not ended by the
    end of the run) and the share of post-warm-up VMDK-epochs with a copy in flight."""
    st = copy_stats(p, res)
    rows = []
    for pol in st.policy.values:
        c = st.sel(policy=pol)
        elig = float(c["eligible"].sum())
        rows.append({"policy": str(pol), "copies": int(c["copies"].sum()), "unfinished": int(c["unfinished"].sum()),
                     f"finished within {st.attrs['within_epochs']} epochs":
                         float(c["finished_within"].sum()) / elig if elig else np.nan,
                     "median copy (epochs)": float(c["pooled_median_epochs"]),
                     "p90 copy (epochs)": float(c["pooled_p90_epochs"]),
                     "in-flight share (post warm-up)": float(c["in_flight_share"].mean())})
    return pd.DataFrame(rows)


def copy_duration_counts(p: AutoTieringExperimentParams, res: xr.Dataset, longest: int = 6) -> pd.DataFrame:
    """Copies per policy (all seeds) by duration in monitor epochs (:func:`copy_durations`): ``1`` .. ``longest``,
    ``> longest`` (ended later) and ``not ended`` (still running when the run ended)."""
    labels = [str(k) for k in range(1, longest + 1)] + [f"> {longest}", "not ended"]
    rows = []
    for pol in res.policy.values:
        r = res.sel(policy=pol)
        tier_of, dst, started = (r[v].transpose("seed", "epoch", "vmdk").values for v in ("tier_of", "dst", "started"))
        ep = np.concatenate([copy_durations(started[j], tier_of[j], dst[j])[1] for j in range(tier_of.shape[0])])
        counts = [int(np.sum(ep == k)) for k in range(1, longest + 1)]
        counts += [int(np.sum(np.isfinite(ep) & (ep > longest))), int(np.sum(~np.isfinite(ep)))]
        rows += [{"policy": str(pol), "copy (monitor epochs)": lab, "copies": c} for lab, c in zip(labels, counts)]
    return pd.DataFrame(rows)


def in_flight_series(res: xr.Dataset) -> xr.DataArray:
    """Per policy and epoch: the share of VMDK-epochs (all seeds) with a copy in flight (:func:`copy_in_flight`)."""
    out = [copy_in_flight(res["tier_of"].sel(policy=pol).transpose("seed", "epoch", "vmdk").values,
                          res["dst"].sel(policy=pol).transpose("seed", "epoch", "vmdk").values).mean(axis=(0, 2))
           for pol in res.policy.values]
    return xr.DataArray(np.stack(out), dims=("policy", "epoch"),
                        coords={"policy": res.policy.values, "epoch": res.epoch.values})


def slope_table(p: AutoTieringExperimentParams, res: xr.Dataset) -> pd.DataFrame:
    """Each data VMDK's fitted TSSCS slope ``m`` (A1.20) under AutoTiering: the median over its post-warm-up epochs,
    then the median, 10th and 90th percentile of that over seeds, with its window and mean offered rate (what makes
    an open source sensitive: ``lam L / q``)."""
    data = np.flatnonzero(res["is_data"].values)
    m = _post(p, res)["slope"].sel(policy="AutoTiering").isel(vmdk=data).median("epoch")       # (seed, vmdk)
    lam = res["offered_iops"].isel(vmdk=data).mean("epoch")
    return pd.DataFrame({"workload": res["workload"].values[data],
                         "slope m (median over seeds)": m.median("seed").values,
                         "p10 over seeds": m.quantile(0.1, "seed").values,
                         "p90 over seeds": m.quantile(0.9, "seed").values,
                         "window q": np.asarray(res["window"].isel(vmdk=data).values).reshape(-1, data.size)[0],
                         "offered IOPS (mean)": np.asarray(lam.values).reshape(-1, data.size).mean(axis=0)})


def flips_per_reading(sens: pd.DataFrame) -> pd.DataFrame:
    """From :func:`sensitivity_table`: per non-default reading, how many ledger rows' verdicts flip against the
    default's (claims and preconditions separately), most flips first, with the rows that flip."""
    rows = []
    for rd, g in sens[sens.reading != readings.DEFAULT.name].groupby("reading", sort=False):
        f = g[g.flips]
        rows.append({"reading": rd, "claims flipped": int((f.kind != "precondition").sum()),
                     "preconditions flipped": int((f.kind == "precondition").sum()),
                     "rows": ", ".join(c.split(".", 1)[1] for c in f.claim)})
    df = pd.DataFrame(rows, columns=["reading", "claims flipped", "preconditions flipped", "rows"])
    return df.sort_values(["claims flipped", "preconditions flipped"], ascending=False, kind="stable")


def slope_spread(p: AutoTieringExperimentParams, res: xr.Dataset) -> np.ndarray:
    """Per seed: the 90th minus the 10th percentile, across the data VMDKs, of each VMDK's median fitted TSSCS slope
    ``m`` (A1.20) over AutoTiering's post-warm-up epochs."""
    m = _post(p, res)["slope"].sel(policy="AutoTiering").isel(vmdk=np.flatnonzero(res["is_data"].values))
    med = m.median("epoch").transpose("seed", "vmdk").values
    return np.quantile(med, 0.9, axis=1) - np.quantile(med, 0.1, axis=1)


def offered_utilisation(p: AutoTieringExperimentParams, res: xr.Dataset) -> xr.DataArray:
    """Per policy, seed, epoch and tier: the device time the VMDKs the tier serves offer it (offered IO/s x device
    time per IO at the VMDK's read/write mix, :func:`tieringlab.models.allflash.device_time`), per disk: a tier with
    ``>= rho_max`` cannot serve what it is offered."""
    tiers = af.tier_arrays(autotiering_tier_table(), p.datacenter.n_disks)
    io = res["io_bytes"].transpose("seed", "vmdk").values
    u = np.stack([np.asarray(af.device_time(tiers, io[s])) for s in range(io.shape[0])])    # (S, T, 2, V)
    f = res["read_fraction"].transpose("seed", "epoch", "vmdk").values[:, :, None, :]          # (S, E, 1, V)
    u_mix = f * u[:, None, :, 0, :] + (1.0 - f) * u[:, None, :, 1, :]                         # (S, E, T, V)
    lam = res["offered_iops"].transpose("seed", "epoch", "vmdk").values[:, :, None, :]
    n_t = u.shape[1]
    nd = np.asarray(tiers.n_disks, float)
    out = []
    for pol in res.policy.values:
        tier_of = res["tier_of"].sel(policy=pol).transpose("seed", "epoch", "vmdk").values
        oh = tier_of[:, :, None, :] == np.arange(n_t)[None, None, :, None]
        out.append((oh * lam * u_mix).sum(-1) / nd)
    return xr.DataArray(np.stack(out), dims=("policy", "seed", "epoch", "tier"),
                        coords={"policy": res.policy.values, "seed": res.seed.values, "epoch": res.epoch.values,
                                "tier": res.tier.values})


def all_saturated_share(p: AutoTieringExperimentParams, res: xr.Dataset) -> xr.DataArray:
    """Per policy and seed: the share of post-warm-up epochs in which every tier is offered at least ``rho_max`` of
    its device time (:func:`offered_utilisation`)."""
    rho = offered_utilisation(p, res).isel(epoch=slice(p.warmup_epochs, None))
    return (rho >= p.datacenter.rho_max).all("tier").mean("epoch")


def up_to_noise_floor(p: AutoTieringExperimentParams, res: xr.Dataset, base: str) -> tuple[bool, dict[str, float]]:
    """:func:`tieringlab.stats.beats_noise_floor` of AutoTiering's post-warm-up all-tier IOPS over ``base``'s:
    conditions = epochs, replications = seeds (paired: the same scenario per seed)."""
    tot = all_tier(_post(p, res))["iops"].sum("direction")
    a, b = (tot.sel(policy=pol).transpose("epoch", "seed").values for pol in ("AutoTiering", base))
    return beats_noise_floor(a, b)


def precondition_values(p: AutoTieringExperimentParams, res: xr.Dataset) -> dict[str, tuple]:
    """``{precondition id: (value, note, per-seed samples)}`` for the ``autotiering.pre.*`` rows of
    :mod:`tieringlab.claims.autotiering` (definitions, thresholds and reasons there)."""
    from tieringlab.claims import autotiering as C  # noqa: PLC0415

    out = {}
    st = copy_stats(p, res)
    # copies finish within the warm-up: the smallest share over the policies that had copies to judge
    elig = st["eligible"].sum("seed")
    share = st["finished_within"].sum("seed") / elig.where(elig > 0)
    per_pol = "; ".join(
        f"{pol}: {int(st['finished_within'].sel(policy=pol).sum())}/{int(elig.sel(policy=pol))} within "
        f"{C.COPY_WITHIN_EPOCHS} epochs, {int(st['unfinished'].sel(policy=pol).sum())} of "
        f"{int(st['copies'].sel(policy=pol).sum())} unfinished at the end of the run, copy duration median "
        f"{float(st['pooled_median_epochs'].sel(policy=pol)):.3g} / p90 "
        f"{float(st['pooled_p90_epochs'].sel(policy=pol)):.3g} monitor epochs (inf: not ended)"
        for pol in st.policy.values)
    if bool((elig > 0).any()):
        worst = str(share.idxmin().values)
        e_w = st["eligible"].sel(policy=worst).values
        per_seed = np.where(e_w > 0, st["finished_within"].sel(policy=worst).values / np.maximum(e_w, 1), np.nan)
        out[C.PRE_COPIES_FINISH] = (float(share.min()), f"worst {worst}. {per_pol}", per_seed)
    else:
        out[C.PRE_COPIES_FINISH] = (None, f"no copy could be judged (none started early enough). {per_pol}", None)
    # AutoTiering's copies in flight after the warm-up
    fl = st["in_flight_share"]
    out[C.PRE_IN_FLIGHT] = (float(fl.sel(policy="AutoTiering").mean()),
                            "post-warm-up VMDK-epochs with a copy in flight: " + "; ".join(
                                f"{pol} {fmt_ci(fl.sel(policy=pol).values)}" for pol in fl.policy.values),
                            fl.sel(policy="AutoTiering").values)
    # tier sensitivity: spread of the fitted slopes
    spread = slope_spread(p, res)
    m = _post(p, res)["slope"].sel(policy="AutoTiering").isel(vmdk=np.flatnonzero(res["is_data"].values))
    med = m.median("epoch").values.ravel()
    out[C.PRE_SLOPE_SPREAD] = (float(np.mean(spread)),
                               f"per seed {fmt_ci(spread)}; per-VMDK median slopes (all seeds) range "
                               f"{np.min(med):.3g} to {np.max(med):.3g}, "
                               f"{np.mean(np.abs(med - 1) <= 0.1):.0%} within 1 ± 0.1", spread)
    # tiers not all saturated
    sat = all_saturated_share(p, res)
    worst = str(sat.mean("seed").idxmax().values)
    rho = offered_utilisation(p, res).isel(epoch=slice(p.warmup_epochs, None))
    r = _post(p, res)
    offered = r["offered_iops"].sum("vmdk").mean(["seed", "epoch"])
    served = r["vmdk_iops"].sum(["vmdk", "direction"]).mean(["seed", "epoch"])
    out[C.PRE_NOT_SATURATED] = (
        float(sat.sel(policy=worst).mean()),
        f"worst {worst}; all tiers saturated in: " + ", ".join(f"{pol} {float(sat.sel(policy=pol).mean()):.2f}"
                                                               for pol in sat.policy.values)
        + "; mean offered utilisation per tier (T1, T2, T3): " + "; ".join(
            f"{pol} ({', '.join(f'{x:.2f}' for x in rho.sel(policy=pol).mean(['seed', 'epoch']).values)})"
            for pol in rho.policy.values)
        + "; offered / served all-tier IOPS: " + ", ".join(
            f"{pol} {float(offered / served.sel(policy=pol)):.3g}" for pol in served.policy.values)
        + f" (rho_max {p.datacenter.rho_max:g})",
        sat.sel(policy=worst).values)
    # C1/C2: the best-case gain against its reverse and its paired sign-flip null
    for cid, base in ((C.PRE_C1_FLOOR, "IDT"), (C.PRE_C2_FLOOR, "EDT")):
        ok, v = up_to_noise_floor(p, res, base)
        out[cid] = (ok, f"max over post-warm-up epochs of the seed-mean gain: forward (AT over {base}) "
                        f"{v['forward']:.3g} %, reverse ({base} over AT) {v['reverse']:.3g} %, paired sign-flip null "
                        f"q95 {v['null_q95']:.3g} % ({res.sizes['seed']} seeds); margin forward - max(reverse, null) "
                        f"{v['forward'] - max(v['reverse'], v['null_q95']):.3g} %", None)
    return out


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
                mig=migration_totals(res, p.warmup_epochs))


def paired_gap_lo(a, b, higher: bool = True) -> float:
    """The end, on the claimed side, of the 95 % interval of the paired per-seed relative gap of ``a`` against ``b``
    (%): ``100 (a - b) / b`` when ``a`` should be higher, ``100 (b - a) / b`` when lower (> 0: the paired test puts
    ``a`` ahead). Seeds where either value is not finite or ``b`` is 0 are left out; NaN with fewer than 2 left."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    ok = np.isfinite(a) & np.isfinite(b) & (b != 0)
    if ok.sum() < 2:
        return float("nan")
    m, h = paired_gap_pct(a[ok], b[ok])
    return m - h if higher else -m - h


def paired_diff_lo(a, b, higher: bool = True) -> float:
    """As :func:`paired_gap_lo` for quantities that may be 0 in a seed (migration totals): the end of the 95 %
    interval of the per-seed difference (``a - b``, or ``b - a`` when ``a`` should be lower) over ``b``'s mean (%)."""
    m, h = paired_diff(a, b)
    mb = float(np.mean(b))
    if mb == 0:
        return float("nan")
    return 100 * ((m - h) if higher else (-m - h)) / abs(mb)


def claim_values(p: AutoTieringExperimentParams, res: xr.Dataset,
                 example: xr.Dataset | None = None) -> dict[str, tuple[float, str]]:
    """``{claim_id: (value, note, per-seed samples or None)}`` for :mod:`tieringlab.claims.autotiering`, its
    preconditions included (:func:`precondition_values`; definitions and tolerances there). ``example``:
    :func:`tsscs_example`'s Dataset, for C18's note."""
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
        _, floor = up_to_noise_floor(p, res, base)
        d_up = {d: float(np.mean((100 * (sel(per_dir, at, direction=d) - sel(per_dir, base, direction=d))
                                  / sel(per_dir, base, direction=d)).max(axis=1))) for d in ("read", "write")}
        out[cid_up] = (float(np.mean(up)),
                       f"max over epochs {fmt_ci(up, unit=' %', axis=0)} (seeds); read {d_up['read']:.3g} %, write "
                       f"{d_up['write']:.3g} %; mean gain {m:.3g} ± {hw:.2g} %; the same 'up to' with {base} over AT: "
                       f"{np.mean(rev):.3g} %; best case of the seed-mean series: forward {floor['forward']:.3g} %, "
                       f"reverse {floor['reverse']:.3g} %, sign-flip null q95 {floor['null_q95']:.3g} %", up)
        out[cid_mean] = (float(m - hw), f"mean over epochs {m:.3g} ± {hw:.2g} % over {n_seeds} seeds (paired); "
                                        f"{int(np.sum(mean_gain > 0))}/{n_seeds} seeds > 0", mean_gain)

    # C3: all-tier bandwidth (time mean); C4: IO-weighted all-tier latency, read and write
    bw_mean = s["bw"].mean("epoch")
    gaps = {b: paired_gap_lo(sel(bw_mean, at), sel(bw_mean, b)) for b in BASELINES}
    out[C.C3] = (min(gaps.values()), each(bw_mean, 1 / MB, " MB/s") + "; paired gap lower ends: "
                 + ", ".join(f"vs {b} {g:.3g} %" for b, g in gaps.items()), None)
    gaps = {(b, d): paired_gap_lo(sel(s["lat_dir"], at, direction=d), sel(s["lat_dir"], b, direction=d), False)
            for b in BASELINES for d in ("read", "write")}
    out[C.C4] = (min(gaps.values()),
                 " | ".join(f"{d}: " + each(s["lat_dir"], 1 / US, " µs", direction=d) for d in ("read", "write"))
                 + " | paired reduction lower ends: "
                 + ", ".join(f"{d} vs {b} {g:.3g} %" for (b, d), g in gaps.items()), None)

    # C5: tier 1, 3 quantities x 2 directions x 2 baselines with separated intervals
    failed = [f"T1 {d} {name} vs {b}"
              for name, da, higher in (("IOPS", s["t_iops"], True), ("MB/s", s["t_bw"], True),
                                       ("latency", s["t_lat"], False))
              for d in ("read", "write") for b in BASELINES
              if not paired_gap_lo(sel(da, at, tier=1, direction=d), sel(da, b, tier=1, direction=d), higher) > 0]
    out[C.C5] = (12 - len(failed), "not ahead in the paired test: " + (", ".join(failed) if failed else "none"), None)
    # C6: a baseline's interval above AT's in some T2/T3 x direction x {IOPS, MB/s} cell
    cells = [f"T{t} {d} {name}: {b} > AT"
             for name, da in (("IOPS", s["t_iops"]), ("MB/s", s["t_bw"])) for t in (2, 3) for d in ("read", "write")
             for b in BASELINES
             if paired_gap_lo(sel(da, b, tier=t, direction=d), sel(da, at, tier=t, direction=d)) > 0]
    out[C.C6] = (len(cells), "; ".join(cells) if cells else "no cell where a baseline is ahead in the paired test",
                 None)
    # C7: EDT > AT on T3 write IOPS
    e3, a3 = (sel(s["t_iops"], pol, tier=3, direction="write") for pol in ("EDT", at))
    out[C.C7] = (paired_gap_lo(e3, a3),
                 f"T3 write IOPS: EDT {fmt_ci(e3, axis=0)}, AT {fmt_ci(a3, axis=0)}; "
                 f"EDT/AT = {np.mean(e3) / np.mean(a3):.3g}", None)
    # C8: lowest latency in every cell but T2 write, and not the lowest there
    ok, notes = 0, []
    for t in (1, 2, 3):
        for d in ("read", "write"):
            at_l = sel(s["t_lat"], at, tier=t, direction=d)
            if (t, d) == (2, "write"):
                lowest = all(np.nanmean(at_l) <= np.nanmean(sel(s["t_lat"], b, tier=t, direction=d)) for b in BASELINES)
                ok += int(not lowest)
                notes.append(f"T2 write: AT {'is' if lowest else 'is not'} the lowest")
            elif all(paired_gap_lo(at_l, sel(s["t_lat"], b, tier=t, direction=d), False) > 0 for b in BASELINES):
                ok += 1
            else:
                notes.append(f"T{t} {d}: AT not below both in the paired test")
    out[C.C8] = (ok, "; ".join(notes), None)

    # C9-C11 per seed (each seed's post-warm-up epochs; the seeds are paired), scale-free; the literal thresholds
    # in the notes
    tot = {pol: sel(s["tot"], pol) for pol in POLICIES}                  # (seed, epoch)
    bw = {pol: sel(s["bw"], pol) / MB for pol in POLICIES}
    for cid, x, unit, lit in ((C.C9, tot, "IOPS", 100e3), (C.C11, bw, "MB/s", 1200.0)):
        med = np.median(x[at], axis=1)
        gap = np.min([100 * (med - np.quantile(x[b], 0.9, axis=1)) / np.quantile(x[b], 0.9, axis=1)
                      for b in BASELINES], axis=0)                       # per seed, the smaller over baselines
        m, hw = mean_ci(gap, axis=0)
        lit_note = (f"P(AT > 100K) = {np.mean(x[at] > lit):.2f}, AT median >= 125K in "
                    f"{int(np.sum(med >= 125e3))}/{n_seeds} seeds" if cid == C.C9 else
                    f"P(< 1200 MB/s) IDT {np.mean(x['IDT'] < lit):.2f}, EDT {np.mean(x['EDT'] < lit):.2f}; "
                    f"P(AT > 1200) {np.mean(x[at] > lit):.2f}")
        out[cid] = (float(m - hw), f"per seed (AT median - baseline 90th percentile) / 90th percentile, the smaller "
                                   f"over baselines: {fmt_ci(gap, unit=' %')}; {int(np.sum(gap > 0))}/{n_seeds} seeds "
                                   f"> 0; AT median {fmt_ci(med, unit=' ' + unit)}. Literal (pooled): {lit_note}", gap)
    below = np.min([np.mean(tot[b] < np.median(tot[at], axis=1, keepdims=True), axis=1) for b in BASELINES], axis=0)
    out[C.C10] = (float(np.mean(below)),
                  f"per seed P(baseline < AT median), the smaller over baselines: {fmt_ci(below)}; literal (pooled) "
                  f"P(< 100K): IDT {np.mean(tot['IDT'] < 100e3):.2f}, EDT {np.mean(tot['EDT'] < 100e3):.2f}", below)

    # C12: areas over time (post warm-up)
    areas = {"IOPS": s["tot"].sum("epoch"), "MB/s": s["bw"].sum("epoch")}
    n_sep = sum(paired_gap_lo(sel(da, at), sel(da, b)) > 0 for da in areas.values() for b in BASELINES)
    out[C.C12_AREAS] = (n_sep, "; ".join(f"{k} area AT/{b} {np.mean(sel(da, at)) / np.mean(sel(da, b)):.3g}"
                                         for k, da in areas.items() for b in BASELINES), None)
    lat_area = _post(p, res)["latency_s"].fillna(0.0).sum(["epoch", "tier", "direction"])
    ratios = {b: float(np.mean(sel(lat_area, at)) / np.mean(sel(lat_area, b))) for b in BASELINES}
    out[C.C12_LATENCY] = (max(ratios.values()),
                          f"AT latency area / IDT {ratios['IDT']:.3g}, / EDT {ratios['EDT']:.3g}", None)
    # C13: first AT migration at the first migration epoch; more even per-tier IOPS shares after warm-up
    every = p.epochs.every
    started_at = res["started"].sel(policy=at).any("vmdk").values                   # (seed, epoch)
    first = np.where(started_at.any(axis=1), np.argmax(started_at, axis=1), -1)
    share = s["t_iops"].sum("direction") / s["t_iops"].sum(["direction", "tier"])
    min_share = share.min("tier")
    n_even = sum(paired_gap_lo(sel(min_share, at), sel(min_share, b)) > 0 for b in BASELINES)
    out[C.C13] = (int(np.all(first == every - 1)) + n_even,
                  f"first AT migration decided at the end of epoch {sorted(set(first.tolist()))} (expected {every - 1})"
                  f"; smallest per-tier IOPS share: " + each(min_share), None)
    # C14: tier 3 holds the largest share of AT's latency area
    lat_t = _post(p, res)["latency_s"].sel(policy=at).fillna(0.0).sum(["epoch", "direction"])    # (seed, tier)
    sh = lat_t / lat_t.sum("tier")
    top3 = sh.argmax("tier").values == 2
    out[C.C14] = (float(np.mean(top3)), "AT latency-area share per tier: " + ", ".join(
        f"T{t} {fmt_ci(sh.sel(tier=t).values, axis=0)}" for t in (1, 2, 3)), top3.astype(float))
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
                  f"{fmt_ci(sz3.values, 1 / GB, ' GB', axis=0)} vs {fmt_ci(sz12.values, 1 / GB, ' GB', axis=0)}",
                  both.astype(float))
    # C16, C17: migration totals after the burn-in (the first round undoes the random start for every policy)
    mig, mig_all = s["mig"], migration_totals(res)
    for cid, v, scale, unit in ((C.C16, "moved_bytes", 1 / GB, " GB"), (C.C17, "vms_migrated", 1.0, " VMs")):
        out[cid] = (min(paired_diff_lo(sel(mig[v], at), sel(mig[v], b), False) for b in BASELINES),
                    f"decided after the warm-up (epoch >= {p.warmup_epochs}): " + each(mig[v], scale, unit)
                    + "; whole run, the random start's round included: " + each(mig_all[v], scale, unit), None)
    # C18 (sanity): linearity of the TSSCS lines, and the prediction error after real moves
    err = prediction_errors(res)
    raw = _post(p, res)["pred_raw"].sel(policy=at)
    floor_hit = raw < _post(p, res)["pred_lat"].sel(policy=at)
    note = (f"mean R² of the per-VMDK lines over post-warm-up epochs; |predicted - measured| / measured latency "
            f"on the destination after {err.size} completed AT moves: median "
            f"{100 * np.median(err) if err.size else np.nan:.3g} %; predicted latencies (post-warm-up, every tier "
            f"x VMDK) <= 0: {float((raw <= 0).mean()):.1%}, below the tier's unloaded latency (raised to it unless "
            f"lat_floor = 'zero'): {float(floor_hit.mean()):.1%}")
    if example is not None:
        e = np.abs(example["predicted_s"] - example["true_s"]) / example["true_s"]
        note += f"; Fig. 2 example, predicted vs true on every tier: median error {100 * float(np.median(e)):.3g} %"
    r2 = res["r2"].sel(policy=at).isel(epoch=slice(p.warmup_epochs, None))
    out[C.C18] = (float(r2.mean()), note, r2.mean(["epoch", "vmdk"]).values)
    out.update(precondition_values(p, res))
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


def reading_values(p: AutoTieringExperimentParams, key, base_values: dict | None = None) -> dict[str, dict]:
    """:func:`claim_values` (preconditions included) under the default reading and each reading of :data:`READINGS`
    named in ``p.sensitivity`` (same seeds and key): ``{reading name: {claim id: (value, note, ...)}}``, the default
    first (``base_values``: the default reading's, when already computed)."""
    chosen = [_BY_NAME[name] for name in p.sensitivity if name != "none"]
    values = {readings.DEFAULT.name: base_values} if base_values is not None else {}
    values.update(readings.run_each(chosen if base_values is not None else (readings.DEFAULT, *chosen), p,
                                    lambda q: claim_values(q, run(q, key))))
    return values


def other_readings(values: dict[str, dict], cid: str) -> dict[str, float | None] | None:
    """The value of ``cid`` under every non-default reading of ``values`` (:func:`reading_values`), for
    ``Outputs.claim(..., readings=...)``; None when no other reading ran."""
    other = {rd: vals[cid][0] for rd, vals in values.items() if rd != readings.DEFAULT.name and cid in vals}
    return other or None


def sensitivity_table(values: dict[str, dict]) -> pd.DataFrame:
    """One row per (ledger row of AutoTiering, reading) of :func:`reading_values`' ``values``: value, verdict (given
    the preconditions measured under the same reading: ``untestable`` when one fails,
    :func:`tieringlab.claims.verdict_given`) and whether it flips against the default's."""
    from tieringlab.claims import autotiering as C  # noqa: PLC0415
    from tieringlab.claims import verdict_given  # noqa: PLC0415

    pre = {c.id: c for c in C.CLAIMS if c.kind == "precondition"}
    rows = []
    for c in C.CLAIMS:
        value = {rd: vals.get(c.id, (None, ""))[0] for rd, vals in values.items()}
        by_reading = {rd: verdict_given(c, v, {pid: (pre[pid], values[rd].get(pid, (None,))[0])
                                               for pid in c.requires})[0] for rd, v in value.items()}
        flipped = set(readings.flips(by_reading))
        rows += [{"claim": c.id, "kind": c.kind, "reading": rd, "value": v, "verdict": by_reading[rd],
                  "flips": rd in flipped} for rd, v in value.items()]
    return pd.DataFrame(rows)


def sensitivity(p: AutoTieringExperimentParams, key, base_values: dict | None = None) -> pd.DataFrame:
    """The ledger rows' verdicts under each reading of :data:`READINGS` named in ``p.sensitivity``, beside the default
    (same seeds and key; ``base_values``: the default reading's :func:`claim_values`, when already computed):
    :func:`sensitivity_table` of :func:`reading_values`."""
    return sensitivity_table(reading_values(p, key, base_values))
