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
not depend on the sequential state is computed before the scan with array operations: the windows,
the blocks, each job's candidate index ``floor(u_j * K_j)`` and the leave-block table below. One
``jax.lax.scan`` runs over the blocks, for R replications at once (state ``(N, R)``, replications on
the minor axis); inside a block the assignment of all ``B`` jobs is one array operation on the shared
stale view, and the per-site Lindley recursion is evaluated in the exact floating-point order of an
event-driven simulator (for ``K = 1``, where a whole block goes to one site, as ``B`` sweeps of one
vector expression that XLA fuses into one kernel). The jobs are written once, on the host, straight
into the scan's ``(blocks, B, R)`` layout (one fancy-index assignment per input) and the departures
are read back from that layout the same way, so the compiled call copies no job-sized array.

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

from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["POLICIES", "AraParams", "DispatchResult", "dispatch", "simulate", "uniforms", "k_per_job",
           "window_index"]

POLICIES = ("qlen", "rand", "ara", "ara_pred", "ara_opt")


@dataclass(frozen=True)
class AraParams:
    """The load balancers' knobs, with the thesis's values.

    ``n_sites`` N = 16 (Sec. 3.1, Table 1); ``delay_s`` D = 1 s (Sec. 3.1, footnote 2);
    ``th_s`` = 1 and ``th_l`` = ceil(0.5 N) are the examples of Fig. 7 step 1; Fig. 8 (b) uses th_l = 14.
    """

    n_sites: int = 16
    delay_s: float = 1.0
    k: int = 1
    th_s: int = 1
    th_l: int | None = None  # None -> ceil(0.5 * N), Fig. 7 step 1a

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


def _check_policy(policy: str) -> None:
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(repr(p) for p in POLICIES)}; got {policy!r}")


def k_per_job(policy: str, n_jobs: int, n_sites: int, *, k: int = 1, th_s: int = 1, th_l: int | None = None,
              state: np.ndarray | None = None) -> np.ndarray:
    """The number of candidates ``K_j`` each job is drawn among (Fig. 4 step 1a, Fig. 7 step 3).

    ``qlen``: 1; ``rand``: N; ``ara``: ``k``; ``ara_pred``/``ara_opt``: ``th_l`` where ``state`` (the
    predicted or true burst state per job) is on, ``th_s`` elsewhere. ``th_l`` None -> ceil(N/2).
    """
    _check_policy(policy)
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


def _bucket(c: int) -> int:
    """Round the number of blocks up (powers of two up to 64, then 8 sizes per octave), so that runs of
    similar length share one compiled scan (the extra blocks are empty and change nothing)."""
    if c <= 64:
        return 1 << int(np.ceil(np.log2(max(c, 1))))
    step = 1 << (int(np.floor(np.log2(c))) - 3)
    return -(-c // step) * step


def _step_cost(B: int, R: int, herd: bool) -> float:
    """Measured cost of one scan step (microseconds, CPU; fitted on N = 16 for B in 4..16, R in 1..32)."""
    if herd:
        return 1.2 + 0.25 * R + 0.03 * B * R + 0.002 * B * B * R
    return 1.0 + 0.22 * R + 0.16 * B * R + 0.02 * B * B


def _windows(a2: np.ndarray, delay: float):
    """Refresh windows of R replications at once: ``(w, starts, counts)`` with ``w`` the window of each
    job ``(R, n)``, ``starts`` the flat index (over ``R * n``) of the first job of each nonempty window
    and ``counts`` its number of jobs."""
    R, n = a2.shape
    w = window_index(a2, delay)
    new = np.ones((R, n), bool)
    new[:, 1:] = w[:, 1:] != w[:, :-1]
    st = np.flatnonzero(new)
    return w, st, np.diff(np.append(st, R * n))


def _plan(a2: np.ndarray, delay: float, B: int, n_blocks: int | None, windows=None) -> dict:
    """Blocks of at most ``B`` jobs inside one refresh window, for R replications (array code, no loop
    over jobs). Per block ``(C, R)``: number of valid jobs and whether it is its window's first block;
    per job ``(R, n)``: its position ``block * B + slot`` in the block layout; the leave-block lookup."""
    R, n = a2.shape
    w, st, cnt = _windows(a2, delay) if windows is None else windows
    rep = st // n
    nb = -(-cnt // B)                                               # blocks per window
    cs = np.cumsum(nb) - nb
    bs = cs - cs[np.searchsorted(rep, np.arange(R))][rep]            # first block of each window (per rep)
    C = _bucket(int(np.bincount(rep, weights=nb, minlength=R).max()))
    if n_blocks is not None:
        if n_blocks < C:
            raise ValueError(f"n_blocks={n_blocks} is less than the {C} blocks these jobs need")
        C = int(n_blocks)
    wq = np.repeat(np.arange(st.size), nb)                          # window of each block
    k = np.arange(wq.size) - np.repeat(cs, nb)                      # block index inside its window
    blk, rq = bs[wq] + k, rep[wq]
    nval = np.zeros((C, R), np.int32)
    first = np.zeros((C, R), bool)
    nval[blk, rq] = np.minimum(B, cnt[wq] - k * B)
    first[blk, rq] = k == 0
    pos = np.arange(R * n) - np.repeat(st, cnt)                     # position inside the window
    idx = (np.repeat(bs, cnt) + pos // B) * B + pos % B             # (block * B + slot) of each job
    idx *= R
    idx += np.arange(R).repeat(n)                                   # flat position in the (C, B, R) layout
    wf = w.reshape(-1)[st]                                          # window number of each nonempty window
    Wt = int(w[:, -1].max()) + 1
    if Wt + 1 <= max(4 * C, 4096):
        # tab[w, r]: first block of the first nonempty window >= w (C: none); the departure d leaves the
        # view at window wl = min{w : w * D >= d}
        tab = np.full((max(64, 1 << int(Wt).bit_length()), R), C, np.int32)  # rows padded: fewer compiles
        tab[wf, rep] = bs
        lookup, use_table = np.minimum.accumulate(tab[::-1], axis=0)[::-1].copy(), True
    else:  # very many (mostly empty) windows: binary search over the blocks' refresh instants instead
        g = np.full((C, R), np.inf)
        g[blk, rq] = wf[wq] * delay
        lookup, use_table = g, False
    return {"C": C, "nval": nval, "first": first, "pos": idx.reshape(R, n), "lookup": lookup,
            "use_table": use_table}


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


@partial(jax.jit, static_argnames=("n_sites", "block", "cal_len", "herd", "use_rank", "use_table"))
def _run_blocks(a, s, pick, nval, first, lookup, delay, *, n_sites, block, cal_len, herd, use_rank, use_table):
    """The scan over blocks for R replications at once (one scan, replications on the minor axis).

    ``a, s, pick``: ``(C, B, R)`` jobs in block layout (padding: ``a = -inf``, ``s = 0``; ``pick`` unused
    when ``herd``); ``nval, first``: ``(C, R)``. Returns departures ``(C, B, R)`` and sites (``herd``:
    ``(C, R)``), in the same layout (no transposes), and, per replication, whether the calendar was
    too short (run again with a longer one).
    """
    C, R = nval.shape
    B, N, M = block, n_sites, cal_len
    wrap = M < C
    sites = jnp.arange(N, dtype=jnp.int32)
    reps = jnp.arange(R, dtype=jnp.int32)
    lane = jnp.arange(B, dtype=jnp.int32)[:, None]
    lower = (sites[None, :] < sites[:, None])[:, :, None]

    def body(carry, xs):
        c, last, cnt, view, cal, overflow = carry                  # (), (N,R) x3, (M,N,R), (R,)
        aj, sj, pj, nv, is_first = xs                              # (B,R) x3, (R,) x2
        slot = (c & (M - 1)) if wrap else c
        col = cal[slot]                                            # jobs leaving the view at this block
        cnt = cnt - col
        view = jnp.where(is_first[None, :], cnt, view)             # refresh at a window's first block
        valid = lane < nv[None, :]
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
            out_site = site0
        else:
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
            out_site = site
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
        return (c + 1, last, cnt, view, cal, overflow), (d, out_site)

    init = (jnp.int32(0), jnp.full((N, R), -jnp.inf), jnp.zeros((N, R), jnp.int32), jnp.zeros((N, R), jnp.int32),
            jnp.zeros((min(M, C), N, R), jnp.int32), jnp.zeros(R, bool))
    if herd:
        pick = jnp.zeros((C, 1, 1), jnp.int32)  # unused
    carry, (dep, site) = jax.lax.scan(body, init, (a, s, pick, nval, first))
    return dep, site, carry[-1]


#: The longest calendar a run has needed so far (runs start there: fewer repeated runs).
_CAL_SEEN = [0]

#: Largest calendar (bytes) kept for the whole run; longer runs use a ring of blocks (see ``simulate``).
_CAL_BYTES = 256 << 20

def _choose_block(windows, R: int, n: int, herd: bool) -> int:
    """Block size minimising (number of blocks) x (cost of one step), by the cost model ``_step_cost``."""
    _, st, cnt = windows
    rep = st // n
    best, best_cost = 8, np.inf
    for b in (2, 4, 8, 16):
        n_chunks = _bucket(int(np.bincount(rep, weights=-(-cnt // b), minlength=R).max()))
        cost = n_chunks * _step_cost(b, R, herd)
        if cost < best_cost:
            best, best_cost = b, cost
    return best



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


def simulate(arrivals, services, n_sites: int, policy: str, *, k: int = 1, delay: float = 1.0, th_s: int = 1,
             th_l: int | None = None, key: jax.Array | None = None, burst_state=None, predicted_state=None,
             u=None, block: int | None = None, buffer: int | None = None,
             n_blocks: int | None = None, _want_site: bool = True) -> DispatchResult:
    """Dispatch jobs over ``n_sites`` FCFS sites under ``policy``; all per-job outputs (see module docstring).

    ``arrivals``/``services``: seconds, shape ``(n,)`` or ``(R, n)`` for R replications run in one
    vmapped call (arrivals non-decreasing along the job axis). ``key``: a ``jax.random`` key (or R
    keys) for ``rand``/``ara*``; with one key and R replications, replication r uses
    ``jax.random.split(key, R)[r]``. ``u``: per-job uniforms instead of ``key`` (tests).
    ``burst_state``: true burst state per job (``ara_opt``); ``predicted_state``: the on/off
    predictor's state per job (``ara_pred``; :func:`dispatch` computes it when not given).
    ``block``: jobs per scan block (default: chosen by a cost model); ``buffer``: initial length (in
    blocks) of the departure calendar's ring (default: the whole run when it fits in 256 MB);
    ``n_blocks``: pad the scan to this many blocks (one compiled scan for many runs of similar size).
    """
    _check_policy(policy)
    if not isinstance(n_sites, (int, np.integer)) or n_sites < 1:
        raise ValueError(f"n_sites must be a positive integer; got {n_sites!r}")
    if not (np.isfinite(delay) and delay > 0):
        raise ValueError(f"delay must be a positive number of seconds (D); got {delay!r}")
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
    if np.any(np.diff(a2, axis=1) < 0):
        raise ValueError("arrivals must be non-decreasing along the job axis (sort jobs by arrival time)")
    if not np.all(np.isfinite(s2)) or np.any(s2 < 0):
        raise ValueError("services must be finite and >= 0 seconds")

    state = {"ara_opt": burst_state, "ara_pred": predicted_state}.get(policy)
    if policy == "ara_pred" and state is None:
        raise ValueError("ara_pred needs predicted_state (use dispatch(), which runs the on/off predictor)")
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
    windows = _windows(a2, delay)
    B = int(block) if block is not None else _choose_block(windows, R, n, herd)
    if B < 1:
        raise ValueError(f"block must be a positive integer; got {block!r}")
    p = _plan(a2, delay, B, n_blocks, windows)
    C, pos = p["C"], p["pos"]
    A = np.full((C, B, R), -np.inf)       # jobs in the scan's block layout, built once (no transposes)
    S = np.zeros((C, B, R))
    A.reshape(-1)[pos] = a2
    S.reshape(-1)[pos] = s2
    if herd:
        PK = np.zeros((1, 1, 1), np.int32)
    else:
        PK = np.zeros((C, B, R), np.int32)
        PK.reshape(-1)[pos] = np.minimum(np.floor(u2 * kk), kk - 1).astype(np.int32)

    N = int(n_sites)
    if buffer is not None:
        M = 1 << int(np.ceil(np.log2(max(int(buffer), 1))))
    elif C * N * R * 4 <= _CAL_BYTES:
        M = C
    else:
        M = max(4096, _CAL_SEEN[0])
    while True:
        dep, site, overflow = _run_blocks(A, S, PK, p["nval"], p["first"], p["lookup"], float(delay), n_sites=N,
                                          block=B, cal_len=min(M, C), herd=herd, use_rank=use_rank,
                                          use_table=p["use_table"])
        if M >= C or not bool(np.any(np.asarray(overflow))):
            break
        M *= 2  # a job left the view more than M blocks after it arrived: repeat with a longer ring
    if M < C:
        _CAL_SEEN[0] = max(M, _CAL_SEEN[0])
    dep_j = np.asarray(dep).reshape(-1)[pos]
    if not _want_site:
        site_j = None
    elif herd:  # one site per block: position (block * B + slot) * R + r -> block * R + r
        site_j = np.asarray(site).reshape(-1)[(pos // (B * R)) * R + pos % R].astype(np.int64)
    else:
        site_j = np.asarray(site).reshape(-1)[pos].astype(np.int64)
    resp = dep_j - a2
    if single:
        return DispatchResult(resp[0], dep_j[0], None if site_j is None else site_j[0])
    return DispatchResult(resp, dep_j, site_j)


def dispatch(arrivals, services, n_sites: int, policy: str, *, k: int = 1, delay: float = 1.0, th_s: int = 1,
             th_l: int | None = None, key: jax.Array | None = None, burst_state=None, predictor=None,
             block: int | None = None) -> jax.Array:
    """Response times ``T_j = d_j - a_j`` (seconds, job order) of ``policy`` on N FCFS sites, D-stale view.

    Thesis Sec. 3.1 (Qlen, Rand), Sec. 3.2.1 Fig. 4 (``"ara"``: uniform among the ``k`` least loaded),
    Sec. 3.2.2 Fig. 7 (``"ara_pred"``: K = ``th_l`` while the on/off predictor of
    :mod:`tieringlab.models.burstiness` says burst, ``th_s`` otherwise), Sec. 3.2.3 (``"ara_opt"``: the
    same switch on the true burst state ``burst_state``, one boolean per job). Shapes ``(n,)`` or
    ``(R, n)`` (R replications in one vmapped call). ``predictor``: optional callable
    ``arrivals(1-d) -> on/off per job`` replacing the default predictor for ``ara_pred``.
    """
    _check_policy(policy)
    predicted = None
    if policy == "ara_pred":
        predict = predictor if predictor is not None else predicted_burst_state
        a2 = _as_2d(np.asarray(arrivals, np.float64), "arrivals")
        predicted = np.stack([np.asarray(predict(a2[r])) for r in range(a2.shape[0])])
    return simulate(arrivals, services, n_sites, policy, k=k, delay=delay, th_s=th_s, th_l=th_l, key=key,
                    burst_state=burst_state, predicted_state=predicted, block=block, _want_site=False).response


def predicted_burst_state(arrivals, params=None) -> np.ndarray:
    """The on/off predictor's state at each job's arrival (thesis Sec. 3.2.2; causal: the state of the
    last monitoring window decided at or before the arrival), from :mod:`tieringlab.models.burstiness`."""
    from tieringlab.models import burstiness  # noqa: PLC0415

    a = np.asarray(arrivals, np.float64)
    params = burstiness.BurstPredictorParams() if params is None else params
    pred = burstiness.predict_bursts(a, params)
    return np.asarray(burstiness.burst_state_at(pred, a))
