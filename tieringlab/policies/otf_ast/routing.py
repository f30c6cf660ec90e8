"""The replaced engine (the benchmarks' "before"; the systems run :mod:`.sim`).

Routing every request by OTF-AST's move log, and the moves' background IO (Sec. 3.3, 3.3.2).

A request goes where the tiering table points when it arrives; while its sub-LUN copies, writes go to the
temporary buffer and reads of what they wrote are served from it (other reads from the source); after the copy
the buffer is synced to the destination at <= ``sync_max_iops``. The copies' kcopyd chunks join the same disk
queues as user IO. Searchsorted over the log; no loop over requests.
"""

from __future__ import annotations

import numpy as np

from tieringlab.models import storage
from tieringlab.models.storage import BUFFER, HDD, SSD
from tieringlab.policies.otf_ast.parameters import MeasureParams

__all__ = ["route_by_moves", "move_background"]


def route_by_moves(rq, log, n_moves, initial_ssd, p: MeasureParams):
    """Per request: the route (HDD / SSD / BUFFER), the move whose buffer window it falls in (-1: none),
    from the move log (searchsorted over (sub-LUN, start) keys; no loop over requests)."""
    sub, t, w = rq["sub"], rq["time"], rq["is_write"]
    n = t.size
    started = np.flatnonzero(np.isfinite(log["ts"][:n_moves]))
    ms, mt = log["sub"][started].astype(np.int64), log["ts"][started]
    o = np.lexsort((started, mt, ms))
    started, ms, mt = started[o], ms[o], mt[o]
    # the last move of the request's sub-LUN that started at or before it
    big = float(max(t.max() if n else 0.0, mt.max() if mt.size else 0.0)) + 2.0
    keys_m = ms * big + mt
    keys_r = sub * big + t
    pos = np.searchsorted(keys_m, keys_r, side="right") - 1
    has = (pos >= 0) & (ms[np.maximum(pos, 0)] == sub) if started.size else np.zeros(n, bool)
    mv = np.where(has, started[np.maximum(pos, 0)] if started.size else 0, -1)
    init = np.asarray(initial_ssd, bool)[sub]
    up = np.where(has, log["up"][np.maximum(mv, 0)], False)
    tc = np.where(has, log["tc"][np.maximum(mv, 0)], -np.inf)
    te = np.where(has, log["te"][np.maximum(mv, 0)], -np.inf)
    in_copy = has & (t < tc)
    in_sync = has & ~in_copy & (t < te)
    dest_ssd = np.where(has, up, init)
    src_ssd = np.where(has, ~up, init)
    window = np.where(in_copy | in_sync, mv, -1)
    buf_read = storage.buffer_read_hits(window, t, rq["offset"], rq["size"], w)
    route = np.where(dest_ssd, SSD, HDD)
    route = np.where(in_copy, np.where(src_ssd, SSD, HDD), route)
    route = np.where(in_copy & w, BUFFER, route)
    route = np.where(buf_read, BUFFER, route)
    return route.astype(np.int64), window


def move_background(rq, route, window, log, n_moves, p: MeasureParams):
    """Background IO of the moves: kcopyd chunks over each copy window (both sides) and the buffer sync
    (one write per distinct buffered extent, in address order, at sync_max_iops after the copy)."""
    tb = p.testbed
    L = float(rq["length_s"])
    idx = np.arange(n_moves)
    ts, tc = log["ts"][idx], log["tc"][idx]
    real = np.isfinite(ts) & (log["w0"][idx] > 0)
    mv = idx[real]
    # a copy still running at the end of the replay: chunks at the pace it had reached
    done_w = np.maximum(log["w0"][mv] - log["rem"][mv], 1e-9)
    end = np.where(np.isfinite(tc[mv]), tc[mv], ts[mv] + (L - ts[mv]) * log["w0"][mv] / done_w)
    cm, ct, co, cb, cw = storage.copy_jobs(tb, log["sub"][mv], ts[mv], end, log["up"][mv],
                                           unit_bytes=int(p.sublun_bytes))
    keep = ct < L
    cm, ct, co, cb, cw = cm[keep], ct[keep], co[keep], cb[keep], cw[keep]
    # sync: the buffered writes of each move, deduplicated by extent, in address order
    b = np.flatnonzero((route == BUFFER) & rq["is_write"] & (window >= 0))
    bw, bo, bs = window[b], rq["offset"][b], rq["size"][b]
    if b.size:
        o = np.lexsort((bs, bo, bw))
        bw, bo, bs = bw[o], bo[o], bs[o]
        keep = np.r_[True, (bw[1:] != bw[:-1]) | (bo[1:] != bo[:-1])]
        bw, bo, bs = bw[keep], bo[keep], bs[keep]
    first = np.searchsorted(bw, bw, side="left")
    k = np.arange(bw.size) - first
    st = log["tc"][bw] + k / tb.sync_max_iops
    ok = st < L
    bw, bo, bs, st = bw[ok], bo[ok], bs[ok], st[ok]
    up_b = log["up"][bw] if bw.size else np.zeros(0, bool)
    hdd = dict(time=np.r_[ct, st[~up_b]], offset=np.r_[co, bo[~up_b]], size=np.r_[cb, bs[~up_b]],
               is_write=np.r_[cw, np.ones((~up_b).sum(), bool)])
    ssd = dict(time=np.r_[ct, st[up_b]], size=np.r_[cb, bs[up_b]], is_write=np.r_[~cw, np.ones(up_b.sum(), bool)])
    sync_ios = np.bincount(bw, minlength=n_moves) if bw.size else np.zeros(n_moves, np.int64)
    return hdd, ssd, mv[cm] if cm.size else np.zeros(0, np.int64), sync_ios
