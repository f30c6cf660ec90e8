"""The replaced engine (the benchmarks' "before"; the systems run :mod:`.sim`).

OTF-AST's decisions and move engine: one ``jax.lax.scan`` over the monitoring intervals (Fig. 4-5,
Sec. 3.3, 3.3.2; notes Sec. 1.4).

Per interval, the engine runs through its seconds: a copy progresses at the share of disk time user IO leaves
free in each second (``max(1 - u, copy_share_floor)`` of the no-load pace, ``u`` the HDD utilisation the user IO
routed to the HDD would cause: a fluid estimate, :func:`hdd_only_work`); the buffer fills with the writes that
arrive meanwhile (per-second write counts weighted by the overlap of each second with the copy); the sync lasts
``writes / sync_max_iops``. Then the decision at the interval's end queues demotions and promotions
(:func:`controller`).
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from tieringlab.models import storage
from tieringlab.models.storage import HDD, SSD, Testbed

__all__ = ["controller", "hdd_only_work"]

_IDLE, _QUEUED, _COPY, _SYNC, _DONE = 0, 1, 2, 3, 4


@partial(jax.jit, static_argnames=("t_s", "n_moves_max", "conc", "history", "evict"))
def controller(hot, hsum, cnt, work, writes, cap, c, o, copy_up_s, copy_down_s, floor, sync_iops, skip_down,
                *, t_s, n_moves_max, conc, history, evict):
    """The interval scan (module docstring, step 2). Per interval ``k``: the engine runs through its
    seconds (copies advance at the disk time user IO leaves free), then the decision at its end queues
    demotions and promotions. Returns the move log and per-interval state counts.

    State: per sub-LUN ``tier`` (where the tiering table points), ``busy`` (a move is queued or running),
    ``streak`` and ``tmo``; the move log (``n_moves_max`` rows: sub-LUN, direction, queue/start/copy-end/
    sync-end times, work, buffered writes; rows are written at queue, start and end); the FIFO ``head``;
    and ``conc`` engine slots holding the running moves (so an event costs O(conc), not O(log)).
    """
    K, S = hot.shape
    M = n_moves_max
    inf = jnp.inf
    log0 = dict(sub=jnp.full(M, S, jnp.int32), up=jnp.zeros(M, bool), tq=jnp.full(M, inf), ts=jnp.full(M, inf),
                tc=jnp.full(M, inf), te=jnp.full(M, inf), w0=jnp.zeros(M), nbw=jnp.zeros(M), rem=jnp.zeros(M))
    slot0 = dict(mv=jnp.full(conc, M, jnp.int32), sub=jnp.full(conc, S, jnp.int32), up=jnp.zeros(conc, bool),
                 phase=jnp.zeros(conc, jnp.int32), rem=jnp.zeros(conc), nbw=jnp.zeros(conc),
                 ts=jnp.full(conc, inf), tc=jnp.full(conc, inf), te=jnp.full(conc, inf))
    st0 = dict(tier=jnp.zeros(S, jnp.int32), busy=jnp.zeros(S, bool), streak=jnp.zeros(S, jnp.int32),
               tmo=jnp.zeros(S, jnp.int32), n=jnp.int32(0), head=jnp.int32(0), pending_up=jnp.int32(0),
               log=log0, slot=slot0)

    def second(j, carry):
        st, k = carry
        x0 = (k * t_s + j).astype(jnp.float64)
        w_sec = work[k * t_s + j]
        wr_sec = writes[k * t_s + j]
        f = jnp.maximum(1.0 - jnp.sum(jnp.where(st["tier"] == HDD, w_sec, 0.0)), floor)

        def body(c_):
            st_, x = c_
            lg, sl = st_["log"], st_["slot"]
            # start the head of the queue in a free slot (a promotion needs an SSD slot too)
            free = sl["phase"] == _IDLE
            h = st_["head"]
            hs = jnp.minimum(h, M - 1)
            occupancy = jnp.sum(st_["tier"] == SSD) + jnp.sum(sl["up"] & ~free)
            can = (h < st_["n"]) & free.any() & (~lg["up"][hs] | (occupancy < cap))
            q = jnp.argmax(free)
            put = lambda a, v: a.at[q].set(jnp.where(can, v, a[q]))  # noqa: E731
            sl = dict(sl, mv=put(sl["mv"], hs), sub=put(sl["sub"], lg["sub"][hs]), up=put(sl["up"], lg["up"][hs]),
                      phase=put(sl["phase"], _COPY), rem=put(sl["rem"], lg["w0"][hs]), nbw=put(sl["nbw"], 0.0),
                      ts=put(sl["ts"], x))
            lg = dict(lg, ts=lg["ts"].at[jnp.where(can, hs, M)].set(x, mode="drop"))
            # advance to the next event: a copy ends, a sync ends, or the second ends
            copying = sl["phase"] == _COPY
            rate = f / jnp.maximum(jnp.sum(copying), 1)
            t_copy = jnp.where(copying, x + sl["rem"] / rate, inf)
            t_sync = jnp.where(sl["phase"] == _SYNC, sl["te"], inf)
            e = jnp.where(can, x, jnp.minimum(jnp.minimum(t_copy.min(), t_sync.min()), x0 + 1.0))
            dt = e - x
            rem = jnp.where(copying, jnp.maximum(sl["rem"] - rate * dt, 0.0), sl["rem"])
            nbw = jnp.where(copying, sl["nbw"] + wr_sec[jnp.minimum(sl["sub"], S - 1)] * dt, sl["nbw"])
            fin_copy = copying & (t_copy <= e)
            te = jnp.where(fin_copy, e + nbw / sync_iops, sl["te"])
            tc = jnp.where(fin_copy, e, sl["tc"])
            phase = jnp.where(fin_copy, _SYNC, sl["phase"])
            fin = (phase == _SYNC) & (te <= e)
            # a finished move: log it, flip the tiering table, free the slot
            mv = jnp.where(fin, sl["mv"], M)
            lg = dict(lg, tc=lg["tc"].at[jnp.where(fin_copy, sl["mv"], M)].set(tc, mode="drop"),
                      te=lg["te"].at[mv].set(te, mode="drop"), nbw=lg["nbw"].at[mv].set(nbw, mode="drop"))
            subs = jnp.where(fin, sl["sub"], S)
            st_ = dict(st_, head=h + can.astype(jnp.int32), log=lg,
                       tier=st_["tier"].at[subs].set(jnp.where(sl["up"], SSD, HDD), mode="drop"),
                       busy=st_["busy"].at[subs].set(False, mode="drop"),
                       tmo=st_["tmo"].at[subs].set(0, mode="drop"),
                       streak=st_["streak"].at[subs].set(0, mode="drop"),
                       pending_up=st_["pending_up"] - jnp.sum(fin & sl["up"]).astype(jnp.int32))
            sl = dict(sl, rem=rem, nbw=nbw, te=jnp.where(fin, inf, te), tc=jnp.where(fin, inf, tc),
                      phase=jnp.where(fin, _IDLE, phase), up=jnp.where(fin, False, sl["up"]),
                      mv=jnp.where(fin, M, sl["mv"]), sub=jnp.where(fin, S, sl["sub"]))
            return dict(st_, slot=sl), e

        st, _ = jax.lax.while_loop(lambda c_: c_[1] < x0 + 1.0, body, (st, x0))
        return st, k

    def interval(st, k):
        st, _ = jax.lax.fori_loop(0, t_s, second, (st, k))
        # --- the decision at the end of interval k (notes Sec. 1.4)
        hk = hot[k]
        idle = ~st["busy"]
        on_hdd = idle & (st["tier"] == HDD)
        on_ssd = idle & (st["tier"] == SSD)
        streak = jnp.where(on_hdd, jnp.where(hk, st["streak"] + 1, 0), st["streak"])
        tmo = jnp.where(on_ssd, jnp.where(hk, 0, st["tmo"] + 1), st["tmo"])
        ready = (hsum[k] >= c) if history else (streak >= c)
        demote = on_ssd & (tmo >= o)
        cand = on_hdd & ready
        staying = jnp.sum(on_ssd & ~demote)
        slots = jnp.maximum(cap - staying - st["pending_up"], 0)
        n_cand = jnp.sum(cand)
        if evict:
            # f2: evict the residents not hot now with the largest timeout count, one per waiting candidate
            evictable = on_ssd & ~demote & (tmo >= 1)
            ev_key = jnp.where(evictable, -tmo, jnp.iinfo(jnp.int32).max)
            ev_rank = jnp.empty(S, jnp.int32).at[jnp.argsort(ev_key, stable=True)].set(jnp.arange(S, dtype=jnp.int32))
            n_ev = jnp.minimum(jnp.maximum(n_cand - slots, 0), jnp.sum(evictable))
            demote = demote | (evictable & (ev_rank < n_ev))
            slots = slots + n_ev
        # promotions: candidates by count, highest first (ties to the lower index), while there is room
        c_key = jnp.where(cand, -cnt[k], jnp.iinfo(cnt.dtype).max)
        c_rank = jnp.empty(S, jnp.int32).at[jnp.argsort(c_key, stable=True)].set(jnp.arange(S, dtype=jnp.int32))
        promote = cand & (c_rank < slots)
        # queue: demotions (by sub-LUN index) ahead of promotions (by count)
        n_dem = jnp.sum(demote).astype(jnp.int32)
        n_pro = jnp.sum(promote).astype(jnp.int32)
        d_rank = jnp.cumsum(demote) - 1
        pos = jnp.where(demote, st["n"] + d_rank, jnp.where(promote, st["n"] + n_dem + c_rank, M))
        pos = jnp.where(pos < M, pos, M)
        tq = ((k + 1) * t_s).astype(jnp.float64)
        work0 = jnp.where(promote, copy_up_s, jnp.where(skip_down, 0.0, copy_down_s))
        lg = st["log"]
        lg = dict(lg, sub=lg["sub"].at[pos].set(jnp.arange(S, dtype=jnp.int32), mode="drop"),
                  up=lg["up"].at[pos].set(promote, mode="drop"), tq=lg["tq"].at[pos].set(tq, mode="drop"),
                  w0=lg["w0"].at[pos].set(work0, mode="drop"))
        st = dict(st, streak=jnp.where(promote, 0, streak), tmo=tmo, busy=st["busy"] | demote | promote, log=lg,
                  n=jnp.minimum(st["n"] + n_dem + n_pro, M).astype(jnp.int32), pending_up=st["pending_up"] + n_pro)
        out = dict(resident=jnp.sum(st["tier"] == SSD), queued=st["n"] - st["head"],
                   moving=jnp.sum(st["slot"]["phase"] != _IDLE), n_hot=jnp.sum(hk), promoted=n_pro, demoted=n_dem)
        return st, out

    st, ys = jax.lax.scan(interval, st0, jnp.arange(K))
    # copies still running at the end: their remaining work (the IO level paces their chunks by it)
    # and the syncs still running (their planned end and buffered writes)
    sl, lg = st["slot"], st["log"]
    cp = jnp.where(sl["phase"] == _COPY, sl["mv"], M)
    sy = jnp.where(sl["phase"] == _SYNC, sl["mv"], M)
    lg = dict(lg, rem=lg["rem"].at[cp].set(sl["rem"], mode="drop"), te=lg["te"].at[sy].set(sl["te"], mode="drop"),
              nbw=lg["nbw"].at[sy].set(sl["nbw"], mode="drop"))
    return lg, st["n"], ys


def hdd_only_work(tb: Testbed, rq, key, n_sec: int, n_sub: int):
    """HDD disk time of each (second, sub-LUN) if every request went to the HDD, as a share of the array
    (disk-seconds / n_disks): the user load the copies compete with (fluid estimate, module docstring)."""
    h = tb.hdd
    j, d, o, b = storage.raid0_pieces(h, rq["offset"], rq["size"])
    rng = np.random.default_rng(np.asarray(jax.random.key_data(jax.random.split(key)[0])).ravel())
    u = rng.random((rq["time"].size, h.n_disks))[j, d] if j.size else np.zeros(0)
    svc, _ = storage.hdd_service_times(h, rq["time"][j], d, o, b, rq["is_write"][j], u)
    sec = np.minimum(rq["time"] // 1, n_sec - 1).astype(np.int64)
    cell = sec * n_sub + rq["sub"]
    W = np.bincount(cell[j], weights=svc / h.n_disks, minlength=n_sec * n_sub).reshape(n_sec, n_sub)
    # writes per (second, sub-LUN): the engine's estimate of what the buffer absorbs during a copy is
    # the writes of each second it overlaps, weighted by the overlap (exact in whole seconds)
    w = rq["is_write"]
    WR = np.bincount(cell[w], minlength=n_sec * n_sub).astype(np.float64).reshape(n_sec, n_sub)
    return W, WR
