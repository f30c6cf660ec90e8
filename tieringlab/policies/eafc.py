"""EAFC: the Error-Aware Feedback Controller that sizes a workload's SSD partition to its latency SLO
(EAFC paper Sec. IV, Fig. 2, Fig. 3), its "vanilla" baseline, and the master controller the paper
left unbuilt (Sec. III), all of the **controller** kind::

    fn(params, observations, key) -> xarray.Dataset over dim "epoch"

``observations`` come from :func:`tieringlab.models.hybridstore.observations`: the hybrid store (the
"plant" of Fig. 2) and its workload. The run is closed loop: one :func:`jax.lax.scan` over controller
windows (cwnd); inside a window a scan over the monitoring daemon's 5 s samples
(:func:`~tieringlab.models.hybridstore.plant_sample`); at the window's end the controller reads the
window's samples and sets the partition for the next one. Gains, targets and seeds can be
:func:`jax.vmap`-ed (:func:`simulate` takes arrays).

Fig. 3, with the paper's symbols (the multiplication signs the text copy lost put back, notes G1):

- ``latency_obs``: the ``percentile``-th (75th) percentile of the cwnd's 5 s latency samples (notes U3);
  ``ssd_util_avg``: the mean of the cwnd's "SSD used" samples; ``cache_sz_prev``: the partition in force;
- ``latency_min = lat_min_frac * latency_max`` (0.5, Sec. IV.A: "min latency was set to half the
  target latency");
- **Case 1** ``latency_max >= latency_obs >= latency_min``: no change;
- **Case 2** ``latency_obs > latency_max``: if ``ssd_util_avg / cache_sz_prev >= T_util``:
  ``ratio_inc = min(error * Kp_inc, T_inc)`` with ``error = latency_obs - latency_max`` and
  ``cache_sz_cur = cache_sz_prev * (1 + ratio_inc)``; else no change (the workload has not used the
  SSD it has; ``gated`` in the output);
- **Case 3** ``latency_obs < latency_min``: ``ratio_dec = min((latency_min - latency_obs) * Kp_dec,
  T_dec)``, ``cache_sz_cur = cache_sz_prev * (1 - ratio_dec)``.

The paper gives no values for ``Kp_inc, Kp_dec, T_inc, T_dec, T_util`` (notes U1): the defaults below
are documented choices (notes §2.4), swept in notebook 07. ``Kp`` multiplies an error in **seconds**
here (the library's unit): ``kp_inc = 20 /s`` is the notes' 0.02 per ms. The partition is kept in
``[p_floor, p_ceiling]`` (notes U6); the first window runs at ``p_init`` (10 GB, Sec. V.B; reused
for FileBench, notes U7).

Vanilla (Sec. V.A, the abstract's "naive algorithm"): no controller; the workload has the whole SSD
(one LRU of 160 GB, never full here) and caches its whole working set.

Master controller (beyond the paper; Sec. III describes it in words only: "solves a variation of
knapsack problem such that most of the high priority workloads meet their SLOs at the cost of
violating SLOs of few low priority ones"): every window each workload's EAFC proposes a size; if the
proposals fit the SSD they are granted; otherwise, from each workload's **latency-vs-size curve** of
the last window (its stack-distance hit curve through the queueing model, no re-simulation), the
smallest size ``M_i`` predicted to meet its SLO at the controller's percentile; a 0/1 knapsack picks
the set of workloads to satisfy, maximising the sum of their priorities within the SSD (victims keep
``p_floor``; ties: least SSD), solved exactly by enumerating all subsets (a handful of workloads); the
SSD left over is shared in proportion to the unmet proposals. The ``"proportional"`` arbitration
(every proposal scaled down by the same factor) is the no-priority baseline.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import xarray as xr

from tieringlab.models import hybridstore as hys
from tieringlab.params import cross_field, field_problems, param
from tieringlab.policies.registry import PolicySpec, register
from tieringlab.units import GB, MS

__all__ = ["EafcParams", "VanillaParams", "MasterParams", "eafc_decide", "simulate", "run_eafc", "run_vanilla",
           "run_master", "CONTROLLERS", "ARBITRATIONS", "ERROR_MODES"]

#: "eafc": Fig. 3 every cwnd; "static": the partition stays at p_init (the fixed-size runs of Sec. IV.A).
CONTROLLERS = ("eafc", "static")
#: How Case 2/3's error is scaled: "absolute" (Fig. 3: seconds; Kp in 1/s) or "normalized" (U2(b):
#: error / latency_max; Kp dimensionless), a sensitivity reading.
ERROR_MODES = ("absolute", "normalized")
#: The master controller's arbitration when the proposals exceed the SSD.
ARBITRATIONS = ("knapsack", "proportional")

SOURCE = "EAFC paper Sec. IV, Fig. 3"
SOURCE_STATIC = "EAFC paper Sec. IV.A (fixed partition runs)"
SOURCE_VANILLA = "EAFC paper Sec. V.A"
SOURCE_MASTER = {"knapsack": "ours (EAFC paper Sec. III)", "proportional": "ours (baseline of the master controller)"}
#: The registered name of each master-controller arbitration.
MASTER_NAMES = {"knapsack": "EAFC-master", "proportional": "EAFC-proportional"}

#: Documented ranges of the gains (notes §2.4 sweeps lie well inside): Kp in (0, KP_MAX] per second
#: of error (1000 /s = 1 per ms); T_inc in (0, 1] (at most doubling per cwnd); T_dec in (0, 1).
KP_MAX = 1000.0


@dataclass(frozen=True)
class EafcParams:
    """EAFC (Fig. 3) and its eviction engine; defaults: the paper where given, the notes' documented choices
    ([D], notes §2.4) otherwise. Bounds are declared at each field; the strict inequalities of Fig. 3's
    quantities and the order ``0 < p_floor <= p_init <= p_ceiling`` are checked across fields."""

    controller: str = param("eafc", "'eafc' (Fig. 3 every cwnd) or 'static' (partition fixed at p_init, the "
                                    "fixed-size runs of Sec. IV.A)", choices=CONTROLLERS)
    cwnd_s: float = param(600.0, "Fig. 3: 'cwnd: Controller (EAFC) window (10 minutes)'; a whole number of samples",
                          bounds=(0.0, None), unit="s")
    sample_s: float = param(5.0, "Sec. III: the monitoring daemon samples every 5 s", bounds=(0.001, None), unit="s")
    percentile: float = param(75.0, "Fig. 3: 'latency_obs: Observed latency (75th percentile) in last cwnd'",
                              bounds=(0.0, 100.0))
    lat_max_s: float = param(10 * MS, "the SLO target latency_max (Fig. 4a: 10 ms; 4b: 5 ms; 4d: 3 ms)",
                             bounds=(0.0, None), unit="s")
    lat_min_frac: float = param(0.5, "Sec. IV.A: 'min latency was set to half the target latency'",
                                bounds=(0.0, 1.0))
    kp_inc: float = param(20.0, "[D] Kp_inc per second of latency error (0.02 per ms, notes §2.4)",
                          bounds=(0.0, KP_MAX), unit="1/s")
    kp_dec: float = param(20.0, "[D] Kp_dec per second of latency error (0.02 per ms: 'conservative', Sec. IV.A)",
                          bounds=(0.0, KP_MAX), unit="1/s")
    t_inc: float = param(0.25, "[D] T_inc: at most +25 % per cwnd (notes §2.4)", bounds=(0.0, 1.0))
    t_dec: float = param(0.05, "[D] T_dec: at most -5 % per cwnd (notes §2.4)", bounds=(0.0, 1.0))
    t_util: float = param(0.8, "[D] T_util: grow only if the SSD used >= 80 % of the partition (< util_cap)",
                          bounds=(0.0, 1.0))
    util_cap: float = param(0.9, "Sec. V: 'the utilization does not go beyond 90% of partition size'",
                            bounds=(0.0, 1.0))
    p_init: float = param(10.0 * GB, "Sec. V.B: 'The initial SSD partition was set to 10GB' (FileBench too, notes "
                                     "U7)", bounds=(0.0, None), unit="bytes")
    p_floor: float = param(1.0 * GB, "[D] smallest partition (notes U6)", bounds=(0.0, None), unit="bytes")
    p_ceiling: float = param(160.0 * GB, "Sec. V: the 160 GB SSD", bounds=(0.0, None), unit="bytes")
    error_mode: str = param("absolute", "Fig. 3: error = latency difference (notes U2 reading (a)); 'normalized' "
                                        "(U2 (b): error / latency_max, Kp dimensionless) is a reading",
                            choices=ERROR_MODES)

    def __post_init__(self):
        cross_field(field_problems(self))
        cross_field(_eafc_problems(self))


def _eafc_problems(p) -> list[str]:
    """Fig. 3's strict inequalities and the partition order (every failed check, each naming its field)."""
    out = []
    if p.cwnd_s < p.sample_s:
        out.append(f"cwnd_s must be at least the sampling period sample_s = {p.sample_s} s (a window needs "
                   f"samples); got {p.cwnd_s!r}")
    elif abs(p.cwnd_s / p.sample_s - round(p.cwnd_s / p.sample_s)) > 1e-9:
        out.append(f"cwnd_s must be a whole number of samples of sample_s = {p.sample_s} s; got {p.cwnd_s!r}")
    if not p.lat_max_s > 0:
        out.append(f"lat_max_s (the latency target latency_max) must be > 0 seconds; got {p.lat_max_s!r}")
    if not p.lat_min_frac > 0:
        out.append(f"lat_min_frac must be in (0, 1] (latency_min = lat_min_frac * latency_max); got {p.lat_min_frac!r}")
    if not p.percentile > 0:
        out.append(f"percentile must be in (0, 100]; got {p.percentile!r}")
    out += [f"{f} must be in (0, {KP_MAX:g}] (per second of latency error, or per unit of normalized error); got "
            f"{getattr(p, f)!r}" for f in ("kp_inc", "kp_dec") if not getattr(p, f) > 0]
    if not p.t_inc > 0:
        out.append(f"t_inc (T_inc) must be in (0, 1] (at most doubling per cwnd); got {p.t_inc!r}")
    if not 0 < p.t_dec < 1:
        out.append(f"t_dec (T_dec) must be in (0, 1) (a decrease of 100 % would empty the partition); got {p.t_dec!r}")
    if not p.util_cap > 0:
        out.append(f"util_cap must be in (0, 1]; got {p.util_cap!r}")
    elif not 0 < p.t_util < p.util_cap:
        out.append(f"t_util (T_util) must be in (0, util_cap = {p.util_cap}): usage never exceeds util_cap of the "
                   f"partition, so a larger T_util would never let Case 2 grow it; got {p.t_util!r}")
    if not 0 < p.p_floor <= p.p_init <= p.p_ceiling:
        out.append(f"p_init must lie in [p_floor, p_ceiling] with p_floor > 0: need 0 < p_floor <= p_init <= "
                   f"p_ceiling (bytes); got p_floor={p.p_floor!r}, p_init={p.p_init!r}, p_ceiling={p.p_ceiling!r}")
    return out


@dataclass(frozen=True)
class VanillaParams:
    """Vanilla (Sec. V.A): no controller, one LRU over the whole SSD; cwnd only groups the samples."""

    cwnd_s: float = param(600.0, "windows for reporting, as EAFC's (Fig. 4 x-axis: units of cwnd)",
                          bounds=(0.0, None), unit="s")
    sample_s: float = param(5.0, "Sec. III: 5 s samples", bounds=(0.001, None), unit="s")
    ssd_bytes: float = param(160.0 * GB, "Sec. V: the whole 160 GB SSD", bounds=(1.0, None), unit="bytes")

    def __post_init__(self):
        cross_field(field_problems(self))
        if self.cwnd_s < self.sample_s:
            cross_field([f"cwnd_s must be at least the sampling period sample_s = {self.sample_s} s; "
                         f"got {self.cwnd_s!r}"])


@dataclass(frozen=True)
class MasterParams:
    """The master controller (beyond the paper, Sec. III): EAFC per workload plus arbitration."""

    eafc: EafcParams = param(EafcParams(), "the same EAFC gains for every workload (notes §7.6 item 5)")
    lat_max_s: tuple[float, ...] = param((5 * MS, 3 * MS), "[D] per-workload latency targets of the contended mix",
                                         bounds=(0.0, None), unit="s")
    priority: tuple[float, ...] = param((2.0, 1.0), "[D] knapsack values: larger = more important",
                                        bounds=(0.0, None))
    ssd_bytes: float = param(160.0 * GB, "the SSD to share (Sec. V: 160 GB; the contended mix cuts it)",
                             bounds=(1.0, None), unit="bytes")
    arbitration: str = param("knapsack", "'knapsack' (ours) or 'proportional' (no priorities)",
                             choices=ARBITRATIONS)

    def __post_init__(self):
        if not isinstance(self.eafc, EafcParams):
            raise TypeError(f"eafc must be EafcParams; got {type(self.eafc).__name__}")
        cross_field(field_problems(self))
        if len(self.lat_max_s) != len(self.priority):
            cross_field([f"lat_max_s and priority need one entry per workload; got {len(self.lat_max_s)} and "
                         f"{len(self.priority)}"])
        problems = [f"lat_max_s[{i}] (a latency target) must be > 0 seconds; got {t!r}"
                    for i, t in enumerate(self.lat_max_s) if not t > 0]
        problems += [f"priority[{i}] must be > 0; got {pr!r}" for i, pr in enumerate(self.priority) if not pr > 0]
        if len(self.lat_max_s) > 12:
            problems.append(f"lat_max_s: at most 12 workloads (the knapsack enumerates subsets); got "
                            f"{len(self.lat_max_s)}")
        if self.ssd_bytes < len(self.lat_max_s) * self.eafc.p_floor:
            problems.append(f"ssd_bytes must hold every workload's p_floor ({len(self.lat_max_s)} x "
                            f"{self.eafc.p_floor:.0f} bytes); got {self.ssd_bytes!r}")
        cross_field(problems)


# ------------------------------------------------------------------------------------------ Fig. 3


class Ctrl(NamedTuple):
    """EafcParams as arrays (so that gains and targets can be vmapped)."""

    active: jax.Array
    percentile: jax.Array
    lat_max: jax.Array
    lat_min_frac: jax.Array
    kp_inc: jax.Array
    kp_dec: jax.Array
    t_inc: jax.Array
    t_dec: jax.Array
    t_util: jax.Array
    util_cap: jax.Array
    p_init: jax.Array
    p_floor: jax.Array
    p_ceiling: jax.Array
    normalized: jax.Array


def ctrl_of(p: EafcParams, **override) -> Ctrl:
    """The arrays of ``p``; ``override`` replaces fields by arrays (a sweep)."""
    base = dict(active=p.controller == "eafc", percentile=p.percentile, lat_max=p.lat_max_s,
                lat_min_frac=p.lat_min_frac, kp_inc=p.kp_inc, kp_dec=p.kp_dec, t_inc=p.t_inc, t_dec=p.t_dec,
                t_util=p.t_util, util_cap=p.util_cap, p_init=p.p_init, p_floor=p.p_floor, p_ceiling=p.p_ceiling,
                normalized=p.error_mode == "normalized")
    base.update(override)
    return Ctrl(**{k: jnp.asarray(v, bool if k in ("active", "normalized") else jnp.float64)
                   for k, v in base.items()})


@jax.jit
def eafc_decide(c: Ctrl, latency_obs, ssd_util_avg, cache_sz_prev):
    """Fig. 3: ``(cache_sz_cur, case, gated)`` from the last cwnd's feedback inputs.

    ``case`` is 1, 2 or 3 as in Fig. 3; ``gated`` marks Case 2 without growth (``ssd_util_avg /
    cache_sz_prev < T_util``). Boundaries: Case 1 includes both band edges, Case 2 is strict ``>``,
    Case 3 strict ``<``, the utilization test ``>=`` (notes §2.3). Inactive (static) controllers keep
    the size. The result is clipped to ``[p_floor, p_ceiling]``.
    """
    latency_max = c.lat_max
    latency_min = c.lat_min_frac * latency_max
    scale = jnp.where(c.normalized, 1.0 / latency_max, 1.0)
    case2 = latency_obs > latency_max
    case3 = latency_obs < latency_min
    grow = case2 & (ssd_util_avg / cache_sz_prev >= c.t_util)
    ratio_inc = jnp.minimum((latency_obs - latency_max) * scale * c.kp_inc, c.t_inc)
    ratio_dec = jnp.minimum((latency_min - latency_obs) * scale * c.kp_dec, c.t_dec)
    cur = jnp.where(grow, cache_sz_prev * (1.0 + ratio_inc),
                    jnp.where(case3, cache_sz_prev * (1.0 - ratio_dec), cache_sz_prev))
    cur = jnp.where(c.active, jnp.clip(cur, c.p_floor, c.p_ceiling), cache_sz_prev)
    case = jnp.where(case2, 2, jnp.where(case3, 3, 1)).astype(jnp.int8)
    return cur, case, case2 & ~grow


# ------------------------------------------------------------------------------------- the closed loop


def _cap_units(P, util_cap, unit_bytes):
    """The eviction engine: at most ``floor(util_cap * P / unit)`` units resident."""
    return jnp.floor(util_cap * P / unit_bytes + 1e-9)


def _window_samples(pl, n_max, phases, eps, st, cap):
    def smp(s, x):
        ph, e = x
        s, rec = hys.plant_sample(pl, s, ph, e, cap, n_max)
        return s, rec

    return jax.lax.scan(smp, st, (phases, eps))


@partial(jax.jit, static_argnames=("n_max",))
def simulate(pl: hys.Plant, phases, c: Ctrl, key, n_max: int):
    """One workload, closed loop: a scan over cwnds of (5 s samples, then Fig. 3). Arrays in, dict out.

    ``phases`` (E, S): the load phase of each sample; ``c``: :class:`Ctrl` (vmappable); ``key``: noise.
    """
    E, S = phases.shape
    eps = jax.random.normal(key, (E, S), jnp.float64)

    def window(carry, x):
        st, P = carry
        ph, e = x
        cap = _cap_units(P, c.util_cap, pl.unit_bytes)
        st = st._replace(m=jnp.minimum(st.m, cap))  # a shrink evicts at once
        st, rec = _window_samples(pl, n_max, ph, e, st, cap)
        lat_obs = jnp.percentile(rec["latency_s"], c.percentile)
        util_avg = jnp.mean(rec["used_bytes"])
        P_next, case, gated = eafc_decide(c, lat_obs, util_avg, P)
        out = {"partition_bytes": P, "partition_next_bytes": P_next, "latency_obs_s": lat_obs,
               "latency_mean_s": jnp.mean(rec["latency_s"]), "latency_model_mean_s": jnp.mean(rec["latency_model_s"]),
               "util_avg_bytes": util_avg, "case": case, "gated": gated, "samples": rec}
        return (st, P_next), out

    st0 = hys.plant_init(pl)
    (st, _), out = jax.lax.scan(window, (st0, c.p_init), (phases, eps))
    out["exhausted"] = st.exhausted
    return out


@partial(jax.jit, static_argnames=("n_max",))
def simulate_many(pl: hys.Plant, phases, c: Ctrl, keys, n_max: int):
    """:func:`simulate` vmapped over replications (leading axis of ``pl``'s arrays and of ``keys``)."""
    return jax.vmap(lambda p, k: simulate(p, phases, c, k, n_max))(pl, keys)


def _run(obs: xr.Dataset, c: Ctrl, key):
    """One workload, or replications of it stacked along ``replication`` (vmapped, one key each)."""
    pl, n_max = hys.plant_from(obs)
    if "replication" in obs.dims:
        ph = obs["phase_of_sample"]
        phases = jnp.asarray((ph.isel(replication=0) if "replication" in ph.dims else ph).values)
        keys = jax.random.split(key, obs.sizes["replication"])
        return simulate_many(pl, phases, c, keys, n_max), ("replication",)
    return simulate(pl, jnp.asarray(obs["phase_of_sample"].values), c, key, n_max), ()


_SAMPLE_UNITS = {"latency_s": "s", "latency_model_s": "s", "used_bytes": "bytes", "ssd_hit_ratio": "1",
                 "ram_hit_ratio": "1", "ops_per_s": "1/s", "reads_per_s": "1/s", "position": "accesses"}
_EPOCH_UNITS = {"partition_bytes": "bytes", "partition_next_bytes": "bytes", "latency_obs_s": "s",
                "latency_mean_s": "s", "latency_model_mean_s": "s", "util_avg_bytes": "bytes", "case": "1",
                "gated": "1"}


def _to_dataset(out: dict, obs: xr.Dataset, *, policy: str, source: str, lead: tuple[str, ...] = (),
                coords: dict | None = None, attrs: dict | None = None) -> xr.Dataset:
    if bool(np.any(np.asarray(out["exhausted"]))):
        raise RuntimeError("the workload's access stream ran out before the run ended: its length bound "
                           "(models.hybridstore.max_ops_per_s) is too small for this hybrid store")
    data = {}
    if lead == ("replication",):
        coords = {"replication": obs["replication"].values, **(coords or {})}
    for k, v in out.items():
        if k in ("samples", "exhausted"):
            continue
        data[k] = ((*lead, "epoch"), np.asarray(v))
    for k, v in out["samples"].items():
        data[k] = ((*lead, "epoch", "sample"), np.asarray(v))
    ds = xr.Dataset(data, coords={"epoch": obs["epoch"].values, "sample": obs["sample"].values, **(coords or {})})
    ds = ds.assign_coords(time_s=("epoch", (ds["epoch"].values + 1) * obs.attrs["cwnd_s"]))
    for k, u in {**_SAMPLE_UNITS, **_EPOCH_UNITS}.items():
        if k in ds:
            ds[k].attrs["units"] = u
    ds["case"].attrs["long_name"] = "Fig. 3 case (1: in band, 2: SLO missed, 3: below latency_min)"
    ds["time_s"].attrs.update(units="s", long_name="end of the controller window")
    ds.attrs.update({"policy": policy, "source": source, "workload": obs.attrs.get("workload", ""),
                     "cwnd_s": obs.attrs["cwnd_s"], **(attrs or {})})
    return ds


def _check_obs(obs: xr.Dataset, cwnd_s: float, sample_s: float, name: str) -> None:
    if not isinstance(obs, xr.Dataset) or "epoch" not in obs.dims or "cum_ssd_hits" not in obs:
        raise TypeError(f"{name}: observations must be a Dataset from models.hybridstore.observations (dim epoch)")
    if abs(obs.attrs["cwnd_s"] - cwnd_s) > 1e-9:
        raise ValueError(f"{name}: params cwnd_s = {cwnd_s} s but the observations were built for "
                         f"cwnd_s = {obs.attrs['cwnd_s']} s; rebuild them with models.hybridstore.observations")
    if abs(float(obs["sample_s"].max()) - sample_s) > 1e-9:
        raise ValueError(f"{name}: params sample_s = {sample_s} s but the observations sample every "
                         f"{float(obs['sample_s'].max())} s")


def run_eafc(params: EafcParams, observations: xr.Dataset, key) -> xr.Dataset:
    """EAFC (Fig. 3) on one workload of the hybrid store: a Dataset over ``epoch`` (and ``sample``).

    Observations stacked along ``replication`` (:func:`~tieringlab.models.hybridstore.stack_observations`
    with ``dim="replication"``: other traces of the same workload) run in one vmapped call, with
    ``jax.random.split(key, R)`` as their noise keys.
    """
    _check_obs(observations, params.cwnd_s, params.sample_s, "EAFC")
    out, lead = _run(observations, ctrl_of(params), key)
    name, source = ("EAFC", SOURCE) if params.controller == "eafc" else ("static-partition", SOURCE_STATIC)
    return _to_dataset(out, observations, policy=name, source=source, lead=lead,
                       attrs={"lat_max_s": params.lat_max_s, **{f"param_{k}": v for k, v in
                                                                  dataclasses.asdict(params).items()}})


def run_vanilla(params: VanillaParams, observations: xr.Dataset, key) -> xr.Dataset:
    """Vanilla (Sec. V.A): the whole SSD, no controller (a static partition of ``ssd_bytes``, no 90 % cap)."""
    _check_obs(observations, params.cwnd_s, params.sample_s, "vanilla")
    c = ctrl_of(EafcParams(controller="static", cwnd_s=params.cwnd_s, sample_s=params.sample_s,
                           p_init=params.ssd_bytes, p_ceiling=params.ssd_bytes, util_cap=1.0, t_util=0.5))
    out, lead = _run(observations, c, key)
    return _to_dataset(out, observations, policy="vanilla", source=SOURCE_VANILLA, lead=lead)


# ----------------------------------------------------------------------------------- master controller


def _subsets(n: int) -> np.ndarray:
    return np.array(list(itertools.product((0, 1), repeat=n)), dtype=bool)


@partial(jax.jit, static_argnames=("knapsack",))
def arbitrate(req, need, floor, prio, ssd_bytes, subsets, knapsack: bool):
    """Grant partition sizes when the EAFC proposals ``req`` may exceed ``ssd_bytes`` (module docstring).

    ``need``: the curve's smallest size meeting each SLO (inf if none); ``subsets`` (2^W, W) bool.
    Returns ``(granted, winner)``.
    """
    fits = jnp.sum(req) <= ssd_bytes
    # knapsack: maximise sum prio over satisfied workloads; weight need_i (floor_i for victims)
    w = jnp.where(subsets, need[None, :], floor[None, :]).sum(axis=1)
    feasible = w <= ssd_bytes
    value = jnp.where(feasible, (subsets * prio[None, :]).sum(axis=1), -1.0)
    best_v = value.max()
    pick = jnp.argmin(jnp.where(value == best_v, w, jnp.inf))
    win = subsets[pick]
    base = jnp.where(win, need, floor)
    left = jnp.maximum(ssd_bytes - base.sum(), 0.0)
    extra = jnp.maximum(req - base, 0.0)
    share = jnp.where(extra.sum() > 0, jnp.minimum(1.0, left / jnp.maximum(extra.sum(), 1e-300)), 0.0)
    ks = base + extra * share
    prop = jnp.maximum(req * ssd_bytes / jnp.sum(req), floor)
    granted = jnp.where(fits, req, jnp.where(knapsack, ks, prop))
    return granted, jnp.where(fits, jnp.ones_like(win), win)


@partial(jax.jit, static_argnames=("n_max", "knapsack"))
def simulate_master(pl: hys.Plant, phases, c: Ctrl, prio, ssd_bytes, key, n_max: int, knapsack: bool):
    """Several workloads (leading axis of ``pl``, ``phases``, ``c.lat_max``, ``prio``) sharing one SSD."""
    W, E, S = phases.shape
    eps = jax.random.normal(key, (W, E, S), jnp.float64)
    subsets = jnp.asarray(_subsets(W))
    z = jax.scipy.special.ndtri(c.percentile / 100.0)
    sig = pl.noise_sigma
    p75_factor = jnp.exp(z * sig - 0.5 * sig * sig)  # noisy samples' percentile over their mean
    ca = c._replace(**{f: jnp.broadcast_to(getattr(c, f), (W,)) for f in Ctrl._fields})

    def one_window(pl_i, ph_i, e_i, st_i, cap_i):
        return _window_samples(pl_i, n_max, ph_i, e_i, st_i, cap_i)

    def window(carry, x):
        st, P = carry
        ph, e = x
        cap = _cap_units(P, ca.util_cap, pl.unit_bytes)
        st = st._replace(m=jnp.minimum(st.m, cap))
        p0 = jnp.maximum(st.pos, pl.seg_start[jnp.arange(W), ph[:, 0]])
        st, rec = jax.vmap(one_window)(pl, ph, e, st, cap)
        lat_obs = jax.vmap(jnp.percentile)(rec["latency_s"], ca.percentile)
        util_avg = rec["used_bytes"].mean(axis=1)
        req, case, gated = jax.vmap(eafc_decide)(ca, lat_obs, util_avg, P)
        sizes, lat = jax.vmap(hys.latency_vs_size, in_axes=(0, 0, 0, 0, None))(pl, p0, st.pos, ph[:, -1], n_max)
        ok = lat * p75_factor[:, None] <= ca.lat_max[:, None]
        first = jnp.argmax(ok, axis=1)
        need_units = jnp.where(ok.any(axis=1), sizes[jnp.arange(W), first], jnp.inf)
        need = jnp.clip(need_units * pl.unit_bytes / ca.util_cap, ca.p_floor, ca.p_ceiling)
        need = jnp.where(ok.any(axis=1), need, jnp.inf)
        granted, win = arbitrate(req, need, ca.p_floor, prio, ssd_bytes, subsets, knapsack)
        out = {"partition_bytes": P, "partition_next_bytes": granted, "requested_bytes": req, "need_bytes": need,
               "satisfied": win, "latency_obs_s": lat_obs, "latency_mean_s": rec["latency_s"].mean(axis=1),
               "latency_model_mean_s": rec["latency_model_s"].mean(axis=1), "util_avg_bytes": util_avg,
               "case": case, "gated": gated, "samples": rec}
        return (st, granted), out

    st0 = jax.vmap(hys.plant_init)(pl)
    P0 = jnp.minimum(ca.p_init, ssd_bytes / W)
    (st, _), out = jax.lax.scan(window, (st0, P0), (jnp.moveaxis(phases, 1, 0), jnp.moveaxis(eps, 1, 0)))
    # scan stacks epochs first: move the workload axis to the front
    out = jax.tree_util.tree_map(lambda a: jnp.moveaxis(a, 1, 0), out)
    out["exhausted"] = st.exhausted
    return out


def run_master(params: MasterParams, observations: xr.Dataset, key) -> xr.Dataset:
    """EAFC per workload under the master controller; ``observations`` stacked along ``workload``
    (:func:`tieringlab.models.hybridstore.stack_observations`)."""
    if "workload" not in observations.dims:
        raise ValueError("EAFC-master: observations need a 'workload' dim (models.hybridstore.stack_observations)")
    W = observations.sizes["workload"]
    if W != len(params.lat_max_s):
        raise ValueError(f"EAFC-master: lat_max_s and priority have {len(params.lat_max_s)} entries but the "
                         f"observations hold {W} workloads")
    _check_obs(observations, params.eafc.cwnd_s, params.eafc.sample_s, "EAFC-master")
    pl, n_max = hys.plant_from(observations)
    c = ctrl_of(params.eafc, lat_max=jnp.asarray(params.lat_max_s, jnp.float64))
    out = simulate_master(pl, jnp.asarray(observations["phase_of_sample"].values), c,
                          jnp.asarray(params.priority, jnp.float64), jnp.asarray(float(params.ssd_bytes)), key,
                          n_max, params.arbitration == "knapsack")
    ds = _to_dataset(out, observations, policy=MASTER_NAMES[params.arbitration],
                     source=SOURCE_MASTER[params.arbitration],
                     lead=("workload",), coords={"workload": observations["workload"].values},
                     attrs={"ssd_bytes": float(params.ssd_bytes), "arbitration": params.arbitration})
    ds["lat_max_s"] = ("workload", np.asarray(params.lat_max_s))
    ds["priority"] = ("workload", np.asarray(params.priority))
    return ds


def _example_observations(key: int) -> xr.Dataset:
    """One hour of a small FileBench (1 GB, 16 MiB units) on a coarse store: six controller windows."""
    from tieringlab.models.workloads import eafc as wl  # noqa: PLC0415  (only the examples need the generator)

    h = hys.HybridStoreParams(n_sizes=9, max_blocks=64)
    p = wl.FileBenchParams(working_set_bytes=1 * GB, n_files=40_000, duration_s=3600.0, unit_bytes=16 * 2**20)
    rpa = p.unit_bytes / (p.working_set_bytes / p.n_files)
    n = [int(np.ceil(hys.max_ops_per_s(ph, h) * ph.read_frac * ph.duration_s / rpa)) + 2 for ph in p.phases()]
    return hys.observations(wl.filebench_webserver(jax.random.key(key), p, n), h, 600.0)


def _example():
    """A small valid call of EAFC, static-partition and vanilla (the contract test's)."""
    return (_example_observations(0),), {}


def _example_master():
    """Two small workloads sharing the SSD (the master controller's contract example)."""
    obs = hys.stack_observations([_example_observations(0), _example_observations(1)], names=["gold", "silver"])
    return (obs,), {}


register(PolicySpec(name="EAFC", kind="controller", fn=run_eafc, params_type=EafcParams, source=SOURCE,
                    fixed={"controller": "eafc"}, random=True, example=_example,
                    description="Error-aware feedback controller sizing one SSD partition to a latency SLO"))
register(PolicySpec(name="static-partition", kind="controller", fn=run_eafc, params_type=EafcParams,
                    source=SOURCE_STATIC, fixed={"controller": "static"}, random=True, example=_example,
                    description="a partition fixed at p_init (no controller)"))
register(PolicySpec(name="vanilla", kind="controller", fn=run_vanilla, params_type=VanillaParams,
                    source=SOURCE_VANILLA, random=True, aliases=("naive",), example=_example,
                    description="no controller: the whole SSD, the whole working set cached"))
register(PolicySpec(name="EAFC-master", kind="controller", fn=run_master, params_type=MasterParams,
                    source=SOURCE_MASTER["knapsack"], fixed={"arbitration": "knapsack"}, random=True,
                    example=_example_master,
                    description="per-workload EAFC + a knapsack over latency-vs-size curves under SSD contention"))
register(PolicySpec(name="EAFC-proportional", kind="controller", fn=run_master, params_type=MasterParams,
                    source=SOURCE_MASTER["proportional"], fixed={"arbitration": "proportional"},
                    random=True, example=_example_master,
                    description="per-workload EAFC, proposals scaled down in proportion"))
