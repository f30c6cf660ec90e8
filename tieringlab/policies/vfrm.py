"""vFRM, GLB-vFRM (G1-vFRM) and G2-vFRM: epoch-based flash placement of 1 MB bins by IO popularity.

- :func:`vfrm` — vFRM for one VM (vFRM paper Sec. 4.4; thesis Sec. 4.2.2). At every epoch boundary the
  bins with the highest temperature ``T_i`` (Eq. 1-3, :mod:`tieringlab.models.temperature`) fill
  Flash, then (by default) the idle bins, most recently accessed first (choice 3); during the epoch a
  request is a Flash hit only if **all** its bins are in Flash (Sec. 5.1); misses go to the spinning
  disk (MD) without admission (Table 2(a)). All flash sizes of a sweep share one pass: bins are ranked
  once per epoch and a flash of ``k`` bins holds the first ``k`` of the ranking, so every count is a
  prefix count over ranks (sorting and ``searchsorted``; no loop over requests or bins; the idle bins'
  ranks take a loop over epochs with array work inside).
- :func:`g1_vfrm` — GLB-vFRM / G1-vFRM (vFRM paper Alg. 1, Sec. 4.5; thesis Alg. 1, Sec. 4.3.2):
  a private zone split equally among VMs plus a public zone shared by popularity.
- :func:`g2_vfrm` — G2-vFRM (thesis Alg. 2, Sec. 4.3.2): the private zone holds the bins with the
  highest globally aged frequency counters (:func:`tieringlab.models.temperature.aged_counters`), the
  public zone the recently accessed bins.

G1/G2 carry per-VM zone state from epoch to epoch whose content depends on the flash size, so each
flash size is its own pass: a Python loop over the epochs with array (set) operations over bins
inside; the replay of the requests against the resulting placements is vectorized.

**Documented choices where the papers are silent** (each also at its point of use):

1. Epoch ``i`` covers ``[start + i*epoch_s, start + (i+1)*epoch_s)``; ``start`` defaults to the first
   request's time (for VM mixes: the common start the timestamps were aligned to, Sec. 5.3).
2. ``M_i`` of a bin counts the requests that touch it in epoch ``i`` (a request over two bins heats
   both, once each).
3. Idle bins (``T_i = 0``: no IO in the last ``N`` epochs), :attr:`VfrmParams.idle_bins`:
   ``"recency"`` (default): every bin accessed before epoch ``i`` is ranked, by the key (``T_i``
   descending, epoch of its last access descending, bin id ascending); bins with ``T_i > 0`` come first,
   ranked exactly as under ``"disk"``, then the idle bins, most recently accessed first, so a Flash with
   room keeps cooled bins instead of leaving the room empty. Why: Sec. 4.4.2 ranks all blocks and fills
   the available capacity; ``T_i`` ties at 0 are broken by recency, the same "recent IO matters more"
   heuristic as the cooling factor (Eq. 3). ``"disk"``: only bins with ``T_i > 0`` are placed, so a
   large Flash holds exactly the bins accessed in the last ``N`` epochs (a bin with no IO in the last
   ``N`` epochs has no popularity, and moving it in would cost 8 migration IOs).
4. Ties in popularity (among bins with ``T_i > 0``, and among idle bins last accessed in the same
   epoch) are broken by bin id (smaller first; bins are numbered in (VM, address) order),
   so placements are deterministic; "lowest popularity" is the reverse of the same total order.
5. A bin is dirty when a write request touches it while it is in Flash (the hybrid file redirects
   each block's IO to the tier holding it, Sec. 4.2), and stays dirty until it is moved out; moving
   it out then costs 8 x (SSD read + MD write). Clean bins leave for free. Flash is not flushed when
   the trace ends.
6. User IOs are counted in 128 KB operations, ``ceil(size / user_io_bytes)`` per request (Sec. 5.1:
   all vFRM ``T`` terms are 128 KB IOs), at least one per request.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from tieringlab.models.temperature import N_EPOCHS_PAPER, cooling_factors
from tieringlab.policies.iocost import VFRM_COST, CostModel, io_cost
from tieringlab.traces.units import split_arrays

__all__ = ["IDLE_BINS", "VfrmParams", "GvfrmParams", "BinTrace", "bin_trace", "vfrm", "vfrm_ranks", "g1_vfrm", "g2_vfrm",
           "g1_placements", "g2_placements", "replay"]


#: Values of :attr:`VfrmParams.idle_bins` (documented choice 3).
IDLE_BINS = ("recency", "disk")


def _check_idle_bins(idle_bins):
    if idle_bins not in IDLE_BINS:
        raise ValueError(f"idle_bins must be one of {list(IDLE_BINS)}, got {idle_bins!r}")


@dataclass(frozen=True)
class VfrmParams:
    """vFRM parameters, paper values."""

    #: 1 MB bins, the VMFS block (vFRM paper Sec. 4.3 and 5.1).
    bin_bytes: int = 1 << 20
    #: 5-minute epochs ("m = 5 in our experiments", vFRM paper Sec. 4.4.2; 5.1).
    epoch_s: float = 300.0
    #: N, the epochs of history in Eq. 1 ("the previous 8 epochs", vFRM paper Sec. 4.3).
    n_epochs: int = N_EPOCHS_PAPER
    #: λ of Eq. 2; "setting λ equal to one" (vFRM paper Sec. 5.2.1).
    lam: float = 1.0
    #: 128 KB migration IOs, 8 per 1 MB bin (vFRM paper Sec. 5.1).
    migration_io_bytes: int = 128 << 10
    #: size of one user-IO operation in the cost counts (Sec. 5.1: vFRM T terms are 128 KB IOs).
    user_io_bytes: int = 128 << 10
    #: bins with ``T_i = 0`` (documented choice 3): ``"recency"`` ranks every bin accessed before, the idle
    #: ones after the warm ones, most recently accessed first (Sec. 4.4.2 ranks all blocks and fills the
    #: available capacity; ties at 0 broken by recency, the cooling factor's heuristic); ``"disk"`` keeps
    #: idle bins on the spinning disk (only ``T_i > 0`` is placed).
    idle_bins: str = "recency"

    def __post_init__(self):
        if self.bin_bytes <= 0 or self.migration_io_bytes <= 0 or self.user_io_bytes <= 0:
            raise ValueError("bin_bytes, migration_io_bytes and user_io_bytes must be positive byte counts")
        if self.bin_bytes % self.migration_io_bytes:
            raise ValueError(f"bin_bytes ({self.bin_bytes}) must be a multiple of migration_io_bytes "
                             f"({self.migration_io_bytes}): a bin moves as whole migration IOs")
        if not self.epoch_s > 0:
            raise ValueError(f"epoch_s must be > 0 seconds, got {self.epoch_s}")
        cooling_factors(self.n_epochs)  # validates N (even int >= 6)
        if not self.lam > 0:
            raise ValueError(f"lam (λ) must be > 0, got {self.lam}")
        _check_idle_bins(self.idle_bins)

    @property
    def ios_per_bin(self) -> int:
        """8: migration IOs per bin moved (1 MB / 128 KB)."""
        return self.bin_bytes // self.migration_io_bytes


@dataclass(frozen=True)
class GvfrmParams:
    """Zone split of the global versions."""

    #: share of Flash in the private zone; "50% of Flash space is assigned to each of these two zones
    #: in our evaluation" (vFRM paper Sec. 5.3).
    private_fraction: float = 0.5
    #: G2-vFRM counter aging period in epochs (thesis Sec. 4.3.2 ages "periodically" without a period;
    #: one epoch, as in :func:`tieringlab.models.temperature.aged_counters`).
    aging_period: int = 1

    def __post_init__(self):
        if not 0.0 <= self.private_fraction <= 1.0:
            raise ValueError(f"private_fraction must be in [0, 1], got {self.private_fraction}")
        if int(self.aging_period) < 1:
            raise ValueError(f"aging_period must be a positive number of epochs, got {self.aging_period}")


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


def bin_trace(ds: xr.Dataset, params: VfrmParams = VfrmParams(), *, vm=None, start=None, lam=None) -> BinTrace:
    """Cut trace ``ds`` (``time`` s, ``offset``/``size`` bytes, ``is_write``; optional ``vm``) into bins
    and epochs and compute every bin's temperature (Eq. 1-3) at every epoch where it is positive.

    ``vm`` (array, or the ``vm`` variable of ``ds``; default one VM) labels each request's VM;
    ``lam`` is λ of Eq. 2: a scalar, or a sequence with one value per VM in sorted-label order
    (default ``params.lam``). Temperatures are ``λ * sum_j C_j M_{i-j}`` (as
    :func:`tieringlab.models.temperature.temperature_from_history`), computed on the sparse set of
    (epoch, bin) pairs with IO in the ``N`` epochs before (no dense epoch x bin matrix).
    """
    t = np.asarray(ds["time"].values, dtype=np.float64)
    if t.size == 0:
        raise ValueError("trace ds has no requests")
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
    if t.min() < t0:
        raise ValueError(f"start ({t0}) must not be after the first request time ({t.min()})")
    epoch = np.floor((t - t0) / params.epoch_s).astype(np.int64)
    n_epochs = int(epoch.max()) + 1

    keys, ridx = split_arrays(offset, size, params.bin_bytes)
    span = int(keys.max()) + 1
    combined = vm_idx[ridx].astype(np.int64) * span + keys
    ubins, unit_bin = np.unique(combined, return_inverse=True)
    n_bins = ubins.size
    bin_vm = ubins // span
    bin_key = ubins % span
    unit_epoch = epoch[ridx]
    pair_keys, unit_pair, pair_count = np.unique(unit_epoch * n_bins + unit_bin, return_inverse=True,
                                                 return_counts=True)
    pair_wrote = np.bincount(unit_pair, weights=is_write[ridx], minlength=pair_keys.size) > 0
    pair_epoch, pair_bin = pair_keys // n_bins, pair_keys % n_bins

    lam_vm = np.broadcast_to(np.asarray(params.lam if lam is None else lam, dtype=np.float64), (vms.size,))
    if np.any(~(lam_vm > 0)):
        raise ValueError(f"lam (λ) must be > 0 for every VM, got {lam}")
    c = cooling_factors(params.n_epochs)
    n_hist = params.n_epochs
    # Eq. 1: pair (i', b) with M requests heats (i' + j, b) by C_j * M, j = 1..N
    ek = np.concatenate([(pair_epoch + j) * n_bins + pair_bin for j in range(1, n_hist + 1)])
    ew = np.concatenate([c[j - 1] * pair_count for j in range(1, n_hist + 1)])
    keep = ek < n_epochs * n_bins
    elig_key, inv = np.unique(ek[keep], return_inverse=True)
    s = np.bincount(inv, weights=ew[keep], minlength=elig_key.size)  # sums of dyadic C_j * integers: exact
    elig_temp = lam_vm[bin_vm[elig_key % n_bins]] * s               # Eq. 2: H = λ M (λ outside the sum)

    ep = np.arange(n_epochs + 1)
    req_ops = np.maximum(-(-np.maximum(size, 0) // params.user_io_bytes), 1)
    req_start = np.searchsorted(ridx, np.arange(t.size))
    return BinTrace(n_epochs=n_epochs, n_bins=n_bins, bin_vm=bin_vm, bin_key=bin_key, req_epoch=epoch,
                    req_write=is_write, req_ops=req_ops, req_start=req_start, unit_pair=unit_pair,
                    pair_epoch=pair_epoch, pair_bin=pair_bin, pair_count=pair_count, pair_wrote=pair_wrote,
                    pair_ptr=np.searchsorted(pair_epoch, ep), elig_key=elig_key, elig_temp=elig_temp,
                    elig_ptr=np.searchsorted(elig_key, ep * n_bins), vms=vms,
                    n_history=int(n_hist))


def _capacities(flash_sizes, bin_bytes):
    fs = np.atleast_1d(np.asarray(flash_sizes))
    if fs.ndim != 1 or fs.size == 0 or np.any(fs < 0):
        raise ValueError(f"flash_sizes must be a non-empty 1-D sequence of non-negative byte counts, got {flash_sizes!r}")
    return fs.astype(np.int64), (fs // bin_bytes).astype(np.int64)


def _count_below(values, weights, ks):
    """For each k: sum of ``weights`` where ``values < k`` (``values`` non-negative integers, such as
    ranks; integer ``weights``). A histogram of ``min(values, max(ks))`` and its prefix sums: O(n)."""
    ks = np.asarray(ks, dtype=np.int64)
    top = int(ks.max()) if ks.size else 0
    v = np.minimum(values, top)  # a value >= max(ks) is below no k
    cnt = np.bincount(v, weights=np.asarray(weights, dtype=np.float64), minlength=top + 1)
    cw = np.concatenate([[0.0], np.cumsum(cnt)])  # integer sums < 2^53: exact in float64
    return np.rint(cw[ks]).astype(np.int64)


def _count_between(lo, hi, ks):
    """For each k: number of pairs with ``lo < k <= hi``."""
    hi = np.maximum(hi, lo)
    ones = np.ones(lo.size, dtype=np.int64)
    return _count_below(lo, ones, ks) - _count_below(hi, ones, ks)


def _dataset(bt, params, fs, caps, *, hit_r, hit_w, miss_r, miss_w, hits, move_ins, move_outs, dirty, policy,
             cost_model):
    n_io = params.ios_per_bin
    ds = xr.Dataset(
        {
            "hits": ("flash_size", hits),
            "requests": ("flash_size", np.full(fs.size, bt.req_epoch.size, dtype=np.int64)),
            "ssd_reads": ("flash_size", hit_r), "ssd_writes": ("flash_size", hit_w),
            "md_reads": ("flash_size", miss_r), "md_writes": ("flash_size", miss_w),
            "move_ins": ("flash_size", move_ins), "move_outs": ("flash_size", move_outs),
            "dirty_move_outs": ("flash_size", dirty),
            "update_md_reads": ("flash_size", n_io * move_ins), "update_ssd_writes": ("flash_size", n_io * move_ins),
            "update_ssd_reads": ("flash_size", n_io * dirty), "update_md_writes": ("flash_size", n_io * dirty),
        },
        coords={"flash_size": fs, "capacity_bins": ("flash_size", caps)},
        attrs={"policy": policy, "bin_bytes": params.bin_bytes, "epoch_s": params.epoch_s,
               "n_epochs_history": params.n_epochs, "io_op_bytes": params.user_io_bytes},
    )
    ds["hit_ratio"] = ds["hits"] / ds["requests"]
    ds["io_cost"] = io_cost(ds, cost_model)
    ds["flash_size"].attrs["units"] = "bytes"
    ds["io_cost"].attrs["units"] = "s"
    for v in ("ssd_reads", "ssd_writes", "md_reads", "md_writes"):
        ds[v].attrs["units"] = f"{params.user_io_bytes}-byte user IOs (Table 2(a))"
    return ds


# ------------------------------------------------------------------------------------ single-VM vFRM


def vfrm_ranks(bt: BinTrace, idle_bins: str = "recency", kmax: int | None = None):
    """Rank of the bins at every epoch: 0 = hottest. Returns ``(keys, ranks)``, ``keys = epoch * n_bins
    + bin`` sorted; a flash of ``k <= kmax`` bins holds, during epoch ``i``, the bins with rank ``< k``
    at ``i`` (vFRM paper Sec. 4.4.2: "the most popular blocks ... placed in the Flash tier based on the
    available capacity"); a bin missing at ``i`` is not in any such flash.

    Every bin with ``T_i > 0`` is listed, by ``T_i`` descending, ties by bin id (choice 4). With
    ``idle_bins="recency"`` (choice 3) the idle bins of epoch ``i`` (``T_i = 0``, accessed before)
    follow, ranked from ``n_pos_i`` (the number of bins with ``T_i > 0``) by epoch of last access
    descending, then bin id; only those with rank ``< kmax`` are listed (default ``kmax = n_bins``:
    all), so the output has at most ``n_epochs x kmax`` idle entries. With ``"disk"`` idle bins are
    not ranked."""
    _check_idle_bins(idle_bins)
    nb = bt.n_bins
    e = bt.elig_key // nb
    b = bt.elig_key % nb
    order = np.lexsort((b, -bt.elig_temp, e))
    pos = np.empty(order.size, dtype=np.int64)
    pos[order] = np.arange(order.size)
    keys, ranks = bt.elig_key, pos - bt.elig_ptr[e]
    if idle_bins == "disk":
        return keys, ranks
    kmax = nb if kmax is None else min(int(kmax), nb)
    ik, ir = _idle_ranks(bt, kmax)
    keys = np.concatenate([keys, ik])
    srt = np.argsort(keys, kind="stable")
    return keys[srt], np.concatenate([ranks, ir])[srt]


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


def vfrm(ds: xr.Dataset, flash_sizes, params: VfrmParams = VfrmParams(), *, start=None,
         cost_model: CostModel = VFRM_COST, bt: BinTrace | None = None) -> xr.Dataset:
    """vFRM on one trace for every flash size in ``flash_sizes`` (bytes; capacity = whole bins) in one pass.

    Returns an ``xarray.Dataset`` over ``flash_size`` with ``hits``, ``requests``, ``hit_ratio``, the
    Table 2(a) user-IO counts ``ssd_reads``/``ssd_writes`` (hits) and ``md_reads``/``md_writes``
    (misses, no admission) in 128 KB operations, ``move_ins``, ``move_outs``, ``dirty_move_outs``, the
    Table 2(b) migration counts ``update_*`` (8 x 128 KB per bin), and ``io_cost`` (Eq. 4, seconds,
    :data:`tieringlab.policies.iocost.VFRM_COST`). Requests of all VMs of ``ds`` (if it has ``vm``) are
    ranked together, one global ranking (vFRM Sec. 4.4.1 step 2: "in the scope of all VMDK files").
    ``params.idle_bins`` decides whether idle bins (``T_i = 0``) fill the room left in Flash (choice 3).
    """
    if bt is None:
        bt = bin_trace(ds, params, start=start)
    fs, caps = _capacities(flash_sizes, params.bin_bytes)
    ks = np.minimum(caps, bt.n_bins)  # a flash larger than all bins holds them all: counts as n_bins
    # idle bins are ranked only up to the largest flash of the call (choice 3); a missing rank = not placed
    keys, ranks = vfrm_ranks(bt, params.idle_bins, kmax=int(ks.max()))
    inf = bt.n_bins + 1  # rank of a bin that is not placed at all

    def rank_of(epoch, b):
        return _lookup(keys, ranks, epoch * bt.n_bins + b, inf, valid=(epoch >= 0) & (epoch < bt.n_epochs))

    # hits: request q hits in a flash of k bins iff max rank of its bins at its epoch < k (Sec. 5.1)
    pair_rank = rank_of(bt.pair_epoch, bt.pair_bin)
    req_rank = np.maximum.reduceat(pair_rank[bt.unit_pair], bt.req_start)
    w = bt.req_write
    ops = bt.req_ops
    hit_r = _count_below(req_rank[~w], ops[~w], ks)
    hit_w = _count_below(req_rank[w], ops[w], ks)
    hits = _count_below(req_rank, np.ones(req_rank.size, dtype=np.int64), ks)
    miss_r = ops[~w].sum() - hit_r
    miss_w = ops[w].sum() - hit_w

    e = keys // bt.n_bins
    b = keys % bt.n_bins
    # move-ins at the start of epoch e: rank_e < k <= rank_{e-1}
    move_ins = _count_between(ranks, rank_of(e - 1, b), ks)
    # move-outs at the start of epoch e+1 (e+1 inside the trace; no flush at its end): rank_e < k <= rank_{e+1}
    inside = e + 1 < bt.n_epochs
    nxt = rank_of(e[inside] + 1, b[inside])
    move_outs = _count_between(ranks[inside], nxt, ks)
    # dirty: written while resident. For the latest write epoch w <= e of the bin, it stayed in a flash of
    # k bins over [w, e] iff k > max(rank_w .. rank_e) =: Mx (missing epochs have rank inf).
    mx = _max_rank_since_write(bt, keys, ranks, inf)
    dirty = _count_between(mx[inside], nxt, ks)
    return _dataset(bt, params, fs, caps, hit_r=hit_r, hit_w=hit_w, miss_r=miss_r, miss_w=miss_w, hits=hits,
                    move_ins=move_ins, move_outs=move_outs, dirty=dirty, policy="vFRM", cost_model=cost_model)


def _max_rank_since_write(bt, keys, ranks, inf):
    """For every placed (epoch e, bin b): max rank of b over [w, e], w = its latest write epoch <= e
    (inf without such a write or with an epoch in between where b is not placed). A segmented running
    max over the union of placed and accessed (epoch, bin) pairs sorted by (bin, epoch)."""
    nb, ne = bt.n_bins, bt.n_epochs
    # placed keys and accessed pairs as (bin, epoch) keys, one stable sort; a placed pair that is also
    # accessed appears twice (placed copy first): merged into one entry (its rank, the pair's write flag)
    bk = np.concatenate([(keys % nb) * ne + keys // nb, bt.pair_bin * ne + bt.pair_epoch])
    order = np.argsort(bk, kind="stable")
    bk = bk[order]
    r_all = np.concatenate([ranks, np.full(bt.pair_bin.size, inf, dtype=np.int64)])[order]
    w_all = np.concatenate([np.zeros(keys.size, dtype=bool), bt.pair_wrote])[order]
    uniq = np.ones(bk.size, dtype=bool)
    uniq[1:] = bk[1:] != bk[:-1]
    w_all[:-1] |= ~uniq[1:] & w_all[1:]
    k2, r, wrote = bk[uniq], r_all[uniq], w_all[uniq]
    ep, bn = k2 % ne, k2 // ne
    first = np.ones(k2.size, dtype=bool)
    first[1:] = bn[1:] != bn[:-1]
    gap = np.ones(k2.size, dtype=bool)
    gap[1:] = first[1:] | (ep[1:] - ep[:-1] > 1)
    v = np.where(gap & ~wrote, inf, r)
    seg = np.cumsum(wrote | first)
    big = inf + 1
    mx = np.maximum.accumulate(seg * big + v) - seg * big
    # back to the order of the placed keys: sorted position of each placed copy -> its merged entry
    pos = np.empty(order.size, dtype=np.int64)
    pos[order] = np.arange(order.size)
    return mx[np.cumsum(uniq)[pos[:keys.size]] - 1]


def _lookup(keys, values, query, missing, valid=True):
    """``values[i]`` where ``keys[i] == query`` (``keys`` sorted), else ``missing``."""
    query = np.asarray(query)
    if keys.size == 0:
        return np.full(query.shape, missing, dtype=np.int64)
    i = np.minimum(np.searchsorted(keys, query), keys.size - 1)
    return np.where(valid & (keys[i] == query), values[i], missing)


# ------------------------------------------------------------------------------------ global versions


def _top(bins, score, j):
    """The ``j`` bins of ``bins`` with the highest ``score`` (ties: smaller bin id first)."""
    if j <= 0 or bins.size == 0:
        return bins[:0]
    return bins[np.lexsort((bins, -score[bins]))[:j]]


def _bottom(bins, score, j):
    """The ``j`` bins of ``bins`` with the lowest popularity (reverse of :func:`_top`'s order)."""
    if j <= 0 or bins.size == 0:
        return bins[:0]
    return bins[np.lexsort((bins, -score[bins]))[::-1][:j]]


def _zone_sizes(cap, n_vm, private_fraction):
    """(private bins per VM, public bins): ``P = floor(private_fraction * cap)`` split equally, the
    remainder of ``P / n`` goes to the public zone (a documented choice: no slot is lost)."""
    p = int(np.floor(private_fraction * cap))
    per_vm = p // n_vm
    return per_vm, cap - per_vm * n_vm


def _epoch_views(bt):
    temp = np.zeros(bt.n_bins)

    def temps(e):
        temp[:] = 0.0
        lo, hi = bt.elig_ptr[e], bt.elig_ptr[e + 1]
        temp[bt.elig_key[lo:hi] % bt.n_bins] = bt.elig_temp[lo:hi]
        return temp

    def accessed(e):
        if e < 0:
            return bt.pair_bin[:0], bt.pair_count[:0]
        lo, hi = bt.pair_ptr[e], bt.pair_ptr[e + 1]
        return bt.pair_bin[lo:hi], bt.pair_count[lo:hi]

    return temps, accessed


def g1_placements(bt: BinTrace, cap: int, gparams: GvfrmParams = GvfrmParams()):
    """G1-vFRM / GLB-vFRM (vFRM paper Alg. 1; thesis Alg. 1): the bins in Flash during each epoch.

    At the start of epoch ``i``: ``popBin[v]`` = bins of VM ``v`` accessed in epoch ``i-1``; IO
    popularity = temperature ``T_i`` (Eq. 1). ``len(prvBin[v])`` and ``len(pubBin)`` in Alg. 1 are read
    as the zones' pre-allocated sizes (Sec. 4.5: "the equal portion of Flash that is pre-allocated"),
    with empty slots as the least popular entries: read as the current contents, an empty private
    zone would stay empty forever (line 20-21 with ``j = 0``). So line 14/35 evict real bins only as
    far as the incoming bins do not fit into free slots. ``evictBin`` and ``extraBin`` are rebuilt at
    every epoch. Returns a list of sorted bin-id arrays, one per epoch.
    """
    n_vm = bt.vms.size
    p_vm, q = _zone_sizes(cap, n_vm, gparams.private_fraction)
    temps, accessed = _epoch_views(bt)
    prv = [np.zeros(0, np.int64) for _ in range(n_vm)]
    pub = np.zeros(0, np.int64)
    out = []
    for e in range(bt.n_epochs):
        tmp = temps(e)
        pb, _ = accessed(e - 1)
        pvm = bt.bin_vm[pb]
        evict, extra = [], []
        for v in range(n_vm):                                  # UpdatePrivateZone, lines 8-23
            pop = pb[pvm == v]
            pop_diff = np.setdiff1d(pop, prv[v])               # line 10
            prv_diff = np.setdiff1d(prv[v], pop)               # line 11
            if pop.size < p_vm:                                # line 12
                need = max(0, prv[v].size + pop_diff.size - p_vm)
                item_l = _bottom(prv[v], tmp, need)            # line 13-14 (free slots go first)
                evict.append(item_l)                           # line 15
                prv[v] = np.union1d(np.setdiff1d(prv[v], item_l), pop_diff)  # lines 16-17
            else:
                evict.append(prv_diff)                         # line 19
                new = _top(pop, tmp, p_vm)                     # lines 20-21
                extra.append(np.setdiff1d(pop, new))           # line 22
                prv[v] = np.sort(new)
        evict = np.concatenate(evict) if evict else np.zeros(0, np.int64)
        extra = np.concatenate(extra) if extra else np.zeros(0, np.int64)
        if extra.size >= q:                                    # UpdatePublicZone, lines 25-27
            pub = np.sort(_top(extra, tmp, q))
        elif extra.size + evict.size >= q:                     # lines 28-31
            pub = np.union1d(extra, _top(evict, tmp, q - extra.size))
        else:                                                  # lines 33-36
            need = max(0, pub.size + extra.size + evict.size - q)
            item_l = _bottom(pub, tmp, need)
            pub = np.union1d(np.setdiff1d(pub, item_l), np.union1d(extra, evict))
        flash = pub
        for v in range(n_vm):                                  # lines 4-6 (set union)
            flash = np.union1d(flash, prv[v])
        out.append(flash)
    return out


def g2_placements(bt: BinTrace, cap: int, gparams: GvfrmParams = GvfrmParams()):
    """G2-vFRM (thesis Alg. 2): the bins in Flash during each epoch.

    At the start of epoch ``i``: ``binFreq`` = the aged counters after epoch ``i-1``
    (:func:`~tieringlab.models.temperature.aged_counters` with ``gparams.aging_period``; its keys are
    the bins with a non-zero counter), ``popBin`` = bins of all VMs accessed in epoch ``i-1``, IO
    popularity (public zone) = temperature ``T_i`` (Eq. 1, recency-weighted). Zone sizes as in
    :func:`g1_placements` (``len(prvBin)`` = ``P``, ``len(pubBin)`` = ``Q``, ``len(flashBin)`` = ``P + Q``).
    Line 12 reads "evictBin = bins of prvBin which are also in itemH"; we take the bins of ``prvBin``
    **not** in ``itemH`` (the ones leaving the private zone, which the text says the public zone takes
    in: "as well as the data just evicted from the private zone"). In the branch ``len(binFreq) <= P``
    the public zone is left as it is (Alg. 2 has no else). Returns a list of sorted bin arrays.
    """
    p, q = _zone_sizes(cap, 1, gparams.private_fraction)
    temps, accessed = _epoch_views(bt)
    freq = np.zeros(bt.n_bins, dtype=np.int64)
    prv = np.zeros(0, np.int64)
    pub = np.zeros(0, np.int64)
    out = []
    period = int(gparams.aging_period)
    for e in range(bt.n_epochs):
        tmp = temps(e)
        pop, cnt = accessed(e - 1)
        if e >= 1:                                  # F_{e-1} = (F_{e-2} >> 1 if aged) + M_{e-1}
            if e - 1 > 0 and (e - 1) % period == 0:
                freq >>= 1
            freq[pop] += cnt
        keys = np.flatnonzero(freq)
        evict = np.zeros(0, np.int64)
        if keys.size <= p:                          # UpdatePrivateZone, lines 7-8
            prv = keys
        else:                                       # lines 10-13
            item_h = np.sort(_top(keys, freq, p))
            evict = np.setdiff1d(prv, item_h)
            prv = item_h
        if p < keys.size <= p + q:                  # UpdatePublicZone, lines 16-17
            pub = np.setdiff1d(keys, prv)
        elif keys.size > p + q:                     # lines 18-29
            pub = np.setdiff1d(pub, prv)
            popr = np.setdiff1d(pop, prv)
            if popr.size >= q:
                pub = np.sort(_top(popr, tmp, q))
            else:
                pub = np.setdiff1d(np.union1d(pub, evict), popr)
                pub = np.union1d(_top(pub, tmp, q - popr.size), popr)
        out.append(np.union1d(prv, pub))
    return out


def replay(bt: BinTrace, placements) -> dict:
    """Replay the trace against per-epoch Flash contents (a list of bin arrays, one per epoch): hit
    iff all bins of the request are in Flash (Sec. 5.1); move-ins, move-outs and dirty move-outs at
    every boundary inside the trace (choices 5 of the module docstring). Array work per epoch."""
    if len(placements) != bt.n_epochs:
        raise ValueError(f"placements must have one bin array per epoch ({bt.n_epochs}), got {len(placements)}")
    in_pair = np.zeros(bt.pair_bin.size, dtype=bool)
    resident = np.zeros(bt.n_bins, dtype=bool)
    dirty = np.zeros(bt.n_bins, dtype=bool)
    move_ins = move_outs = dirty_outs = 0
    for e, flash in enumerate(placements):
        flash = np.asarray(flash, dtype=np.int64)
        new = np.zeros(bt.n_bins, dtype=bool)
        new[flash] = True
        moved_out = resident & ~new
        move_ins += int((new & ~resident).sum())
        move_outs += int(moved_out.sum())
        dirty_outs += int((moved_out & dirty).sum())
        dirty &= new
        resident = new
        lo, hi = bt.pair_ptr[e], bt.pair_ptr[e + 1]
        pin = resident[bt.pair_bin[lo:hi]]
        in_pair[lo:hi] = pin
        dirty[bt.pair_bin[lo:hi][pin & bt.pair_wrote[lo:hi]]] = True
    hit = np.minimum.reduceat(in_pair[bt.unit_pair].astype(np.int8), bt.req_start).astype(bool)
    return {"hit": hit, "move_ins": move_ins, "move_outs": move_outs, "dirty_move_outs": dirty_outs}


def _global(policy, placer, ds, flash_sizes, params, gparams, vm, start, lam, cost_model, bt):
    if bt is None:
        bt = bin_trace(ds, params, vm=vm, start=start, lam=lam)
    fs, caps = _capacities(flash_sizes, params.bin_bytes)
    cols = {k: np.zeros(fs.size, dtype=np.int64) for k in
            ("hits", "hit_r", "hit_w", "move_ins", "move_outs", "dirty")}
    w, ops = bt.req_write, bt.req_ops
    for i, cap in enumerate(caps):
        r = replay(bt, placer(bt, int(cap), gparams))
        cols["hits"][i] = r["hit"].sum()
        cols["hit_r"][i] = ops[r["hit"] & ~w].sum()
        cols["hit_w"][i] = ops[r["hit"] & w].sum()
        cols["move_ins"][i], cols["move_outs"][i], cols["dirty"][i] = (
            r["move_ins"], r["move_outs"], r["dirty_move_outs"])
    ds_out = _dataset(bt, params, fs, caps, hit_r=cols["hit_r"], hit_w=cols["hit_w"],
                      miss_r=ops[~w].sum() - cols["hit_r"], miss_w=ops[w].sum() - cols["hit_w"],
                      hits=cols["hits"], move_ins=cols["move_ins"], move_outs=cols["move_outs"],
                      dirty=cols["dirty"], policy=policy, cost_model=cost_model)
    ds_out.attrs["private_fraction"] = gparams.private_fraction
    return ds_out


def g1_vfrm(ds: xr.Dataset, flash_sizes, params: VfrmParams = VfrmParams(),
            gparams: GvfrmParams = GvfrmParams(), *, vm=None, start=None, lam=None,
            cost_model: CostModel = VFRM_COST, bt: BinTrace | None = None) -> xr.Dataset:
    """GLB-vFRM / G1-vFRM (vFRM paper Alg. 1) over a multi-VM trace (``vm`` per request, timestamps
    aligned to one start), for every flash size; same outputs as :func:`vfrm`. See :func:`g1_placements`."""
    return _global("G1-vFRM", g1_placements, ds, flash_sizes, params, gparams, vm, start, lam, cost_model, bt)


def g2_vfrm(ds: xr.Dataset, flash_sizes, params: VfrmParams = VfrmParams(),
            gparams: GvfrmParams = GvfrmParams(), *, vm=None, start=None, lam=None,
            cost_model: CostModel = VFRM_COST, bt: BinTrace | None = None) -> xr.Dataset:
    """G2-vFRM (thesis Alg. 2) over a multi-VM trace, for every flash size; same outputs as
    :func:`vfrm`. See :func:`g2_placements`."""
    return _global("G2-vFRM", g2_placements, ds, flash_sizes, params, gparams, vm, start, lam, cost_model, bt)
