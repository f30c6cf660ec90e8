"""notebooks/02_vfrm_single_vm.ipynb: vFRM against LRU, ARC and CAR, one VM at a time.

vFRM paper Sec. 5.2 (thesis Sec. 4.2.3.2): each trace is replayed alone as the workload of one VM.

- **Fig. 6** (thesis Fig. 20): IO hit ratio (the fraction of IO requests served by Flash, Sec. 5.2.1)
  against the Flash size, "ranging from 100MB to 4GB", for vFRM (:func:`tieringlab.policies.vfrm.vfrm`,
  1 MB bins, 5-minute epochs, λ = 1) and the 4 KB page caches LRU, ARC, CAR
  (:mod:`tieringlab.policies.caching`), each run by name through :mod:`tieringlab.policies.registry`.
  vFRM runs under every rule of ``idle_rules`` for bins with ``T_i = 0`` (choice 3 of
  :mod:`tieringlab.policies.vfrm`: ``keep``, the default, ``recency``, ``disk``), side by side.
- **Fig. 7** (thesis Fig. 21): the IO cost ``C_IO`` of Eq. 4 (:mod:`tieringlab.policies.iocost`, Table 2
  operation counts priced at the Table 3 latencies) at a Flash size of 4 GB, and vFRM's cost relative
  to LRU's (the paper prints it on the vFRM bars; the text gives mds0's: 31.87 %). The text calls that
  percentage "the relative improvement of the number of IOs", the caption "the relative IO costs with
  respect to LRU": we follow the caption, ``C_IO(vFRM) / C_IO(LRU)``, the quantity the figure plots.

Scale. A twin at scale ``s`` (``traces.scale``, capped by ``traces.max_wss_gb``) has ``s`` times the
bytes and requests of the real trace (its per-bin statistics kept), so it is replayed against ``s``
times each paper Flash size, as notebook 01 measures Table 1's LRU hit ratio with an ``s x 1 GB``
cache. Hit ratios and cost ratios are compared with the paper as they are; absolute costs are also
given divided by ``s`` ("paper scale"). The real CloudPhysics trace (an extra single-VM case, issue 5)
has ``s = 1``.

Issue 34. Every Fig. 7 cost is also re-priced under the accounting readings (:func:`accounting_costs`: dirty data
flushed at the trace's end, vFRM's hits priced per 4 KB page; no new simulation), and :func:`twin_sweeps` replays
traces regenerated under each twin reading (read ratio, request sizes, cold-data packing;
:data:`tieringlab.claims.vfrm.TWIN_READINGS`): the read ratios (``twin_readings_every_trace``) every paper trace, on the
main sweep's own runs (their twins differ in ``is_write`` only and no placement, hit or eviction reads it:
:func:`run_trace_writes`), the others ``twin_reading_traces`` (mds0) at the Fig. 7 size. :func:`verdict_flips` lists
each row's verdict under every reading beside the default's.

Units: flash sizes are binary megabytes (MB = 2^20 bytes, the unit of the 1 MB bins; "4GB" = 4096 MB),
IO cost in seconds.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from tieringlab.claims import vfrm as C
from tieringlab.params import MAX_MIB, cross_field, increasing, param, section
from tieringlab.policies import registry
from tieringlab.policies.caching import CachingParams
from tieringlab.policies.iocost import (
    ACCESS_NAMES,
    CACHE_COST,
    CONTINUATION_NAMES,
    IO_PRICINGS,
    CostModel,
    io_cost,
    update_cost,
)
from tieringlab.policies.vfrm import IDLE_BINS, VfrmParams, bin_trace
from tieringlab.progress import progress
from tieringlab.readings import Reading, grid, run_each, select
from tieringlab.traces import twins
from tieringlab.traces.source import effective_scale, load, section_dict
from tieringlab.traces.split import split_arrays
from tieringlab.units import PAGE_BYTES, MiB

__all__ = ["VfrmSingleVmParams", "FIG6_TRACES", "TABLE9_TRACES", "PAPER_TRACES", "POLICIES", "FLASH_MB",
           "PAPER_FIG7_REL_LRU_PCT", "trace_names", "flash_bytes", "load_trace", "readings", "idle_axis", "run_trace",
           "sweep", "reading", "readings_table", "epoch_sweep", "hit_ratio_table", "io_cost_table", "fig6_summary",
           "bin_reuse", "preconditions_table", "claim_values", "page_footprint", "accounting_costs",
           "accounting_table", "verdict_flips", "verdict_matrix", "reading_descriptions", "twin_sweep", "twin_table",
           "twin_covers_every_trace", "cache_evicts", "twin_sweeps", "run_trace_writes"]

#: The eight traces of vFRM Table 1, the traces of Fig. 6/7 (MSR file names, paper order).
FIG6_TRACES = ("mds_0", "src1_2", "stg_0", "usr_0", "stg_1", "usr_2", "web_2", "src2_1")
#: The six traces of thesis Table 9, the traces of the thesis' Fig. 20/21 (vFRM in the thesis, Sec. 4.2.3).
TABLE9_TRACES = ("mds_0", "src1_2", "stg_0", "usr_0", "web_0", "prn_0")
#: Traces whose results enter the ledger's paper rows (either set).
PAPER_TRACES = tuple(dict.fromkeys(FIG6_TRACES + TABLE9_TRACES))
#: Fig. 6/7 legend: vFRM and the three conventional caches (Sec. 5.2.1).
POLICIES = ("vFRM", "LRU", "ARC", "CAR")
CONVENTIONAL = ("LRU", "ARC", "CAR")
#: Fig. 6 x-axis. The text gives only the range "from 100MB to 4GB" (Sec. 5.2.1); the figure's
#: intermediate points are not legible in our copy: 100 MB, then powers of two up to 4 GB.
FLASH_MB = (100.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0)
#: vFRM's IO cost relative to LRU's at 4 GB, as printed in the text (Sec. 5.2.2: "IO costs for mds0
#: workload is only 31.87% of that of LRU solution"). The other traces' values are on the bars of
#: Fig. 7 only and are not in the text, so they are not listed (never invented).
PAPER_FIG7_REL_LRU_PCT = {"mds_0": 31.87}


@section("vfrm_single_vm")
@dataclass(frozen=True)
class VfrmSingleVmParams:
    uses = ("traces",)

    fig6_traces: tuple[str, ...] = param(FIG6_TRACES, "vFRM Fig. 6/7 (Sec. 5.2): the eight Table 1 traces, each "
                                    "replayed alone as one VM; the thesis' Fig. 20/21 use Table 9's six instead "
                                    "(TABLE9_TRACES: web_0 and prn_0 for the four cache-unfriendly ones), selectable "
                                    "here, and the ledger's paper rows name the set they ran on",
                                    choices=tuple(twins.TWINS))
    include_cloudphysics: bool = param(True, "add the real CloudPhysics VM trace as an extra single-VM case "
                                       "(issue 5; not in the paper)")
    cloudphysics_max_requests: int = param(0, "use only the first N CloudPhysics requests (0 = all 113,872); "
                                           "small values make quick runs", bounds=(0, None))
    policies: tuple[str, ...] = param(POLICIES, "Fig. 6/7: vFRM, LRU, ARC, CAR (Sec. 5.2.1); vFRM and LRU are "
                                      "required (Fig. 7's ratios are relative to LRU)", choices=POLICIES)
    flash_mb: tuple[float, ...] = param(FLASH_MB, "Fig. 6 x-axis, 'ranging from 100MB to 4GB' (Sec. 5.2.1); the "
                                        "intermediate points are a documented choice (100 MB, then powers of "
                                        "two); MB = 2^20 bytes, at paper scale; increasing, at most 2^43 - 1 (int64 "
                                        "bytes)", bounds=(1.0, MAX_MIB))
    cost_flash_mb: float = param(4096.0, "Fig. 7: 'Flash size is set to 4GB' (Sec. 5.2.2); must be one of "
                                 "flash_mb", bounds=(1.0, MAX_MIB))
    policy: VfrmParams = param(VfrmParams(), "vFRM (tieringlab.policies.vfrm.VfrmParams: Table 1 bins and epochs, "
                               "Eq. 1-3, the Eq. 4 cost model); its idle_bins and io_pricing are the primary "
                               "reading of the figures (the others run side by side: idle_rules, both pricings)")
    caches: CachingParams = param(CachingParams(threads=2), "the 4 KB page caches LRU, ARC, CAR "
                                  "(tieringlab.policies.caching.CachingParams, vFRM Sec. 5.1); threads: flash sizes "
                                  "replayed at once (speed only). Their io_cost is not used: the sweep keeps the "
                                  "costs under both pricings")
    idle_rules: tuple[str, ...] = param(IDLE_BINS, "vFRM reruns under each of these idle-bin rules, side by side in "
                                        "the tables and the ledger (the rule decides Fig. 6/7 verdicts); must "
                                        "include policy.idle_bins", choices=IDLE_BINS)
    catch_up_pct: float = param(1.0, "'catches up' (Sec. 5.2.1) read as: vFRM's hit ratio at least the best of "
                                "LRU/ARC/CAR minus this many points (documented choice); also the tolerance of "
                                "'without any increasing of IO hit ratio' (Sec. 5.1)", bounds=(0.0, 100.0))
    end_flush: str = param("none", "primary accounting reading of what is still dirty in Flash when the trace ends "
                           "(issue 34; both are computed from the same counts): 'none' never writes it back (the "
                           "paper's Table 2(b) bills write-backs at eviction only), 'flush' makes every policy "
                           "write it back at its own Table 2(b) price", choices=C.FLUSHES)
    hit_pricing: str = param("paper", "primary accounting reading of Flash hits (issue 34; both computed): 'paper' "
                             "prices vFRM's at the 128 KB row and the page caches' at the 4 KB row (Sec. 5.1), "
                             "'page' prices both per 4 KB page at the 4 KB row", choices=C.HIT_PRICINGS)
    twin_readings: tuple[str, ...] = param(C.TWIN_READING_NAMES, "twin readings (issue 34; "
                                           "tieringlab.claims.vfrm.TWIN_READINGS: read ratio, request-size mix, "
                                           "cold-data packing): each regenerates the twins of twin_reading_traces "
                                           "and replays them at cost_flash_mb (vFRM under policy.idle_bins, every "
                                           "page cache); empty = skip; only with traces.source twin",
                                           choices=C.TWIN_READING_NAMES)
    twin_readings_every_trace: tuple[str, ...] = param(("reads_10", "reads_90"), "which twin readings of "
                                                       "twin_readings (others listed here are not run) regenerate "
                                                       "every paper trace of fig6_traces "
                                                       "(the Fig. 6 and every-trace Fig. 7 rows too), whatever "
                                                       "twin_reading_traces; the read-ratio readings change the write "
                                                       "flags only and ride on the main sweep's runs (one ranking and "
                                                       "one replay per cache for the default and them), so they cost "
                                                       "little; the others are new simulations",
                                                       choices=C.TWIN_READING_NAMES)
    twin_reading_traces: tuple[str, ...] = param(("mds_0",), "the fig6_traces the twin readings regenerate: mds0 "
                                                 "by default, the trace with Fig. 7's one printed number (its cost "
                                                 "row and preconditions, at cost_flash_mb, vFRM and LRU); every "
                                                 "paper trace of fig6_traces: also the Fig. 6 and every-trace rows "
                                                 "(each trace at the smallest, cost and largest flash_mb, every "
                                                 "policy; a twin reading is a new simulation of every trace)",
                                                 choices=tuple(twins.TWINS))
    epoch_sweep_s: tuple[float, ...] = param((60.0, 150.0, 300.0, 900.0), "Sec. 5.1: vFRM at cost_flash_mb with "
                                             "these epoch lengths (s), to test 'short temporal granularity (i.e., "
                                             "less than 5min) might incur extra operational cost, without any "
                                             "increasing of IO hit ratio'; must include policy.epoch_s; empty = "
                                             "skip",
                                             bounds=(1.0, None))

    def __post_init__(self):
        """Cross-field checks the per-field bounds cannot express (ValueError naming the parameter; every
        failed check is reported). ``flash_mb`` is Fig. 6's x axis (and the ``flash_mb`` coordinate of the
        sweep): each size once, in increasing order."""
        problems = []
        for need, why in (("vFRM", "the system under study"), ("LRU", "Fig. 7 is relative to LRU")):
            if need not in self.policies:
                problems.append(f"policies must include {need!r} ({why}); got {list(self.policies)}")
        for name in ("policies", "fig6_traces"):
            vals = getattr(self, name)
            if len(set(vals)) != len(vals):
                problems.append(f"{name} has duplicates: {list(vals)}")
        problems += increasing("flash_mb", self.flash_mb, "Fig. 6's x axis")
        if self.cost_flash_mb not in self.flash_mb:
            problems.append(f"cost_flash_mb ({self.cost_flash_mb:g}) must be one of flash_mb {list(self.flash_mb)}")
        idle = self.policy.idle_bins
        if idle not in self.idle_rules or len(set(self.idle_rules)) != len(self.idle_rules):
            problems.append(f"idle_rules must list distinct rules including policy.idle_bins ({idle!r}); "
                            f"got {list(self.idle_rules)}")
        stray = [t for t in self.twin_reading_traces if t not in self.fig6_traces]
        if stray:
            problems.append(f"twin_reading_traces must be among fig6_traces {list(self.fig6_traces)}; got {stray}")
        if len(set(self.twin_readings)) != len(self.twin_readings):
            problems.append(f"twin_readings has duplicates: {list(self.twin_readings)}")
        if len(set(self.twin_readings_every_trace)) != len(self.twin_readings_every_trace):
            problems.append(f"twin_readings_every_trace has duplicates: {list(self.twin_readings_every_trace)}")
        e0 = self.policy.epoch_s
        if self.epoch_sweep_s and (e0 not in self.epoch_sweep_s
                                   or len(set(self.epoch_sweep_s)) != len(self.epoch_sweep_s)):
            problems.append(f"epoch_sweep_s must list distinct epochs including policy.epoch_s ({e0:g}), or be "
                            f"empty; got {list(self.epoch_sweep_s)}")
        cross_field(problems)


def readings(p: VfrmSingleVmParams) -> tuple[Reading, ...]:
    """The readings the sweep runs side by side (:mod:`tieringlab.readings`): vFRM's idle-bin rule (every rule of
    ``p.idle_rules``, a rerun) x the IO pricing x the end-of-trace flush x the hit pricing (the last three re-price
    the same counts), first axis slowest. The default reading is the primary one, ``p``'s; the ledger names
    readings after :mod:`tieringlab.claims.vfrm`'s own default (:func:`tieringlab.claims.vfrm.reading_name`)."""
    return grid(idle_axis(p), C.pricing_axis(IO_PRICINGS, p.policy.io_pricing), C.flush_axis(default=p.end_flush),
                C.hit_axis(default=p.hit_pricing))


def idle_axis(p: VfrmSingleVmParams) -> tuple[Reading, ...]:
    """The idle-bin readings of :func:`readings` (``policy.idle_bins`` at each rule of ``p.idle_rules``)."""
    return C.idle_axis(p.idle_rules, p.policy.idle_bins)


def trace_names(p: VfrmSingleVmParams) -> list[str]:
    """The traces of the sweep, in order: ``p.fig6_traces``, then ``"cloudphysics"`` if included."""
    return list(p.fig6_traces) + (["cloudphysics"] if p.include_cloudphysics else [])


def flash_bytes(p: VfrmSingleVmParams, scale: float = 1.0) -> np.ndarray:
    """Flash sizes in bytes for a trace at ``scale``: ``round(scale * flash_mb * 2^20)``."""
    if not 0 < scale <= 1:
        raise ValueError(f"scale must be in (0, 1], got {scale}")
    return np.round(np.asarray(p.flash_mb, dtype=np.float64) * MiB * scale).astype(np.int64)


def load_trace(p: VfrmSingleVmParams, name: str, traces=None, seed: int = 0) -> tuple[xr.Dataset, float]:
    """Trace ``name`` (an MSR file name or ``"cloudphysics"``) and its scale (1 for a real trace)."""
    if name == "cloudphysics":
        ds = load("cloudphysics")
        if p.cloudphysics_max_requests:
            ds = ds.isel(request=slice(0, p.cloudphysics_max_requests))
        return ds, 1.0
    ds = load(name, traces, seed)
    return ds, float(ds.attrs.get("scale", 1.0))


#: The per-trace precondition counts :func:`sweep` keeps (from :func:`bin_reuse`), dims ``(trace,)``.
PRE_VARS = ("pre_heatings", "pre_heatings_never_reused", "pre_reaccess_requests", "pre_warm_requests")
#: The per-trace 4 KB footprint :func:`sweep` keeps (:func:`page_footprint`), dims ``(trace,)``.
PAGE_VARS = ("pre_pages", "pre_written_pages")


def bin_reuse(ds: xr.Dataset, bin_bytes: int = MiB, epoch_s: float = 300.0, n_epochs: int = 8) -> dict:
    """What vFRM's mechanism needs of a trace, measured on the trace alone (no policy): the preconditions of
    :mod:`tieringlab.claims.vfrm` (and, per VM, of :mod:`tieringlab.claims.gvfrm`).

    Requests are cut into ``bin_bytes`` bins (a multi-VM trace's ``vm`` variable keeps each VM's bins apart) and
    ``epoch_s`` epochs counted from the first request; ``n_epochs`` is Eq. 1's history N. A **heating** is an epoch
    in which a bin has IO after none in the previous N epochs (its first, or one after it cooled to T = 0): vFRM moves
    such a bin in at the next boundary when Flash has room. Returns a dict of

    - ``n_epochs`` (of the trace); ``bins_touched``; ``heatings``: heatings before the trace's last epoch (a move-in
      follows within the trace); ``heatings_never_reused``: those after which the bin has no IO in the next N epochs
      (while Eq. 1 still holds it warm: the move-in serves no IO); ``never_reused_pct`` = 100 x never reused /
      heatings (NaN without heatings);
    - ``requests``; ``reaccess_requests``: requests every bin of which was accessed by an earlier request;
      ``warm_requests``: those whose bins all had IO in the previous N epochs (T > 0 at the request's epoch: the
      reuse vFRM's epoch-boundary placement sees); ``warm_pct`` = 100 x warm / re-access (NaN without re-accesses);
    - ``vms`` (the sorted VM labels) and ``reusable_bins_by_vm``: per VM, the bins with IO in at least two epochs.
    """
    t = np.asarray(ds["time"].values, dtype=np.float64)
    offset = np.asarray(ds["offset"].values, dtype=np.int64)
    size = np.asarray(ds["size"].values, dtype=np.int64)
    if t.size == 0:
        raise ValueError("bin_reuse: an empty trace")
    if int(n_epochs) < 1:
        raise ValueError(f"bin_reuse: n_epochs must be >= 1, got {n_epochs!r}")
    N = int(n_epochs)
    vm = np.asarray(ds["vm"].values) if "vm" in ds else np.zeros(t.size, dtype=np.int64)
    vms, vm_idx = np.unique(vm, return_inverse=True)
    epoch = np.floor((t - t.min()) / float(epoch_s)).astype(np.int64)
    last = int(epoch.max())
    keys, ridx = split_arrays(offset, size, int(bin_bytes))
    span = int(keys.max()) + 1
    ubins, ub = np.unique(vm_idx[ridx].astype(np.int64) * span + keys, return_inverse=True)
    n = ubins.size
    ue = epoch[ridx]
    pairs, unit_pair = np.unique(ub * (last + 1) + ue, return_inverse=True)  # distinct (bin, epoch), bin-major
    p_bin, p_epoch = pairs // (last + 1), pairs % (last + 1)
    same_prev = np.r_[False, p_bin[1:] == p_bin[:-1]]
    gap_prev = np.where(same_prev, p_epoch - np.r_[0, p_epoch[:-1]], N + 1)  # epochs since the bin's previous IO
    same_next = np.r_[p_bin[1:] == p_bin[:-1], False]
    gap_next = np.where(same_next, np.r_[p_epoch[1:], 0] - p_epoch, N + 1)  # epochs to its next IO
    heating = (gap_prev > N) & (p_epoch < last)
    never = heating & (gap_next > N)
    n_ep = np.bincount(p_bin, minlength=n)             # epochs with IO, per bin
    order = np.lexsort((ridx, ub))                     # per bin, its units by request
    first_pos = order[np.r_[0, np.flatnonzero(np.diff(ub[order])) + 1]]
    first_req = np.empty(n, dtype=np.int64)
    first_req[ub[first_pos]] = ridx[first_pos]
    seen = first_req[ub] < ridx                        # an earlier request accessed this unit's bin
    warm = (gap_prev <= N)[unit_pair]                  # ... and the bin had IO in the previous N epochs
    reaccess = np.bincount(ridx, weights=~seen, minlength=t.size) == 0
    warm_req = np.bincount(ridx, weights=~warm, minlength=t.size) == 0
    n_h, n_nv, n_re, n_w = int(heating.sum()), int(never.sum()), int(reaccess.sum()), int(warm_req.sum())
    return {"n_epochs": last + 1, "bins_touched": int(n), "heatings": n_h, "heatings_never_reused": n_nv,
            "never_reused_pct": 100.0 * n_nv / n_h if n_h else float("nan"),
            "requests": int(t.size), "reaccess_requests": n_re, "warm_requests": n_w,
            "warm_pct": 100.0 * n_w / n_re if n_re else float("nan"),
            "vms": vms, "reusable_bins_by_vm": np.bincount((ubins // span)[n_ep >= 2], minlength=vms.size)}


#: Variables of every policy's result kept in the sweep (the trace contract's counts and costs).
_VARS = ("hits", "requests", "hit_ratio", "ssd_reads", "ssd_writes", "md_reads", "md_writes", "update_cost")


def page_footprint(ds: xr.Dataset, page_bytes: int = PAGE_BYTES) -> tuple[int, int]:
    """``(distinct pages, distinct written pages)`` of trace ``ds`` in ``page_bytes`` pages (a multi-VM trace's
    ``vm`` variable keeps each VM's pages apart). A page cache that admits every miss (LRU, ARC, CAR) evicts iff
    the first exceeds its pages; the second bounds what it can hold dirty.

    One bitmap over each VM's page span (a byte per page: 130 MB for usr_2's 530 GB volume), filled in chunks of about
    2^22 page accesses (:func:`tieringlab.traces.split.split_arrays` per chunk): linear time, no sort of the pages."""
    offset = np.asarray(ds["offset"].values, dtype=np.int64)
    size = np.maximum(np.asarray(ds["size"].values, dtype=np.int64), 1)
    w = np.asarray(ds["is_write"].values, dtype=bool)
    pb = int(page_bytes)
    vm = np.asarray(ds["vm"].values) if "vm" in ds else np.zeros(offset.size, dtype=np.int64)
    first, last = offset // pb, (offset + size - 1) // pb
    n_all = n_w = 0
    for v in np.unique(vm):
        sel = np.flatnonzero(vm == v)
        lo, hi = int(first[sel].min()), int(last[sel].max())
        seen = np.zeros(hi - lo + 1, dtype=np.uint8)  # bit 0: accessed, bit 1: written
        pages = (last[sel] - first[sel] + 1).astype(np.int64)
        cuts = np.searchsorted(np.cumsum(pages), np.arange(1, 1 + int(pages.sum()) // (1 << 22)) << 22)
        for part in np.split(sel, cuts):
            if part.size == 0:
                continue
            keys, ridx = split_arrays(offset[part], size[part], pb)
            seen[keys - lo] |= 1
            seen[keys[w[part][ridx]] - lo] |= 2
        n_all += int(np.count_nonzero(seen & 1))
        n_w += int(np.count_nonzero(seen & 2))
    return n_all, n_w


def accounting_costs(r: xr.Dataset, model: CostModel, written_pages: int | None = None) -> xr.DataArray:
    """``C_IO`` (s) of one policy's registry result ``r`` under every accounting reading (issue 34): over
    ``(io_pricing, end_flush, hit_pricing, capacity_bytes)``, re-priced from the same counts (no new simulation).

    - ``end_flush="flush"`` adds the write-back of what is still dirty when the trace ends, at the policy's own
      Table 2(b) price (``model``'s update rows): a bin-placement result (it has ``dirty_at_end``) pays
      ``ios_per_bin`` x (SSD read + MD write) per dirty bin; a page cache pays SSD read + MD write per dirty page,
      counted as ``max(written_pages - dirty_evictions, 0)``, the fewest its counts allow (each distinct written page
      is dirty at the end unless a dirty eviction wrote it back), exact when the cache never evicted (``written_pages``:
      the trace's distinct written pages, :func:`page_footprint`);
    - ``hit_pricing="page"`` re-prices a bin-placement result's Flash hits (its ``ssd_reads``/``ssd_writes``) as
      the page caches price theirs: per 4 KB page (``hit_*_pages`` and their ``cont_*`` parts) at
      :data:`~tieringlab.policies.iocost.CACHE_COST`'s access row. A page cache's own pricing is already that."""
    # issue 35's rule for trace_result: plain numpy on the counts (the same float operations in the same order as on
    # DataArrays), one DataArray built at the end: the xarray version spent ~0.2 s per call aligning coordinates
    base_da = r["io_cost_by_pricing"].sel(io_pricing=list(IO_PRICINGS))
    base = base_da.values
    if "dirty_at_end" in r:
        v = {k: r[k].values for k in ("ssd_reads", "ssd_writes", "cont_ssd_reads", "cont_ssd_writes", "hit_read_pages",
                                      "hit_write_pages", "cont_hit_read_pages", "cont_hit_write_pages")}
        zero = np.zeros_like(v["ssd_reads"])
        n = r["dirty_at_end"].values * int(r.attrs["bin_bytes"] // model.update_io_bytes)
        flush = update_cost({"update_ssd_reads": n, "update_md_writes": n}, model)
        access = dict(zip(ACCESS_NAMES, (v["ssd_reads"], v["ssd_writes"], zero, zero)))
        cont = dict(zip(CONTINUATION_NAMES, (v["cont_ssd_reads"], v["cont_ssd_writes"], zero, zero)))
        pages = dict(zip(ACCESS_NAMES, (v["hit_read_pages"], v["hit_write_pages"], zero, zero)))
        pcont = dict(zip(CONTINUATION_NAMES, (v["cont_hit_read_pages"], v["cont_hit_write_pages"], zero, zero)))
        delta = np.stack([io_cost({**pages, **pcont}, CACHE_COST, pr) - io_cost({**access, **cont}, model, pr)
                          for pr in IO_PRICINGS])
    else:
        if written_pages is None:
            raise ValueError("accounting_costs: a page cache's flush needs written_pages (page_footprint)")
        d = np.maximum(int(written_pages) - r["dirty_evictions"].values, 0)
        flush = update_cost({"dirty_evictions": d}, model)
        delta = np.zeros_like(base)
    fl = np.stack([np.zeros_like(flush), flush])  # (end_flush, capacity)
    hp = np.stack([np.zeros_like(delta), delta])  # (hit_pricing, io_pricing, capacity)
    vals = (base[:, None, None, :] + fl[None, :, None, :]) + hp.transpose(1, 0, 2)[:, None, :, :]
    coords = {k: c for k, c in base_da.coords.items()}
    coords.update(end_flush=list(C.FLUSHES), hit_pricing=list(C.HIT_PRICINGS))
    attrs = dict(base_da.attrs)
    if "dirty_at_end" in r:  # the DataArray version's attrs: a bin result's hit re-pricing dropped the 'units'
        attrs.pop("units", None)
    return xr.DataArray(vals, dims=("io_pricing", "end_flush", "hit_pricing", "capacity_bytes"), coords=coords,
                        attrs=attrs)


def _tidy(p: VfrmSingleVmParams, r: xr.Dataset, pol: str, written_pages: int) -> xr.Dataset:
    """One policy's registry result ``r`` as :func:`run_trace` keeps it: the variables of ``_VARS`` and ``io_cost``
    under every accounting reading (:func:`accounting_costs`), over ``flash_mb``."""
    cost = accounting_costs(r, p.policy.cost_model if pol == "vFRM" else p.caches.cost_model, written_pages)
    r = r[list(_VARS)].assign(io_cost=cost)
    r = r.drop_vars([c for c in r.coords if c not in ("capacity_bytes", "io_pricing", "end_flush", "hit_pricing")])
    return r.rename(capacity_bytes="flash_mb").assign_coords(flash_mb=np.asarray(p.flash_mb, dtype=np.float64))


def run_trace(p: VfrmSingleVmParams, ds: xr.Dataset, scale: float = 1.0, bar=None,
              written_pages: int | None = None) -> xr.Dataset:
    """Every policy of ``p.policies`` on one trace, each by name through the registry (one call covers
    every Flash size; vFRM once per rule of ``p.idle_rules``): a Dataset over ``(policy, idle_bins,
    flash_mb)`` with the variables of ``_VARS`` (the Eq. 4 counts of Table 2(a)(b): 4 KB pages for
    LRU/ARC/CAR, 128 KB IOs for vFRM's user IO; ``update_cost`` = ``C_FlashUpdate``, s) and ``io_cost``
    (``C_IO``, s) over ``(policy, idle_bins, io_pricing, end_flush, hit_pricing, flash_mb)``
    (:func:`accounting_costs`; ``written_pages``: the trace's distinct written 4 KB pages, computed when None).
    The page caches do not depend on ``idle_bins``: their values repeat along it."""
    fb = flash_bytes(p, scale)
    rules = list(p.idle_rules)
    if written_pages is None:
        written_pages = page_footprint(ds)[1]

    parts = []
    for pol in p.policies:
        if pol == "vFRM":  # one run per idle-bin reading (the pricings come from the same counts)
            bins = bin_trace(ds, p.policy)  # one binning for every idle-bin rule, dropped before the page caches run
            per_rule = list(run_each(idle_axis(p), p, lambda q, pol=pol, ds=ds, fb=fb, bins=bins: registry.run(
                pol, ds, fb, params=q.policy, bins=bins)).values())
            del bins
        else:
            per_rule = [registry.run(pol, ds, fb, params=p.caches)] * len(rules)
        parts.append(_by_rule(p, per_rule, pol, written_pages))
        if bar is not None:
            bar.update(1)
    return _by_policy(p, parts, fb)


def _by_rule(p: VfrmSingleVmParams, per_rule: list, pol: str, written_pages: int) -> xr.Dataset:
    """One policy's registry results, one per idle-bin rule of ``p.idle_rules`` (the page caches: the same object
    repeated, tidied once), as :func:`run_trace` keeps them: over ``(idle_bins, ...)``."""
    tidy: dict[int, xr.Dataset] = {}
    for r in per_rule:
        if id(r) not in tidy:
            tidy[id(r)] = _tidy(p, r, pol, written_pages)
    return xr.concat([tidy[id(r)] for r in per_rule], dim="idle_bins").assign_coords(idle_bins=list(p.idle_rules))


def _by_policy(p: VfrmSingleVmParams, parts: list, fb) -> xr.Dataset:
    """The policies' parts of :func:`run_trace` (one per ``p.policies``) as one Dataset over ``policy``."""
    out = xr.concat(parts, dim="policy").assign_coords(policy=np.asarray(p.policies, dtype=str))
    return out.assign_coords(flash_bytes=("flash_mb", fb))


def run_trace_writes(p: VfrmSingleVmParams, ds: xr.Dataset, writes, written_pages, scale: float = 1.0) -> list:
    """:func:`run_trace` of trace ``ds`` with each write-flag vector of ``writes`` in place of its ``is_write`` (the
    read-ratio twin readings, whose twins differ from each other in ``is_write`` only; ``written_pages``: each
    vector's distinct written 4 KB pages), one Dataset per vector, each identical to ``run_trace`` of the rewritten
    trace (tests/test_vfrm_single_vm.py), from one vFRM ranking per idle-bin rule
    (:func:`tieringlab.policies.vfrm.vfrm_rewrites`) and one replay per page cache and Flash size
    (:func:`tieringlab.policies.caching.simulate_rewrites`): placement, hits and evictions never read the writes."""
    from tieringlab.policies import caching  # noqa: PLC0415
    from tieringlab.policies import vfrm as vfrm_policy  # noqa: PLC0415

    fb = flash_bytes(p, scale)
    rules = list(p.idle_rules)
    ws = [np.asarray(w, dtype=bool) for w in writes]
    per_w: list[list] = [[] for _ in ws]
    for pol in p.policies:
        if pol == "vFRM":
            bins = bin_trace(ds, p.policy)  # ~1 GiB on usr_2 at paper scale: not held while the page caches replay
            by_rule = [vfrm_policy.vfrm_rewrites(ds, fb, ws, dataclasses.replace(p.policy, idle_bins=rule), bins=bins)
                       for rule in rules]
            del bins
            runs = [[by_rule[k][a] for k in range(len(rules))] for a in range(len(ws))]
        else:
            runs = [[r] * len(rules) for r in caching.simulate_rewrites(ds, pol.lower(), fb, ws, params=p.caches)]
        for a, per_rule in enumerate(runs):
            per_w[a].append(_by_rule(p, per_rule, pol, int(written_pages[a])))
    return [_by_policy(p, parts, fb) for parts in per_w]


def sweep(p: VfrmSingleVmParams, traces=None, seed: int = 0, twin_parts: dict | None = None) -> xr.Dataset:
    """Fig. 6 and Fig. 7's grid: every trace x policy x Flash size, vFRM under every idle-bin rule, costs
    under every IO pricing, with a progress bar over traces x policies. ``traces`` is the ``traces``
    params section (twin or real MSR files), ``seed`` the twins' seed.

    Returns an ``xarray.Dataset`` with dims ``(trace, policy, idle_bins, flash_mb)`` (and ``io_pricing``
    for ``io_cost``) and the variables of :func:`run_trace`; coords ``scale`` (trace), ``source`` (trace:
    ``twin``, ``msr`` or ``real``) and ``flash_bytes`` (trace, flash_mb: the replayed sizes, ``scale x
    flash_mb``). :func:`reading` selects one reading (default: ``p.policy.idle_bins``, ``p.policy.io_pricing``).
    The per-trace counts of :data:`PRE_VARS` (:func:`bin_reuse` at ``p.policy``'s bin and epoch) carry the
    ledger's preconditions (:func:`preconditions_table`).

    ``twin_parts`` (a dict the caller passes to :func:`twin_sweeps`; speed only): each trace that a read-ratio twin
    reading regenerates (:func:`_twin_groups`) runs with the default and those readings' write flags at once
    (:func:`run_trace_writes`: their twins differ from the default twin in ``is_write`` only, checked), and the
    readings' runs are put there by ``(reading, trace)``; the sweep itself is unchanged.
    """
    if not isinstance(p, VfrmSingleVmParams):
        raise TypeError(f"p must be VfrmSingleVmParams (the vfrm_single_vm section); got {type(p).__name__}")
    names = trace_names(p)
    if not names:
        raise ValueError("vfrm_single_vm: no traces (fig6_traces is empty and include_cloudphysics is false)")
    parts, scales, sources, pre, epochs = [], [], [], [], []
    with progress(total=len(names) * len(p.policies), desc="vFRM single VM (traces x policies)",
                  unit="run") as bar:
        for name in names:
            bar.set_postfix_str(name)
            ds, scale = load_trace(p, name, traces, seed)
            fp = page_footprint(ds)
            b = bin_reuse(ds, p.policy.bin_bytes, p.policy.epoch_s, p.policy.n_epochs)
            alts = _ratio_twins(p, name, traces, seed, ds) if twin_parts is not None else {}
            if alts:  # the read-ratio twin readings of this trace ride on its runs (the same arrays but is_write)
                fps = {k: page_footprint(ds.assign(is_write=("request", w))) for k, w in alts.items()}
                runs = run_trace_writes(p, ds, [ds["is_write"].values, *alts.values()],
                                        [fp[1]] + [f[1] for f in fps.values()], scale)
                part = runs[0]
                for (k, f), run in zip(fps.items(), runs[1:]):
                    twin_parts[(k, name)] = (run, [b[v.removeprefix("pre_")] for v in PRE_VARS] + list(f), scale)
                if bar is not None:
                    bar.update(len(p.policies))
                del alts, runs
            else:
                part = run_trace(p, ds, scale, bar, written_pages=fp[1])
            parts.append(part)
            pre.append([b[k.removeprefix("pre_")] for k in PRE_VARS] + list(fp))
            scales.append(scale)
            sources.append("real" if name == "cloudphysics" else str(ds.attrs.get("source", "twin")))
            if p.epoch_sweep_s and "vFRM" in p.policies:  # Sec. 5.1's epoch runs while the trace is loaded
                epochs.append(_epoch_runs(p, ds, scale, part) if name in _epoch_traces(p) else None)
            del ds
    out = xr.concat(parts, dim="trace").assign_coords(trace=np.asarray(names, dtype=str))
    if epochs:
        eps = [float(e) for e in p.epoch_sweep_s]
        nan = np.full((3, len(eps)), np.nan)
        cube = np.stack([nan if e is None else e for e in epochs], axis=1)  # (variable, trace, epoch_s)
        for k, v in zip(_EPOCH_VARS, cube):
            out[f"epoch_{k}"] = (("trace", "epoch_s"), v)
        out = out.assign_coords(epoch_s=eps)
    out = out.assign_coords(scale=("trace", np.asarray(scales)), source=("trace", np.asarray(sources)))
    for k, col in zip(PRE_VARS + PAGE_VARS, np.asarray(pre, dtype=np.int64).T):
        out[k] = ("trace", col)
    out["pre_pages"].attrs["long_name"] = "distinct 4 KB pages of the trace (page_footprint)"
    out["pre_written_pages"].attrs["long_name"] = "distinct written 4 KB pages of the trace (page_footprint)"
    out["pre_heatings_never_reused"].attrs["long_name"] = ("bin heatings (IO after N epochs without) followed by no IO "
                                                           "in the next N epochs (bin_reuse)")
    out["pre_warm_requests"].attrs["long_name"] = ("re-access requests whose bins all had IO in the previous N epochs "
                                                   "(bin_reuse)")
    out["flash_mb"].attrs["units"] = "MB (2^20 bytes, paper scale)"
    out["flash_bytes"].attrs["units"] = "bytes (replayed: scale x flash_mb)"
    out["hit_ratio"].attrs.update(units="1", long_name="IO hit ratio (requests all of whose units are in Flash)")
    out["io_cost"].attrs.update(units="s", long_name="IO cost C_IO (vFRM Eq. 4, Table 3 latencies)")
    out["update_cost"].attrs.update(units="s", long_name="C_FlashUpdate (Table 2(b) part of C_IO)")
    v = p.policy
    out.attrs = dict(cost_flash_mb=p.cost_flash_mb, catch_up_pct=p.catch_up_pct, bin_bytes=v.bin_bytes,
                     epoch_s=v.epoch_s, n_history_epochs=v.n_epochs, lam=v.lam,
                     idle_bins=v.idle_bins, io_pricing=v.io_pricing, end_flush=p.end_flush, hit_pricing=p.hit_pricing,
                     page_bytes=PAGE_BYTES, source="vFRM paper Sec. 5.2, Fig. 6-7; thesis Sec. 4.2.3.2, Fig. 20-21")
    return out


def twin_sweep(p: VfrmSingleVmParams, traces=None, seed: int = 0, share_writes: bool = True,
               shared: dict | None = None) -> xr.Dataset | None:
    """The twin readings (issue 34; :data:`tieringlab.claims.vfrm.TWIN_READINGS` named by ``p.twin_readings``): each
    trace of ``p.twin_reading_traces`` regenerated under each twin reading (:func:`tieringlab.traces.twins.msr_twin`
    with the reading's TwinSpec overrides, the same scale and seed) and replayed at ``cost_flash_mb`` only (vFRM
    under ``p.policy.idle_bins`` and LRU, the two the mds0 row compares), with its :func:`bin_reuse` and
    :func:`page_footprint` counts: a :func:`sweep`-shaped Dataset with the extra leading dim ``twin``. None when
    there is nothing to run (no twin readings or traces, or ``traces.source`` is not ``twin``).

    Which traces and sizes a twin reading must regenerate to decide a row: the mds0 row and its preconditions need
    mds0 at ``cost_flash_mb`` (vFRM and LRU); the every-trace Fig. 7 rows need every paper trace of ``fig6_traces``
    at ``cost_flash_mb`` with every page cache; the Fig. 6 rows every paper trace at the smallest and the largest
    Flash size with every page cache. So when ``twin_reading_traces`` covers every paper trace of ``fig6_traces``
    (:func:`twin_covers_every_trace`) each trace is replayed at those sizes (at most three, not the sweep's six) by
    every policy, and :func:`claim_values` records the Fig. 6 and every-trace rows under the twin readings too; else
    only the mds0 rows (the default, mds0 alone: the every-trace set costs about one more sweep per twin reading).

    ``share_writes`` (speed only, the same Dataset): the read-ratio readings of a trace (``reads_10``, ``reads_90``),
    whose twins differ in ``is_write`` alone, share one vFRM ranking and one replay per page cache and Flash size
    (:func:`run_trace_writes`); False runs each reading apart (the reference the tests compare it with). ``shared``:
    runs :func:`sweep` already made (its ``twin_parts``), by ``(reading, trace)``, cut to this sweep's sizes, idle
    rule and policies instead of run again (the same values: each size and rule is replayed independently)."""
    src = section_dict(traces).get("source", "twin")
    names = [t for t in p.twin_reading_traces if t in p.fig6_traces]
    want = [r for r in C.TWIN_READINGS if r.name in p.twin_readings]
    if src != "twin" or not names or not want:
        return None
    if twin_covers_every_trace(p):
        # every paper trace regenerated: the Fig. 6 rows (smallest and largest Flash size, vFRM against the best of
        # every page cache) and the every-trace Fig. 7 rows (every page cache at cost_flash_mb) can be decided
        sizes = tuple(sorted({min(p.flash_mb), max(p.flash_mb), p.cost_flash_mb}))
        q = dataclasses.replace(p, flash_mb=sizes, idle_rules=(p.policy.idle_bins,))
    else:
        # the mds0 row and its preconditions only: vFRM against LRU at cost_flash_mb (ARC/CAR are not rerun)
        q = dataclasses.replace(p, flash_mb=(p.cost_flash_mb,), idle_rules=(p.policy.idle_bins,),
                                policies=("vFRM", "LRU"))
    ratio = [r for r in want if set(r.overrides) == {"read_ratio"}] if share_writes else []
    done: dict[tuple[str, str], tuple[xr.Dataset, list[int], float]] = {}  # (reading, trace) -> part, counts, scale
    for (rname, name), (part, pre_row, scale) in (shared or {}).items():
        if rname in [r.name for r in want] and name in names:
            done[(rname, name)] = (part.sel(idle_bins=list(q.idle_rules), flash_mb=list(q.flash_mb),
                                            policy=list(q.policies)), pre_row, scale)
    with progress(total=len(names) * len(want), desc="vFRM twin readings", unit="run") as bar:
        for name in names:
            if len(ratio) < 2 or all((rd.name, name) in done for rd in ratio):
                continue
            # the read-ratio twins differ in is_write only (twins.py draws the write flags last, from as many numbers
            # whatever the ratio): one ranking and one replay per page cache serve them all (run_trace_writes);
            # checked here, a trace whose twins differ otherwise runs each reading apart below
            scale = effective_scale(name, traces)
            dss = [twins.msr_twin(name, scale=scale, seed=seed, **rd.overrides) for rd in ratio]
            if not all(np.array_equal(d[v].values, dss[0][v].values) for d in dss[1:] for v in ("time", "offset",
                                                                                                  "size")):
                continue
            fps = [page_footprint(d) for d in dss]
            b = bin_reuse(dss[0], p.policy.bin_bytes, p.policy.epoch_s, p.policy.n_epochs)  # reads no write flag
            runs = run_trace_writes(q, dss[0], [d["is_write"].values for d in dss], [fp[1] for fp in fps], scale)
            for rd, run, fp in zip(ratio, runs, fps):
                done[(rd.name, name)] = run, [b[k.removeprefix("pre_")] for k in PRE_VARS] + list(fp), scale
                bar.update(1)
            del dss, runs
        for rd in want:
            for name in names:
                if (rd.name, name) in done:
                    continue
                scale = effective_scale(name, traces)
                ds = twins.msr_twin(name, scale=scale, seed=seed, **rd.overrides)
                fp = page_footprint(ds)
                b = bin_reuse(ds, p.policy.bin_bytes, p.policy.epoch_s, p.policy.n_epochs)
                done[(rd.name, name)] = (run_trace(q, ds, scale, written_pages=fp[1]),
                                         [b[k.removeprefix("pre_")] for k in PRE_VARS] + list(fp), scale)
                bar.update(1)
                del ds
    per_twin = []
    for rd in want:
        parts, pre, scales = zip(*(done[(rd.name, name)] for name in names))
        t = xr.concat(parts, dim="trace").assign_coords(trace=np.asarray(names, dtype=str),
                                                        scale=("trace", np.asarray(scales)),
                                                        source=("trace", np.asarray(["twin"] * len(names))))
        for k, col in zip(PRE_VARS + PAGE_VARS, np.asarray(pre, dtype=np.int64).T):
            t[k] = ("trace", col)
        per_twin.append(t)
    out = xr.concat(per_twin, dim="twin").assign_coords(twin=[r.name for r in want])
    v = p.policy
    out.attrs = dict(cost_flash_mb=p.cost_flash_mb, catch_up_pct=p.catch_up_pct, bin_bytes=v.bin_bytes,
                     epoch_s=v.epoch_s, n_history_epochs=v.n_epochs, lam=v.lam, idle_bins=v.idle_bins,
                     io_pricing=v.io_pricing, end_flush=p.end_flush, hit_pricing=p.hit_pricing, page_bytes=PAGE_BYTES,
                     overrides="; ".join(f"{r.name}: {dict(r.overrides)}" for r in want),
                     every_trace=int(twin_covers_every_trace(p)),
                     source="twin readings of issue 34 at cost_flash_mb")
    return out


def twin_covers_every_trace(p: VfrmSingleVmParams) -> bool:
    """Whether ``p.twin_reading_traces`` holds every paper trace of ``p.fig6_traces`` (then the twin readings decide
    the Fig. 6 and every-trace rows, :func:`twin_sweep`)."""
    paper = [t for t in p.fig6_traces if t in PAPER_TRACES]
    return bool(paper) and set(paper) <= set(p.twin_reading_traces)


def _twin_groups(p: VfrmSingleVmParams) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """``(twin readings, traces)`` of each :func:`twin_sweep` of :func:`twin_sweeps`: those of
    ``p.twin_readings_every_trace`` on every paper trace of ``p.fig6_traces``, the other readings of
    ``p.twin_readings`` on ``p.twin_reading_traces``; empty groups left out."""
    every = tuple(r for r in p.twin_readings if r in p.twin_readings_every_trace)
    rest = tuple(r for r in p.twin_readings if r not in every)
    paper = tuple(t for t in p.fig6_traces if t in PAPER_TRACES)
    return [(g, tr) for g, tr in ((every, paper), (rest, p.twin_reading_traces)) if g and tr]


def _ratio_twins(p: VfrmSingleVmParams, name: str, traces, seed: int, ds: xr.Dataset) -> dict[str, np.ndarray]:
    """The write flags of the read-ratio twin readings (TwinSpec override ``read_ratio`` alone) that
    :func:`twin_sweeps` regenerates trace ``name`` under, by reading name, each twin checked to differ from ``ds``
    (the default twin) in ``is_write`` only; {} when none applies (or ``traces.source`` is not ``twin``, or a twin
    differs otherwise). Only the flags are kept (issue 35: each twin is a full copy of the trace, and the replays
    that follow are the stage's peak)."""
    if section_dict(traces).get("source", "twin") != "twin" or name not in p.fig6_traces:
        return {}
    want = {r for g, tr in _twin_groups(p) if name in tr for r in g}
    out = {}
    for rd in C.TWIN_READINGS:
        if rd.name in want and set(rd.overrides) == {"read_ratio"}:
            d = twins.msr_twin(name, scale=effective_scale(name, traces), seed=seed, **rd.overrides)
            if not all(np.array_equal(d[v].values, ds[v].values) for v in ("time", "offset", "size")):
                return {}
            out[rd.name] = np.array(d["is_write"].values, dtype=bool)  # a copy: nothing else of the twin stays
            del d
    return out


def twin_sweeps(p: VfrmSingleVmParams, traces=None, seed: int = 0, shared: dict | None = None) -> list[xr.Dataset]:
    """The twin readings of ``p`` as :func:`twin_sweep` Datasets, one per group of :func:`_twin_groups`: the readings
    of ``p.twin_readings_every_trace`` on every paper trace (they decide the Fig. 6 and every-trace rows too), then
    the others on ``p.twin_reading_traces``. ``shared``: :func:`sweep`'s ``twin_parts``."""
    out = []
    for group, tr in _twin_groups(p):
        tw = twin_sweep(dataclasses.replace(p, twin_readings=group, twin_readings_every_trace=(),
                                            twin_reading_traces=tr), traces, seed, shared=shared)
        if tw is not None:
            out.append(tw)
    return out


def twin_table(tw: xr.Dataset) -> pd.DataFrame:
    """The twin readings side by side: one row per (twin reading, trace) with vFRM's cost relative to LRU's (%)
    under every accounting reading (columns ``rel_lru_pct.<end_flush>.<hit_pricing>``), vFRM's and LRU's hit ratio
    (%), the share of bin heatings never reused (%) and whether the page cache evicts, at ``cost_flash_mb``."""
    rows = []
    fm = float(tw.attrs["cost_flash_mb"])
    for twin in tw["twin"].values:
        t = tw.sel(twin=twin, drop=True)
        t.attrs = tw.attrs
        pre = preconditions_table(t).set_index("trace")
        ev = cache_evicts(t)
        for trace in t["trace"].values:
            row = {"twin": str(twin), "trace": str(trace)}
            for flush, hits in itertools.product(t["end_flush"].values, t["hit_pricing"].values):
                r = reading(t, None, None, str(flush), str(hits))
                row[f"rel_lru_pct.{flush}.{hits}"] = float(io_cost_table(r, fm).set_index("trace").loc[
                    str(trace), "vFRM_rel_lru_pct"])
            r = reading(t)
            for pol in ("vFRM", "LRU"):
                row[f"{pol}_hit_pct"] = float(100 * r["hit_ratio"].sel(trace=trace, policy=pol, flash_mb=fm))
            row["never_reused_pct"] = float(pre.loc[str(trace), "never_reused_pct"])
            row["caches_evict"] = bool(ev[str(trace)])
            rows.append(row)
    return pd.DataFrame(rows)


def _twin_values(tw: xr.Dataset) -> dict[str, dict[str, tuple[float | bool, str]]]:
    """The mds0 rows (Fig. 7's cost and its preconditions) under every twin reading x accounting reading of
    :func:`twin_sweep`'s result, by reading name (:func:`tieringlab.claims.vfrm.reading_name` with ``twin``); when
    the twin sweep regenerated every paper trace (``every_trace``), also the Fig. 6 and every-trace Fig. 7 rows and
    the trace preconditions, as :func:`claim_values` gives them for the main sweep."""
    by: dict[str, dict[str, tuple[float | bool, str]]] = {}
    fm = float(tw.attrs["cost_flash_mb"])
    idle, pricing = str(tw.attrs["idle_bins"]), str(tw.attrs["io_pricing"])
    for twin in tw["twin"].values:
        t = tw.sel(twin=twin, drop=True)
        t.attrs = tw.attrs
        every = bool(tw.attrs.get("every_trace", 0))
        mds0 = "mds_0" in t["trace"].values
        if not (mds0 or every):
            continue
        if mds0:
            pre = preconditions_table(t).set_index("trace").loc["mds_0"]
            evicts = bool(cache_evicts(t)["mds_0"])
        # every paper trace of the main sweep regenerated: the Fig. 6 and every-trace rows too (twin_sweep); the
        # trace properties of this twin (bin_reuse counts, page footprints) are recorded under every name of it
        props = {k: v for k, v in _precondition_values(t).items() if "cloudphysics" not in k} if every else {}
        first = True
        for flush, hits in itertools.product(t["end_flush"].values, t["hit_pricing"].values):
            flush, hits = str(flush), str(hits)
            if idle not in C.IDLE_READINGS or pricing not in C.PRICINGS:
                continue
            name = C.reading_name(idle, pricing, flush, hits, twin=str(twin))
            tag = f"twin reading {twin}; idle_bins={idle}, io_pricing={pricing}, end_flush={flush}, hit_pricing={hits}"
            r = reading(t, None, None, flush, hits)
            if every:
                for cid, v in _reading_values(r, tag, first, flush == "flush").items():
                    if "cloudphysics" in cid:
                        continue  # the real trace is not a twin
                    if cid == C.PRE_CACHES_EVICT:
                        props[cid] = v
                    else:
                        by.setdefault(C.reading_name(idle, twin=str(twin)) if cid in C.IDLE_ROWS else name, {})[cid] = v
                first = False
            if not mds0:
                continue
            cost = io_cost_table(r, fm).set_index("trace").loc["mds_0"]
            by.setdefault(name, {}).update({
                C.MDS0_COST_REL_LRU: (float(cost["vFRM_rel_lru_pct"]), f"at scale {cost['scale']:.4g}; {tag}"),
                C.PRE_MDS0_NEVER_REUSED: (float(pre["never_reused_pct"]), f"{int(pre['heatings_never_reused'])} of "
                                          f"{int(pre['heatings'])} bin heatings; {tag}"),
                C.PRE_MDS0_WRITEBACKS_BILLED: (bool(flush == "flush" or evicts), f"the {fm:g} MB page cache "
                                               + ("evicts" if evicts else "never evicts") + f"; {tag}")})
        for name in [n for n in by if n == str(twin) or n.startswith(f"{twin}.")]:
            for cid, v in props.items():
                by[name].setdefault(cid, v)
    return by


def reading(res: xr.Dataset, idle_bins: str | None = None, io_pricing: str | None = None,
            end_flush: str | None = None, hit_pricing: str | None = None) -> xr.Dataset:
    """The sweep under one reading: a ``(trace, policy, flash_mb)`` Dataset whose vFRM rows follow idle-bin
    rule ``idle_bins`` and whose ``io_cost`` is priced by ``io_pricing``, ``end_flush`` and ``hit_pricing``
    (defaults: the sweep's primary reading, ``res.attrs``). Every table and figure function takes such a Dataset."""
    if "idle_bins" not in res.dims:
        return res
    acct = {k: v for k, v in (("end_flush", end_flush), ("hit_pricing", hit_pricing)) if k in res.dims}
    return select(res, idle_bins=idle_bins, io_pricing=io_pricing, **acct)


def readings_table(res: xr.Dataset) -> pd.DataFrame:
    """One row per (idle_bins, io_pricing, trace): vFRM's hit ratio at the smallest and largest Flash size,
    the best conventional cache's, and vFRM's cost relative to LRU at ``cost_flash_mb``: the readings side
    by side, in the order of :func:`sweep_readings`."""
    rows = []
    for rd in sweep_readings(res):
        idle, pricing, flush, hits = reading_choice(res, rd)
        r = reading(res, idle, pricing, flush, hits)
        summ = fig6_summary(r).set_index("trace")
        cost = io_cost_table(r).set_index("trace")
        for t in summ.index:
            rows.append({"idle_bins": idle, "io_pricing": pricing, "end_flush": flush, "hit_pricing": hits,
                         "trace": t,
                         "vfrm_small_pct": summ.loc[t, "vfrm_small_pct"],
                         "vfrm_large_pct": summ.loc[t, "vfrm_large_pct"],
                         "best_conv_large_pct": summ.loc[t, "best_conv_large_pct"],
                         "catches_up": bool(summ.loc[t, "catches_up"]),
                         "vfrm_rel_lru_pct": cost.loc[t, "vFRM_rel_lru_pct"]})
    return pd.DataFrame(rows)


def sweep_readings(res: xr.Dataset) -> tuple[Reading, ...]:
    """The readings a sweep ran (:mod:`tieringlab.readings`), from its dims: every idle-bin rule x every IO pricing,
    x every end-of-trace flush x every hit pricing, first axis slowest, the sweep's primary reading
    (``res.attrs``) the default."""
    acct = [ax(list(map(str, res[dim].values)), res.attrs[dim]) for dim, ax in
            (("end_flush", C.flush_axis), ("hit_pricing", C.hit_axis)) if dim in res.dims]
    return grid(C.idle_axis([str(i) for i in res["idle_bins"].values], res.attrs["idle_bins"]),
                C.pricing_axis([str(x) for x in res["io_pricing"].values], res.attrs["io_pricing"]), *acct)


def reading_choice(res: xr.Dataset, rd: Reading) -> tuple[str, str, str, str]:
    """``(idle_bins, io_pricing, end_flush, hit_pricing)`` of reading ``rd`` of sweep ``res``: its overrides over
    the primary reading (a sweep without the accounting dimensions: the paper's accounting)."""
    o = rd.overrides
    return (str(o.get(C.IDLE_PATH, res.attrs["idle_bins"])), str(o.get(C.PRICING_PATH, res.attrs["io_pricing"])),
            str(o.get(C.FLUSH_PATH, res.attrs.get("end_flush", C.FLUSHES[0]))),
            str(o.get(C.HIT_PATH, res.attrs.get("hit_pricing", C.HIT_PRICINGS[0]))))


#: The per-epoch-length values of Sec. 5.1's runs (:func:`epoch_sweep`); :func:`sweep` keeps them as ``epoch_<name>``.
_EPOCH_VARS = ("hit_ratio", "update_cost", "io_cost")


def _epoch_traces(p: VfrmSingleVmParams) -> list[str]:
    """The traces of Sec. 5.1's epoch sweep: the paper traces of ``p.fig6_traces``."""
    return [t for t in p.fig6_traces if t in PAPER_TRACES]


def _epoch_runs(p: VfrmSingleVmParams, ds: xr.Dataset, scale: float, part: xr.Dataset | None = None) -> np.ndarray:
    """vFRM (``p.policy``) on trace ``ds`` at ``cost_flash_mb`` for every epoch length of ``p.epoch_sweep_s``: an
    array ``(3, epochs)`` of :data:`_EPOCH_VARS`. ``part``: the trace's :func:`run_trace` result, whose run at
    ``p.policy.epoch_s`` (the same parameters, every Flash size of the sweep replayed independently) gives that
    epoch's values without a second run (``io_cost``: ``p.policy.io_pricing``, the paper's accounting)."""
    fb = np.array([int(round(p.cost_flash_mb * MiB * scale))])
    vals = np.full((len(_EPOCH_VARS), len(p.epoch_sweep_s)), np.nan)
    for j, e in enumerate(float(x) for x in p.epoch_sweep_s):
        if part is not None and e == float(p.policy.epoch_s):
            r = part.sel(policy="vFRM", idle_bins=p.policy.idle_bins, flash_mb=float(p.cost_flash_mb))
            cost = r["io_cost"].sel(io_pricing=p.policy.io_pricing, end_flush=C.FLUSHES[0],
                                    hit_pricing=C.HIT_PRICINGS[0])
            vals[:, j] = float(r["hit_ratio"]), float(r["update_cost"]), float(cost)
            continue
        r = registry.run("vFRM", ds, fb, params=dataclasses.replace(p.policy, epoch_s=e))
        vals[:, j] = [float(r[k].values[0]) for k in _EPOCH_VARS]
    return vals


def epoch_sweep(p: VfrmSingleVmParams, traces=None, seed: int = 0, res: xr.Dataset | None = None) -> xr.Dataset:
    """Sec. 5.1's epoch-length claim: vFRM (``p.policy``, its idle-bin rule) at ``cost_flash_mb`` on the paper traces
    of ``p.fig6_traces``, one run per epoch length of ``p.epoch_sweep_s`` (N stays ``p.policy.n_epochs``).
    Dims ``(trace, epoch_s)``: ``hit_ratio``, ``update_cost`` (s, the bin migrations), ``io_cost`` (s).

    ``res``: a :func:`sweep` of the same ``p``, which ran these while each trace was loaded (issue 35: one load
    and one binning per trace; the default epoch's values are the sweep's own run); without it (or when it has no
    epoch runs) each trace is loaded again and every epoch replayed."""
    names = _epoch_traces(p)
    eps = [float(e) for e in p.epoch_sweep_s]
    if res is not None and "epoch_hit_ratio" in res and set(names) <= set(map(str, res["trace"].values)) \
            and [float(e) for e in res["epoch_s"].values] == eps:
        sub = res[[f"epoch_{k}" for k in _EPOCH_VARS]].sel(trace=names)
        hr, upd, cost = (sub[f"epoch_{k}"].values.copy() for k in _EPOCH_VARS)
    else:
        hr = np.full((len(names), len(eps)), np.nan)
        upd = np.full_like(hr, np.nan)
        cost = np.full_like(hr, np.nan)
        with progress(total=len(names), desc="vFRM epoch sweep", unit="trace") as bar:
            for i, name in enumerate(names):
                ds, scale = load_trace(p, name, traces, seed)
                hr[i], upd[i], cost[i] = _epoch_runs(p, ds, scale)
                bar.update(1)
                del ds
    out = xr.Dataset({"hit_ratio": (("trace", "epoch_s"), hr), "update_cost": (("trace", "epoch_s"), upd),
                      "io_cost": (("trace", "epoch_s"), cost)},
                     coords={"trace": names, "epoch_s": eps},
                     attrs={"flash_mb": p.cost_flash_mb, "idle_bins": p.policy.idle_bins,
                            "io_pricing": p.policy.io_pricing, "n_history_epochs": p.policy.n_epochs,
                            "epoch_s_default": p.policy.epoch_s})
    out["epoch_s"].attrs["units"] = "s"
    out["update_cost"].attrs["units"] = "s"
    out["io_cost"].attrs["units"] = "s"
    return out


def hit_ratio_table(res: xr.Dataset) -> pd.DataFrame:
    """Fig. 6 as a tidy table: one row per (trace, policy, flash_mb) with the hit ratio in %."""
    df = (100 * res["hit_ratio"]).rename("hit_ratio_pct").to_dataframe().reset_index()
    return df[["trace", "policy", "flash_mb", "hit_ratio_pct"]]


def io_cost_table(res: xr.Dataset, flash_mb: float | None = None) -> pd.DataFrame:
    """Fig. 7 as a table: one row per trace at ``flash_mb`` (default the sweep's ``cost_flash_mb``) with
    each policy's ``C_IO`` (s, as replayed, and divided by the twin scale), each policy's cost relative to
    LRU's (%), and ``paper_vfrm_rel_lru_pct``, vFRM's relative cost where the paper's text prints it."""
    fm = float(res.attrs["cost_flash_mb"] if flash_mb is None else flash_mb)
    if fm not in res["flash_mb"].values:
        raise ValueError(f"flash_mb {fm:g} is not in the sweep's sizes {res['flash_mb'].values.tolist()}")
    if "LRU" not in res["policy"].values:
        raise ValueError("the sweep has no LRU results: Fig. 7's ratios are relative to LRU")
    cost = res["io_cost"].sel(flash_mb=fm)
    rel = 100 * cost / cost.sel(policy="LRU")
    rows = []
    for t in res["trace"].values:
        row = {"trace": str(t), "source": str(res["source"].sel(trace=t).values),
               "scale": float(res["scale"].sel(trace=t))}
        for pol in res["policy"].values:
            row[f"{pol}_io_cost_s"] = float(cost.sel(trace=t, policy=pol))
        for pol in res["policy"].values:
            row[f"{pol}_io_cost_paper_scale_s"] = row[f"{pol}_io_cost_s"] / row["scale"]
        for pol in res["policy"].values:
            row[f"{pol}_rel_lru_pct"] = float(rel.sel(trace=t, policy=pol))
        row["paper_vfrm_rel_lru_pct"] = PAPER_FIG7_REL_LRU_PCT.get(str(t), np.nan)
        rows.append(row)
    return pd.DataFrame(rows)


def fig6_summary(res: xr.Dataset, catch_up_pct: float | None = None) -> pd.DataFrame:
    """Per trace: vFRM's hit ratio and the best conventional cache's (max of LRU/ARC/CAR in the sweep)
    at the smallest and the largest Flash size, the gap (best minus vFRM, points), ``catches_up`` (vFRM
    at least the best minus ``catch_up_pct`` points at the largest size) and ``gap_narrows`` (the gap
    at the largest size is smaller than at the smallest)."""
    tol = float(res.attrs["catch_up_pct"] if catch_up_pct is None else catch_up_pct)
    conv = [c for c in CONVENTIONAL if c in res["policy"].values]
    if "vFRM" not in res["policy"].values or not conv:
        raise ValueError("fig6_summary needs vFRM and at least one of LRU/ARC/CAR in the sweep")
    hr = 100 * res["hit_ratio"]
    v = hr.sel(policy="vFRM")
    best = hr.sel(policy=conv).max("policy")
    lo, hi = res["flash_mb"].values.min(), res["flash_mb"].values.max()
    df = pd.DataFrame({
        "trace": [str(t) for t in res["trace"].values],
        "source": [str(s) for s in res["source"].values],
        "vfrm_small_pct": v.sel(flash_mb=lo).values, "best_conv_small_pct": best.sel(flash_mb=lo).values,
        "vfrm_large_pct": v.sel(flash_mb=hi).values, "best_conv_large_pct": best.sel(flash_mb=hi).values,
    })
    df["gap_small_pts"] = df["best_conv_small_pct"] - df["vfrm_small_pct"]
    df["gap_large_pts"] = df["best_conv_large_pct"] - df["vfrm_large_pct"]
    df["catches_up"] = df["gap_large_pts"] <= tol
    df["gap_narrows"] = df["gap_large_pts"] < df["gap_small_pts"]
    df.attrs.update(small_flash_mb=float(lo), large_flash_mb=float(hi), catch_up_pct=tol)
    return df


def _names(index) -> str:
    return ", ".join(map(str, index)) if len(index) else "none"


def cache_evicts(res: xr.Dataset) -> pd.Series:
    """Per trace of a sweep (or a :func:`reading` of it): whether the page caches evict at ``cost_flash_mb`` (the
    trace's distinct 4 KB pages exceed the cache's pages; LRU, ARC and CAR admit every miss, so they evict exactly
    then). Empty when the sweep has no footprint counts."""
    if "pre_pages" not in res:
        return pd.Series(dtype=bool)
    fb = res["flash_bytes"].sel(flash_mb=float(res.attrs["cost_flash_mb"]))
    cap = fb.values.astype(np.int64) // int(res.attrs.get("page_bytes", PAGE_BYTES))
    return pd.Series(res["pre_pages"].values.astype(np.int64) > cap, index=[str(t) for t in res["trace"].values])


def _reading_values(r: xr.Dataset, tag: str, first_pricing: bool, flush: bool = False) -> dict:
    """The Fig. 6/7 rows of one reading (a :func:`reading` view; ``tag`` names it in the notes; ``flush``: the
    reading writes dirty data back at the trace's end). Fig. 6 rows depend on the idle rule only: they are given
    once per rule (``first_pricing``: with its first pricing and accounting)."""
    out: dict[str, tuple[float | bool, str]] = {}
    costs = io_cost_table(r).set_index("trace")
    summ = fig6_summary(r).set_index("trace") if first_pricing else None  # the Fig. 6 rows: once per idle rule
    fm = float(r.attrs["cost_flash_mb"])
    evicts = cache_evicts(r)
    paper = [t for t in costs.index if t in PAPER_TRACES]
    src = ", ".join(sorted({str(s) for s in costs.loc[paper, "source"]})) if paper else ""
    sets = "Table 1" if set(paper) <= set(FIG6_TRACES) else "Table 9" if set(paper) <= set(TABLE9_TRACES) else \
        "Tables 1 and 9"
    if paper:
        rel = costs.loc[paper, "vFRM_rel_lru_pct"]
        # the conventional caches other than LRU (LRU has its own row): one quantity per row (the ledger audit
        # found "the cheapest of LRU/ARC/CAR" equal to LRU's ratio wherever LRU was the cheapest)
        conv = [c for c in CONVENTIONAL if c != "LRU" and f"{c}_io_cost_s" in costs.columns]
        cheapest = costs.loc[paper, [f"{c}_io_cost_s" for c in conv]].min(axis=1) if conv else None
        rel_best = 100 * costs.loc[paper, "vFRM_io_cost_s"] / cheapest if conv else None
        n = len(paper)
        where = f"{n} {sets} trace(s) ({src}) at {fm:g} MB; {tag}"
        out[C.COST_FRACTION_OF_LRU] = (float(rel.max()), f"largest on {rel.idxmax()}; {where}")
        # ARC and CAR differ from LRU only on traces where the page caches evict (issue 34: elsewhere this row
        # computed LRU's ratio again); without such a trace the row has no value (precondition PRE_CACHES_EVICT)
        ev = [t for t in paper if bool(evicts.get(t, True))]
        if not conv:
            out[C.COST_BELOW_ALL_CONVENTIONAL] = (None, f"neither ARC nor CAR in this run; {where}")
        elif not ev:
            out[C.COST_BELOW_ALL_CONVENTIONAL] = (None, f"no paper trace's footprint exceeds the {fm:g} MB page "
                                                        f"cache: ARC and CAR cost what LRU costs; {where}")
        else:
            rb = rel_best.loc[ev]
            out[C.COST_BELOW_ALL_CONVENTIONAL] = (
                float(rb.max()), f"vs the cheaper of {'/'.join(conv)}, over the {len(ev)} trace(s) where the page "
                f"caches evict ({_names(ev)}); largest on {rb.idxmax()}; {where}")
        if not evicts.empty:
            fits = [t for t in paper if not evicts.get(t, True)]
            out[C.PRE_WRITEBACKS_BILLED] = (
                bool(flush or not fits), ("flushed at the trace's end; " if flush else "")
                + f"{len(paper) - len(fits)} of {len(paper)} traces' footprints exceed the {fm:g} MB page cache; "
                f"fits: {_names(fits)}; {tag}")
            if first_pricing and not flush:
                out[C.PRE_CACHES_EVICT] = (len(ev), f"{_names(ev)}; of {len(paper)} paper traces at {fm:g} MB")
        k = int((rel <= 10.0).sum())
        out[C.ORDER_OF_MAGNITUDE] = (
            bool(k > n / 2), f"{k} of {n} traces at <= 10 % of LRU's cost (median {rel.median():.1f} %): "
            + _names(rel.index[rel <= 10.0]) + f"; {where}")
        if first_pricing:
            s = summ.loc[paper]
            out[C.CATCHES_UP] = (
                bool(s["catches_up"].sum() > n / 2),
                f"{int(s['catches_up'].sum())} of {n} traces ({src}) catch up: " + _names(s.index[s["catches_up"]])
                + f"; {tag}")
            out[C.GAP_NARROWS] = (
                bool(s["gap_narrows"].sum() > n / 2),
                f"{int(s['gap_narrows'].sum())} of {n} traces ({src}) narrow the gap: "
                + _names(s.index[s["gap_narrows"]]) + f"; {tag}")
    def billed(name):
        ev = bool(evicts[name])
        return (bool(flush or ev), ("flushed at the trace's end; " if flush else "") + f"the {fm:g} MB page cache "
                + ("evicts" if ev else "holds the whole footprint (never evicts)") + f"; {tag}")

    if "mds_0" in costs.index:
        out[C.MDS0_COST_REL_LRU] = (
            float(costs.loc["mds_0", "vFRM_rel_lru_pct"]),
            f"{costs.loc['mds_0', 'source']} at scale {costs.loc['mds_0', 'scale']:.4g}; {tag}")
        if "mds_0" in evicts.index:
            out[C.PRE_MDS0_WRITEBACKS_BILLED] = billed("mds_0")
    if "cloudphysics" in costs.index:
        out[C.COST_FRACTION_OF_LRU_CLOUDPHYSICS] = (
            float(costs.loc["cloudphysics", "vFRM_rel_lru_pct"]), f"real trace at {fm:g} MB; {tag}")
        if "cloudphysics" in evicts.index:
            out[C.PRE_CLOUDPHYSICS_WRITEBACKS_BILLED] = billed("cloudphysics")
        if first_pricing:
            c = summ.loc["cloudphysics"]
            out[C.CATCHES_UP_CLOUDPHYSICS] = (
                bool(c["catches_up"]), f"best of LRU/ARC/CAR minus vFRM: {c['gap_small_pts']:.2f} points at "
                f"{r['flash_mb'].values.min():g} MB, {c['gap_large_pts']:.2f} at {r['flash_mb'].values.max():g} MB; "
                f"{tag}")
    return out


def preconditions_table(res: xr.Dataset) -> pd.DataFrame:
    """Per trace of a sweep: the counts of :func:`bin_reuse` that decide the preconditions of
    :mod:`tieringlab.claims.vfrm` and the two shares (%): ``never_reused_pct`` (bin heatings, i.e. vFRM move-ins,
    followed by no IO to the bin in the next N epochs) and ``warm_pct`` (re-access requests whose bins all had IO in
    the previous N epochs). Empty when the sweep has no such counts."""
    cols = ["trace", "heatings", "heatings_never_reused", "never_reused_pct", "reaccess_requests", "warm_requests",
            "warm_pct"]
    if "pre_heatings" not in res:
        return pd.DataFrame(columns=cols)
    h, nv, ra, w = (res[k].values.astype(np.int64) for k in PRE_VARS)
    with np.errstate(invalid="ignore", divide="ignore"):
        return pd.DataFrame({"trace": [str(t) for t in res["trace"].values], "heatings": h, "heatings_never_reused": nv,
                             "never_reused_pct": np.where(h > 0, 100 * nv / np.maximum(h, 1), np.nan),
                             "reaccess_requests": ra, "warm_requests": w,
                             "warm_pct": np.where(ra > 0, 100 * w / np.maximum(ra, 1), np.nan)}, columns=cols)


def _precondition_values(res: xr.Dataset) -> dict[str, tuple[float | bool, str]]:
    """The precondition rows of :mod:`tieringlab.claims.vfrm` from the sweep's :func:`bin_reuse` counts (trace
    properties: one value whatever the reading)."""
    t = preconditions_table(res).set_index("trace")
    out: dict[str, tuple[float | bool, str]] = {}
    if t.empty:
        return out
    ep = (f"{float(res.attrs['epoch_s']):g} s epochs, N = {int(res.attrs['n_history_epochs'])}, "
          f"{int(res.attrs['bin_bytes']) // MiB} MB bins")

    def never(name):
        r = t.loc[name]
        return (f"{int(r['heatings_never_reused'])} of {int(r['heatings'])} bin heatings (move-ins) are followed by no "
                f"IO to the bin in the next N epochs")

    def warm(name):
        r = t.loc[name]
        return f"{int(r['warm_requests'])} of {int(r['reaccess_requests'])} re-access requests"

    if "mds_0" in t.index:
        out[C.PRE_MDS0_NEVER_REUSED] = (float(t.loc["mds_0", "never_reused_pct"]), f"{never('mds_0')}; {ep}")
    paper = [x for x in t.index if x in PAPER_TRACES]
    if paper:
        nr = t.loc[paper, "never_reused_pct"]
        each = ", ".join(f"{x} {v:.1f} %" for x, v in nr.items())
        out[C.PRE_NEVER_REUSED] = (float(nr.max()), f"largest on {nr.idxmax()}; per trace: {each}; {ep}")
        wp = t.loc[paper, "warm_pct"]
        k, n = int((wp >= C.MOST_PCT).sum()), len(paper)
        out[C.PRE_WARM_REUSE] = (bool(k > n / 2), f"{k} of {n} traces at >= {C.MOST_PCT:g} %: "
                                 + ", ".join(f"{x} {v:.1f} %" for x, v in wp.items()) + f"; {ep}")
    if "cloudphysics" in t.index:
        out[C.PRE_CLOUDPHYSICS_NEVER_REUSED] = (float(t.loc["cloudphysics", "never_reused_pct"]),
                                                f"{never('cloudphysics')}; {ep}")
        out[C.PRE_CLOUDPHYSICS_WARM_REUSE] = (float(t.loc["cloudphysics", "warm_pct"]),
                                              f"{warm('cloudphysics')}; {ep}")
    return out


def claim_values(res: xr.Dataset, epochs: xr.Dataset | None = None,
                 twin: xr.Dataset | list | None = None) -> dict[str, dict[str, tuple[float | bool, str]]]:
    """Reproduced values of the rows of :mod:`tieringlab.claims.vfrm` by reading: ``{reading name: {claim id:
    (value, note)}}`` (the shape of :meth:`tieringlab.results.Outputs.claims_by_reading`), reading names those of
    :func:`tieringlab.claims.vfrm.reading_name` (``"default"``: ``keep``, ``random``). Every row is one paper claim;
    the readings a row depends on (idle-bin rule, and IO pricing for the Fig. 7 rows) give its values under the
    other readings the sweep ran. Rows whose traces are not in the sweep are left out (the ledger shows them as not
    reproduced yet). Paper rows use the Table 1 and Table 9 traces only; ``*.cloudphysics`` rows the real trace.
    Under ``"default"`` also: the preconditions (from the sweep's :func:`bin_reuse` counts), with ``epochs``
    (:func:`epoch_sweep`) the Sec. 5.1 rows, and the Sec. 4.3 metadata row always. With ``twin``
    (:func:`twin_sweep`), also the mds0 cost row and its preconditions under every twin reading (names
    ``"<twin reading>[.<accounting readings>]"``)."""
    by: dict[str, dict[str, tuple[float | bool, str]]] = {"default": {}}
    idles = [str(i) for i in res["idle_bins"].values] if "idle_bins" in res.dims else [res.attrs["idle_bins"]]
    pricings = [str(i) for i in res["io_pricing"].values] if "io_pricing" in res.dims else [res.attrs["io_pricing"]]
    flushes = [str(i) for i in res["end_flush"].values] if "end_flush" in res.dims else [C.FLUSHES[0]]
    hitps = [str(i) for i in res["hit_pricing"].values] if "hit_pricing" in res.dims else [C.HIT_PRICINGS[0]]
    acct = "end_flush" in res.dims
    for idle in idles:
        if idle not in C.IDLE_READINGS:
            continue
        first = True
        for pricing, flush, hits in itertools.product(pricings, flushes, hitps):
            if pricing not in C.PRICINGS or flush not in C.FLUSHES or hits not in C.HIT_PRICINGS:
                continue
            r = reading(res, idle, pricing, flush, hits) if acct else reading(res, idle, pricing)
            tag = f"idle_bins={idle}, io_pricing={pricing}, end_flush={flush}, hit_pricing={hits}"
            for cid, v in _reading_values(r, tag, first, flush == "flush").items():
                name = C.reading_name(idle) if cid in C.IDLE_ROWS else C.reading_name(idle, pricing, flush, hits)
                if cid == C.PRE_CACHES_EVICT:
                    name = "default"  # a property of the trace and the cache size alone
                by.setdefault(name, {})[cid] = v
            first = False
    for tw in ([twin] if isinstance(twin, xr.Dataset) else (twin or [])):
        by.update(_twin_values(tw))
    out = by["default"]
    out.update(_precondition_values(res))
    n_hist, bin_bytes = int(res.attrs["n_history_epochs"]), int(res.attrs["bin_bytes"])
    meta = 2 * n_hist + 8 + 4
    out[C.HEAT_MAP_OVERHEAD] = (100.0 * meta / bin_bytes, f"{meta} bytes per {bin_bytes} B bin (N = {n_hist})")
    if epochs is not None and epochs.sizes.get("trace", 0):
        e0 = float(epochs.attrs["epoch_s_default"])
        short = [float(e) for e in epochs["epoch_s"].values if e < e0]
        if short:
            hr = 100 * epochs["hit_ratio"]
            gain = hr.sel(epoch_s=short) - hr.sel(epoch_s=e0)
            i_t, i_e = np.unravel_index(int(np.nanargmax(gain.values)), gain.shape)
            out[C.SHORT_EPOCHS_NO_HIT_GAIN] = (
                float(gain.max()), f"largest on {epochs['trace'].values[i_t]} at {short[i_e]:g} s; gains over "
                f"{e0:g} s per epoch (max over traces): " + ", ".join(f"{e:g} s {float(gain.sel(epoch_s=e).max()):+.2f}"
                                                                    for e in short)
                + f"; {epochs.sizes['trace']} trace(s) at {epochs.attrs['flash_mb']:g} MB, "
                  f"idle_bins={epochs.attrs['idle_bins']}")
            upd = epochs["update_cost"]
            e_min = min(short)
            more = (upd.sel(epoch_s=e_min) > upd.sel(epoch_s=e0)).values
            n = more.size
            out[C.SHORT_EPOCHS_EXTRA_COST] = (
                bool(more.sum() > n / 2), f"{int(more.sum())} of {n} traces pay more bin migrations at {e_min:g} s "
                f"than at {e0:g} s: " + _names(epochs["trace"].values[more]) + f"; at {epochs.attrs['flash_mb']:g} MB, "
                f"idle_bins={epochs.attrs['idle_bins']}")
    return by


def accounting_table(res: xr.Dataset, idle_bins: str | None = None, io_pricing: str | None = None) -> pd.DataFrame:
    """Fig. 7 under every accounting reading side by side (issue 34): one row per trace with vFRM's cost relative to
    LRU's (%) under each ``(end_flush, hit_pricing)`` (columns ``rel_lru_pct.<end_flush>.<hit_pricing>``), the
    trace's distinct (written) 4 KB pages, whether the Fig. 7 page cache evicts, and vFRM's dirty bins and LRU's
    dirty pages at the end (what ``flush`` charges), at the sweep's idle rule and IO pricing (defaults: primary)."""
    if "end_flush" not in res.dims:
        raise ValueError("accounting_table: the sweep has no accounting readings (end_flush, hit_pricing)")
    fm = float(res.attrs["cost_flash_mb"])
    rows = {}
    for flush, hits in itertools.product(res["end_flush"].values, res["hit_pricing"].values):
        r = reading(res, idle_bins, io_pricing, str(flush), str(hits))
        rows[f"rel_lru_pct.{flush}.{hits}"] = io_cost_table(r, fm).set_index("trace")["vFRM_rel_lru_pct"]
    df = pd.DataFrame(rows)
    df["pages"] = res["pre_pages"].values
    df["written_pages"] = res["pre_written_pages"].values
    df["caches_evict"] = cache_evicts(res).reindex(df.index).values
    df.attrs.update(flash_mb=fm)
    return df.reset_index().rename(columns={"index": "trace"})


def verdict_flips(by: dict[str, dict], claims=None) -> pd.DataFrame:
    """Which verdicts flip across readings: for every claim row of ``by`` (the shape of :func:`claim_values`) and every
    reading it was recorded under, its value, its verdict there (preconditions as recorded under that reading, else
    their default values: :func:`tieringlab.claims.verdict_given`) and its verdict on the value alone (``check``,
    preconditions ignored), each beside the default reading's; ``flips``: either differs from the default's. One row
    per (claim, reading); ``claims``: the Claim rows (default: :data:`tieringlab.claims.vfrm.CLAIMS`)."""
    from tieringlab.claims import verdict_given  # noqa: PLC0415  (the ledger's own rule)

    defined = {c.id: c for c in (C.CLAIMS if claims is None else claims)}
    pre_ids = [i for i, c in defined.items() if c.kind == "precondition"]

    def value(v):
        return v[0] if isinstance(v, tuple) else v

    def verdicts(cid, name):
        vals = {**by["default"], **by.get(name, {})}
        pre = {pid: (defined[pid], value(vals.get(pid))) for pid in pre_ids}
        v = value(vals.get(cid))
        return v, verdict_given(defined[cid], v, pre)[0], defined[cid].verdict(v)

    rows = []
    for cid in by["default"]:
        if cid not in defined or defined[cid].kind == "precondition":
            continue
        _, base, base_raw = verdicts(cid, "default")
        for name, vals in by.items():
            if cid in vals:
                v, verdict, raw = verdicts(cid, name)
                rows.append({"claim": cid, "reading": name, "value": v, "verdict": verdict, "check_only": raw,
                             "flips": verdict != base or raw != base_raw})
    return pd.DataFrame(rows, columns=["claim", "reading", "value", "verdict", "check_only", "flips"])


def verdict_matrix(flips: pd.DataFrame) -> pd.DataFrame:
    """The compact view of :func:`verdict_flips` (issue 34): one row per claim, one column per reading that changes
    one choice only (``default`` first), each cell the row's verdict under that reading (preconditions as recorded
    there; empty where the row was not recorded under it), and ``flips_under``: the readings whose verdict differs
    from the default's."""
    one = flips[~flips["reading"].str.contains(".", regex=False)]
    if one.empty:
        return pd.DataFrame(columns=["default", "flips_under"])
    m = one.pivot(index="claim", columns="reading", values="verdict")
    cols = ["default"] + [c for c in dict.fromkeys(one["reading"]) if c != "default"]
    m = m.reindex(columns=cols).fillna("")
    m["flips_under"] = [", ".join(c for c in cols[1:] if row[c] and row[c] != row["default"]) for _, row in
                        m.iterrows()]
    m.columns.name = None
    return m


def reading_descriptions(readings) -> pd.DataFrame:
    """One line per non-default reading of ``readings`` (:class:`tieringlab.readings.Reading` objects, e.g. the
    axes of :mod:`tieringlab.claims.vfrm`): its name, the parameter values it sets and why (the source or the
    documented choice), for the notebooks' verdict tables."""
    rows = [{"reading": r.name, "sets": ", ".join(f"{k} = {v}" for k, v in r.overrides.items()), "why": r.why}
            for r in readings if r.overrides]
    return pd.DataFrame(rows, columns=["reading", "sets", "why"]).drop_duplicates("reading")
