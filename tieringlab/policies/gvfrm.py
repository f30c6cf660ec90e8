"""GLB-vFRM (G1-vFRM) and G2-vFRM: vFRM's bins shared by several VMs through a private and a public zone.

- :func:`g1_vfrm` — GLB-vFRM / G1-vFRM (vFRM paper Alg. 1, Sec. 4.5; thesis Alg. 1, Sec. 4.3.2):
  a private zone split equally among VMs plus a public zone shared by popularity.
- :func:`g2_vfrm` — G2-vFRM (thesis Alg. 2, Sec. 4.3.2): the private zone holds the bins with the
  highest globally aged frequency counters (:func:`tieringlab.models.temperature.aged_counters`), the
  public zone the recently accessed bins.

Both share vFRM's bin/epoch layout and temperatures (:func:`tieringlab.policies.vfrm.binned`) and its
documented choices 1, 2, 5 and 6 (:mod:`tieringlab.policies.vfrm`). G1/G2 carry per-VM zone state from
epoch to epoch whose content depends on the flash size, so each flash size is its own pass: a Python
loop over the epochs with array (set) operations over bins inside; the replay of the requests against
the resulting placements (:func:`replay_placements`) is vectorized. Registered as "G1-vFRM" (alias
"GLB-vFRM") and "G2-vFRM" (the trace contract of :mod:`tieringlab.policies.contract`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from tieringlab.policies.registry import PolicySpec, register
from tieringlab.policies.vfrm import BinTrace, VfrmParams, bin_result, binned, capacity_bins

__all__ = ["GvfrmParams", "g1_vfrm", "g2_vfrm", "g1_placements", "g2_placements", "replay_placements"]


@dataclass(frozen=True)
class GvfrmParams(VfrmParams):
    """G1-vFRM / G2-vFRM parameters: vFRM's (bins, epochs, Eq. 1-3, cost model) and the zone split."""

    #: share of Flash in the private zone; "50% of Flash space is assigned to each of these two zones
    #: in our evaluation" (vFRM paper Sec. 5.3).
    private_fraction: float = 0.5
    #: G2-vFRM counter aging period in epochs (thesis Sec. 4.3.2 ages "periodically" without a period;
    #: one epoch, as in :func:`tieringlab.models.temperature.aged_counters`).
    aging_period: int = 1

    def __post_init__(self):
        super().__post_init__()
        if not 0.0 <= self.private_fraction <= 1.0:
            raise ValueError(f"private_fraction must be in [0, 1], got {self.private_fraction}")
        if int(self.aging_period) < 1:
            raise ValueError(f"aging_period must be a positive number of epochs, got {self.aging_period}")



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


def g1_placements(bt: BinTrace, cap: int, params: GvfrmParams = GvfrmParams()):
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
    p_vm, q = _zone_sizes(cap, n_vm, params.private_fraction)
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


def g2_placements(bt: BinTrace, cap: int, params: GvfrmParams = GvfrmParams()):
    """G2-vFRM (thesis Alg. 2): the bins in Flash during each epoch.

    At the start of epoch ``i``: ``binFreq`` = the aged counters after epoch ``i-1``
    (:func:`~tieringlab.models.temperature.aged_counters` with ``params.aging_period``; its keys are
    the bins with a non-zero counter), ``popBin`` = bins of all VMs accessed in epoch ``i-1``, IO
    popularity (public zone) = temperature ``T_i`` (Eq. 1, recency-weighted). Zone sizes as in
    :func:`g1_placements` (``len(prvBin)`` = ``P``, ``len(pubBin)`` = ``Q``, ``len(flashBin)`` = ``P + Q``).
    Line 12 reads "evictBin = bins of prvBin which are also in itemH"; we take the bins of ``prvBin``
    **not** in ``itemH`` (the ones leaving the private zone, which the text says the public zone takes
    in: "as well as the data just evicted from the private zone"). In the branch ``len(binFreq) <= P``
    the public zone is left as it is (Alg. 2 has no else). Returns a list of sorted bin arrays.
    """
    p, q = _zone_sizes(cap, 1, params.private_fraction)
    temps, accessed = _epoch_views(bt)
    freq = np.zeros(bt.n_bins, dtype=np.int64)
    prv = np.zeros(0, np.int64)
    pub = np.zeros(0, np.int64)
    out = []
    period = int(params.aging_period)
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


def replay_placements(bt: BinTrace, placements) -> dict:
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


def _global(policy, placer, ds, capacities, params, vm, start, lam):
    if not isinstance(params, GvfrmParams):
        raise TypeError(f"{policy} takes GvfrmParams; got {type(params).__name__}")
    bt = binned(ds, params, vm=vm, start=start, lam=lam)
    fs, caps = capacity_bins(capacities, params.bin_bytes)
    cols = {k: np.zeros(fs.size, dtype=np.int64) for k in
            ("hits", "hit_r", "hit_w", "move_ins", "move_outs", "dirty")}
    w, ops = bt.req_write, bt.req_ops
    for i, cap in enumerate(caps):  # zone state depends on the flash size: one pass per size
        r = replay_placements(bt, placer(bt, int(cap), params))
        cols["hits"][i] = r["hit"].sum()
        cols["hit_r"][i] = ops[r["hit"] & ~w].sum()
        cols["hit_w"][i] = ops[r["hit"] & w].sum()
        cols["move_ins"][i], cols["move_outs"][i], cols["dirty"][i] = (
            r["move_ins"], r["move_outs"], r["dirty_move_outs"])
    return bin_result(bt, params, fs, caps, hit_r=cols["hit_r"], hit_w=cols["hit_w"],
                      miss_r=ops[~w].sum() - cols["hit_r"], miss_w=ops[w].sum() - cols["hit_w"],
                      hits=cols["hits"], move_ins=cols["move_ins"], move_outs=cols["move_outs"],
                      dirty=cols["dirty"], policy=policy, source=_SOURCE[policy],
                      attrs={"private_fraction": params.private_fraction, "aging_period": params.aging_period})


def g1_vfrm(ds: xr.Dataset, capacities, params: GvfrmParams = GvfrmParams(), *, vm=None, start=None,
            lam=None) -> xr.Dataset:
    """GLB-vFRM / G1-vFRM (vFRM paper Alg. 1) over a multi-VM trace (``vm`` per request, or the trace's
    ``vm`` variable; timestamps aligned to one start), for every flash size in ``capacities`` (bytes):
    the trace contract, same outputs as :func:`tieringlab.policies.vfrm.vfrm`. See :func:`g1_placements`.
    ``lam``: λ per VM (sorted-label order) instead of ``params.lam``."""
    return _global("G1-vFRM", g1_placements, ds, capacities, params, vm, start, lam)


def g2_vfrm(ds: xr.Dataset, capacities, params: GvfrmParams = GvfrmParams(), *, vm=None, start=None,
            lam=None) -> xr.Dataset:
    """G2-vFRM (thesis Alg. 2) over a multi-VM trace, for every flash size: the trace contract, same
    outputs as :func:`tieringlab.policies.vfrm.vfrm`. See :func:`g2_placements`."""
    return _global("G2-vFRM", g2_placements, ds, capacities, params, vm, start, lam)


_SOURCE = {"G1-vFRM": "vFRM paper Alg. 1, Sec. 4.5 (GLB-vFRM); thesis Alg. 1, Sec. 4.3.2 (G1-vFRM)",
           "G2-vFRM": "thesis Alg. 2, Sec. 4.3.2 (G2-vFRM)"}
register(PolicySpec(name="G1-vFRM", kind="trace", fn=g1_vfrm, params_type=GvfrmParams, source=_SOURCE["G1-vFRM"],
                    aliases=("GLB-vFRM",), description="private zone per VM + public zone by popularity"))
register(PolicySpec(name="G2-vFRM", kind="trace", fn=g2_vfrm, params_type=GvfrmParams, source=_SOURCE["G2-vFRM"],
                    description="private zone by aged frequency + public zone by recency"))
