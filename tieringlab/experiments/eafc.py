"""notebooks/07_eafc.ipynb: SLO-driven SSD cache sizing, EAFC against vanilla caching (EAFC paper Sec. V).

The hybrid store (:mod:`tieringlab.models.hybridstore`: RAM buffer cache -> SSD read cache -> HDD, a
closed queueing network, 5 s samples), the workloads (:mod:`tieringlab.models.workloads.eafc`) and the
systems (``"EAFC"``, ``"vanilla"``, ``"static-partition"``, ``"EAFC-master"``, ``"EAFC-proportional"``
of :mod:`tieringlab.policies.eafc`, called by name) give:

- **Fig. 4 (a)-(d)**: per cwnd the mean observed latency, the partition size and the SSD used, for
  FileBench 40 GB at 10 ms (a) and 5 ms (b), FileBench 30 GB at 10 ms (c), SPECsfs2008-like at 3 ms
  with 2000/4000/5000 ops/s phases (d); vanilla beside each;
- **the savings table** ("Table S" of the notes: the paper prints 11 %, 6 % and about 50 % in the text);
- **the gain sweep**: Kp_inc, Kp_dec, T_inc, T_dec, T_util one at a time around the defaults (the paper
  gives none of them), and the ablations of the notes' claims C16-C20 (percentile, band, aggressive
  decrease, controller window);
- **readings side by side**: the latency model calibrated on one anchor or not, the normalized error
  of U2(b), FileBench's rotation popularity (stress), a 14 GB RAM in front of FileBench too;
- **the master controller** (beyond the paper) on a contended mix.

Documented choices (parameters below, reasons at each):

1. **One calibration anchor** (notes §7.6): vanilla FileBench with its working set in the SSD
   "resulted in approximately 1ms observed latency" (Sec. V.A). ``calibration = "vanilla_1ms"`` sets the
   SSD service time ``store.s_ssd`` so that the model's all-SSD-hit FileBench read latency is exactly
   ``anchor_ms``; every other device constant is the notes' §7.4 datasheet choice, and the ledger's
   vanilla-latency row is labelled a calibration. ``"none"`` keeps ``store.s_ssd`` (a reading).

The section embeds the systems' and the model's parameters (SI units): ``policy`` is
:class:`~tieringlab.policies.eafc.EafcParams` (each run sets its panel's target ``lat_max_s``), ``store`` is
:class:`~tieringlab.models.hybridstore.HybridStoreParams` (its ``ram_bytes``: the RAM in front of FileBench;
SPECsfs has ``sfs_ram_gb``); vanilla has no parameter of its own (:func:`vanilla_params`). The readings are
:data:`READINGS` (:mod:`tieringlab.readings`).
2. **Warm-up and averages** (notes U14, U15): warm-up ends at the first cwnd whose mean latency is at
   most the target; "average partition" is the mean partition from that cwnd on; conformance is the
   fraction of those cwnds whose mean latency meets the target.
3. **Savings** (notes U18): FileBench, ``1 - P_EAFC / P_vanilla`` with ``P_vanilla = Used_vanilla / 0.9``
   at the end of the run (the paper's 40 GB / 0.9 = 44 GB); SPECsfs, reading (a): ``1 - mean_t P_EAFC /
   mean_t (Used_vanilla(t) / 0.9)``.
4. Replications: ``n_seeds`` traces and noise streams per configuration (``jax.random.fold_in`` of the
   notebook's key); numbers are means with the min-max over seeds.
5. Oscillation (C16, C17): partition changes per hour (cwnds whose Fig. 3 decision changed the size).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

import jax
import numpy as np
import pandas as pd
import xarray as xr

from tieringlab import readings as rdg
from tieringlab import stats
from tieringlab.claims import eafc as C
from tieringlab.models import hybridstore as hys
from tieringlab.models.workloads import eafc as wl
from tieringlab.params import MAX_GB, cross_field, param, section
from tieringlab.policies import registry
from tieringlab.policies.eafc import EafcParams, VanillaParams
from tieringlab.progress import progress
from tieringlab.readings import Reading
from tieringlab.units import GB, HOUR, MB, MS, MiB

__all__ = ["EafcSection", "PAPER", "READINGS", "calibrated_store", "workload_params", "observations", "vanilla_params",
           "eafc_params", "fig4_observations", "fig4", "metrics", "mix_table", "reading_verdicts", "savings_table",
           "gain_sweep", "ablations", "readings", "master_mix", "claim_values", "partition_reversals",
           "gain_readings", "reading_values", "claim_samples", "ws_over_ram", "WHOLE_RUN", "AVERAGES",
           "AVERAGED_CLAIMS", "fixed_obs_ratio"]

#: The paper's numbers quoted in the text (Sec. V.A, V.B, abstract); no figure data exist.
PAPER = {"a": {"partition_gb": 39.0, "saving_pct": 11.0, "target_ms": 10.0, "ws_gb": 40.0},
         "b": {"partition_gb": 41.0, "saving_pct": 6.0, "target_ms": 5.0, "ws_gb": 40.0},
         "c": {"partition_gb": 28.0, "saving_pct": None, "target_ms": 10.0, "ws_gb": 30.0},
         "d": {"partition_gb": None, "saving_pct": 50.0, "target_ms": 3.0, "ws_gb": None}}
PANELS = ("a", "b", "c", "d")

#: The readings of what the paper leaves open, run side by side on Fig. 4a/b (:func:`readings`): the parameters
#: each sets (key paths into the section) and, as ``why``, the label of its table row.
READINGS = (
    Reading("default", {}, "default"),
    Reading("no_calibration", {"calibration": "none"}, "no calibration (datasheet s_ssd)"),
    Reading("normalized_error", {"policy.error_mode": "normalized", "policy.kp_inc": 0.2, "policy.kp_dec": 0.2},
            "normalized error (U2 b, Kp 0.2)"),
    Reading("fb_ram_14gb", {"store.ram_bytes": 14.0 * GB}, "14 GB RAM in front of FileBench"),
    Reading("rotation", {"fb_popularity": "rotation"}, "rotation popularity (stress)"),
)
#: What "average partition size" (Sec. V.A) averages (notes U14): the cwnds after warm-up (default), or the whole
#: run, warm-up included. A reading of the runs already made (no run of its own): :data:`WHOLE_RUN`.
AVERAGES = ("post_warmup", "whole_run")
WHOLE_RUN = Reading("whole_run_average", {"average": "whole_run"},
                    "notes U14: the 'average partition' over the whole run, warm-up included")
#: The rows whose value depends on ``average`` (those recorded under :data:`WHOLE_RUN`).
AVERAGED_CLAIMS = (C.FIG4A_PARTITION, C.FIG4B_PARTITION, C.FIG4C_PARTITION, C.TIGHTER_TARGET_BIGGER,
                   C.SMALLER_WS_SMALLER, C.FRACTION_CACHED, C.SAVINGS_RANGE)


@section("eafc")
@dataclass(frozen=True)
class EafcSection:
    # scale and replication
    n_seeds: int = param(5, "replications (trace + noise seeds) per configuration (notes §7.6 item 6)",
                         bounds=(1, 64))
    fb_unit_mib: float = param(2.0, "FileBench cache unit (scale-down, notes §7.2): one key = 2 MiB of files",
                               bounds=(0.0625, 4096.0))
    sfs_unit_mib: float = param(1.0, "SPECsfs cache unit (scale-down): one key = 1 MiB of data",
                                bounds=(0.0625, 4096.0))
    fb_duration_h: float = param(8.0, "FileBench run length: not given (notes U13), 48 cwnds", bounds=(0.5, 48.0))
    sfs_phase_h: float = param(5.0, "Sec. V.B: the SPECsfs load is raised every 5 hours (15 h, 90 cwnds)",
                               bounds=(0.25, 48.0))
    # the hybrid store (Sec. V; device constants: notes §7.4), SI units
    store: hys.HybridStoreParams = param(hys.HybridStoreParams(), "the hybrid store of Sec. V and its device model "
                                         "(notes §7.4); ram_bytes is the RAM in front of FileBench (none: the issue "
                                         "is the SPECsfs case; 14 GB is a reading)")
    sfs_ram_gb: float = param(14.0, "RAM buffer cache in front of SPECsfs: 16 GB RAM (Sec. V) minus the OS (U10)",
                              bounds=(0.0, MAX_GB))
    calibration: str = param("vanilla_1ms", "one anchor: store.s_ssd such that vanilla FileBench reads take "
                                            "anchor_ms (Sec. V.A: ~1 ms); 'none' keeps store.s_ssd",
                             choices=("vanilla_1ms", "none"))
    anchor_ms: float = param(1.0, "Sec. V.A: vanilla 'resulted in approximately 1ms observed latency'",
                             bounds=(0.1, 100.0))
    # workloads
    fb_popularity: str = param("uniform", "FileBench popularity: IRM over files (notes §6.3); 'rotation' is the "
                                          "stress reading", choices=wl.POPULARITY)
    fb_rpc_slots: int = param(16, "NFS RPC slots per client mount: 32 requests at the server (notes §7.4)",
                              bounds=(1, 1024))
    sfs_zipf_alpha: float = param(0.8, "SPECsfs popularity skew (notes U17)", bounds=(0.0, 4.0))
    sfs_mb_per_op: float = param(6.0, "SPECsfs working set per op/s: 12/24/30 GB (notes §7.3)", bounds=(0.1, 1000.0))
    # EAFC (Fig. 3; gains are documented choices, notes §2.4), SI units
    policy: EafcParams = param(EafcParams(), "EAFC (Fig. 3; the gains are documented choices, notes §2.4); "
                                             "lat_max_s is set per run from the targets below")
    # targets (Sec. V)
    fb_targets_ms: tuple[float, ...] = param((10.0, 5.0), "Fig. 4a/4b targets (Sec. V.A)", bounds=(0.01, None))
    average: str = param("post_warmup", "Sec. V.A's 'average partition size': the mean after warm-up (notes U14); "
                                        "'whole_run' includes the warm-up (a reading, WHOLE_RUN)", choices=AVERAGES)
    fb30_target_ms: float = param(10.0, "Fig. 4c target (Sec. V.A)", bounds=(0.01, None))
    sfs_target_ms: float = param(3.0, "Fig. 4d target (Sec. V.B)", bounds=(0.01, None))
    # sweeps and ablations
    sweep_kp: tuple[float, ...] = param((5.0, 10.0, 20.0, 50.0, 100.0), "Kp_inc and Kp_dec values swept (per s; "
                                        "notes §2.4: 0.005-0.1 per ms)", bounds=(0.001, 1000.0))
    sweep_t_inc: tuple[float, ...] = param((0.1, 0.25, 0.5), "T_inc values swept (notes §2.4)", bounds=(0.001, 1.0))
    sweep_t_dec: tuple[float, ...] = param((0.02, 0.05, 0.2), "T_dec values swept (notes §2.4)",
                                           bounds=(0.001, 0.999))
    sweep_t_util: tuple[float, ...] = param((0.6, 0.7, 0.8, 0.85), "T_util values swept (notes §2.4)",
                                            bounds=(0.01, 0.899))
    percentiles: tuple[float, ...] = param((50.0, 75.0, 90.0, 99.0), "percentile ablation (C16)",
                                           bounds=(1.0, 100.0))
    cwnds_s: tuple[float, ...] = param((300.0, 600.0, 1200.0), "controller-window ablation (C20)", bounds=(5.0, None))
    fixed_partitions_gb: tuple[float, ...] = param((30.0, 36.0, 40.0, 44.0), "static partitions of Sec. IV.A, "
                                                   "distinct, each <= store.ssd_bytes", bounds=(0.001, None))
    run_readings: bool = param(True, "run the readings side by side (calibration, error, popularity, RAM)")
    readings_seeds: int = param(2, "replications of each reading that needs its own traces", bounds=(1, 64))
    # master controller (beyond the paper)
    mix_ssd_gb: float = param(50.0, "the SSD of the contended mix (ours; notes §8 suggests 50 GB)",
                              bounds=(1.0, MAX_GB))
    mix_priorities: tuple[float, ...] = param((4.0, 2.0, 1.0), "knapsack values of gold FileBench 40 GB @ 5 ms, "
                                              "silver SPECsfs @ 3 ms, bronze FileBench 30 GB @ 10 ms (ours)",
                                              bounds=(0.001, None))
    mix_seeds: int = param(2, "replications of the contended mix", bounds=(1, 64))
    mix_fb_unit_mib: float = param(4.0, "FileBench cache unit in the mix (its runs last the 15 h of SPECsfs)",
                                   bounds=(0.0625, 4096.0))

    def __post_init__(self):
        """Cross-field checks (ValueError naming the parameter; every failed check is reported). Partitions are
        parts of the SSD: the controller keeps ``p_floor <= p_init <= p_ceiling <= store.ssd_bytes`` (EafcParams
        checks its own order), a static partition is a ``p_init`` that never moves, and the contended mix gives
        each of its three workloads at least ``policy.p_floor`` of ``mix_ssd_gb``."""
        problems = []
        ssd_gb, floor_gb = self.store.ssd_bytes / GB, self.policy.p_floor / GB
        if self.policy.p_ceiling > self.store.ssd_bytes:
            problems.append(f"policy.p_ceiling ({self.policy.p_ceiling:g} bytes) must be <= store.ssd_bytes "
                            f"({self.store.ssd_bytes:g} bytes): the partition is part of the SSD")
        if self.policy.controller != "eafc":
            problems.append(f"policy.controller must be 'eafc' (the static partitions are the ablation's "
                            f"fixed_partitions_gb); got {self.policy.controller!r}")
        if self.policy.lat_max_s != EafcParams().lat_max_s:
            problems.append(f"policy.lat_max_s is set per run from fb_targets_ms, fb30_target_ms and sfs_target_ms; "
                            f"leave it out (got {self.policy.lat_max_s!r})")
        if self.store.sample_s != self.policy.sample_s:
            problems.append(f"store.sample_s ({self.store.sample_s}) must equal policy.sample_s "
                            f"({self.policy.sample_s}): the controller reads the daemon's samples")
        too_big = [g for g in self.fixed_partitions_gb if g > ssd_gb]
        if too_big:
            problems.append(f"fixed_partitions_gb: {too_big} exceed store.ssd_bytes = {ssd_gb:g} GB (a static "
                            f"partition is part of the SSD: each must be in [0.001, store.ssd_bytes])")
        if len(set(self.fixed_partitions_gb)) != len(self.fixed_partitions_gb):
            problems.append(f"fixed_partitions_gb has duplicates: {list(self.fixed_partitions_gb)}; one ablation row "
                            f"per partition, each listed once")
        if self.mix_ssd_gb < 3 * floor_gb:
            problems.append(f"mix_ssd_gb ({self.mix_ssd_gb:g}) must hold the policy.p_floor ({floor_gb:g} GB) of each "
                            f"of the mix's 3 workloads (>= {3 * floor_gb:g})")
        for c in self.cwnds_s:
            if abs(c / self.policy.sample_s - round(c / self.policy.sample_s)) > 1e-9:
                problems.append(f"cwnds_s must be whole multiples of the {self.policy.sample_s:g} s sample; got {c}")
                break
        if len(self.mix_priorities) != 3:
            problems.append(f"mix_priorities needs 3 values (gold, silver, bronze); got {self.mix_priorities}")
        cross_field(problems)


# ------------------------------------------------------------------------------------ the store


@functools.lru_cache(maxsize=32)
def calibrated_store(p: EafcSection, ram_bytes: float) -> hys.HybridStoreParams:
    """``p.store`` with ``ram_bytes`` of RAM; ``s_ssd`` from the one anchor when ``calibration`` asks (the
    all-SSD-hit FileBench read latency of the store without RAM is ``anchor_ms``)."""
    h = dataclasses.replace(p.store, ram_bytes=ram_bytes)
    if p.calibration == "vanilla_1ms":
        anchor = workload_params(p, "fb40").phases()[0]
        h = dataclasses.replace(h, s_ssd=hys.calibrate_s_ssd(dataclasses.replace(p.store, ram_bytes=0.0), anchor,
                                                             p.anchor_ms * MS))
    return h


#: Workload names: FileBench Test 1 (40 GB) and Test 2 (30 GB), the SPECsfs-like run; suffixes
#: ``_mix`` (the contended mix: as long as the SPECsfs run).
def workload_params(p: EafcSection, name: str):
    base = name.split("_")[0]
    if base in ("fb40", "fb30"):
        kw = {} if base == "fb40" else dict(wl.FILEBENCH_TEST2)
        mix = "_mix" in name
        dur = 3 * p.sfs_phase_h * HOUR if mix else p.fb_duration_h * HOUR
        return wl.FileBenchParams(**kw, duration_s=dur, popularity=p.fb_popularity, rpc_slots_per_client=p.fb_rpc_slots,
                                  unit_bytes=int(round((p.mix_fb_unit_mib if mix else p.fb_unit_mib) * MiB)))
    if base == "sfs":
        return wl.SpecSfsParams(zipf_alpha=p.sfs_zipf_alpha, bytes_per_op_per_s=p.sfs_mb_per_op * MB,
                                unit_bytes=int(round(p.sfs_unit_mib * MiB)), phase_s=p.sfs_phase_h * HOUR)
    raise ValueError(f"unknown workload {name!r}; known: fb40, fb30, sfs (+ _mix)")


def _store_for(p: EafcSection, name: str) -> hys.HybridStoreParams:
    return calibrated_store(p, p.sfs_ram_gb * GB if name.startswith("sfs") else p.store.ram_bytes)


def _n_accesses(wp, h: hys.HybridStoreParams) -> list[int]:
    """Per phase, the most accesses the closed loop can consume (models.hybridstore.max_ops_per_s)."""
    if isinstance(wp, wl.FileBenchParams):
        rpa = wp.unit_bytes / (wp.working_set_bytes / wp.n_files)
    else:
        rpa = wp.unit_bytes / wp.read_bytes
    return [int(math.ceil(hys.max_ops_per_s(ph, h) * ph.read_frac * ph.duration_s / rpa * 1.001)) + 2
            for ph in wp.phases()]


def observations(p: EafcSection, name: str, key, n_seeds: int | None = None, cwnd_s: float | None = None,
                 store: hys.HybridStoreParams | None = None) -> xr.Dataset:
    """``n_seeds`` traces of workload ``name`` (``fold_in(key, seed)``), stacked along ``replication``."""
    wp = workload_params(p, name)
    h = store if store is not None else _store_for(p, name)
    gen = wl.filebench_webserver if isinstance(wp, wl.FileBenchParams) else wl.specsfs2008
    n = _n_accesses(wp, h)
    obs = []
    for s in progress(range(n_seeds or p.n_seeds), desc=f"EAFC traces {name}", unit="seed", leave=False):
        w = gen(jax.random.fold_in(key, s), wp, n)
        obs.append(hys.observations(w, h, cwnd_s or p.policy.cwnd_s))
        del w
    out = hys.stack_observations(obs, dim="replication")
    out.attrs.update(workload=name, n_phases=obs[0].attrs["n_phases"])
    return out


def vanilla_params(p: EafcSection) -> VanillaParams:
    """Vanilla's parameters: it has none of its own here (the whole SSD of ``p.store``, EAFC's windows and
    samples for reporting)."""
    return VanillaParams(cwnd_s=p.policy.cwnd_s, sample_s=p.policy.sample_s, ssd_bytes=p.store.ssd_bytes)


def eafc_params(p: EafcSection, lat_max_s: float, **changes) -> EafcParams:
    """``p.policy`` with the run's target ``lat_max_s`` (seconds) and ``changes`` (a sweep's or an ablation's)."""
    return dataclasses.replace(p.policy, lat_max_s=lat_max_s, **changes)


# ---------------------------------------------------------------------------------------- metrics


def metrics(ds: xr.Dataset, lat_max_s: float) -> xr.Dataset:
    """Per replication: warm-up end, post-warm-up average partition and conformance, whole-run values,
    partition changes per hour, the used fraction of the working set (notes U14, U15, §7.8)."""
    lat = ds["latency_mean_s"]
    ok = lat <= lat_max_s * (1 + 1e-12)
    E = ds.sizes["epoch"]
    first = xr.where(ok.any("epoch"), ok.argmax("epoch"), E)
    post = ds["epoch"] >= first
    n_post = post.sum("epoch")
    part = ds["partition_bytes"]
    hours = E * float(ds.attrs["cwnd_s"]) / HOUR
    changed = (ds["partition_next_bytes"] != part)
    out = xr.Dataset({
        "warmup_cwnds": first,
        "partition_post_gb": (part.where(post).sum("epoch") / n_post.where(n_post > 0)) / GB,
        "partition_mean_gb": part.mean("epoch") / GB,
        "conformance_post": ok.where(post).sum("epoch") / n_post.where(n_post > 0),
        "conformance_all": ok.mean("epoch"),
        "changes_per_hour": changed.sum("epoch") / hours,
        "used_end_gb": ds["used_bytes"].isel(epoch=-1, sample=-1, drop=True) / GB,
        "used_mean_gb": ds["used_bytes"].mean(("epoch", "sample")) / GB,
        "used_post_gb": ds["used_bytes"].mean("sample").where(post).sum("epoch") / n_post.where(n_post > 0) / GB,
        "latency_first_ms": lat.isel(epoch=0, drop=True) / MS,
        "latency_post_ms": lat.where(post).sum("epoch") / n_post.where(n_post > 0) / MS,
        "usage_cap_max": (ds["used_bytes"] / part).max(("epoch", "sample")),
        "reversals": xr.apply_ufunc(_reversals_1d, part, ds["partition_next_bytes"], input_core_dims=[["epoch"]] * 2,
                                    vectorize=True, output_dtypes=[np.int64]),
    })
    return out


def _avg_cols(average: str) -> tuple[str, str]:
    """The :func:`metrics` columns of the average partition and SSD used under ``average`` (:data:`AVERAGES`)."""
    if average not in AVERAGES:
        raise ValueError(f"average must be one of {list(AVERAGES)}; got {average!r}")
    return ("partition_post_gb", "used_post_gb") if average == "post_warmup" else ("partition_mean_gb", "used_mean_gb")


def fixed_obs_ratio(ds: xr.Dataset) -> np.ndarray:
    """Per replication of a fixed-partition run (Sec. IV.A): max / min of the cwnds' observed latency (the
    controller's percentile, ``latency_obs_s``) over the cwnds that start with the partition full (the SSD used at
    the cwnd's first sample equals the most the run ever holds: the 90 % cap, warm-up excluded)."""
    used0 = ds["used_bytes"].isel(sample=0)
    full = used0 >= ds["used_bytes"].max(("epoch", "sample"))
    obs = ds["latency_obs_s"].where(full)
    return np.asarray((obs.max("epoch") / obs.min("epoch")).values, float)


def partition_reversals(partition, partition_next) -> int:
    """How many times a run's partition reverses direction: over the cwnds' resizes (``partition_next`` minus
    ``partition``, 1-D over epochs), the nonzero ones whose sign differs from the previous nonzero one's. Monotone
    growth (a warm-up) gives 0; up, down, up gives 2."""
    return _reversals_1d(np.asarray(partition, float), np.asarray(partition_next, float))


def _reversals_1d(part, nxt) -> int:
    step = np.sign(np.asarray(nxt, float) - np.asarray(part, float))
    step = step[step != 0]
    return int((step[1:] != step[:-1]).sum())


def _spread(x) -> dict:
    x = np.asarray(x, float)
    if not np.isfinite(x).any():
        return {"mean": math.nan, "min": math.nan, "max": math.nan}
    return {"mean": float(np.nanmean(x)), "min": float(np.nanmin(x)), "max": float(np.nanmax(x))}


# ------------------------------------------------------------------------------------------ Fig. 4


_FIG4 = {"a": "fb40", "b": "fb40", "c": "fb30", "d": "sfs"}
_SALT = {"fb40": 40, "fb30": 30, "sfs": 3}


def fig4_observations(p: EafcSection, key) -> dict[str, xr.Dataset]:
    """The traces of Fig. 4: FileBench 40 GB (panels a, b), 30 GB (c), SPECsfs (d); ``n_seeds`` each."""
    return {name: observations(p, name, jax.random.fold_in(key, _SALT[name])) for name in ("fb40", "fb30", "sfs")}


def fig4(p: EafcSection, key, obs: dict[str, xr.Dataset] | None = None) -> dict[str, xr.Dataset]:
    """Panels a-d: EAFC and vanilla over the same traces and noise (dims policy, replication, epoch,
    sample), with ``lat_max_s``, the working sets and the phase durations in attrs."""
    obs = obs if obs is not None else fig4_observations(p, key)
    targets = {"a": p.fb_targets_ms[0], "b": p.fb_targets_ms[-1], "c": p.fb30_target_ms, "d": p.sfs_target_ms}
    out, van = {}, {}
    for panel, name in _FIG4.items():
        k = jax.random.fold_in(jax.random.fold_in(key, _SALT[name]), 1)  # the same noise for EAFC and vanilla
        if name not in van:
            van[name] = registry.run("vanilla", obs[name], params=vanilla_params(p), key=k)
        e = registry.run("EAFC", obs[name], params=eafc_params(p, targets[panel] * MS), key=k)
        ds = xr.concat([e, van[name]], dim="policy", coords="minimal", compat="override",
                       combine_attrs="override").assign_coords(policy=["EAFC", "vanilla"])
        o0 = obs[name].isel(replication=0, phase=slice(0, int(obs[name].attrs["n_phases"])))
        ds.attrs.update(lat_max_s=targets[panel] * MS, workload=name, ram_gb=_store_for(p, name).ram_bytes / GB,
                        working_set_gb=[float(w) / GB for w in o0["working_set_bytes"].values],
                        phase_durations_s=[float(x) for x in o0["phase_duration_s"].values])
        out[panel] = ds
    return out


def savings_table(panels: dict[str, xr.Dataset], average: str = "post_warmup") -> pd.DataFrame:
    """Table S (notes §5.7): EAFC's average partition (``average``: :data:`AVERAGES`), vanilla's partition, the
    saving and the conformance per experiment, mean [min, max] over replications, the paper's numbers beside."""
    part_col, _ = _avg_cols(average)
    rows = []
    for panel, ds in panels.items():
        lat_max = float(ds.attrs["lat_max_s"])
        me = metrics(ds.sel(policy="EAFC"), lat_max)
        mv = metrics(ds.sel(policy="vanilla"), lat_max)
        if panel == "d":  # U18 (a): time averages over the whole run
            p_e = ds["partition_bytes"].sel(policy="EAFC").mean("epoch") / GB
            p_v = (ds["used_bytes"].sel(policy="vanilla") / 0.9).mean(("epoch", "sample")) / GB
        else:
            p_e = me[part_col]
            p_v = mv["used_end_gb"] / 0.9
        saving = 100 * (1 - p_e / p_v)
        pv = PAPER[panel]
        f = lambda x: _spread(x.values)  # noqa: E731
        rows.append({
            "panel": f"Fig. 4{panel}", "workload": ds.attrs["workload"], "target_ms": lat_max / MS,
            "eafc_partition_gb": f(p_e)["mean"], "eafc_partition_min_gb": f(p_e)["min"],
            "eafc_partition_max_gb": f(p_e)["max"], "paper_partition_gb": pv["partition_gb"],
            "vanilla_partition_gb": f(p_v)["mean"], "saving_pct": f(saving)["mean"],
            "saving_min_pct": f(saving)["min"], "saving_max_pct": f(saving)["max"],
            "paper_saving_pct": pv["saving_pct"],
            "conformance_post": f(me["conformance_post"])["min"], "conformance_all": f(me["conformance_all"])["mean"],
            "warmup_cwnds": f(me["warmup_cwnds"])["max"],
        })
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------- sweeps, ablations


def _summaries(ds: xr.Dataset, lat_max: float, label: dict) -> dict:
    m = metrics(ds, lat_max)
    return {**label, **{k: _spread(m[k].values)["mean"] for k in
                        ("partition_post_gb", "partition_mean_gb", "conformance_post", "conformance_all",
                         "changes_per_hour", "latency_post_ms", "warmup_cwnds", "reversals")},
            "conformance_post_min": _spread(m["conformance_post"].values)["min"]}


def gain_sweep(p: EafcSection, key, obs: dict[str, xr.Dataset] | None = None,
               panels: dict[str, xr.Dataset] | None = None) -> pd.DataFrame:
    """Kp_inc, Kp_dec, T_inc, T_dec, T_util one at a time around the defaults, on FileBench 40 GB at both
    targets and on SPECsfs at 3 ms (the same traces as Fig. 4 when ``obs`` is given). With Fig. 4's ``panels``
    (whose vanilla runs share these traces and noise), each row also gives the claims' values under its gain
    (:func:`gain_readings`): FileBench, the panel's average partition (panel a at the first target, b at the
    last: the paper's savings are 1 - P / 44 GB of it); SPECsfs (panel d), the saving and the phase claims."""
    rows = []
    fb_panel = {p.fb_targets_ms[0]: "a", p.fb_targets_ms[-1]: "b"}
    cases = [("fb40", t) for t in dict.fromkeys(p.fb_targets_ms)] + [("sfs", p.sfs_target_ms)]
    grid = ([("kp_inc", v) for v in p.sweep_kp] + [("kp_dec", v) for v in p.sweep_kp]
            + [("t_inc", v) for v in p.sweep_t_inc] + [("t_dec", v) for v in p.sweep_t_dec]
            + [("t_util", v) for v in p.sweep_t_util])
    for name, target in cases:
        o = (obs or {}).get(name)
        if o is None:
            o = observations(p, name, jax.random.fold_in(key, _SALT[name]))
        k = jax.random.fold_in(jax.random.fold_in(key, _SALT[name]), 1)
        for gain, v in progress(grid, desc=f"gain sweep {name}", unit="run", leave=False):
            ds = registry.run("EAFC", o, params=eafc_params(p, target * MS, **{gain: v}), key=k)
            row = _summaries(ds, target * MS, {"workload": name, "target_ms": target, "gain": gain,
                                              "value": v, "default": v == getattr(p.policy, gain)})
            panel = fb_panel.get(target) if name == "fb40" else "d"
            if panels is not None and panel in panels:
                row.update(_swept_claims(panels[panel], ds, panel))
            rows.append(row)
    return pd.DataFrame(rows)


def _swept_claims(panel: xr.Dataset, eafc: xr.Dataset, letter: str) -> dict:
    """The claim values of Fig. 4 ``panel`` with its EAFC run replaced by ``eafc`` (a gain's run on the panel's
    traces): ``{claim id: value}``."""
    ds = xr.concat([eafc, panel.sel(policy="vanilla", drop=True)], dim="policy", coords="minimal", compat="override",
                   combine_attrs="override").assign_coords(policy=["EAFC", "vanilla"])
    ds.attrs = dict(panel.attrs)
    table = savings_table({letter: ds})
    vals = claim_values({letter: ds}, table)
    keep = {"a": (C.FIG4A_PARTITION,), "b": (C.FIG4B_PARTITION,),
            "d": (C.SFS_SAVING, C.SFS_RISES, C.SFS_SPIKES)}[letter]
    return {cid: vals[cid][0] for cid in keep if cid in vals}


def gain_readings(sweep: pd.DataFrame) -> dict[str, dict[str, float | bool]]:
    """``{reading name: {claim id: value}}`` from :func:`gain_sweep`'s rows (run with ``panels``): each gain value
    other than the default is a reading (the paper gives no gain), named ``<gain>_<value>`` (``kp_inc_10``); its
    FileBench rows give Fig. 4a's and 4b's partitions (the savings), its SPECsfs row Fig. 4d's claims."""
    cids = [c for c in (C.FIG4A_PARTITION, C.FIG4B_PARTITION, C.SFS_SAVING, C.SFS_RISES, C.SFS_SPIKES)
            if c in sweep.columns]
    out: dict[str, dict] = {}
    for _, r in sweep[~sweep["default"].astype(bool)].iterrows():
        name = f"{r['gain']}_{float(r['value']):g}"
        for cid in cids:
            v = r[cid]
            if v is not None and not (isinstance(v, float) and math.isnan(v)):
                out.setdefault(name, {})[cid] = bool(v) if isinstance(v, (bool, np.bool_)) else float(v)
    return out


def ablations(p: EafcSection, key, obs: dict[str, xr.Dataset] | None = None) -> pd.DataFrame:
    """The notes' C16-C20 ablations on FileBench 40 GB at each target: percentile, no band
    (lat_min_frac = 1), aggressive decrease (T_dec 0.5, Kp_dec 500 /s), controller window, static
    partitions. Percentile rows other than the 75th also give ``changes_vs_p75_lo``: the lower end of the 95 %
    interval of the paired per-replication difference in partition changes per hour against the 75th (C16's
    margin; the same traces and noise). Static rows give ``fixed_gb``, ``working_set_gb`` and the min and max over
    replications of :func:`fixed_obs_ratio` (C18)."""
    rows = []
    o = (obs or {}).get("fb40")
    k40 = jax.random.fold_in(key, 40)
    if o is None:
        o = observations(p, "fb40", k40)
    k = jax.random.fold_in(k40, 1)
    ws_gb = float(o["working_set_bytes"].isel(replication=0, phase=0)) / GB
    for target in p.fb_targets_ms:
        lm = target * MS
        runs = ([("percentile", q, dict(percentile=q)) for q in p.percentiles]
                + [("band", f, dict(lat_min_frac=f)) for f in (p.policy.lat_min_frac, 1.0)]
                + [("decrease", "aggressive", dict(t_dec=0.5, kp_dec=500.0)),
                   ("decrease", "conservative", {})])
        changes = {}
        for kind, v, over in progress(runs, desc=f"ablations {target} ms", unit="run", leave=False):
            ds = registry.run("EAFC", o, params=eafc_params(p, lm, **over), key=k)
            rows.append(_summaries(ds, lm, {"target_ms": target, "ablation": kind, "value": str(v)}))
            if kind == "percentile":
                changes[len(rows) - 1] = (float(v), metrics(ds, lm)["changes_per_hour"].values)
        base = next((c for q, c in changes.values() if q == 75.0), None)
        for i, (q, c) in changes.items():
            if base is not None and q != 75.0:
                dm, dh = stats.paired_diff(c, base)
                rows[i]["changes_vs_p75_lo"] = dm - dh
        for g in p.fixed_partitions_gb:
            ds = registry.run("static-partition", o, key=k, params=eafc_params(
                p, lm, controller="static", p_init=g * GB, p_floor=min(p.policy.p_floor / GB, g) * GB))
            r = _summaries(ds, lm, {"target_ms": target, "ablation": "static", "value": f"{g:g} GB"})
            lat = ds["latency_s"] / MS  # the band of Sec. IV.A: per-cwnd P25 and P75 of the 5 s samples
            r["sample_p25_ms"] = float(lat.quantile(0.25, "sample").mean())
            r["sample_p75_ms"] = float(lat.quantile(0.75, "sample").mean())
            ratio = fixed_obs_ratio(ds)
            r.update(fixed_gb=float(g), working_set_gb=ws_gb, obs_ratio_min=float(np.min(ratio)),
                     obs_ratio_max=float(np.max(ratio)))
            rows.append(r)
        for c in p.cwnds_s:
            oc = o if c == p.policy.cwnd_s else hys.with_cwnd(o, c)
            ds = registry.run("EAFC", oc, params=eafc_params(p, lm, cwnd_s=c), key=k)
            rows.append(_summaries(ds, lm, {"target_ms": target, "ablation": "cwnd_s", "value": f"{c:g}"}))
    return pd.DataFrame(rows)


def readings(p: EafcSection, key, obs: dict[str, xr.Dataset] | None = None) -> pd.DataFrame:
    """Fig. 4a/b's headline numbers under each reading of :data:`READINGS` (:func:`tieringlab.readings.run_each`;
    a row's ``reading`` is the reading's ``why``). A reading that changes only the controller (``policy``) runs
    on the default's traces (Fig. 4's when ``obs`` is given), the others on ``readings_seeds`` traces of their
    own."""
    k = jax.random.fold_in(key, _SALT["fb40"])
    default = (obs or {}).get("fb40")
    if default is None:
        default = observations(p, "fb40", k)
    kn = jax.random.fold_in(k, 1)

    def rows(pv: EafcSection) -> list[dict]:
        same = dataclasses.replace(pv, policy=p.policy) == p
        o = default if same else observations(pv, "fb40", k, n_seeds=p.readings_seeds)
        v = registry.run("vanilla", o, params=vanilla_params(p), key=kn)
        out = []
        for target in p.fb_targets_ms:
            e = registry.run("EAFC", o, params=eafc_params(pv, target * MS), key=kn)
            x = _summaries(e, target * MS, {"target_ms": target, "replications": int(o.sizes["replication"])})
            m, mv = metrics(e, target * MS), metrics(v, target * MS)
            x["vanilla_latency_end_ms"] = float(v["latency_mean_s"].isel(epoch=-1).mean() / MS)
            x["saving_pct"] = float((100 * (1 - m["partition_post_gb"] / (mv["used_end_gb"] / 0.9))).mean())
            out.append(x)
        return out

    runs = rdg.run_each(progress(READINGS, desc="readings", unit="reading", leave=False), p, rows)
    why = {r.name: r.why for r in READINGS}
    return pd.DataFrame([{"reading": why[name], **x} for name, xs in runs.items() for x in xs])


def reading_verdicts(rd: pd.DataFrame) -> pd.DataFrame:
    """The FileBench claims' verdicts under each reading of :func:`readings` (the claims' own checks and
    tolerances: :func:`tieringlab.readings.verdicts`), and which of them flip against the default reading
    (:func:`tieringlab.readings.flips`)."""
    from tieringlab.claims import registry as claims  # noqa: PLC0415

    reg = claims()
    cols = {(10.0, "partition_post_gb"): C.FIG4A_PARTITION, (5.0, "partition_post_gb"): C.FIG4B_PARTITION}
    labels = list(dict.fromkeys(rd["reading"]))
    values: dict[str, dict[str, float]] = {}
    for label in labels:
        r = rd[rd["reading"] == label].set_index("target_ms")
        for (t, col), cid in cols.items():
            if t in r.index:
                values.setdefault(cid, {})[label] = float(r.loc[t, col])
        values.setdefault(C.CONFORMANCE, {})[label] = float(r["conformance_post_min"].min())
    by_claim = {cid: rdg.verdicts(reg[cid], v) for cid, v in values.items()}
    flipped = {cid: set(rdg.flips(b, default=labels[0])) for cid, b in by_claim.items()}
    return pd.DataFrame([{"reading": label, **{cid: b[label] for cid, b in by_claim.items() if label in b},
                          "flips_against_default": ", ".join(c for c in by_claim if label in flipped[c]) or "none"}
                         for label in labels])


def reading_values(rd: pd.DataFrame) -> dict[str, dict[str, float]]:
    """``{reading name: {claim id: value}}`` of the FileBench claims under each non-default reading of
    :func:`readings` (named as in :data:`READINGS`; the claims' values as :func:`reading_verdicts` takes them)."""
    name = {r.why: r.name for r in READINGS}
    cols = {(10.0, "partition_post_gb"): C.FIG4A_PARTITION, (5.0, "partition_post_gb"): C.FIG4B_PARTITION}
    out: dict[str, dict[str, float]] = {}
    for label in dict.fromkeys(rd["reading"]):
        if name[label] == READINGS[0].name:
            continue
        r = rd[rd["reading"] == label].set_index("target_ms")
        vals = {cid: float(r.loc[t, col]) for (t, col), cid in cols.items() if t in r.index}
        vals[C.CONFORMANCE] = float(r["conformance_post_min"].min())
        out[name[label]] = vals
    return out


def master_mix(p: EafcSection, key) -> dict[str, xr.Dataset]:
    """The contended mix (ours): gold FileBench 40 GB at 5 ms, silver SPECsfs at 3 ms, bronze FileBench
    30 GB at 10 ms, for the SPECsfs run's 15 h, sharing ``mix_ssd_gb``: the knapsack master controller against
    proportional shares (dims workload, epoch, sample; a list over replications)."""
    names = ("gold", "silver", "bronze")
    targets = (p.fb_targets_ms[-1] * MS, p.sfs_target_ms * MS, p.fb30_target_ms * MS)
    res = {"knapsack": [], "proportional": []}
    for s in range(p.mix_seeds):
        ks = jax.random.fold_in(jax.random.fold_in(key, 77), s)
        obs = [observations(p, n, jax.random.fold_in(ks, i), n_seeds=1).isel(replication=0, drop=True)
               for i, n in enumerate(("fb40_mix", "sfs", "fb30_mix"))]
        mo = hys.stack_observations(obs, names=names)
        mp = dict(eafc=p.policy, lat_max_s=targets, priority=tuple(p.mix_priorities), ssd_bytes=p.mix_ssd_gb * GB)
        for arb, name in (("knapsack", "EAFC-master"), ("proportional", "EAFC-proportional")):
            res[arb].append(registry.run(name, mo, knobs=mp, key=jax.random.fold_in(ks, 9)))
    return {k: xr.concat(v, dim="replication") for k, v in res.items()}


def mix_table(mix: dict[str, xr.Dataset]) -> pd.DataFrame:
    rows = []
    for arb, ds in mix.items():
        for w in ds["workload"].values:
            d = ds.sel(workload=w)
            lm = float(d["lat_max_s"].isel(replication=0))
            ok = (d["latency_mean_s"] <= lm).isel(epoch=slice(6, None)).mean("epoch")  # after the first hour
            rows.append({"arbitration": arb, "workload": str(w), "priority": float(d["priority"].isel(replication=0)),
                         "target_ms": lm / MS, "conformance_after_1h": float(ok.mean()),
                         "partition_mean_gb": float(d["partition_bytes"].mean() / GB),
                         "latency_mean_ms": float(d["latency_mean_s"].mean() / MS)})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------------ claims


def claim_values(panels: dict[str, xr.Dataset], table: pd.DataFrame, ablation: pd.DataFrame | None = None,
                 average: str = "post_warmup") -> dict:
    """The reproduced value of every claim of :mod:`tieringlab.claims.eafc` these runs can give, as
    ``{claim_id: (value, note)}``: means over replications for "near" claims (the note gives the
    spread), the separation of the 95 % intervals (:func:`tieringlab.stats.interval`) for
    "bigger / smaller" claims, the worst replication for "always" claims. ``average`` (:data:`AVERAGES`): what
    the average partition and SSD used average over (``table`` should be :func:`savings_table`'s under the same)."""
    part_col, used_col = _avg_cols(average)
    out = {}
    m = {k: metrics(ds.sel(policy="EAFC"), float(ds.attrs["lat_max_s"])) for k, ds in panels.items()}
    mv = {k: metrics(ds.sel(policy="vanilla"), float(ds.attrs["lat_max_s"])) for k, ds in panels.items()}

    def spread_note(x, unit=""):
        s = _spread(np.asarray(x))
        return f"mean over {np.asarray(x).size} replications; min {s['min']:.3g}{unit}, max {s['max']:.3g}{unit}"

    for panel, cid in (("a", C.FIG4A_PARTITION), ("b", C.FIG4B_PARTITION), ("c", C.FIG4C_PARTITION)):
        if panel in m:
            x = m[panel][part_col].values
            out[cid] = (float(np.mean(x)), spread_note(x, " GB"))
    if "a" in m and "b" in m:
        # paired: panels a and b run on the same FileBench 40 GB traces and noise (fig4), replication by replication
        d = m["b"][part_col].values - m["a"][part_col].values
        dm, dh = stats.paired_diff(m["b"][part_col].values, m["a"][part_col].values)
        need = stats.replications_observed(d)
        out[C.TIGHTER_TARGET_BIGGER] = (dm - dh, f"paired 5 ms - 10 ms partition: {dm:.3g} ± {dh:.2g} GB over "
                                                 f"{d.size} replications. " + _needed_note(need, d.size, True))
        conf = np.concatenate([m["a"]["conformance_post"].values, m["b"]["conformance_post"].values])
        out[C.CONFORMANCE] = (float(np.min(conf)), f"worst replication; mean {np.mean(conf):.3g}")
    if "a" in mv:
        x = mv["a"]["used_end_gb"].values
        out[C.VANILLA_WHOLE_WS] = (float(np.mean(x)), spread_note(x, " GB"))
        x = mv["a"]["latency_post_ms"].values
        out[C.VANILLA_1MS] = (float(np.mean(x)), spread_note(x, " ms"))
        x = mv["a"]["used_end_gb"].values / 0.9
        out[C.VANILLA_44GB] = (float(np.mean(x)), spread_note(x, " GB"))
    rows = {r["panel"][-1]: r for _, r in table.iterrows()}
    for panel, cid in (("d", C.SFS_SAVING),):
        if panel in rows:
            r = rows[panel]
            out[cid] = (float(r["saving_pct"]), f"mean over replications; min {r['saving_min_pct']:.3g} %, "
                                                f"max {r['saving_max_pct']:.3g} %")
    fb = [q for q in ("a", "b", "c") if q in panels]
    if fb:
        first = all(bool((m[q]["latency_first_ms"] > panels[q].attrs["lat_max_s"] / MS).all()) for q in fb)
        out[C.WARMUP_ABOVE] = (first, None)
    if "a" in m and "c" in m:
        i30, i40 = (stats.interval(m[q][part_col].values) for q in ("c", "a"))
        a30, a40 = m["c"][part_col].values, m["a"][part_col].values
        out[C.SMALLER_WS_SMALLER] = (i30.hi - i40.lo, f"95 % intervals: 30 GB [{i30.lo:.3g}, {i30.hi:.3g}] GB, "
                                                      f"40 GB [{i40.lo:.3g}, {i40.hi:.3g}] GB (unpaired: different "
                                                      f"traces). " + _needed_note(
                                                          stats.replications_observed(a30, a40), a30.size, False))
    ten = [q for q in ("a", "c") if q in m]
    if ten:
        fr = [m[q][used_col].values / panels[q].attrs["working_set_gb"][-1] for q in ten]
        out[C.FRACTION_CACHED] = (float(np.max(np.concatenate(fr))), "largest over the 10 ms runs and replications")
    if "d" in panels:
        d = panels["d"].sel(policy="EAFC")
        lat, nxt = d["latency_mean_s"], d["partition_next_bytes"]
        per = int(round(panels["d"].attrs["phase_durations_s"][0] / float(d.attrs["cwnd_s"])))
        lm = float(panels["d"].attrs["lat_max_s"])
        ph1 = bool((lat.isel(epoch=slice(0, per)) <= lm).all()) and bool((nxt.isel(epoch=per - 1) < 10 * GB).all())
        out[C.SFS_PHASE1] = (ph1, None)
        grows = bool((nxt.isel(epoch=-1) > nxt.isel(epoch=per - 1)).all()) and all(
            bool((nxt.isel(epoch=(k + 1) * per - 1) > nxt.isel(epoch=k * per - 1)).all()) for k in (1, 2))
        out[C.SFS_RISES] = (grows, None)
        r = np.minimum(lat.isel(epoch=per) / lat.isel(epoch=per - 1),
                       lat.isel(epoch=2 * per) / lat.isel(epoch=2 * per - 1))
        out[C.SFS_SPIKES] = (float(r.min()), "smallest of the two steps over replications; "
                                             + spread_note(r.values, "x"))
        ws, ram = panels["d"].attrs["working_set_gb"], panels["d"].attrs.get("ram_gb")
        if ram is not None and len(ws) > 1:
            ratio = ws_over_ram(ws, ram)
            out[C.PRE_SFS_WS_RAM] = (ratio if math.isfinite(ratio) else 1e9,
                                     "working sets " + ", ".join(f"{w:.3g}" for w in ws) + f" GB over {ram:.3g} GB RAM"
                                     + ("" if math.isfinite(ratio) else " (no RAM: recorded as 1e9)"))
    if len(table):
        sv = table["saving_pct"].dropna().values
        lo, hi = C.SAVINGS_RANGE_PCT
        out[C.SAVINGS_RANGE] = (bool(np.all((sv >= lo) & (sv <= hi))),
                                "savings: " + ", ".join(f"{v:.3g} %" for v in sv))
    out[C.USAGE_CAP] = (max(float(m[q]["usage_cap_max"].max()) for q in m), None)
    if ablation is not None and len(ablation):
        out.update(_ablation_claims(ablation))
    return out


def _ablation_claims(a: pd.DataFrame) -> dict:
    """C16 (percentile), C17 (band) and C20 (controller window) from :func:`ablations`' rows."""
    ok16 = ok17 = ok20 = True
    seen16 = seen17 = seen20 = False
    margins16: list[str] = []
    for t in a["target_ms"].unique():
        at = a[a["target_ms"] == t]
        pc = {str(int(float(v))): r for v, r in at[at["ablation"] == "percentile"].set_index("value").iterrows()}
        if {"75", "90", "99"} <= set(pc):
            seen16 = True
            ok16 &= all(pc["75"]["conformance_post"] >= pc[q]["conformance_post"] - 1e-12
                        and pc[q]["changes_vs_p75_lo"] > 0 for q in ("90", "99"))
            margins16 += [f"P{q} at {float(t):g} ms: {pc[q]['changes_vs_p75_lo']:.3g}" for q in ("90", "99")]
        bd = at[at["ablation"] == "band"].set_index("value")
        dc = at[at["ablation"] == "decrease"].set_index("value")
        if "1.0" in bd.index and len(bd) == 2 and "aggressive" in dc.index:
            seen17 = True
            band = bd.drop(index="1.0").iloc[0]["changes_per_hour"]
            ok17 &= band < bd.loc["1.0", "changes_per_hour"] and band < dc.loc["aggressive", "changes_per_hour"]
        cw = at[at["ablation"] == "cwnd_s"]
        paper_p = {10.0: 39.0, 5.0: 41.0}.get(float(t))
        other = cw[cw["value"].astype(float) != 600.0]
        if len(other) and paper_p is not None:
            seen20 = True
            ok20 &= bool(((other["partition_post_gb"] - paper_p).abs() <= 3.0).all()
                         and (other["conformance_post_min"] >= 0.95).all())
    out = {}
    for cid, sel in ((C.PRE_PCT_OSC, (a["ablation"] == "percentile") & a["value"].isin(["90.0", "99.0", "90", "99"])),
                     (C.PRE_BAND_OSC, ((a["ablation"] == "band") & (a["value"] == "1.0"))
                      | ((a["ablation"] == "decrease") & (a["value"] == "aggressive")))):
        rows = a[sel]
        if len(rows):
            out[cid] = (float(rows["reversals"].min()), "mean reversals per run: " + "; ".join(
                f"{r['ablation']} {r['value']} at {r['target_ms']:g} ms: {r['reversals']:.3g}"
                for _, r in rows.iterrows()))
    if seen16:
        out[C.P75_BEATS] = (bool(ok16), "lower end of the 95 % paired interval of changes per hour minus P75's: "
                            + "; ".join(margins16))
    if "fixed_gb" in a.columns:
        st = a[(a["ablation"] == "static") & (a["fixed_gb"] < a["working_set_gb"])]
        if len(st):
            where = "; ".join(f"{r['value']} at {r['target_ms']:g} ms: {r['obs_ratio_min']:.3g}-"
                              f"{r['obs_ratio_max']:.3g}" for _, r in st.iterrows())
            out[C.FIXED_BAND] = (float(st["obs_ratio_max"].max()), "max / min of the cwnds' P75 once full, range over "
                                                                   "replications: " + where)
            out[C.PRE_FIXED_VARIES] = (float(st["obs_ratio_min"].min()), where)
    if seen17:
        out[C.BAND] = (bool(ok17), None)
    if seen20:
        out[C.SHORT_HISTORY] = (bool(ok20), None)
    return out


def ws_over_ram(working_sets_gb, ram_gb: float) -> float:
    """The smallest working set / RAM over the SPECsfs phases after the first (inf without RAM)."""
    later = [float(w) for w in list(working_sets_gb)[1:]]
    if not later:
        return math.nan
    return min(later) / float(ram_gb) if ram_gb > 0 else math.inf


def _needed_note(n: float, n_run: int, paired: bool) -> str:
    kind = "paired" if paired else "unpaired"
    if math.isnan(n):
        return ""
    if math.isinf(n):
        return f"No affordable replication count detects the observed effect ({kind} t, power {stats.POWER:g})."
    return (f"Power {stats.POWER:g} for the observed effect and sd ({kind} t, stats.replications_for) needs "
            f"{int(n)} replications; {n_run} were run.")


def claim_samples(panels: dict[str, xr.Dataset]) -> dict[str, np.ndarray]:
    """``{claim id: per-replication values}`` of the rows whose value is a statistic over replications (the
    FileBench partitions and savings, vanilla's rows, the paired partition difference), for
    ``Outputs.claim(..., samples=...)``."""
    out = {}
    m = {k: metrics(ds.sel(policy="EAFC"), float(ds.attrs["lat_max_s"])) for k, ds in panels.items()}
    mv = {k: metrics(ds.sel(policy="vanilla"), float(ds.attrs["lat_max_s"])) for k, ds in panels.items()}
    for panel, cid in (("a", C.FIG4A_PARTITION), ("b", C.FIG4B_PARTITION), ("c", C.FIG4C_PARTITION)):
        if panel in m:
            out[cid] = m[panel]["partition_post_gb"].values
    if "a" in m and "b" in m:
        out[C.TIGHTER_TARGET_BIGGER] = m["b"]["partition_post_gb"].values - m["a"]["partition_post_gb"].values
    if "a" in mv:
        out[C.VANILLA_WHOLE_WS] = mv["a"]["used_end_gb"].values
        out[C.VANILLA_1MS] = mv["a"]["latency_post_ms"].values
        out[C.VANILLA_44GB] = mv["a"]["used_end_gb"].values / 0.9
    if "d" in panels:
        d = panels["d"]
        p_e = d["partition_bytes"].sel(policy="EAFC").mean("epoch")
        p_v = (d["used_bytes"].sel(policy="vanilla") / 0.9).mean(("epoch", "sample"))
        out[C.SFS_SAVING] = (100 * (1 - p_e / p_v)).values
    return {k: np.asarray(v, float) for k, v in out.items()}
