"""LMST, NMST and SMST: live data migration across storage tiers (thesis Sec. 4.1), as a multi-tier simulator.

J. Tai, PhD thesis (2015), Sec. 4.1 ("Live Data Migration in Multi-tiered Storage Systems"): a pool of
SSD and FC disks (Table 4), 1 GB ALUNs mapped to disks, applications in two SLA classes (SLA^H = 1 ms,
SLA^L = 20 ms, Sec. 4.1.3). Three systems, one simulator:

- **NMST** (Sec. 4.1.3.1): no migration; SLA^H applications on the SSDs, SLA^L on the FCs, for good.
- **LMST** (Sec. 4.1.2, Fig. 13): once per window ``t_win`` it *selects* candidates (forward: FC ALUNs
  with ``lambda_{A_i} > tau_h``; backward: SLA^L ALUNs on SSD with ``lambda_{A_i} < tau_l``; each to the
  least-loaded disk of the other tier with a free ALUN slot), *validates* them (the SLA constraint,
  Eqs. 7-8 with the alpha-conservative rate of Eq. 4; the response-time constraint Eqs. 9-16 with the
  threshold ``e``, for forward migrations) and *schedules* them (duration Eq. 17 with ``beta``; backward
  migrations from the window start, forward ones once all backward ones are done; one migration per disk
  at a time; candidates not started by the window's end are abandoned). Migration I/Os have the lowest
  priority on every disk (Sec. 4.1.3.1: "migration I/Os always have the lowest priority").
- **SMST** (Sec. 4.1.3.4): the same migrations (same selection, validation and schedule), but "the
  migration I/Os are given the higher priority than the regular I/Os ones which request to access those
  to-be-migrated ALUNs": at the source, application I/Os that arrive for the ALUN being migrated wait
  behind the migration I/Os (all other I/Os keep their priority over migration I/Os).

Disk model (Sec. 4.1.2.2, Fig. 12): one server, the queue split into priority buffers (SLA^H, SLA^L,
migration, SMST-suspended), FIFO inside a buffer, no preemption (the queue of
:func:`tieringlab.models.queueing.priority_response_times`); service time = I/O size / ``mu_{D_j}``
(Table 4 rates; no seek term: Table 4 gives one rate per tier and the I/Os carry no read/write type).

**Readings and documented choices** (the notes' ambiguity numbers A1-A29 in brackets; each is a field of
:class:`LmstParams` where it is a number):

- Per-disk capacity 20 GB (Table 4 "Total Capacity" read as the tier's total over its disks, A1 a), so
  20 ALUN slots per disk; decimal units (A26). Initial placement striped round-robin over the tier's disks
  (Table 6 per-disk loads).
- Windows are the workload's 20-minute slots (A25). Eq. 4's "previously recorded arrival rates" are the
  per-minute byte rates of the ALUN in the window the decision looks at (A6 a), population standard
  deviation. The first window has no history: no migration (causal reading).
- **Decision timing, Eqs. 10-14 (A5, A8)** -- ``timing``:
  ``"causal"`` (the main reading): the decision at the start of window ``w`` uses window ``w-1``'s
  samples, and the next-window loads of Eqs. 10-14 are predicted as the current ones
  (``lambda' = lambda``: the thesis gives no predictor); ``"lookahead"`` (the variant): the decision sees
  window ``w``'s own samples (the bursty traffic of the window it acts in, as Sec. 4.1.3.1's "migrating
  all validated bursty traffic" suggests) and the true next-window loads (window ``w+1``'s samples) in
  Eqs. 10-14. Not causal; reported beside the causal reading.
- **Eqs. 11 and 14 are truncated** in the thesis text (each ends with a bare "+"). Reconstruction used
  here, from the sentence before Eq. 9 ("in the next time window, their new workloads will be
  ``lambda'_{D_k} - lambda'_{A_i}`` and ``lambda'_{D_j} + lambda'_{A_i}``")::

      RT'_k = g(k, l_k) (t_win - t_mgt) + g(k, l_k + dl) t_mgt + g(k, l'_k - l'_A) t_win        (Eq. 11)
      RT'_j = g(j, l_j) (t_win - t_mgt) + g(j, l_j + dl) t_mgt + g(j, l'_j + l'_A) t_win        (Eq. 14)

  with Eq. 10 ``RT_k = (g(k, l_k) + g(k, l'_k)) t_win`` (its OCR "lambda_{D'_k}" read as
  ``lambda'_{D_k}``, A7) and Eq. 13 likewise; ``g`` is Eq. 9.
- The sign of Eqs. 12/15 (A9): the text calls RT' the response time *without* the migration while the
  printed Eq. 11 holds the migration terms; Sec. 4.1.3.3 says a larger e is more conservative and a
  positive e demands a benefit. So the relative benefit is ``(RT - RT') / RT`` (RT without, RT' with the
  migration), and Eq. 16 validates when the mean of source and destination benefits exceeds ``e``.
- ``dl`` = ``min{mu_k - lambda_k, mu_j - lambda_j}`` (Sec. 4.1.2.3; Eq. 17's "mu_i - lambda_i", A11)
  makes the bottleneck's during-migration term ``s / 0``: Eq. 9 is guarded there as
  ``g = s / max(mu - x, (1 - rho_max) mu)`` (A10 reading a, ``rho_max`` = 0.95). The look-ahead next-window
  terms use the same guard (the true next load may exceed ``mu``).
- Eq. 17 assumes ``t_mgt < t_win``: a candidate whose estimate is not is not validated.
- Backward candidates are checked against the SLA constraint only ("(for forward migration)", A12;
  ``rt_check_backward``). The source must satisfy ``lambda_{D_k} < mu_{D_k}`` (A13).
- Candidates one at a time, coldest backward first, hottest forward first; after each accepted one the
  loads and free slots are updated before the next picks its destination (A14). Free slots count the
  space the window's backward migrations free (they run first). An ALUN migrating at the decision counts
  at its source, is not a candidate, and its destination slot stays reserved (A27).
- Migration mechanics (A16): the ALUN is copied in ``chunk_bytes`` chunks, closed loop (read a chunk at
  the source, then write it at the destination, then the next); I/Os for it go to the source until the
  last chunk is written (cutover). The copy is exactly one ALUN (the generated I/Os carry no writes;
  ``beta`` enters only Eq. 17's estimate). SMST's suspended I/Os rejoin their SLA buffer at cutover.
- Metrics (Sec. 4.1.3, notes Sec. 6): M_Resp = mean response of all application I/Os (both classes,
  I/O-weighted); V_Ratio = share of I/Os whose response exceeds their class's SLA; V_Time = mean of
  (response - SLA) over the violating I/Os; disk utilization = busy time / simulated duration (migration
  service included); Mgr_Resp = mean response of the application I/Os that arrive for an ALUN while it is
  being migrated (either direction); Burst_TS = bursty (ALUN, slot) pairs of the SLA^L ALUNs (whose home
  is the FC tier); Mgr_Ratio = the share of those that, at the decision that looks at the slot, passed
  forward validation or were already on (or migrating to) an SSD. ``mgr_ratio_io`` also reports the share
  of those slots' I/Os served from an SSD. An I/O's response counts towards the window it arrived in.

Engines: the controller (Eqs. 3-17) is a jitted ``lax.scan`` over the candidates, vmapped over parameter
sets (a Fig. 16 sweep is one call); the event engine that executes the plan is a compiled loop
(:mod:`tieringlab.policies._lmst_native`; see there for why). Replications and parameter sets of one call
run concurrently, one thread per CPU core; the workload of a replication is generated once, slot by slot,
and shared by every parameter set and baseline of the call (paired comparisons, and no 10^8-element
arrays: a paper-scale run never holds more than two slots).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import xarray as xr

from tieringlab.arrays import bucket, choice, thread_scratch
from tieringlab.models import queueing
from tieringlab.models.devices import LMST_TIERS
from tieringlab.models.workloads import lmst as wl
from tieringlab.policies.registry import PolicySpec, register
from tieringlab.units import KB, MB, MINUTE, MS

__all__ = ["POLICIES", "TIMINGS", "VECTOR_KNOBS", "LmstParams", "SystemLayout", "system_layout", "plan_window",
           "simulate", "run"]

POLICIES = ("nmst", "lmst", "smst")
TIMINGS = ("causal", "lookahead")
#: Numeric knobs that may be given as a 1-D sequence: one parameter set per entry (dimension ``config``).
VECTOR_KNOBS = ("alpha", "e", "beta", "tau_h", "tau_l", "rho_max")

_SSD, _FC = LMST_TIERS


@dataclass(frozen=True)
class LmstParams:
    """The multi-tier system and the LMST controller, with the thesis's values (section of each)."""

    policy: str = "lmst"                      #: "nmst" | "lmst" | "smst" (the registry name fixes it)
    n_ssd: int = _SSD.disk_number             #: Table 4: 2 SSDs
    n_fc: int = _FC.disk_number               #: Table 4: 5 FCs
    ssd_rate: float = _SSD.service_rate_bytes_per_s   #: mu of an SSD, Table 4: 500 MB/s (= 500 KB/ms)
    fc_rate: float = _FC.service_rate_bytes_per_s     #: mu of an FC, Table 4: 160 MB/s
    #: per-disk capacity: Table 4's tier totals (40 GB, 100 GB) over the disks = 20 GB (reading A1 a)
    disk_capacity_bytes: int = int(_SSD.capacity_per_disk_bytes)
    sla_high_s: float = 1 * MS                #: SLA^H = 1 ms (Sec. 4.1.3)
    sla_low_s: float = 20 * MS                #: SLA^L = 20 ms (Sec. 4.1.3)
    window_s: float = 20 * MINUTE             #: t_win = 20 minutes (Sec. 4.1.2.1)
    alpha: Any = 0.3                          #: Eq. 4 conservativeness; "most benefits ... close to 0.3" (Sec. 4.1.3.3)
    e: Any = 0.0                              #: Eq. 16 threshold e% as a fraction (thesis examples -5 %, +5 %; 0 = "expected to decrease")
    beta: Any = 1.0                           #: Eq. 17 capacity factor (thesis silent; the I/Os have no writes)
    tau_h: Any = 7.5 * KB / MS                #: hot threshold (bytes/s; thesis silent: midway between SLA^L idle 5 and bursty 10 KB/ms)
    tau_l: Any = 6.0 * KB / MS                #: cold threshold (bytes/s; thesis silent; tau_l < tau_h)
    rho_max: Any = 0.95                       #: guard of Eq. 9 in the during-migration terms (A10; not in the thesis)
    chunk_bytes: int = 1 * MB                 #: migration chunk, closed-loop copy (thesis silent, A16)
    timing: str = "causal"                    #: "causal" (main) | "lookahead" (variant), see module docstring
    rt_check_backward: bool = False           #: Eq. 16 for backward candidates too (thesis: forward only, A12)

    def __post_init__(self):
        choice("policy", self.policy, POLICIES, what="LmstParams")
        choice("timing", self.timing, TIMINGS, what="LmstParams")
        for name in ("n_ssd", "n_fc", "disk_capacity_bytes", "chunk_bytes"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"LmstParams.{name} must be a positive integer; got {v!r}")
        for name in ("ssd_rate", "fc_rate", "sla_high_s", "sla_low_s", "window_s"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float, np.number)) and math.isfinite(v) and v > 0):
                raise ValueError(f"LmstParams.{name} must be a positive finite number; got {v!r}")
        if not isinstance(self.rt_check_backward, (bool, np.bool_)):
            raise ValueError(f"LmstParams.rt_check_backward must be true or false; got {self.rt_check_backward!r}")
        lengths = set()
        for name in VECTOR_KNOBS:
            v = np.asarray(getattr(self, name), dtype=float) if _numeric(getattr(self, name)) else None
            if v is None or v.ndim > 1 or v.size == 0 or not np.all(np.isfinite(v)):
                raise ValueError(f"LmstParams.{name} must be a finite number or a non-empty 1-D sequence of them; "
                                 f"got {getattr(self, name)!r}")
            if v.ndim == 1:
                lengths.add(v.size)
        if len(lengths) > 1:
            raise ValueError(f"LmstParams: the sequence-valued knobs of {VECTOR_KNOBS} must have one length; "
                             f"got lengths {sorted(lengths)}")
        k = self.knob_arrays()
        checks = {"alpha": (k["alpha"] >= 0, ">= 0"), "beta": (k["beta"] > 0, "> 0"),
                  "tau_h": (k["tau_h"] >= 0, ">= 0 bytes/s"), "tau_l": (k["tau_l"] >= 0, ">= 0 bytes/s"),
                  "rho_max": ((k["rho_max"] > 0) & (k["rho_max"] < 1), "in (0, 1)"),
                  "e": ((k["e"] > -1) & (k["e"] < 1), "in (-1, 1) (a fraction: 0.05 = 5 %)")}
        for name, (ok, what) in checks.items():
            if not np.all(ok):
                raise ValueError(f"LmstParams.{name} must be {what}; got {getattr(self, name)!r}")
        if not np.all(k["tau_l"] < k["tau_h"]):
            raise ValueError(f"LmstParams needs tau_l < tau_h (Sec. 4.1.2.2); got tau_l={self.tau_l!r}, "
                             f"tau_h={self.tau_h!r}")

    @property
    def n_configs(self) -> int:
        """Parameter sets this instance holds (> 1 when a knob of :data:`VECTOR_KNOBS` is a sequence)."""
        return max(np.size(getattr(self, n)) for n in VECTOR_KNOBS)

    def knob_arrays(self) -> dict[str, np.ndarray]:
        """The :data:`VECTOR_KNOBS`, each as a float array of length :attr:`n_configs` (scalars broadcast)."""
        c = max(np.size(np.asarray(getattr(self, n), float)) for n in VECTOR_KNOBS)
        return {n: np.broadcast_to(np.asarray(getattr(self, n), float), (c,)).astype(float) for n in VECTOR_KNOBS}

    def configs(self) -> list[LmstParams]:
        """One scalar-knob :class:`LmstParams` per parameter set."""
        k = self.knob_arrays()
        return [dataclasses.replace(self, **{n: float(k[n][i]) for n in VECTOR_KNOBS}) for i in range(self.n_configs)]


def _numeric(v) -> bool:
    try:
        a = np.asarray(v)
    except Exception:  # noqa: BLE001
        return False
    return a.dtype != bool and (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating))


# ---------------------------------------------------------------------------------------------- layout


@dataclass(frozen=True)
class SystemLayout:
    """Disks, ALUNs and the initial placement of one (system, workload) pair.

    Disks ``0 .. n_ssd-1`` are the SSDs (D1, D2 of Table 5), the rest the FCs (D3..D7). ``home[i]``: ALUN
    i's initial disk (Sec. 4.1.3: SLA^H ALUNs on the SSDs, SLA^L on the FCs; striped round-robin over the
    tier's disks, which gives Table 6's per-disk loads C_SSD and C_FC).
    """

    mu: np.ndarray             #: (m,) bytes/s
    fast: np.ndarray           #: (m,) bool, SSD tier
    slots: int                 #: ALUN slots per disk
    sla: np.ndarray            #: (2,) seconds, SLA^H and SLA^L
    alun_class: np.ndarray     #: (n,) 0 = SLA^H, 1 = SLA^L
    alun_app: np.ndarray       #: (n,)
    app_class: np.ndarray      #: (n_apps,)
    home: np.ndarray           #: (n,) initial disk

    @property
    def m(self) -> int:
        return int(self.mu.size)


def system_layout(p: LmstParams, wp: wl.LmstWorkloadParams, *, home=None, alun_class=None) -> SystemLayout:
    """The disks of ``p`` and the ALUNs of ``wp``, placed as Sec. 4.1.3 and Table 6 say.

    ``alun_class`` (0 = SLA^H, 1 = SLA^L per ALUN) and ``home`` (initial disk per ALUN) override the thesis
    layout (what-if runs and tests); each disk must fit its ALUNs.
    """
    m = p.n_ssd + p.n_fc
    mu = np.r_[np.full(p.n_ssd, float(p.ssd_rate)), np.full(p.n_fc, float(p.fc_rate))]
    fast = np.r_[np.ones(p.n_ssd, bool), np.zeros(p.n_fc, bool)]
    slots = int(p.disk_capacity_bytes // wp.alun_bytes)
    lay = wl.alun_layout(wp)
    cls = lay.alun_class
    if alun_class is not None:
        c = np.asarray(alun_class)
        if c.shape != (wp.n_aluns,) or (c.size and (c.dtype == bool or not np.issubdtype(c.dtype, np.integer))):
            raise ValueError(f"alun_class must be {wp.n_aluns} integers (one per ALUN); got shape {c.shape}, dtype {c.dtype}")
        if np.any((c != 0) & (c != 1)):
            i = int(np.flatnonzero((c != 0) & (c != 1))[0])
            raise ValueError(f"alun_class must be 0 (SLA^H) or 1 (SLA^L), the two classes of Sec. 4.1.3; "
                             f"alun_class[{i}] = {int(c[i])}")
        cls = c.astype(np.int64)
    if home is None:
        h = np.empty(wp.n_aluns, np.int64)
        hi = np.flatnonzero(cls == 0)
        lo = np.flatnonzero(cls == 1)
        h[hi] = np.arange(hi.size) % p.n_ssd
        h[lo] = p.n_ssd + np.arange(lo.size) % p.n_fc
    else:
        h = np.asarray(home)
        if h.shape != (wp.n_aluns,) or (h.size and not np.issubdtype(h.dtype, np.integer)):
            raise ValueError(f"home must be {wp.n_aluns} disk indices (one per ALUN); got shape {h.shape}")
        if h.size and (h.min() < 0 or h.max() >= m):
            raise ValueError(f"home must lie in [0, {m}) (disks 0..{p.n_ssd - 1} are the SSDs); got {h.min()}..{h.max()}")
        h = h.astype(np.int64)
    load = np.bincount(h, minlength=m)
    if slots < 1 or np.any(load > slots):
        d = int(np.argmax(load - slots))
        raise ValueError(f"the workload does not fit: disk {d} would hold {int(load[d])} ALUNs of "
                         f"{wp.alun_bytes} bytes, but disk_capacity_bytes={p.disk_capacity_bytes} holds {slots}; "
                         "use fewer applications or larger disks")
    app_class = np.array([cls[lay.alun_app == a].min() if np.any(lay.alun_app == a) else 1
                          for a in range(wp.n_apps)])                  # a handful of applications
    return SystemLayout(mu, fast, slots, np.array([p.sla_high_s, p.sla_low_s]), cls, lay.alun_app, app_class, h)


# ---------------------------------------------------------------------------------------------- controller


def _g(s, mu, x):
    """Eq. 9, ``g(j, x) = s_{D_j} / (mu_{D_j} - x)`` (inf when ``x >= mu``), via queueing.lmst_response_time."""
    return queueing.lmst_response_time(x, mu, s)


def _g_guard(s, mu, x, rho_max):
    """Eq. 9 with the A10 guard: ``s / max(mu - x, (1 - rho_max) mu)``."""
    return s / jnp.maximum(mu - x, (1.0 - rho_max) * mu)


@jax.jit
def _plan_scan(lam_A, lam_An, s_D, mapping, eligible, free, alun_class, mu, fast, sla, t_win, alun_bytes,
               e, beta, tau_h, tau_l, rho_max, guard_next, rt_back):
    """LMST Sec. 4.1.2.2-4.1.2.3 for one window and one parameter set: a ``lax.scan`` over the candidates.

    Returns per scan position (backward candidates coldest first, then forward ones hottest first):
    the ALUN, its destination, whether it was validated, the kind (0 backward, 1 forward) and the
    Eq. 17 duration estimate.
    """
    n = lam_A.shape[0]
    m = mu.shape[0]
    on_fast = fast[mapping]
    back_ok = eligible & on_fast & (alun_class == 1) & (lam_A < tau_l)      # cold SLA^L data on SSD
    fwd_ok = eligible & ~on_fast & (lam_A > tau_h)                           # hot data on FC
    order_b = jnp.argsort(jnp.where(back_ok, lam_A, jnp.inf), stable=True)
    order_f = jnp.argsort(jnp.where(fwd_ok, -lam_A, jnp.inf), stable=True)
    alun_seq = jnp.concatenate([order_b, order_f])
    kind_seq = jnp.concatenate([jnp.zeros(n, jnp.int32), jnp.ones(n, jnp.int32)])
    elig_seq = jnp.concatenate([back_ok[order_b], fwd_ok[order_f]])
    lam_D = queueing.lmst_disk_arrival_rate(lam_A, mapping, m)                            # Eq. 3
    lam_Dn = queueing.lmst_disk_arrival_rate(lam_An, mapping, m)
    lam_c = jnp.zeros((m, 2)).at[mapping, alun_class].add(lam_A)                          # per disk and class
    disks = jnp.arange(m)

    def step(carry, x):
        lam_D, lam_Dn, lam_c, free = carry
        i, kind, elig = x
        la, lan = lam_A[i], lam_An[i]
        k = mapping[i]
        cls = alun_class[i]
        want_fast = kind == 1
        cand = (fast == want_fast) & (free > 0)
        j = jnp.argmin(jnp.where(cand, lam_D, jnp.inf))       # least-loaded disk with a free slot (ties: lowest)
        has = jnp.any(cand)
        # (1) SLA constraint: Eq. 7 and Eq. 8 at the destination (queueing.lmst_sla_constraint), source stable
        lam_bar = jnp.cumsum(lam_c, axis=1)                                            # Eq. U2
        sla_ok = queueing.lmst_sla_constraint(la, cls, lam_D, lam_bar, mu, s_D, sla)[j]
        src_ok = lam_D[k] < mu[k]
        # Eq. 17: t_mgt = beta * Capacity_of_ALUN / dl, dl = min(mu_k - lam_k, mu_j - lam_j) (Sec. 4.1.2.3)
        dl = jnp.minimum(mu[k] - lam_D[k], mu[j] - lam_D[j])
        t_mgt = jnp.where(dl > 0, beta * alun_bytes / jnp.where(dl > 0, dl, 1.0), jnp.inf)
        time_ok = t_mgt < t_win
        tm = jnp.minimum(t_mgt, t_win)
        # (2) response-time constraint, Eqs. 10-16 (Eqs. 11 and 14 reconstructed, see module docstring)
        gn = lambda d, x: jnp.where(guard_next, _g_guard(s_D[d], mu[d], x, rho_max), _g(s_D[d], mu[d], x))  # noqa: E731
        rt_k = (_g(s_D[k], mu[k], lam_D[k]) + gn(k, lam_Dn[k])) * t_win                         # Eq. 10
        rt_k2 = (_g(s_D[k], mu[k], lam_D[k]) * (t_win - tm) + _g_guard(s_D[k], mu[k], lam_D[k] + dl, rho_max) * tm
                 + gn(k, lam_Dn[k] - lan) * t_win)                                              # Eq. 11
        rt_j = (_g(s_D[j], mu[j], lam_D[j]) + gn(j, lam_Dn[j])) * t_win                         # Eq. 13
        rt_j2 = (_g(s_D[j], mu[j], lam_D[j]) * (t_win - tm) + _g_guard(s_D[j], mu[j], lam_D[j] + dl, rho_max) * tm
                 + gn(j, lam_Dn[j] + lan) * t_win)                                              # Eq. 14
        ben_k = (rt_k - rt_k2) / rt_k                                                           # Eq. 12 (as a benefit)
        ben_j = (rt_j - rt_j2) / rt_j                                                           # Eq. 15
        rt_ok = (ben_k + ben_j) / 2.0 > e                                                       # Eq. 16
        rt_ok = jnp.where(jnp.isfinite(rt_k) & jnp.isfinite(rt_j), rt_ok, False)
        need_rt = (kind == 1) | rt_back
        acc = elig & has & sla_ok & src_ok & time_ok & (rt_ok | ~need_rt)
        upd = jnp.where(acc, 1.0, 0.0)
        move = (disks == j).astype(jnp.float64) - (disks == k).astype(jnp.float64)   # +1 at j, -1 at k
        lam_D = lam_D + upd * la * move
        lam_Dn = lam_Dn + upd * lan * move
        lam_c = lam_c.at[k, cls].add(-upd * la).at[j, cls].add(upd * la)
        free = free + jnp.where(acc, (disks == k).astype(free.dtype) - (disks == j).astype(free.dtype), 0)
        return (lam_D, lam_Dn, lam_c, free), (i, j, acc, kind, t_mgt)

    _, out = jax.lax.scan(step, (lam_D, lam_Dn, lam_c, free), (alun_seq, kind_seq, elig_seq))
    return out


# vmapped over parameter sets (the knobs and the per-set state: mapping, eligibility, free slots, loads)
_plan_batch = jax.jit(jax.vmap(_plan_scan, in_axes=(0, 0, 0, 0, 0, 0, None, None, None, None, None, None,
                                                     0, 0, 0, 0, 0, None, None)))


def eq4_rates(samples: np.ndarray, alpha) -> np.ndarray:
    """Eq. 4, ``lambda_{A_i} = m(lambda_{A'_i}) + alpha Delta(lambda_{A'_i})``: mean plus ``alpha`` times the
    (population) standard deviation of each ALUN's recorded rates ``samples[..., i, :]`` (bytes/s)."""
    samples = np.asarray(samples, float)
    a = np.asarray(alpha, float)
    return samples.mean(-1)[None, :] + a.reshape(-1, 1) * samples.std(-1)[None, :] if a.ndim else \
        samples.mean(-1) + float(a) * samples.std(-1)


def plan_window(p: LmstParams, layout: SystemLayout, samples, samples_next, s_D, mapping, migrating, reserved,
                alun_bytes: int):
    """The plan of one window for each parameter set of ``p`` (Sec. 4.1.2.2-4.1.2.3).

    ``samples``: ``(n, k)`` the recorded per-ALUN rates (bytes/s) of the window the decision looks at;
    ``samples_next``: those that give the next-window loads (``lambda'``; the same array in the causal
    reading); ``s_D``: ``(m,)`` mean I/O size per disk (bytes); ``mapping``, ``migrating`` (bool),
    ``reserved`` (per disk, incoming in-flight migrations): ``(C, n)``, ``(C, n)``, ``(C, m)`` per set.

    Returns ``(plans, validated_forward)``: per set a dict of arrays ``alun, dst, kind, est`` (backward
    candidates first, then forward, in validation order) and the ``(C, n)`` mask of ALUNs validated for
    a forward migration.
    """
    k = p.knob_arrays()
    C = p.n_configs
    n = layout.alun_class.size
    lam_A = np.broadcast_to(eq4_rates(samples, k["alpha"]), (C, n))
    lam_An = np.broadcast_to(eq4_rates(samples_next, k["alpha"]), (C, n))
    mapping = np.asarray(mapping, np.int64).reshape(C, n)
    migrating = np.asarray(migrating, bool).reshape(C, n)
    occupied = np.stack([np.bincount(mapping[c], minlength=layout.m) for c in range(C)]) + np.asarray(reserved)
    free = (layout.slots - occupied).astype(np.int32)
    s_Db = np.broadcast_to(np.asarray(s_D, float), (C, layout.m))
    # padded to size classes (ALUNs: idle, never eligible; parameter sets: copies of the last), so that the
    # jitted scan compiles once per class, not per workload and sweep length
    nb, cb = bucket(n, minimum=64), bucket(C)

    def pad(x, fill, axis_n=True):
        x = np.asarray(x)
        if axis_n:
            x = np.concatenate([x, np.full(x.shape[:-1] + (nb - n,), fill, x.dtype)], axis=-1)
        return np.concatenate([x, np.repeat(x[-1:], cb - C, axis=0)], axis=0) if x.ndim and x.shape[0] == C else x

    kn = {name: np.concatenate([k[name], np.repeat(k[name][-1:], cb - C)]) for name in k}
    out = _plan_batch(jnp.asarray(pad(lam_A, 0.0)), jnp.asarray(pad(lam_An, 0.0)), jnp.asarray(pad(s_Db, 0.0, False)),
                      jnp.asarray(pad(mapping, 0)), jnp.asarray(pad(~migrating, False)), jnp.asarray(pad(free, 0, False)),
                      jnp.asarray(np.r_[layout.alun_class, np.zeros(nb - n, np.int64)]), jnp.asarray(layout.mu),
                      jnp.asarray(layout.fast), jnp.asarray(layout.sla), float(p.window_s), float(alun_bytes),
                      jnp.asarray(kn["e"]), jnp.asarray(kn["beta"]), jnp.asarray(kn["tau_h"]), jnp.asarray(kn["tau_l"]),
                      jnp.asarray(kn["rho_max"]), p.timing == "lookahead", bool(p.rt_check_backward))
    alun, dst, acc, kind, est = (np.asarray(x)[:C] for x in out)
    plans = []
    fwd = np.zeros((C, n), bool)
    for c in range(C):                       # compaction of C small arrays (parameter sets, not jobs)
        sel = acc[c]
        plans.append({"alun": alun[c][sel].astype(np.int64), "dst": dst[c][sel].astype(np.int64),
                      "kind": kind[c][sel].astype(np.int64), "est": est[c][sel].astype(np.float64)})
        fwd[c, alun[c][sel & (kind[c] == 1)]] = True
    return plans, fwd


# ---------------------------------------------------------------------------------------------- simulation


def _threads(threads: int | None) -> int:
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
            raise ValueError(f"threads must be a positive integer or None; got {threads!r}")
        return int(threads)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _same_system(systems: Sequence[LmstParams]) -> None:
    phys = ("n_ssd", "n_fc", "ssd_rate", "fc_rate", "disk_capacity_bytes", "sla_high_s", "sla_low_s", "window_s",
            "chunk_bytes")
    for p in systems[1:]:
        for f in phys:
            if getattr(p, f) != getattr(systems[0], f):
                raise ValueError(f"the systems of one call must share the hardware and SLAs; {f} differs "
                                 f"({getattr(systems[0], f)!r} vs {getattr(p, f)!r})")


class _IoSlots:
    """Slots from given I/O arrays (direct mode): the I/Os of slot w, ALUN by ALUN, time order inside."""

    def __init__(self, arrivals, sizes, alun, wp: wl.LmstWorkloadParams):
        a = np.asarray(arrivals, np.float64)
        s = np.asarray(sizes, np.float64)
        al = np.asarray(alun)
        n = a.shape[0] if a.ndim == 1 else -1
        if a.ndim != 1:
            raise ValueError(f"arrivals must be a 1-D array of seconds (one run); got shape {a.shape}. "
                             "For replications give a batch of keys and let the workload be generated")
        if s.shape != (n,) or al.shape != (n,):
            raise ValueError(f"services (I/O sizes, bytes) and alun must have one entry per arrival ({n}); "
                             f"got shapes {s.shape} and {al.shape}")
        if not np.all(np.isfinite(a)) or (n and a[0] < 0):
            raise ValueError("arrivals must be finite and >= 0 seconds")
        if n > 1 and np.any(np.diff(a) < 0):
            i = int(np.flatnonzero(np.diff(a) < 0)[0]) + 1
            raise ValueError(f"arrivals must be non-decreasing (sort the I/Os by arrival time); arrivals[{i}] = "
                             f"{a[i]!r} < arrivals[{i - 1}] = {a[i - 1]!r}")
        if not np.all(np.isfinite(s)) or np.any(s < 0):
            i = int(np.flatnonzero(~(np.isfinite(s) & (s >= 0)))[0])
            raise ValueError(f"services are the I/O sizes in bytes and must be finite and >= 0; services[{i}] = {s[i]!r}")
        if n and (al.dtype == bool or not np.issubdtype(al.dtype, np.integer)):
            raise ValueError(f"alun must hold integer ALUN indices; got dtype {al.dtype}")
        if n and (al.min() < 0 or al.max() >= wp.n_aluns):
            i = int(np.flatnonzero((al < 0) | (al >= wp.n_aluns))[0])
            raise ValueError(f"alun must lie in [0, n_aluns) = [0, {wp.n_aluns}) for this workload; alun[{i}] = {int(al[i])}")
        slot = np.floor(a / wp.slot_s).astype(np.int64)
        if n and slot.max() >= wp.n_slots:
            i = int(np.flatnonzero(slot >= wp.n_slots)[0])
            raise ValueError(f"arrivals must lie in [0, n_slots * slot_s) = [0, {wp.duration_s}) s; arrivals[{i}] = {a[i]!r}")
        self.wp, self.a, self.s, self.al = wp, a, s, al.astype(np.int32)
        self.slot_bounds = np.searchsorted(slot, np.arange(wp.n_slots + 1))   # arrivals are sorted
        self.order = np.arange(n)                                            # the stream is the input order
        self.n = n

    def __call__(self, w: int, out: wl.SlotBuffers | None = None) -> wl.SlotIO:
        """Slot ``w``; ``out`` is unused (the slot's arrays are views of the given ones), taken for the same
        call shape as the generator's."""
        wp = self.wp
        sl = slice(self.slot_bounds[w], self.slot_bounds[w + 1])
        al = self.al[sl]
        t0 = w * wp.slot_s
        k = wp.samples_per_slot
        which = np.minimum(((self.a[sl] - t0) / wp.sample_s).astype(np.int64), k - 1)
        sample = np.bincount(al * k + which, weights=self.s[sl], minlength=wp.n_aluns * k).reshape(wp.n_aluns, k)
        return wl.SlotIO(w, t0, self.a[sl], self.s[sl], al, None, np.zeros(wp.n_aluns, bool),
                         np.bincount(al, minlength=wp.n_aluns).astype(np.int64), sample / wp.sample_s)


def _mean_size_per_disk(slot: wl.SlotIO, mapping: np.ndarray, m: int, default: float, sample_s: float) -> np.ndarray:
    """``s_{D_j}``: the mean size of the I/Os the window sent to each disk (bytes); ``default`` where none."""
    counts = slot.counts.astype(float)
    nbytes = slot.sample_rate.sum(axis=1)          # bytes per sample interval, summed (a common factor)
    C = mapping.shape[0]
    out = np.empty((C, m))
    for c in range(C):                             # parameter sets (a few), not I/Os
        nb = np.bincount(mapping[c], weights=nbytes, minlength=m)
        nc = np.bincount(mapping[c], weights=counts, minlength=m)
        out[c] = np.where(nc > 0, nb * sample_s / np.maximum(nc, 1.0), default)
    return out


def simulate(systems: Sequence[LmstParams], workload: wl.LmstWorkloadParams, keys=None, *, io=None,
             keep_jobs: bool = False, threads: int | None = None, home=None, alun_class=None,
             fixed_plans=None) -> xr.Dataset:
    """Run every parameter set of ``systems`` on the same I/Os, replication by replication.

    ``systems``: LMST/NMST/SMST parameter instances (vector knobs expand into several sets) sharing the
    hardware; ``workload``: the application layout and, without ``io``, the generator's parameters;
    ``keys``: one ``jax.random`` key per replication (a typed key array of shape ``(R,)``, or one key);
    ``io``: ``(arrivals_s, sizes_bytes, alun)`` instead of generated I/Os (one replication; ``keep_jobs``
    then returns each I/O's response and disk). ``home``, ``alun_class``: see :func:`system_layout`.
    ``fixed_plans``: ``{window: [(alun, dst, kind), ...]}`` (kind 0 backward, 1 forward) executed instead of
    LMST's controller by every migrating system (tests and what-if runs). Returns the Dataset described
    in :func:`run`.
    """
    from tieringlab.policies import _lmst_native as nat  # noqa: PLC0415  (numba on first use)

    systems = list(systems)
    if not systems:
        raise ValueError("simulate needs at least one LmstParams")
    _same_system(systems)
    p0 = systems[0]
    if abs(p0.window_s - workload.slot_s) > 1e-9 * workload.slot_s:
        raise ValueError(f"LmstParams.window_s ({p0.window_s} s) must equal the workload's slot_s ({workload.slot_s} s): "
                         "LMST's windows are aligned with the slots (reading A25)")
    layout = system_layout(p0, workload, home=home, alun_class=alun_class)
    m, n, n_w = layout.m, workload.n_aluns, workload.n_slots
    configs = [(si, c) for si, p in enumerate(systems) for c in p.configs()]
    C = len(configs)
    if io is not None:
        if keys is not None:
            raise ValueError("give either io (the I/Os of one run) or keys (generated workloads), not both")
        sources = [_IoSlots(*io, workload)]
        states = [np.zeros((n, n_w), bool)]
    else:
        if keys is None:
            raise ValueError("simulate needs keys (one jax.random key per replication) or io")
        keys = jnp.asarray(keys)
        if keys.ndim == 0:
            keys = keys[None]
        states = [wl.slot_states(k, workload) for k in keys]
        sources = [partial(lambda k, st, w, buf: wl.generate_slot(k, workload, w, st, out=buf), k, st)
                   for k, st in zip(keys, states)]
        if keep_jobs:
            raise ValueError("keep_jobs needs io (per-I/O results of a generated paper-scale run would not fit in memory)")
    R = len(sources)
    n_io = sources[0].n if io is not None else 0
    pool = ThreadPoolExecutor(_threads(threads))
    horizon = workload.duration_s
    low = (layout.alun_class == 1) & ~layout.fast[layout.home]    # SLA^L ALUNs whose home is the FC tier
    sla = layout.sla.astype(np.float64)
    n_apps = layout.app_class.size
    L = n_w * n + 1                               # at most one migration per ALUN per window

    def fresh():
        dsf = np.zeros((m, 2))
        dsf[:, nat.F_FREE] = -np.inf
        dsf[:, nat.F_MIGARR] = np.nan
        dsi = np.full((m, 1), -1, np.int64)
        mig_i = np.full((m, 8), -1, np.int64)
        e = np.zeros(0)
        ei = np.zeros(0, np.int64)
        return {"mapping": layout.home.copy(), "alun_mig": np.full(n, -1, np.int64), "dsf": dsf, "dsi": dsi,
                "mig_i": mig_i, "mig_f": np.zeros(m), "log_i": np.zeros((L, 5), np.int64), "log_f": np.zeros((L, 3)),
                "app_w": np.zeros((n_apps, n_w, 4)), "busy": np.zeros((m, 2)), "counters": np.zeros(8),
                "carry": (e, e, ei, ei, ei, ei, ei),
                "resp": np.full(n_io if keep_jobs else 0, np.nan), "disk": np.full(n_io if keep_jobs else 0, -1, np.int8)}

    # Shared trajectories: the engine's state of a set lives in st[r][ci], and sets whose states are equal
    # hold ONE dict (all sets start from the same empty system). Each window, sets that share a state and
    # get the same engine inputs (plan, and SMST's rule and the chunk size where a migration can read them)
    # share one kernel run; a shared state that the plans split is copied first (``share``). Exact: the
    # engine is deterministic, so every set gets the numbers of its own run. It saves the windows before a
    # set's first migration (every causal set's first window), and whole runs in sweeps (settings that never
    # migrate are NMST; settings with equal plans throughout, e.g. two e% at which the same checks pass).
    st = [[fresh()] * C for _ in range(R)]
    tally = [[[0, 0] for _ in range(C)] for _ in range(R)]     # per set: Mgr_Ratio count, forward validated
    burst_ts = [int(states[r][low].sum()) for r in range(R)]
    lookahead_any = any(p.timing == "lookahead" for p in systems)

    scratch = threading.local()

    def job_table(J: int):
        """This thread's scratch for the engine's job table (reused by every call of the thread)."""
        return tuple(thread_scratch(scratch, name, J, dt) for name, dt in
                     (("alun", np.int16), ("flag", np.int8), ("nxt", np.int32)))

    def kernel(r, ci, slot, plan, t_start, t_end, burst_count, gid_base):
        s = st[r][ci]
        p = systems[configs[ci][0]]
        out = nat.advance(t_start, t_end, workload.slot_s, horizon, slot.time, slot.size, slot.alun, gid_base,
                          *s["carry"], layout.mu, layout.fast, layout.alun_class, layout.alun_app, sla,
                          p.policy == "smst", float(p.chunk_bytes), float(workload.alun_bytes), burst_count,
                          plan["alun"], plan["dst"], plan["kind"], plan["est"], np.zeros(plan["alun"].size, np.int64),
                          slot.slot, s["mapping"], s["alun_mig"], s["dsf"], s["dsi"], s["mig_i"], s["mig_f"],
                          s["log_i"], s["log_f"], s["app_w"], s["busy"], s["counters"], s["resp"], s["disk"],
                          *job_table(s["carry"][0].size + slot.time.size))
        s["carry"] = out

    empty_plan = {"alun": np.zeros(0, np.int64), "dst": np.zeros(0, np.int64), "kind": np.zeros(0, np.int64),
                  "est": np.zeros(0)}

    def decide(r, w_dec, slots):
        """Plans of window ``w_dec`` for every set of replication r, and the Mgr_Ratio count of the slot the
        decision looks at (``slots``: slot index -> SlotIO, as far as generated)."""
        plans = [empty_plan] * C
        for si, p in enumerate(systems):
            idx = [ci for ci, (sj, _) in enumerate(configs) if sj == si]
            look = w_dec if p.timing == "lookahead" else w_dec - 1
            if p.policy == "nmst" or (fixed_plans is None and not 0 <= look < n_w) or \
                    (fixed_plans is not None and w_dec >= n_w):
                continue
            look = min(max(look, 0), n_w - 1)
            nxt_w = min(look + 1, n_w - 1) if p.timing == "lookahead" else look
            mapping = np.stack([st[r][ci]["mapping"] for ci in idx])
            migrating = np.stack([st[r][ci]["alun_mig"] >= 0 for ci in idx])
            reserved = np.zeros((len(idx), m), np.int64)
            to_fast = np.zeros((len(idx), n), bool)
            for q, ci in enumerate(idx):
                mi = st[r][ci]["mig_i"]
                live = mi[:, nat.M_ALUN] >= 0
                np.add.at(reserved[q], mi[live, nat.M_DST], 1)
                to_fast[q, mi[live, nat.M_ALUN]] = layout.fast[mi[live, nat.M_DST]]
            if fixed_plans is not None:
                fp = np.asarray(fixed_plans.get(w_dec, []), np.int64).reshape(-1, 3)
                one = {"alun": fp[:, 0].copy(), "dst": fp[:, 1].copy(), "kind": fp[:, 2].copy(),
                       "est": np.full(len(fp), np.nan)}
                ps = [one] * len(idx)
                fwd = np.zeros((len(idx), n), bool)
                fwd[:, fp[fp[:, 2] == 1, 0]] = True
            else:
                s_D = _mean_size_per_disk(slots[look], mapping, m, workload.mean_io_bytes, workload.sample_s)
                ps, fwd = plan_window(p, layout, slots[look].sample_rate, slots[nxt_w].sample_rate, s_D, mapping,
                                      migrating, reserved, workload.alun_bytes)
            bursty = states[r][:, look] & low
            for q, ci in enumerate(idx):
                if w_dec < n_w:
                    plans[ci] = ps[q]
                counted = bursty & (fwd[q] | layout.fast[mapping[q]] | to_fast[q])
                tally[r][ci][0] += int(counted.sum())
                tally[r][ci][1] += int(fwd[q].sum()) if w_dec < n_w else 0
        return plans

    def share(r, plans) -> list[int]:
        """Groups the sets of replication r whose kernels this window are one computation (the same state
        object and the same engine inputs); gives a shared state that the groups split a copy per extra
        group. Returns one set per group (its kernel runs for the group)."""
        groups = {}
        for ci in range(C):
            s, pl = st[r][ci], plans[ci]
            quiet = pl["alun"].size == 0 and not (s["mig_i"][:, nat.M_ALUN] >= 0).any()
            p = systems[configs[ci][0]]
            rule = None if quiet else (p.policy == "smst", float(p.chunk_bytes))   # read only by migrations
            key = (id(s), rule) + tuple((pl[k].dtype.str, pl[k].tobytes()) for k in ("alun", "dst", "kind", "est"))
            groups.setdefault(key, []).append(ci)
        kept = set()
        for (sid, *_), members in groups.items():
            if sid in kept:                             # a further group of a shared state: its own copy
                s = copy.deepcopy(st[r][members[0]])
                for ci in members:
                    st[r][ci] = s
            kept.add(sid)
        return [members[0] for members in groups.values()]

    def light(s: wl.SlotIO) -> wl.SlotIO:
        """A processed slot keeps only what later decisions read (samples and counts), not its I/Os."""
        z = np.zeros(0)
        return s._replace(time=z, size=z, alun=np.zeros(0, np.int32), offset=None)

    ahead = 2 if lookahead_any else 1                 # slots generated ahead, while the kernels run
    empty_slot = wl.SlotIO(n_w - 1, horizon, np.zeros(0), np.zeros(0), np.zeros(0, np.int32), None,
                           np.zeros(n, bool), np.zeros(n, np.int64), np.zeros((n, workload.samples_per_slot)))

    stop = threading.Event()

    def drive(r: int) -> None:
        """Replication r, window after window: its slots are drawn ahead on the pool, its plans made here,
        its C kernels run on the pool. Replications wait only for their own kernels (no barrier across
        replications: a replication whose window ends early plans its next one while the others still run),
        and each touches only its own state, so the results do not depend on the interleaving."""
        futs, cache = {}, {}
        drawn = 0                                      # slots 0 .. drawn - 1 are submitted to the generator
        # output buffers: a processed slot's go back to the generator (SlotBuffers), so a run touches fresh
        # pages for its first few slots only
        spare, held = [], {}
        gid_base = 0

        def prefetch(upto: int):
            nonlocal drawn
            for u in range(drawn, min(upto, n_w - 1) + 1):
                held[u] = spare.pop() if spare else wl.SlotBuffers()   # (no arrays until used)
                futs[u] = pool.submit(sources[r], u, held[u])
            drawn = max(drawn, min(upto, n_w - 1) + 1)

        prefetch(ahead - 1)
        for w in range(n_w):
            if stop.is_set():                          # another replication failed: its error is raised
                return
            for u in [w] + ([w + 1] if lookahead_any and w + 1 < n_w else []):
                if u not in cache:
                    cache[u] = futs.pop(u).result()
            prefetch(w + ahead)                        # the next slots are drawn while this window's kernels run
            plans = decide(r, w, cache)
            slot = cache[w]
            bc = states[r][:, w] & low
            jobs = [pool.submit(kernel, r, ci, slot, plans[ci], w * workload.slot_s, (w + 1) * workload.slot_s, bc,
                                gid_base) for ci in share(r, plans)]
            for f in jobs:
                f.result()
            gid_base += slot.time.size if io is not None else 0
            cache[w] = light(slot)
            spare.append(held.pop(w))                  # its kernels are done: the arrays are free again
            for u in [u for u in cache if u < w]:
                del cache[u]
        # the causal decision at the end of the last window looks at the last slot: counted, never run
        decide(r, n_w, cache)
        # drain: no more arrivals; every queued I/O and running migration completes
        for f in [pool.submit(kernel, r, ci, empty_slot, empty_plan, horizon, np.inf, np.zeros(n, bool), 0)
                  for ci in share(r, [empty_plan] * C)]:
            f.result()

    try:
        if R == 1:
            drive(0)
        else:  # one driver thread per replication (they plan and wait; the pool's threads compute)
            with ThreadPoolExecutor(R) as drivers:
                running = [drivers.submit(drive, r) for r in range(R)]
                try:
                    for f in running:
                        f.result()
                except BaseException:
                    stop.set()                         # the other drivers stop at their next window
                    raise
    finally:
        pool.shutdown()

    return _result(systems, configs, layout, workload, st, tally, burst_ts, io_order=(sources[0].order if io is not None else None),
                   keep_jobs=keep_jobs)


def _result(systems, configs, layout, workload, st, tally, burst_ts, *, io_order, keep_jobs) -> xr.Dataset:
    """The labelled metrics of a :func:`simulate` call (see :func:`run`); ``st[r][c]``: the engine state of
    set c in replication r, ``tally[r][c]``: its (Mgr_Ratio count, forward migrations validated)."""
    from tieringlab.policies import _lmst_native as nat  # noqa: PLC0415

    R, C = len(st), len(configs)
    aw = np.stack([[s["app_w"] for s in row] for row in st])          # (R, C, app, window, 4)
    n_io = aw[..., nat.A_N]
    tot = aw.sum(axis=(2, 3))                                           # (R, C, 4)
    per_app = aw.sum(axis=3)                                            # (R, C, app, 4)
    per_win = aw.sum(axis=2)                                            # (R, C, window, 4)

    def ratios(x):
        with np.errstate(invalid="ignore", divide="ignore"):
            return (x[..., nat.A_SUM] / x[..., nat.A_N], x[..., nat.A_VIOL] / x[..., nat.A_N],
                    x[..., nat.A_EXCESS] / x[..., nat.A_VIOL])

    m_resp, v_ratio, v_time = ratios(tot)
    a_resp, a_ratio, a_time = ratios(per_app)
    w_resp, w_ratio, w_time = ratios(per_win)
    cnt = np.stack([[s["counters"] for s in row] for row in st])       # (R, C, 8)
    busy = np.stack([[s["busy"] for s in row] for row in st])          # (R, C, m, 2)
    horizon = workload.duration_s
    with np.errstate(invalid="ignore", divide="ignore"):
        mgr_resp = cnt[..., nat.C_MGR_SUM] / cnt[..., nat.C_MGR_N]
        mgr_io = cnt[..., nat.C_BURST_SSD] / cnt[..., nat.C_BURST_IOS]
    bts = np.asarray(burst_ts, np.int64)
    mgr_count = np.array([[t[0] for t in row] for row in tally], np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mgr_ratio = mgr_count / bts[:, None]
    n_log = cnt[..., nat.C_LOG].astype(np.int64)
    kinds = [[s["log_i"][: int(s["counters"][nat.C_LOG]), 4] for s in row] for row in st]
    cfg = [systems[si] for si, _ in configs]
    cp = [c for si, p in enumerate(systems) for c in p.configs()]
    dims_rc = ("replication", "config")
    sec = lambda x, ln: (x, {"units": "s", "long_name": ln})  # noqa: E731
    one = lambda x, ln: (x, {"units": "1", "long_name": ln})  # noqa: E731
    data = {
        "mean_response_s": (dims_rc, m_resp, {"units": "s", "long_name": "M_Resp: mean response of all application I/Os"}),
        "m_resp_s": (dims_rc, m_resp, {"units": "s", "long_name": "M_Resp (Sec. 4.1.3.1), I/O-weighted over both classes"}),
        "v_ratio": (dims_rc, v_ratio, {"units": "1", "long_name": "V_Ratio: share of I/Os over their class's SLA"}),
        "v_time_s": (dims_rc, v_time, {"units": "s", "long_name": "V_Time: mean (response - SLA) over violating I/Os"}),
        "ios": (dims_rc, tot[..., nat.A_N].astype(np.int64), {"units": "1", "long_name": "application I/Os"}),
        "app_m_resp_s": (dims_rc + ("app",), a_resp, {"units": "s", "long_name": "M_Resp per application (Table 5)"}),
        "app_v_ratio": (dims_rc + ("app",), a_ratio, {"units": "1", "long_name": "V_Ratio per application (Table 5)"}),
        "app_v_time_s": (dims_rc + ("app",), a_time, {"units": "s", "long_name": "V_Time per application"}),
        "app_ios": (dims_rc + ("app",), per_app[..., nat.A_N].astype(np.int64), {"units": "1", "long_name": "I/Os per application"}),
        "window_m_resp_s": (dims_rc + ("window",), w_resp, {"units": "s", "long_name": "M_Resp of the I/Os arriving in each window"}),
        "window_v_ratio": (dims_rc + ("window",), w_ratio, {"units": "1", "long_name": "V_Ratio per window"}),
        "window_ios": (dims_rc + ("window",), per_win[..., nat.A_N].astype(np.int64), {"units": "1", "long_name": "I/Os per window"}),
        "disk_utilization": (dims_rc + ("disk",), busy.sum(-1) / horizon,
                             {"units": "1", "long_name": "disk busy time / simulated duration (migration included)"}),
        "disk_migration_utilization": (dims_rc + ("disk",), busy[..., 1] / horizon,
                                       {"units": "1", "long_name": "disk time serving migration I/Os / duration"}),
        "mgr_resp_s": (dims_rc, mgr_resp, {"units": "s", "long_name": "Mgr_Resp: mean response of I/Os to ALUNs under migration"}),
        "mgr_ios": (dims_rc, cnt[..., nat.C_MGR_N].astype(np.int64), {"units": "1", "long_name": "I/Os to ALUNs under migration"}),
        "burst_ts": (("replication",), bts, {"units": "1", "long_name": "Burst_TS: bursty (ALUN, slot) pairs of the FC-home ALUNs"}),
        "mgr_ratio": (dims_rc, mgr_ratio, {"units": "1", "long_name": "Mgr_Ratio: share of Burst_TS validated (or already) on SSD"}),
        "mgr_ratio_io": (dims_rc, mgr_io, {"units": "1", "long_name": "share of the bursty FC-home slots' I/Os served on SSD"}),
        "migrations_started": (dims_rc, cnt[..., nat.C_STARTED].astype(np.int64), {"units": "1", "long_name": "migrations started"}),
        "migrations_completed": (dims_rc, cnt[..., nat.C_DONE].astype(np.int64), {"units": "1", "long_name": "migrations completed (cutover)"}),
        "migrations_abandoned": (dims_rc, cnt[..., nat.C_ABANDONED].astype(np.int64),
                                 {"units": "1", "long_name": "validated candidates not started by their window's end"}),
        "forward_migrations": (dims_rc, np.array([[int((k == 1).sum()) for k in row] for row in kinds]),
                               {"units": "1", "long_name": "forward migrations started (FC -> SSD)"}),
        "backward_migrations": (dims_rc, np.array([[int((k == 0).sum()) for k in row] for row in kinds]),
                                {"units": "1", "long_name": "backward migrations started (SSD -> FC)"}),
        "forward_validated": (dims_rc, np.array([[t[1] for t in row] for row in tally]),
                              {"units": "1", "long_name": "forward candidates validated (executed windows)"}),
    }
    del sec, one, n_io
    # the migration log, padded to the longest (window, ALUN, source, destination, kind, start, cutover, Eq. 17)
    M = max(1, int(n_log.max()) if n_log.size else 1)
    li = np.full((R, C, M, 5), -1, np.int64)
    lf = np.full((R, C, M, 3), np.nan)
    for r in range(R):
        for c in range(C):
            k = int(n_log[r, c])
            li[r, c, :k] = st[r][c]["log_i"][:k]
            lf[r, c, :k] = st[r][c]["log_f"][:k]
    dm = dims_rc + ("migration",)
    data.update({
        "mig_window": (dm, li[..., 0], {"units": "1", "long_name": "window the migration was planned in (-1: none)"}),
        "mig_alun": (dm, li[..., 1], {"units": "1", "long_name": "migrated ALUN"}),
        "mig_src": (dm, li[..., 2], {"units": "1", "long_name": "source disk"}),
        "mig_dst": (dm, li[..., 3], {"units": "1", "long_name": "destination disk"}),
        "mig_kind": (dm, li[..., 4], {"units": "1", "long_name": "0 backward (SSD -> FC), 1 forward (FC -> SSD)"}),
        "mig_start_s": (dm, lf[..., 0], {"units": "s", "long_name": "migration start"}),
        "mig_end_s": (dm, lf[..., 1], {"units": "s", "long_name": "cutover (inf: still running at the end)"}),
        "mig_est_s": (dm, lf[..., 2], {"units": "s", "long_name": "Eq. 17 duration estimate t_mgt"}),
    })
    coords = {
        "config": np.arange(C),
        "policy": ("config", np.array([p.policy.upper() for p in cfg])),
        "label": ("config", np.array([p.policy.upper() + ("-lookahead" if p.timing == "lookahead" else "")
                                      for p in cfg])),
        "timing": ("config", np.array([p.timing for p in cfg])),
        **{k: ("config", np.array([float(getattr(p, k)) for p in cp])) for k in VECTOR_KNOBS},
        "app": np.arange(layout.app_class.size),
        "app_class": ("app", np.where(layout.app_class == 0, "H", "L")),
        "disk": np.arange(layout.m),
        "tier": ("disk", np.where(layout.fast, "SSD", "FC")),
        "window": np.arange(workload.n_slots),
        "replication": np.arange(R),
        "migration": np.arange(M),
    }
    ds = xr.Dataset({k: (v[0], v[1], v[2]) for k, v in data.items()}, coords=coords)
    if keep_jobs:
        n_io = st[0][0]["resp"].size
        resp = np.empty((C, n_io))
        disk = np.empty((C, n_io), np.int8)
        for ci in range(C):
            resp[ci, io_order] = st[0][ci]["resp"]
            disk[ci, io_order] = st[0][ci]["disk"]
        ds["response_s"] = (("config", "job"), resp, {"units": "s", "long_name": "response time (waiting + service)"})
        ds["disk_of_job"] = (("config", "job"), disk, {"units": "1", "long_name": "disk that served the I/O"})
    ds.attrs.update({"source": "thesis Sec. 4.1 (LMST), Sec. 4.1.3 (NMST, SMST)",
                     "horizon_s": horizon, "slot_s": workload.slot_s})
    return ds


# ---------------------------------------------------------------------------------------------- entry point


def run(params: LmstParams, arrivals=None, services=None, key=None, *, workload: wl.LmstWorkloadParams | None = None,
        alun=None, baselines: Sequence[str] = (), keep_jobs: bool | None = None, threads: int | None = None,
        home=None, alun_class=None, fixed_plans=None) -> xr.Dataset:
    """LMST, NMST or SMST (``params.policy``), the "queueing" kind of :mod:`tieringlab.policies.contract`.

    Two ways to give the I/Os:

    - **generated** (``arrivals`` and ``services`` None): the workload of thesis Sec. 4.1.3.1
      (:mod:`tieringlab.models.workloads.lmst`, parameters ``workload``) drawn from ``key``, slot by slot;
      a batch of keys (shape ``(R,)``) runs R replications;
    - **given**: ``arrivals`` (s, non-decreasing, within the workload's ``n_slots * slot_s``), ``services`` =
      **the I/O sizes in bytes** (an LMST I/O's service time depends on the disk that serves it,
      size / ``mu_{D_j}``, and the disk changes with migrations), ``alun`` the ALUN of each I/O (the layout of
      ``workload``: ALUNs numbered application by application, SLA^H applications first).

    ``baselines``: other systems run on the same I/Os in the same call (paired comparisons; the I/Os are
    generated once): names among "NMST", "LMST", "SMST", or ``(name, {field: value})`` for a variant
    (``("LMST", {"timing": "lookahead"})``); a baseline takes the first parameter set of ``params``.
    Sequence-valued knobs of ``params`` (:data:`VECTOR_KNOBS`) run one parameter set each (a Fig. 16 sweep
    is one call).

    Returns a Dataset over ``replication`` x ``config`` (coordinates ``policy``, ``timing`` and the knobs)
    with ``mean_response_s`` (= ``m_resp_s``, M_Resp), ``v_ratio``, ``v_time_s``, per ``app`` and per
    ``window`` versions, ``disk_utilization`` per ``disk``, ``mgr_resp_s``, ``burst_ts``, ``mgr_ratio``,
    ``mgr_ratio_io``, the migration counts, and, for given I/Os (``keep_jobs``, default True), per-I/O
    ``response_s`` and ``disk_of_job`` over ``config`` x ``job``.
    """
    if not isinstance(params, LmstParams):
        raise TypeError(f"params must be LmstParams; got {type(params).__name__}")
    workload = wl.LmstWorkloadParams() if workload is None else workload
    if not isinstance(workload, wl.LmstWorkloadParams):
        raise TypeError(f"workload must be tieringlab.models.workloads.lmst.LmstWorkloadParams; got {type(workload).__name__}")
    systems = [params]
    first = {k: float(np.ravel(np.asarray(getattr(params, k), float))[0]) for k in VECTOR_KNOBS}
    for b in baselines:
        name, over = (b, {}) if isinstance(b, str) else (b[0], dict(b[1]) if len(b) > 1 else {})
        name = str(name).lower()
        if name not in POLICIES:
            raise ValueError(f"baselines must name systems of this simulator, {[x.upper() for x in POLICIES]} "
                             f"(optionally as (name, {{field: value}})); got {b!r}")
        bad = sorted(set(over) - {f.name for f in dataclasses.fields(LmstParams)} | ({"policy"} & set(over)))
        if bad:
            raise ValueError(f"baselines: {b!r} overrides unknown or fixed LmstParams fields {bad}")
        systems.append(dataclasses.replace(params, policy=name, **{**first, **over}))
    if arrivals is None and services is None:
        if alun is not None:
            raise ValueError("alun is given only with arrivals and services (the I/Os)")
        if key is None:
            raise ValueError(f"{params.policy.upper()} draws its workload from key: pass key=jax.random.key(...) "
                             "(or arrivals, services and alun)")
        return simulate(systems, workload, key, threads=threads, home=home, alun_class=alun_class,
                        fixed_plans=fixed_plans)
    if arrivals is None or services is None or alun is None:
        raise ValueError("given I/Os need arrivals (s), services (I/O sizes in bytes) and alun (ALUN per I/O)")
    return simulate(systems, workload, io=(arrivals, services, alun), keep_jobs=True if keep_jobs is None else keep_jobs,
                    threads=threads, home=home, alun_class=alun_class, fixed_plans=fixed_plans)


for _name in ("LMST", "NMST", "SMST"):
    register(PolicySpec(
        name=_name, kind="queueing", fn=run, params_type=LmstParams,
        source={"LMST": "thesis Sec. 4.1.2 (Fig. 13, Eqs. 3-17)", "NMST": "thesis Sec. 4.1.3.1 (no migration)",
                "SMST": "thesis Sec. 4.1.3.4 (synchronous migration)"}[_name],
        fixed={"policy": _name.lower()}, aliases=(_name.replace("ST", "sT"),), random=True,
        description="multi-tier SSD/FC storage with SLA classes; live, synchronous or no data migration"))
