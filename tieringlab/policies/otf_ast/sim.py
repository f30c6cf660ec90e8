"""The closed-loop OTF-AST testbed: one compiled event simulation, in time order, of user IO, the controller's
moves (kcopyd copy chunks and the temporary buffer's sync) and open-loop background IO (FlashCache's cleaning and
fills) through the RAID0 with its read cache, per-disk FIFO or CFQ-like queues, the SSD and the buffer (Fig. 4-5,
Sec. 3.3, 3.3.2, Table 1; notes Sec. 1.5, 6.3).

Why an event simulation: a copy's chunks wait in the same disk queues as user IO (notes Sec. 4.8: OTF-AST's tail
on src1_1 comes from user reads queued behind copies), so a copy slows under load and user IO slows under copies:
closed loop. kcopyd keeps ``copy_inflight`` chunks in flight (notes Sec. 6.3: "up to 8 in flight"); a chunk reads
its source (the HDD's pieces, or one SSD job) and then writes its destination; the next chunk is issued when one
completes, and never before ``start + k * copy_s / chunks`` (the no-load pace of Table 1 as a throttle: with the
``copy_unit = "minutes"`` reading the copy is throttled to minutes). The move's copy ends when its last chunk
completes; the buffered writes (one per distinct buffered extent, address order) are then written to the
destination at ``sync_max_iops`` (Sec. 3.3.2); the move ends when the last of them completes.

Devices (the same model as :mod:`tieringlab.models.storage`, as events): a request becomes one piece per disk it
touches (RAID0 striping); a disk serves one piece at a time, its service time fixed when it starts from the head
position (the end of the piece served before), the disk's segment LRU read cache (fed by reads in service order),
and one rotational draw per piece. Queue discipline (:class:`~tieringlab.models.storage.Testbed`
``copy_scheduler``): ``"fifo"``: one arrival-order queue per disk; ``"cfq"``: user IO and background IO (copies,
syncs, cleaning) in two queues that take turns in time slices of ``cfq_slice_s`` (a queue keeps the disk while its
slice lasts and it has work). HDD write cache (``hdd_write_cache``): off, a write completes when its piece is
served; on, a write piece completes ``cache_hit_s + bytes / bus`` after it reaches a disk whose cache holds the
writes not yet destaged (``write_cache_bytes``; otherwise it waits for its own service), and the destage still
takes the disk time of the write in queue order. The SSD: ``channels`` FIFO servers dealt round-robin in arrival
order; the buffer: ``buffer_s``; every user IO pays ``driver_s``.

With no move in flight, FIFO queues and the write cache off, every user IO's response equals that of the
sort-based model :func:`tieringlab.models.storage.serve` (tests/test_otf_engine.py checks it, and checks the
closed loop request by request against a SimPy model written there).

Pieces started at arrival (the write cache off): a piece whose start the queue would decide now is served when
it arrives, without a queue entry or a completion event (its owner learns its end at once, the disk is busy until
``d_eager_end``, and a piece queued meanwhile waits for that): one that finds its disk idle with empty queues (it
starts at once anyway); under FIFO, any piece that finds the queues empty (it starts when the disk's pieces before
it end); under CFQ, such a piece when nothing of the other class can reach the disk before it would start: a user
piece by the earliest a copy, sync or background job can be issued (the next decision or background job and,
with a move in flight or queued, the next disk, chunk or slot event: only events of those kinds issue them), a
background piece by the next user IO's arrival. Its start, service and end are then those the queue would give
it. On the src1_1 replay (OTF-AST at Table 3) this serves 89 % of the user pieces and 37 % of the copies' pieces
without events.

``load_scale`` (:func:`scaled_testbed`): a twin at scale ``s`` has sub-LUNs of ``s`` GiB and ``s`` times the
IOs; the testbed is slowed by ``1 / s`` (every IO takes 1 / s its time), so each disk carries the load it
carries at scale 1 and a sub-LUN copies in the same seconds; responses are reported x ``s``.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import numpy as np

from tieringlab import native
from tieringlab.models import storage
from tieringlab.models.storage import BUFFER, HDD, SSD, Testbed

__all__ = ["simulate", "scaled_testbed", "no_load_copy_times", "user_draws", "SECTOR"]

SECTOR = 512                       # Sec. 3.3.2: the buffer's bitmap has one bit per 512 B
_INF = np.inf
_BIG = 2**62
# typed constants for helper calls (a literal argument would compile the helper once more)
_ZERO, _ONE, _TRUE = np.int64(0), np.int64(1), np.bool_(True)
# float params
F_L, F_SMIN, F_SMAX, F_DISK, F_REV, F_MEDIA, F_SETTLE, F_SEQR, F_SEQW, F_HIT, F_BUS = range(11)
F_SSDFR, F_SSDFW, F_SSDR, F_SSDW, F_BUFS, F_DRV, F_SYNC, F_CUP, F_CDOWN, F_SLICE, F_TS, F_WCB = range(11, 23)
#: float state next to the float params: the arrival time of the next user IO not yet met (inf after the last)
F_NEXTU = 23
F_SHARE = 24        # 1 / n_disks: a piece's share of the mean utilization
# int params
(I_ND, I_STRIPE, I_SEG, I_CSEG, I_SEGS, I_CH, I_UNIT, I_CHUNK, I_INFL, I_CONC, I_CAP, I_C, I_O, I_HIST, I_EVICT,
 I_SKIP, I_CFQ, I_WC, I_CTRL, I_S, I_K, I_NSEC, I_M, I_SEED, I_SEGSH, I_USH, I_NDSH, I_HSH, I_EARLY) = range(29)
# scalar state
(S_IU, S_IB, S_KK, S_NLOG, S_HEAD, S_NSSD, S_PENDUP, S_FREE, S_RR, S_NBUF, S_NSQ, S_CHITS, S_UPIECES,
 S_POOLN, S_POOLCAP, S_DIRTY, S_EARLY) = range(17)
NS = 24                  # scalar state slots
_COPY, _SYNC = 1, 2
#: A piece's ints, one record of adjacent words at ``I[I[_O_p_rec] + _PR * p:]`` (a piece's fields then share a cache
#: line or two, where separate arrays touched one line each; about 5-8 % less CPU per request at paper scale, measured
#: 2026-11-27): its disk offset, bytes, write flag, owner, next piece (queue or free list) and write-cache flag.
_PR = 8
_P_OFF, _P_B, _P_W, _P_OWN, _P_NEXT, _P_ACK = range(6)
#: Pieces the pool is first allotted (:func:`simulate`; 18 MiB of piece fields): far more than ever wait at once.
POOL_FIRST = 1 << 18


class _Users(NamedTuple):
    t: np.ndarray
    off: np.ndarray
    size: np.ndarray
    w: np.ndarray
    sub: np.ndarray
    route: np.ndarray        # fixed route (HDD / SSD / BUFFER), or -1: the controller routes it
    extra: np.ndarray        # serial SSD bytes added to an SSD IO (FlashCache's metadata write)


class _Bg(NamedTuple):
    t: np.ndarray
    off: np.ndarray
    size: np.ndarray
    w: np.ndarray
    dev: np.ndarray          # HDD or SSD


class _View:
    """The output fields of a run, copied out of the flat state (of the move log, its ``nm`` entries)."""

    OUT = ("util", "uutil", "lg_sub", "lg_up", "lg_tq", "lg_ts", "lg_tc", "lg_te", "lg_nbw",
           "lg_nsync", "ys_res", "ys_hot")

    def __init__(self, d, nm):
        self.__dict__.update({k: (d[k][:nm] if k.startswith("lg_") else d[k]).copy() for k in self.OUT})


class _Ctrl(NamedTuple):
    hot: np.ndarray
    hsum: np.ndarray
    cnt: np.ndarray


#: The state lives in two flat arrays, ``I`` (int64) and ``F`` (float64): ``I[0:32]`` the int parameters, ``F[0:32]``
#: the float ones, ``I[SI:SI + NS]`` the scalar state, and each field ``x`` at ``I[I[_O_x]:]`` or ``F[I[_O_x]:]``
#: (its offset, in the table at ``I[32:]``). One pointer pair per call: the helpers compile fast and copy nothing.
SI = 128
_FIELDS = (
    'p_rec', 'p_rot', 'q_head', 'q_tail', 'q_len', 'd_cur', 'd_free_t', 'd_eager_end',
    'd_head_end', 'd_first', 'd_active', 'd_slice0', 'd_wc', 'node_of', 'l_prev', 'l_next', 'l_key',
    'l_head', 'l_size', 'chan_free', 'udone', 'tier', 'busy', 'streak', 'tmo', 'moving',
    'lg_sub', 'lg_up', 'lg_tq', 'lg_ts', 'lg_tc', 'lg_te', 'lg_nbw', 'lg_nsync', 's_mv', 's_phase', 's_nk',
    's_done', 's_infl', 's_issue_t', 's_buf0', 's_sq0', 's_sqn', 's_sqi', 's_sync_t', 's_spend', 's_sdone',
    's_fin_t', 'c_k', 'c_stage', 'c_pend', 'c_done', 'c_ev_t', 'c_used', 'stamp', 'b_mv', 'b_off', 'b_sz',
    'sq_off', 'sq_sz', 'u_rot', 'b_rot', 'util', 'uutil', 'ys_res', 'ys_hot'
)
_FLOAT = frozenset((
    'c_done', 'c_ev_t', 'chan_free', 'd_free_t', 'd_eager_end', 'd_slice0', 'd_wc', 'lg_tc', 'lg_te', 'lg_tq',
    'lg_ts', 'p_rot', 'u_rot', 'b_rot', 's_fin_t', 's_issue_t', 's_sdone', 's_sync_t', 'udone', 'util', 'uutil'
))
_O_p_rec = 32
_O_p_rot = 33
_O_q_head = 34
_O_q_tail = 35
_O_q_len = 36
_O_d_cur = 37
_O_d_free_t = 38
_O_d_eager_end = 39
_O_d_head_end = 40
_O_d_first = 41
_O_d_active = 42
_O_d_slice0 = 43
_O_d_wc = 44
_O_node_of = 45
_O_l_prev = 46
_O_l_next = 47
_O_l_key = 48
_O_l_head = 49
_O_l_size = 50
_O_chan_free = 51
_O_udone = 52
_O_tier = 53
_O_busy = 54
_O_streak = 55
_O_tmo = 56
_O_moving = 57
_O_lg_sub = 58
_O_lg_up = 59
_O_lg_tq = 60
_O_lg_ts = 61
_O_lg_tc = 62
_O_lg_te = 63
_O_lg_nbw = 64
_O_lg_nsync = 65
_O_s_mv = 66
_O_s_phase = 67
_O_s_nk = 68
_O_s_done = 69
_O_s_infl = 70
_O_s_issue_t = 71
_O_s_buf0 = 72
_O_s_sq0 = 73
_O_s_sqn = 74
_O_s_sqi = 75
_O_s_sync_t = 76
_O_s_spend = 77
_O_s_sdone = 78
_O_s_fin_t = 79
_O_c_k = 80
_O_c_stage = 81
_O_c_pend = 82
_O_c_done = 83
_O_c_ev_t = 84
_O_c_used = 85
_O_stamp = 86
_O_b_mv = 87
_O_b_off = 88
_O_b_sz = 89
_O_sq_off = 90
_O_sq_sz = 91
_O_u_rot = 92
_O_b_rot = 93
_O_util = 94
_O_uutil = 95
_O_ys_res = 96
_O_ys_hot = 97
assert [globals()[f"_O_{f}"] for f in _FIELDS] == list(range(32, 32 + len(_FIELDS))) and 32 + len(_FIELDS) <= SI


# ----------------------------------------------------------------------------- compiled helpers
# Helpers that allocate nothing compile with ``_nrt=False``: numba then emits no reference counting for them (with
# NRT, an atomic increment and decrement of I's and F's meminfo around every helper call: a fifth of a run's time,
# measured 2026-11-27); those that allocate (_argsort, _begin_sync, _decide) and the kernel, which calls them, keep
# NRT. ``inline="always"`` only for helpers with one call site: inlining the hot helpers into their several callers
# compiled 4x as long.

_G = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)


@native.jit(cache=False, nogil=True, inline="always")
def _u01(seed, a, b, c):
    """A uniform on [0, 1) from (seed, a, b, c): splitmix64 (the draws of background pieces, independent of the
    order the simulation meets them)."""
    x = np.uint64(seed) ^ (np.uint64(a) * _G) ^ (np.uint64(b) * _M1) ^ (np.uint64(c) * _M2)
    x = x + _G
    x = (x ^ (x >> _S30)) * _M1
    x = (x ^ (x >> _S27)) * _M2
    x = x ^ (x >> _S31)
    return float(x >> _S11) * (1.0 / 9007199254740992.0)


@native.jit(cache=False, nogil=True)
def _argsort(key):
    """Indices that sort the int64 ``key`` (stable; a bottom-up merge sort: compiles in a fraction of
    ``np.argsort``'s time)."""
    n = key.shape[0]
    a = np.arange(n)
    b = np.empty(n, np.int64)
    w = 1
    while w < n:
        lo = 0
        while lo < n:
            mid = min(lo + w, n)
            hi = min(lo + 2 * w, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if key[a[j]] < key[a[i]]:
                    b[k] = a[j]
                    j += 1
                else:
                    b[k] = a[i]
                    i += 1
                k += 1
            while i < mid:
                b[k] = a[i]
                i += 1
                k += 1
            while j < hi:
                b[k] = a[j]
                j += 1
                k += 1
            lo += 2 * w
        a, b = b, a
        w *= 2
    return a


@native.jit(cache=False, nogil=True, _nrt=False, inline="always")   # one call site
def _util_add(F, base, base2, n, a, b, share):
    """Add ``share`` x the overlap of [a, b) with each second to ``F[base:base + n]`` and, when ``base2 >= 0``, to
    ``F[base2:base2 + n]`` (later seconds dropped)."""
    s = int(np.floor(a))
    while s < n and s <= b:
        lo = max(a, float(s))
        hi = min(b, float(s + 1))
        if hi > lo and s >= 0:
            x = (hi - lo) * share
            F[base + s] += x
            if base2 >= 0:
                F[base2 + s] += x
        s += 1


@native.jit(cache=False, nogil=True, inline="always")
def _div(x, d, sh):
    """``x // d`` for ``x >= 0``: a shift when ``d`` is a power of two (``sh = log2(d)``, else -1)."""
    return x >> sh if sh >= 0 else x // d


@native.jit(cache=False, nogil=True, inline="always")
def _hslot(seg, sh):
    """The home slot of segment ``seg`` in a disk's hash table of ``2 ** (64 - sh)`` slots: the top bits of a
    Fibonacci product, its best-mixed bits (:func:`simulate` has the measurement)."""
    return np.int64((np.uint64(seg) * _G) >> np.uint64(sh))


@native.jit(cache=False, nogil=True, _nrt=False, inline="always")   # one call site
def _hdel(I, hk, mask, sh, seg):
    """Remove ``seg`` from the hash table at ``I[hk:]`` (slot ``i``: its key at ``hk + 2 i``, its node next to it;
    linear probing, backward-shift deletion: no tombstones, so a lookup stops at the first empty slot)."""
    i = _hslot(seg, sh)
    while I[hk + 2 * i] != seg:
        i = (i + 1) & mask
    j = i
    while True:
        j = (j + 1) & mask
        kj = I[hk + 2 * j]
        if kj < 0:
            break
        h = _hslot(kj, sh)
        # kj stays when its home lies cyclically in (i, j]
        if (i <= j and i < h <= j) or (i > j and (h > i or h <= j)):
            continue
        I[hk + 2 * i] = kj
        I[hk + 2 * i + 1] = I[hk + 2 * j + 1]
        i = j
    I[hk + 2 * i] = -1


@native.jit(cache=False, nogil=True, _nrt=False, inline="always")   # one call site
def _lru_access(I, F, d, seg):
    """Reference ``seg`` in disk ``d``'s segment LRU; True when it was cached. The LRU: a circular doubly linked
    list of ``cache_segments`` nodes per disk, its head the most recent and the node before the head the least
    (so a miss on a full cache makes that node, given the new segment, the head by moving the head back one:
    nothing relinked), and per disk a small hash table (segment -> node, ``I_SEGS`` slots, 16x the nodes, each
    slot's key and node side by side: one cache line per probe; it stays in the CPU's cache, where a table over
    every segment of the disk did not). The head is checked first (a run of reads in one segment)."""
    o_prev, o_next, o_key = I[_O_l_prev], I[_O_l_next], I[_O_l_key]
    o_head, o_size = I[_O_l_head] + d, I[_O_l_size] + d
    head = I[o_head]
    if head >= 0 and I[o_key + head] == seg:
        return True
    H = I[I_SEGS]
    mask = H - 1
    hk = I[_O_node_of] + d * 2 * H
    sh = I[I_HSH]
    i = _hslot(seg, sh)
    node = -1
    while True:
        k = I[hk + 2 * i]
        if k == seg:
            node = I[hk + 2 * i + 1]
            break
        if k < 0:
            break
        i = (i + 1) & mask
    if node >= 0:                              # cached, not the head: it becomes the head
        last = I[o_prev + head]
        if node != last:                       # (the least recent just moves the head back) unlink, then before head
            pv, nx = I[o_prev + node], I[o_next + node]
            I[o_next + pv] = nx
            I[o_prev + nx] = pv
            I[o_next + last] = node
            I[o_prev + node] = last
            I[o_next + node] = head
            I[o_prev + head] = node
        I[o_head] = node
        return True
    C = I[I_CSEG]
    if I[o_size] < C:                          # a free node, linked in before the head
        node = d * C + I[o_size]
        I[o_size] += 1
        if head < 0:
            I[o_prev + node] = node
            I[o_next + node] = node
        else:
            last = I[o_prev + head]
            I[o_next + last] = node
            I[o_prev + node] = last
            I[o_next + node] = head
            I[o_prev + head] = node
        I[hk + 2 * i] = seg
        I[hk + 2 * i + 1] = node
        I[o_key + node] = seg
        I[o_head] = node
        return False
    node = I[o_prev + head]                    # full: the least recent node takes the segment and the head
    victim = I[o_key + node]
    I[hk + 2 * i] = seg                        # slot i is empty (the probe ended there); the victim's removal
    I[hk + 2 * i + 1] = node                   # may shift it back, never past its home
    I[o_key + node] = seg
    I[o_head] = node
    _hdel(I, hk, mask, sh, victim)
    return False


@native.jit(cache=False, nogil=True, _nrt=False)
def _owner_done(I, F, owner, t, now):
    """A piece of ``owner`` completes at ``t`` (>= now): a user request, a chunk stage or a slot's sync."""
    if owner >= 0:
        if t > F[I[_O_udone] + owner]:
            F[I[_O_udone] + owner] = t
        return
    if owner == -1:
        return
    I[SI + S_DIRTY] = 1
    conc = I[I_CONC]
    j = -owner - 2
    if j < conc:                               # a sync write of slot j
        if t > F[I[_O_s_sdone] + j]:
            F[I[_O_s_sdone] + j] = t
        I[I[_O_s_spend] + j] -= 1
        if I[I[_O_s_spend] + j] == 0 and I[I[_O_s_sqi] + j] >= I[I[_O_s_sqn] + j]:
            F[I[_O_s_fin_t] + j] = F[I[_O_s_sdone] + j]
        return
    j -= conc                                  # a chunk stage
    if t > F[I[_O_c_done] + j]:
        F[I[_O_c_done] + j] = t
    I[I[_O_c_pend] + j] -= 1
    if I[I[_O_c_pend] + j] == 0:
        F[I[_O_c_ev_t] + j] = F[I[_O_c_done] + j]


@native.jit(cache=False, nogil=True, _nrt=False)
def _ssd_job(I, F, t, b, w, extra):
    """An SSD job of ``b`` bytes arriving at ``t`` (+ a serial write of ``extra`` bytes): its departure."""
    ch = I[I_CH]
    c = I[SI + S_RR] % ch
    I[SI + S_RR] += 1
    if w:
        svc = F[F_SSDFW] + b / F[F_SSDW]
    else:
        svc = F[F_SSDFR] + b / F[F_SSDR]
    if extra > 0:
        svc += F[F_SSDFW] + extra / F[F_SSDW]
    s0 = max(t, F[I[_O_chan_free] + c])
    F[I[_O_chan_free] + c] = s0 + svc
    return s0 + svc


@native.jit(cache=False, nogil=True, _nrt=False, inline="always")
def _serve(I, F, d, off, b, w, user, rot, now):
    """Disk ``d`` starts a piece (``off``, ``b`` bytes, write ``w``, a user piece or not, rotational draw ``rot``)
    at ``now``: the read cache, the head, the utilization (per disk: each disk's seconds are added to in its own
    service order, whatever order the simulation meets the disks in); returns its service time. Inlined into its
    two callers (5 % less CPU per request than a call, measured 2026-11-27)."""
    hit = False
    if not w:
        S = I[I_SEG]
        sh = I[I_SEGSH]
        s0 = _div(off, S, sh)
        s1 = _div(off + max(b, 1) - 1, S, sh)
        hit = True
        for sg in range(s0, s1 + 1):
            if not _lru_access(I, F, d, sg):
                hit = False
    if I[I[_O_d_first] + d] == 1:
        seq = False
        dist = float(off)
    else:
        seq = I[I[_O_d_head_end] + d] == off
        dist = float(abs(off - I[I[_O_d_head_end] + d]))
    I[I[_O_d_first] + d] = 0
    I[I[_O_d_head_end] + d] = off + b
    if hit:
        svc = F[F_HIT] + b / F[F_BUS]
    elif seq:
        svc = b / F[F_SEQW] if w else b / F[F_SEQR]
    else:
        seek = F[F_SMIN] + (F[F_SMAX] - F[F_SMIN]) * np.sqrt(dist / F[F_DISK]) if dist > 0 else 0.0
        svc = seek + rot * F[F_REV] + b / F[F_MEDIA] + (F[F_SETTLE] if w else 0.0)
    ns = I[I_NSEC]
    _util_add(F, I[_O_util] + d * ns, I[_O_uutil] + d * ns if user else -_ONE, ns, now, now + svc, F[F_SHARE])
    if user and hit:
        I[SI + S_CHITS] += 1
    return svc


@native.jit(cache=False, nogil=True, _nrt=False)
def _start_next(I, F, d, now):
    """Disk ``d`` is free at ``now``: start the next piece its scheduler picks (if any). While the disk still
    serves pieces started at their arrival (``d_eager_end``, :func:`_hdd_io`), the queue waits for their end."""
    I[SI + S_DIRTY] = 1
    cfq = I[I_CFQ] == 1
    q0 = d * 2
    if F[I[_O_d_eager_end] + d] > now:
        if I[I[_O_q_len] + q0] + (I[I[_O_q_len] + q0 + 1] if cfq else 0) > 0:
            I[I[_O_d_cur] + d] = -2
            F[I[_O_d_free_t] + d] = F[I[_O_d_eager_end] + d]
        else:
            I[I[_O_d_cur] + d] = -1
            F[I[_O_d_free_t] + d] = np.inf
        return
    if not cfq:
        cls = 0
        if I[I[_O_q_len] + q0] == 0:
            I[I[_O_d_cur] + d] = -1
            F[I[_O_d_free_t] + d] = np.inf
            return
    else:
        a = I[I[_O_d_active] + d]
        if I[I[_O_q_len] + q0 + a] > 0 and now - F[I[_O_d_slice0] + d] < F[F_SLICE]:
            cls = a
        elif I[I[_O_q_len] + q0 + 1 - a] > 0:
            cls = 1 - a
            I[I[_O_d_active] + d] = cls
            F[I[_O_d_slice0] + d] = now
        elif I[I[_O_q_len] + q0 + a] > 0:
            cls = a
            F[I[_O_d_slice0] + d] = now
        else:
            I[I[_O_d_cur] + d] = -1
            F[I[_O_d_free_t] + d] = np.inf
            return
    q = q0 + cls
    p = I[I[_O_q_head] + q]
    pr = I[_O_p_rec] + _PR * p
    I[I[_O_q_head] + q] = I[pr + _P_NEXT]
    I[I[_O_q_len] + q] -= 1
    if I[I[_O_q_len] + q] == 0:
        I[I[_O_q_tail] + q] = -1
    svc = _serve(I, F, d, I[pr + _P_OFF], I[pr + _P_B], I[pr + _P_W] == 1, I[pr + _P_OWN] >= 0, F[I[_O_p_rot] + p],
                 now)
    I[I[_O_d_cur] + d] = p
    F[I[_O_d_free_t] + d] = now + svc


@native.jit(cache=False, nogil=True, _nrt=False)
def _hdd_io(I, F, t, off, size, w, owner, cls, rot, rseed, ra, rb, guard):
    """:func:`_hdd_io_body` as a call, for the background pieces (copies, syncs, open-loop jobs); :func:`_user`
    inlines the body instead (3 % less CPU per request at paper scale, measured 2026-11-27; inlining it into every
    caller, or _user into _run, was slower)."""
    return _hdd_io_body(I, F, t, off, size, w, owner, cls, rot, rseed, ra, rb, guard)


@native.jit(cache=False, nogil=True, _nrt=False, inline="always")
def _hdd_io_body(I, F, t, off, size, w, owner, cls, rot, rseed, ra, rb, guard):
    """Split ``[off, off + size)`` over the RAID0 and enqueue one piece per disk, in disk order (class ``cls``: 0
    user, 1 background); returns the pieces. The rotational draws: ``F[rot + disk]`` when ``rot >= 0`` (a row of
    the user or background draws), else from (rseed, ra, rb, disk). A piece that reaches an idle disk starts at once.

    Started at arrival (module docstring, write cache off): a piece that finds its disk's queues empty and would
    start no later than ``guard`` (user pieces; :func:`_run` works it out) or the next user IO's arrival
    (``F[F_NEXTU]``; background pieces), or at once, or under FIFO, is served now: the disk is then busy until
    ``d_eager_end`` and a piece queued meanwhile waits for it (:func:`_start_next`)."""
    nd = I[I_ND]
    U = I[I_STRIPE]
    size = max(size, 1)
    ush = I[I_USH]
    first = _div(off, U, ush)
    last = _div(off + size - 1, U, ush)
    fq = _div(first, nd, I[I_NDSH])
    fm = first - fq * nd
    cfq = I[I_CFQ] == 1
    early = I[I_EARLY] == 1 and I[I_WC] == 0      # pieces may start at arrival (docstring)
    n = 0
    ndsh = I[I_NDSH]
    # the disks touched, from the first unit's on (the pieces of one request on different disks do not interact,
    # so their order changes nothing): unit u = first + k is the first of its disk's units, u + j nd the others
    for k in range(min(last - first + 1, nd)):
        u = first + k
        d0 = fm + k
        row = fq
        if d0 >= nd:
            d0 -= nd
            row += 1
        ul = u + _div(last - u, nd, ndsh) * nd            # its disk's last unit; whole units between
        cut0 = off - u * U if k == 0 else 0
        doff = row * U + cut0
        nb = (_div(ul - u, nd, ndsh) + 1) * U - cut0 - max((ul + 1) * U - (off + size), 0)
        r = F[rot + d0] if rot >= 0 else _u01(rseed, ra, rb, d0)
        n += 1
        if owner >= 0:
            I[SI + S_UPIECES] += 1
        elif owner < -1:
            _pend_add(I, F, owner, 1)
        cur = I[I[_O_d_cur] + d0]
        if early and cur != -2 and I[I[_O_q_len] + 2 * d0] + I[I[_O_q_len] + 2 * d0 + 1] == 0:
            s0 = max(t, F[I[_O_d_eager_end] + d0])     # after the pieces started at arrival before it
            if cur >= 0 and F[I[_O_d_free_t] + d0] > s0:  # and after the queued piece in service
                s0 = F[I[_O_d_free_t] + d0]
            if s0 <= t or not cfq or s0 <= (guard if owner >= 0 else F[F_NEXTU]):   # started at arrival (docstring)
                if cfq:                               # the only piece queued, of class cls, starts at s0
                    if I[I[_O_d_active] + d0] != cls:
                        I[I[_O_d_active] + d0] = cls
                        F[I[_O_d_slice0] + d0] = s0
                    elif s0 - F[I[_O_d_slice0] + d0] >= F[F_SLICE]:
                        F[I[_O_d_slice0] + d0] = s0
                e = s0 + _serve(I, F, d0, doff, nb, w, owner >= 0, r, s0)
                F[I[_O_d_eager_end] + d0] = e
                I[SI + S_EARLY] += 1
                if owner >= 0:                        # _owner_done's user branch, without the call
                    if e > F[I[_O_udone] + owner]:
                        F[I[_O_udone] + owner] = e
                else:
                    _owner_done(I, F, owner, e, t)
                continue
        # the piece arrives at disk d0 at t
        p = I[SI + S_FREE]
        if p >= 0:                                    # a freed record, else the next never used
            pr = I[_O_p_rec] + _PR * p
            I[SI + S_FREE] = I[pr + _P_NEXT]
        else:
            p = I[SI + S_POOLN]
            if p >= I[SI + S_POOLCAP]:
                raise RuntimeError("piece pool exhausted")
            I[SI + S_POOLN] = p + 1
            pr = I[_O_p_rec] + _PR * p
        I[pr + _P_OFF] = doff
        I[pr + _P_B] = nb
        I[pr + _P_W] = 1 if w else 0
        I[pr + _P_OWN] = owner
        I[pr + _P_NEXT] = -1
        I[pr + _P_ACK] = 0
        F[I[_O_p_rot] + p] = r
        if w and I[I_WC] == 1 and F[I[_O_d_wc] + d0] + nb <= F[F_WCB]:
            F[I[_O_d_wc] + d0] += nb                  # absorbed by the write cache: acknowledged now
            I[pr + _P_ACK] = 1
            _owner_done(I, F, owner, t + F[F_HIT] + nb / F[F_BUS], t)
        q = d0 * 2 + (cls if cfq else 0)
        if I[I[_O_q_tail] + q] >= 0:
            I[I[_O_p_rec] + _PR * I[I[_O_q_tail] + q] + _P_NEXT] = p
        else:
            I[I[_O_q_head] + q] = p
        I[I[_O_q_tail] + q] = p
        I[I[_O_q_len] + q] += 1
        if I[I[_O_d_cur] + d0] == -1:
            _start_next(I, F, d0, t)
    return n


@native.jit(cache=False, nogil=True, inline="always")
def _pend_add(I, F, owner, k):
    conc = I[I_CONC]
    j = -owner - 2
    if j < conc:
        I[I[_O_s_spend] + j] += k
    else:
        I[I[_O_c_pend] + j - conc] += k


@native.jit(cache=False, nogil=True, _nrt=False)
def _chunk_stage(I, F, j, now):
    """Issue stage ``c_stage[j]`` of chunk ``j`` at ``now`` (0: read the source, 1: write the destination)."""
    I[SI + S_DIRTY] = 1
    conc = I[I_CONC]
    q = j // I[I_INFL]
    m = I[I[_O_s_mv] + q]
    up = I[I[_O_lg_up] + m] == 1
    k = I[I[_O_c_k] + j]
    unit = I[I_UNIT]
    ck = I[I_CHUNK]
    off = I[I[_O_lg_sub] + m] * unit + k * ck
    nb = min(ck, unit - k * ck)
    owner = -(2 + conc + j)
    F[I[_O_c_done] + j] = now
    F[I[_O_c_ev_t] + j] = np.inf
    on_hdd = up if I[I[_O_c_stage] + j] == 0 else not up
    write = I[I[_O_c_stage] + j] == 1
    I[I[_O_c_pend] + j] = 1                           # a guard while the pieces are enqueued
    if on_hdd:
        _hdd_io(I, F, now, off, nb, write, owner, _ONE, -_ONE, I[I_SEED], m * 4 + I[I[_O_c_stage] + j], k,
                -np.inf)
    else:
        I[I[_O_c_pend] + j] += 1
        dep = _ssd_job(I, F, now, nb, write, _ZERO)
        _owner_done(I, F, owner, dep, now)
    _owner_done(I, F, owner, now, now)   # release the guard


@native.jit(cache=False, nogil=True, _nrt=False)
def _issue_chunks(I, F, q, now):
    """kcopyd of slot ``q``: issue chunks while fewer than ``copy_inflight`` are in flight and the throttle
    (the no-load pace) allows; else arm the throttle's timer."""
    I[SI + S_DIRTY] = 1
    m = I[I[_O_s_mv] + q]
    unit = I[I_UNIT]
    ck = I[I_CHUNK]
    nk = (unit + ck - 1) // ck
    cs = F[F_CUP] if I[I[_O_lg_up] + m] == 1 else F[F_CDOWN]
    thr = cs / nk
    F[I[_O_s_issue_t] + q] = np.inf
    infl = I[I_INFL]
    while I[I[_O_s_nk] + q] < nk and I[I[_O_s_infl] + q] < infl and now < F[F_L]:
        due = F[I[_O_lg_ts] + m] + I[I[_O_s_nk] + q] * thr
        if due > now:
            F[I[_O_s_issue_t] + q] = due
            return
        j = q * infl
        while I[I[_O_c_used] + j] == 1:
            j += 1
        I[I[_O_c_used] + j] = 1
        I[I[_O_c_k] + j] = I[I[_O_s_nk] + q]
        I[I[_O_c_stage] + j] = 0
        I[I[_O_s_nk] + q] += 1
        I[I[_O_s_infl] + q] += 1
        _chunk_stage(I, F, j, now)


@native.jit(cache=False, nogil=True, _nrt=False)
def _finish_move(I, F, q, now):
    I[SI + S_DIRTY] = 1
    m = I[I[_O_s_mv] + q]
    s = I[I[_O_lg_sub] + m]
    F[I[_O_lg_te] + m] = now
    if I[I[_O_lg_up] + m] == 1:
        I[I[_O_tier] + s] = 1
        I[SI + S_NSSD] += 1
        I[SI + S_PENDUP] -= 1
    else:
        I[I[_O_tier] + s] = 0
        I[SI + S_NSSD] -= 1
    I[I[_O_busy] + s] = 0
    I[I[_O_tmo] + s] = 0
    I[I[_O_streak] + s] = 0
    I[I[_O_moving] + s] = -1
    I[I[_O_s_mv] + q] = -1
    I[I[_O_s_phase] + q] = 0
    F[I[_O_s_fin_t] + q] = np.inf
    F[I[_O_s_sync_t] + q] = np.inf
    F[I[_O_s_issue_t] + q] = np.inf


@native.jit(cache=False, nogil=True)
def _begin_sync(I, F, q, now):
    """The copy of slot ``q`` ended at ``now``: its buffered writes (one per distinct extent, by address) queue
    for the sync at ``sync_max_iops``."""
    I[SI + S_DIRTY] = 1
    m = I[I[_O_s_mv] + q]
    F[I[_O_lg_tc] + m] = now
    I[I[_O_s_phase] + q] = _SYNC
    nb = I[SI + S_NBUF]
    idx = np.empty(max(nb - I[I[_O_s_buf0] + q], 0), np.int64)
    c = 0
    for i in range(I[I[_O_s_buf0] + q], nb):
        if I[I[_O_b_mv] + i] == m:
            idx[c] = i
            c += 1
    idx = idx[:c]
    I[I[_O_lg_nbw] + m] = c
    offs = np.empty(c, np.int64)
    for i in range(c):
        offs[i] = I[I[_O_b_off] + idx[i]]
    o = _argsort(offs)                                      # by address; per address its smallest write below
    s0 = I[SI + S_NSQ]
    n = 0
    for i in range(c):
        a = idx[o[i]]
        if n > 0 and I[I[_O_sq_off] + s0 + n - 1] == I[I[_O_b_off] + a]:
            if I[I[_O_b_sz] + a] < I[I[_O_sq_sz] + s0 + n - 1]:
                I[I[_O_sq_sz] + s0 + n - 1] = I[I[_O_b_sz] + a]
            continue
        I[I[_O_sq_off] + s0 + n] = I[I[_O_b_off] + a]
        I[I[_O_sq_sz] + s0 + n] = I[I[_O_b_sz] + a]
        n += 1
    I[SI + S_NSQ] = s0 + n
    I[I[_O_s_sq0] + q] = s0
    I[I[_O_s_sqn] + q] = n
    I[I[_O_s_sqi] + q] = 0
    I[I[_O_s_spend] + q] = 0
    F[I[_O_s_sdone] + q] = now
    I[I[_O_lg_nsync] + m] = n
    if n == 0:
        F[I[_O_s_fin_t] + q] = now
    else:
        F[I[_O_s_sync_t] + q] = now


@native.jit(cache=False, nogil=True, _nrt=False)
def _try_start(I, F, now):
    """Start queued moves, FIFO, while a slot is free (a promotion also needs an SSD slot)."""
    I[SI + S_DIRTY] = 1
    conc = I[I_CONC]
    while I[SI + S_HEAD] < I[SI + S_NLOG] and now < F[F_L]:
        m = I[SI + S_HEAD]
        q = -1
        occ = I[SI + S_NSSD]
        for k in range(conc):
            if I[I[_O_s_mv] + k] < 0:
                if q < 0:
                    q = k
            elif I[I[_O_lg_up] + I[I[_O_s_mv] + k]] == 1:
                occ += 1
        if q < 0:
            return
        if I[I[_O_lg_up] + m] == 1 and occ >= I[I_CAP]:
            return
        I[SI + S_HEAD] += 1
        I[I[_O_s_mv] + q] = m
        F[I[_O_lg_ts] + m] = now
        I[I[_O_moving] + I[I[_O_lg_sub] + m]] = q
        if I[I[_O_lg_up] + m] == 0 and I[I_SKIP] == 1:        # a table update (Table 5 "without write-back")
            F[I[_O_lg_tc] + m] = now
            I[I[_O_lg_nbw] + m] = 0
            I[I[_O_lg_nsync] + m] = 0
            _finish_move(I, F, q, now)
            continue
        I[I[_O_s_phase] + q] = _COPY
        I[I[_O_s_nk] + q] = 0
        I[I[_O_s_done] + q] = 0
        I[I[_O_s_infl] + q] = 0
        I[I[_O_s_buf0] + q] = I[SI + S_NBUF]
        _issue_chunks(I, F, q, now)


@native.jit(cache=False, nogil=True, inline="always")
def _log_move(I, F, s, up, now):
    """Append a move of sub-LUN ``s`` (``up``: 1 promotion, 0 demotion) queued at ``now`` to the move log."""
    m = I[SI + S_NLOG]
    I[I[_O_lg_sub] + m] = s
    I[I[_O_lg_up] + m] = up
    F[I[_O_lg_tq] + m] = now
    I[SI + S_NLOG] += 1


@native.jit(cache=False, nogil=True)
def _decide(I, F, ctrl, k, now):
    """The decision at the end of interval ``k`` (notes Sec. 1.4; the same rule as the interval scan of
    :mod:`.engine`): streaks and timeouts, demotions by index, then promotions by count while there is room."""
    S = I[I_S]
    hk = ctrl.hot[k]
    demote = np.zeros(S, np.bool_)
    cand = np.zeros(S, np.bool_)
    staying = 0
    n_cand = 0
    for s in range(S):
        if I[I[_O_busy] + s] == 1:
            continue
        if I[I[_O_tier] + s] == 0:
            I[I[_O_streak] + s] = I[I[_O_streak] + s] + 1 if hk[s] else 0
            ready = ctrl.hsum[k, s] >= I[I_C] if I[I_HIST] == 1 else I[I[_O_streak] + s] >= I[I_C]
            if ready:
                cand[s] = True
                n_cand += 1
        else:
            I[I[_O_tmo] + s] = 0 if hk[s] else I[I[_O_tmo] + s] + 1
            if I[I[_O_tmo] + s] >= I[I_O]:
                demote[s] = True
            else:
                staying += 1
    slots = max(I[I_CAP] - staying - I[SI + S_PENDUP], 0)
    if I[I_EVICT] == 1:
        key = np.empty(S, np.int64)
        n_evictable = 0
        for s in range(S):
            ok = I[I[_O_busy] + s] == 0 and I[I[_O_tier] + s] == 1 and not demote[s] and I[I[_O_tmo] + s] >= 1
            key[s] = -I[I[_O_tmo] + s] * S + s if ok else _BIG     # unique keys: ties to the lower index
            n_evictable += 1 if ok else 0
        n_ev = min(max(n_cand - slots, 0), n_evictable)
        o = _argsort(key)
        for r in range(n_ev):
            demote[o[r]] = True
        slots += n_ev
    key = np.empty(S, np.int64)
    for s in range(S):
        key[s] = -ctrl.cnt[k, s] * S + s if cand[s] else _BIG
    order = _argsort(key)
    n_pro = min(slots, n_cand)
    M = I[I_M]
    for s in range(S):
        if demote[s] and I[SI + S_NLOG] < M:
            _log_move(I, F, s, 0, now)
            I[I[_O_busy] + s] = 1
    for r in range(n_pro):
        s = order[r]
        if I[SI + S_NLOG] < M:
            _log_move(I, F, s, 1, now)
        I[I[_O_busy] + s] = 1
        I[I[_O_streak] + s] = 0
        I[SI + S_PENDUP] += 1
    I[I[_O_ys_res] + k] = I[SI + S_NSSD]
    nh = 0
    for s in range(S):
        nh += 1 if hk[s] else 0
    I[I[_O_ys_hot] + k] = nh


@native.jit(cache=False, nogil=True, _nrt=False)
def _covered(I, F, q, m, off, size, sub):
    """Whether every 512-B sector of ``[off, off + size)`` was written into slot ``q``'s buffer by move ``m``."""
    unit = I[I_UNIT]
    nsec = unit // SECTOR
    base = sub * unit
    a = (off - base) // SECTOR
    b = (off + max(size, 1) - 1 - base) // SECTOR
    if b >= nsec:
        return False
    for x in range(a, b + 1):
        if I[I[_O_stamp] + q * nsec + x] != m + 1:
            return False
    return True


@native.jit(cache=False, nogil=True, _nrt=False)
def _user(I, F, i, t, off, size, w, s, r, extra, guard):
    """User request ``i`` (``us``'s fields at ``i``, passed one by one: the named tuple of arrays would be pushed
    whole at every call) arrives at ``t``: route it (fixed ``r``, or by the tiering table and the move in flight)
    and serve it (``guard``: :func:`_hdd_io`); returns the route."""
    if r < 0:
        r = HDD if I[I[_O_tier] + s] == 0 else SSD
        q = I[I[_O_moving] + s]
        if q >= 0 and I[I[_O_s_phase] + q] > 0:
            m = I[I[_O_s_mv] + q]
            up = I[I[_O_lg_up] + m] == 1
            if I[I[_O_s_phase] + q] == _COPY:
                if w:
                    r = BUFFER
                    unit = I[I_UNIT]
                    nsec = unit // SECTOR
                    base = s * unit
                    a = (off - base) // SECTOR
                    b = min((off + max(size, 1) - 1 - base) // SECTOR, nsec - 1)
                    for x in range(a, b + 1):
                        I[I[_O_stamp] + q * nsec + x] = m + 1
                    nb = I[SI + S_NBUF]
                    I[I[_O_b_mv] + nb] = m
                    I[I[_O_b_off] + nb] = off
                    I[I[_O_b_sz] + nb] = size
                    I[SI + S_NBUF] = nb + 1
                elif _covered(I, F, q, m, off, size, s):
                    r = BUFFER
                else:
                    r = SSD if not up else HDD           # the source
            else:
                if (not w) and _covered(I, F, q, m, off, size, s):
                    r = BUFFER
                else:
                    r = SSD if up else HDD               # the destination
    if r == BUFFER:
        F[I[_O_udone] + i] = t + F[F_BUFS]
    elif r == SSD:
        F[I[_O_udone] + i] = _ssd_job(I, F, t, size, w, extra)
    else:
        F[I[_O_udone] + i] = t
        _hdd_io_body(I, F, t, off, size, w, i, _ZERO, I[_O_u_rot] + i * I[I_ND], _ZERO, _ZERO, _ZERO, guard)
    return r


@native.jit(cache=False, nogil=True)
def _run(us, bg, ctrl, I, F, resp, route):
    """The event loop (module docstring): the earliest of disk completions, chunk stages, sync writes, move
    ends, throttle timers, interval ends, background jobs and user arrivals, in that order at equal times."""
    n = us.t.shape[0]
    nbg = bg.t.shape[0]
    nd = I[I_ND]
    conc = I[I_CONC]
    nch = conc * I[I_INFL]
    K = I[I_K] if I[I_CTRL] == 1 else 0
    L = F[F_L]
    I[SI + S_DIRTY] = 1
    s_best, s_kind, s_arg, active = np.inf, -1, -_ONE, False
    F[F_NEXTU] = us.t[0] if n > 0 else np.inf
    while True:
        # the earliest of the disks', chunks' and slots' events: scanned again only after a helper marked them
        # changed (S_DIRTY; a user IO whose pieces start at arrival changes none of them)
        if I[SI + S_DIRTY] == 1:
            I[SI + S_DIRTY] = 0
            s_best = np.inf
            s_kind = -1
            s_arg = -_ONE
            for d in range(nd):
                if F[I[_O_d_free_t] + d] < s_best:
                    s_best = F[I[_O_d_free_t] + d]
                    s_kind = 0
                    s_arg = d
            active = False                    # a slot with a move: only then can a chunk, sync or timer be due
            for q in range(conc):
                if I[I[_O_s_mv] + q] >= 0:
                    active = True
            if active:
                for j in range(nch):
                    if F[I[_O_c_ev_t] + j] < s_best:
                        s_best = F[I[_O_c_ev_t] + j]
                        s_kind = 1
                        s_arg = j
                for q in range(conc):
                    if F[I[_O_s_fin_t] + q] < s_best:
                        s_best = F[I[_O_s_fin_t] + q]
                        s_kind = 2
                        s_arg = q
                    if F[I[_O_s_sync_t] + q] < s_best:
                        s_best = F[I[_O_s_sync_t] + q]
                        s_kind = 3
                        s_arg = q
                    if F[I[_O_s_issue_t] + q] < s_best:
                        s_best = F[I[_O_s_issue_t] + q]
                        s_kind = 4
                        s_arg = q
        best, kind, arg = s_best, s_kind, s_arg
        kk = I[SI + S_KK]
        if kk < K and (kk + 1) * F[F_TS] < best:
            best = (kk + 1) * F[F_TS]
            kind = 5
        iu = I[SI + S_IU]
        if iu < n and us.t[iu] < best:
            best = us.t[iu]
            kind = 7
        ib = I[SI + S_IB]
        if ib < nbg and bg.t[ib] < best:
            best = bg.t[ib]
            kind = 6
        if kind < 0:
            break
        now = best
        if kind <= 5:                         # every kind but user IO and background jobs changes the scanned times
            I[SI + S_DIRTY] = 1
        if kind == 0:
            d = arg
            p = I[I[_O_d_cur] + d]
            if p == -2:                               # the pieces started at arrival end: the queue's turn
                _start_next(I, F, d, now)
                continue
            pr = I[_O_p_rec] + _PR * p
            owner = I[pr + _P_OWN]
            if I[pr + _P_W] == 1 and I[pr + _P_ACK] == 1:
                F[I[_O_d_wc] + d] -= I[pr + _P_B]
            else:
                _owner_done(I, F, owner, now, now)
            I[pr + _P_NEXT] = I[SI + S_FREE]
            I[SI + S_FREE] = p
            _start_next(I, F, d, now)
        elif kind == 1:
            j = arg
            F[I[_O_c_ev_t] + j] = np.inf
            if I[I[_O_c_stage] + j] == 0:
                I[I[_O_c_stage] + j] = 1
                _chunk_stage(I, F, j, now)
            else:
                q = j // I[I_INFL]
                I[I[_O_c_used] + j] = 0
                I[I[_O_s_infl] + q] -= 1
                I[I[_O_s_done] + q] += 1
                nk = (I[I_UNIT] + I[I_CHUNK] - 1) // I[I_CHUNK]
                if I[I[_O_s_done] + q] == nk:
                    _begin_sync(I, F, q, now)
                else:
                    _issue_chunks(I, F, q, now)
        elif kind == 2:
            _finish_move(I, F, arg, now)
            _try_start(I, F, now)
        elif kind == 3:
            q = arg
            if now >= L:
                F[I[_O_s_sync_t] + q] = np.inf
            else:
                k = I[I[_O_s_sqi] + q]
                a = I[I[_O_s_sq0] + q] + k
                m = I[I[_O_s_mv] + q]
                owner = -(2 + q)
                I[I[_O_s_sqi] + q] = k + 1
                I[I[_O_s_spend] + q] += 1                 # a guard while it is enqueued
                if I[I[_O_lg_up] + m] == 1:
                    I[I[_O_s_spend] + q] += 1
                    dep = _ssd_job(I, F, now, I[I[_O_sq_sz] + a], _TRUE, _ZERO)
                    _owner_done(I, F, owner, dep, now)
                else:
                    _hdd_io(I, F, now, I[I[_O_sq_off] + a], I[I[_O_sq_sz] + a], _TRUE, owner, _ONE, -_ONE,
                            I[I_SEED], m * 4 + 2, k, -np.inf)
                nxt = F[I[_O_lg_tc] + m] + (k + 1) / F[F_SYNC]
                F[I[_O_s_sync_t] + q] = nxt if k + 1 < I[I[_O_s_sqn] + q] else np.inf
                _owner_done(I, F, owner, now, now)
        elif kind == 4:
            _issue_chunks(I, F, arg, now)
        elif kind == 5:
            _decide(I, F, ctrl, kk, now)
            I[SI + S_KK] = kk + 1
            _try_start(I, F, now)
        elif kind == 6:
            ib = I[SI + S_IB]
            I[SI + S_IB] = ib + 1
            if bg.dev[ib] == SSD:
                _ssd_job(I, F, now, bg.size[ib], bg.w[ib], _ZERO)
            else:
                _hdd_io(I, F, now, bg.off[ib], bg.size[ib], bg.w[ib], -_ONE, _ONE, I[_O_b_rot] + ib * nd, _ZERO,
                        _ZERO, _ZERO, -np.inf)
        else:
            I[SI + S_IU] = iu + 1
            F[F_NEXTU] = us.t[iu + 1] if iu + 1 < n else np.inf
            # the earliest a background piece can reach a disk (_hdd_io: a user piece that starts by then starts at
            # arrival): the next decision or background job and, with a move in flight or queued, the next disk,
            # chunk or slot event (only events of those kinds issue copies and syncs)
            guard = (kk + 1) * F[F_TS] if kk < K else np.inf
            if ib < nbg and bg.t[ib] < guard:
                guard = bg.t[ib]
            if (active or I[SI + S_HEAD] < I[SI + S_NLOG]) and s_best < guard:
                guard = s_best
            route[iu] = _user(I, F, iu, us.t[iu], us.off[iu], us.size[iu], us.w[iu], us.sub[iu], us.route[iu],
                              us.extra[iu], guard)
    for i in range(n):
        buf = route[i] == BUFFER
        resp[i] = F[F_BUFS] + F[F_DRV] if buf else F[I[_O_udone] + i] - us.t[i] + F[F_DRV]


# ----------------------------------------------------------------------------- Python side

def scaled_testbed(tb: Testbed, s: float) -> Testbed:
    """The testbed of a twin at scale ``s`` (module docstring): a twin has ``s`` times the IOs, of the same sizes,
    over sub-LUNs of ``s`` times the bytes. Every device time (seek, rotation, settle, cache hit, SSD and buffer
    times, driver, CFQ slice) / ``s``; byte rates x ``s``; the disk and its read cache x ``s`` (offsets and the
    footprint shrink with the twin); the sync rate x ``s`` (``s`` times the buffered writes). IO and chunk sizes
    stay, so every IO (a user IO, a copy chunk) takes 1 / ``s`` its scale-1 time: each disk carries its scale-1
    load, a sub-LUN copies in its scale-1 seconds, and responses are 1 / ``s`` those of scale 1."""
    s = float(s)
    if not (np.isfinite(s) and 0 < s <= 1):
        raise ValueError(f"load_scale must be in (0, 1]; got {s!r}")
    if s == 1.0:
        return tb
    h, d = tb.hdd, tb.ssd
    seg = int(h.cache_segment_bytes)
    hdd = dataclasses.replace(
        h, disk_bytes=max(int(h.disk_bytes * s), 1), seek_min_s=h.seek_min_s / s, seek_max_s=h.seek_max_s / s,
        rpm=h.rpm * s, write_settle_s=h.write_settle_s / s, media_bytes_per_s=h.media_bytes_per_s * s,
        seq_read_bytes_per_s=h.seq_read_bytes_per_s * s, seq_write_bytes_per_s=h.seq_write_bytes_per_s * s,
        cache_bytes=max(seg, int(h.cache_bytes * s) // seg * seg), cache_hit_s=h.cache_hit_s / s,
        bus_bytes_per_s=h.bus_bytes_per_s * s)
    ssd = dataclasses.replace(d, read_4k_s=d.read_4k_s / s, write_4k_s=d.write_4k_s / s,
                              read_bytes_per_s=d.read_bytes_per_s * s, write_bytes_per_s=d.write_bytes_per_s * s)
    return dataclasses.replace(tb, hdd=hdd, ssd=ssd, buffer_s=tb.buffer_s / s, driver_s=tb.driver_s / s,
                               cfq_slice_s=tb.cfq_slice_s / s, sync_max_iops=tb.sync_max_iops * s)


def _rngs(key):
    """The generators of the user and of the background rotational draws, as :func:`storage.serve` makes them."""
    return tuple(np.random.default_rng(np.asarray(jax.random.key_data(k)).ravel()) for k in jax.random.split(key))


def user_draws(tb: Testbed, key, n: int):
    """The rotational draws of ``n`` user requests and the seed of the background ones, exactly as
    :func:`tieringlab.models.storage.serve` draws them from ``key`` (common random numbers across policies)."""
    rng_user, rng_bg = _rngs(key)
    return rng_user.random((n, tb.hdd.n_disks)), rng_bg


def _log2(x: int) -> int:
    """log2(x) when ``x`` is a power of two, else -1 (:func:`_div`)."""
    x = int(x)
    return x.bit_length() - 1 if x > 0 and x & (x - 1) == 0 else -1


def _state(pool, ip, fp, nd, segs, C, channels, n, S, M, nch, conc, nsec_unit, nbuf, n_sec, K, nbg):
    """The flat state ``(I, F, view)`` of one run (the layout at :data:`SI`), with a piece pool of ``pool``."""
    sizes = dict(p_rec=_PR * pool, p_rot=pool,
                 q_head=2 * nd, q_tail=2 * nd, q_len=2 * nd, d_cur=nd, d_free_t=nd, d_eager_end=nd, d_head_end=nd,
                 d_first=nd, d_active=nd, d_slice0=nd, d_wc=nd, node_of=nd * segs * 2, l_prev=nd * C,
                 l_next=nd * C, l_key=nd * C,
                 l_head=nd, l_size=nd, chan_free=channels, udone=n, tier=S, busy=S,
                 streak=S, tmo=S, moving=S, lg_sub=M, lg_up=M, lg_tq=M, lg_ts=M, lg_tc=M, lg_te=M, lg_nbw=M,
                 lg_nsync=M, c_k=nch, c_stage=nch, c_pend=nch, c_done=nch, c_ev_t=nch, c_used=nch,
                 stamp=conc * nsec_unit, b_mv=nbuf, b_off=nbuf, b_sz=nbuf, sq_off=nbuf, sq_sz=nbuf, u_rot=n * nd,
                 b_rot=nbg * nd, util=nd * n_sec, uutil=nd * n_sec, ys_res=K, ys_hot=K)
    for f in _FIELDS:
        if f.startswith("s_"):
            sizes[f] = conc
    init = dict(q_head=-1, q_tail=-1, d_cur=-1, d_free_t=_INF, d_eager_end=-_INF, d_first=1, node_of=-1, l_prev=-1,
                l_next=-1, l_key=-1, l_head=-1, chan_free=-_INF, moving=-1, lg_sub=S, lg_tq=_INF,
                lg_ts=_INF, lg_tc=_INF, lg_te=_INF, s_mv=-1, s_issue_t=_INF, s_sync_t=_INF, s_fin_t=_INF, c_ev_t=_INF)
    I = np.zeros(SI + NS + sum(v for f, v in sizes.items() if f not in _FLOAT), np.int64)
    F = np.zeros(32 + sum(v for f, v in sizes.items() if f in _FLOAT), np.float64)
    I[:ip.size] = ip
    F[:fp.size] = fp
    nxt_i, nxt_f = SI + NS, 32
    view = {}
    for k, f in enumerate(_FIELDS):
        arr = F if f in _FLOAT else I
        pos = nxt_f if f in _FLOAT else nxt_i
        I[32 + k] = pos
        view[f] = arr[pos:pos + sizes[f]]
        if f in init:
            view[f][:] = init[f]
        if f in _FLOAT:
            nxt_f += sizes[f]
        else:
            nxt_i += sizes[f]
    # the pool: freed records on a list (S_FREE), the rest taken in order (S_POOLN), so that only the records
    # ever used are touched (np.zeros' pages are mapped when first written)
    I[SI + S_FREE] = -1
    I[SI + S_POOLN] = 0
    I[SI + S_POOLCAP] = pool
    return I, F, view


def simulate(tb: Testbed, key, rq, *, route=None, bg_hdd=None, bg_ssd=None, ssd_extra_bytes=None, ctrl=None,
             n_subluns: int = 1, sublun_bytes: int = 1, cap: int = 0, copy_s=(2.5, 6.5), t_s: int = 60,
             c: int = 3, o: int = 10, history: bool = False, evict: bool = False, skip_down: bool = False,
             conc: int = 1, start_at_arrival: bool = True):
    """Run the event simulation (module docstring) over the requests ``rq`` (:func:`.replay.replay`'s dict).

    ``route`` fixes every request's route (static placement, FlashCache, HDD only); else ``ctrl = (hot, hsum,
    cnt)`` (the monitor's matrices) drives OTF-AST's decisions with ``cap`` SSD sub-LUNs and the rest of
    Table 3's fields. ``bg_hdd`` / ``bg_ssd``: open-loop background jobs as for :func:`storage.serve`.
    ``start_at_arrival=False`` sends every piece through the disk queues (module docstring, "Pieces started at
    arrival"): the same result, more events; the tests compare the two.

    Returns a dict: ``response_s``, ``route``, ``hdd_util`` and ``hdd_user_util`` (mean over the disks, per
    second), ``hdd_cache_hits``, ``hdd_pieces`` (user pieces), ``hdd_pieces_at_arrival`` (user and background
    pieces started at arrival) and, with a controller, the move log (``sub, up, tq, ts, tc, te,
    nbw, nsync``, ``n_moves``) and the per-interval ``resident`` and ``n_hot``."""
    h, sd = tb.hdd, tb.ssd
    t = np.ascontiguousarray(rq["time"], np.float64)
    n = t.size
    L = float(rq["length_s"])
    n_sec = int(np.ceil(L))
    _, rng_bg = _rngs(key)
    seed = int(np.asarray(jax.random.key_data(key)).ravel()[-1]) & 0x7FFFFFFF
    controlled = route is None
    r_in = np.full(n, -1, np.int64) if controlled else np.asarray(route, np.int64)
    extra = np.zeros(n, np.int64) if ssd_extra_bytes is None else np.asarray(ssd_extra_bytes, np.int64)
    us = _Users(t, np.asarray(rq["offset"], np.int64), np.asarray(rq["size"], np.int64),
                np.asarray(rq["is_write"], np.bool_), np.asarray(rq["sub"], np.int64), r_in, extra)
    # open-loop background jobs, merged by time (HDD jobs' draws as storage.serve draws them)
    bh = bg_hdd or {"time": np.zeros(0), "offset": np.zeros(0, np.int64), "size": np.zeros(0, np.int64),
                    "is_write": np.zeros(0, bool)}
    bs = bg_ssd or {"time": np.zeros(0), "size": np.zeros(0, np.int64), "is_write": np.zeros(0, bool)}
    nh = np.asarray(bh["time"]).size
    bj, bd, _, _ = storage.raid0_pieces(h, bh["offset"], bh["size"])
    rot_h = np.zeros((nh, h.n_disks))
    rot_h[bj, bd] = rng_bg.random(bj.size)
    bt = np.r_[np.asarray(bh["time"], np.float64), np.asarray(bs["time"], np.float64)]
    bo = np.argsort(bt, kind="stable")
    ns = bt.size - nh
    bg = _Bg(bt[bo], np.r_[np.asarray(bh["offset"], np.int64), np.zeros(ns, np.int64)][bo],
             np.r_[np.asarray(bh["size"], np.int64), np.asarray(bs["size"], np.int64)][bo],
             np.r_[np.asarray(bh["is_write"], bool), np.asarray(bs["is_write"], bool)][bo],
             np.r_[np.full(nh, HDD, np.int64), np.full(ns, SSD, np.int64)][bo])
    rot_bg = np.r_[rot_h, np.zeros((ns, h.n_disks))][bo].ravel()
    S = int(n_subluns)
    if controlled:
        hot, hsum, cnt = (np.ascontiguousarray(a) for a in ctrl)
        K = hot.shape[0]
        hot = hot.astype(np.bool_)
        hsum = hsum.astype(np.int64)
        cnt = cnt.astype(np.int64)
    else:
        K = 0
        hot, hsum, cnt = np.zeros((0, S), np.bool_), np.zeros((0, S), np.int64), np.zeros((0, S), np.int64)
    M = 2 * K * S + 8 if controlled else 1
    nd = int(h.n_disks)
    unit = int(sublun_bytes)
    # hash slots per disk: 16x the LRU's nodes (64 KiB per disk at Table 1's cache). Measured 2026-11-27 on the
    # 2.8 M read-cache references of the src1_1 replay (OTF-AST, Table 3), ns per reference: 17.1 with 4x slots and
    # the product's bits 40+ as the slot, 13.6 with its top bits (_hslot), 10.3 / 9.3 / 9.2 with 8x / 16x / 32x
    segs = 1 << max(3, int(16 * h.cache_segments - 1).bit_length())
    C = int(h.cache_segments)
    infl = int(tb.copy_inflight)
    conc = int(conc) if controlled else 1
    # the piece pool: every user and background piece could wait at once (one per disk touched: pool_bound, worked
    # out only when a run needs it), and never more than n_disks per request (rough)
    other = nd * (conc * infl + 4) + (nd * int(us.w.sum()) if controlled else 0) + 16    # chunks, syncs

    def pool_bound():
        per_req = lambda off, sz: np.minimum((off + np.maximum(sz, 1) - 1) // h.stripe_bytes  # noqa: E731
                                             - off // h.stripe_bytes + 1, nd)
        return int(per_req(us.off, us.size).sum() + per_req(bg.off, bg.size).sum()) + other

    rough = nd * (n + bg.t.size) + other
    fp = np.zeros(25)
    fp[F_SHARE] = 1.0 / nd
    fp[[F_L, F_SMIN, F_SMAX, F_DISK, F_REV, F_MEDIA, F_SETTLE, F_SEQR, F_SEQW, F_HIT, F_BUS]] = [
        L, h.seek_min_s, h.seek_max_s, h.disk_bytes, h.rev_s, h.media_bytes_per_s, h.write_settle_s,
        h.seq_read_bytes_per_s, h.seq_write_bytes_per_s, h.cache_hit_s, h.bus_bytes_per_s]
    fp[[F_SSDFR, F_SSDFW, F_SSDR, F_SSDW, F_BUFS, F_DRV, F_SYNC, F_CUP, F_CDOWN, F_SLICE, F_TS, F_WCB]] = [
        sd.fixed_s("read"), sd.fixed_s("write"), sd.read_bytes_per_s / sd.channels, sd.write_bytes_per_s / sd.channels,
        tb.buffer_s, tb.driver_s, tb.sync_max_iops, copy_s[0], copy_s[1], tb.cfq_slice_s, float(t_s),
        h.write_cache_bytes]
    ip = np.array([nd, h.stripe_bytes, h.cache_segment_bytes, C, segs, sd.channels, unit, tb.copy_chunk_bytes, infl,
                   conc, int(cap), int(c), int(o), int(history), int(evict), int(skip_down),
                   int(tb.copy_scheduler == "cfq"), int(tb.hdd_write_cache), int(controlled), S, K, n_sec, M, seed,
                   _log2(h.cache_segment_bytes), _log2(h.stripe_bytes), _log2(nd), 64 - _log2(segs),
                   int(start_at_arrival)], np.int64)
    nsec_unit = unit // SECTOR if controlled else 0
    nbuf = n + 1 if controlled else 1                 # the buffer's writes: OTF-AST's moves only
    nch = conc * infl
    # the pool is first allotted POOL_FIRST pieces (or the rough bound, when smaller), not the bound: the pieces
    # waiting at once are far fewer than the pieces, and the bound is ~9 words per piece of the trace (~350 MB of
    # address space at paper scale, growing with the trace; only the records used are touched since the pool is
    # taken in order, but an allocation that size may be refused); a run that exhausts it runs again on the
    # bound, from scratch (the same result: the pool's size changes no decision)
    size = min(rough, POOL_FIRST)
    while True:
        try:
            I, F, view = _state(size, ip, fp, nd, segs, C, int(sd.channels), n, S, M, nch, conc, nsec_unit, nbuf,
                                n_sec, K, bg.t.size)
            _rngs(key)[0].random(out=view["u_rot"].reshape(n, nd))     # the user draws, straight into the state
            view["b_rot"][:] = rot_bg
            resp, route_out = np.empty(n), np.empty(n, np.int64)
            _run(us, bg, _Ctrl(hot, hsum, cnt), I, F, resp, route_out)
            break
        except RuntimeError as exc:
            if "piece pool exhausted" not in str(exc) or size == rough:
                raise
            bound = pool_bound()
            if bound <= size:
                raise
            size = bound
    nm = int(I[SI + S_NLOG])
    st = _View(view, nm)
    si = I[SI:SI + NS]
    util, uutil = (_disk_sum(x, nd) for x in (st.util, st.uutil))
    return {"response_s": resp, "route": route_out, "hdd_util": util, "hdd_user_util": uutil,
            "hdd_cache_hits": int(si[S_CHITS]), "hdd_pieces": int(si[S_UPIECES]),
            "hdd_pieces_at_arrival": int(si[S_EARLY]), "n_moves": nm,
            "log": {"sub": st.lg_sub[:nm], "up": st.lg_up[:nm].astype(bool), "tq": st.lg_tq[:nm],
                    "ts": st.lg_ts[:nm], "tc": st.lg_tc[:nm], "te": st.lg_te[:nm], "nbw": st.lg_nbw[:nm],
                    "nsync": st.lg_nsync[:nm]},
            "resident": st.ys_res, "n_hot": st.ys_hot}


def _disk_sum(per_disk, nd):
    """The disks' per-second utilization rows (each disk's added in its own service order) summed in disk order:
    a sum that does not depend on the order the simulation meets pieces of different disks."""
    rows = per_disk.reshape(nd, -1)
    out = rows[0].copy()
    for k in range(1, nd):
        out += rows[k]
    return out


def no_load_copy_times(tb: Testbed, unit_bytes: int, copy_s=(0.0, 0.0), key=None) -> dict[str, float]:
    """A copy of one sub-LUN of ``unit_bytes`` with no user IO, up and down, through the event simulation
    (Table 1, C13): its measured copy time in seconds (``copy_s``: the throttle, 0 = none)."""
    key = jax.random.key(0) if key is None else key
    # one sub-LUN, hot in the first of 1-s intervals only: promoted at 1 s, demoted at the first decision after
    S, K = 1, int(np.ceil(2 * max(copy_s) + 2 * no_load_bound(tb, unit_bytes))) + 4
    hot = np.zeros((K, S), bool)
    hot[0] = True
    rq = {"time": np.zeros(0), "offset": np.zeros(0, np.int64), "size": np.zeros(0, np.int64),
          "is_write": np.zeros(0, bool), "sub": np.zeros(0, np.int64), "length_s": float(K)}
    r = simulate(tb, key, rq, ctrl=(hot, np.zeros((K, S), np.int64), np.ones((K, S), np.int64)), n_subluns=S,
                 sublun_bytes=unit_bytes, cap=1, copy_s=copy_s, t_s=1, c=1, o=1)
    lg = r["log"]
    out = {}
    for d, up in (("up", True), ("down", False)):
        k = np.flatnonzero(lg["up"] == up)[0]
        out[d] = float(lg["tc"][k] - lg["ts"][k])
    return out


def no_load_bound(tb: Testbed, unit_bytes: int) -> float:
    """A generous bound (s) on a no-load copy of ``unit_bytes``: every chunk served alone, side by side."""
    h = tb.hdd
    nk = -(-int(unit_bytes) // int(tb.copy_chunk_bytes))
    per = tb.copy_chunk_bytes * (1.0 / min(h.seq_read_bytes_per_s, h.seq_write_bytes_per_s)
                                 + tb.ssd.channels / min(tb.ssd.read_bytes_per_s, tb.ssd.write_bytes_per_s))
    return nk * (per + h.seek_max_s + h.rev_s)
