"""The scan engine of the ARA dispatcher (:mod:`tieringlab.policies.ara`): jobs in, departures out.

:mod:`tieringlab.policies.ara` holds the dispatcher's parameters, its policies' choice of ``K_j`` and the
per-job uniforms, and registers the systems; this module only runs the decided dispatch fast and exactly
(every result is bit-identical to the event-driven simulation the tests replay). Nothing here keeps state
between calls.

not depend on the sequential state is computed before the scan with array operations over windows and
blocks (never over jobs: arrivals are sorted, so a window's jobs are found by binary search): each
block's first job, number of jobs and whether it opens its window, and the leave-block table below.
One ``jax.lax.scan`` runs over the blocks, for R replications at once (state ``(N, R)``, replications
on the minor axis); each step reads its block's jobs straight from the job-order arrays (one slice for
a single replication, a gather of ``B x R`` jobs otherwise), and writes their departures back in job
order, so no job-sized array is copied into a block layout and back. Inside a block the assignment of
all ``B`` jobs is one array operation on the shared stale view, and the per-site Lindley recursion is
evaluated in the exact floating-point order of an event-driven simulator (for ``K = 1``, where a whole
block goes to one site, as ``B`` sweeps of one vector expression that XLA fuses into one kernel).
On the CPU backend the replications are split into one group per core (at least ``MIN_GROUP`` each)
and the groups' scans run concurrently; each replication's result is the same in any group.

Number in system at a refresh. A job that departs at ``d`` stops counting at the first refresh
instant ``w * D >= d``; its block index is looked up in a table (window -> first block of the first
nonempty window at or after it), and the job is entered into a calendar ``cal[block, site]`` (a
scatter-add of the block's jobs). The scan subtracts ``cal[c]`` from the running count at block ``c``
and copies the count into the view at a window's first block. No per-site queue of departure times,
no inner loop. The calendar spans the whole run when it fits in 256 MB; otherwise it is a ring of
``M`` blocks and, if a job ever leaves the view more than ``M`` blocks after it arrived, the run is
repeated with ``M`` doubled, so the counts are always exact.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from tieringlab.arrays import bucket

__all__ = ["window_index", "run_blocks", "MIN_GROUP", "RING_START"]


def window_index(arrivals: np.ndarray, delay: float) -> np.ndarray:
    """The refresh window of each job: the largest integer ``w`` with ``w * D <= a`` (in float64, so
    the refresh instant ``w * D`` computed anywhere never lies after the arrival)."""
    a = np.asarray(arrivals, np.float64)
    w = np.floor(a / delay).astype(np.int64)
    w = np.where((w + 1) * delay <= a, w + 1, w)
    return np.where(w * delay > a, w - 1, w)


def _step_cost(B: int, R: int, herd: bool) -> float:
    """Cost of one scan step (microseconds, CPU; fitted on N = 16 for B in 4..16, R in 1..32); it picks the
    block size ``benchmarks/bench_ara.py`` measures best (B = 16 for one replication, B = 8 for 16 and 32)."""
    if herd:
        return 1.2 + 0.25 * R + 0.03 * B * R + 0.002 * B * B * R
    return 1.0 + 0.22 * R + 0.16 * B * R + 0.02 * B * B


def _windows(a2: np.ndarray, delay: float):
    """The nonempty refresh windows of R replications: ``(rep, wf, st, cnt, Wt)``, one entry per nonempty
    window in (replication, window) order: its replication, window number, first job (index inside the
    replication) and number of jobs; ``Wt``: one more than the last window of any replication.

    Arrivals are sorted, so window ``w`` of a replication holds the jobs ``searchsorted(a, w * D) <= j <
    searchsorted(a, (w + 1) * D)`` (the same floats ``w * D`` as :func:`window_index`): one binary search
    per window, no pass over the jobs. When the windows far outnumber the jobs (tiny ``D``), the windows
    of the jobs are computed instead (:func:`window_index`) and compared with their neighbours.
    """
    R, n = a2.shape
    Wt = int(window_index(a2[:, -1], delay).max()) + 1
    if Wt <= 2 * n + 4096:
        edges = np.arange(Wt + 1) * float(delay)
        parts = []
        for r in range(R):  # a loop over replications (a few binary searches each), not over jobs
            ws = np.searchsorted(a2[r], edges, side="left")
            cnt = np.diff(ws)
            wf = np.flatnonzero(cnt)
            parts.append((np.full(wf.size, r), wf, ws[wf], cnt[wf]))
        rep, wf, st, cnt = (np.concatenate(x) for x in zip(*parts))
    else:
        w = window_index(a2, delay)
        new = np.ones((R, n), bool)
        new[:, 1:] = w[:, 1:] != w[:, :-1]
        rep, st = np.nonzero(new)
        wf = w[rep, st]
        nxt = np.append(st[1:], n)
        nxt[np.append(rep[1:] != rep[:-1], True)] = n
        cnt = nxt - st
    return rep.astype(np.int64), wf.astype(np.int64), st.astype(np.int64), cnt.astype(np.int64), Wt


def _plan(windows, R: int, n: int, delay: float, B: int, n_blocks: int | None) -> dict:
    """Blocks of at most ``B`` jobs inside one refresh window, for R replications (array code over the
    windows and blocks, none over the jobs). Per block ``(C, R)``: the index of its first job in the
    replication (``js``; padding blocks point past the last job), its number of jobs (``nval``) and
    whether it is its window's first block (``first``); the leave-block lookup. ``n``: jobs per
    replication."""
    rep, wf, st, cnt, Wt = windows
    nb = -(-cnt // B)                                               # blocks per window
    cs = np.cumsum(nb) - nb
    bs = cs - cs[np.searchsorted(rep, np.arange(R))][rep]            # first block of each window (per rep)
    # blocks rounded up to a size class (powers of two up to 64, then 8 sizes per octave), so runs of similar
    # length share one compiled scan; the extra blocks are empty and change nothing
    C = bucket(int(np.bincount(rep, weights=nb, minlength=R).max()), fine_above=64)
    if n_blocks is not None:
        if n_blocks < C:
            raise ValueError(f"n_blocks={n_blocks} is less than the {C} blocks these jobs need")
        C = int(n_blocks)
    wq = np.repeat(np.arange(st.size), nb)                          # window of each block
    k = np.arange(wq.size) - cs[wq]                                 # block index inside its window
    blk, rq = bs[wq] + k, rep[wq]
    nval = np.zeros((C, R), np.int32)
    first = np.zeros((C, R), bool)
    js = np.full((C, R), n, np.int32)
    nval[blk, rq] = np.minimum(B, cnt[wq] - k * B)
    first[blk, rq] = k == 0
    js[blk, rq] = st[wq] + k * B
    rows = max(64, 1 << int(Wt).bit_length())                       # rows padded: fewer compiles
    if Wt + 1 <= max(4 * C, 4096) or (R > 1 and rows * R * 4 <= _TAB_BYTES):
        # tab[w, r]: first block of the first nonempty window >= w (C: none); the departure d leaves the
        # view at window wl = min{w : w * D >= d}
        tab = np.full((rows, R), C, np.int32)
        tab[wf, rep] = bs
        lookup, use_table = np.minimum.accumulate(tab[::-1], axis=0)[::-1].copy(), True
    else:  # very many (mostly empty) windows: binary search over the blocks' refresh instants instead (see
        # _TAB_BYTES: faster for one replication, slower when replications are batched)
        g = np.full((C, R), np.inf)
        g[blk, rq] = wf[wq] * delay
        lookup, use_table = g, False
    return {"C": C, "nval": nval, "first": first, "js": js, "lookup": lookup, "use_table": use_table}


def _leave_table(d, tab, delay):
    """First block whose refresh instant ``w * D`` is >= ``d`` (the view no longer counts the job there):
    ``wl = min{w : fl(w * D) >= d}`` by a rounded division and two exact corrections, then the table."""
    Wt = tab.shape[0] - 1
    w = jnp.ceil(jnp.clip(d / delay, 0.0, Wt + 2.0)).astype(jnp.int32)
    w = jnp.where((w - 1).astype(jnp.float64) * delay >= d, w - 1, w)
    w = jnp.where(w.astype(jnp.float64) * delay < d, w + 1, w)
    return jnp.take_along_axis(tab, jnp.clip(w, 0, Wt), axis=0)


def _leave_search(d, g):
    """First block ``c`` with refresh instant ``g[c] >= d``, per replication (unrolled binary search)."""
    C = g.shape[0]
    lo = jnp.zeros(d.shape, jnp.int32)
    hi = jnp.full(d.shape, C, jnp.int32)
    for _ in range(int(np.ceil(np.log2(C + 1)))):
        mid = (lo + hi) // 2
        right = jnp.take_along_axis(g, jnp.minimum(mid, C - 1), axis=0) < d
        lo = jnp.where(right, mid + 1, lo)
        hi = jnp.where(right, hi, mid)
    return lo


@partial(jax.jit, static_argnames=("n_sites", "block", "cal_len", "herd", "use_rank", "use_table", "want_site",
                                   "want_dep"))
def _run_blocks(a, s, pick, js, nval, first, lookup, delay, *, n_sites, block, cal_len, herd, use_rank, use_table,
                want_site, want_dep):
    """The scan over blocks for R replications at once (one scan, replications on the minor axis).

    ``a, s, pick``: ``(R, n)`` jobs in job order (``pick`` unused when ``herd``); ``js, nval, first``:
    ``(C, R)`` the blocks (first job, number of jobs, first block of its window). Each step gathers its
    block's jobs (``js + lane``) and writes their departures (and sites) back in job order, ``B``
    consecutive entries per replication (the lanes past ``nval`` write into the next block's jobs, which
    that block overwrites later, or into ``B`` padding entries past the last job). Returns responses
    ``d - a``, departures (``want_dep``) and sites (``want_site``), each ``(R, n)`` (None when not
    wanted), and, per replication, whether the calendar was too short (run again with a longer one).
    """
    C, R = nval.shape
    n = a.shape[1]
    B, N, M = block, n_sites, cal_len
    wrap = M < C
    sites = jnp.arange(N, dtype=jnp.int32)
    reps = jnp.arange(R, dtype=jnp.int32)
    lane = jnp.arange(B, dtype=jnp.int32)[:, None]
    lower = (sites[None, :] < sites[:, None])[:, :, None]

    a_p = s_p = p_p = None
    if R == 1:  # one replication: the block's jobs are one contiguous slice (B padding entries at the end)
        a_p, s_p = (jnp.concatenate([x[0], jnp.zeros(B, x.dtype)]) for x in (a, s))
        p_p = None if herd else jnp.concatenate([pick[0], jnp.zeros(B, pick.dtype)])

    def take(x, xp, jst, jidx):  # the block's jobs (B, R) of a job-order array (R, n)
        if R == 1:
            return jax.lax.dynamic_slice(xp, (jst[0],), (B,))[:, None]
        return x.reshape(-1)[reps[None, :] * n + jidx]  # scalar gathers (flat index: fewer index ops)

    def put(out, v, at):  # v (B, R) -> out[r, at[r] + lane] (B consecutive entries per replication)
        if R == 1:
            return jax.lax.dynamic_update_slice(out, v.T, (jnp.int32(0), at[0]))
        flat = (reps[None, :] * (n + B) + at[None, :] + lane).reshape(-1)
        return out.reshape(-1).at[flat].set(v.reshape(-1), unique_indices=True,
                                            indices_are_sorted=False).reshape(R, n + B)

    def body(carry, xs):
        c, last, cnt, view, cal, overflow, out_d, out_s = carry     # (), (N,R) x3, (M,N,R), (R,), (R,n+B) x2
        jst, nv, is_first = xs                                     # (R,) x3
        valid = lane < nv[None, :]
        jidx = jnp.where(valid, jst[None, :] + lane, 0)            # (B,R) the block's jobs
        aj = jnp.where(valid, take(a, a_p, jst, jidx), -jnp.inf)   # padding lanes: a = -inf, s = 0
        sj = jnp.where(valid, take(s, s_p, jst, jidx), 0.0)
        slot = (c & (M - 1)) if wrap else c
        col = cal[slot]                                            # jobs leaving the view at this block
        cnt = cnt - col
        view = jnp.where(is_first[None, :], cnt, view)             # refresh at a window's first block
        if herd:  # K = 1 for every job: the whole block goes to the least-loaded site (ties: lowest index)
            site0 = jnp.argmin(view, axis=0).astype(jnp.int32)
            oh0 = sites[:, None] == site0[None, :]
            L0 = jnp.max(jnp.where(oh0, last, -jnp.inf), axis=0)
            # Lindley chain d_j = max(d_{j-1}, a_j) + s_j as B Jacobi sweeps of one vector expression
            # (after k sweeps d[:k] are final; every sweep repeats the same float operations, so exact)
            d = jnp.maximum(L0[None], aj) + sj
            for _ in range(B - 1):
                d = jnp.maximum(jnp.concatenate([L0[None], d[:-1]]), aj) + sj
            last = jnp.where(oh0, d[-1][None, :], last)            # padding jobs (a=-inf, s=0) keep d
            cnt = cnt + jnp.where(oh0, nv[None, :], 0)
            site = jnp.broadcast_to(site0[None, :], (B, R))
        else:
            pj = take(pick, p_p, jst, jidx)
            if use_rank:  # Fig. 4 step 3a-3c: rank of each site in a stable sort of the view
                vi, vj = view[:, None, :], view[None, :, :]
                rank = jnp.sum((vj < vi) | ((vj == vi) & lower), axis=1, dtype=jnp.int32)
                oh = (rank[None, :, :] == pj[:, None, :]) & valid[:, None, :]                    # (B,N,R)
                site = jnp.where(valid, jnp.sum(jnp.where(oh, sites[None, :, None], 0), axis=1), N)
            else:         # rand: site = pick
                site = jnp.where(valid, pj, N)
                oh = sites[None, :, None] == site[:, None, :]
            L0 = jnp.max(jnp.where(oh, last[None], -jnp.inf), axis=1)                            # (B,R)
            # d_j = max(previous departure at the same site (earlier in the block, else last), a_j) + s_j
            if B <= 16:  # unrolled over pairs (i < j); a site's departures are non-decreasing
                ds = []
                for j in range(B):
                    prev = L0[j]
                    for i in range(j):
                        prev = jnp.maximum(prev, jnp.where(site[i] == site[j], ds[i], -jnp.inf))
                    ds.append(jnp.maximum(prev, aj[j]) + sj[j])
                d = jnp.stack(ds)
            else:        # B Jacobi sweeps over the predecessor one-hot (a small graph for large blocks)
                same = (site[:, None, :] == site[None, :, :]) & (lane[None, :, 0, None] < lane[:, :, None])
                d = jnp.maximum(L0, aj) + sj
                for _ in range(B - 1):
                    prev = jnp.maximum(L0, jnp.max(jnp.where(same, d[None, :, :], -jnp.inf), axis=1))
                    d = jnp.maximum(prev, aj) + sj
            last = jnp.maximum(last, jnp.max(jnp.where(oh, d[:, None, :], -jnp.inf), axis=0))
            cnt = cnt + jnp.sum(oh, axis=0, dtype=jnp.int32)
        # each job leaves the view at the first refresh at or after its departure: count it there
        dv = jnp.where(valid, d, 0.0)
        cl = _leave_table(dv, lookup, delay) if use_table else _leave_search(dv, lookup)
        cl = jnp.maximum(cl, c + 1)
        keep = valid & (cl < C)
        r_idx = jnp.broadcast_to(reps[None, :], (B, R))
        if wrap:  # ring of M blocks: also clear this block's slot (one scatter, no copy of the calendar)
            overflow = overflow | jnp.any(keep & (cl - c >= M), axis=0)
            i0 = jnp.concatenate([jnp.where(keep, cl & (M - 1), M).reshape(-1), jnp.full(N * R, slot, jnp.int32)])
            i1 = jnp.concatenate([site.reshape(-1), jnp.repeat(sites, R)])
            i2 = jnp.concatenate([r_idx.reshape(-1), jnp.tile(reps, N)])
            upd = jnp.concatenate([jnp.ones(B * R, jnp.int32), -col.reshape(-1)])
            cal = cal.at[i0, i1, i2].add(upd, mode="drop")
        else:
            cal = cal.at[jnp.where(keep, cl, C), site, r_idx].add(1, mode="drop")
        out_d = put(out_d, d, jst)
        if want_site:
            out_s = put(out_s, site.astype(jnp.int32), jst)
        return (c + 1, last, cnt, view, cal, overflow, out_d, out_s), None

    init = (jnp.int32(0), jnp.full((N, R), -jnp.inf), jnp.zeros((N, R), jnp.int32), jnp.zeros((N, R), jnp.int32),
            jnp.zeros((min(M, C), N, R), jnp.int32), jnp.zeros(R, bool), jnp.zeros((R, n + B)),
            jnp.zeros((R, n + B) if want_site else (1, 1), jnp.int32))
    carry, _ = jax.lax.scan(body, init, (js, nval, first))
    dep = carry[-2][:, :n]
    return dep - a, dep if want_dep else None, carry[-1][:, :n] if want_site else None, carry[5]


#: Largest window -> block table (bytes, per replication group) for the leave lookup of a batched scan when the
#: windows far outnumber the blocks; beyond it (and for a single replication) the scan binary-searches the
#: blocks' refresh instants. With batched replications the table wins: the search's ~16 gathers per step are
#: split by XLA's CPU backend over its intra-op threads (a hand-off of microseconds each); one replication
#: alone is faster with the search (measured on ``benchmarks/bench_ara.py``'s workload).
_TAB_BYTES = 128 << 20

#: Largest calendar (bytes) kept for the whole run; longer runs use a ring of blocks (see :func:`run_blocks`).
_CAL_BYTES = 256 << 20

#: First length (blocks) of the calendar's ring when the whole run does not fit in ``_CAL_BYTES`` and no
#: ``buffer`` is given: a power of two, doubled while too short. Every call starts here (no memory of earlier
#: calls); a caller that knows its runs need a longer ring passes ``buffer``.
RING_START = 4096


def _choose_block(windows, R: int, herd: bool) -> int:
    """Block size minimising (number of blocks) x (cost of one step), by the cost model ``_step_cost``."""
    rep, _, _, cnt, _ = windows
    best, best_cost = 8, np.inf
    for b in (2, 4, 8, 16):
        n_chunks = bucket(int(np.bincount(rep, weights=-(-cnt // b), minlength=R).max()), fine_above=64)
        cost = n_chunks * _step_cost(b, R, herd)
        if cost < best_cost:
            best, best_cost = b, cost
    return best


#: Fewest replications per concurrently run group (smaller groups cost more per replication than they gain).
MIN_GROUP = 8


def _default_threads(R: int) -> int:
    """One replication group per CPU core this process may use (CPU backend only), >= MIN_GROUP each."""
    if jax.default_backend() != "cpu":
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, R // MIN_GROUP))


def _groups(R: int, k: int) -> list[slice]:
    """``k`` contiguous groups of replications, sizes as equal as possible."""
    k = max(1, min(k, R))
    edges = np.linspace(0, R, k + 1).round().astype(int)
    return [slice(int(lo), int(hi)) for lo, hi in zip(edges[:-1], edges[1:])]


def run_blocks(a2: np.ndarray, s2: np.ndarray, pick: np.ndarray | None, *, n_sites: int, delay: float, herd: bool,
               use_rank: bool, block: int | None = None, buffer: int | None = None, n_blocks: int | None = None,
               threads: int | None = None, all_outputs: bool = True):
    """Dispatch R replications of n jobs (``a2``, ``s2``: ``(R, n)`` seconds, arrivals sorted along the jobs).

    ``pick``: ``(R, n)`` the rank (``use_rank``: among the stale view's ranking) or site (``rand``) each job
    goes to, ``floor(u_j K_j)``; unused (None) when ``herd`` (K = 1 for every job: the whole window's block
    goes to the least-loaded site). Returns ``(response, departure, site)``, each ``(R, n)`` NumPy (departure
    and site None unless ``all_outputs``). ``block``, ``buffer``, ``n_blocks``, ``threads``: see
    :func:`tieringlab.policies.ara.simulate`; they change speed only. The calendar's ring starts at ``buffer``
    blocks (rounded up to a power of two) or :data:`RING_START` and is doubled until no job outlives it, in
    each call afresh.
    """
    R, n = a2.shape
    N = int(n_sites)

    def run(rows: slice):
        a_g, s_g = a2[rows], s2[rows]
        Rg = a_g.shape[0]
        windows = _windows(a_g, delay)
        B = int(block) if block is not None else _choose_block(windows, Rg, herd)
        p = _plan(windows, Rg, n, delay, B, n_blocks)
        C = p["C"]
        pk = np.zeros((1, 1), np.int32) if herd else pick[rows]
        if buffer is not None:
            M = 1 << int(np.ceil(np.log2(max(int(buffer), 1))))
        elif C * N * Rg * 4 <= _CAL_BYTES:
            M = C
        else:
            M = RING_START
        while True:
            out = _run_blocks(a_g, s_g, pk, p["js"], p["nval"], p["first"], p["lookup"], float(delay), n_sites=N,
                              block=B, cal_len=min(M, C), herd=herd, use_rank=use_rank, use_table=p["use_table"],
                              want_site=all_outputs, want_dep=all_outputs)
            if M >= C or not bool(np.any(np.asarray(out[-1]))):
                break
            M *= 2  # a job left the view more than M blocks after it arrived: repeat with a longer ring
        return [None if x is None else np.asarray(x) for x in out[:3]]

    groups = _groups(R, _default_threads(R) if threads is None else int(threads))
    if len(groups) == 1:
        parts = [run(groups[0])]
    else:  # replication groups run concurrently (XLA releases the GIL); each replication is independent
        with ThreadPoolExecutor(len(groups)) as pool:
            parts = list(pool.map(run, groups))
    return tuple(None if p_[0] is None else (p_[0] if len(p_) == 1 else np.concatenate(p_)) for p_ in zip(*parts))
