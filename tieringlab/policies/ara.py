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

The scan that carries the sequential state (the stale views, the per-site Lindley recursion, the departure
calendar) is :mod:`tieringlab.policies._ara_engine`; this module decides what it runs: the parameters
(:class:`AraParams`, each field declared once with its unit, bounds and source), each job's ``K_j``
(:func:`k_per_job`) and uniform (:func:`uniforms`), the result in the queueing contract (:func:`simulate`),
and the registry's names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import xarray as xr

from tieringlab.arrays import choice, is_concrete
from tieringlab.params import cross_field, field_problems, param
from tieringlab.policies._ara_engine import MIN_GROUP, run_blocks, window_index
from tieringlab.policies.contract import queue_result
from tieringlab.policies.registry import PolicySpec, register

__all__ = ["POLICIES", "AraParams", "DispatchResult", "dispatch", "simulate", "uniforms", "k_per_job",
           "window_index", "predicted_burst_state", "MIN_GROUP"]

POLICIES = ("qlen", "rand", "ara", "ara_pred", "ara_opt")


@dataclass(frozen=True)
class AraParams:
    """The load balancers' parameters, with the thesis's values (Sec. 3.1-3.2).

    ``policy`` picks the dispatcher (the registry names "Qlen", "Rand", "ARA", "ARA_PRED", "ARA_OPT" fix
    it). ``k``, ``th_s`` and ``th_l`` count sites, so each is at most ``n_sites`` (the one cross-field check);
    ``th_l`` None is Fig. 7 step 1a's ceil(0.5 N) (:meth:`large_threshold`).
    """

    n_sites: int = param(16, "N computing sites (thesis Sec. 3.1, Table 1)", bounds=(1, None), unit="sites")
    delay_s: float = param(1.0, "information query delay D: the balancer's load view is refreshed every D and "
                                "stale in between (thesis Sec. 3.1, footnote 2); must be > 0", bounds=(0.0, None),
                           unit="s")
    policy: str = param("qlen", "the dispatcher: qlen and rand (Sec. 3.1), ara (static ARA, Sec. 3.2.1 Fig. 4), "
                                "ara_pred and ara_opt (online ARA, Sec. 3.2.2 Fig. 7, Sec. 3.2.3)", choices=POLICIES)
    k: int = param(1, "static ARA's K: each job goes uniformly to one of the K least-loaded sites (Fig. 4 step 1a)",
                   bounds=(1, None), unit="sites")
    th_s: int = param(1, "online ARA's K outside bursts, th_s (Fig. 7 step 1: the example th_s = 1)", bounds=(1, None),
                      unit="sites")
    th_l: int | None = param(None, "online ARA's K during bursts, th_l; null: ceil(0.5 N), Fig. 7 step 1a's example "
                                   "(Fig. 8 (b) uses th_l = 14 of N = 16)", bounds=(1, None), unit="sites")

    def __post_init__(self):
        problems = field_problems(self)
        if not problems and is_concrete(self.delay_s) and not self.delay_s > 0:
            problems.append(f"delay_s must be a positive number of seconds (D); got {self.delay_s!r}")
        if not problems:  # cross-field: K and the thresholds are numbers of sites
            for name in ("k", "th_s", "th_l"):
                val = getattr(self, name)
                if val is not None and is_concrete(val) and not val <= self.n_sites:
                    problems.append(f"{name} must be an integer in [1, n_sites={self.n_sites}]; got {val!r}")
        cross_field(problems)

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

    resp, dep_j, site_j = run_blocks(a2, s2, PK, n_sites=n_sites, delay=delay, herd=herd, use_rank=use_rank,
                                     block=block, buffer=buffer, n_blocks=n_blocks, threads=threads,
                                     all_outputs=all_outputs)
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


def _example(policy: str):
    """A small valid call (the contract test's): two replications of 300 jobs, Poisson arrivals at 80 % load
    on 4 sites, exponential services; ARA_OPT gets its true burst state (on in the middle third)."""

    def example():
        rng = np.random.default_rng(7)
        arrivals = np.cumsum(rng.exponential(1.0 / (0.8 * 4), (2, 300)), axis=1)  # rate 0.8 x 4 sites / 1 s
        services = rng.exponential(1.0, (2, 300))
        kw = {"params": AraParams(n_sites=4, policy=policy, k=2, th_s=1, th_l=3)}
        if policy == "ara_opt":
            kw["burst_state"] = np.broadcast_to((np.arange(300) // 100) == 1, (2, 300)).copy()
        return (arrivals, services), kw

    return example


for _policy, _name in _NAMES.items():
    register(PolicySpec(name=_name, kind="queueing", fn=simulate, params_type=AraParams, source=_SOURCE[_policy],
                        fixed={"policy": _policy}, random=_policy != "qlen", example=_example(_policy),
                        description="dispatcher over N FCFS sites with a D-stale load view"))
