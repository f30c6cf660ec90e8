"""A VMDK-level model of a multi-tier all-flash datacenter (AutoTiering paper Sec. III, Sec. V-A,
Table IV, Eq. 5), as array functions over tiers x VMDKs.

The paper measured a real VMware ESXi host with three SSD tiers (Table IV, "each tier has multiple
SSDs"); it prints no device model. This module is the declared model that stands in for the testbed
(reading notes ``autotiering.md`` Sec. 6.5); every number the paper does not give is a named field of
:class:`DatacenterParams` with its reason.

**Tiers** (Table IV): tier ``t`` has ``n_t`` identical disks with per-disk read/write IOPS
``IOPS_{t,d}``, bandwidths ``BW_{t,d}`` (``d`` in {R, W}) and size. :func:`tier_arrays` validates a
tier table (missing columns, non-positive values: an error naming the table, row and column).

**Capacity caps** (Eq. 5, ``sum_v r(v, t, tau, k) <= Gamma_k R(t, k)``): :func:`capacity_caps` gives the
preset caps ``maxP[t]``, ``maxB[t]``, ``maxS[t]`` of Table II as ``Gamma_k`` times the tier's total
datasheet capacity ``R(t, k)`` (read-direction P and B; both directions separately for migration speed).

**Device time and latency** (one disk = ``QD_ref`` parallel servers, since datasheet IOPS are quoted at
a reference queue depth): an IO of ``s`` bytes in direction ``d`` occupies one of the tier's
``c_t = QD_ref n_t`` servers for ``QD_ref u_{t,d}(s)`` seconds with ``u_{t,d}(s) = max(1/IOPS_{t,d},
s/BW_{t,d})`` (:func:`device_time`), so a stream alone saturates a tier exactly at the Table IV limits.
Its unloaded latency is ``L0_{t,d}(s) = QD_ref / IOPS_{t,d} + s / BW_{t,d}`` (access plus transfer,
:func:`unloaded_latency`). Under contention the tier is an M/M/c queue: ``lat = L0 + W_q(rho_t, c_t)``
with Erlang C (:func:`tieringlab.models.queueing.mmc_mean_wait`), ``rho_t`` the tier's utilisation
(foreground plus migration traffic) capped at ``rho_max``.

**Served rates** (:func:`serve`): VMDK ``v`` offers ``lam_v`` IO/s with read fraction ``f_v`` and IO size
``s_v`` from a window of ``q_v`` outstanding IOs (closed loop): ``X_v = min(lam_v, q_v / lat_v)``; when a
tier's demand exceeds its remaining device time, device time is divided by max-min fair share
(:func:`waterfill`). The fixed point is solved by bisection on each tier's wait (a fixed number of
steps). A VMDK held below its window rate is backlogged, so its latency is ``q_v / X_v`` (Little's law).

**Migration** (Sec. III-B, ``g = S_v / mu``): a VMDK copy runs as ``mig_io_bytes`` sequential IOs at
the bottleneck of the source's remaining read and the destination's remaining write bandwidth
(:func:`migration_step`), competing for device time as one more IO stream in each tier's max-min fair share
(``mig_share = "fair"``; ``"floor"``: idle time with a floor); it consumes device time on both tiers; the VMDK
is served from the source until the copy completes. The same mechanics apply to every policy.

**Sources** (``source``): open (default), the application offers ``lam_v`` and its IOs wait in a guest queue
in front of the window, so a VMDK near its window rate is more sensitive to its tier's speed (TSSCS slopes
``1 / (1 - g)^2 > 1``), or closed (the window alone; slope 1).

**TSSCS ground truth** (Sec. IV-2, Alg. 1 lines 9-21): :func:`probe_samples` injects a latency ``x``
into one VMDK's IOs, lets the tier re-equilibrate (a full re-solve of the fixed point) and returns the
average latency the IO Filter would measure, with sampling noise of std ``lat cv_io / sqrt(n_io)``.

Seconds, bytes, bytes/s and IO/s throughout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from tieringlab.arrays import is_concrete
from tieringlab.models.queueing import mmc_mean_wait
from tieringlab.params import cross_field, field_problems, param
from tieringlab.units import KiB, MiB

__all__ = [
    "TIER_COLUMNS",
    "DatacenterParams",
    "TierArrays",
    "Caps",
    "ServeResult",
    "tier_arrays",
    "capacity_caps",
    "device_time",
    "unloaded_latency",
    "waterfill",
    "serve",
    "probe_samples",
    "migration_step",
    "first_fit",
    "Measured",
    "tier_latency",
    "check_fits",
]

#: Columns a tier table must have (per-disk figures of Table IV, library units), besides ``n_disks``.
TIER_COLUMNS = ("read_iops", "write_iops", "read_bytes_per_s", "write_bytes_per_s", "disk_size_bytes")


@dataclass(frozen=True)
class DatacenterParams:
    """The simulated testbed: what the paper's Sec. V-A leaves out, each a documented choice (reading notes
    Sec. 6.1 and 6.5; the reason at each field). A disk of a tier is ``qd_ref`` parallel servers (M/M/c); the
    queueing wait is found by ``n_iter`` bisection steps (a fixed count is array-friendly: the bracket shrinks
    to 2^-30 of at most a few ms, i.e. picoseconds), ``n_iter_probe`` for a TSSCS probe (nanoseconds, far below
    the 50 µs injection levels and the sampling noise)."""

    n_disks: tuple[int, ...] = param((2, 2, 2), "disks per tier: 'each tier has multiple SSDs' (Sec. V-A) without a "
                                                "number; two is the smallest 'multiple' and puts the write-limited "
                                                "totals near Fig. 5's 100-150K IOPS (documented choice)",
                                     bounds=(1, 64))
    qd_ref: int = param(32, "queue depth of the datasheet IOPS (random 4 KB at a deep queue): a disk is qd_ref "
                            "parallel servers (documented choice)", bounds=(1, 1024))
    rho_max: float = param(0.98, "utilisation cap that keeps the M/M/c wait finite at saturation (documented "
                                 "choice)", bounds=(0.5, 0.999))
    n_iter: int = param(30, "bisection steps on each tier's queueing wait (documented choice)", bounds=(1, 200))
    n_iter_probe: int = param(20, "bisection steps of a TSSCS probe (documented choice)", bounds=(1, 200))
    mig_io_bytes: int = param(1 * MiB, "sequential copy IO size of a VMDK migration (documented choice)",
                              bounds=(1, None), unit="bytes")
    mig_min_share: float = param(0.05, "share of a tier's device time that keeps a copy moving when the tier is "
                                       "saturated (documented choice; < rho_max)", bounds=(0.0, 1.0))
    mig_rate_cap: float | None = param(None, "copy rate cap (none: no throttle; documented choice)",
                                       bounds=(1.0, None), unit="bytes/s")
    cv_io: float = param(1.0, "coefficient of variation of single IO latencies behind the TSSCS sampling noise "
                              "(an exponential-like spread; documented choice)", bounds=(0.0, 100.0))
    mig_share: str = param("fair", "device time of a VMDK copy on a busy tier: 'fair', one more IO stream in the "
                                   "tier's max-min fair share (a storage live migration is a sequential IO stream "
                                   "queued beside the VMDKs' own IO, Sec. III-B g = S / mu); 'floor', the time the "
                                   "VMDKs leave idle but at least mig_min_share (documented choice; notes 6.5)",
                           choices=("fair", "floor"))
    source: str = param("open", "VMDK sources: 'open', the application offers its rate and IOs wait in a guest "
                                "queue in front of the q-IO window, latency L / (1 - min(lam L / q, rho_max)) (notes "
                                "6.5's open-loop variant; gives Fig. 2's premise that VMs differ in tier sensitivity, "
                                "Sec. IV-2); 'closed', the window alone, latency L (slope 1 for every unheld VMDK)",
                        choices=("open", "closed"))

    def __post_init__(self):
        cross_field(field_problems(self))
        if not 0 < self.mig_min_share < self.rho_max:
            cross_field([f"mig_min_share must lie in (0, rho_max = {self.rho_max}); got {self.mig_min_share!r}"])

    @property
    def c_max(self) -> int:
        """The most servers of any tier, ``QD_ref max_t n_t`` (static size of the Erlang sums)."""
        return int(self.qd_ref) * int(max(self.n_disks))


class TierArrays(NamedTuple):
    """Per-tier arrays of a tier table (tier order = the paper's priority order, high-end first)."""

    n_disks: jax.Array     #: (T,) disks per tier (float64)
    iops: jax.Array        #: (T, 2) per-disk IOPS, [read, write]
    bw: jax.Array          #: (T, 2) per-disk bandwidth, bytes/s, [read, write]
    disk_bytes: jax.Array  #: (T,) per-disk size, bytes


class Caps(NamedTuple):
    """Preset caps of Eq. 5 / Table II: ``Gamma_k R(t, k)`` per tier."""

    P: jax.Array      #: (T,) maxP, IO/s (read-direction datasheet IOPS)
    B: jax.Array      #: (T,) maxB, bytes/s (read-direction datasheet bandwidth)
    S: jax.Array      #: (T,) maxS, bytes
    P_rw: jax.Array   #: (T, 2) IO/s per direction
    B_rw: jax.Array   #: (T, 2) bytes/s per direction (migration speed, A2.17)


def _table_rows(table):
    """(row labels, {column: values}) of a DataFrame or a mapping of columns."""
    if hasattr(table, "columns") and hasattr(table, "index"):
        return list(table.index), {c: np.asarray(table[c]) for c in table.columns}
    cols = {k: np.asarray(v) for k, v in dict(table).items()}
    n = len(next(iter(cols.values()))) if cols else 0
    return list(range(1, n + 1)), cols


def tier_arrays(table, n_disks=None, *, name: str = "tier table (AutoTiering Table IV)") -> TierArrays:
    """Validate a tier table and return its :class:`TierArrays`.

    ``table``: a DataFrame like :func:`tieringlab.models.devices.autotiering_tier_table` (one row per
    tier in priority order, per-disk figures in library units) or a mapping of columns. It needs the
    columns :data:`TIER_COLUMNS`; ``n_disks`` comes from a column of that name or from the argument
    (one int per tier). Every value must be finite and > 0. A violation raises ``ValueError`` naming
    the table, the row (position and label) and the column.
    """
    labels, cols = _table_rows(table)
    missing = [c for c in TIER_COLUMNS if c not in cols]
    if missing:
        raise ValueError(f"{name}: missing column(s) {missing}; a tier table needs {list(TIER_COLUMNS)}")
    if not labels:
        raise ValueError(f"{name}: no rows (at least one tier is needed)")
    if "n_disks" in cols and n_disks is None:
        n_disks = cols["n_disks"]
    if n_disks is None:
        raise ValueError(f"{name}: give n_disks (disks per tier) as a column or an argument")
    nd = np.asarray(n_disks)
    if nd.shape != (len(labels),):
        raise ValueError(f"{name}: n_disks needs one entry per tier ({len(labels)}); got {tuple(np.atleast_1d(nd))}")
    vals = {c: cols[c] for c in TIER_COLUMNS}
    vals["n_disks"] = nd
    for c, v in vals.items():
        for i, x in enumerate(v):
            try:
                xf = float(x)
            except (TypeError, ValueError):
                xf = float("nan")
            if not (math.isfinite(xf) and xf > 0) or (c == "n_disks" and xf != int(xf)):
                what = "a positive whole number of disks" if c == "n_disks" else "a finite number > 0"
                raise ValueError(f"{name}: row {i} (tier {labels[i]}), column {c!r} must be {what}; got {x!r}")
    f = lambda c: jnp.asarray(np.asarray(vals[c], dtype=np.float64))  # noqa: E731
    return TierArrays(n_disks=f("n_disks"),
                      iops=jnp.stack([f("read_iops"), f("write_iops")], axis=1),
                      bw=jnp.stack([f("read_bytes_per_s"), f("write_bytes_per_s")], axis=1),
                      disk_bytes=f("disk_size_bytes"))


def capacity_caps(tiers: TierArrays, gamma=0.9, gamma_s=0.9) -> Caps:
    """The caps of Eq. 5: ``maxX[t] = Gamma_X R(t, X)`` with ``R`` the tier's total datasheet capacity
    (``n_t`` disks). ``maxP`` and ``maxB`` use the read-direction figures (reading notes 6.2 item 9);
    ``P_rw``/``B_rw`` keep both directions. ``gamma`` (Gamma_P = Gamma_B) and ``gamma_s`` (Gamma_S)
    are fractions in (0, 1]."""
    n = tiers.n_disks
    p_rw = gamma * n[:, None] * tiers.iops
    b_rw = gamma * n[:, None] * tiers.bw
    return Caps(P=p_rw[:, 0], B=b_rw[:, 0], S=gamma_s * n * tiers.disk_bytes, P_rw=p_rw, B_rw=b_rw)


def device_time(tiers: TierArrays, io_bytes):
    """``u_{t,d}(s) = max(1 / IOPS_{t,d}, s / BW_{t,d})``: disk-seconds one IO of ``s`` bytes uses, shape
    ``(T, 2) + shape(s)`` ([read, write] on axis 1). A tier's utilisation is ``sum X u / n_t``."""
    s = jnp.asarray(io_bytes, jnp.float64)
    ex = (...,) + (None,) * s.ndim
    return jnp.maximum(1.0 / tiers.iops[ex], s / tiers.bw[ex])


def unloaded_latency(tiers: TierArrays, io_bytes, qd_ref: int):
    """``L0_{t,d}(s) = QD_ref / IOPS_{t,d} + s / BW_{t,d}`` (seconds), shape ``(T, 2) + shape(s)``:
    access time at the reference depth plus transfer (reading notes 6.5)."""
    s = jnp.asarray(io_bytes, jnp.float64)
    ex = (...,) + (None,) * s.ndim
    return qd_ref / tiers.iops[ex] + s / tiers.bw[ex]


@jax.jit
def waterfill(demand, capacity):
    """Max-min fair shares: ``a_i = min(d_i, theta_r)`` per row ``r`` of ``demand`` (shape ``(..., R, N)``,
    >= 0), with the water level ``theta_r`` chosen so that ``sum_i a_i = capacity_r`` when the row's
    demand exceeds its ``capacity`` (shape ``(..., R)``, >= 0), and ``theta_r = inf`` otherwise.

    ``F(theta) = sum_j min(d_j, theta)`` is increasing; evaluated at every candidate ``theta = d_i`` (an
    ``N x N`` comparison, no sort), the demands with ``F(d_i) <= C`` are met in full and the rest share
    what is left equally: ``theta = (C - sum_{met} d_j) / #unmet``. Meant for the tens of VMDKs of a
    tier (cost ``N^2`` per row).
    """
    d = jnp.asarray(demand, jnp.float64)
    cap = jnp.asarray(capacity, jnp.float64)[..., None]
    f_at = jnp.sum(jnp.minimum(d[..., None, :], d[..., :, None]), axis=-1)   # F(d_i)
    met = f_at <= cap
    n_unmet = jnp.sum(~met, axis=-1, keepdims=True)
    left = cap - jnp.sum(jnp.where(met, d, 0.0), axis=-1, keepdims=True)
    theta = jnp.where(n_unmet > 0, jnp.maximum(left, 0.0) / jnp.maximum(n_unmet, 1), jnp.inf)
    return jnp.minimum(d, theta)


class ServeResult(NamedTuple):
    """One epoch's steady state of every VMDK (shape (V,) unless noted)."""

    x: jax.Array          #: served IO/s
    x_rw: jax.Array       #: (V, 2) served IO/s, [read, write]
    lat: jax.Array        #: mean latency of the VMDK's IOs (s), injected latency included
    lat_rw: jax.Array     #: (V, 2) mean latency per direction (s)
    rho: jax.Array        #: (T,) tier utilisation (foreground + migration), capped at rho_max
    wq: jax.Array         #: (T,) M/M/c mean wait on each tier (s)
    work: jax.Array       #: device time the VMDK's IO uses on its tier (disk-seconds per second)


def _one_hot(place, n_tiers):
    return (jnp.asarray(place)[:, None] == jnp.arange(n_tiers)[None, :]).astype(jnp.float64)  # (V, T)


@partial(jax.jit, static_argnames=("sim", "n_iter"))
def serve(tiers: TierArrays, sim: DatacenterParams, place, lam, read_frac, io_bytes, window, mig_util, inject=0.0,
          n_iter: int | None = None, open_source=None):
    """Served rates and latencies of all VMDKs in one epoch (the contention fixed point).

    ``place`` (V,) int tier of each VMDK; ``lam`` (V,) offered IO/s; ``read_frac`` (V,) in [0, 1];
    ``io_bytes`` (V,) bytes per IO; ``window`` (V,) outstanding IOs ``q_v``; ``mig_util`` (T,)
    fraction of each tier's device time used by migrations; ``inject`` (V,) or scalar seconds added to
    every IO (TSSCS). With ``u_v`` the VMDK's device time per IO on its tier and ``L0_v`` its unloaded
    latency (read/write mix):

    - at a tier wait ``W``, each VMDK runs at its window rate ``X_v(W) = min(lam_v, q_v / (L0_v + W +
      inject_v))``; the tier's utilisation is ``rho_t(W) = sum_{v on t} X_v u_v / n_t + mig_util_t``
      (capped at ``rho_max``), its mean server time ``E[S]_t = QD_ref sum X u / sum X``, and the M/M/c
      wait with ``c_t = QD_ref n_t`` servers is ``Wq(rho_t(W), E[S]_t)``;
    - the fixed point ``W = Wq(rho(W))`` of each tier is found by bisection (``h(W) = Wq - W`` is >= 0 at
      0 and <= 0 at the wait of a full tier), ``n_iter`` steps (default ``sim.n_iter``), all tiers at once;
    - when the window rates ask for more device time than the tier has left after migrations,
      ``(rho_max - mig_util_t) n_t``, it is divided by max-min fair share (:func:`waterfill`).

    Latency: ``L0_v + W_t + inject_v``, or ``q_v / X_v`` when the VMDK is held below its window rate
    (backlogged at its window; the extra wait is added to both directions). With open sources
    (``sim.source == "open"``) the offered IOs also wait in a guest queue in front of the window: latency
    ``L / (1 - g)`` with ``L = L0_v + W_t + inject_v`` and the guest load ``g = min(lam_v L / q_v, rho_max)``
    (the larger of the two when held), so ``dlat / dinject = 1 / (1 - g)^2``: VMDKs that fill their window are
    more sensitive to a tier's speed. ``open_source`` (a bool, may be traced) overrides ``sim.source`` (one
    compiled program for both). Returns :class:`ServeResult`.
    """
    n_t = tiers.n_disks.shape[0]
    lam = jnp.asarray(lam, jnp.float64)
    f = jnp.asarray(read_frac, jnp.float64)
    q = jnp.asarray(window, jnp.float64)
    inj = jnp.broadcast_to(jnp.asarray(inject, jnp.float64), lam.shape)
    oh = _one_hot(place, n_t)                                    # (V, T)
    u_all = device_time(tiers, io_bytes)                         # (T, 2, V)
    l0_all = unloaded_latency(tiers, io_bytes, sim.qd_ref)       # (T, 2, V)
    u_rw = jnp.einsum("vt,tdv->vd", oh, u_all)                   # (V, 2) on the own tier
    l0_rw = jnp.einsum("vt,tdv->vd", oh, l0_all)
    mix = jnp.stack([f, 1.0 - f], axis=1)
    u = jnp.sum(mix * u_rw, axis=1)                              # disk-seconds per IO
    l0 = jnp.sum(mix * l0_rw, axis=1)
    nd = tiers.n_disks
    c = sim.qd_ref * nd
    mig = jnp.asarray(mig_util, jnp.float64)
    avail = jnp.maximum(sim.rho_max - mig, 0.0) * nd             # disk-seconds per second for VMDKs

    def window_rates(w):
        return jnp.minimum(lam, q / (l0 + oh @ w + inj))

    def wait(x):
        work = oh.T @ (x * u)                                    # (T,) disk-seconds per second
        rate = oh.T @ x
        rho = jnp.minimum(work / nd + mig, sim.rho_max)
        es = jnp.where(rate > 0, sim.qd_ref * work / jnp.where(rate > 0, rate, 1.0), 0.0)
        lam_t = jnp.where(es > 0, rho * c / jnp.where(es > 0, es, 1.0), 0.0)
        return jnp.where(es > 0, mmc_mean_wait(lam_t, es, c, sim.c_max), 0.0), rho

    # the wait of a full tier with the slowest IO any VMDK could bring bounds the root from above
    es_hi = sim.qd_ref * jnp.max(u_all, axis=(1, 2))
    hi0 = mmc_mean_wait(sim.rho_max * c / es_hi, es_hi, c, sim.c_max)

    def body(_, bracket):
        lo, hi = bracket
        mid = 0.5 * (lo + hi)
        up = wait(window_rates(mid))[0] > mid
        return jnp.where(up, mid, lo), jnp.where(up, hi, mid)

    lo, hi = jax.lax.fori_loop(0, sim.n_iter if n_iter is None else int(n_iter), body, (jnp.zeros(n_t), hi0))
    w = 0.5 * (lo + hi)
    xw = window_rates(w)
    demand = oh.T * (xw * u)[None, :]                            # (T, V)
    share = jnp.sum(waterfill(demand, avail) * oh.T, axis=0)
    x = jnp.minimum(xw, share / u)
    _, rho = wait(x)
    base = l0 + oh @ w + inj
    held = x < xw * (1.0 - 1e-12)
    extra = jnp.where(held, jnp.maximum(q / jnp.where(x > 0, x, 1.0) - base, 0.0), 0.0)
    is_open = (sim.source == "open") if open_source is None else open_source
    # open source: the offered IOs queue in the guest in front of the window; guest load lam base / q
    g = jnp.minimum(lam * base / q, sim.rho_max)
    extra = jnp.where(is_open, jnp.maximum(extra, base / (1.0 - g) - base), extra)
    lat_rw = l0_rw + (oh @ w + inj + extra)[:, None]
    return ServeResult(x=x, x_rw=x[:, None] * mix, lat=base + extra, lat_rw=lat_rw, rho=rho, wq=w, work=x * u)


@partial(jax.jit, static_argnames=("sim", "n_samples"))
def probe_samples(key, tiers: TierArrays, sim: DatacenterParams, place, lam, read_frac, io_bytes, window,
                  mig_util, levels, n_samples: int, probe_window_s, open_source=None):
    """TSSCS ground truth (AutoTiering Sec. IV-2; Alg. 1 line 12's ``sampleSet[t][v]``): for every VMDK
    ``v`` and injected latency ``x_l`` (``levels``, (L,) seconds), the fixed point is re-solved with ``x_l``
    added to ``v``'s IOs only (the tier re-equilibrates), and ``n_samples`` measurements of ``v``'s
    average latency are drawn: ``y = lat_v(x_l) + eps``, ``eps ~ N(0, (lat cv_io)^2 / n_io)``,
    ``n_io = max(X_v probe_window_s, 1)`` IOs per sample window; ``y`` is kept >= 1 ns.
    Each probe's fixed point takes ``sim.n_iter_probe`` bisection steps.
    Returns ``(samples (V, L, S), n_io (V, L))``. ``vmap`` over the ``V x L`` probes, no loop."""
    lv = jnp.asarray(levels, jnp.float64)
    n_v = jnp.asarray(lam).shape[0]
    eye = jnp.eye(n_v)

    def one(v_onehot, x_l):
        r = serve(tiers, sim, place, lam, read_frac, io_bytes, window, mig_util, inject=v_onehot * x_l,
                  n_iter=sim.n_iter_probe, open_source=open_source)
        return r.lat @ v_onehot, r.x @ v_onehot

    lat, x = jax.vmap(lambda oh: jax.vmap(lambda xl: one(oh, xl))(lv))(eye)     # (V, L)
    n_io = jnp.maximum(x * probe_window_s, 1.0)
    eps = jax.random.normal(key, lat.shape + (int(n_samples),), dtype=jnp.float64)
    sd = lat * sim.cv_io / jnp.sqrt(n_io)
    return jnp.maximum(lat[..., None] + sd[..., None] * eps, 1e-9), n_io


# ----------------------------------------------------------------------------- what an IO Filter measures


class Measured(NamedTuple):
    """The IO Filter's view of one monitor epoch (shape (V,) or (T,)); the only input of the policies."""

    tier: jax.Array        #: (V,) tier that served the VMDK during the epoch
    iops_rw: jax.Array     #: (V, 2) served IO/s [read, write]
    bytes_rw: jax.Array    #: (V, 2) served bytes/s
    lat: jax.Array         #: (V,) mean latency of the VMDK's IOs (s)
    size: jax.Array        #: (V,) VMDK size, bytes (hypervisor API, A1.32)


def tier_latency(meas: Measured, tiers: TierArrays, fallback_qd, datasheet=False):
    """``tierLatency[t]`` = ``L_t`` (Table II: "original average I/O latency (without injected latency) of
    tier t"), in one of two readings:

    - measured (default, reading notes 6.2 item 8): the IO-weighted mean measured latency of the VMDKs the
      tier served in the epoch; a tier that served no IO falls back to the datasheet value;
    - ``datasheet`` (may be traced): the tier's unloaded 4 KiB latency ``qd / IOPS + 4 KiB / BW`` at the
      measured global read mix, i.e. the device's own latency, independent of what the tier hosts.
    """
    n_t = tiers.n_disks.shape[0]
    oh = (meas.tier[:, None] == jnp.arange(n_t)[None, :]).astype(jnp.float64)
    x = jnp.sum(meas.iops_rw, axis=1)
    w = oh.T @ x
    lt = (oh.T @ (x * meas.lat)) / jnp.where(w > 0, w, 1.0)
    tot = jnp.sum(meas.iops_rw, axis=0)
    f = jnp.where(jnp.sum(tot) > 0, tot[0] / jnp.where(jnp.sum(tot) > 0, jnp.sum(tot), 1.0), 0.5)
    l0 = unloaded_latency(tiers, jnp.float64(4 * KiB), fallback_qd)        # (T, 2)
    sheet = f * l0[:, 0] + (1 - f) * l0[:, 1]
    return jnp.where((w > 0) & ~jnp.asarray(datasheet), lt, sheet)


@partial(jax.jit, static_argnames=("sim",))
def migration_step(tiers: TierArrays, sim: DatacenterParams, remaining, src, dst, fg_util, epoch_s, fg_work=None,
                   fair=None):
    """One epoch of the in-flight VMDK copies (AutoTiering Sec. III-B migration; same for all policies).

    ``remaining`` (V,) bytes still to copy (0: no copy in flight), ``src``/``dst`` (V,) tiers (``src`` is
    every VMDK's current tier), ``fg_util`` (T,) the utilisation the VMDKs' own IO would have without copies
    and ``fg_work`` (V,) each VMDK's share of it in disk-seconds per second on its tier (a :func:`serve`
    with ``mig_util = 0``: ``rho`` and ``work``). How much device time a copy gets on a tier it reads from
    or writes to (``sim.mig_share``):

    - ``"fair"``: the copy is one more IO stream in the tier's max-min fair share (:func:`waterfill` of
      ``rho_max n_t`` over the VMDKs' demands ``fg_work`` and the copies', each as large as the tier): on an
      idle tier it takes what the VMDKs leave, on a saturated one the water level, never less than the
      lightest VMDKs' demand (``fg_work`` required);
    - ``"floor"``: ``max(rho_max - fg_util_t, mig_min_share)`` split equally among the tier's copies (the
      foreground is squeezed by at most the floor).

    ``fair`` (a bool, may be traced) overrides ``sim.mig_share`` (one compiled program for both).
    A copy of ``mig_io_bytes`` IOs moves at the bottleneck of its source's read share and its destination's
    write share (and ``mig_rate_cap``). Returns ``(moved (V,) bytes this epoch, util (T,) epoch-average
    device time used by copies, done (V,) bool)``.
    """
    n_t = tiers.n_disks.shape[0]
    rem = jnp.asarray(remaining, jnp.float64)
    active = rem > 0
    s_oh = _one_hot(src, n_t) * active[:, None]
    d_oh = _one_hot(dst, n_t) * active[:, None]
    per_byte = device_time(tiers, jnp.float64(sim.mig_io_bytes)) / sim.mig_io_bytes   # (T, 2) disk-s per byte
    is_fair = (sim.mig_share == "fair") if fair is None else fair
    # floor: the idle time, at least mig_min_share, split equally among the tier's copies
    share = jnp.maximum(sim.rho_max - jnp.asarray(fg_util, jnp.float64), sim.mig_min_share)
    k = jnp.sum(s_oh, axis=0) + jnp.sum(d_oh, axis=0)                               # copies per tier
    cap_t = share * tiers.n_disks / jnp.maximum(k, 1.0)                             # disk-s/s per copy
    r_read = s_oh @ (cap_t / per_byte[:, 0])
    r_write = d_oh @ (cap_t / per_byte[:, 1])
    if is_fair is not False:
        if fg_work is None:
            raise ValueError("migration_step: mig_share = 'fair' needs fg_work (each VMDK's device time, "
                             "serve(...).work)")
        total = sim.rho_max * tiers.n_disks                                         # (T,) disk-s/s
        fg_d = _one_hot(src, n_t).T * jnp.asarray(fg_work, jnp.float64)[None, :]     # (T, V)
        cp_d = jnp.where((s_oh + d_oh).T > 0, total[:, None], 0.0)                   # (T, V) copies
        alloc = waterfill(jnp.concatenate([fg_d, cp_d], axis=1), total)[:, rem.shape[0]:]
        r_read = jnp.where(is_fair, jnp.sum(s_oh * (alloc / per_byte[:, 0:1]).T, axis=1), r_read)
        r_write = jnp.where(is_fair, jnp.sum(d_oh * (alloc / per_byte[:, 1:2]).T, axis=1), r_write)
    rate = jnp.minimum(r_read, r_write)
    if sim.mig_rate_cap is not None:
        rate = jnp.minimum(rate, sim.mig_rate_cap)
    moved = jnp.where(active, jnp.minimum(rem, rate * epoch_s), 0.0)
    bps = moved / epoch_s
    util = (s_oh.T @ bps * per_byte[:, 0] + d_oh.T @ bps * per_byte[:, 1]) / tiers.n_disks
    return moved, util, active & (moved >= rem)


@jax.jit
def first_fit(preferred, sizes, cap_s, load0=None, order=None):
    """Storage-only placement: each VMDK (in ``order``, default index order) goes to its ``preferred``
    tier if the tier's storage cap allows, else to the first tier in priority order that has room, else
    (no room anywhere) to its preferred tier. ``load0`` (T,) bytes already placed. Returns
    ``(tier (V,) int, fitted (V,) bool, load (T,))``. A ``lax.scan`` over the VMDKs with the T loads as
    its carry (first fit is sequential by nature)."""
    sizes = jnp.asarray(sizes, jnp.float64)
    cap = jnp.asarray(cap_s, jnp.float64)
    pref = jnp.asarray(preferred)
    n_t = cap.shape[0]
    idx = jnp.arange(sizes.shape[0]) if order is None else jnp.asarray(order)
    load = jnp.zeros(n_t) if load0 is None else jnp.asarray(load0, jnp.float64)

    def step(ld, v):
        s, p = sizes[v], pref[v]
        room = ld + s <= cap
        t = jnp.where(room[p], p, jnp.where(jnp.any(room), jnp.argmax(room), p))
        return ld.at[t].add(s), (t, room[t])

    load, (t_o, ok_o) = jax.lax.scan(step, load, idx)
    tier = jnp.zeros_like(pref).at[idx].set(t_o.astype(pref.dtype))
    fitted = jnp.zeros(sizes.shape[0], bool).at[idx].set(ok_o)
    return tier, fitted, load


def check_fits(sizes, caps_s, *, vmdk_labels=None, tier_labels=None,
               tier_table: str = "tier table (AutoTiering Table IV)", vmdk_table: str = "VMDK table") -> None:
    """Bad input for a datacenter: a tier whose storage cap ``maxS`` is smaller than the largest VMDK, or
    VMDKs whose total size exceeds the sum of the caps, raise ``ValueError`` naming the tables, rows and
    columns. Concrete arrays only."""
    if not is_concrete(sizes, caps_s):
        return
    sz = np.asarray(sizes, float)
    cs = np.asarray(caps_s, float)
    big = int(np.argmax(sz))
    vl = vmdk_labels[big] if vmdk_labels is not None else big
    for t, c in enumerate(cs):
        if c < sz[big]:
            tl = tier_labels[t] if tier_labels is not None else t + 1
            raise ValueError(
                f"{tier_table}: row {t} (tier {tl}), column 'disk_size_bytes' (x n_disks x Gamma_S = {c:.4g} bytes) is "
                f"smaller than one VMDK: {vmdk_table} row {big} ({vl}), column 'size_bytes' = {sz[big]:.4g} bytes")
    if sz.sum() > cs.sum():
        raise ValueError(f"{vmdk_table}: column 'size_bytes' sums to {sz.sum():.4g} bytes, more than the tiers' "
                         f"storage caps ({tier_table}: {cs.sum():.4g} bytes in all)")
