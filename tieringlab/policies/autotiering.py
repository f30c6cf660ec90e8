"""AutoTiering (AutoTiering paper Sec. IV, Alg. 1-2, Eq. 6-7) and its baselines IDT and EDT (Sec. V-A),
per VMDK, as epoch controllers in a closed loop with the all-flash datacenter model.

Controller kind (:mod:`tieringlab.policies.contract`): ``fn(params, observations, key) -> Dataset`` over
``epoch``. A tiering controller changes what it later measures, so ``observations`` here is the
*environment* (:func:`tieringlab.models.workloads.autotiering.scenario`: the tier table, the VMDKs and
their offered demand per epoch); a ``jax.lax.scan`` over monitor epochs runs, in each epoch,

1. the in-flight VMDK copies (:func:`tieringlab.models.allflash.migration_step`, same for every policy);
2. the contention fixed point (:func:`tieringlab.models.allflash.serve`);
3. the IO Filter's view, :class:`~tieringlab.models.allflash.Measured`: per VMDK and per tier, served
   IOPS, bytes/s and mean latency; for AutoTiering also its TSSCS probe samples
   (:func:`tieringlab.models.allflash.probe_samples`);
4. the policy's monitor step and, at migration epochs, its placement. The decision functions
   (:func:`autotiering_monitor`, :func:`greedy_baseline_decide`, :func:`tier_major_greedy`) take only
   :class:`~tieringlab.models.allflash.Measured` fields and the datasheet caps: **no policy sees the
   offered demand or the simulator's true latencies**; AutoTiering knows only what its calibration measures.

AutoTiering, line by line (reading notes ``autotiering.md`` Sec. 2-3 and 6.2; readings marked [R]):

- A1.9-21 ``tierSpdSenCalibration``: for every VMDK on its tier, the CV rule and least-squares line of
  :func:`tieringlab.models.regression.calibrate` over the probe samples (``levels_s`` x ``n_samples``);
- A1.22-35 ``calCapacityMatrices``, ``estimateAvgLat``: ``Lat[t,v] = m_v (L_t - L_{t_v}) + b_v`` for
  **every** tier and VMDK ([R] the printed loop over ``VMSet[t]`` could never move a VM);
  ``P = 1/Lat`` (0 if ``Lat <= 0``), ``B = P s_v``, ``S = size``; [R] a ``Lat`` below the tier's unloaded
  datasheet latency (an extrapolation past the device, A1.26's ``Lat <= 0`` included) is raised to it
  (``lat_floor``; "zero" keeps A1.26-29 as printed);
- A2.1-13 ``calScore``: ineligible (any ``X > maxX``) -> score -1 and ratios 0; ``VMCapRatMat = X / maxX``
  (``maxP``, ``maxB`` read-direction, or the read/write mix at the VMDK's read fraction: ``max_mix``)
  ([R] A2.11 ``maxI`` and A2.12 ``B / maxP`` read as ``maxP`` and ``maxB``);
- Eq. 6 ``currCapScore = (spc . wet) . VMCapRatMat x SLA x conf / sum(wet)``;
- A2.14 / Eq. 7 ``score = agingFactor x hist + currCapScore - wetMig x migCost``; reading A (default):
  ``hist`` is last epoch's score with -1 entries as 0; reading B: ``hist = a hist + currCapScore`` and
  the penalty is subtracted outside the history;
- A2.16-18 ``migCost = size / min(remReadThrput(src) + currReadThrpt(v), remWriteThrput(t))``, in units of
  ``migration_epoch_s`` ([R] dimensionless ``wetMig``), floored speed, 0 for the VMDK's own tier ([R]);
- A2.19-25 ``triggerMigration``: tiers in priority order, VMDKs by descending score, assigned while
  ``tierHasCapacityForVM`` (Eq. 5 with predicted usage, counted from 0 each round [R]) holds.

IDT ("greedy IOPS-only criteria where higher IOPS extents move to higher IOPS tiers") and EDT (Guerra
et al.'s extent-based dynamic tiering "based on both VM capacity and IOPS requirements"), "slightly
modified to support per-VMDK-based operation" (Sec. V-A): the same tier-major greedy, ranking VMDKs by
the measured IOPS of the last decision window (IDT) or by IOPS density, IOPS per byte (EDT), with the
storage cap (both) and a mixed read/write IOPS budget (EDT). No history, prediction or migration cost.

Shared mechanics [R]: a VMDK with a copy in flight is pinned to its destination (its usage counted
there first); a copy starts only while its destination physically holds it (the VMDKs a tier serves plus the
copies into it in flight, against its raw capacity: :func:`admit_copies`), else it waits for a later decision;
a VMDK that no tier accepts is placed by storage alone (its current tier if the storage cap allows, else the first
tier with room; :func:`tieringlab.models.allflash.first_fit`).

Scoring and matching are array code over tiers x VMDKs; the only sequential part is the greedy's
capacity check, a ``lax.scan`` over the VMDKs of each tier with the tier's loads as its carry.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import xarray as xr

from tieringlab.models import allflash as af
from tieringlab.models.regression import calibrate
from tieringlab.models.temperature import perf_score
from tieringlab.params import cross_field, field_problems, param
from tieringlab.policies.registry import PolicySpec, register
from tieringlab.units import MB, US, KiB

__all__ = [
    "TieringEpochs", "AutoTieringSettings", "AutoTieringParams", "GreedySettings", "GreedyTieringParams", "AtScores",
    "autotiering_scores", "tier_major_greedy", "place_leftovers", "autotiering_monitor",
    "greedy_baseline_decide", "run_autotiering", "run_idt", "run_edt", "simulate",
]

SOURCE = "AutoTiering paper (Yang et al.) Sec. IV, Alg. 1-2, Eq. 6-7"
SOURCE_BASELINES = "AutoTiering paper Sec. V-A (IDT; EDT after Guerra et al., FAST 2011), per VMDK"

_DIRECTIONS = ("read", "write")


def _epoch_problems(p) -> list[str]:
    """Alg. 1: ``migrationEpoch > monitorEpoch``, a whole number of monitor epochs (the simulator steps one
    monitor epoch at a time)."""
    r = p.migration_epoch_s / p.monitor_epoch_s
    if r < 1 or abs(r - round(r)) > 1e-9:
        return [f"migration_epoch_s must be a whole multiple (>= 1) of monitor_epoch_s (Alg. 1: migrationEpoch > "
                f"monitorEpoch); got {p.migration_epoch_s} and {p.monitor_epoch_s}"]
    return []


def _triples(name: str, m) -> list[str]:
    a = np.asarray(m, dtype=float) if all(isinstance(r, (tuple, list)) for r in m) else np.zeros(0)
    if a.ndim != 2 or a.shape[1] != 3 or a.shape[0] < 1:
        return [f"{name} must be one (P, B, S) triple of numbers >= 0 per tier; got {m!r}"]
    return []


#: The specialties of Sec. V-A: T1 "good for throughput and bandwidth", T2 "the secondary performance tier but
#: with larger capacity", T3 "the capacity tier", as (P, B, S) rows.
SPC_DEFAULT = ((1.0, 1.0, 0.0), (1.0, 1.0, 1.0), (0.0, 0.0, 1.0))


def _settings_problems(p) -> list[str]:
    """AutoTiering's checks across its own fields (Eq. 6 needs one (P, B, S) row of spc and wet per tier)."""
    problems = _triples("spc", p.spc) + _triples("wet", p.wet)
    if not problems and np.shape(p.spc) != np.shape(p.wet):
        problems.append("spc and wet must have one row per tier each")
    if not problems and np.any(np.asarray(p.wet, float).sum(axis=1) <= 0):
        problems.append("wet: every tier needs a positive weight sum (Eq. 6 divides by it)")
    if p.sla <= 0:
        problems.append(f"sla must be > 0 (Eq. 6 multiplies every score by it); got {p.sla!r}")
    if len(set(p.levels_s)) < 2:
        problems.append(f"levels_s must be >= 2 distinct injected latencies >= 0 s (Sec. IV-2: several "
                        f"latencies per session); got {p.levels_s!r}")
    return problems


@dataclass(frozen=True)
class TieringEpochs:
    """The monitor and migration epochs and Eq. 5's Gamma that AutoTiering, IDT and EDT all decide on (Sec. V-A
    compares them on the same testbed: one value for the three, declared here once). ``every``: monitor epochs
    per migration epoch."""

    monitor_epoch_s: float = param(300.0, "monitorEpoch (Alg. 1 line 3); no value printed: documented choice "
                                          "(notes 6.1)", bounds=(1.0, None), unit="s")
    migration_epoch_s: float = param(900.0, "migrationEpoch (Alg. 1 line 7, > monitorEpoch): 3 monitor epochs, so "
                                            "the first migration falls at epoch 3, the 'warm-up 0-3' of Sec. V-C",
                                     bounds=(1.0, None), unit="s")
    gamma: float = param(0.9, "Gamma_k of Eq. 5 for throughput and bandwidth ('preset percentage'; documented "
                              "choice)", bounds=(0.01, 1.0))
    gamma_s: float = param(0.9, "Gamma of Eq. 5 for storage (documented choice)", bounds=(0.01, 1.0))

    def __post_init__(self):
        cross_field(field_problems(self))
        cross_field(_epoch_problems(self))

    @property
    def every(self) -> int:
        """Monitor epochs per migration epoch."""
        return int(round(self.migration_epoch_s / self.monitor_epoch_s))


@dataclass(frozen=True)
class AutoTieringSettings:
    """AutoTiering's own knobs. The paper prints none of their values (Sec. V-A gives the specialties in
    words only); every default is a documented choice of the reading notes (Sec. 6.1-6.3), stated at its
    field. ``spc`` and ``wet`` hold one (P, B, S) row per tier; the tier latency ``L_t`` of A1.35 is the
    IO-weighted latency the tier's VMDKs measured ("measured") or the tier's unloaded 4 KiB datasheet
    latency ``qd / IOPS + 4 KiB / BW`` at the measured read mix ("datasheet", Table II's "original" latency read
    as the device's own; also the fallback of a tier that served no IO)."""

    spc: tuple[tuple[float, float, float], ...] = param(
        SPC_DEFAULT, "spc[t] (P, B, S) per tier, Eq. 6: Sec. V-A's words T1 (1,1,0), T2 (1,1,1), T3 (0,0,1)",
        bounds=(0.0, None))
    wet: tuple[tuple[float, float, float], ...] = param(
        ((1.0, 1.0, 1.0), (1.0, 1.0, 1.0), (1.0, 1.0, 1.0)), "wet[t] (P, B, S) resource weights of Eq. 6 "
        "(documented choice: 1)", bounds=(0.0, None))
    sla: float = param(1.0, "SLA weight of Eq. 6 (Eq. 1's w; documented choice: 1)", bounds=(0.0, None))
    aging_factor: float = param(0.5, "agingFactor of Eq. 7 (no value printed; documented choice)",
                                bounds=(0.0, 0.999))
    wet_mig: float = param(0.1, "wetMig of Eq. 7, per migration epoch of copy time (documented choice)",
                           bounds=(0.0, None))
    history: str = param("A", "Eq. 7's history: last epoch's score (A) or Alg. 2 line 14's aged capacity score (B)",
                         choices=("A", "B"))
    levels_s: tuple[float, ...] = param((0.0, 50 * US, 100 * US, 200 * US), "TSSCS injected latencies ('tiny', "
                                        "several per session, Sec. IV-2; documented choice 0/50/100/200 µs)",
                                        bounds=(0.0, 0.01), unit="s")
    n_samples: int = param(5, "TSSCS samples per injected latency ('multi-samples', Sec. IV-2)", bounds=(2, 1000))
    probe_window_s: float = param(1.0, "IO Filter window of one TSSCS sample (documented choice)",
                                  bounds=(0.001, None), unit="s")
    mig_speed_floor: float = param(1 * MB, "migration speed floor of A2.17 on a saturated tier (a large, finite "
                                           "cost; documented choice)", bounds=(1.0, None), unit="bytes/s")
    tier_latency: str = param("measured", "L_t of A1.35: the latency the tier's VMDKs measured (notes 6.2 item 8) "
                                          "or the tier's unloaded datasheet latency", choices=("measured", "datasheet"))
    fallback_qd: int = param(32, "queue depth of the datasheet latency qd / IOPS + 4 KiB / BW (documented choice)",
                             bounds=(1, None))
    lat_floor: str = param("unloaded", "a predicted latency (A1.35) below the tier's unloaded datasheet latency at the "
                                       "VMDK's IO size and read mix is raised to it ('unloaded': an extrapolated line "
                                       "cannot make a tier faster than its device; documented choice), or A1.26-29 "
                                       "as printed ('zero': Lat <= 0 gives 0 IOPS)", choices=("unloaded", "zero"))
    max_mix: str = param("read", "maxP and maxB of A2.4 and Eq. 5: read-direction datasheet caps ('read', notes 6.2 "
                                 "item 9) or the harmonic read/write mix at each VMDK's measured read fraction "
                                 "('mixed')", choices=("read", "mixed"))

    def __post_init__(self):
        cross_field(field_problems(self))
        cross_field(_settings_problems(self))


@dataclass(frozen=True)
class AutoTieringParams(AutoTieringSettings, TieringEpochs):
    """AutoTiering: the epochs and Gamma it shares with IDT and EDT (:class:`TieringEpochs`) and its own
    settings (:class:`AutoTieringSettings`)."""

    def __post_init__(self):
        cross_field(field_problems(self))
        cross_field(_epoch_problems(self) + _settings_problems(self))


@dataclass(frozen=True)
class GreedySettings:
    """IDT's and EDT's own knobs (Sec. V-A), per VMDK. The paper gives only one sentence each; the readings are
    the reading notes' Sec. 3 (documented choices, at each field). The names fix what makes them IDT or EDT:
    "IDT" ranks by ``iops`` without the IOPS budget, "EDT" has the budget (registry ``fixed``)."""

    rank: str = param("density", "EDT: measured IOPS per byte of VMDK, descending ('capacity and IOPS'); IDT: "
                                 "measured IOPS ('greedy IOPS-only'); 'iops' is also EDT's ranking reading",
                      choices=("iops", "density"))
    iops_budget: bool = param(True, "EDT: the mixed read/write IOPS budget sum_u IOPS_R,u / maxP_R[t] + "
                                    "IOPS_W,u / maxP_W[t] <= 1 besides the storage cap; IDT: storage cap only")
    cadence: str = param("migration", "decide every migration epoch, as AutoTiering (the fair default), or every "
                                      "monitor epoch (EDT 'updates VM-tier assignment for every epoch')",
                         choices=("migration", "monitor"))

    def __post_init__(self):
        cross_field(field_problems(self))


@dataclass(frozen=True)
class GreedyTieringParams(GreedySettings, TieringEpochs):
    """IDT and EDT: the epochs and Gamma they share with AutoTiering (:class:`TieringEpochs`) and their own
    settings (:class:`GreedySettings`)."""

    def __post_init__(self):
        cross_field(field_problems(self))
        cross_field(_epoch_problems(self))

    @property
    def every(self) -> int:
        """Monitor epochs per decision: 1 at the monitor cadence, else per migration epoch."""
        return 1 if self.cadence == "monitor" else super().every


# ============================================================================ what a controller sees


# ============================================================================ AutoTiering scoring


class AtScores(NamedTuple):
    """Alg. 1-2 matrices for one monitor epoch, laid out ``[t][v]`` like the paper's."""

    lat: jax.Array        #: (T, V) estimateAvgLat, s
    cap: jax.Array        #: (T, V, 3) VMCapMat [P IO/s, B bytes/s, S bytes]
    ratio: jax.Array      #: (T, V, 3) VMCapRatMat
    eligible: jax.Array   #: (T, V) bool: no resource over its cap (A2.4)
    omega: jax.Array      #: (T, V) currCapScore, Eq. 6
    mig_cost: jax.Array   #: (T, V) migCost in migration epochs
    score: jax.Array      #: (T, V) tierVMPerfScore, -1 where not eligible
    hist: jax.Array       #: (T, V) history carried to the next epoch
    lat_raw: jax.Array    #: (T, V) the line's value before the floor (A1.35 as printed), s
    cap_max: jax.Array    #: (T, V, 3) the caps maxP, maxB, maxS each entry was held against (A2.4, Eq. 5)


def autotiering_scores(m, b, conf, tier_lat, cal_tier, cur_tier, io_bytes, size, read_bps, used_bps, hist, *,
                       caps: af.Caps, spc, wet, sla, aging_factor, wet_mig, mig_speed_floor, migration_epoch_s,
                       history="A", lat_floor=None, cap_max=None) -> AtScores:
    """Alg. 1 lines 22-35 and Alg. 2 lines 1-18 over all tiers x VMDKs at once.

    ``m, b, conf`` (V,): the TSSCS line and confidence; ``tier_lat`` (T,): ``L_t``; ``cal_tier`` (V,):
    the tier the calibration ran on (``VM[v].tier`` of A1.35); ``cur_tier`` (V,): the VMDK's tier now
    (source of a migration, A2.17); ``io_bytes`` (V,) ``avgIOSize``; ``size`` (V,) bytes; ``read_bps``
    (V,) ``currReadThrpt`` bytes/s; ``used_bps`` (T, 2) measured read/write bytes/s of each tier;
    ``hist`` (T, V) the history term. ``spc``, ``wet`` (T, 3). ``history``: "A" (Eq. 7) or "B"
    (A2.14's aged capacity score), or a traced bool (True = "B").
    ``lat_floor`` (T, V) seconds or None: a predicted latency below it is raised to it (the tier's unloaded
    latency, :func:`latency_floor`); None: A1.26-29 as printed (``Lat <= 0`` gives 0 IOPS).
    ``cap_max`` (T, V, 3) or None: the caps each (tier, VMDK) entry is held against (:func:`vmdk_caps`);
    None: ``maxP, maxB, maxS`` of ``caps`` for every VMDK.
    """
    hb = (history == "B") if isinstance(history, str) else history
    n_t, n_v = jnp.shape(tier_lat)[0], jnp.shape(m)[0]
    floor = jnp.zeros((n_t, n_v)) if lat_floor is None else jnp.asarray(lat_floor, jnp.float64)
    if cap_max is None:
        cap_max = jnp.broadcast_to(jnp.stack([caps.P, caps.B, caps.S], axis=-1)[:, None, :], (n_t, n_v, 3))
    return _scores(m, b, conf, tier_lat, cal_tier, cur_tier, io_bytes, size, read_bps, used_bps, hist, caps,
                   jnp.asarray(spc, jnp.float64), jnp.asarray(wet, jnp.float64), sla, aging_factor, wet_mig,
                   mig_speed_floor, migration_epoch_s, jnp.asarray(hb), floor, jnp.asarray(cap_max, jnp.float64))


@jax.jit
def _scores(m, b, conf, tier_lat, cal_tier, cur_tier, io_bytes, size, read_bps, used_bps, hist, caps, spc, wet, sla,
            aging_factor, wet_mig, mig_speed_floor, migration_epoch_s, history_b, floor, maxes) -> AtScores:
    n_t = tier_lat.shape[0]
    t_idx = jnp.arange(n_t)[:, None]
    # A1.34-35 estimateAvgLat(v, t) = m_v (L_t - L_{VM[v].tier}) + b_v; [R] at least the tier's floor
    lat_raw = m[None, :] * (tier_lat[:, None] - tier_lat[cal_tier][None, :]) + b[None, :]
    lat = jnp.maximum(lat_raw, floor)
    # A1.26-32
    p = jnp.where(lat > 0, 1.0 / jnp.where(lat > 0, lat, 1.0), 0.0)
    cap = jnp.stack([p, p * io_bytes[None, :], jnp.broadcast_to(size[None, :], p.shape)], axis=-1)
    # A2.4-13 (maxes: (T, V, 3))
    eligible = jnp.all(cap <= maxes, axis=-1)
    ratio = jnp.where(eligible[..., None], cap / maxes, 0.0)
    # Eq. 6 orthogonal match
    omega = jnp.einsum("tk,tvk->tv", spc * wet, ratio) * sla * conf[None, :] / jnp.sum(wet, axis=1)[:, None]
    # A2.16-18 migCost, in migration epochs; 0 on the own tier
    rem = caps.B_rw - used_bps                                              # (T, 2) remaining bytes/s
    spd = jnp.minimum(rem[cur_tier, 0][None, :] + read_bps[None, :], rem[:, 1][:, None])
    spd = jnp.maximum(spd, mig_speed_floor)
    mig_cost = jnp.where(t_idx == cur_tier[None, :], 0.0, size[None, :] / spd / migration_epoch_s)
    # Eq. 7 (reading A) / A2.14 (reading B)
    s_a = perf_score(hist, omega, aging_factor, wet_mig, mig_cost)
    h_b = aging_factor * hist + jnp.where(eligible, omega, 0.0)
    s_b = perf_score(h_b, 0.0, 1.0, wet_mig, mig_cost)
    score = jnp.where(eligible, jnp.where(history_b, s_b, s_a), -1.0)
    hist_next = jnp.where(history_b, h_b, jnp.where(eligible, s_a, 0.0))
    return AtScores(lat, cap, ratio, eligible, omega, mig_cost, score, hist_next, lat_raw, maxes)


# ============================================================================ matching


@jax.jit
def tier_major_greedy(score, eligible, usage, caps, pinned=None):
    """``triggerMigration`` (Alg. 2 lines 19-25): for each tier ``t`` in priority order, the VMDKs in
    descending ``score[t]`` (ties to the lower index) are assigned to ``t`` when not yet assigned,
    ``eligible[t, v]`` and ``tierHasCapacityForVM(t, v)``: every resource ``k`` of the tier's load plus
    ``usage[t, v, k]`` within ``caps[t, k]`` (Eq. 5), loads counted from zero each round.

    ``score``, ``eligible`` (T, V); ``usage`` (T, V, K); ``caps`` (T, K); ``pinned`` (V,) int: a tier
    the VMDK is fixed to beforehand (its usage counted there first), -1 for free VMDKs.
    Returns ``(dest (V,) int, -1 for VMDKs no tier accepted; load (T, K))``. One ``lax.scan`` over the
    VMDKs per tier, with the tier's K loads as the carry.
    """
    score = jnp.asarray(score, jnp.float64)
    usage = jnp.asarray(usage, jnp.float64)
    caps = jnp.asarray(caps, jnp.float64)
    n_t, n_v = score.shape
    pin = jnp.full((n_v,), -1) if pinned is None else jnp.asarray(pinned)
    assigned = pin >= 0
    dest = pin
    pin_oh = (pin[:, None] == jnp.arange(n_t)[None, :]).astype(jnp.float64)   # (V, T)
    load = jnp.einsum("vt,tvk->tk", pin_oh, usage)
    for t in range(n_t):  # the few tiers, in priority order (static)
        order = jnp.argsort(-score[t], stable=True)
        free = (~assigned) & eligible[t]
        u_t, cap_t = usage[t], caps[t]

        def step(ld, v, free=free, u_t=u_t, cap_t=cap_t):
            new = ld + u_t[v]
            ok = free[v] & jnp.all(new <= cap_t)
            return jnp.where(ok, new, ld), ok

        ld, ok_sorted = jax.lax.scan(step, load[t], order)
        ok = jnp.zeros(n_v, bool).at[order].set(ok_sorted)
        dest = jnp.where(ok, t, dest)
        assigned = assigned | ok
        load = load.at[t].set(ld)
    return dest, load


@jax.jit
def place_leftovers(dest, current, size, cap_s):
    """VMDKs the greedy left unassigned (``dest == -1``) are placed by storage alone, in index order: the
    current tier if its storage cap allows, else the first tier in priority order with room, else the
    current tier ([R]: the paper keeps them where they are). Returns the final tier of every VMDK."""
    left = dest < 0
    oh = (dest[:, None] == jnp.arange(cap_s.shape[0])[None, :]).astype(jnp.float64)
    load0 = oh.T @ size
    tier, _, _ = af.first_fit(current, jnp.where(left, size, 0.0), cap_s, load0)
    return jnp.where(left, tier, dest)


@jax.jit
def admit_copies(want, dst, place, reserved_dst, size, raw_bytes):
    """The copies that may start (same for every policy, [R]): a VMDK occupies its source until its copy ends and its
    destination from the start, so a tier physically holds the VMDKs it serves plus the copies into it in flight
    (``reserved_dst`` (V,), -1 for none). The wanted copies (``want`` (V,) bool into ``dst``) start in index order
    while the destination's raw capacity ``raw_bytes`` (T,) holds them; the others wait for a later decision.
    Returns (V,) bool. A ``lax.scan`` over the VMDKs with the T occupancies as its carry."""
    n_t = raw_bytes.shape[0]
    tiers_ = jnp.arange(n_t)[None, :]
    occ = (((place[:, None] == tiers_) | (reserved_dst[:, None] == tiers_)) * size[:, None]).sum(0)

    def step(o, v):
        ok = want[v] & (o[dst[v]] + size[v] <= raw_bytes[dst[v]])
        return o.at[dst[v]].add(jnp.where(ok, size[v], 0.0)), ok

    _, ok = jax.lax.scan(step, occ, jnp.arange(size.shape[0]))
    return ok


# ============================================================================ policy steps


def at_calibrate(levels, samples):
    """A1.9-21 for every VMDK: ``(m, b, conf, r2)``; ``r2`` is the coefficient of determination of the
    line over the level means (C18, a diagnostic, not used by the policy)."""
    m, b, conf, _ = calibrate(levels, samples)
    y = jnp.mean(samples, axis=-1)
    fit = m[:, None] * levels[None, :] + b[:, None]
    ss_res = jnp.sum((y - fit) ** 2, axis=-1)
    ss_tot = jnp.sum((y - jnp.mean(y, axis=-1, keepdims=True)) ** 2, axis=-1)
    r2 = jnp.where(ss_tot > 0, 1.0 - ss_res / jnp.where(ss_tot > 0, ss_tot, 1.0), 1.0)
    return m, b, conf, r2


def autotiering_monitor(num, tiers, caps, meas: af.Measured, samples, hist, cur_tier):
    """One AutoTiering monitor step (A1.3-6): calibration, capacity matrices, scores. Sees only ``meas``
    and the probe ``samples`` (V, L, S). Returns ``(AtScores, (m, b, conf, r2))``."""
    m, b, conf, r2 = at_calibrate(num["levels"], samples)
    lt = af.tier_latency(meas, tiers, num["fallback_qd"], num["tier_latency_datasheet"])
    x = jnp.sum(meas.iops_rw, axis=1)
    bts = jnp.sum(meas.bytes_rw, axis=1)
    io = jnp.where(x > 0, bts / jnp.where(x > 0, x, 1.0), 4.0 * KiB)      # avgIOSize, measured
    f = jnp.where(x > 0, meas.iops_rw[:, 0] / jnp.where(x > 0, x, 1.0), 0.5)   # read fraction, measured
    n_t = tiers.n_disks.shape[0]
    oh = (meas.tier[:, None] == jnp.arange(n_t)[None, :]).astype(jnp.float64)
    used = oh.T @ meas.bytes_rw                                             # (T, 2)
    floor = jnp.where(num["lat_floor_zero"], 0.0, latency_floor(tiers, io, f, num["fallback_qd"]))
    cmax = vmdk_caps(caps, f, num["maxp_mixed"])
    sc = autotiering_scores(m, b, conf, lt, meas.tier, cur_tier, io, meas.size, meas.bytes_rw[:, 0], used, hist,
                            caps=caps, spc=num["spc"], wet=num["wet"], sla=num["sla"],
                            aging_factor=num["aging_factor"], wet_mig=num["wet_mig"],
                            mig_speed_floor=num["mig_speed_floor"], migration_epoch_s=num["migration_epoch_s"],
                            history=num["history_b"], lat_floor=floor, cap_max=cmax)
    return sc, (m, b, conf, r2)


def latency_floor(tiers: af.TierArrays, io_bytes, read_frac, qd):
    """The tier's floor for a predicted latency, (T, V) seconds: its unloaded datasheet latency
    ``qd / IOPS + s / BW`` for the VMDK's IO size ``s`` at its read fraction (:func:`~tieringlab.models.allflash.
    unloaded_latency`), the fastest the tier answers an IO. A1.35 extrapolates the TSSCS line to faster tiers;
    a value below this (A1.26's ``Lat <= 0`` included) is a failure of the extrapolation, not a faster tier."""
    l0 = af.unloaded_latency(tiers, io_bytes, qd)                           # (T, 2, V)
    f = jnp.asarray(read_frac, jnp.float64)[None, :]
    return f * l0[:, 0, :] + (1.0 - f) * l0[:, 1, :]


def vmdk_caps(caps: af.Caps, read_frac, mixed):
    """The caps each (tier, VMDK) entry is held against, (T, V, 3) ``[maxP, maxB, maxS]``: the read-direction
    ``caps.P``, ``caps.B`` (notes 6.2 item 9), or with ``mixed`` (may be traced) the harmonic mix of the read and
    write caps at the VMDK's read fraction ``f``, ``1 / (f / max_R + (1 - f) / max_W)`` (what the tier serves of
    a stream with that mix)."""
    f = jnp.asarray(read_frac, jnp.float64)[None, :]
    mix = lambda rw: 1.0 / (f / rw[:, 0:1] + (1.0 - f) / rw[:, 1:2])      # noqa: E731
    p = jnp.where(mixed, mix(caps.P_rw), caps.P[:, None] + 0.0 * f)
    b = jnp.where(mixed, mix(caps.B_rw), caps.B[:, None] + 0.0 * f)
    return jnp.stack([p, b, jnp.broadcast_to(caps.S[:, None], p.shape)], axis=-1)


@jax.jit
def greedy_baseline_decide(rank_density, iops_budget, caps: af.Caps, iops_rw, size):
    """IDT / EDT placement inputs from the measured mean IOPS ``iops_rw`` (V, 2) of the decision window,
    for :func:`tier_major_greedy`: ``(score (T, V), eligible (T, V), usage (T, V, 2), caps (T, 2))``.

    The ranking key is the total IOPS (IDT; ``rank_density`` false) or IOPS per byte (EDT); the usage
    is ``[mixed IOPS utilisation IOPS_R / maxP_R[t] + IOPS_W / maxP_W[t], size]`` against the caps
    ``[1, maxS[t]]``; without ``iops_budget`` (IDT) the IOPS cap is infinite. Both flags may be traced."""
    n_t = caps.S.shape[0]
    tot = jnp.sum(iops_rw, axis=1)
    key = jnp.where(rank_density, tot / size, tot)
    score = jnp.broadcast_to(key[None, :], (n_t, key.shape[0]))
    mixed = iops_rw[None, :, 0] / caps.P_rw[:, 0][:, None] + iops_rw[None, :, 1] / caps.P_rw[:, 1][:, None]
    usage = jnp.stack([mixed, jnp.broadcast_to(size[None, :], mixed.shape)], axis=-1)
    cap = jnp.stack([jnp.where(iops_budget, 1.0, jnp.inf) * jnp.ones(n_t), caps.S], axis=-1)
    return score, jnp.ones(score.shape, bool), usage, cap


# ============================================================================ the closed loop


class Env(NamedTuple):
    """The environment of one run (one seed): VMDKs and their offered demand per epoch."""

    size: jax.Array        #: (V,) bytes
    io_bytes: jax.Array    #: (V,) bytes per IO
    window: jax.Array      #: (V,) outstanding IOs
    lam: jax.Array         #: (E, V) offered IO/s
    read: jax.Array        #: (E, V) read fraction
    place0: jax.Array      #: (V,) initial tier


def _numeric(kind: str, p):
    """All numbers of a run as traced arrays (one compiled program serves AutoTiering, IDT and EDT and
    their variants): the policy's own values, the other kind's defaults for the rest."""
    f = lambda v: jnp.asarray(v, jnp.float64)  # noqa: E731
    a = p if kind == "AutoTiering" else AutoTieringParams()
    g = p if kind != "AutoTiering" else GreedyTieringParams()
    return {"is_at": jnp.asarray(kind == "AutoTiering"), "every": jnp.asarray(p.every, jnp.int64),
            "gamma": f(p.gamma), "gamma_s": f(p.gamma_s),
            "spc": f(a.spc), "wet": f(a.wet), "sla": f(a.sla), "aging_factor": f(a.aging_factor),
            "wet_mig": f(a.wet_mig), "levels": f(a.levels_s), "probe_window_s": f(a.probe_window_s),
            "mig_speed_floor": f(a.mig_speed_floor), "migration_epoch_s": f(a.migration_epoch_s),
            "fallback_qd": f(a.fallback_qd), "history_b": jnp.asarray(a.history == "B"),
            "tier_latency_datasheet": jnp.asarray(a.tier_latency == "datasheet"),
            "lat_floor_zero": jnp.asarray(a.lat_floor == "zero"), "maxp_mixed": jnp.asarray(a.max_mix == "mixed"),
            "rank_density": jnp.asarray(g.rank == "density"), "iops_budget": jnp.asarray(bool(g.iops_budget))}


@partial(jax.jit, static_argnames=("n_samples", "sim"))
def _simulate_one(n_samples, sim, epoch_s, num, tiers, env: Env, key):
    """The closed loop of one run (see the module docstring): a ``lax.scan`` over monitor epochs. The
    policy is chosen by ``num["is_at"]`` (a ``lax.cond``: only the chosen branch runs); the epoch length and the
    model's source and copy-share readings (``num["open_source"]``, ``num["mig_fair"]``) are traced, so their
    readings share one compiled program."""
    op, fair = num["open_source"], num["mig_fair"]
    n_t = tiers.n_disks.shape[0]
    n_v = env.size.shape[0]
    n_e = env.lam.shape[0]
    caps = af.capacity_caps(tiers, num["gamma"], num["gamma_s"])
    ones3 = jnp.ones((n_t, 3))
    zeros_tv = jnp.zeros((n_t, n_v))

    carry0 = dict(place=env.place0.astype(jnp.int64), rem=jnp.zeros(n_v), dst=env.place0.astype(jnp.int64),
                  hist=zeros_tv, acc=jnp.zeros((n_v, 2)), n_acc=jnp.float64(0.0))

    def step(c, xs):
        e, lam_e, read_e = xs
        # 1. in-flight copies (served from their source during the whole epoch) take the device time the
        #    VMDKs' own IO leaves, at least mig_min_share of a tier
        r0 = af.serve(tiers, sim, c["place"], lam_e, read_e, env.io_bytes, env.window, jnp.zeros(n_t),
                      open_source=op)
        moved, mig_util, done = af.migration_step(tiers, sim, c["rem"], c["place"], c["dst"], r0.rho, epoch_s,
                                                  r0.work, fair=fair)
        # 2. contention fixed point with the copies
        r = af.serve(tiers, sim, c["place"], lam_e, read_e, env.io_bytes, env.window, mig_util, open_source=op)
        # 3. the IO Filter's view
        meas = af.Measured(tier=c["place"], iops_rw=r.x_rw, bytes_rw=r.x_rw * env.io_bytes[:, None], lat=r.lat,
                        size=env.size)
        # copies that finished switch tier at the end of the epoch
        place = jnp.where(done, c["dst"], c["place"])
        rem = jnp.where(done, 0.0, c["rem"] - moved)
        in_flight = rem > 0
        pinned = jnp.where(in_flight, c["dst"], -1)
        decide = ((e + 1) % num["every"]) == 0

        # 4. the policy: sees meas (and AutoTiering its probe samples) only
        def autotiering(_):
            samples, _n = af.probe_samples(jax.random.fold_in(key, e), tiers, sim, c["place"], lam_e, read_e,
                                           env.io_bytes, env.window, mig_util, num["levels"], n_samples,
                                           num["probe_window_s"], open_source=op)
            sc, (m, b, conf, r2) = autotiering_monitor(num, tiers, caps, meas, samples, c["hist"], place)
            dest, _ = tier_major_greedy(sc.score, sc.eligible, sc.cap / sc.cap_max, ones3, pinned)
            diag = dict(pred_lat=sc.lat, pred_raw=sc.lat_raw, score=sc.score, slope=m, intercept=b, conf=conf,
                        r2=r2, samples=samples)
            return dest, sc.hist, c["acc"], c["n_acc"], diag

        def greedy(_):
            acc = c["acc"] + r.x_rw
            n_acc = c["n_acc"] + 1.0
            score, elig, usage, cap = greedy_baseline_decide(num["rank_density"], num["iops_budget"], caps,
                                                             acc / n_acc, env.size)
            usage3 = jnp.concatenate([usage, jnp.zeros(usage.shape[:2] + (1,))], axis=-1)
            cap_ = jnp.concatenate([cap, jnp.full((n_t, 1), jnp.inf)], axis=-1)
            dest, _ = tier_major_greedy(score, elig, usage3, cap_, pinned)
            diag = dict(pred_lat=zeros_tv, pred_raw=zeros_tv, score=score, slope=jnp.zeros(n_v),
                        intercept=jnp.zeros(n_v), conf=jnp.zeros(n_v), r2=jnp.zeros(n_v),
                        samples=jnp.zeros((n_v, num["levels"].shape[0], n_samples)))
            return dest, c["hist"], jnp.where(decide, 0.0, acc), jnp.where(decide, 0.0, n_acc), diag

        dest, hist, acc, n_acc, diag = jax.lax.cond(num["is_at"], autotiering, greedy, None)
        final = place_leftovers(dest, place, env.size, caps.S)
        want = decide & (~in_flight) & (final != place)
        start = admit_copies(want, final, place, jnp.where(in_flight, c["dst"], -1), env.size,
                             tiers.n_disks * tiers.disk_bytes)
        dst = jnp.where(in_flight, c["dst"], jnp.where(start, final, place))
        rem = jnp.where(start, env.size, rem)
        oh = (c["place"][:, None] == jnp.arange(n_t)[None, :]).astype(jnp.float64)
        iops_t = oh.T @ r.x_rw                                            # (T, 2)
        bytes_t = oh.T @ (r.x_rw * env.io_bytes[:, None])
        latw_t = oh.T @ (r.x_rw * r.lat_rw)
        lat_t = jnp.where(iops_t > 0, latw_t / jnp.where(iops_t > 0, iops_t, 1.0), jnp.nan)
        out = dict(diag, iops=iops_t, bytes_per_s=bytes_t, latency_s=lat_t, tier_of=c["place"], moved_bytes=moved,
                   started=start, dst=dst, vmdk_iops=r.x_rw, vmdk_latency_s=r.lat, rho=r.rho, mig_util=mig_util,
                   decided=decide)
        new = dict(place=place, rem=rem, dst=dst, hist=hist, acc=acc, n_acc=n_acc)
        return new, out

    _, outs = jax.lax.scan(step, carry0, (jnp.arange(n_e), env.lam, env.read))
    return outs


def _env_from(obs: xr.Dataset):
    """Env arrays (seed axis first when present), TierArrays and epoch length of a scenario Dataset."""
    from tieringlab.models.workloads.autotiering import tiers_from_scenario  # noqa: PLC0415

    tiers = tiers_from_scenario(obs)
    has_seed = "seed" in obs.dims
    lead = ("seed",) if has_seed else ()

    def g(name, dims):
        da = obs[name]
        if has_seed and "seed" not in da.dims:
            da = da.expand_dims(seed=obs["seed"].values)
        return jnp.asarray(da.transpose(*(lead + dims)).values)

    env = Env(size=g("size_bytes", ("vmdk",)), io_bytes=g("io_bytes", ("vmdk",)), window=g("window", ("vmdk",)),
              lam=g("offered_iops", ("epoch", "vmdk")), read=g("read_fraction", ("epoch", "vmdk")),
              place0=g("initial_tier", ("vmdk",)))
    return tiers, env, has_seed, float(obs.attrs["epoch_s"])


def simulate(kind: str, params, observations: xr.Dataset, key=None, sim: af.DatacenterParams | None = None,
             *, policy: str | None = None) -> xr.Dataset:
    """Run one controller (``kind`` "AutoTiering" or "greedy" for IDT/EDT) over a scenario, optionally
    with a ``seed`` dimension (one run per seed, ``vmap``-ed, each with its own key from ``key``), and
    label the result: dims ``[seed,] epoch, tier, direction, vmdk``.

    ``sim`` is the datacenter model (:class:`~tieringlab.models.allflash.DatacenterParams`); its disks per
    tier are taken from the scenario's tier table."""
    sim = af.DatacenterParams() if sim is None else sim
    tiers, env, has_seed, epoch_s = _env_from(observations)
    nd = tuple(int(x) for x in np.asarray(tiers.n_disks))
    if tuple(sim.n_disks) != nd:
        sim = dataclasses.replace(sim, n_disks=nd)
    who = policy or kind
    if abs(params.monitor_epoch_s - epoch_s) > 1e-9:
        raise ValueError(f"{who}: monitor_epoch_s = {params.monitor_epoch_s} s must equal the scenario's "
                         f"epoch_s = {epoch_s} s (the simulator steps one monitor epoch at a time)")
    if kind == "AutoTiering":
        if len(params.spc) != len(nd):
            raise ValueError(f"{who}: spc and wet have {len(params.spc)} rows; the tier table has {len(nd)} tiers")
        if key is None:
            raise ValueError(f"{who} is randomised (TSSCS sampling noise): pass key=jax.random.key(...)")
        n_samples = int(params.n_samples)
    else:
        n_samples = AutoTieringParams().n_samples
        key = jax.random.key(0) if key is None else key
    num = _numeric(kind, params)
    num.update(open_source=jnp.asarray(sim.source == "open"), mig_fair=jnp.asarray(sim.mig_share == "fair"),
               epoch_s=jnp.asarray(epoch_s, jnp.float64))
    # the readings that are traced flags share the compiled program of the default model
    run = partial(_simulate_one, n_samples, dataclasses.replace(sim, source="open", mig_share="fair"),
                  num["epoch_s"], num, tiers)
    if has_seed:
        outs = jax.vmap(run)(env, jax.random.split(key, env.size.shape[0]))
    else:
        outs = run(env, key)
    return _label(outs, observations, has_seed, who, kind, np.asarray(num["levels"]))


def _label(outs, obs, has_seed, policy, kind, levels_s):
    lead = ("seed",) if has_seed else ()
    e, t, d, v = "epoch", "tier", "direction", "vmdk"
    dims = {"iops": (e, t, d), "bytes_per_s": (e, t, d), "latency_s": (e, t, d), "tier_of": (e, v),
            "moved_bytes": (e, v), "started": (e, v), "dst": (e, v), "vmdk_iops": (e, v, d),
            "vmdk_latency_s": (e, v), "rho": (e, t), "mig_util": (e, t), "decided": (e,),
            "pred_lat": (e, t, v), "pred_raw": (e, t, v), "score": (e, t, v), "slope": (e, v), "intercept": (e, v),
            "conf": (e, v), "r2": (e, v), "samples": (e, v, "level", "sample")}
    data = {k: (lead + dims[k], np.asarray(val)) for k, val in outs.items()}
    coords = {"epoch": obs["epoch"].values, "tier": obs["tier"].values, "direction": list(_DIRECTIONS),
              "vmdk": obs["vmdk"].values, "level": levels_s}
    if has_seed:
        coords["seed"] = obs["seed"].values
    ds = xr.Dataset(data, coords=coords)
    for c in ("vm", "workload", "is_data", "label"):
        if c in obs.coords or c in obs:
            da = obs[c] if obs[c].dims == ("vmdk",) else obs[c].isel(seed=0)
            ds = ds.assign_coords({c: ("vmdk", da.values)})
    units = {"iops": "IO/s", "bytes_per_s": "bytes/s", "latency_s": "s", "moved_bytes": "bytes", "vmdk_iops": "IO/s",
             "vmdk_latency_s": "s", "pred_lat": "s", "pred_raw": "s", "intercept": "s", "rho": "1", "mig_util": "1",
             "samples": "s", "level": "s"}
    for k, u in units.items():
        if k in ds:
            ds[k].attrs["units"] = u
    ds.attrs.update(policy=policy, source=SOURCE if kind == "AutoTiering" else SOURCE_BASELINES,
                    epoch_s=float(obs.attrs["epoch_s"]), simulated="yes (declared device model, not the testbed)")
    return ds


def run_autotiering(params: AutoTieringParams, observations: xr.Dataset, key, sim: af.DatacenterParams | None = None):
    """Registered as "AutoTiering" (controller kind): Alg. 1-2 in the closed loop."""
    return simulate("AutoTiering", params, observations, key, sim, policy="AutoTiering")


def run_idt(params: GreedyTieringParams, observations: xr.Dataset, sim: af.DatacenterParams | None = None):
    """Registered as "IDT" (controller kind): greedy by measured IOPS, storage cap only."""
    return simulate("greedy", params, observations, None, sim, policy="IDT")


def run_edt(params: GreedyTieringParams, observations: xr.Dataset, sim: af.DatacenterParams | None = None):
    """Registered as "EDT" (controller kind): greedy by IOPS density, IOPS budget and storage cap."""
    return simulate("greedy", params, observations, None, sim, policy="EDT")


def _example():
    """A small valid call (the contract test's): one seed of a 3-epoch scenario of the Table IV tiers."""
    from tieringlab.models.devices import autotiering_tier_table  # noqa: PLC0415
    from tieringlab.models.workloads.autotiering import scenario  # noqa: PLC0415

    return (scenario(jax.random.key(0), tier_table=autotiering_tier_table(), n_disks=(2, 2, 2), n_epochs=3),), {}


register(PolicySpec(name="AutoTiering", kind="controller", fn=run_autotiering, params_type=AutoTieringParams,
                    source=SOURCE, random=True, aliases=("AT",), example=_example,
                    description="TSSCS regression, Eq. 6-7 scores, tier-major greedy migration (per VMDK)"))
register(PolicySpec(name="IDT", kind="controller", fn=run_idt, params_type=GreedyTieringParams,
                    source=SOURCE_BASELINES, fixed={"rank": "iops", "iops_budget": False}, example=_example,
                    description="IOPS Dynamic Tiering: greedy by measured IOPS, storage cap only"))
register(PolicySpec(name="EDT", kind="controller", fn=run_edt, params_type=GreedyTieringParams,
                    source=SOURCE_BASELINES, fixed={"iops_budget": True}, example=_example,
                    description="Extent-based Dynamic Tiering: greedy by IOPS density, IOPS budget and storage cap"))
