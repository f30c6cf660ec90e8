"""Native (numba) event engine of the multi-tier storage simulator of :mod:`tieringlab.policies.lmst`.

What it simulates (thesis Sec. 4.1.2-4.1.3; the readings are documented in ``lmst``): ``m`` disks, each a
single non-preemptive server over priority buffers (Fig. 12): class 0 = SLA^H application I/Os, class 1
= SLA^L application I/Os, class 2 = migration I/Os (LMST: "migration I/Os always have the lowest
priority"), class 3 = SMST's suspended I/Os (application I/Os that arrive at the source for the ALUN
being migrated, served after the migration I/Os). FIFO inside a class. When a disk frees at ``f`` it
takes, among the I/Os that arrived by ``tau = max(f, earliest waiting arrival)``, the head of the
smallest class: the rule of :func:`tieringlab.models.queueing.priority_departure_times` (NMST's per-disk
responses equal it bit for bit). A migration copies its ALUN in chunks, closed loop: read a chunk at the
source (class 2), then write it at the destination (class 2), then the next chunk; at the last write the
ALUN's mapping switches to the destination (cutover). Application I/Os are routed to the disk their ALUN
maps to at arrival; at equal times, arrivals come first, then chunk completions, then migration starts,
then the disks' choices.

Why compiled: the disks are coupled by the migration loops and by remapping, the queue is sequential by
nature, and a paper-scale run has ~2.4 x 10^8 I/Os (70 GB) to ~4 x 10^8 (100 GB): a compiled loop spends
tens of nanoseconds per I/O where XLA's CPU backend spends microseconds per scan step. The controller
(Eqs. 3-17) stays JAX array code in ``lmst``; this engine only executes its plan.

How: arrivals come as one stream sorted by time (the workload generator draws the ALUNs' processes by
superposition, so nothing is merged here). A disk that takes part in no migration is independent of the
others, so it is evaluated **lazily**: its choices before ``t`` are made only when an I/O arrives for it
at ``t`` (or at the window's end), from its free time and its FIFO buffers, and an I/O's response is
known the moment it starts (no preemption). Only the disks of running migrations are advanced **eagerly**,
choice by choice in time order with the chunk hand-offs between them. So an I/O costs one routing, one
enqueue and one choice, and no global event queue.

**Arrivals only.** Once no migration runs and none can start in the window (none active and no scheduling
pending: after the window's last cutover, or from the start of a window without plans), nothing but
arrivals happens until the window's end, every disk is lazy and holds only SLA^H and SLA^L buffers (checked):
:func:`_arrivals_only` runs that rest of the window as a plain loop over the arrivals, without the checks for
migrations and eager events, with the common case (nothing buffered at the disk, an I/O that commits) in one
branch and the catch-ups specialised to the two classes (:func:`_catch_up_lazy`). The same operations in the
same order, so the numbers are equal bit for bit (the tests' event-by-event references run through it). It
is most of a paper-scale window: in one replication of the focus cell (70 GB / 50 %, windows 1, 3, 6) the
migrations end 60-190 s into the 1,200 s window, with 5-17 % of its I/Os; the rest costs 19-30 ns per I/O in
the general loop, 15-23 here (the migration phase 30-80). The generic loop's cost is its branches (the
disk and class of an arrival are coin flips to the CPU), not its loads: an instruction-level profile of
the kernel (perf, timer samples) is flat over the arrival path, and variants that keep it but change the
layout (flat per-disk arrays with constant strides, per-ALUN metric offsets), defer an idle disk's SLA^L
I/O's metrics instead of buffering it, or use numpy's error model measured within noise (+-10 %).

**Commit at arrival.** An I/O that nothing can ever overtake is started the moment it arrives, at ``max(t,
free)``, without entering a buffer: an SLA^H I/O when no SLA^H I/O is buffered there (SLA^H is the top class
and FIFO, and the disk's earlier choices are made first: a lazy disk catches up, a migrating disk has made
them already, since the arrivals run only up to its next choice), and an SLA^L I/O on a disk that holds no
SLA^H data, is the destination of no running SLA^H migration, and has nothing buffered (SMST's suspended I/Os
are never committed). A disk carries the committed work in its free time, and its migration I/Os (the lowest
class) wait for it as they would for buffered I/Os; so an I/O committed before a migration onto the disk
starts has started before its last chunk write, hence before the cutover. SLA^L I/Os that arrive *during* an
SLA^H ALUN's migration are not committed: those that arrive while its last chunk is being written would start
one after another from the cutover on, and an SLA^H I/O that the cutover brings must overtake all but the
first (an earlier version committed them: at 600-900 I/O/s on the tests' 7-disk system with SLA^H moves, 11 of
32 runs differed from the event reference, up to 70 responses per run by up to 0.40 s; LMST's controller never
moves SLA^H ALUNs, so its results were not affected). Committing on migrating disks too (where, while a
forward migration runs, one of the two SSDs takes every SLA^H I/O of its ALUNs) took the ``lmst`` benchmark's
LMST run from 11.1 to 8.3 s (33 -> 25 ns per I/O on six 70 GB slots, NMST 21-25). The responses are those of
the buffered path bit for bit (tests compare both against an event-by-event reference); the sums of the
metrics may differ from it in the last bits (the same terms added in another order). Under NMST every I/O is
committed, so a disk costs what the Lindley recursion does.

**Reference counts.** The helpers are compiled with ``_nrt=False`` (they allocate nothing): inlined as
numba IR (``inline="always"``) or called with ~30 array arguments, they cost an atomic increment and
decrement of every array's reference count per call, most of the engine's time with reference counting on
(the README's ``lmst`` benchmark row has today's cost per I/O).

One call advances one window ``[t_start, t_end)``: it starts the window's planned migrations (list
scheduling: backward ones from the window start, then, once all of them are done, the forward ones; a
disk takes part in one migration at a time), makes every choice before ``t_end``, abandons the
candidates not started by then, and hands the application I/Os still waiting back as a *carry* (arrays in
queue order) for the next call. Disk, migration and metric state live in small arrays the caller keeps.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tieringlab import native

# classes of the per-disk buffers
H, L, MIG, SUSP = 0, 1, 2, 3
NCLS = 4
# dsf columns (per-disk float state): the time the server frees, a waiting migration chunk's arrival
F_FREE, F_MIGARR = 0, 1
# dsi columns (per-disk int state): the migration the disk takes part in (-1: none)
I_MIG = 0
# active-migration table columns; PEND: a chunk is in service, its hand-off at mig_f[k]
M_ALUN, M_SRC, M_DST, M_LEFT, M_STAGE, M_LOG, M_KIND, M_PEND = 0, 1, 2, 3, 4, 5, 6, 7
# metric columns per (app, window)
A_N, A_SUM, A_VIOL, A_EXCESS = 0, 1, 2, 3
# counters
C_LOG, C_MGR_N, C_MGR_SUM, C_BURST_IOS, C_BURST_SSD, C_STARTED, C_DONE, C_ABANDONED = 0, 1, 2, 3, 4, 5, 6, 7



class Carry(NamedTuple):
    """The application I/Os still waiting at a window's end, in queue order (one entry per I/O): the carry-out
    of :func:`advance` and the carry-in of its next call."""

    arr: np.ndarray      # arrival time (float64)
    size: np.ndarray     # bytes (float64)
    alun: np.ndarray     # ALUN (int64)
    disk: np.ndarray     # the disk whose buffer holds it (int64)
    cls: np.ndarray      # its buffer class: H, L or SUSP (int64)
    gid: np.ndarray      # its global I/O index (int64)
    flag: np.ndarray     # 1: arrived while its ALUN was being migrated (int64)


class State(NamedTuple):
    """A simulated system's state between calls of :func:`advance` (in/out; the caller allocates it)."""

    mapping: np.ndarray  # (n,) int64: the disk each ALUN maps to
    alun_mig: np.ndarray  # (n,) int64: the migration slot of each ALUN's running migration (-1: none)
    dsf: np.ndarray      # (m, 2) float64: per-disk float state (F_FREE, F_MIGARR)
    dsi: np.ndarray      # (m, 1) int64: per-disk int state (I_MIG)
    mig_i: np.ndarray    # (m, 8) int64: active-migration table (M_* columns; M_ALUN -1: free slot)
    mig_f: np.ndarray    # (m,) float64: a pending chunk's hand-off time per migration slot
    log_i: np.ndarray    # (L, 5) int64: migration log (window, ALUN, source, destination, kind)
    log_f: np.ndarray    # (L, 3) float64: migration log (start, end, estimate)
    app_w: np.ndarray    # (apps, windows, 4) float64: metrics per application and window (A_* columns)
    busy: np.ndarray     # (m, 2) float64: busy seconds per disk (application, migration I/Os)
    counters: np.ndarray  # (8,) float64: the C_* counters


#: The hot paths index with ``_U(i)`` (a no-op cast to unsigned) where ``i`` is known to be >= 0: numba
#: wraps a negative *signed* index (a compare and a select per index, which LLVM cannot drop for indices
#: loaded from arrays); unsigned indices skip it. Six 70 GB slots, one thread, the same run before -> after:
#: NMST 24.3 -> 17.6, LMST 31.4 -> 26.2, SMST 27.2 -> 24.7, look-ahead 36.1 -> 30.4 ns per I/O.
_U = np.uint64


@native.jit(_nrt=False)
def _arr(j, nc, c_arr, w_time):
    return c_arr[_U(j)] if j < nc else w_time[_U(j - nc)]


@native.jit(_nrt=False)
def _next_choice(d, head, nc, c_arr, w_time, dsf):
    """``tau``: when disk ``d`` next chooses an I/O (``max(free, earliest waiting arrival)``; inf: nothing)."""
    ud = _U(d)
    e = np.inf
    for c in range(NCLS):
        if c == MIG:
            continue
        h = head[ud, c]
        if h >= 0:
            a = _arr(h, nc, c_arr, w_time)
            if a < e:
                e = a
    if dsf[ud, F_MIGARR] < e:                      # NaN (no chunk) compares False
        e = dsf[ud, F_MIGARR]
    if e == np.inf:
        return np.inf
    f = dsf[ud, F_FREE]
    return f if f > e else e


@native.jit(_nrt=False)
def _serve(d, start, arr, size, a, w, g, keep, dsf, mu, busy, alun_app, alun_class, sla_s, app_w, resp_out, disk_out,
           horizon_s):
    """Application I/O ``g`` of ALUN ``a`` (arrived at ``arr``, window ``w``) starts on disk ``d`` at ``start``: the
    disk is busy for ``size / mu_{D_j}``, the response and the metrics of its application are final now.
    Returns the response."""
    ud = _U(d)
    end = start + size / mu[ud]                     # service time = size / mu_{D_j}
    dsf[ud, F_FREE] = end
    busy[ud, 0] += max(0.0, min(end, horizon_s) - start)
    r = end - arr
    ua = _U(a)
    app = _U(alun_app[ua])
    uw = _U(w)
    sla = sla_s[_U(alun_class[ua])]
    v = 1.0 if r > sla else 0.0                     # (branch-free: a violation is a coin flip to the CPU)
    app_w[app, uw, A_N] += 1.0
    app_w[app, uw, A_SUM] += r
    app_w[app, uw, A_VIOL] += v
    app_w[app, uw, A_EXCESS] += v * (r - sla)
    if keep:
        resp_out[_U(g)] = r
        disk_out[_U(g)] = d
    return r


@native.jit(_nrt=False)
def _choose(d, tau, head, tail, nxt, c_arr, c_size, w_time, w_size, j_alun, j_flag, dsf, dsi, mu, busy, mig_i,
            mig_f, alun_app, alun_class, sla_s, app_w, counters, c_gid, resp_out, disk_out, fpar, ipar):
    """Disk ``d`` chooses at ``tau``: the head of the best class that has arrived by ``tau`` (H, L, migration,
    SMST-suspended) starts; an application I/O's response and metrics are final now. ``fpar`` = (chunk
    bytes, horizon, slot length), ``ipar`` = (carry jobs, keep per-job outputs, first job's global id,
    window), packed to keep the argument list short."""
    chunk_bytes, horizon_s, slot_s = fpar[0], fpar[1], fpar[2]
    nc, keep, gid_base = ipar[0], ipar[1] != 0, ipar[2]
    ud = _U(d)
    for c in range(NCLS):                          # H, L, migration, SMST-suspended
        if c == MIG:
            if dsf[ud, F_MIGARR] <= tau:
                dsf[ud, F_MIGARR] = np.nan
                end = tau + chunk_bytes / mu[ud]
                dsf[ud, F_FREE] = end
                busy[ud, 1] += max(0.0, min(end, horizon_s) - tau)
                k = _U(dsi[ud, I_MIG])
                mig_i[k, M_PEND] = 1
                mig_f[k] = end
                return
            continue
        j = head[ud, c]
        if j < 0:
            continue
        arr = _arr(j, nc, c_arr, w_time)
        if arr > tau:
            continue
        uj = _U(j)
        head[ud, c] = nxt[uj]
        if nxt[uj] < 0:
            tail[ud, c] = -1
        w = ipar[3] if j >= nc else min(int(arr / slot_s), app_w.shape[1] - 1)   # the window it arrived in
        g = c_gid[uj] if j < nc else gid_base + (j - nc)
        r = _serve(d, tau, arr, c_size[uj] if j < nc else w_size[_U(j - nc)], j_alun[uj], w, g, keep, dsf, mu, busy,
                   alun_app, alun_class, sla_s, app_w, resp_out, disk_out, horizon_s)
        if j_flag[uj] == 1:
            counters[C_MGR_N] += 1
            counters[C_MGR_SUM] += r
        return


@native.jit(_nrt=False)
def _catch_up(d, t, head, tail, nxt, c_arr, c_size, w_time, w_size, j_alun, j_flag, dsf, dsi, mu, busy, mig_i, mig_f,
              alun_app, alun_class, sla_s, app_w, counters, c_gid, resp_out, disk_out, fpar, ipar):
    """Disk ``d`` makes every choice it has before ``t`` (a lazy disk when an I/O arrives for it, a disk that
    turns eager, every disk at the window's end)."""
    nc = ipar[0]
    while True:
        tau = _next_choice(d, head, nc, c_arr, w_time, dsf)
        if not tau < t:
            return
        _choose(d, tau, head, tail, nxt, c_arr, c_size, w_time, w_size, j_alun, j_flag, dsf, dsi, mu, busy, mig_i,
                mig_f, alun_app, alun_class, sla_s, app_w, counters, c_gid, resp_out, disk_out, fpar, ipar)


@native.jit(_nrt=False)
def _catch_up_lazy(d, t, head, tail, nxt, c_arr, c_size, w_time, w_size, j_alun, j_flag, dsf, mu, busy, alun_app,
                   alun_class, sla_s, app_w, counters, c_gid, resp_out, disk_out, fpar, ipar):
    """:func:`_catch_up` of a disk whose only buffered I/Os are SLA^H and SLA^L ones and which holds no migration
    chunk (a lazy disk: no migration, no SMST-suspended I/Os; the caller checks): the same choices, served in
    the same order, without the general loop over the classes and the chunk."""
    nc, keep, gid_base = ipar[0], ipar[1] != 0, ipar[2]
    horizon_s, slot_s = fpar[1], fpar[2]
    ud = _U(d)
    hH = head[ud, H]
    hL = head[ud, L]
    while True:
        eH = _arr(hH, nc, c_arr, w_time) if hH >= 0 else np.inf
        eL = _arr(hL, nc, c_arr, w_time) if hL >= 0 else np.inf
        e = eH if eH < eL else eL
        if e == np.inf:
            return
        f = dsf[ud, F_FREE]
        tau = f if f > e else e
        if not tau < t:
            return
        if hH >= 0 and eH <= tau:                  # the head of SLA^H if it has arrived by tau, else SLA^L's
            j = hH
            arr = eH
            hH = nxt[_U(j)]
            head[ud, H] = hH
            if hH < 0:
                tail[ud, H] = -1
        else:
            j = hL
            arr = eL
            hL = nxt[_U(j)]
            head[ud, L] = hL
            if hL < 0:
                tail[ud, L] = -1
        uj = _U(j)
        w = ipar[3] if j >= nc else min(int(arr / slot_s), app_w.shape[1] - 1)   # as _choose
        g = c_gid[uj] if j < nc else gid_base + (j - nc)
        r = _serve(d, tau, arr, c_size[uj] if j < nc else w_size[_U(j - nc)], j_alun[uj], w, g, keep, dsf, mu, busy,
                   alun_app, alun_class, sla_s, app_w, resp_out, disk_out, horizon_s)
        if j_flag[uj] == 1:
            counters[C_MGR_N] += 1
            counters[C_MGR_SUM] += r


@native.jit(_nrt=False)
def _arrivals_only(i_next, t_end, head, tail, nxt, c_arr, c_size, w_time, w_size, w_alun, j_alun, j_flag, mapping,
                   n_high, burst_count, fast, dsf, mu, busy, alun_app, alun_class, sla_s, app_w, counters, c_gid,
                   resp_out, disk_out, fpar, ipar):
    """The rest of a window once nothing but arrivals can happen (no migration runs and none can start: every
    disk is lazy, no I/O is SMST-suspended, no chunk waits): the arrival loop of :func:`advance`, the same
    operations in the same order, without its checks for migrations and eager events (the disks' catch-ups
    are :func:`_catch_up_lazy`). Returns (the next arrival, its burst I/Os, of which on SSDs)."""
    nc, keep, gid_base = ipar[0], ipar[1] != 0, ipar[2]
    horizon_s = fpar[1]
    w = ipar[3]
    nw = w_time.shape[0]
    n_burst_ios = 0
    n_burst_ssd = 0
    i = i_next
    while i < nw:
        t = w_time[_U(i)]
        if not t < t_end:
            break
        a = w_alun[_U(i)]
        ua = _U(a)
        d = mapping[ua]
        ud = _U(d)
        c = alun_class[ua]
        bc = np.int64(burst_count[ua])
        n_burst_ios += bc
        n_burst_ssd += bc & np.int64(fast[ud])
        hH = head[ud, H]
        hL = head[ud, L]
        # one branch for the common case (nothing buffered there and the I/O commits): the disk's state and the
        # I/O's class are coin flips to the CPU, and two branches on them mispredict more often than one
        if (hH < 0) & (hL < 0) & ((c == H) | (n_high[ud] == 0)):
            _serve(d, max(dsf[ud, F_FREE], t), t, w_size[_U(i)], a, w, gid_base + i, keep, dsf, mu, busy, alun_app,
                   alun_class, sla_s, app_w, resp_out, disk_out, horizon_s)
            i += 1
            continue
        if (hH >= 0) | (hL >= 0):
            _catch_up_lazy(d, t, head, tail, nxt, c_arr, c_size, w_time, w_size, j_alun, j_flag, dsf, mu, busy,
                           alun_app, alun_class, sla_s, app_w, counters, c_gid, resp_out, disk_out, fpar, ipar)
        if (head[ud, H] < 0) & ((c == H) | ((c == L) & (n_high[ud] == 0) & (head[ud, L] < 0))):
            _serve(d, max(dsf[ud, F_FREE], t), t, w_size[_U(i)], a, w, gid_base + i, keep, dsf, mu, busy, alun_app,
                   alun_class, sla_s, app_w, resp_out, disk_out, horizon_s)
        else:
            j = nc + i
            uj = _U(j)
            uc = _U(c)
            j_alun[uj] = a
            j_flag[uj] = 0
            nxt[uj] = -1
            if tail[ud, uc] < 0:
                head[ud, uc] = j
            else:
                nxt[_U(tail[ud, uc])] = j
            tail[ud, uc] = j
        i += 1
    return i, n_burst_ios, n_burst_ssd


@native.jit(nogil=True, cache=False)
def advance(t_start, t_end, slot_s, horizon_s,
            # window I/Os, one stream sorted by time, labelled by ALUN
            w_time, w_size, w_alun, gid_base,
            # carry-in (application I/Os waiting at t_start, in queue order): a Carry
            carry,
            # static system
            mu, fast, alun_class, alun_app, sla_s, smst, chunk_bytes, copy_bytes, burst_count,
            # plan of this window (backward first, then forward)
            p_alun, p_dst, p_kind, p_est, p_status, window,
            # state (in/out): a State
            state,
            # per-job outputs (length 0: not kept)
            resp_out, disk_out,
            # scratch of at least len(c_arr) + len(w_time) entries each, any contents (reused across calls)
            j_alun, j_flag, nxt):
    """Advance the simulation over ``[t_start, t_end)``; returns the carry-out arrays, in :class:`Carry`'s order
    (see module doc)."""
    c_arr, c_size, c_alun, c_disk, c_cls, c_gid, c_flag = carry
    mapping, alun_mig, dsf, dsi, mig_i, mig_f, log_i, log_f, app_w, busy, counters = state
    m = mu.shape[0]
    nc = c_arr.shape[0]
    nw = w_time.shape[0]
    J = nc + nw
    keep = resp_out.shape[0] > 0
    fpar = np.array([chunk_bytes, horizon_s, slot_s])
    ipar = np.array([nc, 1 if keep else 0, gid_base, min(window, app_w.shape[1] - 1)], np.int64)

    # job table: carry jobs 0..nc-1, then window jobs (routed at arrival); 7 bytes per job, written only for
    # the jobs that enter a buffer (the caller's scratch: a fresh table per call cost more in page faults
    # than the whole window's choices)
    if j_alun.shape[0] < J or j_flag.shape[0] < J or nxt.shape[0] < J:
        raise ValueError("advance: the scratch arrays are shorter than the carry plus the window's I/Os")
    head = np.full((m, NCLS), -1, np.int64)
    tail = np.full((m, NCLS), -1, np.int64)
    for j in range(nc):
        j_alun[j] = c_alun[j]
        j_flag[j] = c_flag[j]
        nxt[j] = -1
        d = c_disk[j]
        c = c_cls[j]
        if tail[d, c] < 0:
            head[d, c] = j
        else:
            nxt[tail[d, c]] = j
        tail[d, c] = j

    P = p_alun.shape[0]
    n_back = 0
    for q in range(P):
        if p_kind[q] == 0:
            n_back += 1
        p_status[q] = 0
    back_done = 0
    forward_phase = n_back == 0
    n_chunks = int(np.ceil(copy_bytes / chunk_bytes))
    n_active = 0
    for k in range(mig_i.shape[0]):
        if mig_i[k, M_ALUN] >= 0:
            n_active += 1

    # ALUNs of class H that map to each disk or are being migrated onto it: an SLA^L I/O may be committed at
    # arrival only where no SLA^H I/O can come before it starts. An SLA^H ALUN counts at its destination from
    # its migration's start (see "Commit" in the module doc), and at its source until the cutover.
    n_high = np.zeros(m, np.int64)
    for a in range(mapping.shape[0]):
        if alun_class[a] == H:
            n_high[mapping[a]] += 1
    for k in range(mig_i.shape[0]):                 # migrations running since an earlier window
        if mig_i[k, M_ALUN] >= 0 and alun_class[mig_i[k, M_ALUN]] == H:
            n_high[mig_i[k, M_DST]] += 1

    i_next = 0
    n_burst_ios = 0            # counters[C_BURST_IOS], [C_BURST_SSD] of this call (added at the end)
    n_burst_ssd = 0
    t_sched = t_start          # the scheduler runs at the window start and after every cutover
    while True:
        # ------------------------------------------------------------ next instant
        ta = w_time[i_next] if i_next < nw else np.inf
        te = np.inf            # eager events: chunk hand-offs and the choices of migrating disks
        if n_active > 0:
            for k in range(mig_i.shape[0]):
                if mig_i[k, M_ALUN] >= 0 and mig_i[k, M_PEND] == 1 and mig_f[k] < te:
                    te = mig_f[k]
            for d in range(m):
                if dsi[d, I_MIG] >= 0:
                    tau = _next_choice(d, head, nc, c_arr, w_time, dsf)
                    if tau < te:
                        te = tau
        t = min(ta, te, t_sched)
        if not t < t_end:
            break
        if n_active == 0 and t_sched == np.inf and _only_app_buffers(m, head, dsf):
            i_next, nb, nbs = _arrivals_only(i_next, t_end, head, tail, nxt, c_arr, c_size, w_time, w_size, w_alun,
                                             j_alun, j_flag, mapping, n_high, burst_count, fast, dsf, mu, busy,
                                             alun_app, alun_class, sla_s, app_w, counters, c_gid, resp_out, disk_out,
                                             fpar, ipar)
            n_burst_ios += nb
            n_burst_ssd += nbs
            continue
        # ------------------------------------------------------------ 1. arrivals at t (stream order)
        # With no scheduling pending, nothing but arrivals can happen before the next eager event ``te`` (a
        # chunk hand-off or a migrating disk's choice; inf when no migration runs) and ``t_end``: the loop
        # then takes the following arrivals too, each at its own time, without the steps below. An arrival
        # to a migrating disk may bring that disk's next choice forward: ``te_run`` follows it.
        te_run = te
        while i_next < nw:
            t_i = w_time[_U(i_next)]
            if t_i != t:
                if t_sched == np.inf and t_i < t_end and t_i < te_run:
                    t = t_i
                else:
                    break
            j_w = i_next
            i_next += 1
            a = w_alun[_U(j_w)]
            ua = _U(a)
            j = nc + j_w
            d = mapping[ua]
            ud = _U(d)
            c = alun_class[ua]
            flag = 0
            if alun_mig[ua] >= 0:
                flag = 1                            # arrived while its ALUN is being migrated (Mgr_Resp)
                if smst and d == mig_i[_U(alun_mig[ua]), M_SRC]:
                    c = SUSP                        # SMST: behind the migration I/Os at the source
            bc = np.int64(burst_count[ua])          # (branch-free: the ALUN of an arrival is a coin flip)
            n_burst_ios += bc
            n_burst_ssd += bc & np.int64(fast[ud])
            if dsi[ud, I_MIG] < 0:                  # a lazy disk: make its choices before t first
                if head[ud, H] >= 0 or head[ud, L] >= 0 or head[ud, SUSP] >= 0:    # (none without buffered I/Os)
                    _catch_up(d, t, head, tail, nxt, c_arr, c_size, w_time, w_size, j_alun, j_flag, dsf, dsi, mu,
                              busy, mig_i, mig_f, alun_app, alun_class, sla_s, app_w, counters, c_gid, resp_out,
                              disk_out, fpar, ipar)
            # (a migrating disk has made every choice before t: the arrivals run only up to its next one)
            # Commit at arrival (see "Commit" in the module doc): nothing can ever be chosen before this I/O
            # that is not chosen already, so its start is max(t, free) now and it never enters a buffer.
            # (evaluated without short-circuits: the class of an arrival is a coin flip to the CPU)
            if (head[ud, H] < 0) & ((c == H) | ((c == L) & (n_high[ud] == 0) & (head[ud, L] < 0)
                                               & (head[ud, SUSP] < 0))):
                r = _serve(d, max(dsf[ud, F_FREE], t), t, w_size[_U(j_w)], a, ipar[3], gid_base + j_w, keep, dsf, mu,
                           busy, alun_app, alun_class, sla_s, app_w, resp_out, disk_out, horizon_s)
                if flag:                                # an I/O to the ALUN being migrated (Mgr_Resp; rare,
                    counters[C_MGR_N] += 1              # so a predictable branch, not two adds per I/O)
                    counters[C_MGR_SUM] += r
                continue
            uj = _U(j)
            uc = _U(c)
            j_alun[uj] = a
            j_flag[uj] = flag
            nxt[uj] = -1
            if tail[ud, uc] < 0:
                head[ud, uc] = j
            else:
                nxt[_U(tail[ud, uc])] = j
            tail[ud, uc] = j
            if dsi[ud, I_MIG] >= 0:
                tau = _next_choice(d, head, nc, c_arr, w_time, dsf)
                if tau < te_run:
                    te_run = tau
        if n_active == 0 and t_sched != t:
            continue
        # ------------------------------------------------------------ 2. chunk hand-offs at t
        for k in range(mig_i.shape[0]):
            if mig_i[k, M_ALUN] < 0 or mig_i[k, M_PEND] == 0 or mig_f[k] != t:
                continue
            mig_i[k, M_PEND] = 0
            if mig_i[k, M_STAGE] == 0:              # read done at the source: write at the destination
                mig_i[k, M_STAGE] = 1
                dsf[mig_i[k, M_DST], F_MIGARR] = t
            else:                                   # write done at the destination
                mig_i[k, M_LEFT] -= 1
                if mig_i[k, M_LEFT] > 0:
                    mig_i[k, M_STAGE] = 0
                    dsf[mig_i[k, M_SRC], F_MIGARR] = t
                else:                               # cutover: the ALUN now maps to the destination
                    a = mig_i[k, M_ALUN]
                    s = mig_i[k, M_SRC]
                    dd = mig_i[k, M_DST]
                    mapping[a] = dd
                    if alun_class[a] == H:
                        n_high[s] -= 1              # (counted at dd since the migration started)
                    alun_mig[a] = -1
                    dsi[s, I_MIG] = -1
                    dsi[dd, I_MIG] = -1
                    li = mig_i[k, M_LOG]
                    log_f[li, 1] = t
                    counters[C_DONE] += 1
                    if mig_i[k, M_KIND] == 0 and log_i[li, 0] == window:
                        back_done += 1
                    mig_i[k, M_ALUN] = -1
                    n_active -= 1
                    if smst:                        # suspended I/Os rejoin their SLA buffer, arrival order
                        _merge_suspended(s, head, tail, nxt, c_arr, w_time, nc)
                    t_sched = t
        if not forward_phase and back_done == n_back and _all_started(p_status, p_kind, 0):
            forward_phase = True                    # every backward migration of the window is done
            t_sched = t
        # ------------------------------------------------------------ 3. migration scheduler (list scheduling)
        if t_sched == t:
            t_sched = np.inf
            for q in range(P):
                if p_status[q] != 0 or (p_kind[q] == 0) == forward_phase:
                    continue                        # backward first; forward only in the forward phase
                a = p_alun[q]
                s = mapping[a]
                dd = p_dst[q]
                if dsi[s, I_MIG] >= 0 or dsi[dd, I_MIG] >= 0 or alun_mig[a] >= 0:
                    continue                        # one migration per disk at a time
                for d in (s, dd):                   # the disks turn eager: bring them to t first
                    _catch_up(d, t, head, tail, nxt, c_arr, c_size, w_time, w_size, j_alun, j_flag, dsf, dsi, mu,
                              busy, mig_i, mig_f, alun_app, alun_class, sla_s, app_w, counters, c_gid, resp_out,
                              disk_out, fpar, ipar)
                slot = -1
                for k in range(mig_i.shape[0]):
                    if mig_i[k, M_ALUN] < 0:
                        slot = k
                        break
                li = int(counters[C_LOG])
                counters[C_LOG] += 1
                counters[C_STARTED] += 1
                log_i[li, 0] = window
                log_i[li, 1] = a
                log_i[li, 2] = s
                log_i[li, 3] = dd
                log_i[li, 4] = p_kind[q]
                log_f[li, 0] = t
                log_f[li, 1] = np.inf
                log_f[li, 2] = p_est[q]
                mig_i[slot, M_ALUN] = a
                mig_i[slot, M_SRC] = s
                mig_i[slot, M_DST] = dd
                mig_i[slot, M_LEFT] = n_chunks
                mig_i[slot, M_STAGE] = 0
                mig_i[slot, M_LOG] = li
                mig_i[slot, M_KIND] = p_kind[q]
                mig_i[slot, M_PEND] = 0
                n_active += 1
                alun_mig[a] = slot
                if alun_class[a] == H:              # its I/Os reach dd from the cutover on: no more L commits there
                    n_high[dd] += 1
                dsi[s, I_MIG] = slot
                dsi[dd, I_MIG] = slot
                dsf[s, F_MIGARR] = t                # the first chunk read arrives at the source now
                p_status[q] = 1
        # ------------------------------------------------------------ 4. the migrating disks' choices at t
        for d in range(m):
            if dsi[d, I_MIG] < 0:
                continue
            while _next_choice(d, head, nc, c_arr, w_time, dsf) == t:
                _choose(d, t, head, tail, nxt, c_arr, c_size, w_time, w_size, j_alun, j_flag, dsf, dsi, mu,
                        busy, mig_i, mig_f, alun_app, alun_class, sla_s, app_w, counters, c_gid, resp_out, disk_out,
                        fpar, ipar)
                if dsf[d, F_FREE] > t:
                    break

    counters[C_BURST_IOS] += n_burst_ios
    counters[C_BURST_SSD] += n_burst_ssd
    for q in range(P):
        if p_status[q] == 0:
            counters[C_ABANDONED] += 1
    # every disk makes its choices before t_end (the lazy ones have not yet)
    for d in range(m):
        _catch_up(d, t_end, head, tail, nxt, c_arr, c_size, w_time, w_size, j_alun, j_flag, dsf, dsi, mu,
                  busy, mig_i, mig_f, alun_app, alun_class, sla_s, app_w, counters, c_gid, resp_out, disk_out,
                  fpar, ipar)

    # ---------------------------------------------------------------- carry-out, in queue order
    n_out = 0
    for d in range(m):
        for c in range(NCLS):
            j = head[d, c]
            while j >= 0:
                n_out += 1
                j = nxt[j]
    o_arr = np.empty(n_out)
    o_size = np.empty(n_out)
    o_alun = np.empty(n_out, np.int64)
    o_disk = np.empty(n_out, np.int64)
    o_cls = np.empty(n_out, np.int64)
    o_gid = np.empty(n_out, np.int64)
    o_flag = np.empty(n_out, np.int64)
    o = 0
    for d in range(m):
        for c in range(NCLS):
            j = head[d, c]
            while j >= 0:
                if j < nc:
                    o_arr[o] = c_arr[j]
                    o_size[o] = c_size[j]
                    o_gid[o] = c_gid[j]
                else:
                    o_arr[o] = w_time[j - nc]
                    o_size[o] = w_size[j - nc]
                    o_gid[o] = gid_base + (j - nc)
                o_alun[o] = j_alun[j]
                o_disk[o] = d
                o_cls[o] = c
                o_flag[o] = j_flag[j]
                o += 1
                j = nxt[j]
    return o_arr, o_size, o_alun, o_disk, o_cls, o_gid, o_flag


@native.jit(nogil=True, cache=False)
def advance_quiet(t_end, horizon_s, w_time, w_size, w_alun, gid_base, window, mu, fast, alun_class, alun_app, sla_s,
                  burst_count, mapping, dsf, app_w, busy, counters, resp_out, disk_out):
    """:func:`advance` over a window in which nothing can be buffered, as a Lindley recursion per disk: no
    planned or running migration, no carry-in, and no disk that holds both classes (the caller checks all
    three; NMST's every window under the thesis' layout). Then :func:`advance` commits every I/O
    at arrival (an SLA^H I/O always, an SLA^L one on a disk without SLA^H data): this loop makes the same
    operations on the same state in the same order (the numbers are equal bit for bit, a test checks) without
    the buffers, the event loop and the migration checks (8.3-8.8 against 10.8-16.9 ns per I/O on a
    paper-scale 70 GB slot, three runs on a loaded machine).
    Returns the (empty) carry-out, as :func:`advance`."""
    n_burst_ios = 0
    n_burst_ssd = 0
    keep = resp_out.shape[0] > 0
    w = min(window, app_w.shape[1] - 1)
    uw = _U(w)
    for i in range(w_time.shape[0]):
        t = w_time[_U(i)]
        if not t < t_end:
            break
        a = w_alun[_U(i)]
        ua = _U(a)
        d = mapping[ua]
        ud = _U(d)
        bc = np.int64(burst_count[ua])
        n_burst_ios += bc
        n_burst_ssd += bc & np.int64(fast[ud])
        start = max(dsf[ud, F_FREE], t)
        end = start + w_size[_U(i)] / mu[ud]          # as _serve
        dsf[ud, F_FREE] = end
        busy[ud, 0] += max(0.0, min(end, horizon_s) - start)
        r = end - t
        app = _U(alun_app[ua])
        sla = sla_s[_U(alun_class[ua])]
        v = 1.0 if r > sla else 0.0
        app_w[app, uw, A_N] += 1.0
        app_w[app, uw, A_SUM] += r
        app_w[app, uw, A_VIOL] += v
        app_w[app, uw, A_EXCESS] += v * (r - sla)
        if keep:
            resp_out[_U(gid_base + i)] = r
            disk_out[_U(gid_base + i)] = d
    counters[C_BURST_IOS] += n_burst_ios
    counters[C_BURST_SSD] += n_burst_ssd
    e = np.empty(0)
    ei = np.empty(0, np.int64)
    return e, e.copy(), ei, ei.copy(), ei.copy(), ei.copy(), ei.copy()


@native.jit(_nrt=False)
def _only_app_buffers(m, head, dsf):
    """No SMST-suspended I/O and no waiting chunk on any disk (so with no migration running, every buffered I/O is
    SLA^H or SLA^L: :func:`_arrivals_only`'s premise, checked rather than assumed)."""
    for d in range(m):
        if head[d, SUSP] >= 0 or not np.isnan(dsf[d, F_MIGARR]):
            return False
    return True


@native.jit(_nrt=False)
def _all_started(p_status, p_kind, kind):
    for q in range(p_status.shape[0]):
        if p_kind[q] == kind and p_status[q] == 0:
            return False
    return True


@native.jit(_nrt=False)
def _merge_suspended(s, head, tail, nxt, c_arr, w_time, nc):
    """SMST cutover at source ``s``: the suspended I/Os (class 3) rejoin class L, merged by arrival (then job
    index, which is arrival order inside a class)."""
    a3 = head[s, SUSP]
    if a3 < 0:
        return
    a1 = head[s, L]
    new_head = -1
    last = -1
    while a1 >= 0 or a3 >= 0:
        take3 = False
        if a1 < 0:
            take3 = True
        elif a3 >= 0:
            t1 = _arr(a1, nc, c_arr, w_time)
            t3 = _arr(a3, nc, c_arr, w_time)
            take3 = t3 < t1 or (t3 == t1 and a3 < a1)
        if take3:
            j = a3
            a3 = nxt[a3]
        else:
            j = a1
            a1 = nxt[a1]
        if last < 0:
            new_head = j
        else:
            nxt[last] = j
        last = j
    nxt[last] = -1
    head[s, L] = new_head
    tail[s, L] = last
    head[s, SUSP] = -1
    tail[s, SUSP] = -1
