"""notebooks/03_gvfrm_multi_vm.ipynb: GLB-vFRM (G1-vFRM) and G2-vFRM against LRU, ARC and CAR on the
multi-VM workloads cf4, cuf4 and all8 (vFRM paper Sec. 5.3, Fig. 8-9; thesis Sec. 4.3.3, Fig. 24-25).

The workloads (vFRM paper Sec. 5.3; thesis Sec. 4.3.3): "cf4" mixes the 4 cache-friendly traces, "cuf4"
the 4 cache-unfriendly ones and "all8" all 8, with the classification of vFRM Sec. 3.2 / Table 1
(= thesis Table 12): friendly mids0, src12, stg0, usr0; unfriendly stg1, usr2, web2, src21. One trace
is one VM; :func:`tieringlab.traces.mix_traces` aligns them to one start and gives each its own
address space.

For each (mix, policy), **one** call covers all flash sizes, by the policy's name through
:func:`tieringlab.policies.registry.run` (G1-vFRM and G2-vFRM of one mix share one binning of the trace,
:func:`tieringlab.policies.vfrm.bin_trace`, made once per mix and passed to each call). The IO cost is vFRM
Eq. 4 (:mod:`tieringlab.policies.iocost`: 128 KB Table 3 rows for the vFRM family, 4 KB for the page
caches), normalized to LRU's at the same mix and flash size for Fig. 9.

**Documented choices** (the papers are silent):

1. *Flash sizes*: Sec. 5.3 says "ranging from 1G to 32G"; the points are read as the powers of two
   1, 2, 4, 8, 16, 32 GB (six points, the sweep size of issue 5).
2. *One scale per mix*: a twin at scale ``s`` has ``s`` times the bytes and requests of the paper's
   trace (:mod:`tieringlab.traces.twins`), so the flash must shrink by the same ``s``. The members of
   a mix are therefore generated at one common scale, the smallest :func:`tieringlab.traces.effective_scale`
   of its members (``traces.scale`` capped by ``traces.max_wss_gb``), and every flash size of that
   mix is ``flash_gb x GB x s`` bytes. The VMs keep the paper's proportions to each other and to the
   flash. With ``traces.source: msr`` the scale is 1.
3. *λ per VM* (Eq. 2): one value for every VM, 1 by default (vFRM Sec. 5.2.1 sets λ = 1; Sec. 5.3
   names no per-VM value).
4. Epochs start at the mix's common start ``t = 0`` (vFRM paper Sec. 5.3: "a unified simulation
   start time").

**Readings** (issue 17). Two choices decide verdicts and are run side by side: G2-vFRM's counter
``aging_period`` (every period of ``aging_periods``; default one day, see
:class:`tieringlab.policies.gvfrm.GvfrmParams`) and the ``io_pricing`` of multi-IO requests (both
readings of :mod:`tieringlab.policies.iocost`, from the same counts). The sweep carries dims
``aging_period`` and ``io_pricing``; :func:`reading` picks one as a plain ``(mix, policy, flash_gb)``
Dataset. G1's private-zone split (``private_split``: Sec. 4.5's equal portions or Sec. 5.3's
dynamic split) is selectable; the default is Sec. 4.5's, the algorithm's own section. Issue 34's twin readings of the
mixes (:func:`twin_sweep`, ``twin_readings``): every mix rebuilt from its members regenerated under the reading, every
policy at every Flash size; the read ratios (mixes that differ in ``is_write`` only) share one run.

Paper scale: every twin at scale 1 (``traces.max_wss_gb: 0``): cf4 has 1.1 x 10^7 requests, cuf4
1.7 x 10^7 and all8 2.8 x 10^7 (2.2 x 10^8 page accesses). The page caches replay without per-access
arrays (:mod:`tieringlab.policies.caching`), G1/G2 as compiled epoch loops
(:mod:`tieringlab.policies.gvfrm`); one mix is built at a time and dropped before the next.

Known limit: the vFRM family works on 1 MB bins whatever the twin scale, so at a small scale
(``traces.scale`` ~ 0.01, the notebook's fast defaults) a VM's hot set spans few bins and the flash
few bins; the curves at paper scale (``params.yaml``) are the reproduction.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from tieringlab.claims import gvfrm as C
from tieringlab.claims.vfrm import TWIN_READING_NAMES, TWIN_READINGS
from tieringlab.experiments.vfrm_single_vm import accounting_costs, bin_reuse, page_footprint
from tieringlab.params import cross_field, increasing, param, section
from tieringlab.policies import registry
from tieringlab.policies.caching import CachingParams, simulate_rewrites
from tieringlab.policies.gvfrm import GvfrmParams
from tieringlab.policies.iocost import IO_PRICINGS
from tieringlab.policies.vfrm import bin_trace, with_writes
from tieringlab.progress import progress
from tieringlab.readings import Reading, run_each, select
from tieringlab.traces.mix import mix_traces
from tieringlab.traces.source import effective_scale, load, section_dict
from tieringlab.traces.split import split_arrays, unit_span
from tieringlab.traces.twins import TWINS, msr_twin
from tieringlab.units import PAGE_BYTES, GiB

__all__ = ["GvfrmMultiVmParams", "CF4", "CUF4", "ALL8", "MIXES", "POLICIES", "FLASH_GB", "members", "mix_scale",
           "build_mix", "aging_readings", "sweep", "reading", "aging_sensitivity", "pricing_table", "accounting_table",
           "table",
           "cost_reduction", "g2_threshold_gb", "preconditions_table", "cache_evicts", "claim_values", "twin_sweep",
           "twin_table", "twin_at"]

#: vFRM Sec. 3.2 / Table 1 "Friendly" (thesis Table 12): mids0, src12, stg0, usr0 (MSR file names).
CF4 = ("mds_0", "src1_2", "stg_0", "usr_0")
#: vFRM Sec. 3.2 / Table 1 "Unfriendly": stg1, usr2, web2, src21.
CUF4 = ("stg_1", "usr_2", "web_2", "src2_1")
#: vFRM Sec. 5.3: "all 8 traces".
ALL8 = CF4 + CUF4
MIXES = ("cf4", "cuf4", "all8")
#: Fig. 8/9 (vFRM paper: GLB-vFRM = G1-vFRM) and thesis Fig. 24/25 (G1, G2), against LRU, ARC, CAR.
POLICIES = ("G1-vFRM", "G2-vFRM", "LRU", "ARC", "CAR")
CONVENTIONAL = ("LRU", "ARC", "CAR")
#: Sec. 5.3: "various Flash sizes ranging from 1G to 32G" (powers of two: documented choice 1).
FLASH_GB = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)


#: The per-mix precondition counts :func:`sweep` keeps (from :func:`tieringlab.experiments.vfrm_single_vm.bin_reuse`,
#: each VM's bins apart), dims ``(mix,)``: bin heatings (G-vFRM move-ins), those followed by no IO in the next N
#: epochs, and the bins with IO in at least two epochs (all VMs, the smallest VM's, the largest VM's).
PRE_VARS = ("pre_heatings", "pre_heatings_never_reused", "pre_reusable_bins", "pre_reusable_bins_min_vm",
            "pre_reusable_bins_max_vm")
#: The per-mix 4 KB footprint :func:`sweep` keeps (:func:`tieringlab.experiments.vfrm_single_vm.page_footprint`, each
#: VM's pages apart), dims ``(mix,)``: distinct pages and distinct written pages (the billing preconditions, issue 34).
PAGE_VARS = ("pre_pages", "pre_written_pages")


@section("gvfrm_multi_vm")
@dataclass(frozen=True)
class GvfrmMultiVmParams:
    """Fig. 8/9 (vFRM paper) and Fig. 24/25 (thesis): mixes x policies x flash sizes."""

    uses = ("traces",)

    mixes: tuple[str, ...] = param(MIXES, "vFRM Sec. 5.3 / thesis Sec. 4.3.3: the workloads cf4, cuf4, all8",
                                   choices=MIXES)
    cf4: tuple[str, ...] = param(CF4, "vFRM Sec. 3.2, Table 1 'Friendly': mids0, src12, stg0, usr0 (one VM each)",
                                 choices=tuple(TWINS))
    cuf4: tuple[str, ...] = param(CUF4, "vFRM Sec. 3.2, Table 1 'Unfriendly': stg1, usr2, web2, src21",
                                  choices=tuple(TWINS))
    all8: tuple[str, ...] = param(ALL8, "vFRM Sec. 5.3: all 8 traces of Table 1", choices=tuple(TWINS))
    policies: tuple[str, ...] = param(POLICIES, "Fig. 8/9 (GLB-vFRM = G1-vFRM), thesis Fig. 24/25 (+ G2-vFRM); "
                                      "LRU is required (Fig. 9 normalizes to it)", choices=POLICIES)
    flash_gb: tuple[float, ...] = param(FLASH_GB, "Sec. 5.3: 1 to 32 GB; powers of two (documented choice), "
                                        "paper GB, multiplied by the mix's twin scale; increasing", bounds=(1e-3, 1e4))
    policy: GvfrmParams = param(GvfrmParams(), "G1-vFRM and G2-vFRM (tieringlab.policies.gvfrm.GvfrmParams: "
                                "vFRM's bins, epochs, Eq. 1-3 and cost model, the zones); λ one value for every VM "
                                "(documented choice 3); its aging_period and io_pricing are the primary reading "
                                "(the others run side by side: aging_periods, both pricings)")
    caches: CachingParams = param(CachingParams(threads=2), "the 4 KB page caches LRU, ARC, CAR "
                                  "(tieringlab.policies.caching.CachingParams, vFRM Sec. 5.1); threads: flash sizes "
                                  "replayed at once (speed only). Their io_cost is not used: the sweep keeps the "
                                  "costs under both pricings")
    aging_periods: tuple[int, ...] = param((288, 12, 1), "G2-vFRM runs with each of these aging periods (epochs: 1 "
                                           "day, 1 h, 5 min), side by side in the tables and the ledger (the thesis "
                                           "gives none); must include policy.aging_period", bounds=(1, 100000))
    twin_readings: tuple[str, ...] = param(("reads_10", "reads_90"), "twin readings of the mixes (issue 34; "
                                           "tieringlab.claims.vfrm.TWIN_READINGS: read ratio, request-size mix, "
                                           "cold-data packing): each rebuilds every mix from its members regenerated "
                                           "under the reading and replays every policy at every Flash size (the Fig. "
                                           "8/9 rows read every size; G2 at policy.aging_period only); recorded as "
                                           "readings of the same rows; only with traces.source twin and "
                                           "run_twin_readings; the read ratios share one binning and one replay per "
                                           "cache", choices=TWIN_READING_NAMES)
    run_twin_readings: bool = param(True, "run twin_readings on the mixes (issue 34). The read-ratio readings ride "
                                    "on the main sweep's runs (sweep's twin_parts: their write flags recounted from "
                                    "the same replays, G1/G2 rerun at the primary aging period); the others are "
                                    "full sweeps of their own. False: the rows carry the default twins only")
    twin_reading_mixes: tuple[str, ...] = param(MIXES, "the mixes that the twin readings moving addresses "
                                                "(sizes_4k, sizes_128k, cold_packed: full sweeps of their own) "
                                                "regenerate (those also in mixes; none: they do not run); the "
                                                "read-ratio readings ride on every mix of mixes. Rows of other mixes "
                                                "carry no value under them", choices=MIXES)

    def __post_init__(self):
        """Cross-field checks (ValueError naming the parameter; every failed check is reported). ``flash_gb``
        is Fig. 8's x axis (and the ``flash_gb`` coordinate of the sweep): each size once, in increasing order."""
        problems = []
        if "LRU" not in self.policies:
            problems.append(f"policies must include 'LRU' (Fig. 9 normalizes IO cost to LRU), got {self.policies}")
        for field in ("mixes", "policies", "aging_periods"):
            vals = getattr(self, field)
            if len(set(vals)) != len(vals):
                problems.append(f"{field} must not repeat a value, got {vals}")
        problems += increasing("flash_gb", self.flash_gb, "Fig. 8's x axis")
        for m in MIXES:
            vals = getattr(self, m)
            if len(set(vals)) != len(vals):
                problems.append(f"{m} must list distinct traces (one VM each), got {vals}")
        if len(set(self.twin_readings)) != len(self.twin_readings):
            problems.append(f"twin_readings must not repeat a value, got {list(self.twin_readings)}")
        if self.policy.aging_period not in self.aging_periods:
            problems.append(f"aging_periods must include policy.aging_period ({self.policy.aging_period}); got "
                            f"{list(self.aging_periods)}")
        cross_field(problems)


def aging_readings(p: GvfrmMultiVmParams) -> tuple[Reading, ...]:
    """G2-vFRM's readings the sweep runs side by side (:mod:`tieringlab.readings`): ``policy.aging_period`` at each
    period of ``p.aging_periods``, the primary one (``p.policy``'s) the default. The IO pricings need no rerun: both
    come from the same counts."""
    return C.aging_axis(p.aging_periods, p.policy.aging_period)


def members(p: GvfrmMultiVmParams, mix: str) -> tuple[str, ...]:
    """The member traces (one VM each) of ``mix``."""
    if mix not in MIXES:
        raise ValueError(f"mix must be one of {list(MIXES)}, got {mix!r}")
    return getattr(p, mix)


def mix_scale(names, traces: Any = None) -> float:
    """The common twin scale of a mix (documented choice 2): the smallest effective scale of its members;
    1 for real traces (``traces.source: msr``)."""
    t = section_dict(traces)
    if t.get("source", "twin") != "twin":
        return 1.0
    return float(min(effective_scale(n, t) for n in names))


def build_mix(p: GvfrmMultiVmParams, mix: str, traces: Any = None, seed: int = 0,
              overrides: dict | None = None) -> xr.Dataset:
    """The multi-VM trace of ``mix`` (vFRM Sec. 5.3): members at the mix's common scale, merged by
    :func:`tieringlab.traces.mix_traces`. ``attrs['scale']`` is that scale. ``overrides``: a twin reading's
    :class:`tieringlab.traces.twins.TwinSpec` overrides, every member twin regenerated under them (issue 34; twins
    only)."""
    names = members(p, mix)
    t = section_dict(traces)
    s = mix_scale(names, t)
    tt = {**t, "scale": s, "max_wss_gb": 0.0} if t.get("source", "twin") == "twin" else t
    if overrides:
        if t.get("source", "twin") != "twin":
            raise ValueError(f"twin-reading overrides {overrides} need traces.source 'twin'")
        got = [msr_twin(n, scale=effective_scale(n, tt), seed=seed, **overrides) for n in names]
    else:
        got = [load(n, tt, seed) for n in names]
    out = mix_traces(got, name=mix, names=names)
    out.attrs["scale"] = s
    return out


#: Page accesses per chunk of :func:`page_compacted`'s marking pass and pages per window of its ranking pass (memory
#: only: the result does not depend on them).
_MARK_PAGES = 1 << 22
_RANK_PAGES = 1 << 25


def page_compacted(ds: xr.Dataset, page_bytes: int = PAGE_BYTES) -> xr.Dataset:
    """The trace the page caches (LRU, ARC, CAR) replay (issue 35): ``ds``'s ``size`` and ``is_write`` with each
    request's ``offset`` moved so that the pages no request touches are squeezed out. Page ``q`` (of
    ``page_bytes``) becomes page ``rank(q)``, its rank among the touched pages, and the offset within the page is
    kept: distinct pages stay distinct, one page stays one page, and a request's pages (all touched, consecutive)
    stay consecutive, so a cache that sees only pages (4 KB page ids, the pages of each request in order) makes
    the same decisions, bit for bit. Its numba engine keeps about 9 bytes per page of the address span
    (:func:`tieringlab.policies.caching.simulate`): on the paper-scale all8 mix 1.5 x 10^8 touched pages instead
    of a 2.7 x 10^8-page span, 1.1 GB less per replaying thread. ``time`` and ``vm`` are left out (the page caches
    read neither), so the mix itself can be dropped while they run.

    Two passes in bounded memory: a byte per page of the span marks the touched pages (in chunks of about
    :data:`_MARK_PAGES` page accesses), then the ranks of the requests' first pages are counted in windows of
    :data:`_RANK_PAGES` pages."""
    pb = int(page_bytes)
    offset = np.asarray(ds["offset"].values, dtype=np.int64)
    size = np.asarray(ds["size"].values, dtype=np.int64)
    first, count = unit_span(offset, size, pb)  # the one splitting rule (checks offset >= 0, size > 0)
    lo = int(first.min())
    seen = np.zeros(int((first + count).max()) - lo, dtype=np.uint8)
    cuts = np.searchsorted(np.cumsum(count), np.arange(1, 1 + int(count.sum()) // _MARK_PAGES) * _MARK_PAGES)
    for r0, r1 in zip(np.r_[0, cuts].tolist(), np.r_[cuts, first.size].tolist()):
        if r1 > r0:
            keys, _ = split_arrays(offset[r0:r1], size[r0:r1], pb)
            seen[keys - lo] = 1
    del count
    new_first = np.empty_like(first)
    below = 0  # touched pages before the window
    for w0 in range(0, seen.size, _RANK_PAGES):
        win = seen[w0:w0 + _RANK_PAGES]
        rank = np.cumsum(win, dtype=np.int64) - 1 + below  # rank of each touched page of the window
        sel = np.flatnonzero((first >= lo + w0) & (first < lo + w0 + win.size))
        new_first[sel] = rank[first[sel] - lo - w0]
        below = int(rank[-1]) + 1
        del rank, sel
    del seen, first
    return xr.Dataset({"offset": ("request", new_first * pb + offset % pb),
                       "size": ds["size"].variable, "is_write": ds["is_write"].variable}, attrs=dict(ds.attrs))


def flash_bytes(p: GvfrmMultiVmParams, scale: float) -> np.ndarray:
    """Flash sizes in bytes at a mix's scale: ``flash_gb x GB x scale``."""
    return np.array([int(round(g * GiB * scale)) for g in p.flash_gb], dtype=np.int64)


def sweep(p: GvfrmMultiVmParams, traces: Any = None, seed: int = 0, twins: list[dict] | None = None,
          twin_parts: dict | None = None):
    """Fig. 8/9 (thesis Fig. 24/25): every (mix, policy, flash size) of ``p``, G2-vFRM under every aging
    period of ``p.aging_periods``, every cost under every IO pricing.

    A progress bar runs over (mix, policy); each step is one registry call over all flash sizes (G2: one
    per aging period). G1 and G2 of a mix share one binning (:func:`tieringlab.policies.vfrm.bin_trace`, made here
    once per mix, dropped with the mix).
    Returns a Dataset with dims ``(mix, policy, aging_period, flash_gb)``: ``hit_ratio``, ``hits``,
    ``requests``, ``update_cost`` (the Flash-update part of Eq. 4, s); and over ``(mix, policy,
    aging_period, io_pricing, flash_gb)``: ``io_cost`` (s, Eq. 4) and ``io_cost_norm`` (``io_cost`` / LRU's
    at the same mix, flash size and pricing, Fig. 9). Policies other than G2 repeat along
    ``aging_period``. Coords ``flash_bytes`` (mix, flash_gb), ``scale`` and ``n_requests`` (mix); and
    ``seconds`` (mix, policy), the wall time of each policy's calls. :func:`reading` selects one reading
    (default ``p.policy.aging_period``, ``p.policy.io_pricing``). The per-mix counts of :data:`PRE_VARS`
    (:func:`tieringlab.experiments.vfrm_single_vm.bin_reuse` at ``p.policy``'s bin and epoch; attrs
    ``pre_reusable_bins_by_vm_<mix>``: per VM) carry the ledger's preconditions (:func:`preconditions_table`).

    ``twins`` (issue 34's twin readings, :func:`twin_sweep`): a list of TwinSpec override dicts whose mixes differ
    in ``is_write`` only (the read-ratio readings; checked, else a ValueError): each mix is built under each, and a
    list of Datasets, one per dict, is returned, each the sweep of the mixes built under it. G1/G2 run once per
    dict on one binning (:func:`tieringlab.policies.vfrm.with_writes`), each page cache replays once for all of
    them (:func:`tieringlab.policies.caching.simulate_rewrites`: the hits and evictions never read the writes).
    G2 runs every aging period of ``p.aging_periods`` under the first dict and ``p.policy.aging_period`` alone
    under the others, whose Datasets carry that aging period only (:func:`twin_sweep` reads no other).

    ``twin_parts`` (a dict the caller then passes to :func:`twin_sweep` as ``shared``; speed only): the read-ratio
    readings of ``p.twin_readings`` (:func:`_riding_readings`) ride on this sweep's runs, their write flags
    recounted from the default mix's replays (``twins`` = the default and theirs), and their Datasets are put there
    by reading name; the returned sweep is the same as without.
    """
    if not isinstance(p, GvfrmMultiVmParams):
        raise TypeError(f"p must be GvfrmMultiVmParams, got {type(p).__name__}")
    if twin_parts is not None and twins is None:
        ride = _riding_readings(p, traces)
        if ride:
            outs = sweep(p, traces, seed, twins=[{}] + [dict(r.overrides) for r in ride])
            twin_parts.update({r.name: o for r, o in zip(ride, outs[1:])})
            return outs[0]
    W = len(twins) if twins else 1
    M, Pn, F, A = len(p.mixes), len(p.policies), len(p.flash_gb), len(p.aging_periods)
    ia = list(p.aging_periods).index(p.policy.aging_period)  # the aging period G2 runs under twins[1:]
    names = ("hits", "requests", "hit_ratio", "update_cost")
    arr = {k: np.zeros((W, M, Pn, A, F), dtype=np.int64 if k in ("hits", "requests") else np.float64) for k in names}
    cost = np.zeros((W, M, Pn, A, len(IO_PRICINGS), len(C.FLUSHES), len(C.HIT_PRICINGS), F))
    secs = np.zeros((M, Pn))
    fbs = np.zeros((M, F), dtype=np.int64)
    scales = np.zeros(M)
    n_req = np.zeros(M, dtype=np.int64)
    pre = np.zeros((M, len(PRE_VARS)), dtype=np.int64)
    pages = np.zeros((W, M, len(PAGE_VARS)), dtype=np.int64)
    per_vm: dict[str, list[int]] = {}
    cur: dict = {}
    steps = [(i, j) for i in range(M) for j in range(Pn)]
    bar = progress(steps, total=len(steps), desc="mix x policy", unit="call")
    for i, j in bar:
        mix, pol = p.mixes[i], p.policies[j]
        if cur.get("mix") != mix:
            cur = {}  # drop the previous mix (and its binning) before building the next
            mixed = build_mix(p, mix, traces, seed, twins[0] if twins else None).drop_vars("member_request")
            writes = [mixed["is_write"].values]
            for o in (twins or [])[1:]:  # the other twin readings' mixes: their write flags only
                other = build_mix(p, mix, traces, seed, o)
                if not all(np.array_equal(other[v].values, mixed[v].values) for v in ("time", "offset", "size", "vm")):
                    raise ValueError(f"twins: the mixes of {twins[0]} and {o} differ in more than is_write; run "
                                     "them apart")
                writes.append(other["is_write"].values)
                del other
            cur = {"mix": mix, "ds": mixed, "bins": None, "pages": None, "writes": writes}
            scales[i] = mixed.attrs["scale"]
            fbs[i] = flash_bytes(p, scales[i])
            n_req[i] = mixed.sizes["request"]
            b = bin_reuse(mixed, p.policy.bin_bytes, p.policy.epoch_s, p.policy.n_epochs)
            by_vm = b["reusable_bins_by_vm"]
            pre[i] = (b["heatings"], b["heatings_never_reused"], int(by_vm.sum()), int(by_vm.min()), int(by_vm.max()))
            per_vm[mix] = [int(x) for x in by_vm]
            for a, w in enumerate(writes):  # the page caches evict iff pages[a, i, 0] exceeds their pages
                pages[a, i] = page_footprint(mixed if a == 0 else mixed.assign(is_write=("request", w)))
            cur["written_pages"] = [int(x) for x in pages[:, i, 1]]  # what a page cache can hold dirty (flush)
            del mixed
        if hasattr(bar, "set_postfix_str"):
            bar.set_postfix_str(f"{mix} {pol}")
        t0 = time.perf_counter()
        if pol in ("G1-vFRM", "G2-vFRM") and cur["bins"] is None:  # one binning of the mix for G1 and every G2
            cur["bins"] = bin_trace(cur["ds"], p.policy)
        model = p.caches.cost_model if pol in CONVENTIONAL else p.policy.cost_model

        def kept(r, a=0, model=model, cur=cur):  # issue 35: a run's numbers, taken at once (per-request arrays dropped)
            return {k: r[k].values for k in names}, accounting_costs(r, model, cur["written_pages"][a]).values

        def rewritten(a, cur=cur):  # the mix and its binning under the a-th write flags (a twin reading)
            if a == 0:
                return cur["ds"], cur["bins"]
            w = cur["writes"][a]
            return cur["ds"].assign(is_write=("request", w)), with_writes(cur["bins"], w)

        by_w = []  # per write-flag vector, its runs
        if pol == "G2-vFRM":  # one run per aging reading, in the order of p.aging_periods (twins[1:]: the primary)
            for a in range(W):
                ds_a, bins_a = rewritten(a)
                if a == 0:
                    by_w.append(list(run_each(aging_readings(p), p, lambda q, pol=pol, i=i, ds_a=ds_a, bins_a=bins_a,
                                              kept=kept: kept(registry.run(pol, ds_a, fbs[i], params=q.policy,
                                                                           bins=bins_a))).values()))
                else:
                    by_w.append([kept(registry.run(pol, ds_a, fbs[i], params=p.policy, bins=bins_a), a)])
                del ds_a, bins_a
        elif pol == "G1-vFRM":
            for a in range(W):
                ds_a, bins_a = rewritten(a)
                by_w.append([kept(registry.run(pol, ds_a, fbs[i], params=p.policy, bins=bins_a), a)])
                del ds_a, bins_a
        else:
            if cur["pages"] is None:  # issue 35: the page caches replay the mix with its untouched pages squeezed out
                cur["pages"] = page_compacted(cur["ds"], p.caches.page_bytes)
            if W == 1:
                by_w.append([kept(registry.run(pol, cur["pages"], fbs[i], params=p.caches))])
            else:
                for a, r in enumerate(simulate_rewrites(cur["pages"], pol.lower(), fbs[i], cur["writes"], p.caches)):
                    by_w.append([kept(r, a)])
        rest = p.policies[j + 1:]
        if not any(q in ("G1-vFRM", "G2-vFRM") for q in rest):
            cur["bins"] = None  # issue 35: the binning is dropped once the mix's last bin policy has run
            if any(q in CONVENTIONAL for q in rest) and cur["pages"] is None:
                cur["pages"] = page_compacted(cur["ds"], p.caches.page_bytes)
            cur["ds"] = None  # and the mix itself: the page caches replay cur["pages"]
        if not any(q in CONVENTIONAL for q in rest):
            cur["pages"] = None
        for wi, runs in enumerate(by_w):
            for a, (vals, c) in enumerate(runs):
                sl = slice(None) if pol != "G2-vFRM" else slice(a, a + 1) if wi == 0 else slice(ia, ia + 1)
                for k in names:
                    arr[k][wi, i, j, sl] = vals[k]
                cost[wi, i, j, sl] = c
        del by_w
        secs[i, j] = time.perf_counter() - t0
    cur = {}
    outs = [_sweep_dataset(p, seed, {k: v[wi] for k, v in arr.items()}, cost[wi], secs, fbs, scales, n_req, pre,
                           pages[wi], per_vm) for wi in range(W)]
    outs[1:] = [o.isel(aging_period=[ia]) for o in outs[1:]]  # G2 ran at the primary aging period only
    return outs if twins else outs[0]


def _riding_readings(p: GvfrmMultiVmParams, traces: Any = None) -> list[Reading]:
    """The twin readings of ``p.twin_readings`` that :func:`sweep` can carry on its own runs (``twin_parts``): those
    that override the read ratio alone (their mixes differ from the default mix in ``is_write`` only, which
    :func:`sweep` checks), when :func:`twin_sweep` would run them (``run_twin_readings``, ``traces.source`` twin)."""
    if section_dict(traces).get("source", "twin") != "twin" or not p.run_twin_readings:
        return []
    return [r for r in TWIN_READINGS if r.name in p.twin_readings and set(r.overrides) == {"read_ratio"}]


def _sweep_dataset(p, seed, arr, cost, secs, fbs, scales, n_req, pre, pages, per_vm) -> xr.Dataset:
    """:func:`sweep`'s Dataset from its arrays (one write-flag vector's)."""
    dims = ("mix", "policy", "aging_period", "flash_gb")
    g = p.policy
    out = xr.Dataset(
        {k: (dims, v) for k, v in arr.items()},
        coords={"mix": list(p.mixes), "policy": list(p.policies), "aging_period": [int(a) for a in p.aging_periods],
                "io_pricing": list(IO_PRICINGS), "end_flush": list(C.FLUSHES), "hit_pricing": list(C.HIT_PRICINGS),
                "flash_gb": np.asarray(p.flash_gb, float),
                "flash_bytes": (("mix", "flash_gb"), fbs), "scale": ("mix", scales),
                "n_requests": ("mix", n_req)},
        attrs={"private_fraction": g.private_fraction, "aging_period": int(g.aging_period), "lam": g.lam,
               "epoch_s": g.epoch_s, "n_epochs": g.n_epochs, "bin_bytes": g.bin_bytes, "seed": int(seed),
               "io_pricing": g.io_pricing, "private_split": g.private_split, "end_flush": C.FLUSHES[0],
               "hit_pricing": C.HIT_PRICINGS[0],
               "source": "vFRM paper Sec. 5.3 Fig. 8-9; thesis Sec. 4.3.3 Fig. 24-25",
               **{f"members_{m}": list(members(p, m)) for m in p.mixes},
               **{f"pre_reusable_bins_by_vm_{m}": v for m, v in per_vm.items()}},
    )
    for k, col in zip(PRE_VARS + PAGE_VARS, np.c_[pre, pages].T):
        out[k] = ("mix", col)
    out["io_cost"] = (("mix", "policy", "aging_period", "io_pricing", "end_flush", "hit_pricing", "flash_gb"), cost)
    out["seconds"] = (("mix", "policy"), secs)
    out["io_cost_norm"] = out["io_cost"] / out["io_cost"].sel(policy="LRU")
    out["flash_gb"].attrs["units"] = "GB (paper scale; bytes = flash_gb x 2^30 x scale)"
    out["aging_period"].attrs["units"] = f"epochs of {g.epoch_s:g} s (G2-vFRM counter aging)"
    out["io_cost"].attrs["units"] = "s"
    out["update_cost"].attrs["units"] = "s"
    out["io_cost_norm"].attrs["long_name"] = "IO cost / LRU's IO cost (Fig. 9)"
    out["seconds"].attrs["units"] = "s (wall time of the engine call)"
    return out


def twin_sweep(p: GvfrmMultiVmParams, traces: Any = None, seed: int = 0,
               share_writes: bool = True, shared: dict | None = None) -> xr.Dataset | None:
    """Issue 34's twin readings on the mixes: for each reading of ``p.twin_readings``
    (:data:`tieringlab.claims.vfrm.TWIN_READINGS`), :func:`sweep` of the mixes built from their members regenerated
    under it (same scale and seed), every policy at every Flash size (the Fig. 8/9 rows and their preconditions read
    every size), G2-vFRM at ``p.policy.aging_period`` only: a sweep-shaped Dataset with the leading dim ``twin``.
    The readings that move addresses (``sizes_4k``, ``sizes_128k``, ``cold_packed``: full sweeps of their own) run
    the mixes of ``p.twin_reading_mixes`` only; the coordinate ``twin_ran`` (twin, mix) says which mixes each
    reading ran (NaN elsewhere), and :func:`twin_at` gives one reading as a plain sweep of its mixes.
    None when there is nothing to run (no twin readings, ``run_twin_readings`` false, or ``traces.source`` is not
    ``twin``).

    ``share_writes`` (speed only, the same Dataset): the read-ratio readings, whose mixes differ in ``is_write``
    alone, run in one :func:`sweep` (one binning, one replay per page cache and Flash size for all of them); False
    runs each reading apart (the reference the tests compare it with). ``shared``: :func:`sweep`'s ``twin_parts``
    (the read-ratio readings that rode on the main sweep's runs), by reading name, used instead of running them again
    (the same values: each reading's runs are recounted from the same replays)."""
    moved = tuple(m for m in p.mixes if m in p.twin_reading_mixes)  # the mixes the address-moving readings rebuild
    want = [r for r in TWIN_READINGS if r.name in p.twin_readings and (moved or set(r.overrides) == {"read_ratio"})]
    if section_dict(traces).get("source", "twin") != "twin" or not want or not p.run_twin_readings:
        return None
    q = dataclasses.replace(p, aging_periods=(p.policy.aging_period,))
    done = {r.name: shared[r.name].drop_vars("seconds") for r in want if r.name in (shared or {})}
    left = [r for r in want if r.name not in done]
    ratio = [r for r in left if set(r.overrides) == {"read_ratio"}] if share_writes else []
    groups = [ratio] if len(ratio) > 1 else []
    groups += [[r] for r in left if not any(r in g for g in groups)]
    for g in groups:
        ratio_only = all(set(r.overrides) == {"read_ratio"} for r in g)
        qg = q if ratio_only else dataclasses.replace(q, mixes=moved)
        for r, res in zip(g, sweep(qg, traces, seed, twins=[dict(r.overrides) for r in g])):
            done[r.name] = res.drop_vars("seconds")  # wall time: a log, not a result
    ran = [[m in done[r.name]["mix"].values for m in p.mixes] for r in want]
    per_twin = {f"{r.name}:{k}": v for r in want for k, v in done[r.name].attrs.items() if k.startswith(_PER_MIX)}
    out = xr.concat([done[r.name] for r in want], dim="twin", join="outer", combine_attrs="drop_conflicts")
    out = out.reindex(mix=list(p.mixes))  # the outer join sorts the mixes; NaN where a reading did not run a mix
    out.attrs = {**{k: v for k, v in out.attrs.items() if not k.startswith(_PER_MIX)}, **per_twin}
    out = out.assign_coords(twin=[r.name for r in want], twin_ran=(("twin", "mix"), np.array(ran, dtype=bool)))
    out.attrs["overrides"] = "; ".join(f"{r.name}: {dict(r.overrides)}" for r in want)
    out.attrs["dtypes"] = "; ".join(f"{k}: {v.dtype}" for k, v in {**done[want[0].name].data_vars,
                                                                     **done[want[0].name].coords}.items())
    return out


def twin_at(tw: xr.Dataset, twin: str) -> xr.Dataset:
    """One twin reading of :func:`twin_sweep`'s Dataset as a plain sweep: the mixes it regenerated (``twin_ran``;
    ``twin_reading_mixes`` for the readings that move addresses), every variable in its own dtype again (the
    concatenation filled the mixes a reading did not run with NaN)."""
    t = tw.sel(twin=twin, drop=True)
    t = t.sel(mix=t["mix"].values[t["twin_ran"].values]).drop_vars("twin_ran")
    for item in str(tw.attrs.get("dtypes", "")).split("; "):
        name, _, dtype = item.partition(": ")
        if name in t.variables and str(t[name].dtype) != dtype:
            t[name] = t[name].astype(dtype)
    gone = {f"members_{m}" for m in tw["mix"].values if m not in t["mix"].values}
    t.attrs = {k: v for k, v in tw.attrs.items() if k != "dtypes" and ":" not in k and k not in gone}
    t.attrs.update({k.partition(":")[2]: v for k, v in tw.attrs.items() if k.startswith(f"{twin}:")})
    return t


#: The prefix of :func:`sweep`'s per-mix attrs that differ between twin readings (kept per reading by twin_sweep).
_PER_MIX = "pre_reusable_bins_by_vm_"


def twin_table(tw: xr.Dataset) -> pd.DataFrame:
    """The twin readings side by side: one row per (twin reading, mix, Flash size) with every policy's IO hit ratio
    (%, ``<policy>_hit_pct``) and IO cost over LRU's (``<policy>_norm``), at the primary reading (aging period, IO
    pricing, accounting)."""
    rows = []
    for twin in tw["twin"].values:
        r = reading(twin_at(tw, str(twin)))
        for mix in r["mix"].values:
            for g in r["flash_gb"].values:
                row = {"twin": str(twin), "mix": str(mix), "flash_gb": float(g)}
                for pol in r["policy"].values:
                    x = r.sel(mix=mix, policy=pol, flash_gb=g)
                    row[f"{pol}_hit_pct"] = 100 * float(x["hit_ratio"])
                    row[f"{pol}_norm"] = float(x["io_cost_norm"])
                rows.append(row)
    return pd.DataFrame(rows)


def reading(res: xr.Dataset, aging_period: int | None = None, io_pricing: str | None = None,
            end_flush: str | None = None, hit_pricing: str | None = None) -> xr.Dataset:
    """The sweep under one reading: a ``(mix, policy, flash_gb)`` Dataset whose G2-vFRM rows use counter
    aging every ``aging_period`` epochs and whose costs are priced by ``io_pricing``, ``end_flush`` and
    ``hit_pricing`` (issue 34's accounting readings; defaults: the sweep's primary reading, ``res.attrs``). Every
    table, figure and claim function takes such a Dataset."""
    if "aging_period" not in res.dims:
        return res
    a = int(res.attrs["aging_period"] if aging_period is None else aging_period)
    acct = {k: v for k, v in (("end_flush", end_flush), ("hit_pricing", hit_pricing)) if k in res.dims}
    return select(res, aging_period=a, io_pricing=io_pricing, **acct)


def aging_sensitivity(res: xr.Dataset, io_pricing: str | None = None) -> xr.Dataset:
    """G2-vFRM's hit ratio and IO cost (``io_pricing``, default the primary) for each aging period of the
    sweep (dims ``aging_period, mix, flash_gb``). Not a paper figure: the thesis (Sec. 4.3.2) ages the
    counters "periodically" to avoid overflow and gives no period, so this shows how much Fig. 24/25's
    G2 curves depend on that choice."""
    pr = res.attrs["io_pricing"] if io_pricing is None else io_pricing
    g2 = _primary_accounting(res).sel(policy="G2-vFRM")
    out = xr.Dataset({"hit_ratio": g2["hit_ratio"].transpose("aging_period", "mix", "flash_gb"),
                      "io_cost": g2["io_cost"].sel(io_pricing=pr).transpose("aging_period", "mix", "flash_gb")},
                     attrs={"policy": "G2-vFRM", "epoch_s": res.attrs["epoch_s"], "io_pricing": pr})
    return out.drop_vars([c for c in out.coords if c not in ("aging_period", "mix", "flash_gb")])


def _primary_accounting(res: xr.Dataset) -> xr.Dataset:
    """``res`` at its primary accounting reading (``res.attrs``' ``end_flush``, ``hit_pricing``), those dims dropped."""
    pick = {d: res.attrs.get(d, v[0]) for d, v in (("end_flush", C.FLUSHES), ("hit_pricing", C.HIT_PRICINGS))
            if d in res.dims}
    return res.sel(pick, drop=True) if pick else res


def pricing_table(res: xr.Dataset) -> pd.DataFrame:
    """Fig. 9 under both IO pricings side by side: one row per (mix, policy, flash_gb) with ``io_cost_norm``
    under each pricing (G2 at the primary aging period, the primary accounting reading)."""
    r = _primary_accounting(res).sel(aging_period=int(res.attrs["aging_period"]), drop=True)["io_cost_norm"]
    df = r.to_dataframe().reset_index().pivot_table(index=["mix", "policy", "flash_gb"], columns="io_pricing",
                                                     values="io_cost_norm", sort=False)
    df.columns = [f"io_cost_norm_{c}" for c in df.columns]
    return df.reset_index()


def accounting_table(res: xr.Dataset) -> pd.DataFrame:
    """Fig. 9 under every accounting reading side by side (issue 34): one row per (mix, policy, flash_gb) with
    ``io_cost_norm`` (cost / LRU's) under each ``(end_flush, hit_pricing)`` (columns
    ``norm.<end_flush>.<hit_pricing>``), at the primary aging period and IO pricing."""
    r = res.sel(aging_period=int(res.attrs["aging_period"]), io_pricing=res.attrs["io_pricing"], drop=True)
    df = r["io_cost_norm"].to_dataframe().reset_index()
    df["col"] = "norm." + df["end_flush"].astype(str) + "." + df["hit_pricing"].astype(str)
    wide = df.pivot_table(index=["mix", "policy", "flash_gb"], columns="col", values="io_cost_norm", sort=False)
    return wide.reset_index().rename_axis(columns=None)


def table(res: xr.Dataset) -> pd.DataFrame:
    """Long table of a sweep: one row per (mix, policy, flash size), hit ratio in %, costs in s."""
    df = res[["hit_ratio", "io_cost", "update_cost", "io_cost_norm"]].to_dataframe().reset_index()
    df["hit_ratio_pct"] = 100.0 * df.pop("hit_ratio")
    keep = ["mix", "policy", "flash_gb", "flash_bytes", "scale", "hit_ratio_pct", "io_cost", "update_cost",
            "io_cost_norm"]
    return df[keep]


def cost_reduction(res: xr.Dataset, policy: str = "G1-vFRM") -> xr.DataArray:
    """``100 x (1 - cost / cost_LRU)`` in % over (mix, flash_gb): how far ``policy``'s IO cost falls below
    LRU's (vFRM Sec. 5.3: "decreased up to 65.29%")."""
    return 100.0 * (1.0 - res["io_cost_norm"].sel(policy=policy))


def g2_threshold_gb(res: xr.Dataset, mix: str, policy: str = "G2-vFRM") -> float:
    """The smallest flash size (paper GB) from which ``policy``'s hit ratio beats every conventional cache
    in the sweep at that size and at every larger size (thesis Sec. 4.3.3: "as long as the Flash size is
    larger than a threshold"); NaN when there is none."""
    conv = [c for c in CONVENTIONAL if c in res["policy"].values]
    if not conv:
        raise ValueError("the sweep has no conventional cache (LRU, ARC, CAR) to compare with")
    h = res["hit_ratio"].sel(mix=mix)
    beats = (h.sel(policy=policy) > h.sel(policy=conv).max("policy")).values
    tail = np.logical_and.accumulate(beats[::-1])[::-1]  # beats here and at every larger size
    idx = np.flatnonzero(tail)
    return float(res["flash_gb"].values[idx[0]]) if idx.size else float("nan")


def _plain_values(r: xr.Dataset, aging: int | None, pricing: str | None, acct: str = "") -> dict:
    """The rows of one reading view ``r`` (:func:`reading`): with ``aging``/``pricing`` None, the rows that
    do not depend on that choice; with a value, the rows that do, under that reading (``acct``: the accounting
    reading, for the notes)."""
    pols = set(r["policy"].values.tolist())
    mixes = set(r["mix"].values.tolist())
    conv = [c for c in CONVENTIONAL if c in pols]
    fg = r["flash_gb"].values
    out: dict[str, tuple[float | bool, str]] = {}
    tag = "; ".join(x for x in (f"aging_period={aging}" if aging is not None else "",
                                f"io_pricing={pricing}" if pricing is not None else "", acct) if x)

    def note(mix):
        return f"{mix} at twin scale {float(r['scale'].sel(mix=mix)):.4g}, seed {r.attrs.get('seed', 0)}" + (
            f"; {tag}" if tag else "")

    def hr(mix, pol):
        return 100 * r["hit_ratio"].sel(mix=mix, policy=pol).values

    if aging is None and pricing is None:  # G1 hit-ratio rows: no reading
        if "cf4" in mixes and "G1-vFRM" in pols:
            g1 = hr("cf4", "G1-vFRM")
            out[C.CF4_G1_TOP] = (float(g1[-1]), f"G1-vFRM at {fg[-1]:g} GB; {note('cf4')}")
            steps = np.diff(g1)
            out[C.CF4_G1_RISING] = (bool(np.all(steps >= -C.RISING_TOL_PTS)),
                                    f"smallest step {steps.min() if steps.size else 0:.3g} points; {note('cf4')}")
            if conv:
                big = fg > 4.0
                if big.any():
                    cv = 100 * r["hit_ratio"].sel(mix="cf4", policy=conv).values[:, big]
                    rng = f"over flash > 4 GB (range {cv.min():.2f}-{cv.max():.2f} %); {note('cf4')}"
                    out[C.CF4_CONV_PLATEAU] = (float(cv.min()), f"smallest of {', '.join(conv)} " + rng)
                    out[C.CF4_CONV_PLATEAU_MAX] = (float(cv.max()), f"largest of {', '.join(conv)} " + rng)
                best = 100 * r["hit_ratio"].sel(mix="cf4", policy=conv).max("policy").values
                out[C.CF4_G1_ABOVE_CONV] = (float(g1[-1] - best[-1]), f"at {fg[-1]:g} GB; {note('cf4')}")
        for mix in C.UNFRIENDLY_MIXES:
            if mix in mixes and "G1-vFRM" in pols and conv:
                g1 = hr(mix, "G1-vFRM")
                cv = 100 * r["hit_ratio"].sel(mix=mix, policy=conv).values
                best = cv.max(axis=0)
                out[C.g1_catches_up(mix)] = (float(g1[-1] - best[-1]), f"G1 {g1[-1]:.2f} % vs best conventional "
                                             f"{best[-1]:.2f} % at {fg[-1]:g} GB; {note(mix)}")
                above = [c for c, v in zip(conv, cv[:, -1]) if g1[-1] > v]
                out[C.g1_overcomes_some(mix)] = (bool(above), f"G1 above {', '.join(above) or 'none'} at "
                                                 f"{fg[-1]:g} GB; {note(mix)}")
                gap = best - g1
                out[C.g1_hit_slightly_lower(mix)] = (float(gap.mean()), "best conventional minus G1 per size "
                                                     "(points): "
                                                     + ", ".join(f"{g:g} GB {d:+.2f}" for g, d in zip(fg, gap))
                                                     + f"; {note(mix)}")
    if aging is None and pricing is not None and "G1-vFRM" in pols:  # G1 cost rows
        if "cuf4" in mixes:
            red = cost_reduction(r).sel(mix="cuf4").values
            k = int(np.argmax(red))
            out[C.CUF4_G1_MAX_REDUCTION] = (
                float(red[k]), f"largest at {fg[k]:g} GB; reductions "
                + ", ".join(f"{g:g} GB {x:.1f} %" for g, x in zip(fg, red)) + f"; {note('cuf4')}")
            out[C.CUF4_G1_REDUCTION_GROWS] = (
                bool(np.all(np.diff(red) >= -C.RISING_TOL_PTS)), f"reductions {np.round(red, 2).tolist()} %; "
                f"{note('cuf4')}")
        for mix in sorted(mixes):
            n = r["io_cost_norm"].sel(mix=mix, policy="G1-vFRM").values
            out[C.g1_cost_below_lru(mix)] = (float(n.max()), f"max over flash sizes; {note(mix)}")
        for mix in C.UNFRIENDLY_MIXES:
            if mix in mixes and conv:
                ratio = (r["io_cost"].sel(mix=mix, policy="G1-vFRM")
                         / r["io_cost"].sel(mix=mix, policy=conv).min("policy")).values
                out[C.g1_cost_much_lower(mix)] = (
                    float(ratio.max()), "C_G1 / cheapest conventional per size: "
                    + ", ".join(f"{g:g} GB {x:.3f}" for g, x in zip(fg, ratio)) + f"; {note(mix)}")
    if aging is not None and "G2-vFRM" in pols:  # G2 rows
        for mix in sorted(mixes):
            if pricing is None and conv:
                thr = g2_threshold_gb(r, mix)
                gap = hr(mix, "G2-vFRM") - 100 * r["hit_ratio"].sel(mix=mix, policy=conv).max("policy").values
                out[C.g2_threshold(mix)] = (
                    bool(np.isfinite(thr)), (f"threshold {thr:g} GB" if np.isfinite(thr) else
                                             "no threshold up to the largest size")
                    + "; G2 minus best conventional per size (points): "
                    + ", ".join(f"{g:g} GB {d:+.2f}" for g, d in zip(fg, gap)) + f"; {note(mix)}")
            if pricing is None and "G1-vFRM" in pols:
                d = hr(mix, "G2-vFRM") - hr(mix, "G1-vFRM")
                out[C.g2_hit_above_g1(mix)] = (
                    float(d.min()), "G2 minus G1 per size (points): "
                    + ", ".join(f"{g:g} GB {x:+.2f}" for g, x in zip(fg, d)) + f"; {note(mix)}")
            if pricing is not None and "G1-vFRM" in pols:
                ratio = (r["io_cost"].sel(mix=mix, policy="G2-vFRM")
                         / r["io_cost"].sel(mix=mix, policy="G1-vFRM")).values
                out[C.g2_cost_below_g1(mix)] = (
                    float(ratio.max()), "G2/G1 IO cost per size: "
                    + ", ".join(f"{g:g} GB {x:.3f}" for g, x in zip(fg, ratio)) + f"; {note(mix)}")
    return out


def preconditions_table(res: xr.Dataset) -> pd.DataFrame:
    """Per mix of a sweep: the counts of :data:`PRE_VARS` and the three precondition values of
    :mod:`tieringlab.claims.gvfrm`: ``never_reused_pct`` (bin heatings, i.e. move-ins, followed by no IO to the bin
    in the next N epochs, %), ``reusable_over_flash`` (the VMs' reusable bins x bin size over the smallest Flash
    size, both at the mix's scale) and ``heterogeneity`` (the largest VM's reusable bins over the smallest VM's, at
    least one bin); with the footprint counts (:data:`PAGE_VARS`), also the mix's distinct (written) 4 KB pages and
    at how many of the sweep's Flash sizes the page caches evict (``evicting_sizes``; the billing preconditions need
    every size, issue 34). Empty when the sweep has no such counts."""
    cols = ["mix", "heatings", "heatings_never_reused", "never_reused_pct", "reusable_bins", "smallest_flash_bytes",
            "reusable_over_flash", "reusable_bins_min_vm", "reusable_bins_max_vm", "heterogeneity"]
    ev = cache_evicts(res)
    if ev is not None:
        cols += ["pages", "written_pages", "evicting_sizes"]
    if "pre_heatings" not in res:
        return pd.DataFrame(columns=cols)
    rows = []
    for mix in res["mix"].values:
        g = {k: int(res[k].sel(mix=mix)) for k in PRE_VARS}
        fb = int(res["flash_bytes"].sel(mix=mix).values.min())
        el, reusable = g["pre_heatings"], g["pre_reusable_bins"]
        rows.append({"mix": str(mix), "heatings": el, "heatings_never_reused": g["pre_heatings_never_reused"],
                     "never_reused_pct": 100.0 * g["pre_heatings_never_reused"] / el if el else float("nan"),
                     "reusable_bins": reusable, "smallest_flash_bytes": fb,
                     "reusable_over_flash": reusable * int(res.attrs["bin_bytes"]) / fb if fb else float("nan"),
                     "reusable_bins_min_vm": g["pre_reusable_bins_min_vm"],
                     "reusable_bins_max_vm": g["pre_reusable_bins_max_vm"],
                     "heterogeneity": g["pre_reusable_bins_max_vm"] / max(g["pre_reusable_bins_min_vm"], 1)})
        if ev is not None:
            rows[-1].update(pages=int(res["pre_pages"].sel(mix=mix)),
                            written_pages=int(res["pre_written_pages"].sel(mix=mix)),
                            evicting_sizes=int(ev.sel(mix=mix).sum()))
    return pd.DataFrame(rows, columns=cols)


def cache_evicts(res: xr.Dataset) -> xr.DataArray | None:
    """Per (mix, flash_gb) of a sweep: whether the page caches evict there (the mix's distinct 4 KB pages, each VM's
    apart, exceed the cache's pages; LRU, ARC and CAR admit every miss, so they evict exactly then). None when the
    sweep has no footprint counts (:data:`PAGE_VARS`)."""
    if "pre_pages" not in res:
        return None
    return res["pre_pages"] > res["flash_bytes"] // PAGE_BYTES


def _billing_values(res: xr.Dataset, flush: bool = False) -> dict[str, tuple[float | bool, str]]:
    """The billing preconditions of :mod:`tieringlab.claims.gvfrm` (issue 34): per mix, whether the page caches'
    write-backs are billed at every Flash size (``flush``: the reading writes dirty data back at the trace's end,
    true by construction) and, with ``flush`` false, at how many sizes they evict."""
    ev = cache_evicts(res)
    out: dict[str, tuple[float | bool, str]] = {}
    if ev is None:
        return out
    fg = res["flash_gb"].values
    for mix in res["mix"].values:
        if str(mix) not in C.MIXES:
            continue
        e = ev.sel(mix=mix).values.astype(bool)
        fits = ", ".join(f"{g:g} GB" for g in fg[~e]) or "none"
        tag = (f"{int(res['pre_pages'].sel(mix=mix))} distinct 4 KB pages; the cache holds them all at: {fits}; "
               f"{mix} at twin scale {float(res['scale'].sel(mix=mix)):.4g}")
        out[C.pre_writebacks_billed(str(mix))] = (bool(flush or e.all()),
                                                  ("flushed at the trace's end; " if flush else "") + tag)
        if not flush and str(mix) in C.UNFRIENDLY_MIXES:  # the mixes whose "much lower" row needs it
            out[C.pre_caches_evict(str(mix))] = (int(e.sum()), f"evicts at {int(e.sum())} of {e.size} sizes; {tag}")
    return out


def _precondition_values(res: xr.Dataset) -> dict[str, tuple[float | bool, str]]:
    """The precondition rows of :mod:`tieringlab.claims.gvfrm` (mix properties: one value whatever the reading; the
    billing rows' values under the flush readings are recorded by :func:`claim_values`)."""
    out: dict[str, tuple[float | bool, str]] = _billing_values(res)
    t = preconditions_table(res)
    if t.empty:
        return out
    mb = int(res.attrs["bin_bytes"]) / 2**20
    for _, r in t.iterrows():
        mix = r["mix"]
        if mix not in C.MIXES:
            continue
        tag = f"{mix} at twin scale {float(res['scale'].sel(mix=mix)):.4g}, seed {res.attrs.get('seed', 0)}"
        by_vm = res.attrs.get(f"pre_reusable_bins_by_vm_{mix}")
        vms = ""
        if by_vm is not None:
            vms = "; reusable bins per VM: " + ", ".join(f"{n} {int(b)}" for n, b in zip(
                res.attrs.get(f"members_{mix}", range(len(by_vm))), np.atleast_1d(by_vm)))
        out[C.pre_never_reused(mix)] = (float(r["never_reused_pct"]), f"{r['heatings_never_reused']} of "
                                        f"{r['heatings']} bin heatings (move-ins) are followed by no IO to the bin in "
                                        f"the next N epochs; {tag}")
        out[C.pre_reusable_over_flash(mix)] = (
            float(r["reusable_over_flash"]), f"{r['reusable_bins']} reusable {mb:g} MB bins (IO in >= 2 epochs) over "
            f"{r['smallest_flash_bytes']} B, the smallest Flash size ({float(res['flash_gb'].values.min()):g} GB at "
            f"paper scale){vms}; {tag}")
        out[C.pre_heterogeneity(mix)] = (
            float(r["heterogeneity"]), f"largest VM {r['reusable_bins_max_vm']} reusable bins, smallest "
            f"{r['reusable_bins_min_vm']}{vms}; {tag}")
    return out


def claim_values(res: xr.Dataset, tw: xr.Dataset | None = None) -> dict[str, dict[str, tuple[float | bool, str]]]:
    """The reproduced value of each ledger row of :mod:`tieringlab.claims.gvfrm` that this sweep can decide, with a
    note, by reading: ``{reading name: {claim_id: (value, note)}}`` (the shape of
    :meth:`tieringlab.results.Outputs.claims_by_reading`; names of :func:`tieringlab.claims.gvfrm.reading_name`,
    ``"default"``: one-day aging, ``random`` pricing). Each row is one paper claim; its values under the other
    readings the sweep ran (every aging period, both pricings) are given under their names. Rows whose mix, policy
    or reading is not in the sweep are left out (they stay "not reproduced yet"). A plain ``(mix, policy,
    flash_gb)`` Dataset counts as the default reading. Under ``"default"`` also the preconditions (from the sweep's
    :data:`PRE_VARS`)."""
    by: dict[str, dict[str, tuple[float | bool, str]]] = {}

    def put(name, vals):
        by.setdefault(name, {}).update(vals)

    if "aging_period" in res.dims:
        agings = [int(a) for a in res["aging_period"].values]
        pricings = [str(x) for x in res["io_pricing"].values if str(x) in C.PRICINGS]
        put("default", _plain_values(reading(res), None, None))  # G1 hit rows: no reading
        accts = [(str(f), str(h)) for f in res["end_flush"].values for h in res["hit_pricing"].values
                 if str(f) in C.FLUSHES and str(h) in C.HIT_PRICINGS] if "end_flush" in res.dims else [(None, None)]
        for pr in pricings:
            for fl, hp in accts:
                tag = f"end_flush={fl}, hit_pricing={hp}" if fl is not None else ""
                put(C.reading_name(None, pr, fl, hp), _plain_values(reading(res, None, pr, fl, hp), None, pr, tag))
        for a in agings:
            put(C.reading_name(a, None), _plain_values(reading(res, a, None), a, None))
            for pr in pricings:
                for fl, hp in accts:
                    tag = f"end_flush={fl}, hit_pricing={hp}" if fl is not None else ""
                    put(C.reading_name(a, pr, fl, hp), _plain_values(reading(res, a, pr, fl, hp), a, pr, tag))
    else:
        put("default", _plain_values(res, None, None))
        put("default", _plain_values(res, None, C.PRICINGS[0]))
        put("default", _plain_values(res, C.AGING_READINGS[0], None))
        put("default", _plain_values(res, C.AGING_READINGS[0], C.PRICINGS[0]))
    put("default", _precondition_values(res))
    flushed = _billing_values(res, flush=True)  # under every flush reading the write-backs are billed by construction
    for name in by:
        if "flush_at_end" in name.split("."):
            put(name, flushed)
    if tw is not None:  # issue 34: every row under each twin reading (its mixes' preconditions with it)
        for twin in tw["twin"].values:
            t = twin_at(tw, str(twin))
            t.attrs = {**{k: v for k, v in res.attrs.items() if not k.startswith("pre_")}, **t.attrs}
            for name, vals in claim_values(t).items():
                put(C.reading_name(twin=str(twin)) if name == "default" else f"{twin}.{name}",
                    {cid: (v, f"{n}; twin reading {twin}") for cid, (v, n) in vals.items()})
    return {k: v for k, v in by.items() if v or k == "default"}
