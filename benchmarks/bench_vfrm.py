"""vFRM's passes over the placed (epoch, bin) keys (issue 35): the compiled passes against the NumPy formulation
they replaced, on the same twin in one run.

Trace: the usr_2 twin (the largest single-VM trace of notebook 02) at scale ``SCALE`` (``QUICK_SCALE`` with
``quick``), seed 0. Timed (best of ``REPEATS``; one small warm-up call first, so numba compilation is excluded):

- ``vfrm(ds, [4 GiB x scale], VfrmParams(epoch_s))`` at 300 s and 60 s epochs (notebook 02's Fig. 7 size and the
  shortest epoch of its Sec. 5.1 sweep), ours;
- the same calls with the three passes swapped for the NumPy formulation of the code before (kept below as the
  peer): the dirty tracking as a stable sort of the placed keys and the access pairs by (bin, epoch) and a
  segmented running max, the rank lookups as ``np.searchsorted`` per query, the idle entries added by a stable
  argsort of every key. Every count of the result is asserted identical; ``ratio_vs_numpy_<epoch>`` = peer / ours.

Peak memory is not measured here (one process runs both); notebook 02's log records the stage's.
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager

import numpy as np

from benchmarks import best_of
from tieringlab.policies import vfrm
from tieringlab.traces.twins import msr_twin
from tieringlab.units import GiB

GOAL = "≥ 1× the NumPy formulation, identical counts"  # the README's goal column (benchmarks/readme.py)

SCALE = 0.25
QUICK_SCALE = 0.01
REPEATS = 3
EPOCHS_S = (300.0, 60.0)
COUNTS = ("hits", "ssd_reads", "ssd_writes", "md_reads", "md_writes", "move_ins", "move_outs", "dirty_move_outs",
          "dirty_at_end")


def _since_write_numpy(bt, keys, ranks, inf):
    """The dirty tracking as a sort and a segmented scan (the formulation before the compiled pass)."""
    nb, ne = bt.n_bins, bt.n_epochs
    bk = np.concatenate([(keys % nb) * ne + keys // nb, bt.pair_bin * ne + bt.pair_epoch])
    order = np.argsort(bk, kind="stable")
    bk = bk[order]
    uniq = np.ones(bk.size, dtype=bool)
    uniq[1:] = bk[1:] != bk[:-1]
    k2 = bk[uniq]
    r = np.concatenate([ranks, np.full(bt.pair_bin.size, inf, dtype=np.int64)])[order][uniq]
    w_all = np.concatenate([np.zeros(keys.size, dtype=bool), bt.pair_wrote])[order]
    w_all[:-1] |= ~uniq[1:] & w_all[1:]
    wrote = w_all[uniq]
    ep, b = k2 % ne, k2 // ne
    first = np.ones(b.size, dtype=bool)
    first[1:] = b[1:] != b[:-1]
    gap = np.ones(ep.size, dtype=bool)
    gap[1:] = first[1:] | (ep[1:] - ep[:-1] > 1)
    r[gap & ~wrote] = inf
    seg = np.cumsum(first | wrote) * (inf + 1)
    r = np.maximum.accumulate(r + seg) - seg
    pos = np.empty(order.size, dtype=np.int64)
    pos[order] = np.arange(order.size)
    return r[np.cumsum(uniq)[pos[:keys.size]] - 1]


def _lookup_numpy(keys, values, query, missing, valid=True):
    """A binary search per query."""
    query = np.asarray(query)
    if keys.size == 0:
        return np.full(query.shape, missing, dtype=np.int64)
    i = np.minimum(np.searchsorted(keys, query), keys.size - 1)
    out = values[i]
    out[~((keys[i] == query) & valid)] = missing
    return out


def _merge_numpy(keys, values, ik, iv):
    """A stable argsort of every key."""
    k = np.concatenate([keys, ik])
    srt = np.argsort(k, kind="stable")
    return k[srt], np.concatenate([values, iv])[srt]


@contextmanager
def _numpy_passes():
    saved = vfrm._max_rank_since_write, vfrm._lookup, vfrm._merge_sorted
    vfrm._max_rank_since_write, vfrm._lookup, vfrm._merge_sorted = _since_write_numpy, _lookup_numpy, _merge_numpy
    try:
        yield
    finally:
        vfrm._max_rank_since_write, vfrm._lookup, vfrm._merge_sorted = saved


def run(quick: bool = False) -> dict:
    scale = QUICK_SCALE if quick else SCALE
    ds = msr_twin("usr_2", scale, seed=0)
    size = [int(4 * GiB * scale)]
    out = {"trace": "usr_2 twin", "scale": scale, "requests": int(ds.sizes["request"])}
    vfrm.vfrm(ds.isel(request=slice(0, 2000)), size)  # compile
    for e in EPOCHS_S:
        p = dataclasses.replace(vfrm.VfrmParams(), epoch_s=e)
        t_ours, ours = best_of(lambda p=p: vfrm.vfrm(ds, size, p), REPEATS)
        with _numpy_passes():
            t_np, ref = best_of(lambda p=p: vfrm.vfrm(ds, size, p), REPEATS)
        for k in COUNTS:
            if not np.array_equal(ours[k].values, ref[k].values):
                raise AssertionError(f"vFRM at {e:g} s epochs: {k} differs between the passes and the NumPy peer")
        tag = f"{int(e)}s"
        out.update({f"ours_s_{tag}": round(t_ours, 3), f"numpy_s_{tag}": round(t_np, 3),
                    f"ratio_vs_numpy_{tag}": t_np / t_ours})
    return out
