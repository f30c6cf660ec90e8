"""ARA and its baselines: a dispatcher over N FCFS sites with stale load information (thesis Ch. 3).

J. Tai, PhD thesis (2015), Chapter 3 ("Burstiness-aware load balancing"):

- Sec. 3.1: N computing sites, each FIFO (FCFS); the load balancer queries every site's load
  (number of jobs in system) once per window of ``D`` seconds, and the view stays stale in between:
  a job assigned during a window does not change the balancer's view until the next refresh.
  Policies of Sec. 3.1: ``"qlen"`` (greedy: the least-loaded site on the stale view, ties to the
  lowest site index) and ``"rand"`` (uniform over all N sites).
- Sec. 3.2.1, Fig. 4 (static ARA): sort the sites by the stale load (step 3a), keep the ``K`` least
  loaded (3b), pick one uniformly (3c, ``s = uniform(1, K)``), submit (3d). ``"ara"``.
- Sec. 3.2.2, Fig. 7 (online ARA): ``K = th_l`` while the on/off burst predictor says "burst",
  ``K = th_s`` otherwise. ``"ara_pred"`` takes the predictor's state per job; ``"ara_opt"`` takes the
  true burst state per job (Sec. 3.2.3: "assumes a prior knowledge ... exact detection"), passed as
  ``burst_state``.

Conventions of this implementation (documented choices where the thesis is silent):

- Refresh instants are ``t = w * D`` for integers ``w >= 0``. Job ``j`` belongs to window
  ``w_j = floor(a_j / D)`` (precisely: the largest ``w`` with ``w * D <= a_j`` in float64) and is
  assigned from the view taken at ``w_j * D``; a job arriving exactly at a refresh instant is not in it.
- The view of site ``s`` at refresh instant ``t`` is ``#{jobs j at s assigned in earlier windows
  with d_j > t}`` (a job departing exactly at ``t`` has left).
- Ranking: a stable sort of the view (ties to the lowest site index), so ``qlen`` is ``ara`` with
  ``K = 1`` and ``ara`` with ``K = N`` is uniform over all sites.
- Randomness: job ``j`` draws one uniform ``u_j`` (``uniforms(key, n)[j]``, in job order) and goes to
  ``ranking[floor(u_j * K_j)]`` (``ara*``) or to site ``floor(u_j * N)`` (``rand``). The same key gives
  the same assignment; tests replay the same ``u_j`` in a plain event-driven reference.
- Per-site FCFS (Lindley): ``d_j = max(d_prev(site_j), a_j) + s_j``, response ``T_j = d_j - a_j``,
  evaluated in the same floating-point order as an event-driven simulator, so results are
  bit-identical to one.

Vectorization. Jobs are grouped by refresh window; windows without jobs are skipped (nothing is
decided in them) and a window with many jobs is split into several fixed-size blocks of ``B`` jobs
that share the window's view, so there is no maximum number of jobs per window. Everything that does
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
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import xarray as xr

from tieringlab.arrays import bucket, choice
from tieringlab.policies.contract import queue_result
from tieringlab.policies.registry import PolicySpec, register

__all__ = ["POLICIES", "AraParams", "DispatchResult", "dispatch", "simulate", "uniforms", "k_per_job",
           "window_index"]

POLICIES = ("qlen", "rand", "ara", "ara_pred", "ara_opt")


@dataclass(frozen=True)
class AraParams:
    """The load balancers' knobs, with the thesis's values (Sec. 3.1-3.2).

    ``policy`` picks the dispatcher (one of :data:`POLICIES`; the registry names "Qlen", "Rand", "ARA",
    "ARA_PRED", "ARA_OPT" fix it). ``n_sites`` N = 16 (Sec. 3.1, Table 1); ``delay_s`` D = 1 s
    (Sec. 3.1, footnote 2); ``k``: static ARA's K (Fig. 4); ``th_s`` = 1 and ``th_l`` = ceil(0.5 N) are
    the examples of Fig. 7 step 1 (Fig. 8 (b) uses th_l = 14).
    """

    n_sites: int = 16
    delay_s: float = 1.0
    policy: str = "qlen"
    k: int = 1
    th_s: int = 1
    th_l: int | None = None  # None -> ceil(0.5 * N), Fig. 7 step 1a

    def __post_init__(self):
        choice("policy", self.policy, POLICIES)
        if not isinstance(self.n_sites, (int, np.integer)) or isinstance(self.n_sites, bool) or self.n_sites < 1:
            raise ValueError(f"n_sites must be a positive integer; got {self.n_sites!r}")
        if not (np.isfinite(self.delay_s) and self.delay_s > 0):
            raise ValueError(f"delay_s must be a positive number of seconds (D); got {self.delay_s!r}")
        for name in ("k", "th_s", "th_l"):
            val = getattr(self, name)
            if name == "th_l" and val is None:
                continue
            if not isinstance(val, (int, np.integer)) or isinstance(val, bool) or not 1 <= val <= self.n_sites:
                raise ValueError(f"{name} must be an integer in [1, n_sites={self.n_sites}]; got {val!r}")

    def large_threshold(self) -> int:
        return int(np.ceil(0.5 * self.n_sites)) if self.th_l is None else int(self.th_l)


class DispatchResult(NamedTuple):
    """Per-job outputs in job order (NumPy arrays): response ``T_j`` (s), departure ``d_j`` (s), site index."""

    response: jax.Array
    departure: jax.Array
    site: jax.Array


def uniforms(key: jax.Array, n: int) -> jax.Array:
    """The per-job uniforms ``u_j`` in [0, 1) that drive ``rand`` and ``ara*`` (one per job, job order)."""
    return jax.random.uniform(key, (n,), dtype=jnp.float64)


def k_per_job(policy: str, n_jobs: int, n_sites: int, *, k: int = 1, th_s: int = 1, th_l: int | None = None,
              state: np.ndarray | None = None) -> np.ndarray:
    """The number of candidates ``K_j`` each job is drawn among (Fig. 4 step 1a, Fig. 7 step 3).

    ``qlen``: 1; ``rand``: N; ``ara``: ``k``; ``ara_pred``/``ara_opt``: ``th_l`` where ``state`` (the
    predicted or true burst state per job) is on, ``th_s`` elsewhere. ``th_l`` None -> ceil(N/2).
    """
    choice("policy", policy, POLICIES)
    th_l = int(np.ceil(0.5 * n_sites)) if th_l is None else int(th_l)
    for name, val in (("k", k), ("th_s", th_s), ("th_l", th_l)):
        if not (1 <= int(val) <= n_sites):
            raise ValueError(f"{name} must be an integer in [1, n_sites={n_sites}]; got {val!r}")
    if policy == "qlen":
        return np.ones(n_jobs, np.int64)
    if policy == "rand":
        return np.full(n_jobs, n_sites, np.int64)
    if policy == "ara":
        return np.full(n_jobs, int(k), np.int64)
    if state is None:
        raise ValueError(f"policy {policy!r} needs the per-job burst state "
                         f"({'the predictor' if policy == 'ara_pred' else 'burst_state'}); got None")
    state = np.asarray(state)
    if state.shape[-1] != n_jobs:
        raise ValueError(f"burst state must have one entry per job ({n_jobs}); got shape {state.shape}")
    return np.where(state.astype(bool), th_l, int(th_s)).astype(np.int64)


def window_index(arrivals: np.ndarray, delay: float) -> np.ndarray:
    """The refresh window of each job: the largest integer ``w`` with ``w * D <= a`` (in float64, so
    the refresh instant ``w * D`` computed anywhere never lies after the arrival)."""
    a = np.asarray(arrivals, np.float64)
    w = np.floor(a / delay).astype(np.int64)
    w = np.where((w + 1) * delay <= a, w + 1, w)
    return np.where(w * delay > a, w - 1, w)


def _step_cost(B: int, R: int, herd: bool) -> float:
    """Cost of one scan step (microseconds, CPU; fitted on N = 16 for B in 4..16, R in 1..32 when the jobs
    were copied into a block layout before the scan). Rechecked after the scan began reading jobs in
    job order: it still picks the measured best for the benchmark's workload (B = 16 for one
    replication, B = 8 for 16 and 32)."""
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
#: blocks' refresh instants. Measured on issue 16's workload (E[A] = 10 s, D = 1 s, 10^5 jobs: 10^6 windows,
#: 6 x 10^4 blocks): 32 replications in 1.6 s with the table against 5.6 s with the search, whose ~16 gathers
#: per step XLA's CPU backend splits over its intra-op threads once the replications are batched (a hand-off
#: of microseconds each); one replication alone is faster with the search (0.22 s against 0.31 s).
_TAB_BYTES = 128 << 20

#: The longest calendar a run has needed so far (runs start there: fewer repeated runs).
_CAL_SEEN = [0]

#: Largest calendar (bytes) kept for the whole run; longer runs use a ring of blocks (see ``simulate``).
_CAL_BYTES = 256 << 20

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


def _keys(key, R: int) -> jax.Array:
    """R keys from one key (split when R > 1) or a batch of R keys (typed ``(R,)`` or raw ``(R, 2)``)."""
    key = jnp.asarray(key)
    typed = jnp.issubdtype(key.dtype, jax.dtypes.prng_key)
    batched = key.ndim == (1 if typed else 2)
    if batched:
        if key.shape[0] != R:
            raise ValueError(f"key: got {key.shape[0]} keys for {R} replications")
        return key
    return jax.random.split(key, R) if R > 1 else key[None]


def _as_2d(x, name: str, n: int | None = None) -> np.ndarray:
    x = np.asarray(x)
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2:
        raise ValueError(f"{name} must be a 1-d array (jobs) or 2-d (replications x jobs); got shape {x.shape}")
    if n is not None and x.shape[1] != n:
        raise ValueError(f"{name} must have {n} entries per replication (one per job); got shape {x.shape}")
    return x


def _dispatch_arrays(params: AraParams, arrivals, services, key, *, burst_state=None, predicted_state=None, u=None,
                     block=None, buffer=None, n_blocks=None, threads=None, all_outputs=True) -> DispatchResult:
    """The dispatcher itself (see :func:`simulate` for the arguments): per-job arrays, in job order."""
    if not isinstance(params, AraParams):
        raise TypeError(f"params must be AraParams; got {type(params).__name__}")
    policy, n_sites, delay = params.policy, params.n_sites, float(params.delay_s)
    k, th_s, th_l = params.k, params.th_s, params.th_l
    single = np.ndim(arrivals) == 1
    a2 = _as_2d(np.asarray(arrivals, np.float64), "arrivals")
    R, n = a2.shape
    s2 = _as_2d(np.asarray(services, np.float64), "services", n)
    if s2.shape[0] != R:
        raise ValueError(f"services has {s2.shape[0]} replications, arrivals {R}")
    if n == 0:
        z = jnp.zeros((R, 0)) if not single else jnp.zeros(0)
        return DispatchResult(z, z, z.astype(jnp.int64))
    if not np.all(np.isfinite(a2)) or np.any(a2 < 0):
        raise ValueError("arrivals must be finite and >= 0 seconds")
    if np.any(a2[:, 1:] < a2[:, :-1]):
        raise ValueError("arrivals must be non-decreasing along the job axis (sort jobs by arrival time)")
    if not np.all(np.isfinite(s2)) or np.any(s2 < 0):
        raise ValueError("services must be finite and >= 0 seconds")

    state = {"ara_opt": burst_state, "ara_pred": predicted_state}.get(policy)
    if policy == "ara_pred" and state is None:  # the on/off predictor of Sec. 3.2.2, on each replication
        state = predicted_burst_state(a2)
    if state is not None:
        state = _as_2d(np.asarray(state), "burst_state" if policy == "ara_opt" else "predicted_state", n)
        state = np.broadcast_to(state, (R, n))
    if state is None:  # qlen, rand, ara: one K for every job
        kk = k_per_job(policy, 1, n_sites, k=k, th_s=th_s, th_l=th_l)[0]
    else:
        kk = np.stack([k_per_job(policy, n, n_sites, k=k, th_s=th_s, th_l=th_l, state=state[r]) for r in range(R)])
    use_rank = policy != "rand"
    herd = use_rank and bool(np.all(kk == 1))

    if u is None and policy != "qlen" and key is None:
        raise ValueError(f"policy {policy!r} is randomised: pass key=jax.random.key(...) (or u=)")
    if not herd:
        if u is None:
            keys = _keys(key, R)
            u2 = np.asarray(jax.vmap(lambda kk_: uniforms(kk_, n))(keys))
        else:
            u2 = _as_2d(np.asarray(u, np.float64), "u", n)
            u2 = np.broadcast_to(u2, (R, n))
    if block is not None and (not isinstance(block, (int, np.integer)) or block < 1):
        raise ValueError(f"block must be a positive integer; got {block!r}")
    if threads is not None and (not isinstance(threads, (int, np.integer)) or threads < 1):
        raise ValueError(f"threads must be a positive integer or None; got {threads!r}")
    PK = None if herd else np.minimum(np.floor(u2 * kk), kk - 1).astype(np.int32)
    N = int(n_sites)

    def run(rows: slice):
        a_g, s_g = a2[rows], s2[rows]
        Rg = a_g.shape[0]
        windows = _windows(a_g, delay)
        B = int(block) if block is not None else _choose_block(windows, Rg, herd)
        p = _plan(windows, Rg, n, delay, B, n_blocks)
        C = p["C"]
        pk = np.zeros((1, 1), np.int32) if herd else PK[rows]
        if buffer is not None:
            M = 1 << int(np.ceil(np.log2(max(int(buffer), 1))))
        elif C * N * Rg * 4 <= _CAL_BYTES:
            M = C
        else:
            M = max(4096, _CAL_SEEN[0])
        while True:
            out = _run_blocks(a_g, s_g, pk, p["js"], p["nval"], p["first"], p["lookup"], float(delay), n_sites=N,
                              block=B, cal_len=min(M, C), herd=herd, use_rank=use_rank, use_table=p["use_table"],
                              want_site=all_outputs, want_dep=all_outputs)
            if M >= C or not bool(np.any(np.asarray(out[-1]))):
                break
            M *= 2  # a job left the view more than M blocks after it arrived: repeat with a longer ring
        if M < C:
            _CAL_SEEN[0] = max(M, _CAL_SEEN[0])
        return [None if x is None else np.asarray(x) for x in out[:3]]

    groups = _groups(R, _default_threads(R) if threads is None else int(threads))
    if len(groups) == 1:
        parts = [run(groups[0])]
    else:  # replication groups run concurrently (XLA releases the GIL); each replication is independent
        with ThreadPoolExecutor(len(groups)) as pool:
            parts = list(pool.map(run, groups))
    resp, dep_j, site_j = (None if p_[0] is None else (p_[0] if len(p_) == 1 else np.concatenate(p_))
                           for p_ in zip(*parts))
    if site_j is not None:
        site_j = site_j.astype(np.int64)
    if single:
        return DispatchResult(resp[0], None if dep_j is None else dep_j[0], None if site_j is None else site_j[0])
    return DispatchResult(resp, dep_j, site_j)


def simulate(params: AraParams, arrivals, services, key: jax.Array | None = None, *, burst_state=None,
             predicted_state=None, u=None, block: int | None = None, buffer: int | None = None,
             n_blocks: int | None = None, threads: int | None = None) -> xr.Dataset:
    """Dispatch jobs over ``params.n_sites`` FCFS sites under ``params.policy`` (the queueing contract of
    :mod:`tieringlab.policies.contract`): a Dataset with per-job ``response_s``, ``departure_s``,
    ``site`` over ``job`` (and ``replication`` for 2-D input) and ``mean_response_s`` per replication.

    Thesis Sec. 3.1 (Qlen, Rand), Sec. 3.2.1 Fig. 4 (``"ara"``: uniform among the ``k`` least loaded),
    Sec. 3.2.2 Fig. 7 (``"ara_pred"``: K = ``th_l`` while the on/off predictor of
    :mod:`tieringlab.models.burstiness` says burst, ``th_s`` otherwise), Sec. 3.2.3 (``"ara_opt"``: the
    same switch on the true burst state ``burst_state``, one boolean per job).

    ``arrivals``/``services``: seconds, shape ``(n,)`` or ``(R, n)`` for R replications run in one
    call (arrivals non-decreasing along the job axis). ``key``: a ``jax.random`` key (or R keys) for
    ``rand``/``ara*``; with one key and R replications, replication r uses ``jax.random.split(key, R)[r]``.
    ``u``: per-job uniforms instead of ``key`` (tests). ``burst_state``: true burst state per job
    (``ara_opt``); ``predicted_state``: the on/off predictor's state per job (``ara_pred``; computed
    from the arrivals by :func:`predicted_burst_state` when not given).
    ``block``: jobs per scan block (default: chosen by a cost model); ``buffer``: initial length (in
    blocks) of the departure calendar's ring (default: the whole run when it fits in 256 MB);
    ``n_blocks``: pad the scan to this many blocks (one compiled scan for many runs of similar size).
    ``threads``: the replications are split into this many groups that run concurrently, one scan each
    (default: one group per CPU core, at least ``MIN_GROUP`` replications a group, on the CPU backend;
    one group elsewhere). ``block``, ``buffer``, ``n_blocks`` and ``threads`` change speed only.
    """
    r = _dispatch_arrays(params, arrivals, services, key, burst_state=burst_state, predicted_state=predicted_state,
                         u=u, block=block, buffer=buffer, n_blocks=n_blocks, threads=threads)
    return queue_result(r.response, policy=_NAMES[params.policy], source=_SOURCE[params.policy],
                        extra={"departure_s": r.departure, "site": r.site},
                        attrs={"n_sites": params.n_sites, "delay_s": float(params.delay_s)})


def dispatch(params: AraParams, arrivals, services, key: jax.Array | None = None, *, burst_state=None,
             predictor=None, block: int | None = None, threads: int | None = None) -> np.ndarray:
    """Response times ``T_j = d_j - a_j`` (seconds, job order) only: :func:`simulate`'s fast path, for
    benchmarks and sweeps that need no departures or sites. ``predictor``: optional callable
    ``arrivals(1-d) -> on/off per job`` replacing the default predictor for ``ara_pred``."""
    predicted = None
    if params.policy == "ara_pred" and predictor is not None:
        a2 = _as_2d(np.asarray(arrivals, np.float64), "arrivals")
        predicted = np.stack([np.asarray(predictor(a2[r])) for r in range(a2.shape[0])])
    return _dispatch_arrays(params, arrivals, services, key, burst_state=burst_state, predicted_state=predicted,
                            block=block, threads=threads, all_outputs=False).response


def predicted_burst_state(arrivals, params=None) -> np.ndarray:
    """The on/off predictor's state at each job's arrival (thesis Sec. 3.2.2), from
    :mod:`tieringlab.models.burstiness`; ``arrivals`` ``(n,)`` or ``(R, n)`` (R streams in one call).

    Causal: job ``j`` gets the state after the last monitoring window completed by an arrival ``<= j``,
    with the windows applied in the order their decisions are known, so
    ``predicted_burst_state(arrivals[:n]) == predicted_burst_state(arrivals)[:n]`` for every ``n``."""
    from tieringlab.models import burstiness  # noqa: PLC0415

    a = np.asarray(arrivals, np.float64)
    params = burstiness.BurstPredictorParams() if params is None else params
    pred = burstiness.predict_bursts(a, params)
    return np.asarray(burstiness.burst_state_per_arrival(pred, a.shape[-1]))


# ------------------------------------------------------------------------------------------ registry
_NAMES = {"qlen": "Qlen", "rand": "Rand", "ara": "ARA", "ara_pred": "ARA_PRED", "ara_opt": "ARA_OPT"}
_SOURCE = {"qlen": "thesis Sec. 3.1 (greedy: least loaded on the stale view)",
           "rand": "thesis Sec. 3.1 (uniform over all sites)",
           "ara": "thesis Sec. 3.2.1, Fig. 4 (static ARA: uniform among the K least loaded)",
           "ara_pred": "thesis Sec. 3.2.2, Fig. 7 (online ARA, K switched by the on/off burst predictor)",
           "ara_opt": "thesis Sec. 3.2.3 (online ARA, K switched by the true burst state)"}
for _policy, _name in _NAMES.items():
    register(PolicySpec(name=_name, kind="queueing", fn=simulate, params_type=AraParams, source=_SOURCE[_policy],
                        fixed={"policy": _policy}, random=_policy != "qlen",
                        description="dispatcher over N FCFS sites with a D-stale load view"))
