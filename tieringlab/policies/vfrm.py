"""vFRM: epoch-based flash placement of 1 MB bins by IO popularity (vFRM paper Sec. 4.4; thesis Sec. 4.2.2).

- :func:`vfrm` — vFRM for one VM (or all VMs of a trace ranked together). At every epoch boundary the
  bins with the highest temperature ``T_i`` (Eq. 1-3, :mod:`tieringlab.models.temperature`) fill
  Flash, then (by default) the idle bins, most recently accessed first (choice 3); during the epoch a
  request is a Flash hit only if **all** its bins are in Flash (Sec. 5.1); misses go to the spinning
  disk (MD) without admission (Table 2(a)). All flash sizes of a sweep share one pass: bins are ranked
  once per epoch and a flash of ``k`` bins holds the first ``k`` of the ranking, so every count is a
  prefix count over ranks (sorting and ``searchsorted``; no loop over requests or bins; the idle bins'
  ranks take a loop over epochs with array work inside).
- :func:`bin_trace` — the trace cut into (epoch, bin) accesses with every bin's temperature, the layout
  vFRM, GLB-vFRM (G1) and G2-vFRM (:mod:`tieringlab.policies.gvfrm`) share. The caller owns it: an
  experiment bins a trace once and passes the BinTrace (``bins=``) to every policy that shares it;
  without one, each policy bins the trace itself.

Registered as "vFRM" (the trace contract of :mod:`tieringlab.policies.contract`).

**Documented choices where the papers are silent** (each also at its point of use; choices 1, 2, 5
and 6 hold for G1/G2 too):

1. Epoch ``i`` covers ``[start + i*epoch_s, start + (i+1)*epoch_s)``; ``start`` defaults to the first
   request's time (for VM mixes: the common start the timestamps were aligned to, Sec. 5.3).
2. ``M_i`` of a bin counts the requests that touch it in epoch ``i`` (a request over two bins heats
   both, once each).
3. Idle bins (``T_i = 0``: no IO in the last ``N`` epochs), :attr:`VfrmParams.idle_bins`. Sec. 4.4.2
   ranks the blocks by temperature and places "the most popular" in Flash "based on the available
   capacity"; what a Flash with more room than warm bins holds is not said. Three readings, all run
   side by side by the notebooks (the verdicts of Fig. 6/7 depend on them):

   - ``"keep"`` (default): idle bins only keep their place. The bins with ``T_i > 0`` are placed by
     ``T_i``; room they leave is kept by the idle bins already in Flash, most recently accessed first
     (epoch of last access descending, then bin id); a bin is never moved in with ``T_i = 0``. Why:
     moving in a bin with no IO in the last ``N`` epochs costs 8 migration IOs for data Eq. 1 calls
     not popular, while evicting a resident idle bin for nothing frees a slot no warm bin needs.
   - ``"recency"``: every bin accessed before epoch ``i`` is ranked, by (``T_i`` descending, epoch of
     its last access descending, bin id ascending): the idle bins fill the room left, most recently
     accessed first, resident or not (so an idle bin can move in over a resident idle bin last
     accessed in the same epoch, by bin id, and a bin can enter Flash after it cooled).
   - ``"disk"``: only bins with ``T_i > 0`` are placed: a large Flash holds exactly the bins accessed
     in the last ``N`` epochs.

   All three are stack algorithms: a Flash of ``k`` bins holds, at every epoch, the bins of rank
   ``< k`` in one ranking, so every flash size of a sweep shares one pass (for ``"keep"`` the idle
   bins' ranks follow from the previous epoch's; see :func:`vfrm_ranks`).
4. Ties in popularity (among bins with ``T_i > 0``, and among idle bins last accessed in the same
   epoch) are broken by bin id (smaller first; bins are numbered in (VM, address) order),
   so placements are deterministic; "lowest popularity" is the reverse of the same total order.
5. A bin is dirty when a write request touches it while it is in Flash (the hybrid file redirects
   each block's IO to the tier holding it, Sec. 4.2), and stays dirty until it is moved out; moving
   it out then costs 8 x (SSD read + MD write). Clean bins leave for free. Flash is not flushed when
   the trace ends; the bins still dirty then are counted (``dirty_at_end``) so that an experiment can
   charge their write-back as an accounting reading (issue 34).
6. User IOs are counted in 128 KB operations, ``ceil(size / user_io_bytes)`` per request (Sec. 5.1:
   all vFRM ``T`` terms are 128 KB IOs), at least one per request; operations 2..n of a request
   continue its run (the ``cont_*`` counts that :attr:`VfrmParams.io_pricing` ``"sequential_runs"``
   prices at the sequential row, :mod:`tieringlab.policies.iocost`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import xarray as xr

from tieringlab.arrays import choice
from tieringlab.models.temperature import N_EPOCHS_PAPER, cooling_factors
from tieringlab.params import cross_field, field_problems, param
from tieringlab.policies.contract import check_capacities, check_trace, trace_result
from tieringlab.policies.iocost import IO_PRICINGS, VFRM_COST, CostModel
from tieringlab.policies.registry import PolicySpec, register
from tieringlab.traces.split import split_arrays
from tieringlab.units import PAGE_BYTES

__all__ = ["IDLE_BINS", "MAX_EPOCHS", "VfrmParams", "BinTrace", "bin_trace", "binning", "vfrm", "vfrm_ranks",
           "vfrm_rewrites", "with_writes", "capacity_bins", "bin_result", "request_counts", "PAGE_COUNTS",
           "example_trace"]


#: The most epochs a trace may span (documented choice): 2^22, 40 years of 5-minute epochs, far beyond any
#: trace (the MSR traces span one week, 2016 epochs). vFRM keeps a few arrays over epochs and loops over
#: them, so a time jump (10^18 s) would otherwise ask for petabytes; beyond it :func:`bin_trace` refuses
#: the trace with the span it found.
MAX_EPOCHS = 1 << 22

#: Values of :attr:`VfrmParams.idle_bins` (documented choice 3), the default first.
IDLE_BINS = ("keep", "recency", "disk")


@dataclass(frozen=True)
class VfrmParams:
    """vFRM parameters, paper values; each field declared once (default, source, unit, bounds or choices)."""

    bin_bytes: int = param(1 << 20, "1 MB bins, the VMFS block (vFRM paper Sec. 4.3 and 5.1); a multiple of "
                           "migration_io_bytes", bounds=(1, None), unit="bytes")
    epoch_s: float = param(300.0, "5-minute epochs ('m = 5 in our experiments', vFRM paper Sec. 4.4.2; 5.1); > 0",
                           bounds=(0.0, None), unit="s")
    n_epochs: int = param(N_EPOCHS_PAPER, "N, the epochs of history in Eq. 1 ('the previous 8 epochs', vFRM paper "
                          "Sec. 4.3); an even number >= 6 (Eq. 3)", bounds=(6, None), unit="epochs")
    lam: float = param(1.0, "λ of Eq. 2: 'setting λ equal to one' (vFRM paper Sec. 5.2.1); > 0", bounds=(0.0, None))
    migration_io_bytes: int = param(128 << 10, "128 KB migration IOs, 8 per 1 MB bin (vFRM paper Sec. 5.1)",
                                    bounds=(1, None), unit="bytes")
    user_io_bytes: int = param(128 << 10, "size of one user-IO operation in the cost counts (vFRM paper Sec. 5.1: "
                               "the vFRM T terms are 128 KB IOs)", bounds=(1, None), unit="bytes")
    idle_bins: str = param("keep", "bins with T_i = 0 (documented choice 3, the paper is silent): 'keep' lets idle "
                           "bins keep their place in Flash while room is left and never moves one in (moving in a bin "
                           "Eq. 1 calls not popular costs 8 migration IOs); 'recency' fills the room with idle bins, "
                           "most recently accessed first, resident or not; 'disk' places only T_i > 0",
                           choices=IDLE_BINS)
    cost_model: CostModel = param(VFRM_COST, "Eq. 4 pricing, the Table 3 rows of user IOs and migrations "
                                  "(tieringlab.policies.iocost.VFRM_COST: 128 KB, random user IO, sequential "
                                  "migrations; vFRM paper Sec. 5.1)")
    io_pricing: str = param("random", "how the IOs of a multi-IO request are priced (tieringlab.policies.iocost; "
                            "the paper is silent): 'random' every one at the access row, 'sequential_runs' IOs 2..n "
                            "at the sequential row; only io_cost depends on it (io_cost_by_pricing holds both)",
                            choices=IO_PRICINGS)

    def __post_init__(self):
        cross_field(self.problems())

    def problems(self) -> list[str]:
        """Every problem of these parameters: the declared types, bounds and choices
        (:func:`tieringlab.params.field_problems`), then the checks they cannot express: ``epoch_s`` and ``lam``
        strictly positive, whole migration IOs per bin, Eq. 3's even N."""
        if not isinstance(self.cost_model, CostModel):
            raise TypeError(f"cost_model must be a CostModel (e.g. VFRM_COST); got {type(self.cost_model).__name__}")
        problems = field_problems(self)
        bad = {p.split(":", 1)[0].rsplit(".", 1)[-1] for p in problems}  # "VfrmParams.lam: ..." -> "lam"
        for name, what in (("epoch_s", "epoch_s must be a number of seconds > 0"), ("lam", "lam (λ of Eq. 2) must "
                                                                                    "be > 0")):
            if name not in bad and not getattr(self, name) > 0:
                problems.append(f"{what}, got {getattr(self, name)}")
        if not bad & {"bin_bytes", "migration_io_bytes"} and self.bin_bytes % self.migration_io_bytes:
            problems.append(f"bin_bytes ({self.bin_bytes}) must be a multiple of migration_io_bytes "
                            f"({self.migration_io_bytes}): a bin moves as whole migration IOs")
        if "n_epochs" not in bad:
            try:
                cooling_factors(self.n_epochs)  # Eq. 3: N even (>= 6)
            except (TypeError, ValueError) as exc:
                problems.append(str(exc))
        return problems

    @property
    def ios_per_bin(self) -> int:
        """8: migration IOs per bin moved (1 MB / 128 KB)."""
        return self.bin_bytes // self.migration_io_bytes


# ------------------------------------------------------------------------------------ trace -> bins


@dataclass(frozen=True)
class BinTrace:
    """A trace cut into (epoch, bin) accesses; bins are numbered densely in (vm, address) order."""

    n_epochs: int
    n_bins: int
    bin_vm: np.ndarray        # (B,) dense VM index of each bin
    bin_key: np.ndarray       # (B,) bin address (offset // bin_bytes)
    req_epoch: np.ndarray     # (R,)
    req_write: np.ndarray     # (R,) bool
    req_ops: np.ndarray       # (R,) user IO operations (128 KB units)
    req_start: np.ndarray     # (R,) first unit of each request in the unit arrays
    unit_pair: np.ndarray     # (U,) access pair of each (request, bin) unit
    pair_epoch: np.ndarray    # (P,) access pairs sorted by (epoch, bin)
    pair_bin: np.ndarray
    pair_count: np.ndarray    # M: requests touching the bin in that epoch
    pair_wrote: np.ndarray    # a write request touched it
    pair_ptr: np.ndarray      # (E+1,) CSR pointers of pairs by epoch
    elig_key: np.ndarray      # (Q,) sorted epoch * B + bin of every (epoch, bin) with T > 0 (epoch < E)
    elig_temp: np.ndarray     # (Q,) T_i of Eq. 1
    elig_ptr: np.ndarray      # (E+1,)
    vms: np.ndarray           # VM labels in dense-index order
    n_history: int = N_EPOCHS_PAPER  # N of Eq. 1: T_i > 0 iff the bin had IO in epochs i-N .. i-1
    #: what it was binned with (:meth:`check_binning`): bin size, epoch length, start time (s), λ (a number, or
    #: one per VM when given explicitly), user-IO size, and the trace's number of requests
    bin_bytes: int = 1 << 20
    epoch_s: float = 300.0
    start: float = 0.0
    lam: float | tuple[float, ...] = 1.0
    user_io_bytes: int = 128 << 10
    n_requests: int = 0
    #: (R,) 4 KB pages each request touches (the page caches' unit): lets an experiment price vFRM's hits as the
    #: page caches price theirs (the ``hit_*_pages`` extras of :func:`request_counts`); None: not computed
    req_pages: np.ndarray | None = None

    def check_binning(self, ds: xr.Dataset, params: VfrmParams, policy: str) -> BinTrace:
        """``self`` when it is a binning of trace ``ds`` under ``params`` (same bin size, epoch length, N, λ and
        user-IO size; a λ per VM given to :func:`bin_trace` is kept), else a ``ValueError`` naming ``policy`` and
        each parameter that differs: a BinTrace passed to a policy must come from
        ``bin_trace(ds, params, ...)``."""
        want = {"bin_bytes": params.bin_bytes, "epoch_s": params.epoch_s, "n_epochs": params.n_epochs,
                "user_io_bytes": params.user_io_bytes}
        have = {"bin_bytes": self.bin_bytes, "epoch_s": self.epoch_s, "n_epochs": self.n_history,
                "user_io_bytes": self.user_io_bytes}
        if not isinstance(self.lam, tuple):
            want["lam"], have["lam"] = params.lam, self.lam
        diff = [f"{k} (BinTrace {have[k]!r}, params {want[k]!r})" for k in want if have[k] != want[k]]
        if diff:
            raise ValueError(f"{policy}: the BinTrace was binned with other parameters: {', '.join(diff)}; bin the "
                             f"trace with bin_trace(ds, params) for these params")
        if self.n_requests != ds.sizes.get("request", -1):
            raise ValueError(f"{policy}: the BinTrace has {self.n_requests} requests, the trace "
                             f"{ds.sizes.get('request', 0)}: it is a binning of another trace")
        return self


def bin_trace(ds: xr.Dataset, params: VfrmParams = VfrmParams(), *, vm=None, start=None, lam=None) -> BinTrace:
    """Cut trace ``ds`` (``time`` s, ``offset``/``size`` bytes, ``is_write``; optional ``vm``) into bins
    and epochs and compute every bin's temperature (Eq. 1-3) at every epoch where it is positive.

    ``vm`` (array, or the ``vm`` variable of ``ds``; default one VM) labels each request's VM;
    ``lam`` is λ of Eq. 2: a scalar, or a sequence with one value per VM in sorted-label order
    (default ``params.lam``). Temperatures are ``λ * sum_j C_j M_{i-j}`` (as
    :func:`tieringlab.models.temperature.temperature_from_history`), computed on the sparse set of
    (epoch, bin) pairs with IO in the ``N`` epochs before (no dense epoch x bin matrix).
    """
    check_trace(ds, "vFRM")  # the contract's one trace check: non-empty, finite non-decreasing times, ...
    t = np.asarray(ds["time"].values, dtype=np.float64)
    offset = np.asarray(ds["offset"].values, dtype=np.int64)
    size = np.asarray(ds["size"].values, dtype=np.int64)
    is_write = np.asarray(ds["is_write"].values, dtype=bool)
    if vm is None:
        vm = ds["vm"].values if "vm" in ds else np.zeros(t.size, dtype=np.int64)
    vm = np.asarray(vm)
    if vm.shape != t.shape:
        raise ValueError(f"vm must have one label per request ({t.size}), got shape {vm.shape}")
    vms, vm_idx = np.unique(vm, return_inverse=True)
    t0 = float(t.min()) if start is None else float(start)
    if not np.isfinite(t0):
        raise ValueError(f"start must be a finite time in seconds, got {start!r}")
    if t.min() < t0:
        raise ValueError(f"start ({t0}) must not be after the first request time ({t.min()})")
    span = (float(t.max()) - t0) / params.epoch_s
    if not span < MAX_EPOCHS:  # documented limit: bounds the per-epoch arrays and loops before they are built
        raise ValueError(f"trace {ds.attrs.get('name', '')!r}: variable 'time' spans {float(t.max()) - t0:g} s, "
                         f"{span:.4g} epochs of epoch_s = {params.epoch_s:g} s; at most MAX_EPOCHS = {MAX_EPOCHS} "
                         f"epochs are simulated (a time jump in the trace, or an epoch_s far too small?)")
    epoch = np.floor((t - t0) / params.epoch_s).astype(np.int64)
    n_epochs = int(epoch.max()) + 1

    # issue 35: each per-unit temporary is dropped as soon as it has served (a paper-scale mix has 2.8e7 units)
    keys, ridx = split_arrays(offset, size, params.bin_bytes)
    span = int(keys.max()) + 1
    combined = vm_idx[ridx].astype(np.int64) * span + keys
    del keys, vm_idx
    ubins, unit_bin = np.unique(combined, return_inverse=True)
    del combined
    n_bins = ubins.size
    bin_vm = ubins // span
    bin_key = ubins % span
    del ubins
    unit_key = epoch[ridx] * n_bins + unit_bin
    del unit_bin
    pair_keys, unit_pair, pair_count = np.unique(unit_key, return_inverse=True, return_counts=True)
    del unit_key
    pair_wrote = np.bincount(unit_pair, weights=is_write[ridx], minlength=pair_keys.size) > 0
    req_start = np.searchsorted(ridx, np.arange(t.size))
    del ridx
    pair_epoch, pair_bin = pair_keys // n_bins, pair_keys % n_bins
    del pair_keys

    lam_vm = np.broadcast_to(np.asarray(params.lam if lam is None else lam, dtype=np.float64), (vms.size,))
    if np.any(~(lam_vm > 0)):
        raise ValueError(f"lam (λ) must be > 0 for every VM, got {lam}")
    ep = np.arange(n_epochs + 1)
    pair_ptr = np.searchsorted(pair_epoch, ep)
    n_hist = params.n_epochs
    elig_key, s = _heat(pair_epoch, pair_bin, pair_count, pair_ptr, n_epochs, n_bins, n_hist)
    elig_temp = lam_vm[bin_vm[elig_key % n_bins]] * s               # Eq. 2: H = λ M (λ outside the sum)
    del s

    req_ops = np.maximum(-(-np.maximum(size, 0) // params.user_io_bytes), 1)
    sz = np.maximum(size, 1)
    req_pages = (offset + sz - 1) // PAGE_BYTES - offset // PAGE_BYTES + 1
    return BinTrace(n_epochs=n_epochs, n_bins=n_bins, bin_vm=bin_vm, bin_key=bin_key, req_epoch=epoch,
                    req_write=is_write, req_ops=req_ops, req_start=req_start, unit_pair=unit_pair,
                    pair_epoch=pair_epoch, pair_bin=pair_bin, pair_count=pair_count, pair_wrote=pair_wrote,
                    pair_ptr=pair_ptr, elig_key=elig_key, elig_temp=elig_temp,
                    elig_ptr=np.searchsorted(elig_key, ep * n_bins), vms=vms,
                    n_history=int(n_hist), bin_bytes=int(params.bin_bytes), epoch_s=float(params.epoch_s),
                    start=t0, lam=float(params.lam) if lam is None else
                    (float(lam) if np.ndim(lam) == 0 else tuple(float(x) for x in lam_vm)),
                    user_io_bytes=int(params.user_io_bytes), n_requests=int(t.size), req_pages=req_pages)


#: Source pairs per pass of :func:`_heat` (memory only: a pass holds about 17 x N bytes per pair; the result does not
#: depend on it).
_HEAT_PAIRS = 1 << 21


def _heat(pair_epoch, pair_bin, pair_count, pair_ptr, n_epochs: int, n_bins: int, n_hist: int):
    """Eq. 1 on the access pairs (sorted by (epoch, bin), ``pair_ptr`` their CSR pointers by epoch): pair (i', b)
    with M requests heats (i' + j, b) by C_j * M, j = 1..N. Returns ``(keys, sums)``: the sorted keys
    ``epoch * n_bins + bin`` of every (epoch < ``n_epochs``, bin) heated, and each one's sum of C_j * M.

    Done in passes over ranges of target epochs of about :data:`_HEAT_PAIRS` source pairs each (issue 35: one pass
    over all of them held 8 copies of the pairs at once, ~3 GB on the all8 mix). A key's terms are added in the
    order j = 1..N in every pass, as in one pass; the sums of dyadic C_j x integers are exact anyway."""
    c = cooling_factors(n_hist)
    cuts = np.searchsorted(pair_ptr, np.arange(1, pair_ptr[-1] // _HEAT_PAIRS + 1) * _HEAT_PAIRS)
    bounds = np.unique(np.r_[0, np.clip(cuts, 1, n_epochs), n_epochs])  # target epoch ranges [e0, e1), e0 < e1
    keys, sums = [], []
    for e0, e1 in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        lo, hi = int(pair_ptr[max(e0 - n_hist, 0)]), int(pair_ptr[e1])   # sources: epochs e0 - N .. e1 - 1
        pe, pb, pc = pair_epoch[lo:hi], pair_bin[lo:hi], pair_count[lo:hi]
        ek, ew = [], []
        for j in range(1, n_hist + 1):
            m = (pe + j >= e0) & (pe + j < e1)
            ek.append((pe[m] + j) * n_bins + pb[m])
            ew.append(c[j - 1] * pc[m])
        k, inv = np.unique(np.concatenate(ek), return_inverse=True)
        sums.append(np.bincount(inv, weights=np.concatenate(ew), minlength=k.size))
        keys.append(k)
    if not keys:
        return np.zeros(0, np.int64), np.zeros(0)
    return np.concatenate(keys), np.concatenate(sums)


def binning(ds: xr.Dataset, params: VfrmParams, bins: BinTrace | None, *, policy: str, vm=None, start=None,
            lam=None) -> BinTrace:
    """The BinTrace a bin-placement policy runs on: ``bins`` (the caller's ``bin_trace(ds, params, ...)``, shared by
    the policies of one sweep: vFRM under every idle-bin rule, G1 and G2 at every aging period), checked against
    ``ds`` and ``params`` (:meth:`BinTrace.check_binning`), or ``bin_trace(ds, params, vm=vm, start=start,
    lam=lam)`` when it is None. ``vm``, ``start`` and ``lam`` belong to the binning: with ``bins`` they are refused
    (give them to :func:`bin_trace`)."""
    if bins is None:
        return bin_trace(ds, params, vm=vm, start=start, lam=lam)
    if not isinstance(bins, BinTrace):
        raise TypeError(f"{policy}: bins must be a BinTrace (tieringlab.policies.vfrm.bin_trace); got "
                        f"{type(bins).__name__}")
    given = [k for k, v in (("vm", vm), ("start", start), ("lam", lam)) if v is not None]
    if given:
        raise ValueError(f"{policy}: {', '.join(given)} belong to the binning: pass them to bin_trace, not with bins")
    return bins.check_binning(ds, params, policy)


def capacity_bins(capacities, bin_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """``(capacities in bytes, whole bins that fit)``, both int64
    (:func:`~tieringlab.policies.contract.check_capacities`)."""
    fs = check_capacities(capacities)
    return fs, fs // int(bin_bytes)


def _count_below(values, weights, ks):
    """For each k: sum of ``weights`` where ``values < k`` (``values`` non-negative integers, such as
    ranks; integer ``weights``, or None to count). A histogram of ``min(values, max(ks))`` and its prefix sums:
    O(n)."""
    ks = np.asarray(ks, dtype=np.int64)
    top = int(ks.max()) if ks.size else 0
    v = np.minimum(values, top)  # a value >= max(ks) is below no k
    if weights is None:  # plain counts: integers throughout, no weight array (issue 35: memory)
        cnt = np.bincount(v, minlength=top + 1)
        del v
        return np.concatenate([[0], np.cumsum(cnt)])[ks].astype(np.int64)
    cnt = np.bincount(v, weights=np.asarray(weights, dtype=np.float64), minlength=top + 1)
    cw = np.concatenate([[0.0], np.cumsum(cnt)])  # integer sums < 2^53: exact in float64
    return np.rint(cw[ks]).astype(np.int64)


def _count_between(lo, hi, ks):
    """For each k: number of pairs with ``lo < k <= hi`` (one temporary of the pairs' size at a time)."""
    below_lo = _count_below(lo, None, ks)
    hi = np.maximum(hi, lo)
    return below_lo - _count_below(hi, None, ks)


def request_counts(bt: BinTrace, hit, ks=None) -> dict:
    """Table 2(a) user-IO counts from per-request outcomes: ``ssd_reads``/``ssd_writes`` (hits),
    ``md_reads``/``md_writes`` (misses) in ``user_io_bytes`` operations, their ``cont_*`` parts
    (operations 2..n of each request, choice 6) and ``hits``; with ``bt.req_pages``, also the hits in 4 KB pages
    (:data:`PAGE_COUNTS`: ``hit_read_pages``, ``hit_write_pages`` and their ``cont_*`` parts, pages 2..n of each hit
    request), the unit the page caches price their hits in.

    ``hit`` is a bool per request, or, with ``ks`` (flash sizes in bins), a rank per request: the
    request hits a flash of ``k`` bins iff its rank is ``< k`` (one value per ``k``)."""
    if ks is None:
        return _hit_counts(bt, np.asarray(hit, dtype=bool))
    w, ops = bt.req_write, bt.req_ops
    tot = {"r": int(ops[~w].sum()), "w": int(ops[w].sum())}
    tot_c = {"r": int(ops[~w].sum()) - int((~w).sum()), "w": int(ops[w].sum()) - int(w.sum())}

    def count(sel, weights):
        if ks is None:
            return int(weights[hit[sel]].sum())
        return _count_below(hit[sel], weights, ks)

    out = {}
    for kind, sel in (("r", ~w), ("w", w)):
        dev = "reads" if kind == "r" else "writes"
        h = count(sel, ops[sel])
        hc = count(sel, ops[sel] - 1)
        out[f"ssd_{dev}"], out[f"md_{dev}"] = h, tot[kind] - h
        out[f"cont_ssd_{dev}"], out[f"cont_md_{dev}"] = hc, tot_c[kind] - hc
        if bt.req_pages is not None:
            pg = bt.req_pages[sel]
            out[f"hit_{dev[:-1]}_pages"] = count(sel, pg)
            out[f"cont_hit_{dev[:-1]}_pages"] = count(sel, pg - 1)
    out["hits"] = count(np.ones(hit.size, dtype=bool), np.ones(hit.size, dtype=np.int64))
    return out


def _hit_counts(bt: BinTrace, hit: np.ndarray) -> dict:
    """:func:`request_counts` for one bool ``hit`` per request: the sums per (read/write, hit/miss) class of the
    requests, their operations and their pages by one ``bincount`` each (exact: integer sums far below 2^53 in
    float64), the same integers as the selections of the rank path."""
    cls = bt.req_write.astype(np.intp) * 2
    cls += hit  # 0 read miss, 1 read hit, 2 write miss, 3 write hit
    n = np.bincount(cls, minlength=4)
    s_ops = [int(v) for v in np.bincount(cls, weights=bt.req_ops, minlength=4)]
    s_pg = None if bt.req_pages is None else [int(v) for v in np.bincount(cls, weights=bt.req_pages, minlength=4)]
    del cls
    out = {}
    for kind, (miss, hit_c) in (("reads", (0, 1)), ("writes", (2, 3))):
        out[f"ssd_{kind}"], out[f"md_{kind}"] = s_ops[hit_c], s_ops[miss]
        out[f"cont_ssd_{kind}"] = s_ops[hit_c] - int(n[hit_c])
        out[f"cont_md_{kind}"] = s_ops[miss] - int(n[miss])
        if s_pg is not None:
            out[f"hit_{kind[:-1]}_pages"] = s_pg[hit_c]
            out[f"cont_hit_{kind[:-1]}_pages"] = s_pg[hit_c] - int(n[hit_c])
    out["hits"] = int(n[1] + n[3])
    return out


#: The hit counts in 4 KB pages :func:`request_counts` adds when the BinTrace has ``req_pages`` (extras of a result,
#: not Eq. 4 counts).
PAGE_COUNTS = ("hit_read_pages", "hit_write_pages", "cont_hit_read_pages", "cont_hit_write_pages")


def bin_result(bt: BinTrace, params: VfrmParams, fs, caps, *, user, move_ins, move_outs, dirty, policy: str,
               source: str, attrs=None, dirty_at_end=None) -> xr.Dataset:
    """The trace-contract result of a bin-placement policy (vFRM, G1, G2): Table 2(a) user IOs in
    ``params.user_io_bytes`` operations (``user``: the dict of :func:`request_counts`), Table 2(b)
    migrations of ``params.ios_per_bin`` IOs per bin moved in or dirty bin moved out, priced by
    ``params.cost_model`` and ``params.io_pricing`` (Eq. 4). Extras: ``move_ins``, ``move_outs``,
    ``dirty_move_outs``, ``dirty_at_end`` (bins still dirty in Flash when the trace ends, never written back
    here: the flush accounting reading of the experiments charges them) and the :data:`PAGE_COUNTS` of ``user``."""
    n_io = params.ios_per_bin
    counts = {k: v for k, v in user.items() if k != "hits" and k not in PAGE_COUNTS}
    extra = {"move_ins": move_ins, "move_outs": move_outs, "dirty_move_outs": dirty,
             **{k: user[k] for k in PAGE_COUNTS if k in user}}
    if dirty_at_end is not None:
        extra["dirty_at_end"] = dirty_at_end
    counts.update({"update_md_reads": n_io * move_ins, "update_ssd_writes": n_io * move_ins,
                   "update_ssd_reads": n_io * dirty, "update_md_writes": n_io * dirty})
    return trace_result(fs, policy=policy, source=source, requests=bt.req_epoch.size, hits=user["hits"],
                        counts=counts, io_bytes=params.user_io_bytes, cost_model=params.cost_model,
                        io_pricing=params.io_pricing,
                        extra=extra, coords={"capacity_bins": caps},
                        attrs={"bin_bytes": params.bin_bytes, "epoch_s": params.epoch_s,
                               "n_epochs_history": params.n_epochs, **(attrs or {})})


# ------------------------------------------------------------------------------------ single-VM vFRM


def vfrm_ranks(bt: BinTrace, idle_bins: str = "keep", kmax: int | None = None):
    """Rank of the bins at every epoch: 0 = hottest. Returns ``(keys, ranks)``, ``keys = epoch * n_bins
    + bin`` sorted; a flash of ``k <= kmax`` bins holds, during epoch ``i``, the bins with rank ``< k``
    at ``i`` (vFRM paper Sec. 4.4.2: "the most popular blocks ... placed in the Flash tier based on the
    available capacity"); a bin missing at ``i`` is not in any such flash.

    Every bin with ``T_i > 0`` is listed, by ``T_i`` descending, ties by bin id (choice 4); ``n_pos_i``
    of them. The idle bins (``T_i = 0``, choice 3) follow, ranked from ``n_pos_i``, only those with
    rank ``< kmax`` (default ``kmax = n_bins``), so there are at most ``n_epochs x kmax`` idle entries:

    - ``"keep"``: the idle bins ranked ``< kmax`` at ``i - 1`` (the ones some flash of the call held),
      in the order (epoch of last access descending, bin id ascending), each ranked ``max(rho, v)``
      where ``rho`` is its rank at ``i - 1`` and ``v`` the ``(n_pos_i + 1)``-th smallest value not
      taken by the ``rho`` of the candidates before it. So a flash of ``k`` bins holds an idle bin iff
      it held it at ``i - 1`` and it is among the first ``k - n_pos_i`` idle bins that flash held: idle
      bins keep their place while room is left and never move in (a stack algorithm: each flash
      size's contents follow from one ranking; tests/test_vfrm.py checks it against a plain
      per-size replay);
    - ``"recency"``: every idle bin accessed before, by epoch of last access descending, then bin id;
    - ``"disk"``: none.
    """
    choice("idle_bins", idle_bins, IDLE_BINS)
    nb = bt.n_bins
    # issue 35 (memory): the sort keys as int32 where epochs and bins fit (the same order), each temporary dropped
    # once it has served, and the idle entries merged into the sorted keys instead of sorting everything again
    small = max(nb, bt.n_epochs) < np.iinfo(np.int32).max
    e = bt.elig_key // nb
    if small:
        e = e.astype(np.int32)
    b = bt.elig_key % nb
    if small:
        b = b.astype(np.int32)
    neg = -bt.elig_temp
    order = np.lexsort((b, neg, e))
    del neg
    ranks = np.empty(order.size, dtype=np.int64)
    ranks[order] = np.arange(order.size)
    ranks -= bt.elig_ptr[e]
    del e
    keys = bt.elig_key
    if idle_bins == "disk":
        return keys, ranks
    kmax = nb if kmax is None else min(int(kmax), nb)
    if idle_bins == "recency":
        del b, order
        ik, ir = _idle_ranks(bt, kmax)
    else:
        from tieringlab.policies._vfrm_kernels import keep_kernel  # noqa: PLC0415  (numba on first use)

        b_ord = b[order].astype(np.int64)
        del b, order
        ik, ir = keep_kernel(bt.n_epochs, nb, max(kmax, 0), bt.elig_ptr.astype(np.int64),
                             b_ord, bt.pair_ptr.astype(np.int64), bt.pair_bin.astype(np.int64))
        del b_ord
    return _merge_sorted(keys, ranks, ik, ir)


def _merge_sorted(keys, values, ik, iv):
    """``(keys, values)`` with the entries ``(ik, iv)`` added, sorted by key: the result of a stable argsort of
    ``concatenate([keys, ik])`` (``keys`` already sorted; an added key after every equal one of ``keys``, added keys
    among themselves in their order), by one compiled merge instead of sorting ``keys`` again (int64 keys and
    values)."""
    from tieringlab.policies._vfrm_kernels import merge_kernel  # noqa: PLC0415  (numba on first use)

    io = np.argsort(ik, kind="stable")
    return merge_kernel(np.asarray(keys, np.int64), np.asarray(values, np.int64), np.asarray(ik[io], np.int64),
                        np.asarray(iv[io], np.int64))


def _idle_ranks(bt: BinTrace, kmax: int):
    """``(keys, ranks)`` of the idle bins with rank ``< kmax`` at every epoch (choice 3, ``"recency"``).

    An access pair ``(j, b)`` (bin ``b`` accessed in epoch ``j``) with next access of ``b`` in epoch
    ``nxt`` (``n_epochs`` if none) makes ``b`` idle with last access ``j`` during epochs
    ``j + N + 1 .. nxt`` (``T = 0`` from ``j + N + 1`` on; at ``nxt`` itself ``T`` is still 0, the
    access heats ``nxt + 1``). The idle list of epoch ``i`` is those pairs alive at ``i``, in the order
    ``j`` descending, ``b`` ascending: each epoch prepends the pairs of ``j = i - N - 1`` and drops the
    pairs with ``nxt < i``. Dropping is lazy: only the head that is read is filtered (doubling until it
    holds enough live pairs) and written back compacted, so each epoch costs ``O(kmax)`` plus the dead
    pairs it removes for good (array work inside a loop over epochs; no loop over requests or bins).
    """
    nb, n_ep, n_hist = bt.n_bins, bt.n_epochs, bt.n_history
    pe, pb = bt.pair_epoch, bt.pair_bin
    by_bin = np.lexsort((pe, pb))
    nxt = np.full(pe.size, n_ep, dtype=np.int64)
    same = pb[by_bin[1:]] == pb[by_bin[:-1]]
    nxt[by_bin[:-1][same]] = pe[by_bin[1:][same]]
    n_pos = np.diff(bt.elig_ptr)
    live = np.zeros(0, dtype=np.int64)  # pair ids, order (j desc, b asc); may hold dead pairs
    out_k, out_r = [], []
    for i in range(n_hist + 1, n_ep):
        j = i - n_hist - 1
        new = np.arange(bt.pair_ptr[j], bt.pair_ptr[j + 1])
        live = np.concatenate([new[nxt[new] >= i], live])  # pairs sorted by (epoch, bin): b ascending
        m = kmax - int(n_pos[i])
        if m <= 0 or live.size == 0:
            continue
        c = min(m, live.size)
        while True:
            head = live[:c]
            ok = nxt[head] >= i
            if ok.sum() >= m or c == live.size:
                break
            c = min(2 * c, live.size)
        head = head[ok]
        live = np.concatenate([head, live[c:]])
        take = head[:m]
        out_k.append(i * nb + pb[take])
        out_r.append(n_pos[i] + np.arange(take.size))
    if not out_k:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(out_k), np.concatenate(out_r)


def vfrm(ds: xr.Dataset, capacities, params: VfrmParams = VfrmParams(), *, start=None,
         bins: BinTrace | None = None) -> xr.Dataset:
    """vFRM on one trace for every flash size in ``capacities`` (bytes; capacity = whole bins) in one pass.

    The trace contract (:mod:`tieringlab.policies.contract`): a Dataset over ``capacity_bytes`` with
    ``hits``, ``requests``, ``hit_ratio``, the
    Table 2(a) user-IO counts ``ssd_reads``/``ssd_writes`` (hits) and ``md_reads``/``md_writes``
    (misses, no admission) in 128 KB operations, ``move_ins``, ``move_outs``, ``dirty_move_outs``, the
    Table 2(b) migration counts ``update_*`` (8 x 128 KB per bin), ``io_cost`` and ``update_cost``
    (Eq. 4, seconds, ``params.cost_model``). Requests of all VMs of ``ds`` (if it has ``vm``) are
    ranked together, one global ranking (vFRM Sec. 4.4.1 step 2: "in the scope of all VMDK files").
    ``params.idle_bins`` decides whether idle bins (``T_i = 0``) fill the room left in Flash (choice 3).
    ``start``: the time epoch 0 begins (choice 1; default: the first request's time). ``bins``: the trace
    already binned by ``bin_trace(ds, params, start=...)`` (the caller bins once for every policy that shares it;
    :func:`binning`); None bins it here.
    """
    bt, fs, caps, ks, keys, ranks, inf, req_rank = _placement(ds, capacities, params, bins, start)
    user = request_counts(bt, req_rank, ks)
    del req_rank
    move_ins, move_outs, last, inside, nxt = _moves(bt, keys, ranks, inf, ks)
    # dirty: written while resident. For the latest write epoch w <= e of the bin, it stayed in a flash of
    # k bins over [w, e] iff k > max(rank_w .. rank_e) =: Mx (missing epochs have rank inf)
    mx = _max_rank_since_write(bt, keys, ranks, inf)
    # still dirty when the trace ends: placed in the last epoch and written while resident since (k > Mx)
    dirty_end = _count_between(mx[last], np.full(int(last.sum()), inf, dtype=np.int64), ks)
    # dirty move-outs: written while resident and moving out at the start of epoch e+1
    dirty = _count_between(mx[inside], nxt, ks)
    del nxt, mx, inside, last
    return bin_result(bt, params, fs, caps, user=user, move_ins=move_ins, move_outs=move_outs, dirty=dirty,
                      policy="vFRM", source=_SOURCE, attrs={"idle_bins": params.idle_bins}, dirty_at_end=dirty_end)


def _placement(ds, capacities, params: VfrmParams, bins, start):
    """What :func:`vfrm` and :func:`vfrm_rewrites` share: the binning, the flash sizes (``fs`` bytes, ``caps`` bins,
    ``ks`` = ``caps`` capped at the bins there are), vFRM's ranks (``keys``, ``ranks``; ``inf`` = the rank of a bin
    not placed) and each request's rank (it hits a flash of ``k`` bins iff its rank is ``< k``)."""
    bt = binning(ds, params, bins, policy="vFRM", start=start)
    fs, caps = capacity_bins(capacities, params.bin_bytes)
    ks = np.minimum(caps, bt.n_bins)  # a flash larger than all bins holds them all: counts as n_bins
    # idle bins are ranked only up to the largest flash of the call (choice 3); a missing rank = not placed
    keys, ranks = vfrm_ranks(bt, params.idle_bins, kmax=int(ks.max()))
    inf = bt.n_bins + 1  # rank of a bin that is not placed at all
    # hits: request q hits in a flash of k bins iff max rank of its bins at its epoch < k (Sec. 5.1)
    pair_rank = _lookup(keys, ranks, bt.pair_epoch * bt.n_bins + bt.pair_bin, inf)
    req_rank = np.maximum.reduceat(pair_rank[bt.unit_pair], bt.req_start)
    del pair_rank
    return bt, fs, caps, ks, keys, ranks, inf, req_rank


def _moves(bt: BinTrace, keys, ranks, inf, ks):
    """What :func:`vfrm` and :func:`vfrm_rewrites` count of the placement alone, per flash size ``ks``: the move-ins
    at the start of epoch e (``rank_e < k <= rank_{e-1}``) and the move-outs at the start of epoch e+1 (e+1 inside
    the trace, no flush at its end: ``rank_e < k <= rank_{e+1}``), with what the dirty counts need: which placed keys
    are in the last epoch (``last``), which are not (``inside``) and the rank of the latter's bins at e+1 (``nxt``).
    Neighbour ranks are looked up from the keys shifted by ``n_bins`` (no per-key epoch and bin arrays: issue 35)."""
    nb = bt.n_bins
    before = _lookup(keys, ranks, keys - nb, inf, valid=keys >= nb)  # e = 0 has no epoch before
    move_ins = _count_between(ranks, before, ks)
    del before
    last = keys >= (bt.n_epochs - 1) * nb
    inside = ~last
    nxt = _lookup(keys, ranks, keys[inside] + nb, inf)
    move_outs = _count_between(ranks[inside], nxt, ks)
    return move_ins, move_outs, last, inside, nxt


def with_writes(bt: BinTrace, is_write) -> BinTrace:
    """``bt`` with another write flag per request (``is_write``, bool, one per request): the binning of the same
    requests (times, offsets, sizes) with those writes, identical to ``bin_trace`` of the rewritten trace. Only
    ``req_write`` and ``pair_wrote`` depend on the writes: Eq. 1-3 count requests whatever their kind."""
    w = np.asarray(is_write, dtype=bool)
    if w.shape != bt.req_write.shape:
        raise ValueError(f"is_write must have one flag per request ({bt.req_write.size}); got shape {w.shape}")
    units = np.diff(np.r_[bt.req_start, bt.unit_pair.size])  # units of each request, in request order
    pair_wrote = np.bincount(bt.unit_pair, weights=np.repeat(w, units), minlength=bt.pair_bin.size) > 0
    return dataclasses.replace(bt, req_write=w, pair_wrote=pair_wrote)


def vfrm_rewrites(ds: xr.Dataset, capacities, writes, params: VfrmParams = VfrmParams(), *, start=None,
                  bins: BinTrace | None = None) -> list[xr.Dataset]:
    """:func:`vfrm` of trace ``ds`` with each write-flag vector of ``writes`` in place of ``ds``'s ``is_write``
    (a read-ratio twin reading, issue 34: the same times, offsets and sizes): one result per vector, each
    identical to ``vfrm(ds.assign(is_write=("request", w)), ...)`` (tests/test_vfrm.py checks it), from one
    ranking. vFRM's placement (Eq. 1-3 temperatures, the ranks, hits, move-ins and move-outs) never reads the writes;
    only the read/write split of the Table 2(a) counts and the dirty move-outs do, so those alone are recounted per
    vector. ``bins``: ``bin_trace(ds, params, start=...)`` (any write flags; None bins it here)."""
    bt0, fs, caps, ks, keys, ranks, inf, req_rank = _placement(ds, capacities, params, bins, start)
    move_ins, move_outs, last, inside, nxt = _moves(bt0, keys, ranks, inf, ks)
    out = []
    for w in writes:
        bt = with_writes(bt0, w)
        user = request_counts(bt, req_rank, ks)
        mx = _max_rank_since_write(bt, keys, ranks, inf)
        dirty_end = _count_between(mx[last], np.full(int(last.sum()), inf, dtype=np.int64), ks)
        dirty = _count_between(mx[inside], nxt, ks)
        del mx
        out.append(bin_result(bt, params, fs, caps, user=user, move_ins=move_ins, move_outs=move_outs, dirty=dirty,
                              policy="vFRM", source=_SOURCE, attrs={"idle_bins": params.idle_bins},
                              dirty_at_end=dirty_end))
    return out


def _max_rank_since_write(bt, keys, ranks, inf):
    """For every placed (epoch e, bin b): max rank of b over [w, e], w = its latest write epoch <= e
    (inf without such a write or with an epoch in between where b is not placed): a running max per bin, reset at
    each write, over the placed keys and the access pairs in (epoch, bin) order
    (:func:`~tieringlab.policies._vfrm_kernels.since_write_kernel`; issue 35: one compiled pass where a sort of both
    by (bin, epoch) and a segmented scan took 13 % of notebook 02)."""
    from tieringlab.policies._vfrm_kernels import since_write_kernel  # noqa: PLC0415  (numba on first use)

    return since_write_kernel(np.asarray(keys, np.int64), np.asarray(ranks, np.int64), np.int64(bt.n_bins),
                              np.asarray(bt.pair_epoch, np.int64), np.asarray(bt.pair_bin, np.int64),
                              np.asarray(bt.pair_wrote, np.bool_), np.int64(inf))


def _lookup(keys, values, query, missing, valid=True):
    """``values[i]`` where ``keys[i] == query`` (``keys`` sorted and unique, ``values`` integers), else ``missing``;
    ``valid`` (True or a bool per query) marks the queries that may match. One compiled pass for ascending queries
    (:func:`~tieringlab.policies._vfrm_kernels.lookup_kernel`: every query here is a sorted key array, shifted),
    where a binary search per query took 5 % of notebook 02 (issue 35)."""
    from tieringlab.policies._vfrm_kernels import lookup_kernel  # noqa: PLC0415  (numba on first use)

    query = np.asarray(query, dtype=np.int64)
    v = np.asarray(valid, dtype=np.bool_)
    use = v.ndim > 0
    if not use and not bool(v):
        return np.full(query.shape, missing, dtype=np.int64)
    out = lookup_kernel(np.asarray(keys, np.int64), np.asarray(values, np.int64), query.reshape(-1),
                        np.int64(missing), v.reshape(-1) if use else np.zeros(0, np.bool_), use)
    return out.reshape(query.shape)


def example_trace(n_vms: int = 1, n: int = 240, seed: int = 0) -> xr.Dataset:
    """A small trace for the contract's example calls: ``n`` requests over 12 epochs of 5 minutes on 8 MB per VM
    (a hot 2 MB), 4 KB to 3 MB, 40 % writes, ``n_vms`` VMs (a ``vm`` variable when more than one)."""
    from tieringlab.traces import make_dataset  # noqa: PLC0415  (traces sit below policies; only when asked)

    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0.0, 12 * 300.0, n))
    hot = rng.random(n) < 0.6
    off = np.where(hot, rng.integers(0, 2 << 20, n), rng.integers(0, 8 << 20, n)) // 512 * 512
    size = rng.choice([4096, 65536, 3 << 20], n, p=[0.6, 0.35, 0.05])
    ds = make_dataset(t, off.astype(np.int64), size.astype(np.int64), rng.random(n) < 0.4, name="example",
                      source="test")
    if n_vms > 1:
        ds["vm"] = ("request", rng.integers(0, n_vms, n))
    return ds


def _example():
    return (example_trace(), [1 << 20, 4 << 20]), {}


_SOURCE = "vFRM paper Sec. 4.4 (thesis Sec. 4.2.2): Eq. 1-3 temperatures, 1 MB bins, 5-minute epochs"
register(PolicySpec(name="vFRM", kind="trace", fn=vfrm, params_type=VfrmParams, source=_SOURCE, example=_example,
                    description="epoch placement of 1 MB bins by temperature, no admission on a miss"))
