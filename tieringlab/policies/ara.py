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
that share the window's view, so there is no maximum number of jobs per window. A
``jax.lax.scan`` runs over the blocks; inside a block the assignment of all ``B`` jobs is one array
operation on the shared stale view, and only the per-site Lindley recursion (``B`` scalar max/add
steps, kept sequential so that the floating-point result is exact) walks the block.

To count jobs in system at a refresh instant ``t``, each site keeps a ring of the departure times
of its last ``L`` jobs and a head counter; FCFS departures are non-decreasing per site, so at a
refresh the head moves past the entries ``<= t`` (looked at ``H = 8`` at a time, repeated while a
whole group has left) and the view is ``ptr - head``. If a site ever holds ``L`` jobs not known to
have left, the run is repeated with ``L`` doubled (``buffer`` starts at 64), so the counts are always
exact. Assignment and ring updates are dense compares (one-hot over sites) with the replications on
the minor axis.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["POLICIES", "AraParams", "DispatchResult", "dispatch", "simulate", "uniforms", "chunk_jobs",
           "k_per_job", "window_index"]

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
    """Per-job outputs in job order: response ``T_j`` (s), departure ``d_j`` (s), site index."""

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


def chunk_jobs(arrivals: np.ndarray, delay: float, block: int):
    """Group jobs (sorted arrivals) into blocks of at most ``block`` jobs, each inside one refresh window.

    Returns ``(chunk, slot, t_ref, first)``: per job its block and slot; per block the refresh instant
    ``w * D`` of its window and whether it is the window's first block (where the view is refreshed).
    """
    a = np.asarray(arrivals, np.float64)
    n = a.shape[0]
    w = window_index(a, delay)
    new_win = np.ones(n, bool)
    new_win[1:] = w[1:] != w[:-1]
    start = np.maximum.accumulate(np.where(new_win, np.arange(n), 0))
    pos = np.arange(n) - start
    slot = pos % block
    chunk = np.cumsum(slot == 0) - 1
    heads = slot == 0
    t_ref = w[heads] * delay
    first = pos[heads] == 0
    return chunk, slot, t_ref, first


def _bucket(c: int) -> int:
    """Round the number of blocks up (powers of two up to 64, then 8 sizes per octave), so that runs of
    similar length share one compiled scan (the extra blocks are empty and change nothing)."""
    if c <= 64:
        return 1 << int(np.ceil(np.log2(c)))
    step = 1 << (int(np.floor(np.log2(c))) - 3)
    return -(-c // step) * step


def _choose_block(arrivals_2d: np.ndarray, delay: float) -> int:
    """Block size minimising (number of blocks) x (fixed cost + B): a cost model of the scan."""
    best, best_cost = 1, np.inf
    for b in (1, 2, 4, 8, 16, 32, 64):
        n_chunks = max(int(chunk_jobs(a, delay, b)[0][-1]) + 1 for a in arrivals_2d)
        cost = n_chunks * (12 + b)
        if cost < best_cost:
            best, best_cost = b, cost
    return best


def _run_blocks(a_blk, s_blk, u_blk, k_blk, valid_blk, t_ref, first, use_rank, *, n_sites: int, buf_len: int):
    """The scan over blocks for R replications at once, replications on the last (minor) axis.

    Shapes: per job ``(C, B, R)``, per block ``(C, R)``. Keeping R minor makes every step an
    elementwise operation over contiguous replications (this vectorises far better on CPU than
    ``jax.vmap``, which puts the batch first and turns the per-site updates into batched gathers).
    """
    N, L = n_sites, buf_len
    R = a_blk.shape[-1]
    sites = jnp.arange(N)
    reps = jnp.arange(R)

    H = min(8, L)
    offs = jnp.arange(H)[None, :, None]

    def advance(buf, head, ptr, t):
        """Move each site's head past the ring entries <= t (they have left). The entries between head
        and ptr are non-decreasing (FCFS), so H of them are looked at per round until a round stops short."""
        def cond(st):
            return st[1]

        def step(st):
            head, _ = st
            vals = jnp.take_along_axis(buf, (head[:, None, :] + offs) % L, axis=1)          # (N,H,R)
            gone = (offs < (ptr - head)[:, None, :]) & (vals <= t[None, None, :])
            c = jnp.sum(gone, axis=1)
            return head + c, jnp.any(c == H)

        head, _ = jax.lax.while_loop(cond, step, (head, jnp.asarray(True)))
        return head

    def body(carry, xs):
        last, buf, head, ptr, view, overflow = carry      # (N,R) (N,L,R) (N,R) (N,R) (N,R) (R,)
        a, s, u, kk, valid, t, is_first = xs              # (B,R) x5, (R,) x2
        # Refresh (first block of a window): jobs of earlier windows still in system at ``t``.
        head = advance(buf, head, ptr, jnp.where(is_first, t, -jnp.inf))
        view = jnp.where(is_first[None, :], ptr - head, view)
        # Fig. 4 steps 3a-3d on the stale view, for every job of the block at once.
        pick = jnp.minimum(jnp.floor(u * kk).astype(jnp.int64), kk - 1)                      # (B,R)
        # rank of site i in a stable sort of the view (ties to the lower index), as dense compares;
        # ``rand`` (use_rank False) takes site ``pick`` directly.
        vi, vj = view[:, None, :], view[None, :, :]
        lower = (sites[None, :] < sites[:, None])[:, :, None]
        rank = jnp.sum((vj < vi) | ((vj == vi) & lower), axis=1)                              # (N,R)
        rank = jnp.where(use_rank, rank, sites[:, None])
        onehot = rank[None, :, :] == pick[:, None, :]                                         # (B,N,R)
        site = jnp.sum(jnp.where(onehot, sites[None, :, None], 0), axis=1)                    # (B,R)
        onehot = onehot & valid[:, None, :]

        # Per-site FCFS (Lindley), sequential inside the block so the float result is exact.
        def job(last, x):
            oh, ab, sv = x
            d = jnp.maximum(jnp.max(jnp.where(oh, last, -jnp.inf), axis=0), ab) + sv
            return jnp.where(oh, d[None, :], last), d

        last, dep = jax.lax.scan(job, last, (onehot, a, s), unroll=True)                     # dep (B,R)
        # The block's departures enter each site's ring at once (in job order within a site). An
        # entry may be overwritten only once it has left by ``t``; otherwise the ring is too small.
        within = jnp.sum(jnp.cumsum(onehot, axis=0) * onehot, axis=1) - 1                     # (B,R)
        ptr_site = jnp.sum(jnp.where(onehot, ptr[None, :, :], 0), axis=1)
        pos = (ptr_site + within) % L
        row = jnp.where(valid, site, N)
        col = jnp.broadcast_to(reps[None, :], row.shape)
        head_site = jnp.sum(jnp.where(onehot, head[None, :, :], 0), axis=1)
        overflow = overflow | jnp.any(valid & (ptr_site + within - head_site >= L), axis=0)
        buf = buf.at[row, pos, col].set(dep, mode="drop")
        ptr = ptr + onehot.sum(axis=0)
        return (last, buf, head, ptr, view, overflow), (dep, site)

    init = (jnp.full((N, R), -jnp.inf), jnp.full((N, L, R), -jnp.inf), jnp.zeros((N, R), jnp.int64),
            jnp.zeros((N, R), jnp.int64), jnp.zeros((N, R), jnp.int64), jnp.zeros(R, bool))
    carry, (dep, site) = jax.lax.scan(body, init, (a_blk, s_blk, u_blk, k_blk, valid_blk, t_ref, first))
    return dep, site, carry[-1]


@partial(jax.jit, static_argnames=("n_sites", "buf_len"))
def _batched_jit(a_blk, s_blk, u_blk, k_blk, valid_blk, t_ref, first, use_rank, *, n_sites, buf_len):
    """(R, C, B) / (R, C) inputs -> (R, C, B) departures and sites, (R,) overflow flags."""
    def mv(x):
        return jnp.moveaxis(x, 0, -1)

    dep, site, overflow = _run_blocks(mv(a_blk), mv(s_blk), mv(u_blk), mv(k_blk), mv(valid_blk), mv(t_ref),
                                      mv(first), use_rank, n_sites=n_sites, buf_len=buf_len)
    return jnp.moveaxis(dep, -1, 0), jnp.moveaxis(site, -1, 0), overflow


#: The largest ring size a run has needed so far, per N (runs start there: fewer repeated runs).
_RING_SEEN: dict[int, int] = {}


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
             u=None, block: int | None = None, buffer: int = 64,
             n_blocks: int | None = None) -> DispatchResult:
    """Dispatch jobs over ``n_sites`` FCFS sites under ``policy``; all per-job outputs (see module docstring).

    ``arrivals``/``services``: seconds, shape ``(n,)`` or ``(R, n)`` for R replications run in one
    vmapped call (arrivals non-decreasing along the job axis). ``key``: a ``jax.random`` key (or R
    keys) for ``rand``/``ara*``; with one key and R replications, replication r uses
    ``jax.random.split(key, R)[r]``. ``u``: per-job uniforms instead of ``key`` (tests).
    ``burst_state``: true burst state per job (``ara_opt``); ``predicted_state``: the on/off
    predictor's state per job (``ara_pred``; :func:`dispatch` computes it when not given).
    ``block``: jobs per scan block (default: chosen by a cost model); ``buffer``: initial ring size L;
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
    kk = np.stack([k_per_job(policy, n, n_sites, k=k, th_s=th_s, th_l=th_l,
                             state=None if state is None else state[r]) for r in range(R)])

    if u is None:
        if policy == "qlen":
            u2 = np.zeros((R, n))
        else:
            if key is None:
                raise ValueError(f"policy {policy!r} is randomised: pass key=jax.random.key(...) (or u=)")
            keys = _keys(key, R)
            u2 = np.asarray(jax.vmap(lambda kk_: uniforms(kk_, n))(keys))
    else:
        u2 = _as_2d(np.asarray(u, np.float64), "u", n)
        u2 = np.broadcast_to(u2, (R, n))

    B = int(block) if block is not None else _choose_block(a2, delay)
    if B < 1:
        raise ValueError(f"block must be a positive integer; got {block!r}")
    chunks = [chunk_jobs(a2[r], delay, B) for r in range(R)]
    C = _bucket(max(int(c[0][-1]) + 1 for c in chunks))
    if n_blocks is not None:
        if n_blocks < C:
            raise ValueError(f"n_blocks={n_blocks} is less than the {C} blocks these jobs need")
        C = int(n_blocks)
    a_blk = np.zeros((R, C, B))
    s_blk = np.zeros((R, C, B))
    u_blk = np.zeros((R, C, B))
    k_blk = np.ones((R, C, B), np.int64)
    v_blk = np.zeros((R, C, B), bool)
    t_ref = np.zeros((R, C))
    first = np.zeros((R, C), bool)
    for r, (ch, sl, tr, fi) in enumerate(chunks):  # a handful of replications, not jobs
        a_blk[r, ch, sl] = a2[r]
        s_blk[r, ch, sl] = s2[r]
        u_blk[r, ch, sl] = u2[r]
        k_blk[r, ch, sl] = kk[r]
        v_blk[r, ch, sl] = True
        t_ref[r, : len(tr)] = tr
        t_ref[r, len(tr):] = tr[-1]
        first[r, : len(fi)] = fi

    L = max(int(buffer), _RING_SEEN.get(int(n_sites), 0))
    while True:
        dep, site, overflow = _batched_jit(a_blk, s_blk, u_blk, k_blk, v_blk, t_ref, first,
                                           jnp.asarray(policy != "rand"), n_sites=int(n_sites), buf_len=L)
        if not bool(jnp.any(overflow)) or L >= 2 * n:
            break
        L *= 2  # a site held >= L jobs not known to have left: repeat with a larger ring
    _RING_SEEN[int(n_sites)] = max(L, _RING_SEEN.get(int(n_sites), 0))
    rows = np.arange(R)[:, None]
    ch = np.stack([c[0] for c in chunks])
    sl = np.stack([c[1] for c in chunks])
    dep_j = dep[rows, ch, sl]
    site_j = site[rows, ch, sl]
    resp = dep_j - jnp.asarray(a2)
    if single:
        return DispatchResult(resp[0], dep_j[0], site_j[0])
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
                    burst_state=burst_state, predicted_state=predicted, block=block).response


def predicted_burst_state(arrivals, params=None) -> np.ndarray:
    """The on/off predictor's state at each job's arrival (thesis Sec. 3.2.2; causal: the state of the
    last monitoring window decided at or before the arrival), from :mod:`tieringlab.models.burstiness`."""
    from tieringlab.models import burstiness  # noqa: PLC0415

    a = np.asarray(arrivals, np.float64)
    params = burstiness.BurstPredictorParams() if params is None else params
    pred = burstiness.predict_bursts(a, params)
    return np.asarray(burstiness.burst_state_at(pred, a))
