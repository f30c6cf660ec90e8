"""notebooks/08_otf_ast.ipynb: OTF-AST against static tiering and FlashCache (OTF-AST paper Sec. 4).

The paper (Oe et al., Fujitsu Laboratories; OCR, reading notes ``notes/otf_ast.md``) replays MSR src1_0
minutes 1920-2020 and src1_1 minutes 480-600 (Table 2) on a 300 GB LUN of 1 GB sub-LUNs whose SSD
holds at most 24 of them (Sec. 4.1), under OTF-AST (t=60, i=50, n=20, m=60, c=3, o=10; Table 3),
static tiering (the top 24 sub-LUNs of the 100 / 120 minutes before, placed once), FlashCache (4 KB,
24 GB, LRU; replayed twice), OTF-AST without the SSD->HDD write-back and the HDD alone. It reports:

- **Table 4**: the SSD access ratio (IOs served by the SSD / all IOs), OTF-AST's temporary-buffer hits
  and FlashCache's dirty write hits (:func:`table4`);
- **Fig. 6**: the number of sub-LUNs on the SSD per minute (:func:`fig6`);
- **Table 5**: the mean response time over the window, over its first 20 minutes and over the IOs of
  at most 100 ms (:func:`table5`; both the raw mean and the mean of the driver's 10 us-1 s histogram);
- **Figs. 7-9**: response-time CDFs (:func:`cdfs`).

Every system runs by name through :func:`tieringlab.policies.registry.run` on the same twin and the
same device random draws per seed (common random numbers); numbers are means over ``seeds`` with 95 %
t-intervals (:func:`tieringlab.stats.mean_ci`), comparisons are paired differences per seed.

Beyond the central configuration (the notes' recommended readings, the twins' central priors):

- **reading ablations** (:func:`readings`): each alternative reading of the notes (Sec. 2.2, 6.6) for
  the systems it changes (:func:`reading_policies`; the others taken from the central run) (:data:`READINGS`, each a
  :class:`tieringlab.readings.Reading` of this section's parameters); :func:`verdict_flips` recomputes
  every claim under each reading and says which verdicts flip (:func:`tieringlab.readings.verdicts`,
  :func:`~tieringlab.readings.flips`);
- **prior sweep** (:func:`priors`): the twin priors the notes list (Sec. 6.6: q, w, D, p_jump,
  p_unaligned; :data:`PRIORS`, readings of the twin), every system a ledger row reads; the band of OTF-AST's SSD
  ratio, and the verdicts under each prior.

- **preconditions** (:func:`trace_preconditions`, per trace, seed and reading): the replay footprint over the cache,
  the hot spots' lifetime against c*t and the share of intervals the concentration test rejects, the rows
  ``otf_ast.pre.*`` the claims' mechanisms need (:mod:`tieringlab.claims.otf_ast`); :func:`claims_by_reading` and
  :func:`ledger_entries` give every row its value under each reading and prior, and its per-seed samples.

Cost (issue 30): each (trace, seed) replication is one job (its twin, its preconditions, its systems), ``threads``
jobs at once, the longest first (:func:`_jobs`; the compiled kernels release the GIL; results do not depend on it);
FlashCache's passes 1 and 2 share one replay of the block LRU (:func:`run_systems`); the readings and priors rerun
only the systems they change that some ledger row reads (:func:`reading_policies`, :data:`LEDGER_POLICIES`), and
measure the preconditions once per distinct monitor (:func:`_monitor_key`).

Parameters: the section embeds each system's own (:class:`~tieringlab.policies.otf_ast.OtfAstSettings`
``policy``, ``static_tiering``, ``flashcache``) and the measurement every system shares (``measure``:
the testbed, Table 5's summaries), each field declared once in :mod:`tieringlab.policies.otf_ast`;
:func:`system_params` gives each system exactly its own parameters.

Data: by default the synthetic twins of :mod:`tieringlab.models.workloads.otf_ast` (``traces.source:
twin``; ``scale`` shrinks bytes and request counts, the sub-LUN structure stays); with ``traces.source:
msr`` the real files, windows cut at Table 2's minutes from each file's first timestamp (notes Sec. 6.1).
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import jax
import numpy as np
import pandas as pd
import xarray as xr

from tieringlab.claims import otf_ast as C
from tieringlab.claims import registry as claim_registry
from tieringlab.models.workloads import otf_ast as twin_model
from tieringlab.params import cross_field, param, section
from tieringlab.policies import registry
from tieringlab.policies.otf_ast import (
    HOT_RULES,
    M_READINGS,
    FlashCacheSettings,
    MeasureParams,
    OtfAstSettings,
    StaticTieringSettings,
    sim,
)
from tieringlab.policies.otf_ast.flashcache import flashcache_passes
from tieringlab.policies.otf_ast.monitor import hot_matrix, interval_counts
from tieringlab.policies.otf_ast.replay import replay
from tieringlab.progress import progress
from tieringlab.readings import DEFAULT, Reading, axis, flips, verdicts
from tieringlab.stats import interval, mean_ci, paired_diff, paired_gap_pct
from tieringlab.traces import msr_twin
from tieringlab.traces.source import load
from tieringlab.units import MINUTE, SUBLUN_BYTES

__all__ = ["OtfAstExperimentParams", "TRACES", "POLICIES", "READINGS", "PRIORS", "LABELS", "TABLE2_MIN",
           "system_params", "sublun_bytes", "load_trace", "run_one", "run_systems", "grid", "readings", "priors",
           "table4", "table5",
           "fig6", "cdfs", "util_timeline", "copy_times", "claim_values", "claim_rows", "claims_by_reading",
           "ledger_entries", "verdict_flips", "readings_summary", "stable_verdicts", "prior_band", "footprint_bytes",
           "hot_runs", "weighted_median", "trace_preconditions", "preconditions_table", "HIST_MEANS",
           "reading_policies"]

TRACES = ("src1_0", "src1_1")
POLICIES = ("OTF-AST", "OTF-AST without write-back", "static tiering", "FlashCache", "FlashCache pass 2", "HDD only")
#: Table 2: the replayed spans in minutes from the trace's start (training: the equal span before).
TABLE2_MIN = {"src1_0": (1920.0, 2020.0), "src1_1": (480.0, 600.0)}


def _alternatives(*axes) -> tuple[Reading, ...]:
    """The readings of ``axes`` other than their default ones (the central run is the default)."""
    return tuple(r for a in axes for r in a if not r.is_default)


#: The alternative readings of the notes (Sec. 2.2, 6.6), as overrides of this section's parameters (dotted paths
#: into its embedded ones), run for OTF-AST and OTF-AST without write-back. c2 (c hot intervals among the last m)
#: is the same rule as m4.
READINGS: tuple[Reading, ...] = _alternatives(
    axis("policy.hot_rule", HOT_RULES, "notes Sec. 2.2: who is hot in a concentrated interval", default="top_n",
         name={"top_n": "n1", "prefix_to_i": "n2", "pct_of_subluns": "n3"}.get,
         reasons={"prefix_to_i": "notes Sec. 2.2 n2: the smallest prefix of the sorted counts reaching i %, "
                                 "concentrated when it has at most n members",
                  "pct_of_subluns": "notes Sec. 2.2 n3: n read as a percentage of the sub-LUNs"}),
    (Reading("i2", {"policy.i_reading": "absolute"}, "notes Sec. 2.2 i2: i as an absolute IO count per interval"),),
    axis("policy.m_reading", M_READINGS, "notes Sec. 2.2: what m (60) counts", default="window",
         name={"window": "m1", "total_floor": "m2", "sublun_floor": "m3", "history": "m4_c2"}.get,
         reasons={"total_floor": "notes Sec. 2.2 m2: an interval with fewer than m IOs is never concentrated",
                  "sublun_floor": "notes Sec. 2.2 m3: a sub-LUN needs at least m IOs to be hot",
                  "history": "notes Sec. 2.2 m4 (= c2): c hot intervals among the last m"}),
    (Reading("f2", {"policy.full_policy": "evict_max_timeout"},
             "notes Sec. 2.2 f2: a full SSD evicts the resident with the largest timeout count"),),
    axis("policy.move_concurrency", (1, 2, 4), "Sec. 3.3.2 shows one temporary buffer; more moves at once are "
         "the notes' ablation (Sec. 6.6)", default=1, name=lambda v: f"moves_{v}"),
    (Reading("copy_minutes", {"policy.copy_unit": "minutes"}, "notes Sec. 1.6: Table 1's copy times read as minutes"),
     Reading("fifo_copies", {"measure.testbed.copy_scheduler": "fifo"},
             "copy chunks in the disks' arrival-order (FIFO) queues, interleaved with user IO, instead of CFQ-like "
             "time slices (notes Sec. 6.3's default queueing; CentOS 5.4's default scheduler is CFQ)"),
     Reading("write_cache_on", {"measure.testbed.hdd_write_cache": True},
             "notes Sec. 6.3 / 6.6: the HDD's write cache on (off is a choice: Table 1's slower SSD->HDD copy "
             "suggests it); Fig. 7's OTF-AST tracking FlashCache on an 89 %-write trace argues for on"),
     Reading("per_set_cleaning", {"flashcache.cleaning": "per_set"},
             "notes Sec. 3.2: FlashCache cleans each 512-way set past its dirty threshold (its own rule) instead of "
             "the whole cache's dirty share")))
#: The twin priors of the notes' sweep (Sec. 6.6) as readings of the twin (overrides of its generator's fields).
#: q = 0.9 is infeasible next to the fitted background share (q + b <= 1, b = 0.1218 / 0.1206 after the last
#: fit), so its high end is "max": q = 1 - b of each twin (resolved in :func:`load_trace`).
PRIORS: tuple[Reading, ...] = (
    Reading("q_0p5", {"band_share": 0.5}, "notes Sec. 6.6: the band's share q, low end"),
    Reading("q_max", {"band_share": "max"}, "notes Sec. 6.6: q high end, 1 - the twin's fitted background share"),
    Reading("w_3", {"band_width": 3}, "notes Sec. 6.6: the band's width w"),
    Reading("w_10", {"band_width": 10}, "notes Sec. 6.6: the band's width w"),
    Reading("D_1min", {"band_dwell_s": 60.0}, "notes Sec. 6.6: the band's dwell D per position"),
    Reading("D_10min", {"band_dwell_s": 600.0}, "notes Sec. 6.6: the band's dwell D per position"),
    Reading("p_jump_0p3", {"p_jump": 0.3}, "notes Sec. 6.6: the band jumps instead of moving on"),
    Reading("p_unaligned_0", {"p_unaligned": 0.0}, "notes Sec. 6.6: share of misaligned random IOs"),
    Reading("p_unaligned_0p2", {"p_unaligned": 0.2}, "notes Sec. 6.6: share of misaligned random IOs"),
)
#: How the notebook's tables name each reading and prior.
LABELS = {"n2": "n2 prefix_to_i", "n3": "n3 n as % of sub-LUNs", "i2": "i2 i as IO count", "m2": "m2 total floor",
          "m3": "m3 sub-LUN floor", "m4_c2": "m4/c2 history", "f2": "f2 evict", "moves_2": "2 moves at once",
          "moves_4": "4 moves at once", "copy_minutes": "copy in minutes", "fifo_copies": "FIFO copies",
          "write_cache_on": "HDD write cache on", "per_set_cleaning": "FlashCache per-set cleaning",
          "q_0p5": "q=0.5", "q_max": "q=max", "w_3": "w=3", "w_10": "w=10", "D_1min": "D=1min", "D_10min": "D=10min",
          "p_jump_0p3": "p_jump=0.3", "p_unaligned_0": "p_unaligned=0", "p_unaligned_0p2": "p_unaligned=0.2",
          "hist_means": "histogram means"}
_OTF = ("OTF-AST", "OTF-AST without write-back")
_FC = ("FlashCache", "FlashCache pass 2")
#: The systems some ledger row reads (:func:`claim_rows`): all but the HDD alone, which only Figs. 7 and 9 draw (from
#: the central run). The readings and the priors, whose runs feed the ledger and the verdict tables only, run these
#: (tests check that no row reads the HDD alone).
LEDGER_POLICIES = tuple(q for q in POLICIES if q != "HDD only")
#: The testbed fields that act on background HDD IO only (copy chunks, syncs, FlashCache's cleaning): with user IO
#: alone at the disks, CFQ's user queue serves in arrival order, as the FIFO queue does, so static tiering and the
#: HDD alone are unchanged by them (tests check); the systems that send background IO to the disks.
_BACKGROUND_ONLY = frozenset({"measure.testbed.copy_scheduler"})
_WITH_BACKGROUND = _OTF + _FC


@section("otf_ast")
@dataclass(frozen=True)
class OtfAstExperimentParams:
    uses = ("traces",)
    #: Settings that change speed only, never a result (tests/test_otf_ast_experiment.py: the same rows for any
    #: thread count): a run differing from params.yaml only in these is still a paper-scale run (tieringlab.results).
    speed_only = ("threads",)

    replays: tuple[str, ...] = param(TRACES, "Table 2: the replayed MSR traces src1_0 and src1_1 (the shared "
                                     "'traces' section says twin or real file)", choices=TRACES)
    policies: tuple[str, ...] = param(POLICIES, "Sec. 4.1 / Table 3-5 and Figs. 7, 9: OTF-AST, its variant without "
                                      "SSD->HDD write-back, static tiering, FlashCache passes 1 and 2, HDD only",
                                      choices=POLICIES)
    scale: float = param(1.0, "twin scale: bytes (sub-LUNs, cache) and IO counts x scale, the structure kept "
                         "(1 = paper scale)", bounds=(1e-3, 1.0))
    seeds: int = param(5, "replications (twin and device draws) for the 95 % intervals (notes Sec. 6.5)",
                       bounds=(2, 64))
    ssd_subluns: int = param(24, "Sec. 4.1 (L133-137): at most 24 sub-LUNs on the SSD; static tiering places 24; "
                             "FlashCache gets the same 24 GB", bounds=(1, 300))
    measure: MeasureParams = param(MeasureParams(), "Sec. 4.1, Table 1, Table 5: the testbed and the response "
                                   "summaries every system shares (sublun_bytes at scale 1: a twin's is x scale)")
    policy: OtfAstSettings = param(OtfAstSettings(), "OTF-AST, Table 3 under the notes' recommended readings "
                                   "(Sec. 2.2); its variant without write-back runs the same")
    static_tiering: StaticTieringSettings = param(StaticTieringSettings(), "static tiering as evaluated (Table 3, "
                                                  "L130-137; notes Sec. 3.1)")
    flashcache: FlashCacheSettings = param(FlashCacheSettings(), "FlashCache as evaluated (Table 3; notes Sec. "
                                           "3.2-3.3; passes 1 and 2 by name)")
    readings: tuple[str, ...] = param(tuple(r.name for r in READINGS), "the alternative readings run side by side "
                                      "(notes Sec. 6.6; READINGS)", choices=tuple(r.name for r in READINGS))
    reading_seeds: int = param(3, "seeds per reading (the first seeds of the central run)", bounds=(2, 64))
    priors: tuple[str, ...] = param(tuple(r.name for r in PRIORS), "the twin prior sweep (notes Sec. 6.6; PRIORS)",
                                    choices=tuple(r.name for r in PRIORS))
    prior_seeds: int = param(2, "seeds per prior setting", bounds=(2, 64))
    threads: int = param(2, "speed only: (trace, seed) replications run at once, one thread each (the compiled "
                         "kernels release the GIL); every result is the same for any value", bounds=(1, 16))

    def __post_init__(self):
        """Cross-field checks (ValueError naming the parameter; every failed check is reported).

        Each system's parameters are built from the embedded ones (:func:`system_params`), so a combination no
        system accepts (``policy.n_top`` above ``measure.lun_subluns``) is reported here.

        ``scale`` multiplies the twins' IO rate, and Table 3's concentration test looks at each t interval's
        top n sub-LUNs: an interval with at most n IOs has them all in its top n, so it is always
        "concentrated" and every sub-LUN it touched is hot (under n1, n2 and n3 alike). At a scale that
        leaves no more than n IOs per interval (the twin's mean rate x scale x t, for the quieter replay) the
        hot test degenerates into "was touched": at paper settings (t = 60 s, n = 20) below scale 0.0023
        (src1_0's twin, 150 IO/s: 0.002 leaves 18 IOs per interval, all of them in the interval's top 20
        sub-LUNs)."""
        problems = []
        if "OTF-AST" not in self.policies:
            problems.append(f"policies must include 'OTF-AST' (the system under study); got {list(self.policies)}")
        for name in ("replays", "policies", "readings", "priors"):
            v = getattr(self, name)
            if len(set(v)) != len(v):
                problems.append(f"{name} has duplicates: {list(v)}")
        if self.reading_seeds > self.seeds or self.prior_seeds > self.seeds:
            problems.append(f"reading_seeds ({self.reading_seeds}) and prior_seeds ({self.prior_seeds}) must be "
                            f"<= seeds ({self.seeds})")
        try:
            for pol in dict.fromkeys(("OTF-AST", *self.policies)):
                system_params(self, pol)
        except (ValueError, TypeError) as exc:
            problems.append(f"policy: {exc}")
        else:
            q = self.policy
            n = q.n_top if q.hot_rule != "pct_of_subluns" else max(1, round(q.n_top / 100 * self.measure.lun_subluns))
            quiet = min(self.replays, key=lambda r: twin_model.OTF_TWINS[r].mean_iops)
            rate = twin_model.OTF_TWINS[quiet].mean_iops
            per_interval = rate * self.scale * q.t_s
            if per_interval <= n:
                problems.append(
                    f"scale: {self.scale:g} leaves about {per_interval:.1f} IOs per t_s = {q.t_s} s interval on "
                    f"{quiet} (its twin's {rate:g} IO/s x scale), no more than n_top = {n}: every such interval "
                    f"has all its IOs in its top n sub-LUNs, so it is always concentrated and every sub-LUN it "
                    f"touches is hot (Table 3's test degenerates); allowed at these policy.t_s and policy.n_top: "
                    f"scale > {n / (rate * q.t_s):.2g}")
        cross_field(problems)


def sublun_bytes(scale: float, unit: int = SUBLUN_BYTES) -> int:
    """The sub-LUN size of a twin at ``scale`` (the generator's rule: ``unit`` x scale, a 4 KiB multiple)."""
    return twin_model.scaled_sublun_bytes(scale, unit)


def system_params(p: OtfAstExperimentParams, policy: str, unit: int | None = None):
    """The parameters ``policy`` runs with: the section's embedded parameters its params type is made of (the
    shared ``measure``, its own settings; the fields its name fixes come from the registry), with the sub-LUN
    ``unit`` in bytes (default: the twin's at ``scale``). Each system gets exactly its own fields."""
    spec = registry.get(policy)
    knobs = {}
    for f in dataclasses.fields(p):
        v = getattr(p, f.name)
        if dataclasses.is_dataclass(v) and issubclass(spec.params_type, type(v)):
            knobs.update({g.name: getattr(v, g.name) for g in dataclasses.fields(v)})
    twin_unit = sublun_bytes(p.scale, p.measure.sublun_bytes)
    knobs["sublun_bytes"] = twin_unit if unit is None else unit
    if "load_scale" in {f.name for f in dataclasses.fields(spec.params_type)} and knobs["sublun_bytes"] == twin_unit:
        # issue 30 item 3: a twin at scale s has s x the sub-LUN bytes and IO counts; the testbed runs at s so each
        # disk carries the load, and a sub-LUN copies in the time, of scale 1 (MeasureParams.load_scale)
        knobs["load_scale"] = float(p.scale) * float(p.measure.load_scale)
    return registry.make_params(policy, knobs)


def _chosen(available: tuple[Reading, ...], names: tuple[str, ...]) -> list[Reading]:
    """The readings named in ``names``, in that order."""
    by_name = {r.name: r for r in available}
    return [by_name[n] for n in names]


def _seeds(seed: int, n: int) -> list[tuple[int, jax.Array]]:
    """Per replication: the twin seed and the device key, both from the one ``seed``."""
    base = jax.random.key(int(seed))
    out = []
    for r in range(int(n)):
        k = jax.random.fold_in(base, r)
        twin_seed = int(jax.random.randint(jax.random.fold_in(k, 0), (), 0, 2**31 - 1))
        out.append((twin_seed, jax.random.fold_in(k, 1)))
    return out


def load_trace(p: OtfAstExperimentParams, name: str, twin_seed: int, traces=None, **prior) -> xr.Dataset:
    """The trace of ``name`` with its replay window in attrs: the twin (``traces.source: twin``, default) or
    the real MSR file cut at Table 2's minutes from its first timestamp (``source: msr``; scale 1)."""
    src = (dataclasses.asdict(traces) if dataclasses.is_dataclass(traces) else dict(traces or {})).get("source", "twin")
    if src == "twin":
        if prior.get("band_share") == "max":
            # the notes' top prior q = 0.9 (Sec. 6.6) does not fit beside the fitted background share
            # (q + b <= 1, b = 0.12): "q=max" is the largest band share the twin's fitted b leaves, 1 - b
            prior = {**prior, "band_share": 1.0 - float(twin_model.OTF_TWINS[name].background_share)}
        return msr_twin(name, p.scale, seed=twin_seed, **prior)
    if prior:
        raise ValueError("twin priors apply to the synthetic twins only (traces.source: twin)")
    ds = load(name, traces)
    a, b = TABLE2_MIN[name]
    t0 = float(ds["time"].values[0])
    ds.attrs.update(replay_start_s=t0 + a * MINUTE, replay_end_s=t0 + b * MINUTE,
                    train_start_s=t0 + (2 * a - b) * MINUTE, trace_offset_min=0.0,
                    active_phases_s=[])
    return ds


QUANTILES = np.r_[np.arange(1, 100) / 100.0, 0.995, 0.999]


def run_one(p: OtfAstExperimentParams, ds: xr.Dataset, policy: str, key) -> dict:
    """One system on one trace: the Table 4/5 numbers, response quantiles and CDF, Fig. 6's residency,
    and (OTF-AST) the HDD utilisation during its demotion copies and the timing of its promotions.
    A reading runs as ``run_one(reading.apply(p), ...)``."""
    unit = _unit(p, ds)
    r = registry.run(policy, ds, [p.ssd_subluns * unit], params=system_params(p, policy, unit), key=key)
    return _summarise(p, ds, r.isel(capacity_bytes=0))


_FC_PASSES = {"FlashCache": 1, "FlashCache pass 2": 2}


def run_systems(p: OtfAstExperimentParams, ds: xr.Dataset, policies, key) -> dict[str, dict]:
    """:func:`run_one` of each of ``policies`` on one trace, ``{policy: row}``; FlashCache's passes 1 and 2 from one
    replay of its block LRU (:func:`~tieringlab.policies.otf_ast.flashcache.flashcache_passes`: the same rows as
    two :func:`run_one` calls, its first pass computed once)."""
    fc = [q for q in policies if q in _FC_PASSES]
    out = {}
    if len(fc) > 1:
        unit = _unit(p, ds)
        last = max(fc, key=_FC_PASSES.get)
        q = system_params(p, last, unit)
        registry.get(last).check_params(q)
        both = flashcache_passes(ds, [p.ssd_subluns * unit], q, key=key, passes=[_FC_PASSES[f] for f in fc])
        out = {f: _summarise(p, ds, both[_FC_PASSES[f]].isel(capacity_bytes=0)) for f in fc}
    return {pol: out[pol] if pol in out else run_one(p, ds, pol, key) for pol in policies}


def _summarise(p: OtfAstExperimentParams, ds: xr.Dataset, r: xr.Dataset) -> dict:
    """:func:`run_one`'s row from one system's result ``r`` at the SSD size."""
    resp = r["response_s"].values
    out = {"ssd_ratio": 100 * float(r["hit_ratio"]),
           "buffer_ratio": 100 * float(r["buffer_ratio"]),
           "dirty_write_hit_ratio": 100 * float(r["dirty_write_hit_ratio"]) if "dirty_write_hit_ratio" in r else 0.0,
           "mean_ms": 1e3 * float(r["mean_response_s"]),
           "first_ms": 1e3 * float(r["mean_response_first_s"]),
           "le_cut_ms": 1e3 * float(r["mean_response_le_cut_s"]),
           "hist_mean_ms": 1e3 * float(r["hist_mean_response_s"]),
           "hist_le_cut_ms": 1e3 * float(r["hist_mean_response_le_cut_s"]),
           "requests": int(r["requests"]),
           "quantile_ms": 1e3 * np.quantile(resp, QUANTILES) if resp.size else np.full(QUANTILES.size, np.nan),
           "cdf": r["response_cdf"].values,
           "cdf_first": _cdf(resp[r["replay_time_s"].values < p.measure.first_window_s], r["response_grid_s"].values),
           "response_grid_s": r["response_grid_s"].values,
           "read_share": 100 * float(1 - ds["is_write"].values[_replay_slice(ds)].mean())}
    L = float(r.attrs["replay_length_s"])
    n_min = int(np.ceil(L / MINUTE)) + 1
    out["resident"] = (r["resident_per_minute"].values[:n_min].astype(float) if "resident_per_minute" in r
                       else np.full(n_min, np.nan))
    if "move_up" in r:
        up = r["move_up"].values.astype(bool)
        sub = r["move_sub"].values
        ts, tc = r["move_start_s"].values, r["move_copy_end_s"].values
        real = (sub >= 0) & np.isfinite(ts)
        dem = real & ~up & np.isfinite(tc) & (tc > ts)
        if "hdd_user_util_per_s" in r:      # C9 on the user IO's own HDD busy time (copies cannot make it true)
            uu = r["hdd_user_util_per_s"].values[: max(int(np.ceil(L)), 1)]
            heavy = [float(uu[int(a):max(int(np.ceil(b)), int(a) + 1)].mean()) > float(uu.mean())
                     for a, b in zip(ts[dem], tc[dem])]
            out["demotion_saturated_share"] = float(np.mean(heavy)) if heavy else np.nan
        else:
            out["demotion_saturated_share"] = np.nan
        pro = real & up
        out["promotions"] = int(pro.sum())
        out["demotions"] = int((real & ~up).sum())
        lo, hi = (40 * MINUTE, 70 * MINUTE)
        out["promotions_40_70_share"] = float(np.mean((ts[pro] >= lo) & (ts[pro] < hi))) if pro.any() else np.nan
        meas = r["move_measured_copy_end_s"].values[real]
        plan = tc[real]
        ok = np.isfinite(meas) & np.isfinite(plan) & (plan > ts[real])
        out["copy_overrun_s"] = float(np.mean(meas[ok] - plan[ok])) if ok.any() else np.nan
        out["moves"] = np.stack([ts[real], np.where(np.isfinite(tc[real]), tc[real], L), up[real]], axis=1)
    else:
        out.update(demotion_saturated_share=np.nan, promotions=0, demotions=0, promotions_40_70_share=np.nan,
                   copy_overrun_s=np.nan, moves=np.zeros((0, 3)))
    out["hdd_util"] = r["hdd_util_per_s"].values[: int(np.ceil(L))]
    return out


def _cdf(x, grid):
    return np.searchsorted(np.sort(x), grid, side="right") / max(x.size, 1)


def _replay_slice(ds):
    t = ds["time"].values
    a, b = np.searchsorted(t, [ds.attrs["replay_start_s"], ds.attrs["replay_end_s"]])
    return slice(int(a), int(b))


_SCALARS = ("ssd_ratio", "buffer_ratio", "dirty_write_hit_ratio", "mean_ms", "first_ms", "le_cut_ms", "hist_mean_ms",
            "hist_le_cut_ms", "requests", "read_share", "demotion_saturated_share", "promotions", "demotions",
            "promotions_40_70_share", "copy_overrun_s", "footprint_ratio", "footprint_gib", "hot_lifetime_min",
            "hot_lifetime_median_min", "hot_short_io_share", "conc_fail_share")
_UNITS = {"ssd_ratio": "%", "buffer_ratio": "%", "dirty_write_hit_ratio": "%", "mean_ms": "ms", "first_ms": "ms",
          "le_cut_ms": "ms", "hist_mean_ms": "ms", "hist_le_cut_ms": "ms", "read_share": "%",
          "copy_overrun_s": "s", "quantile_ms": "ms", "cdf": "1", "cdf_first": "1", "resident": "sub-LUNs",
          "hdd_util": "1", "footprint_ratio": "1", "footprint_gib": "GiB", "hot_lifetime_min": "min",
          "hot_lifetime_median_min": "min", "hot_short_io_share": "1", "conc_fail_share": "1"}


def _assemble(rows: dict, coords: dict) -> xr.Dataset:
    """rows[(..coords..)] = run_one dict -> one Dataset over the coords (+ quantile, response_grid_s, minute)."""
    dims = list(coords)
    shape = [len(v) for v in coords.values()]
    first = next(iter(rows.values()))
    n_min = max(len(r["resident"]) for r in rows.values())
    data = {k: np.full(shape, np.nan) for k in _SCALARS}
    data["quantile_ms"] = np.full(shape + [QUANTILES.size], np.nan)
    data["cdf"] = np.full(shape + [first["cdf"].size], np.nan)
    data["cdf_first"] = np.full(shape + [first["cdf"].size], np.nan)
    data["resident"] = np.full(shape + [n_min], np.nan)
    n_sec = max(len(r["hdd_util"]) for r in rows.values())
    n_mv = max(1, max(len(r["moves"]) for r in rows.values()))
    data["hdd_util"] = np.full(shape + [n_sec], np.nan)
    data["moves"] = np.full(shape + [n_mv, 3], np.nan)
    index = {d: {v: i for i, v in enumerate(vals)} for d, vals in coords.items()}
    for key, r in rows.items():
        ix = tuple(index[d][k] for d, k in zip(dims, key))
        for k in _SCALARS:
            data[k][ix] = r[k]
        data["quantile_ms"][ix] = r["quantile_ms"]
        data["cdf"][ix] = r["cdf"]
        data["cdf_first"][ix] = r["cdf_first"]
        data["resident"][ix][: len(r["resident"])] = r["resident"]
        data["hdd_util"][ix][: len(r["hdd_util"])] = r["hdd_util"]
        data["moves"][ix][: len(r["moves"])] = r["moves"]
    ds = xr.Dataset({k: (dims, v) for k, v in data.items() if k in _SCALARS}, coords=coords)
    ds["quantile_ms"] = (dims + ["quantile"], data["quantile_ms"])
    ds["cdf"] = (dims + ["response_grid_s"], data["cdf"])
    ds["cdf_first"] = (dims + ["response_grid_s"], data["cdf_first"])
    ds["resident"] = (dims + ["minute"], data["resident"])
    ds["hdd_util"] = (dims + ["second"], data["hdd_util"])
    ds["moves"] = (dims + ["move", "move_field"], data["moves"])
    ds = ds.assign_coords(quantile=QUANTILES, response_grid_s=first["response_grid_s"], minute=np.arange(n_min),
                          second=np.arange(n_sec), move_field=["start_s", "copy_end_s", "up"])
    for k, u in _UNITS.items():
        ds[k].attrs["units"] = u
    return ds


def _replay_requests(name: str) -> float:
    """The requests a replay of ``name`` carries, from its twin's mean rate and Table 2's window: the jobs' order."""
    a, b = TABLE2_MIN[name]
    return float(twin_model.OTF_TWINS[name].mean_iops) * (b - a) * MINUTE


def _jobs(p: OtfAstExperimentParams, fn, args: list[tuple], trace_at: int = 0) -> dict:
    """``fn(*a)`` for each ``a`` of ``args`` (one replication each: its twin, then its systems), ``p.threads`` at
    once, the longest first (the replays with more requests, ``a[trace_at]`` naming the trace: no thread is left
    with a long job at the end); the dicts they return merged (their keys name the job). Each job draws from its own
    seeds only and the compiled kernels hold no shared state, so the rows depend neither on ``threads`` (tests
    check) nor on the order."""
    if int(p.threads) > 1 and len(args) > 1:
        args = sorted(args, key=lambda a: -_replay_requests(a[trace_at]))     # stable: ties keep their order
    if int(p.threads) <= 1 or len(args) <= 1:
        parts = [fn(*a) for a in args]
    else:
        with ThreadPoolExecutor(max_workers=min(int(p.threads), len(args))) as pool:
            parts = list(pool.map(lambda a: fn(*a), args))
    return {k: v for part in parts for k, v in part.items()}


def grid(p: OtfAstExperimentParams, seed: int = 0, traces=None) -> xr.Dataset:
    """The central configuration: traces x policies x seeds (Tables 4-5, Figs. 6-9)."""
    reps = _seeds(seed, p.seeds)
    bar = progress(total=len(p.replays) * len(reps) * len(p.policies), desc="OTF-AST grid", unit="run")

    def job(name, r, tseed, key):
        ds = load_trace(p, name, tseed, traces)
        pre = trace_preconditions(p, ds)
        out = {(name, pol, r): {**row, **pre} for pol, row in run_systems(p, ds, p.policies, key).items()}
        bar.update(len(p.policies))
        return out

    rows = _jobs(p, job, [(name, r, tseed, key) for name in p.replays for r, (tseed, key) in enumerate(reps)])
    bar.close()
    out = _assemble(rows, {"trace": list(p.replays), "policy": list(p.policies), "seed": list(range(p.seeds))})
    out.attrs.update(seed=int(seed), scale=float(p.scale), ssd_subluns=int(p.ssd_subluns))
    return out


def reading_policies(reading: Reading, policies) -> list[str]:
    """The systems a reading changes, of ``policies``: OTF-AST's variants for a reading of its own parameters
    (``policy.*``), FlashCache's passes for one of FlashCache's (``flashcache.*``), every system for one of the
    shared testbed (``measure.*``), except a testbed field that acts on background IO only (the copies' queue
    discipline, :data:`_BACKGROUND_ONLY`): the systems that send background IO to the disks."""
    heads = {k.split(".", 1)[0] for k in reading.overrides}
    keep = set(_OTF if "policy" in heads else ()) | set(_FC if "flashcache" in heads else ())
    testbed = {k for k in reading.overrides if k.split(".", 1)[0] == "measure"}
    if testbed:
        keep |= set(_WITH_BACKGROUND if testbed <= _BACKGROUND_ONLY else policies)
    return [q for q in policies if q in keep]


def readings(p: OtfAstExperimentParams, seed: int = 0, traces=None) -> xr.Dataset:
    """The systems each alternative reading changes (:func:`reading_policies`: OTF-AST's variants for its own
    readings, FlashCache for its cleaning, every system for the testbed's) and some ledger row reads
    (:data:`LEDGER_POLICIES`) under that reading, on the first ``reading_seeds`` replications of :func:`grid` (same
    twins and draws); dims (reading, trace, policy, seed), NaN where a reading did not rerun a system
    (:func:`_merged` takes it from the central run where the reading leaves it unchanged). The preconditions are
    measured once per replication for each distinct monitor the readings give (:func:`_monitor_key`)."""
    reps = _seeds(seed, p.reading_seeds)
    chosen = _chosen(READINGS, p.readings)
    by_rd = {rd.name: [q for q in reading_policies(rd, p.policies) if q in LEDGER_POLICIES] for rd in chosen}
    pols = [q for q in p.policies if any(q in v for v in by_rd.values())]
    bar = progress(total=len(p.replays) * len(reps) * sum(len(v) for v in by_rd.values()), desc="readings",
                   unit="run")

    def job(name, r, tseed, key):
        ds = load_trace(p, name, tseed, traces)
        out, pres = {}, {}
        for rd in chosen:
            q = rd.apply(p)
            mk = _monitor_key(q)          # a reading of the hot rule changes what the controller sees as hot
            if mk not in pres:
                pres[mk] = trace_preconditions(q, ds)
            run = by_rd[rd.name]
            for pol, row in run_systems(q, ds, run, key).items():
                out[(rd.name, name, pol, r)] = {**row, **pres[mk]}
            bar.update(len(run))
        return out

    rows = _jobs(p, job, [(name, r, tseed, key) for name in p.replays for r, (tseed, key) in enumerate(reps)])
    bar.close()
    return _assemble(rows, {"reading": list(p.readings), "trace": list(p.replays), "policy": pols,
                            "seed": list(range(p.reading_seeds))})


def priors(p: OtfAstExperimentParams, seed: int = 0, traces=None) -> xr.Dataset:
    """Every system some ledger row reads (:data:`LEDGER_POLICIES`) on twins drawn with each prior setting; dims
    (prior, trace, policy, seed), the systems not run NaN (a prior changes the twin: :func:`_merged` never takes them
    from the central run)."""
    reps = _seeds(seed, p.prior_seeds)
    run = [q for q in p.policies if q in LEDGER_POLICIES]
    bar = progress(total=len(p.priors) * len(p.replays) * len(reps) * len(run), desc="priors", unit="run")

    def job(pr, name, r, tseed, key):
        ds = load_trace(p, name, tseed, traces, **pr.overrides)
        pre = trace_preconditions(p, ds)
        out = {(pr.name, name, pol, r): {**row, **pre} for pol, row in run_systems(p, ds, run, key).items()}
        bar.update(len(run))
        return out

    rows = _jobs(p, job, [(pr, name, r, tseed, key) for pr in _chosen(PRIORS, p.priors) for name in p.replays
                          for r, (tseed, key) in enumerate(reps)], trace_at=1)
    bar.close()
    return _assemble(rows, {"prior": list(p.priors), "trace": list(p.replays), "policy": list(p.policies),
                            "seed": list(range(p.prior_seeds))})


# ------------------------------------------------------------------------------------------ tables, figures

PAPER_TABLE4 = {("src1_0", "OTF-AST"): 24, ("src1_1", "OTF-AST"): 46, ("src1_0", "static tiering"): 1,
                ("src1_1", "static tiering"): 1, ("src1_0", "FlashCache"): 7, ("src1_1", "FlashCache"): 37,
                ("src1_0", "FlashCache pass 2"): 19, ("src1_1", "FlashCache pass 2"): 37}
PAPER_TABLE5 = {("src1_0", "OTF-AST"): 45.4, ("src1_1", "OTF-AST"): 56.8,
                ("src1_0", "OTF-AST without write-back"): 38.2, ("src1_1", "OTF-AST without write-back"): 15.3,
                ("src1_0", "static tiering"): 50.8, ("src1_1", "static tiering"): 7.1, ("src1_0", "FlashCache"): 33.6,
                ("src1_1", "FlashCache"): 6.9,
                ("src1_0", "FlashCache pass 2"): 36.6, ("src1_1", "FlashCache pass 2"): 6.9}
PAPER_TABLE5_LE100 = {"OTF-AST": 9.9, "OTF-AST without write-back": 3.7, "static tiering": 6.6, "FlashCache": 6.4,
                      "FlashCache pass 2": 6.4}


def _ci_table(res: xr.Dataset, var: str, paper: dict | None = None) -> pd.DataFrame:
    m, h = mean_ci(res[var].values, axis=-1)
    rows = []
    for i, tr in enumerate(res["trace"].values):
        for j, pol in enumerate(res["policy"].values):
            row = {"trace": str(tr), "policy": str(pol), f"{var}": float(m[i, j]), f"{var}_ci95": float(h[i, j])}
            if paper is not None:
                row["paper"] = paper.get((str(tr), str(pol)), np.nan)
            rows.append(row)
    return pd.DataFrame(rows)


def table4(res: xr.Dataset) -> pd.DataFrame:
    """Table 4: SSD access ratio (%), OTF-AST's buffer hits, FlashCache's dirty write hits; mean and 95 % CI."""
    t = _ci_table(res, "ssd_ratio", PAPER_TABLE4)
    for var in ("buffer_ratio", "dirty_write_hit_ratio"):
        t = t.merge(_ci_table(res, var), on=["trace", "policy"])
    return t


def table5(res: xr.Dataset) -> pd.DataFrame:
    """Table 5: mean response (ms) over the window, its first minutes and the IOs <= the cut; raw and
    histogram means; mean and 95 % CI over seeds."""
    t = _ci_table(res, "mean_ms", PAPER_TABLE5)
    for var in ("first_ms", "le_cut_ms", "hist_mean_ms", "hist_le_cut_ms"):
        t = t.merge(_ci_table(res, var), on=["trace", "policy"])
    t["paper_le100"] = [PAPER_TABLE5_LE100.get(pol, np.nan) if tr == "src1_1" else np.nan
                        for tr, pol in zip(t["trace"], t["policy"])]
    return t


def fig6(res: xr.Dataset) -> xr.DataArray:
    """Fig. 6: sub-LUNs on the SSD per minute under OTF-AST (mean over seeds), per trace."""
    return res["resident"].sel(policy="OTF-AST").mean("seed")


def cdfs(res: xr.Dataset, first: bool = False) -> xr.DataArray:
    """Figs. 7-9: the response CDFs (share of IOs <= grid value), mean over seeds; ``first``: over the
    first ``first_window_min`` minutes only (Fig. 8's "OTF-AST, first 20 minutes" curve)."""
    return res["cdf_first" if first else "cdf"].mean("seed")


def util_timeline(res: xr.Dataset, trace: str = "src1_0", seed: int = 0) -> tuple[xr.DataArray, np.ndarray]:
    """Sec. 4.3 (L320-322, L340-348; claim C9): OTF-AST's HDD utilisation per second (mean over the disks)
    on one replication, and its copies as rows ``(start_s, copy_end_s, up)``."""
    r = res.sel(trace=trace, policy="OTF-AST", seed=seed)
    mv = r["moves"].values
    return r["hdd_util"], mv[np.isfinite(mv[:, 0])]


def copy_times(p: OtfAstExperimentParams) -> dict[str, float]:
    """Table 1 (C13): a 1 GB sub-LUN copied with no user IO, up and down (s), measured through the closed-loop
    event simulation the systems run on (kcopyd's chunks through the disk queues, then the buffer's sync)."""
    return sim.no_load_copy_times(p.measure.testbed, SUBLUN_BYTES)


# ------------------------------------------------------------------------------------------ preconditions

def footprint_bytes(offset, size, block: int) -> int:
    """Distinct bytes the requests ``[offset, offset + size)`` touch, in whole ``block``-aligned blocks (a request
    touching any byte of a block touches the block, as FlashCache caches it): the union of the requests' block
    ranges, merged after one sort."""
    offset = np.asarray(offset, np.int64)
    size = np.asarray(size, np.int64)
    keep = size > 0
    lo = offset[keep] // int(block)
    hi = (offset[keep] + size[keep] - 1) // int(block) + 1          # exclusive
    if lo.size == 0:
        return 0
    o = np.argsort(lo, kind="stable")
    lo, hi = lo[o], hi[o]
    reach = np.maximum.accumulate(hi)
    first = np.flatnonzero(np.r_[True, lo[1:] > reach[:-1]])        # each merged range's first request
    last = np.r_[first[1:] - 1, lo.size - 1]
    return int((reach[last] - lo[first]).sum()) * int(block)


def hot_runs(hot, cnt) -> tuple[np.ndarray, np.ndarray]:
    """Every maximal run of consecutive hot intervals of one sub-LUN in ``hot[k, s]``: ``(length, ios)``, the
    run's length in intervals and the IOs ``cnt[k, s]`` it carries. Runs cut by the first or last interval are
    counted as observed."""
    h = np.asarray(hot, bool)
    cnt = np.asarray(cnt, np.int64)
    S = h.shape[1]
    pad = np.zeros((1, S), np.int8)
    d = np.diff(np.concatenate([pad, h.astype(np.int8), pad]), axis=0)   # (K + 1, S): +1 a run starts, -1 it ends
    s_col, s_row = np.nonzero(d.T == 1)                                   # sorted by sub-LUN, then interval
    _, e_row = np.nonzero(d.T == -1)                                      # the same order: ends pair with starts
    P = np.concatenate([np.zeros((1, S), np.int64), np.cumsum(cnt, axis=0)])
    return e_row - s_row, P[e_row, s_col] - P[s_row, s_col]


def weighted_median(x, w) -> float:
    """The smallest ``x`` such that the ``x`` values at most it carry at least half of the total weight ``w``
    (0.0 when there is no weight)."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    if x.size == 0 or w.sum() <= 0:
        return 0.0
    o = np.argsort(x, kind="stable")
    cw = np.cumsum(w[o])
    return float(x[o][np.searchsorted(cw, 0.5 * cw[-1])])


def _unit(p: OtfAstExperimentParams, ds: xr.Dataset) -> int:
    """The sub-LUN size the systems run with on ``ds`` (a twin's is scaled)."""
    return sublun_bytes(p.scale, p.measure.sublun_bytes) if ds.attrs.get("source") == "twin" else p.measure.sublun_bytes


def trace_preconditions(p: OtfAstExperimentParams, ds: xr.Dataset) -> dict[str, float]:
    """The preconditions of :mod:`tieringlab.claims.otf_ast` on one replay window of ``ds``, under OTF-AST's
    parameters in ``p`` (a reading's hot rule changes the last two):

    - ``footprint_ratio``: distinct data the window touches, in FlashCache's blocks (:func:`footprint_bytes`), over
      the cache (``ssd_subluns`` sub-LUNs, as the systems get); ``footprint_gib`` the footprint (GiB);
    - ``hot_lifetime_min``: the IO-weighted median length (minutes) of the hot spots' lifetimes: the runs of
      consecutive hot intervals of a sub-LUN (:func:`hot_runs`, :func:`weighted_median`), hot as the controller
      decides it (:func:`tieringlab.policies.otf_ast.monitor.hot_matrix` on the counts it sees), that pass its
      duration filter (at least ``c`` intervals: the abstract's two checks, concentration and duration, make a hot
      region; shorter runs are what the duration check removes); 0 when no run passes;
      ``hot_lifetime_median_min`` the unweighted median of the same runs, ``hot_short_io_share`` the share of the
      hot runs' IOs in runs shorter than ``c``, for the notes;
    - ``conc_fail_share``: the share of the window's t intervals the concentration test rejects.
    """
    unit = _unit(p, ds)
    q = system_params(p, "OTF-AST", unit)
    rq = replay(ds, q)
    fp = footprint_bytes(rq["offset"], rq["size"], p.flashcache.block_bytes)
    t_s = int(q.t_s)
    K = max(1, int(np.ceil(rq["length_s"] / t_s)))
    window = int(q.m_window) if q.m_reading == "window" else t_s     # as the controller counts (system._precompute)
    cnt = interval_counts(rq["sub"], rq["time"], int(q.lun_subluns), t_s, window, K)
    hot, conc = hot_matrix(cnt, q)
    length, ios = hot_runs(hot, cnt)
    spot = length >= int(q.c_intervals)
    minutes = length[spot] * t_s / MINUTE
    return {"footprint_ratio": fp / (p.ssd_subluns * unit), "footprint_gib": fp / 2**30,
            "hot_lifetime_min": weighted_median(minutes, ios[spot]),
            "hot_lifetime_median_min": float(np.median(minutes)) if minutes.size else 0.0,
            "hot_short_io_share": float(ios[~spot].sum() / ios.sum()) if ios.sum() else 0.0,
            "conc_fail_share": float(1.0 - np.mean(conc))}


#: The fields of OTF-AST's parameters :func:`trace_preconditions` reads (the monitor's: interval, window, hot rule,
#: duration check; the LUN's shape).
_MONITOR_FIELDS = ("t_s", "m_window", "m_reading", "hot_rule", "i_pct", "i_reading", "n_top", "c_intervals",
                   "lun_subluns", "sublun_bytes")


def _monitor_key(p: OtfAstExperimentParams) -> tuple:
    """What :func:`trace_preconditions` of ``p`` depends on besides the trace (whose sub-LUN size is the same under
    every reading): readings with equal keys have equal preconditions on one trace (tests check), so
    :func:`readings` measures them once per key and replication."""
    q = system_params(p, "OTF-AST")
    return (tuple(getattr(q, f) for f in _MONITOR_FIELDS), int(p.flashcache.block_bytes), int(p.ssd_subluns))


def preconditions_table(res: xr.Dataset) -> pd.DataFrame:
    """Per trace and seed: each precondition's value (from OTF-AST's rows), its threshold and whether it holds."""
    reg = claim_registry()
    rows = []
    for var, ids in _PRE_VARS:
        if var not in res:
            continue
        for tr in res["trace"].values:
            tr = str(tr)
            if tr not in ids:
                continue
            claim = reg[ids[tr]]
            for k, v in enumerate(res[var].sel(trace=tr, policy="OTF-AST").values):
                rows.append({"precondition": ids[tr], "trace": tr, "seed": k, "value": float(v), "unit": claim.unit,
                             "threshold": claim.check.describe(claim.unit), "holds": claim.check.passes(float(v))})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------------ claims

def _per_seed(res, tr, pol, var) -> np.ndarray:
    return np.asarray(res[var].sel(trace=tr, policy=pol).values, np.float64)


def _paired(res, tr, a, b, var):
    """Mean and 95 % half-width over seeds of ``var(a) - var(b)`` on trace ``tr`` (paired by seed)."""
    return paired_diff(_per_seed(res, tr, a, var), _per_seed(res, tr, b, var))


def _diff(res, tr, a, b, var) -> np.ndarray:
    """Per seed: ``var(a) - var(b)`` on trace ``tr`` (same twin and device draws)."""
    return _per_seed(res, tr, a, var) - _per_seed(res, tr, b, var)


def _m(res, tr, pol, var):
    return float(res[var].sel(trace=tr, policy=pol).mean("seed"))


def _crossing(qa: np.ndarray, qb: np.ndarray, levels: np.ndarray) -> float:
    """The percentile above which quantiles ``qa`` exceed ``qb``: the last level where a <= b (Fig. 9's crossing)."""
    below = qa <= qb
    if not below.any():
        return 0.0
    if below.all():
        return 100.0
    return float(100 * levels[int(np.flatnonzero(below)[-1])])


def _crossing_percentile(res, tr, a, b) -> float:
    """The percentile above which ``a``'s response quantiles exceed ``b``'s (mean quantiles over seeds):
    the last quantile level where a <= b before it stays above (Fig. 9's crossing)."""
    qa = res["quantile_ms"].sel(trace=tr, policy=a).mean("seed").values
    qb = res["quantile_ms"].sel(trace=tr, policy=b).mean("seed").values
    return _crossing(qa, qb, res["quantile"].values)


#: The per-trace precondition measurements of :func:`trace_preconditions` and their rows.
_PRE_VARS = (("footprint_ratio", C.PRE_FOOTPRINT), ("hot_lifetime_min", C.PRE_LIFETIME),
             ("conc_fail_share", C.PRE_CONC_FAIL))


def claim_rows(res: xr.Dataset, copy_s: dict | None = None) -> dict[str, tuple[float | bool, str, np.ndarray | None]]:
    """Each row of :mod:`tieringlab.claims.otf_ast` this result can decide: ``(value, note, samples)``, ``samples``
    the per-seed values (the same statistic on each replication; paired by seed where two systems are compared)
    when the value is a statistic over seeds, else None."""
    trs = set(res["trace"].values.tolist())
    pols = set(res["policy"].values.tolist())
    out: dict[str, tuple[float | bool, str, np.ndarray | None]] = {}
    n = res.sizes["seed"]
    note = f"{n} seeds, twin scale {res.attrs.get('scale', 1.0):g}"

    def have(*ps):
        return all(q in pols for q in ps)

    def ci(m, h):
        return f"{m:.3g} ± {h:.2g}"

    # ------------------------------------------------------------------ preconditions (per twin)
    if "OTF-AST" in pols:
        for var, ids in _PRE_VARS:
            if var not in res:
                continue
            for tr in sorted(trs & set(ids)):
                s = _per_seed(res, tr, "OTF-AST", var)
                extra = ""
                if var == "footprint_ratio" and "footprint_gib" in res:
                    extra = f"footprint {float(res['footprint_gib'].sel(trace=tr, policy='OTF-AST').mean()):.3g} " \
                            f"GiB (cache x scale); "
                out[ids[tr]] = (float(np.mean(s)), f"{extra}per seed {np.round(s, 3).tolist()}; {note}", s)
    # ------------------------------------------------------------------ Table 4
    if have("OTF-AST", "static tiering", "FlashCache", "FlashCache pass 2"):
        lows, per = [], []
        for tr in sorted(trs):
            for rival in ("static tiering", "FlashCache", "FlashCache pass 2"):
                m, h = _paired(res, tr, "OTF-AST", rival, "ssd_ratio")
                lows.append((m - h, tr, rival))
                per.append(_diff(res, tr, "OTF-AST", rival, "ssd_ratio"))
        v, tr, rival = min(lows)
        out[C.C1_ORDER] = (v, f"tightest: {tr} vs {rival}; {note}", np.min(per, axis=0))
    for tr, cid in (("src1_0", C.C1_SRC10), ("src1_1", C.C1_SRC11)):
        if tr in trs and "OTF-AST" in pols:
            s = _per_seed(res, tr, "OTF-AST", "ssd_ratio")
            m, h = interval(s)
            out[cid] = (m, f"95 % CI ±{h:.2g}; {note}", s)
    if "static tiering" in pols:
        v = [_m(res, tr, "static tiering", "ssd_ratio") for tr in sorted(trs)]
        out[C.C2_STATIC] = (max(v), ", ".join(f"{tr} {x:.2f} %" for tr, x in zip(sorted(trs), v)) + f"; {note}",
                            None)
        paper = {"src1_0": 50.8, "src1_1": 7.1}
        dev = [(100 * abs(_m(res, tr, "static tiering", "mean_ms") - paper[tr]) / paper[tr], tr) for tr in sorted(trs)]
        out[C.CAL_STATIC_RESP] = (max(dev)[0], ", ".join(f"{tr} {_m(res, tr, 'static tiering', 'mean_ms'):.1f} ms"
                                                          for tr in sorted(trs)) + f"; {note}", None)
    if "FlashCache" in pols:
        paper = {"src1_0": 7.0, "src1_1": 37.0}
        dev = [abs(_m(res, tr, "FlashCache", "ssd_ratio") - paper[tr]) for tr in sorted(trs)]
        out[C.C3_FC1] = (max(dev), ", ".join(f"{tr} {_m(res, tr, 'FlashCache', 'ssd_ratio'):.1f} %"
                                             for tr in sorted(trs)) + f"; {note}", None)
    if have("FlashCache", "FlashCache pass 2"):
        if "src1_0" in trs:
            m, h = _paired(res, "src1_0", "FlashCache pass 2", "FlashCache", "ssd_ratio")
            out[C.C3_FC2_RISE] = (m - h, f"rise {m:.2f} ± {h:.2g} points; {note}",
                                  _diff(res, "src1_0", "FlashCache pass 2", "FlashCache", "ssd_ratio"))
            out[C.C3_DWH_P1] = (_m(res, "src1_0", "FlashCache", "dirty_write_hit_ratio"),
                                f"pass 2: {_m(res, 'src1_0', 'FlashCache pass 2', 'dirty_write_hit_ratio'):.2f} %; "
                                f"{note}", _per_seed(res, "src1_0", "FlashCache", "dirty_write_hit_ratio"))
            out[C.C3_DWH] = (_m(res, "src1_0", "FlashCache pass 2", "dirty_write_hit_ratio"),
                             f"pass 1: {_m(res, 'src1_0', 'FlashCache', 'dirty_write_hit_ratio'):.2f} %; {note}",
                             _per_seed(res, "src1_0", "FlashCache pass 2", "dirty_write_hit_ratio"))
            d = _diff(res, "src1_0", "FlashCache pass 2", "FlashCache", "mean_ms")
            m2, h2 = interval(d)
            out[C.C15_FC] = (m2 - h2, f"FC2 - FC1 {m2:.2f} ± {h2:.2g} ms (hits +{m:.2f} points); {note}", d)
        if "src1_1" in trs:
            d = _diff(res, "src1_1", "FlashCache pass 2", "FlashCache", "ssd_ratio")
            m, h = interval(d)
            out[C.C3_FC2_FLAT] = (abs(m) + h, f"change {m:.2f} ± {h:.2g} points; {note}", d)
            out[C.C3_DWH_SRC11] = (max(_m(res, "src1_1", q, "dirty_write_hit_ratio")
                                       for q in ("FlashCache", "FlashCache pass 2")), note, None)
    if "OTF-AST" in pols:
        for tr, cid in (("src1_0", C.C4_BUF10), ("src1_1", C.C4_BUF11)):
            if tr in trs:
                both_ratios = _m(res, tr, "OTF-AST", "ssd_ratio") + _m(res, tr, "OTF-AST", "buffer_ratio")
                out[cid] = (_m(res, tr, "OTF-AST", "buffer_ratio"), f"SSD + buffer {both_ratios:.1f} %; {note}",
                            _per_seed(res, tr, "OTF-AST", "buffer_ratio"))
    # ------------------------------------------------------------------ Table 5: paired per seed
    if have("OTF-AST", "static tiering") and "src1_0" in trs:
        ot, st = _per_seed(res, "src1_0", "OTF-AST", "mean_ms"), _per_seed(res, "src1_0", "static tiering", "mean_ms")
        g = 100.0 * (st - ot) / st                      # = -paired_gap_pct(ot, st) per seed
        m, h = paired_gap_pct(ot, st)
        out[C.C6_GAP] = (-m, f"paired gap {ci(-m, h)} % (static {st.mean():.1f} ms, OTF-AST {ot.mean():.1f} ms); "
                             f"{note}", g)
        m, h = paired_diff(ot, st)
        out[C.C6_BEATS] = (m + h, f"OTF-AST - static {m:.2f} ± {h:.2g} ms; {note}", ot - st)
    if have("OTF-AST", "FlashCache", "FlashCache pass 2") and "src1_0" in trs:
        pairs = (("FlashCache", "OTF-AST"), ("FlashCache pass 2", "OTF-AST"))
        ups = [_paired(res, "src1_0", a, b, "mean_ms") for a, b in pairs]
        out[C.C7_FC_BEATS] = (max(m + h for m, h in ups), "FC1 - OTF, FC2 - OTF: " +
                              ", ".join(f"{m:.2f} ± {h:.2g} ms" for m, h in ups) + f"; {note}",
                              np.max([_diff(res, "src1_0", a, b, "mean_ms") for a, b in pairs], axis=0))
        # the paper's first-20-minute comparison: OTF-AST over 0-20 min against FC2 over the window
        d = _per_seed(res, "src1_0", "OTF-AST", "first_ms") - _per_seed(res, "src1_0", "FlashCache pass 2", "mean_ms")
        m, h = interval(d)
        fair = _m(res, "src1_0", "FlashCache pass 2", "first_ms")
        out[C.C8_FIRST20] = (m + h, f"OTF-AST 0-20 min {_m(res, 'src1_0', 'OTF-AST', 'first_ms'):.1f} ms vs FC2 "
                             f"window {_m(res, 'src1_0', 'FlashCache pass 2', 'mean_ms'):.1f} ms (FC2 0-20 min: "
                             f"{fair:.1f} ms); {note}", d)
        qs = res["quantile"].values
        idx = [int(np.argmin(np.abs(qs - q))) for q in (0.5, 0.8)]

        def factors(qa, fcs):
            f = []
            for qb in fcs:
                for i in idx:
                    a, b = float(qa[i]), float(qb[i])
                    f.append(max(a / b, b / a) if a > 0 and b > 0 else np.inf)
            return f

        def q_of(pol):
            return res["quantile_ms"].sel(trace="src1_0", policy=pol)

        facs = factors(q_of("OTF-AST").mean("seed").values,
                       [q_of(fc).mean("seed").values for fc in ("FlashCache", "FlashCache pass 2")])
        per = [max(factors(q_of("OTF-AST").values[k], [q_of(fc).values[k] for fc in ("FlashCache",
                                                                                      "FlashCache pass 2")]))
               for k in range(n)]
        out[C.C9_CDF] = (max(facs), f"factors at P50/P80 vs pass 1, pass 2: {np.round(facs, 2).tolist()}; {note}",
                         np.asarray(per))
    if "OTF-AST" in pols and "src1_0" in trs:
        sat = _per_seed(res, "src1_0", "OTF-AST", "demotion_saturated_share")
        if np.isfinite(sat).any():         # only an engine that reports the user IO's own utilisation measures it
            out[C.C9_UTIL] = (float(np.nanmean(sat)), f"{_m(res, 'src1_0', 'OTF-AST', 'demotions'):.0f} demotions "
                                                      f"per run on average; {note}", sat)
        in_40_70 = _per_seed(res, "src1_0", "OTF-AST", "promotions_40_70_share")
        out[C.C12_SRC10] = (float(np.nanmean(in_40_70)),
                            f"{_m(res, 'src1_0', 'OTF-AST', 'promotions'):.0f} promotions per run; {note}", in_40_70)
    if have("OTF-AST", "OTF-AST without write-back") and "src1_0" in trs:
        d = _diff(res, "src1_0", "OTF-AST without write-back", "OTF-AST", "mean_ms")
        m, h = interval(d)
        out[C.C8_SKIP] = (m + h, f"skip - OTF-AST {m:.2f} ± {h:.2g} ms; {note}", d)
        if "FlashCache pass 2" in pols:
            sk = _per_seed(res, "src1_0", "OTF-AST without write-back", "mean_ms")
            fc = _per_seed(res, "src1_0", "FlashCache pass 2", "mean_ms")
            m, h = paired_gap_pct(sk, fc)
            out[C.C8_SKIP_FC2] = (abs(m), f"paired gap (skip - FC2) / FC2 {ci(m, h)} % (skip {sk.mean():.1f} ms, "
                                          f"FC2 {fc.mean():.1f} ms); {note}", 100.0 * (sk - fc) / fc)
    if "src1_1" in trs and have("OTF-AST", "static tiering", "FlashCache pass 2"):
        ot = _per_seed(res, "src1_1", "OTF-AST", "mean_ms")
        ratios, per = [], []
        for b in ("static tiering", "FlashCache pass 2"):
            m, h = paired_gap_pct(ot, _per_seed(res, "src1_1", b, "mean_ms"))
            ratios.append((1 + m / 100, h / 100))
            per.append(ot / _per_seed(res, "src1_1", b, "mean_ms"))
        out[C.C10_WORSE] = (min(r for r, _ in ratios), f"OTF-AST {ot.mean():.1f} ms; paired ratios x{ci(*ratios[0])} "
                            f"static, x{ci(*ratios[1])} FC2; {note}", np.min(per, axis=0))
        pairs = [("OTF-AST", b) for b in ("static tiering", "FlashCache pass 2")]
        lows = [_paired(res, "src1_1", a, b, "le_cut_ms") for a, b in pairs]
        out[C.C10_LE100] = (min(m - h for m, h in lows),
                            ", ".join(f"{m:.2f} ± {h:.2g} ms" for m, h in lows) + f"; {note}",
                            np.min([_diff(res, "src1_1", a, b, "le_cut_ms") for a, b in pairs], axis=0))
        if "OTF-AST without write-back" in pols:
            sk = _per_seed(res, "src1_1", "OTF-AST without write-back", "mean_ms")
            m, h = paired_gap_pct(sk, ot)
            out[C.C11_SKIP] = (1 + m / 100, f"paired ratio skip / OTF-AST {ci(1 + m / 100, h / 100)} (skip "
                                            f"{sk.mean():.1f} ms, OTF-AST {ot.mean():.1f} ms); {note}", sk / ot)
            pairs = [("OTF-AST without write-back", b) for b in ("static tiering", "FlashCache pass 2")]
            ups = [_paired(res, "src1_1", a, b, "le_cut_ms") for a, b in pairs]
            out[C.C11_LE100] = (max(m + h for m, h in ups),
                                ", ".join(f"{m:.2f} ± {h:.2g} ms" for m, h in ups) + f"; {note}",
                                np.max([_diff(res, "src1_1", a, b, "le_cut_ms") for a, b in pairs], axis=0))
            qa = res["quantile_ms"].sel(trace="src1_1", policy="OTF-AST without write-back").values
            qb = res["quantile_ms"].sel(trace="src1_1", policy="FlashCache pass 2").values
            per = np.array([_crossing(qa[k], qb[k], res["quantile"].values) for k in range(n)])
            out[C.C11_CROSS] = (_crossing_percentile(res, "src1_1", "OTF-AST without write-back", "FlashCache pass 2"),
                                f"on the mean quantiles; {note}", per)
    if "src1_1" in trs and "OTF-AST" in pols:
        res_m = res["resident"].sel(trace="src1_1", policy="OTF-AST")
        minutes = res["minute"].values
        win = (minutes >= 20) & (minutes < 80)
        per = (res_m.values[:, win] >= 15).mean(axis=1)
        out[C.C12_SRC11] = (float(per.mean()), f"mean over seeds of the share of minutes 20-79 with >= 15 sub-LUNs; "
                                               f"{note}", per)
    if "read_share" in res:
        paper = {"src1_0": 11.0, "src1_1": 99.0}
        dev = [abs(float(res["read_share"].sel(trace=tr).mean()) - paper[tr]) for tr in sorted(trs)]
        out[C.C14_READS] = (max(dev), ", ".join(f"{tr} {float(res['read_share'].sel(trace=tr).mean()):.2f} %"
                                                for tr in sorted(trs)) + f"; {note}", None)
    if copy_s is not None:
        out[C.C13_UP] = (copy_s["up"], "no-load copy through the HDD and SSD queues", None)
        out[C.C13_DOWN] = (copy_s["down"], "no-load copy through the HDD and SSD queues", None)
    return out


def claim_values(res: xr.Dataset, copy_s: dict | None = None) -> dict[str, tuple[float | bool, str]]:
    """The reproduced value of each row of :mod:`tieringlab.claims.otf_ast` this result can decide, with its note
    (:func:`claim_rows` without the per-seed samples)."""
    return {cid: (v, note) for cid, (v, note, _s) in claim_rows(res, copy_s).items()}


def _merged(central: xr.Dataset, alt: xr.Dataset, dim: str, v) -> xr.Dataset:
    """The run of ``alt`` at ``dim = v`` with the policies it lacks taken from ``central``'s first seeds where they
    are unchanged (a reading leaves the systems outside :func:`reading_policies` as they are: the readings of
    OTF-AST's parameters run its variants only), NaN where they are not (a twin prior changes every system; a
    system no ledger row reads is not rerun), in ``central``'s policy order. The per-run series whose length
    depends on the run (copies, seconds) decide no claim: dropped so the runs line up along ``policy``."""
    ragged = ("move", "move_field", "second")
    central_c = central.drop_dims([d for d in ragged if d in central.dims])
    a = alt.drop_dims([d for d in ragged if d in alt.dims]).sel({dim: v})
    if dim in a.coords:
        a = a.drop_vars(dim)
    n = a.sizes["seed"]
    c = central_c.isel(seed=slice(0, n))
    ran = [q for q in a["policy"].values if bool(np.isfinite(a["mean_ms"].sel(policy=q).values).any())]
    a = a.sel(policy=ran)                 # a reading leaves the systems it does not change unrun (NaN)
    missing = [q for q in c["policy"].values if q not in ran]
    if dim == "prior":
        changed = set(missing)
    else:
        rd = {r.name: r for r in READINGS}.get(str(v))
        changed = set(reading_policies(rd, missing)) if rd is not None else set()
    parts = [a, c.sel(policy=[q for q in missing if q not in changed])]
    if changed:
        parts.append(xr.full_like(c.sel(policy=[q for q in missing if q in changed]), np.nan, dtype=float))
    merged = xr.concat([x for x in parts if x.sizes["policy"]], dim="policy") if missing else a
    merged = merged.sel(policy=[q for q in central["policy"].values])
    merged.attrs.update(central.attrs)
    return merged


#: The measurement reading of the response rows: Table 5's means taken from the driver's 10 us - 1 s histogram (IOs
#: slower than 1 s clipped into its top bin, notes Sec. 1.7) instead of the raw per-IO means, on the same runs.
HIST_MEANS = "hist_means"


def _hist_means(res: xr.Dataset) -> xr.Dataset:
    """``res`` with the window's and the <= cut means replaced by the histogram's (:data:`HIST_MEANS`)."""
    out = res.copy()
    out["mean_ms"], out["le_cut_ms"] = res["hist_mean_ms"], res["hist_le_cut_ms"]
    return out


def claims_by_reading(central: xr.Dataset, copy_s: dict | None = None, **alts: xr.Dataset) -> dict[str, dict]:
    """Every row's ``(value, note, samples)`` (:func:`claim_rows`) under the default reading (``central``), under
    :data:`HIST_MEANS` (the same runs, histogram means) and under each reading of the runs
    ``alts`` (``dim=dataset``: ``reading=`` :func:`readings`, ``prior=``
    :func:`priors`), keyed by the reading's name (``"default"`` for ``central``). Each reading's values are on the
    first seeds ``alts`` ran, the policies it did not rerun taken from ``central`` (:func:`_merged`)."""
    out = {DEFAULT.name: claim_rows(central, copy_s), HIST_MEANS: claim_rows(_hist_means(central), copy_s)}
    for dim, alt in alts.items():
        if alt is None:
            continue
        for v in alt[dim].values:
            out[str(v)] = claim_rows(_merged(central, alt, dim, v))
    return out


def ledger_entries(by_reading: dict[str, dict]) -> dict[str, dict]:
    """What the notebook records per row (``out.claim(cid, value, note, readings=..., samples=...)``), from
    :func:`claims_by_reading`: the default reading's value, note and per-seed samples, and

    - a ``claim`` row: its value under every other reading;
    - a ``precondition`` row: its value under each reading that changes what it measures (its per-seed values
      differ from the default run's on the same seeds: a reading of the hot rule, a twin prior); under the
      others it keeps its default value, which is measured on more seeds;
    - calibration and sanity rows: the default value only (they describe the fit or the plant, not a reading).
    """
    reg = claim_registry()
    base = by_reading[DEFAULT.name]
    out = {}
    for cid, (value, note, samples) in base.items():
        kind = reg[cid].kind
        others = {}
        for name, rows in by_reading.items():
            if name == DEFAULT.name or cid not in rows:
                continue
            v, _note, s = rows[cid]
            if kind == "claim":
                others[name] = v
            elif kind == "precondition" and samples is not None and s is not None:
                same = np.allclose(np.asarray(s, float), np.asarray(samples, float)[: len(s)], equal_nan=True)
                if not same:
                    others[name] = v
        out[cid] = {"value": value, "note": note, "readings": others or None,
                    "samples": None if samples is None else [float(x) for x in np.asarray(samples, float)]}
    return out


def verdict_flips(central: xr.Dataset, alt: xr.Dataset, dim: str) -> pd.DataFrame:
    """Each claim's verdict in the central run (the default reading) and under each value of ``dim``
    (``reading`` or ``prior``: names of :data:`READINGS` / :data:`PRIORS`, shown by their :data:`LABELS`), with
    the claims whose verdict flips marked (:func:`tieringlab.readings.verdicts`, :func:`~tieringlab.readings.flips`).
    ``alt`` may hold only some policies (the readings run the OTF-AST variants): the missing ones are taken from
    ``central``'s first seeds."""
    reg = claim_registry()
    base = claim_values(central)
    rows = []
    for v in alt[dim].values:
        name = str(v)
        for cid, (val, _note) in claim_values(_merged(central, alt, dim, v)).items():
            claim = reg[cid]
            if getattr(claim, "kind", "claim") != "claim":
                continue
            v0 = base.get(cid, (None, ""))[0]
            by_reading = verdicts(claim, {DEFAULT.name: v0, name: val})
            rows.append({dim: LABELS.get(name, name), "claim": cid, "central": by_reading[DEFAULT.name],
                         "value_central": v0, "verdict": by_reading[name], "value": val,
                         "flips": bool(flips(by_reading))})
    return pd.DataFrame(rows)


def readings_summary(res_readings: xr.Dataset) -> pd.DataFrame:
    """Per reading (its label), trace and OTF-AST variant: the SSD and buffer ratios (%) and the mean response
    over the window and over the IOs <= the cut (ms), mean over seeds."""
    df = res_readings[["ssd_ratio", "buffer_ratio", "mean_ms", "le_cut_ms"]].mean("seed").to_dataframe().reset_index()
    df["reading"] = [LABELS.get(str(r), str(r)) for r in df["reading"]]
    return df


def stable_verdicts(*tables: pd.DataFrame) -> dict[str, bool]:
    """Per claim of the :func:`verdict_flips` ``tables``: whether no reading or prior there flips its verdict."""
    robust: dict[str, bool] = {}
    for df in tables:
        if not len(df):
            continue
        for cid, g in df.groupby("claim"):
            robust[cid] = robust.get(cid, True) and not bool(g["flips"].any())
    return robust


def prior_band(res_priors: xr.Dataset, central: xr.Dataset) -> pd.DataFrame:
    """OTF-AST's SSD ratio over the prior sweep (notes Sec. 6.7: report a band with the paper's value)."""
    rows = []
    for tr in central["trace"].values:
        vals = [float(central["ssd_ratio"].sel(trace=tr, policy="OTF-AST").mean())]
        vals += [float(res_priors["ssd_ratio"].sel(trace=tr, policy="OTF-AST", prior=pr).mean())
                 for pr in res_priors["prior"].values]
        rows.append({"trace": str(tr), "central": vals[0], "band_low": min(vals), "band_high": max(vals),
                     "paper": PAPER_TABLE4.get((str(tr), "OTF-AST"), np.nan)})
    return pd.DataFrame(rows)
