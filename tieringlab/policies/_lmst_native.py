"""Native (numba) event engine of the multi-tier storage simulator of :mod:`tieringlab.policies.lmst`.

What it simulates (thesis Sec. 4.1.2-4.1.3; the readings are documented in ``lmst``): ``m`` disks, each a
single non-preemptive server over priority buffers (Fig. 12): class 0 = SLA^H application I/Os, class 1
= SLA^L application I/Os, class 2 = migration I/Os (LMST: "migration I/Os always have the lowest
priority"), class 3 = SMST's suspended I/Os (application I/Os that arrive at the source for the ALUN
being migrated, served after the migration I/Os). FIFO inside a class. When a disk frees at ``t`` it
takes the head of the smallest non-empty class among the I/Os that arrived by ``t``; arrivals at ``t``
are queued before the completions at ``t`` are processed, so the rule is exactly that of
:func:`tieringlab.models.queueing.priority_departure_times` (and NMST's per-disk responses equal it bit
for bit). A migration copies its ALUN in chunks, closed loop: read a chunk at the source (class 2), then
write it at the destination (class 2), then the next chunk; at the last write the ALUN's mapping switches
to the destination (cutover). Application I/Os are routed to the disk their ALUN maps to at arrival.

Why compiled: the disks are coupled by the migration loops and by remapping, the queue is sequential by
nature, and a paper-scale run has ~2.4 x 10^8 I/Os (70 GB) to ~4 x 10^8 (100 GB): a compiled event loop
spends tens of nanoseconds per I/O where XLA's CPU backend spends microseconds per scan step. The
controller (Eqs. 3-17) stays JAX array code in ``lmst``; this engine only executes its plan.

Arrivals come as one stream sorted by time (the workload generator draws the ALUNs' processes by
superposition, so nothing is merged here); equal times are taken in stream order.

One call advances one window ``[t_start, t_end)``: it starts the window's planned migrations (list
scheduling: backward ones from the window start, then, once all of them are done, the forward ones; a
disk takes part in one migration at a time), processes every event before ``t_end``, abandons the
candidates not started by then, and hands the application I/Os still in the system back as a *carry*
(arrays in queue order) for the next call. Disk, migration and metric state live in small arrays the
caller keeps between calls.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# classes of the per-disk buffers
H, L, MIG, SUSP = 0, 1, 2, 3
NCLS = 4
# dsf columns (per-disk float state)
F_START, F_END, F_MIGARR = 0, 1, 2
# dsi columns (per-disk int state)
I_KIND, I_JOB, I_MIG = 0, 1, 2
KIND_IDLE, KIND_APP, KIND_MIG = 0, 1, 2
# active-migration table columns
M_ALUN, M_SRC, M_DST, M_LEFT, M_STAGE, M_LOG, M_KIND = 0, 1, 2, 3, 4, 5, 6
# metric columns per (app, window)
A_N, A_SUM, A_VIOL, A_EXCESS = 0, 1, 2, 3
# counters
C_LOG, C_MGR_N, C_MGR_SUM, C_BURST_IOS, C_BURST_SSD, C_STARTED, C_DONE, C_ABANDONED = 0, 1, 2, 3, 4, 5, 6, 7


@njit(inline="always")
def _push_job(j, d, c, head, tail, nxt):
    nxt[j] = -1
    if tail[d, c] < 0:
        head[d, c] = j
    else:
        nxt[tail[d, c]] = j
    tail[d, c] = j


@njit(nogil=True, cache=False)
def advance(t_start, t_end, slot_s, horizon_s,
            # window I/Os, one stream sorted by time, labelled by ALUN
            w_time, w_size, w_alun, gid_base,
            # carry-in (application I/Os in the system at t_start, in queue order)
            c_arr, c_size, c_alun, c_disk, c_cls, c_gid, c_flag,
            # static system
            mu, fast, alun_class, alun_app, sla_s, smst, chunk_bytes, copy_bytes, burst_count,
            # plan of this window (backward first, then forward)
            p_alun, p_dst, p_kind, p_est, p_status, window,
            # state (in/out)
            mapping, alun_mig, dsf, dsi, mig_i, mig_f, log_i, log_f, app_w, busy, counters,
            # per-job outputs (length 0: not kept)
            resp_out, disk_out):
    """Advance the simulation over ``[t_start, t_end)``; returns the carry-out arrays (see module doc)."""
    m = mu.shape[0]
    n_alun = mapping.shape[0]
    nc = c_arr.shape[0]
    nw = w_time.shape[0]
    J = nc + nw
    keep = resp_out.shape[0] > 0
    n_w = app_w.shape[1]

    # job table: carry jobs 0..nc-1, then window jobs (routed at arrival)
    # (9 bytes per job: a paper-scale window holds ~10^7 I/Os)
    j_alun = np.empty(J, np.int16)
    j_disk = np.empty(J, np.int8)
    j_cls = np.empty(J, np.int8)
    j_flag = np.zeros(J, np.int8)
    nxt = np.full(J, -1, np.int32)
    head = np.full((m, NCLS), -1, np.int64)
    tail = np.full((m, NCLS), -1, np.int64)
    for j in range(nc):
        j_alun[j] = c_alun[j]
        j_disk[j] = c_disk[j]
        j_cls[j] = c_cls[j]
        j_flag[j] = c_flag[j]
    in_service = np.zeros(J, np.bool_)
    for d in range(m):
        if dsi[d, I_KIND] == KIND_APP:
            in_service[dsi[d, I_JOB]] = True
    for j in range(nc):
        if not in_service[j]:
            _push_job(j, c_disk[j], c_cls[j], head, tail, nxt)

    i_next = 0                 # next window I/O to arrive (the stream is in time order)

    # plan bookkeeping
    P = p_alun.shape[0]
    n_back = 0
    for q in range(P):
        if p_kind[q] == 0:
            n_back += 1
        p_status[q] = 0
    back_done = 0
    forward_phase = n_back == 0
    n_chunks = int(np.ceil(copy_bytes / chunk_bytes))

    t = t_start
    t_sched = t_start          # the scheduler runs at the window start and after every cutover
    dirty = np.ones(m, np.bool_)   # disks whose queue or server changed at t (only they may start an I/O)
    while True:
        # ------------------------------------------------------------ next event time
        ta = w_time[i_next] if i_next < nw else np.inf
        td = np.inf
        for d in range(m):
            if dsi[d, I_KIND] != KIND_IDLE and dsf[d, F_END] < td:
                td = dsf[d, F_END]
        t_next = min(ta, td, t_sched)
        if not t_next < t_end:
            break
        t = t_next
        # ------------------------------------------------------------ 1. all arrivals at t (stream order)
        while i_next < nw and w_time[i_next] == t:
            j_w = i_next
            i_next += 1
            a = w_alun[j_w]
            j = nc + j_w
            d = mapping[a]
            c = alun_class[a]
            flag = 0
            if alun_mig[a] >= 0:
                flag = 1                            # arrived while its ALUN is being migrated (Mgr_Resp)
                if smst and d == mig_i[alun_mig[a], M_SRC]:
                    c = SUSP                        # SMST: behind the migration I/Os at the source
            if burst_count[a]:
                counters[C_BURST_IOS] += 1
                if fast[d]:
                    counters[C_BURST_SSD] += 1
            j_alun[j] = a
            j_disk[j] = d
            j_cls[j] = c
            j_flag[j] = flag
            _push_job(j, d, c, head, tail, nxt)
            dirty[d] = True
        # ------------------------------------------------------------ 2. completions at t
        for d in range(m):
            if dsi[d, I_KIND] == KIND_IDLE or dsf[d, F_END] != t:
                continue
            dirty[d] = True
            if dsi[d, I_KIND] == KIND_APP:
                j = dsi[d, I_JOB]
                arr = c_arr[j] if j < nc else w_time[j - nc]
                r = t - arr
                a = j_alun[j]
                app = alun_app[a]
                w = int(arr / slot_s)
                if w > n_w - 1:
                    w = n_w - 1
                sla = sla_s[alun_class[a]]
                app_w[app, w, A_N] += 1.0
                app_w[app, w, A_SUM] += r
                if r > sla:
                    app_w[app, w, A_VIOL] += 1.0
                    app_w[app, w, A_EXCESS] += r - sla
                if j_flag[j] == 1:
                    counters[C_MGR_N] += 1
                    counters[C_MGR_SUM] += r
                if keep:
                    g = c_gid[j] if j < nc else gid_base + (j - nc)
                    resp_out[g] = r
                    disk_out[g] = d
                dsi[d, I_KIND] = KIND_IDLE
            else:                                   # a migration chunk finished here
                dsi[d, I_KIND] = KIND_IDLE
                k = dsi[d, I_MIG]
                if mig_i[k, M_STAGE] == 0:          # read done at the source: write at the destination
                    mig_i[k, M_STAGE] = 1
                    dsf[mig_i[k, M_DST], F_MIGARR] = t
                    dirty[mig_i[k, M_DST]] = True
                else:                               # write done at the destination
                    mig_i[k, M_LEFT] -= 1
                    if mig_i[k, M_LEFT] > 0:
                        mig_i[k, M_STAGE] = 0
                        dsf[mig_i[k, M_SRC], F_MIGARR] = t
                        dirty[mig_i[k, M_SRC]] = True
                    else:                           # cutover: the ALUN now maps to the destination
                        a = mig_i[k, M_ALUN]
                        s = mig_i[k, M_SRC]
                        dd = mig_i[k, M_DST]
                        mapping[a] = dd
                        alun_mig[a] = -1
                        dsi[s, I_MIG] = -1
                        dsi[dd, I_MIG] = -1
                        li = mig_i[k, M_LOG]
                        log_f[li, 1] = t
                        counters[C_DONE] += 1
                        if mig_i[k, M_KIND] == 0 and log_i[li, 0] == window:
                            back_done += 1
                        mig_i[k, M_ALUN] = -1
                        if smst:                    # suspended I/Os rejoin their SLA buffer, arrival order
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
                mig_f[slot] = t
                alun_mig[a] = slot
                dsi[s, I_MIG] = slot
                dsi[dd, I_MIG] = slot
                dsf[s, F_MIGARR] = t                # the first chunk read arrives at the source now
                dirty[s] = True
                p_status[q] = 1
        # ------------------------------------------------------------ 4. idle disks take their next I/O
        for d in range(m):
            if dirty[d] and dsi[d, I_KIND] == KIND_IDLE:
                _dispatch(d, t, head, tail, nxt, c_size, w_size, nc, dsf, dsi, mu, chunk_bytes, busy, horizon_s)
            dirty[d] = False

    for q in range(P):
        if p_status[q] == 0:
            counters[C_ABANDONED] += 1

    # ---------------------------------------------------------------- carry-out, in queue order
    n_out = 0
    for d in range(m):
        if dsi[d, I_KIND] == KIND_APP:
            n_out += 1
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
        order_start = o
        if dsi[d, I_KIND] == KIND_APP:
            o = _emit(dsi[d, I_JOB], o, o_arr, o_size, o_alun, o_disk, o_cls, o_gid, o_flag, c_arr, c_size, c_gid,
                      w_time, w_size, nc, gid_base, j_alun, j_disk, j_cls, j_flag)
            dsi[d, I_JOB] = order_start
        for c in range(NCLS):
            j = head[d, c]
            while j >= 0:
                o = _emit(j, o, o_arr, o_size, o_alun, o_disk, o_cls, o_gid, o_flag, c_arr, c_size, c_gid,
                          w_time, w_size, nc, gid_base, j_alun, j_disk, j_cls, j_flag)
                j = nxt[j]
    return o_arr, o_size, o_alun, o_disk, o_cls, o_gid, o_flag


@njit
def _all_started(p_status, p_kind, kind):
    for q in range(p_status.shape[0]):
        if p_kind[q] == kind and p_status[q] == 0:
            return False
    return True


@njit
def _emit(j, o, o_arr, o_size, o_alun, o_disk, o_cls, o_gid, o_flag, c_arr, c_size, c_gid, w_time, w_size, nc,
          gid_base, j_alun, j_disk, j_cls, j_flag):
    if j < nc:
        o_arr[o] = c_arr[j]
        o_size[o] = c_size[j]
        o_gid[o] = c_gid[j]
    else:
        o_arr[o] = w_time[j - nc]
        o_size[o] = w_size[j - nc]
        o_gid[o] = gid_base + (j - nc)
    o_alun[o] = j_alun[j]
    o_disk[o] = j_disk[j]
    o_cls[o] = j_cls[j]
    o_flag[o] = j_flag[j]
    return o + 1


@njit(inline="always")
def _dispatch(d, t, head, tail, nxt, c_size, w_size, nc, dsf, dsi, mu, chunk_bytes, busy, horizon_s):
    """Disk ``d`` is idle at ``t``: start the head of its best non-empty class (H, L, migration, SMST-suspended)."""
    for c in range(NCLS):
        if c == MIG:
            if not np.isnan(dsf[d, F_MIGARR]):
                dsf[d, F_MIGARR] = np.nan
                svc = chunk_bytes / mu[d]
                dsi[d, I_KIND] = KIND_MIG
                dsf[d, F_START] = t
                dsf[d, F_END] = t + svc
                busy[d, 1] += max(0.0, min(t + svc, horizon_s) - t)
                return
            continue
        j = head[d, c]
        if j >= 0:
            head[d, c] = nxt[j]
            if head[d, c] < 0:
                tail[d, c] = -1
            svc = (c_size[j] if j < nc else w_size[j - nc]) / mu[d]     # service time = size / mu_{D_j}
            dsi[d, I_KIND] = KIND_APP
            dsi[d, I_JOB] = j
            dsf[d, F_START] = t
            dsf[d, F_END] = t + svc
            busy[d, 0] += max(0.0, min(t + svc, horizon_s) - t)
            return


@njit
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
            t1 = c_arr[a1] if a1 < nc else w_time[a1 - nc]
            t3 = c_arr[a3] if a3 < nc else w_time[a3 - nc]
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
