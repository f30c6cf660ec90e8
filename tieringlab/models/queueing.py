"""Queueing models as array operations: FCFS (Lindley) by prefix sums, closed forms (M/M/1, M/G/1,
M/M/c), LMST Eq. 3, 6-9.

FCFS single server (thesis Sec. 3.1: every computing site "runs the First-In-First-Out (FIFO)
policy"; thesis Sec. 4.1.2.2: FIFO within each logical buffer). Job n arrives at ``a_n``
(non-decreasing), needs ``s_n`` seconds of service, and departs at the Lindley recursion

    D_n = max(D_{n-1}, a_n) + s_n ,           R_n = D_n - a_n .

With ``S_n = s_1 + ... + s_n`` this unrolls to a cumulative maximum,

    D_n = S_n + max( D_0 - S_0 , max_{i<=n} (a_i - S_{i-1}) ),

so one ``cumsum`` and one ``cummax`` replace the per-job loop (``D_0`` is the time the server
becomes free before the first job; ``-inf`` for an empty server). The per-site version sorts jobs
by (site, arrival) and runs a *segmented* cumulative sum and maximum (``lax.associative_scan`` with
segment flags), so many sites cost one sort.

Non-preemptive priority, one server (thesis Sec. 4.1.2.2, Fig. 12: one disk queue split into logical
buffers served by SLA priority, FIFO inside a buffer): :func:`priority_response_times`. The per-class
Lindley structure does not survive priorities (which class the server takes depends on all earlier
choices), so the jobs are walked in *service order* with a small carry: one pointer per class to its
oldest waiting job, and the time the server frees (a compiled loop, or a ``lax.scan``; see there).

LMST (thesis Sec. 4.1.2.2, Table 3 notation): disk ``D_j`` with average service rate ``mu_{D_j}``
and average I/O size ``s_{D_j}``; ALUN ``A_i`` with arrival rate ``lambda_{A_i}``; the disk's single
I/O queue is split into ``l`` consecutive logical buffers ``Q_{j,1..l}``, buffer ``Q_{j,k}`` serving
the I/Os of SLA class ``k`` (``SLA_1 < SLA_2 < ...``, so class 1 is the strictest and sits at the
head of the queue). The thesis states rates in KB/ms, sizes in KB and SLAs in ms; this library uses
bytes/s, bytes and seconds: the formulas are unit-free ratios, so only the inputs change.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from tieringlab.arrays import bucket, is_concrete, pad

__all__ = [
    "fcfs_departure_times",
    "fcfs_response_times",
    "fcfs_per_site_departure_times",
    "fcfs_per_site",
    "number_in_system",
    "mm1_mean_response",
    "mg1_mean_response",
    "md1_mean_response",
    "littles_law",
    "lmst_disk_arrival_rate",
    "lmst_class_cumulative_arrival_rate",
    "lmst_max_queue_length",
    "lmst_queue_length",
    "lmst_response_time",
    "lmst_sla_constraint",
    "priority_mean_response",
    "PRIORITY_ENGINES",
    "priority_departure_times",
    "priority_response_times",
    "erlang_c",
    "mmc_mean_wait",
    "mmc_mean_response",
]


# ----------------------------------------------------------------------------- validation helpers

def _check_jobs(arrival_times, service_times, *, need_sorted: bool) -> None:
    a = np.asarray(arrival_times)
    s = np.asarray(service_times)
    if a.ndim != 1 or s.ndim != 1 or a.shape != s.shape:
        raise ValueError(
            f"arrival_times and service_times must be 1-D arrays of the same length; "
            f"got shapes {a.shape} and {s.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError("arrival_times must be finite")
    if np.any(~(s >= 0)):
        bad = int(np.flatnonzero(~(s >= 0))[0])
        raise ValueError(f"service_times must be >= 0 (seconds); service_times[{bad}] = {s[bad]!r}")
    if need_sorted and a.size > 1:
        dec = np.flatnonzero(np.diff(a) < 0)
        if dec.size:
            i = int(dec[0]) + 1
            raise ValueError(
                "arrival_times must be non-decreasing (FCFS serves jobs in the given order); "
                f"arrival_times[{i}] = {a[i]!r} < arrival_times[{i - 1}] = {a[i - 1]!r}. "
                "Sort the jobs by arrival time first, or use fcfs_per_site, which sorts.")


#: Inputs are padded to a power-of-two length (at least this), so jit compiles once per size class.
_MIN_PAD = 16


# ----------------------------------------------------------------------------- FCFS, one server

@jax.jit
def _fcfs_departures(a, s, d0):
    S = jnp.cumsum(s)
    S_prev = S - s                                   # S_{n-1}
    start = jnp.maximum(jax.lax.cummax(a - S_prev), d0)  # max(D_0 - S_0, max_i a_i - S_{i-1}), S_0 = 0
    return S + start


def fcfs_departure_times(arrival_times, service_times, initial_departure=-jnp.inf):
    """Departure times ``D_n`` of one FCFS server (Lindley recursion as cumsum + cummax).

    ``D_n = max(D_{n-1}, a_n) + s_n`` for jobs in the given order; ``initial_departure`` is ``D_0``,
    the time the server becomes free (``-inf``: idle). ``arrival_times`` must be non-decreasing
    (checked when the inputs are concrete; inside ``jax.jit`` the caller guarantees it).
    Seconds in, seconds out; jit-able.
    """
    if is_concrete(arrival_times, service_times):
        _check_jobs(arrival_times, service_times, need_sorted=True)
    a = jnp.asarray(arrival_times, dtype=jnp.float64)
    s = jnp.asarray(service_times, dtype=jnp.float64)
    return _departures_padded(a, s, initial_departure)


def _departures_padded(a, s, initial_departure):
    n = a.shape[0]
    if n == 0:
        return a
    if is_concrete(a, s):
        # trailing zero-service jobs at the last arrival change no earlier departure (prefix ops)
        nb = bucket(n, minimum=_MIN_PAD)
        a, s = pad(a, nb, a[-1]), pad(s, nb, 0.0)
    return _fcfs_departures(a, s, jnp.asarray(initial_departure, dtype=jnp.float64))[:n]


def fcfs_response_times(arrival_times, service_times, initial_departure=-jnp.inf):
    """Response (sojourn) times ``R_n = D_n - a_n`` of one FCFS single server.

    Lindley recursion ``D_n = max(D_{n-1}, a_n) + s_n`` written as prefix operations
    (``D_n = S_n + max_{i<=n}(a_i - S_{i-1})``, ``S_n = sum_{i<=n} s_i``): no per-job loop.

    Parameters
    ----------
    arrival_times : (n,) float, seconds, non-decreasing (ValueError otherwise, naming the index).
    service_times : (n,) float, seconds, >= 0.
    initial_departure : float, seconds; the server is busy until then (default ``-inf``: idle).

    Returns
    -------
    (n,) float64 response times in seconds (waiting + service).
    """
    if is_concrete(arrival_times, service_times):
        _check_jobs(arrival_times, service_times, need_sorted=True)
    a = jnp.asarray(arrival_times, dtype=jnp.float64)
    s = jnp.asarray(service_times, dtype=jnp.float64)
    return _departures_padded(a, s, initial_departure) - a


# ----------------------------------------------------------------------------- FCFS, many sites

def _seg_op(left, right):
    """Associative combine for a segmented scan: (value, starts-new-segment flag)."""
    vl, fl = left
    vr, fr = right
    return jnp.where(fr, vr, jnp.maximum(vl, vr)), fl | fr


def _seg_sum_op(left, right):
    vl, fl = left
    vr, fr = right
    return jnp.where(fr, vr, vl + vr), fl | fr


@jax.jit
def _per_site_departures(a, s, site, d0_per_site):
    order = jnp.lexsort((a, site))                   # stable: by site, then arrival, then index
    a_o, s_o, site_o = a[order], s[order], site[order]
    first = jnp.concatenate([jnp.array([True]), site_o[1:] != site_o[:-1]])
    S, _ = jax.lax.associative_scan(_seg_sum_op, (s_o, first))      # S_n within the site
    S_prev = S - s_o
    m, _ = jax.lax.associative_scan(_seg_op, (a_o - S_prev, first))  # max_{i<=n} (a_i - S_{i-1})
    d_o = S + jnp.maximum(m, d0_per_site[site_o])
    return jnp.empty_like(d_o).at[order].set(d_o)


def _check_sites(site, n_sites, n_jobs):
    st = np.asarray(site)
    if st.shape != (n_jobs,):
        raise ValueError(f"site must be a 1-D integer array with one entry per job ({n_jobs}); got shape {st.shape}")
    if not np.issubdtype(st.dtype, np.integer):
        raise ValueError(f"site must hold integer site indices; got dtype {st.dtype}")
    if st.size and (st.min() < 0 or st.max() >= n_sites):
        raise ValueError(f"site values must lie in [0, n_sites) = [0, {n_sites}); got min {st.min()}, max {st.max()}")


def fcfs_per_site_departure_times(arrival_times, service_times, site, n_sites: int, initial_departure=None):
    """Departure times of jobs at ``n_sites`` independent FCFS servers, in the original job order.

    Job n joins site ``site[n]``; each site serves its own jobs in arrival order (ties kept in
    input order: a stable sort by (site, arrival)). ``initial_departure``: None (all idle) or an
    ``(n_sites,)`` array of the times each server becomes free. Arrivals need not be sorted.
    """
    if not isinstance(n_sites, (int, np.integer)) or n_sites < 1:
        raise ValueError(f"n_sites must be a positive int; got {n_sites!r}")
    if is_concrete(arrival_times, service_times, site):
        _check_jobs(arrival_times, service_times, need_sorted=False)
        _check_sites(site, n_sites, np.asarray(arrival_times).shape[0])
    a = jnp.asarray(arrival_times, dtype=jnp.float64)
    s = jnp.asarray(service_times, dtype=jnp.float64)
    st = jnp.asarray(site, dtype=jnp.int64)
    if initial_departure is None:
        d0 = jnp.full((int(n_sites),), -jnp.inf)
    else:
        d0 = jnp.asarray(initial_departure, dtype=jnp.float64)
        if d0.shape != (int(n_sites),):
            raise ValueError(f"initial_departure must have shape (n_sites,) = ({n_sites},); got {d0.shape}")
    n = a.shape[0]
    if n == 0:
        return a
    if is_concrete(a, s, st, d0):
        # padding jobs go to an extra phantom site n_sites, which sorts last and is sliced off
        nb = bucket(n, minimum=_MIN_PAD)
        a, s, st = pad(a, nb, 0.0), pad(s, nb, 0.0), pad(st, nb, int(n_sites))
        d0 = jnp.concatenate([d0, jnp.array([-jnp.inf])])
        return _per_site_departures(a, s, st, d0)[:n]
    return _per_site_departures(a, s, st, jnp.concatenate([d0, jnp.array([-jnp.inf])]))


def fcfs_per_site(arrival_times, service_times, site, n_sites: int, initial_departure=None):
    """Response times of jobs at ``n_sites`` FCFS single servers (thesis Sec. 3.1 FIFO sites).

    Segmented Lindley recursion: jobs sorted stably by (site, arrival time), a segmented
    cumulative sum of service times and a segmented cumulative maximum, then scattered back.

    Parameters
    ----------
    arrival_times : (n,) float seconds (any order).
    service_times : (n,) float seconds >= 0.
    site : (n,) int in [0, n_sites): the site each job is assigned to.
    n_sites : int, the number of sites N.
    initial_departure : None or (n_sites,) float: time each server becomes free (carry between
        epochs when a load balancer assigns jobs epoch by epoch).

    Returns
    -------
    (n,) float64 response times in the original job order.
    """
    d = fcfs_per_site_departure_times(arrival_times, service_times, site, n_sites, initial_departure)
    return d - jnp.asarray(arrival_times, dtype=jnp.float64)


def number_in_system(arrival_times, departure_times, instants, site=None, n_sites: int | None = None):
    """Number of jobs in system ``N(t) = #{a_n <= t} - #{D_n <= t}`` at the given instants.

    A job counts at t when ``a_n <= t < D_n``. Arrays need not be sorted. With ``site`` and
    ``n_sites`` the counts are per site: shape ``(n_sites, len(instants))``; otherwise
    ``(len(instants),)``. Vectorized with searchsorted / scatter-add + cumsum (no loop).
    """
    a = jnp.asarray(arrival_times, dtype=jnp.float64)
    d = jnp.asarray(departure_times, dtype=jnp.float64)
    t = jnp.asarray(instants, dtype=jnp.float64)
    if a.shape != d.shape or a.ndim != 1:
        raise ValueError(f"arrival_times and departure_times must be 1-D of equal length; got {a.shape}, {d.shape}")
    if t.ndim != 1:
        raise ValueError(f"instants must be 1-D; got shape {t.shape}")
    if site is not None and n_sites is None:
        raise ValueError("number_in_system: give n_sites together with site")
    if site is not None and is_concrete(site):
        _check_sites(site, n_sites, a.shape[0])
    n, m = a.shape[0], t.shape[0]
    st = jnp.zeros(n, jnp.int64) if site is None else jnp.asarray(site, dtype=jnp.int64)
    if is_concrete(a, d, t, st):
        # padded jobs never arrive (+inf); padded instants are sliced off
        nb, mb = bucket(n, minimum=_MIN_PAD), bucket(m, minimum=_MIN_PAD)
        a, d, st, t = pad(a, nb, jnp.inf), pad(d, nb, jnp.inf), pad(st, nb, 0), pad(t, mb, jnp.inf)
    counts = _number_in_system(a, d, t, st, 1 if site is None else int(n_sites))[:, :m]
    return counts[0] if site is None else counts


@functools.partial(jax.jit, static_argnums=4)
def _number_in_system(a, d, t, st, n_sites):
    order = jnp.argsort(t)
    t_s = t[order]
    m = t.shape[0]
    # a job enters the count at the first sorted instant >= a and leaves at the first instant >= D
    ia = jnp.searchsorted(t_s, a, side="left")
    id_ = jnp.searchsorted(t_s, d, side="left")
    delta = jnp.zeros((n_sites, m + 1), dtype=jnp.int64)
    delta = delta.at[st, ia].add(1).at[st, id_].add(-1)
    counts_sorted = jnp.cumsum(delta, axis=1)[:, :m]
    return jnp.empty_like(counts_sorted).at[:, order].set(counts_sorted)


# ----------------------------------------------------------------------------- closed forms

def mm1_mean_response(lam, mu):
    """M/M/1 mean response time ``W = 1 / (mu - lam)`` (seconds; rates in 1/s).

    Raises ValueError when ``lam >= mu`` (unstable) for concrete inputs; returns inf under jit.
    """
    if is_concrete(lam, mu):
        lam_, mu_ = np.asarray(lam, float), np.asarray(mu, float)
        if np.any(lam_ < 0) or np.any(mu_ <= 0):
            raise ValueError(f"need lam >= 0 and mu > 0 (1/s); got lam={lam!r}, mu={mu!r}")
        if np.any(lam_ >= mu_):
            raise ValueError(f"M/M/1 is unstable for lam >= mu; got lam={lam!r}, mu={mu!r}")
    lam, mu = jnp.asarray(lam, jnp.float64), jnp.asarray(mu, jnp.float64)
    return jnp.where(lam < mu, 1.0 / (mu - lam), jnp.inf)


def mg1_mean_response(lam, mean_s, scv_s):
    """M/G/1 mean response time by Pollaczek-Khinchine.

    ``W = E[S] + lam * E[S^2] / (2 (1 - rho))`` with ``rho = lam E[S]`` and
    ``E[S^2] = E[S]^2 (1 + c_s^2)`` (``scv_s`` = c_s^2, the squared coefficient of variation of
    the service time). Seconds and 1/s. ValueError when ``rho >= 1`` for concrete inputs.
    """
    if is_concrete(lam, mean_s, scv_s):
        l_, m_, c_ = (np.asarray(v, float) for v in (lam, mean_s, scv_s))
        if np.any(l_ < 0) or np.any(m_ <= 0) or np.any(c_ < 0):
            raise ValueError(f"need lam >= 0, mean_s > 0, scv_s >= 0; got {lam!r}, {mean_s!r}, {scv_s!r}")
        if np.any(l_ * m_ >= 1):
            raise ValueError(f"M/G/1 is unstable for rho = lam * mean_s >= 1; got rho = {l_ * m_!r}")
    lam, mean_s, scv_s = (jnp.asarray(v, jnp.float64) for v in (lam, mean_s, scv_s))
    rho = lam * mean_s
    es2 = mean_s**2 * (1.0 + scv_s)
    return jnp.where(rho < 1, mean_s + lam * es2 / (2.0 * (1.0 - rho)), jnp.inf)


def md1_mean_response(lam, mean_s):
    """M/D/1 mean response time: Pollaczek-Khinchine with deterministic service (``scv_s = 0``)."""
    return mg1_mean_response(lam, mean_s, 0.0)


def littles_law(*, arrival_rate=None, mean_response=None, mean_number=None):
    """Little's law ``L = lambda W``: give exactly two of the three, get the third.

    ``arrival_rate`` lambda (1/s), ``mean_response`` W (s), ``mean_number`` L (jobs).
    """
    given = {k: v for k, v in dict(arrival_rate=arrival_rate, mean_response=mean_response,
                                   mean_number=mean_number).items() if v is not None}
    if len(given) != 2:
        raise ValueError("littles_law needs exactly two of arrival_rate, mean_response, mean_number; "
                         f"got {sorted(given)}")
    if mean_number is None:
        return jnp.asarray(arrival_rate) * jnp.asarray(mean_response)
    if mean_response is None:
        return jnp.asarray(mean_number) / jnp.asarray(arrival_rate)
    return jnp.asarray(mean_number) / jnp.asarray(mean_response)


# ----------------------------------------------------------------------------- LMST (thesis Sec. 4.1.2)

def lmst_disk_arrival_rate(lam_A, disk_of, n_disks: int):
    """Thesis Eq. 3: ``lambda_{D_j} = sum_i x_{i,j} lambda_{A_i}``.

    ``lam_A``: (n,) ALUN arrival rates (bytes/s); ``disk_of``: (n,) int, the j with ``x_{i,j} = 1``.
    Returns (n_disks,) disk arrival rates.
    """
    lam_A = jnp.asarray(lam_A, jnp.float64)
    return jnp.zeros(int(n_disks)).at[jnp.asarray(disk_of)].add(lam_A)


def lmst_class_cumulative_arrival_rate(lam_A, disk_of, sla_class_of, n_disks: int, n_classes: int):
    """``lambda-bar_{j,k} = sum_{t=1..k} sum_i x_{i,j} y_{i,t} lambda_{A_i}`` (thesis Sec. 4.1.2.2).

    The arrival rate into logical buffers ``Q_{j,1..k}`` of disk j: the ALUNs on disk j whose SLA
    is equal to or stricter than ``SLA_k``. ``sla_class_of[i]`` is the 0-based class k of ALUN i,
    classes ordered from the strictest (k = 0, smallest SLA) up. Returns (n_disks, n_classes).
    """
    lam_A = jnp.asarray(lam_A, jnp.float64)
    per = jnp.zeros((int(n_disks), int(n_classes))).at[jnp.asarray(disk_of), jnp.asarray(sla_class_of)].add(lam_A)
    return jnp.cumsum(per, axis=1)


def lmst_max_queue_length(sla, mu_D):
    """``ML_{j,k} = SLA_k * mu_{D_j}`` (thesis Sec. 4.1.2.2): the most the disk can hold without an
    SLA-k violation. ``sla``: (l,) seconds, ``mu_D``: (m,) bytes/s -> (m, l) bytes."""
    return jnp.asarray(mu_D, jnp.float64)[:, None] * jnp.asarray(sla, jnp.float64)[None, :]


def lmst_queue_length(lam_bar, mu_D, s_D):
    """Thesis Eq. 6: ``QL_{j,k} = f(lambda-bar_{j,k}) = lambda-bar / (mu_{D_j} - lambda-bar) * s_{D_j}``.

    The accumulated average queue length (bytes) of logical buffers ``Q_{j,1..k}``; inf when
    ``lambda-bar >= mu_{D_j}`` (the buffer never drains). ``lam_bar`` (m, l) or (m,) bytes/s,
    ``mu_D`` (m,) bytes/s, ``s_D`` (m,) bytes (average I/O size on the disk); broadcasting allowed.
    """
    lam_bar = jnp.asarray(lam_bar, jnp.float64)
    mu = jnp.asarray(mu_D, jnp.float64)
    s = jnp.asarray(s_D, jnp.float64)
    if lam_bar.ndim == 2:
        mu = mu.reshape(-1, 1) if mu.ndim == 1 else mu
        s = s.reshape(-1, 1) if s.ndim == 1 else s
    gap = mu - lam_bar
    return jnp.where(gap > 0, lam_bar / jnp.where(gap > 0, gap, 1.0) * s, jnp.inf)


def lmst_response_time(lam_D, mu_D, s_D):
    """Thesis Eq. 9: ``RT_j = g(j, lambda_{D_j}) = s_{D_j} / (mu_{D_j} - lambda_{D_j})`` (seconds).

    Rates in bytes/s, ``s_D`` in bytes; inf when ``lambda_{D_j} >= mu_{D_j}``. (This is the M/M/1
    mean response ``1 / (mu' - lambda')`` with rates ``mu' = mu / s`` in I/Os per second.)
    """
    lam = jnp.asarray(lam_D, jnp.float64)
    mu = jnp.asarray(mu_D, jnp.float64)
    s = jnp.asarray(s_D, jnp.float64)
    gap = mu - lam
    return jnp.where(gap > 0, s / jnp.where(gap > 0, gap, 1.0), jnp.inf)


def lmst_sla_constraint(lam_A_i, k, lam_D, lam_bar, mu_D, s_D, sla):
    """Thesis Eq. 7 and Eq. 8 for candidate migrations ``(A_i, D_j)``, vectorized over disks.

    Eq. 7: ``lambda_{D_j} + lambda_{A_i} < mu_{D_j}``;
    Eq. 8: ``ML_{j,k} >= QL'_{j,k} = f(lambda-bar_{j,k} + lambda_{A_i})`` for the class k of A_i.
    ``lam_A_i`` scalar (bytes/s), ``k`` 0-based class, ``lam_D`` (m,), ``lam_bar`` (m, l),
    ``mu_D`` (m,), ``s_D`` (m,), ``sla`` (l,) seconds. Returns (m,) bool: A_i may move to D_j.

    As the thesis writes it, Eq. 8 checks only the buffer of A_i's own class k.
    """
    lam_D = jnp.asarray(lam_D, jnp.float64)
    mu = jnp.asarray(mu_D, jnp.float64)
    ok7 = lam_D + lam_A_i < mu
    ql_new = lmst_queue_length(jnp.asarray(lam_bar, jnp.float64)[:, k] + lam_A_i, mu, s_D)
    ml = mu * jnp.asarray(sla, jnp.float64)[k]
    return ok7 & (ml >= ql_new)


def priority_mean_response(lam, mean_s, scv_s):
    """Mean response time per class of an M/G/1 queue with non-preemptive priority classes
    (Cobham 1954; Kleinrock, Queueing Systems Vol. 2, Sec. 3.6), FIFO within a class.

    This is the queue of thesis Sec. 4.1.2.2 / Fig. 12 read as a queueing model: one disk, its
    single I/O queue split into logical buffers ``Q_{j,1..l}``, buffer k holding the I/Os of
    ``SLA_k`` (``SLA_1 < SLA_2 < ...``), FIFO inside a buffer, the buffers served head first, an
    I/O in service never interrupted. Class index 0 is the strictest SLA. (The thesis itself sizes
    the buffers with Eq. 6; this closed form gives each class's mean response, to check an
    ``SLA_k`` against.)

    ``W_k = E[S_k] + R / ((1 - sigma_{k-1}) (1 - sigma_k))``, ``R = sum_i lam_i E[S_i^2] / 2``,
    ``sigma_k = sum_{i<=k} lam_i E[S_i]``, ``E[S^2] = E[S]^2 (1 + scv)``.

    ``lam``, ``mean_s``, ``scv_s``: (l,) per class (1/s, s, unit-free). Returns (l,) seconds;
    ValueError if the total load ``sigma_l >= 1`` (concrete inputs).
    """
    lam = jnp.atleast_1d(jnp.asarray(lam, jnp.float64))
    es = jnp.atleast_1d(jnp.asarray(mean_s, jnp.float64))
    scv = jnp.atleast_1d(jnp.asarray(scv_s, jnp.float64))
    if is_concrete(lam, es, scv):
        if lam.shape != es.shape or lam.shape != scv.shape or lam.ndim != 1:
            raise ValueError("lam, mean_s, scv_s must be 1-D of equal length; "
                             f"got {lam.shape}, {es.shape}, {scv.shape}")
        if np.any(np.asarray(lam) < 0) or np.any(np.asarray(es) <= 0) or np.any(np.asarray(scv) < 0):
            raise ValueError("need lam >= 0, mean_s > 0, scv_s >= 0 per class")
        total = float(np.sum(np.asarray(lam) * np.asarray(es)))
        if total >= 1:
            raise ValueError(f"the priority queue is unstable: total load sum(lam * mean_s) = {total} >= 1")
    rho = lam * es
    R = jnp.sum(lam * es**2 * (1.0 + scv)) / 2.0
    sigma = jnp.cumsum(rho)
    sigma_prev = sigma - rho
    return es + R / ((1.0 - sigma_prev) * (1.0 - sigma))


# ----------------------------------------------------------------------------- non-preemptive priority

#: Engines of :func:`priority_departure_times`: "auto" (numba on JAX's CPU backend, the JAX scan
#: elsewhere), "numba" (a compiled loop, :mod:`tieringlab.models._queue_native`), "jax" (a jitted
#: ``lax.scan`` over the jobs in service order). Same departures, bit for bit.
PRIORITY_ENGINES = ("auto", "numba", "jax")


def _check_priority_jobs(arrival_times, service_times, priority, n_classes):
    """Validated float64 arrivals/services and dense class ranks (0 = served first); ValueError naming
    the parameter otherwise."""
    _check_jobs(arrival_times, service_times, need_sorted=True)
    a = np.asarray(arrival_times, dtype=np.float64)
    s = np.asarray(service_times, dtype=np.float64)
    if not np.all(np.isfinite(s)):
        raise ValueError("service_times must be finite (seconds)")
    pr = np.asarray(priority)
    if pr.shape != a.shape:
        raise ValueError(f"priority must have one entry per job ({a.shape[0]}); got shape {pr.shape}")
    if pr.size and (pr.dtype == bool or not np.issubdtype(pr.dtype, np.integer)):
        raise ValueError(f"priority must hold integers (smaller = served first); got dtype {pr.dtype}")
    if n_classes is not None:
        if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)) or n_classes < 1:
            raise ValueError(f"n_classes must be a positive int; got {n_classes!r}")
        if pr.size and (pr.min() < 0 or pr.max() >= n_classes):
            bad = int(np.flatnonzero((pr < 0) | (pr >= n_classes))[0])
            raise ValueError(f"priority must lie in the classes [0, n_classes) = [0, {n_classes}); "
                             f"priority[{bad}] = {int(pr[bad])}")
        rank, k = pr.astype(np.int64), int(n_classes)
    else:
        levels, rank = np.unique(pr, return_inverse=True)      # dense ranks: any integers allowed
        rank, k = rank.astype(np.int64).reshape(a.shape), max(int(levels.size), 1)
    return a, s, rank, k


@functools.partial(jax.jit, static_argnames=("n_classes",))
def _priority_scan(a, s, rank, t0, n_classes):
    """``lax.scan`` over the jobs in service order; carry: the time the server frees and, per class,
    the position of its oldest unserved job in the class-sorted job list (the FIFO buffers)."""
    n = a.shape[0]
    order = jnp.argsort(rank, stable=True)                       # class by class, input order inside
    counts = jnp.zeros(n_classes, jnp.int64).at[rank].add(1)
    seg_end = jnp.cumsum(counts)
    seg_start = seg_end - counts
    a_o = a[order]

    def step(carry, _):
        t, ptr = carry
        idx = seg_start + ptr
        has = idx < seg_end
        ha = jnp.where(has, a_o[jnp.minimum(idx, n - 1)], jnp.inf)   # each class's oldest waiting job
        t_start = jnp.where(jnp.any(ha <= t), t, jnp.min(ha))          # idle: until the next arrival
        k = jnp.argmax(has & (ha <= t_start))                          # smallest class waiting at t_start
        j = order[jnp.minimum(idx[k], n - 1)]
        d = jnp.maximum(t_start, a[j]) + s[j]
        return (d, ptr.at[k].add(1)), (j, d)

    _, (jobs, deps) = jax.lax.scan(step, (t0, jnp.zeros(n_classes, jnp.int64)), None, length=n, unroll=8)
    return jnp.zeros(n).at[jobs].set(deps)


def _resolve_engine(engine: str) -> str:
    if engine not in PRIORITY_ENGINES:
        raise ValueError(f"engine must be one of {', '.join(map(repr, PRIORITY_ENGINES))}; got {engine!r}")
    if engine == "auto":
        return "numba" if jax.default_backend() == "cpu" else "jax"
    return engine


def priority_departure_times(arrival_times, service_times, priority, *, n_classes: int | None = None,
                             initial_departure: float = -np.inf, engine: str = "auto") -> np.ndarray:
    """Departure times of one **non-preemptive priority** server, in input order (seconds).

    Thesis Sec. 4.1.2.2 and Fig. 12: disk ``D_j`` has one server and one I/O queue split into logical
    buffers ``Q_{j,1..l}``, buffer ``Q_{j,k}`` holding the I/Os of ``SLA_k``; the stricter the SLA, the
    higher the priority; FIFO inside a buffer; an I/O in service is never interrupted (a documented
    reading: the thesis does not mention preemption).

    Rule: when the server frees at time ``t``, the waiting job (``a_j <= t``) with the smallest
    ``priority`` value starts; ties go to the earlier arrival, then to the earlier input position. When
    no job waits, the server idles until the next arrival, and among the jobs arriving then the same
    rule picks. ``D_j = max(t, a_j) + s_j``.

    Parameters
    ----------
    arrival_times : (n,) float seconds, non-decreasing (ValueError otherwise, naming the index).
    service_times : (n,) float seconds, finite, >= 0.
    priority : (n,) int; smaller = served first. Any integers when ``n_classes`` is None; with
        ``n_classes`` they must lie in ``[0, n_classes)`` (ValueError naming the first bad job).
    initial_departure : the server is busy until then (default ``-inf``: idle).
    engine : one of :data:`PRIORITY_ENGINES` (identical results; "numba" is ~1000x faster on a CPU).

    Returns
    -------
    (n,) float64 NumPy array of departure times. Cost O(n K) for K classes (meant for a few classes).
    """
    eng = _resolve_engine(engine)
    a, s, rank, k = _check_priority_jobs(arrival_times, service_times, priority, n_classes)
    n = a.shape[0]
    if n == 0:
        return np.zeros(0)
    t0 = float(initial_departure)
    if np.isnan(t0):
        raise ValueError("initial_departure must be a time in seconds or -inf; got nan")
    if eng == "numba":
        from tieringlab.models import _queue_native  # noqa: PLC0415  (numba only when this engine runs)

        return _queue_native.priority_departures(a, s, rank, k, t0, np.empty(n))
    nb = bucket(n, minimum=16, fine_above=1 << 16)
    # padding jobs: their own last class, arriving at +inf, so they are served after every real job
    a_p, s_p = np.full(nb, np.inf), np.zeros(nb)
    r_p = np.full(nb, k, np.int64)
    a_p[:n], s_p[:n], r_p[:n] = a, s, rank
    # classes padded to a power of two (>= 8; empty classes are never picked): fewer compilations
    dep = _priority_scan(jnp.asarray(a_p), jnp.asarray(s_p), jnp.asarray(r_p), jnp.float64(t0),
                         bucket(k + 1, minimum=8))
    return np.asarray(dep)[:n]


def priority_response_times(arrival_times, service_times, priority, *, n_classes: int | None = None,
                            initial_departure: float = -np.inf, engine: str = "auto") -> np.ndarray:
    """Response (sojourn) times ``R_j = D_j - a_j`` of one non-preemptive priority server, input order.

    The queue of thesis Fig. 12 (Sec. 4.1.2.2): see :func:`priority_departure_times` for the rule
    (smallest ``priority`` first among the waiting jobs, then earlier arrival, then input order), the
    parameters and the engines. With one class this is the FCFS server of :func:`fcfs_response_times`.
    Returns a (n,) float64 NumPy array (seconds).
    """
    dep = priority_departure_times(arrival_times, service_times, priority, n_classes=n_classes,
                                   initial_departure=initial_departure, engine=engine)
    return dep - np.asarray(arrival_times, dtype=np.float64)


# ----------------------------------------------------------------------------- M/M/c (Erlang C)

def _c_max(c, c_max):
    if c_max is not None:
        if isinstance(c_max, bool) or not isinstance(c_max, (int, np.integer)) or int(c_max) < 1:
            raise ValueError(f"c_max must be a positive Python int (static); got {c_max!r}")
        return int(c_max)
    if not is_concrete(c):
        raise ValueError("c_max (the largest number of servers, a static int) is needed when c is traced")
    return int(np.max(np.asarray(c)))


def erlang_c(c, rho, c_max: int | None = None):
    """Erlang's C formula: the probability ``P_W`` that an arrival waits in an M/M/c queue.

    ``c`` servers (int >= 1, array), utilisation ``rho = lam E[S] / c`` in [0, 1) (array; they
    broadcast). With the offered load ``a = c rho`` (Erlangs), Erlang B is
    ``B(c, a) = (a^c / c!) / sum_{k=0..c} a^k / k!`` and ``C(c, a) = B / (1 - rho (1 - B))``.
    B is evaluated in log space over ``k = 0 .. c_max`` with the terms above ``c`` masked out: one
    vectorized ``logsumexp``, no loop, exact for every ``c <= c_max`` (``c_max`` static; taken from a
    concrete ``c`` when not given). ``rho >= 1`` gives 1 (every arrival waits).
    """
    K = _c_max(c, c_max)
    if is_concrete(c, rho):
        c_, r_ = np.asarray(c), np.asarray(rho, float)
        if np.any(c_ < 1) or np.any(c_ > K) or not np.all(np.equal(np.mod(c_, 1), 0)):
            raise ValueError(f"c must be whole numbers of servers in [1, c_max={K}]; got {c!r}")
        if np.any(~(r_ >= 0)):
            raise ValueError(f"rho must be >= 0; got {rho!r}")
    return _erlang_c(jnp.asarray(c, jnp.float64), jnp.asarray(rho, jnp.float64), K)


@functools.partial(jax.jit, static_argnums=2)
def _erlang_c(c, rho, K):
    c, rho = jnp.broadcast_arrays(c, rho)
    r = jnp.clip(rho, 0.0, 1.0 - 1e-15)
    a = c * r
    k = jnp.arange(K + 1, dtype=jnp.float64)
    loga = jnp.log(jnp.where(a > 0, a, 1.0))[..., None]
    terms = jnp.where(k == 0, 0.0, jnp.where(a[..., None] > 0, k * loga, -jnp.inf)) - jax.scipy.special.gammaln(k + 1)
    terms = jnp.where(k <= c[..., None], terms, -jnp.inf)
    log_b = jnp.sum(jnp.where(k == c[..., None], terms, 0.0), axis=-1) - jax.scipy.special.logsumexp(terms, axis=-1)
    b = jnp.exp(log_b)
    pw = b / (1.0 - r * (1.0 - b))
    return jnp.where(rho >= 1.0, 1.0, pw)


def mmc_mean_wait(lam, mean_s, c, c_max: int | None = None):
    """M/M/c mean waiting time in queue ``W_q = C(c, a) E[S] / (c (1 - rho))`` (seconds),
    ``rho = lam E[S] / c``; ``inf`` when ``rho >= 1``. ``c = 1`` is the M/M/1 ``rho E[S] / (1 - rho)``.
    Rates in 1/s, ``E[S]`` in s; ``c`` int >= 1 (see :func:`erlang_c` for ``c_max``)."""
    lam = jnp.asarray(lam, jnp.float64)
    es = jnp.asarray(mean_s, jnp.float64)
    cf = jnp.asarray(c, jnp.float64)
    if is_concrete(lam, es) and (np.any(np.asarray(lam) < 0) or np.any(~(np.asarray(es) >= 0))):
        raise ValueError(f"need lam >= 0 and mean_s >= 0; got lam={lam!r}, mean_s={mean_s!r}")
    rho = lam * es / cf
    pw = erlang_c(c, jnp.minimum(rho, 1.0), c_max)
    gap = jnp.where(rho < 1, cf * (1.0 - rho), 1.0)
    return jnp.where(rho < 1, pw * es / gap, jnp.inf)


def mmc_mean_response(lam, mean_s, c, c_max: int | None = None):
    """M/M/c mean response time ``W = W_q + E[S]`` (seconds); see :func:`mmc_mean_wait`."""
    return mmc_mean_wait(lam, mean_s, c, c_max) + jnp.asarray(mean_s, jnp.float64)
