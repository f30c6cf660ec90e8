"""The Hybrid Store (HyS) of the EAFC paper as a model: RAM buffer cache -> SSD read cache -> HDD.

EAFC paper Sec. III and V: HDDs in RAID groups are the permanent store; SSDs are a **read cache** in
front of them, partitioned dynamically, **one LRU per workload whose size can be changed**; a per-
workload **eviction engine** keeps the partition's usage at or below **90 %** of its size (Sec. V:
"the utilization does not go beyond 90% of partition size"); a **monitoring daemon** samples the
average I/O latency, the SSD used and the SSD hit ratio **every 5 s** (Sec. III). The server has
160 GB of SSD and 16 GB of RAM (Sec. V); a buffer cache in RAM sits in front of the SSD (Sec. V.B).

Three parts, all array code:

1. **Latency with queueing** (:func:`mva`, :func:`op_response`). The paper gives no device models
   (notes U19). The store is a closed queueing network solved by exact Mean Value Analysis (Reiser &
   Lavenberg 1980): ``k_ssd`` SSD units and ``k_hdd`` HDD spindles, each an FCFS queue with
   exponential service (``s_ssd``, ``s_hdd``), reads spread evenly over them; RAM hits are a pure
   delay ``l_ram``; the client and network a delay ``think_s``; ``population`` requests circulate.
   Per operation: SSD demand ``read_frac h_ssd s_ssd / k_ssd`` at each SSD unit, HDD demand
   ``(read_frac m + write_frac w) s_hdd / k_hdd`` at each spindle (``w``: write-back cost, default 0:
   NVRAM absorbs writes), the rest at ``l_ram``. The latency the daemon reports is that of a read at
   the caching layer (notes U4, reading (a)): ``h_ram l_ram + h_ssd Rv_ssd + m Rv_hdd``, ``Rv`` the
   MVA per-visit residence ``s (1 + Q(N - 1))``. Each 5 s sample is multiplied by lognormal noise
   ``exp(sigma eps - sigma^2 / 2)`` (notes U20; unbiased, so its P75 sits above the mean).
2. **Hit ratios at every size from stack distances** (:func:`trace_curves`). The RAM is a fixed-size
   LRU over every access (a read hits iff its global stack distance is below the RAM's units); the
   SSD is an LRU over the RAM-miss reads. A resized LRU always holds the top ``m`` entries of its
   stream's LRU stack (:mod:`tieringlab.models._resizing`), so an SSD read hits iff its stack distance
   on the RAM-miss substream is below ``m``, whatever the resizing history. One pass of
   :func:`~tieringlab.models.stackdist.stack_distances` per stream then gives, per block of accesses,
   the SSD hits at every candidate size of a grid (a 2-D histogram, cumulative over blocks): the hit
   ratio of any access range at any ``m`` is a bilinear interpolation, and neither a sizing decision,
   nor vanilla, nor a sweep of the controller's gains re-simulates the cache.
3. **The 5 s sample** (:func:`plant_sample`): the closed loop consumes the access stream at the
   throughput the queueing model gives; the SSD holds ``m`` units (``m <= floor(util_cap P / unit)``,
   the eviction engine), grows by the SSD misses (read-miss insertion, notes U9) and shrinks at once
   when the partition does. ``m`` is held fixed inside a sample (notes §7.2 step-level approximation;
   the error is bounded by one sample's misses). :func:`~tieringlab.models.stackdist.resizing_lru_from_distances`
   replays a realised partition schedule exactly, access by access, to check it.

Units: seconds and bytes inside; ``units`` (cache keys) of ``unit_bytes`` each in the cache arrays.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import xarray as xr

from tieringlab.arrays import bucket
from tieringlab.models.stackdist import COLD, stack_distances
from tieringlab.models.workloads.eafc import Phase, Workload
from tieringlab.params import INT64_MAX, cross_field, field_problems, param
from tieringlab.units import GB, MS

__all__ = ["HybridStoreParams", "mva", "op_response", "max_ops_per_s", "calibrate_s_ssd", "trace_curves",
           "observations", "with_cwnd",
           "stack_observations", "Plant", "PlantState", "plant_from", "plant_init", "plant_sample",
           "ssd_hits_between", "latency_vs_size", "SAMPLE_S"]

#: Phase arrays are padded to at least this many slots (shapes shared across workloads).
PHASE_SLOTS = 4

#: Monitoring period of the daemon (EAFC paper Sec. III: "collects these stats every 5 seconds").
SAMPLE_S = 5.0


@dataclass(frozen=True)
class HybridStoreParams:
    """The server of EAFC paper Sec. V and its device model ([D]: the notes' documented choices, §7.4, where the
    paper is silent). Sizes are int64 bytes downstream: at most 2^63 - 1."""

    ssd_bytes: float = param(160.0 * GB, "Sec. V: '160 GB of SSD space used as read cache'",
                             bounds=(1.0, INT64_MAX), unit="bytes")
    ram_bytes: float = param(0.0, "[D] RAM buffer cache in front; the SPECsfs runs use 14 GB (16 GB RAM, Sec. V, "
                                  "minus the OS)", bounds=(0.0, INT64_MAX), unit="bytes")
    s_ssd: float = param(0.25 * MS, "[D] 2012-era SATA SSD random read service time (notes §7.4)",
                         bounds=(1e-6, 0.1), unit="s")
    k_ssd: int = param(8, "[D] the SSD's internal parallelism (notes §7.4)", bounds=(1, 1024))
    s_hdd: float = param(8.0 * MS, "[D] 7.2K-rpm class random read service time (notes §7.4)", bounds=(1e-5, 1.0),
                         unit="s")
    k_hdd: int = param(4, "[D] a small RAID group backing the 1 TB volume (notes §7.4)", bounds=(1, 1024))
    l_ram: float = param(0.05 * MS, "[D] a RAM (buffer cache) hit (notes §7.4)", bounds=(1e-7, 0.1), unit="s")
    hdd_write_s: float = param(0.0, "[D] HDD write-back work per write op, in units of s_hdd (NVRAM absorbs: 0)",
                               bounds=(0.0, None))
    noise_sigma: float = param(0.25, "[D] lognormal noise of a 5 s latency sample (notes U20)", bounds=(0.0, 2.0))
    sample_s: float = param(SAMPLE_S, "Sec. III: the daemon samples every 5 s", bounds=(0.001, None), unit="s")
    n_sizes: int = param(129, "[D] candidate SSD sizes of the stack-distance hit curves (0 .. all units)",
                         bounds=(3, 4097))
    max_blocks: int = param(1 << 15, "[D] access blocks of the cumulative hit curves (time resolution)",
                            bounds=(1, 1 << 20))

    def __post_init__(self):
        cross_field(field_problems(self))


# ----------------------------------------------------------------------------------------- queueing


def mva(demand, mult, delay, population, n_max: int):
    """Exact MVA of a closed single-class product-form network (Reiser & Lavenberg 1980).

    ``demand`` (K,): service demand (s per job) at each of ``mult[k]`` identical FCFS stations of class
    k; ``delay`` (s): the total pure-delay (infinite-server) time per job; ``population``: jobs N
    (traced, ``0 <= N <= n_max``; ``n_max`` is static). Recursion for n = 1 .. N:
    ``R_k(n) = D_k (1 + Q_k(n - 1))``, ``X(n) = n / (delay + sum_k mult_k R_k(n))``, ``Q_k(n) = X(n) R_k(n)``.

    Returns ``(X, R, Q_prev)``: throughput (jobs/s), residence per job at one station of each class,
    and the queue lengths at ``N - 1`` (so a visit of service time s is answered in ``s (1 + Q_prev)``).
    """
    demand = jnp.asarray(demand, jnp.float64)
    mult = jnp.asarray(mult, jnp.float64)
    delay = jnp.asarray(delay, jnp.float64)
    population = jnp.asarray(population)

    def body(n, carry):
        Q, X, R, Qp = carry
        Rn = demand * (1.0 + Q)
        Xn = n / (delay + jnp.sum(mult * Rn))
        on = n <= population
        return (jnp.where(on, Xn * Rn, Q), jnp.where(on, Xn, X), jnp.where(on, Rn, R), jnp.where(on, Q, Qp))

    z = jnp.zeros_like(demand)
    _, X, R, Qp = jax.lax.fori_loop(1, int(n_max) + 1, body, (z, jnp.zeros_like(delay), demand, z))
    return X, R, Qp


class Device(NamedTuple):
    """The device constants as arrays (what :func:`op_response` needs)."""

    s_ssd: jax.Array
    k_ssd: jax.Array
    s_hdd: jax.Array
    k_hdd: jax.Array
    l_ram: jax.Array
    hdd_write_s: jax.Array


def device_of(h: HybridStoreParams) -> Device:
    return Device(*(jnp.asarray(float(getattr(h, f)), jnp.float64) for f in Device._fields))


@partial(jax.jit, static_argnames=("n_max",))
def op_response(dev: Device, h_ram, h_ssd, population, think_s, read_frac, write_frac, n_max: int):
    """Throughput (ops/s) and read latency at the caching layer (s) of the closed loop (module docstring).

    ``h_ram``, ``h_ssd``: fractions of reads served by RAM and SSD (the rest, ``m``, by the HDD).
    """
    h_miss = jnp.clip(1.0 - h_ram - h_ssd, 0.0, 1.0)
    d_ssd = read_frac * h_ssd * dev.s_ssd / dev.k_ssd
    d_hdd = (read_frac * h_miss + write_frac * dev.hdd_write_s) * dev.s_hdd / dev.k_hdd
    delay = think_s + dev.l_ram * (read_frac * h_ram + (1.0 - read_frac))
    X, _, Qp = mva(jnp.stack([d_ssd, d_hdd]), jnp.stack([dev.k_ssd, dev.k_hdd]), delay, population, n_max)
    rv = jnp.stack([dev.s_ssd, dev.s_hdd]) * (1.0 + Qp)
    lat = h_ram * dev.l_ram + h_ssd * rv[0] + h_miss * rv[1]
    return X, lat


def max_ops_per_s(phase: Phase, h: HybridStoreParams) -> float:
    """An upper bound on the closed loop's throughput in ``phase`` (ops/s): the MVA throughput with
    every read served by the fastest level present (RAM if any, else SSD), and at most ``N / Z``."""
    dev = device_of(h)
    hr = 1.0 if h.ram_bytes > 0 else 0.0
    X, _ = op_response(dev, hr, 1.0 - hr, phase.population, phase.think_s, phase.read_frac, phase.write_frac,
                       phase.population)
    bound = float(X)
    if phase.think_s > 0:
        bound = min(bound, phase.population / phase.think_s)
    return bound


def calibrate_s_ssd(h: HybridStoreParams, phase: Phase, latency_s: float) -> float:
    """The SSD service time ``s_ssd`` at which the all-SSD-hit read latency of ``phase`` is ``latency_s``.

    The one calibration anchor the notebook may use (notes §7.6): vanilla FileBench, whole working set
    in the SSD, "approximately 1ms observed latency" (EAFC paper Sec. V.A). The latency is increasing
    in ``s_ssd``; bisection to machine precision (60 halvings of ``[0, latency_s]``).
    """
    if not latency_s > h.l_ram:
        raise ValueError(f"latency_s must exceed the RAM hit time l_ram = {h.l_ram} s; got {latency_s!r}")
    dev = device_of(h)

    def lat(s):
        return float(op_response(dev._replace(s_ssd=jnp.asarray(s)), 0.0, 1.0, phase.population, phase.think_s,
                                 phase.read_frac, phase.write_frac, phase.population)[1])

    lo, hi = 0.0, float(latency_s)
    if lat(hi) < latency_s:
        raise ValueError(f"no s_ssd <= {latency_s} s gives an all-hit latency of {latency_s} s")
    for _ in range(60):  # bisection of a scalar root: 60 steps, not a loop over requests
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if lat(mid) < latency_s else (lo, mid)
    return 0.5 * (lo + hi)


# ---------------------------------------------------------------------------------- hit-ratio curves


def trace_curves(keys, is_read, ram_units: int, n_sizes: int = 129, max_blocks: int = 1 << 15) -> dict:
    """Cumulative per-block read, RAM-hit and SSD-hit counts at a grid of SSD sizes (numpy).

    Numpy because the work is sorting and histogramming 10^6-10^7 accesses once
    (:func:`~tieringlab.models.stackdist.stack_distances`); the result feeds the jitted scan.

    - RAM: hit iff the access is a read and its global stack distance is ``< ram_units``;
    - SSD: the stream of RAM-miss reads; an access hits at size ``c`` iff its stack distance on that
      stream is ``< c`` (a resized LRU holds the top of that stack);
    - the grid: ``c_g = g * step``, ``g = 0 .. n_sizes - 1``, ``step = U / (n_sizes - 1)`` with ``U``
      the distinct keys of the SSD stream (so ``c_{G-1} = U``: a cache of ``U`` units holds all of
      them, and a full cache is exact); an access hits at ``c_g`` iff ``d < c_g``;
    - blocks of ``block = ceil(n / max_blocks)`` consecutive accesses; ``cum_*[b]`` counts the accesses
      before ``b * block``.

    Returns a dict of arrays ``cum_reads``, ``cum_ram``, ``cum_distinct`` (first accesses of the SSD
    stream: a resident set never exceeds them) over ``max_blocks + 1`` block edges, ``cum_ssd`` (edges x
    G) (int32 or int64), and ``block``, ``step``, ``n_distinct_ssd``.
    """
    keys = np.asarray(keys)
    is_read = np.asarray(is_read, bool)
    n = keys.size
    if n == 0 or is_read.shape != keys.shape:
        raise ValueError(f"keys must be non-empty and is_read must have its shape; got {keys.shape}, {is_read.shape}")
    block = max(1, -(-n // int(max_blocks)))
    n_blocks = -(-n // block)
    d = stack_distances(keys)
    ram_hit = is_read & (d < int(ram_units))
    del d
    sub = np.flatnonzero(is_read & ~ram_hit)
    d2 = stack_distances(keys[sub]) if sub.size else np.zeros(0, np.int64)
    n_distinct = int(np.count_nonzero(d2 == COLD))
    step = max(n_distinct, 1) / (n_sizes - 1)  # the last grid size holds every key exactly
    sizes = np.ceil(np.arange(n_sizes) * step - 1e-9).astype(np.int64)  # d < g step  <=>  d < ceil(g step)
    g0 = np.searchsorted(sizes, np.minimum(d2, sizes[-1]), side="right")  # hits at every size from g0 on
    g0[d2 == COLD] = n_sizes  # a first access never hits
    del d2
    b_sub = sub // block
    hist = np.bincount(b_sub * (n_sizes + 1) + g0, minlength=n_blocks * (n_sizes + 1))
    hist = hist.reshape(n_blocks, n_sizes + 1)[:, :n_sizes]
    per_block = np.cumsum(hist, axis=1)
    dt = np.int32 if n < 2**31 - 1 else np.int64
    cum_ssd = np.zeros((n_blocks + 1, n_sizes), dt)
    np.cumsum(per_block, axis=0, out=cum_ssd[1:])
    idx = np.arange(n) // block

    def cum(mask):
        out = np.zeros(n_blocks + 1, dt)
        np.cumsum(np.bincount(idx[mask], minlength=n_blocks), out=out[1:])
        return out

    first = np.zeros(n, bool)
    first[sub[g0 == n_sizes]] = True  # first accesses (COLD) of the SSD stream: distinct keys so far
    out = {"cum_reads": cum(is_read), "cum_ram": cum(ram_hit), "cum_ssd": cum_ssd, "cum_distinct": cum(first)}
    # pad to max_blocks + 1 edges (the last row repeated: no accesses beyond the end), so streams of
    # any length share one shape (and one compilation of the scan)
    out = {k: np.pad(v, [(0, int(max_blocks) - n_blocks)] + [(0, 0)] * (v.ndim - 1), mode="edge")
           for k, v in out.items()}
    return {**out, "block": block, "step": step, "n_distinct_ssd": n_distinct}


# -------------------------------------------------------------------------------------- observations


def observations(workload: Workload, h: HybridStoreParams, cwnd_s: float, curves: dict | None = None) -> xr.Dataset:
    """What the EAFC controller kind takes: the hybrid store and its workload, over dim ``epoch``.

    ``epoch`` (controller windows of ``cwnd_s``) x ``sample`` (``cwnd_s / sample_s`` daemon samples):
    ``phase_of_sample`` (the load phase of each sample); over ``phase``: the closed loop
    (``population``, ``think_s``, ``read_frac``, ``write_frac``), the working set, and the access segment
    ``[seg_start, seg_end)`` of the stream it reads; the cumulative hit curves of :func:`trace_curves`
    (``block_edge`` x ``size``); the device constants as scalars. ``curves`` may be passed to reuse a
    computation (they depend on the stream and ``ram_bytes`` only).
    """
    if not np.isfinite(cwnd_s) or cwnd_s < h.sample_s:
        raise ValueError(f"cwnd_s must be at least the sampling period sample_s = {h.sample_s} s; got {cwnd_s!r}")
    n_samples = cwnd_s / h.sample_s
    if abs(n_samples - round(n_samples)) > 1e-9:
        raise ValueError(f"cwnd_s must be a whole number of samples of {h.sample_s} s; got {cwnd_s!r}")
    n_samples = int(round(n_samples))
    dur = workload.duration_s
    n_epochs = int(math.floor(dur / cwnd_s + 1e-9))
    if n_epochs < 1:
        raise ValueError(f"the workload lasts {dur} s, less than one controller window cwnd_s = {cwnd_s} s")
    ram_units = int(h.ram_bytes // workload.unit_bytes)
    if curves is None:
        curves = trace_curves(workload.keys, workload.is_read, ram_units, h.n_sizes, h.max_blocks)
    t = (np.arange(n_epochs * n_samples) * h.sample_s).reshape(n_epochs, n_samples)
    ends = np.cumsum([ph.duration_s for ph in workload.phases])
    phase_of = np.minimum(np.searchsorted(ends, t, side="right"), len(workload.phases) - 1)
    ph = workload.phases
    ds = xr.Dataset(
        {
            "phase_of_sample": (("epoch", "sample"), phase_of.astype(np.int64)),
            "population": ("phase", np.array([p.population for p in ph], np.int64)),
            "think_s": ("phase", np.array([p.think_s for p in ph])),
            "read_frac": ("phase", np.array([p.read_frac for p in ph])),
            "write_frac": ("phase", np.array([p.write_frac for p in ph])),
            "working_set_bytes": ("phase", np.array([p.working_set_bytes for p in ph])),
            "phase_duration_s": ("phase", np.array([p.duration_s for p in ph])),
            "seg_start": ("phase", np.asarray(workload.seg_start, np.int64)),
            "seg_end": ("phase", np.asarray(workload.seg_end, np.int64)),
            "cum_reads": ("block_edge", curves["cum_reads"]),
            "cum_ram_hits": ("block_edge", curves["cum_ram"]),
            "cum_ssd_hits": (("block_edge", "size"), curves["cum_ssd"]),
            "cum_distinct": ("block_edge", curves["cum_distinct"]),
            "block_accesses": ((), int(curves["block"])),
            "size_step_units": ((), float(curves["step"])),
            "unit_bytes": ((), int(workload.unit_bytes)),
            "reads_per_access": ((), float(workload.reads_per_access)),
            "n_units": ((), int(workload.n_units)),
            "ram_units": ((), ram_units),
            **{f: ((), float(getattr(h, f))) for f in ("ssd_bytes", "ram_bytes", "s_ssd", "s_hdd", "l_ram",
                                                        "hdd_write_s", "noise_sigma", "sample_s")},
            "k_ssd": ((), int(h.k_ssd)),
            "k_hdd": ((), int(h.k_hdd)),
        },
        coords={"epoch": np.arange(n_epochs), "sample": np.arange(n_samples), "phase": np.arange(len(ph)),
                "size": np.arange(h.n_sizes)},
        attrs={"workload": workload.name, "cwnd_s": float(cwnd_s), "n_distinct_ssd": int(curves["n_distinct_ssd"]),
               "n_phases": len(ph),
               "source": "EAFC paper Sec. III, V (hybrid store); tieringlab.models.hybridstore"},
    )
    # phase slots padded to at least PHASE_SLOTS (repeating the last; no sample points there), so that
    # one- and three-phase workloads share array shapes and one compilation of the scan
    if ds.sizes["phase"] < PHASE_SLOTS:
        ds = ds.drop_vars("phase").pad(phase=(0, PHASE_SLOTS - ds.sizes["phase"]), mode="edge")
        ds = ds.assign_coords(phase=np.arange(PHASE_SLOTS))
    ds["think_s"].attrs["units"] = "s"
    ds["working_set_bytes"].attrs["units"] = "bytes"
    return ds


def with_cwnd(obs: xr.Dataset, cwnd_s: float) -> xr.Dataset:
    """``obs`` regridded to controller windows of ``cwnd_s`` (the hit curves do not depend on the window:
    only the ``epoch`` x ``sample`` grid and its ``phase_of_sample`` change)."""
    sample_s = float(obs["sample_s"].max())
    if not np.isfinite(cwnd_s) or cwnd_s < sample_s:
        raise ValueError(f"cwnd_s must be at least the sampling period sample_s = {sample_s} s; got {cwnd_s!r}")
    n_samples = cwnd_s / sample_s
    if abs(n_samples - round(n_samples)) > 1e-9:
        raise ValueError(f"cwnd_s must be a whole number of samples of {sample_s} s; got {cwnd_s!r}")
    n_samples = int(round(n_samples))
    k = int(obs.attrs["n_phases"])
    dur = obs["phase_duration_s"]
    dur = dur.isel({d: 0 for d in dur.dims if d != "phase"}).values[:k]
    n_epochs = int(math.floor(dur.sum() / cwnd_s + 1e-9))
    if n_epochs < 1:
        raise ValueError(f"the workload lasts {dur.sum()} s, less than one controller window cwnd_s = {cwnd_s} s")
    t = (np.arange(n_epochs * n_samples) * sample_s).reshape(n_epochs, n_samples)
    phase_of = np.minimum(np.searchsorted(np.cumsum(dur), t, side="right"), k - 1)
    out = obs.drop_vars("phase_of_sample").drop_dims(["epoch", "sample"], errors="ignore")
    out = out.assign_coords(epoch=np.arange(n_epochs), sample=np.arange(n_samples))
    out["phase_of_sample"] = (("epoch", "sample"), phase_of.astype(np.int64))
    out.attrs["cwnd_s"] = float(cwnd_s)
    return out


def stack_observations(obs: list[xr.Dataset], names=None, dim: str = "workload") -> xr.Dataset:
    """Observations along a new dim: ``"workload"`` (the master controller's input: several workloads
    sharing one SSD) or ``"replication"`` (traces of one workload from different seeds, run vmapped).

    All must share ``cwnd_s``, the epoch and sample grid and the size grid; block and phase dims are
    padded (cumulative curves repeat their last row: no accesses beyond the end; phases repeat the last).
    """
    if not obs:
        raise ValueError("stack_observations needs at least one workload")
    ref = obs[0]
    for o in obs[1:]:
        if o.attrs["cwnd_s"] != ref.attrs["cwnd_s"] or o.sizes["epoch"] != ref.sizes["epoch"] \
                or o.sizes["sample"] != ref.sizes["sample"] or o.sizes["size"] != ref.sizes["size"]:
            raise ValueError("stack_observations: every workload must have the same cwnd_s, number of epochs, "
                             "samples per epoch and size grid (run them for the same duration)")
    nb = max(o.sizes["block_edge"] for o in obs)
    npx = max(o.sizes["phase"] for o in obs)
    padded = []
    for o in obs:
        o = o.drop_vars("phase")
        o = o.pad(block_edge=(0, nb - o.sizes["block_edge"]), mode="edge")
        o = o.pad(phase=(0, npx - o.sizes["phase"]), mode="edge")
        padded.append(o)
    out = xr.concat(padded, dim=dim, data_vars="all", coords="minimal", compat="override",
                    combine_attrs="override")
    labels = list(names) if names is not None else (
        [o.attrs["workload"] for o in obs] if dim == "workload" else list(range(len(obs))))
    out = out.assign_coords({dim: labels, "phase": np.arange(npx)})
    return out


# ----------------------------------------------------------------------------------- the 5 s sample


class Plant(NamedTuple):
    """One workload's hybrid store as JAX arrays (from :func:`plant_from`)."""

    cum_reads: jax.Array
    cum_ram: jax.Array
    cum_ssd: jax.Array
    cum_distinct: jax.Array
    block: jax.Array
    step: jax.Array
    seg_start: jax.Array
    seg_end: jax.Array
    population: jax.Array
    think_s: jax.Array
    read_frac: jax.Array
    write_frac: jax.Array
    reads_per_access: jax.Array
    unit_bytes: jax.Array
    noise_sigma: jax.Array
    sample_s: jax.Array
    dev: Device


class PlantState(NamedTuple):
    pos: jax.Array     # access position in the stream (fractional)
    m: jax.Array       # units resident in the SSD partition
    h_ram: jax.Array   # last sample's read hit ratios (for the next throughput estimate)
    h_ssd: jax.Array
    exhausted: jax.Array  # the stream ran out (a bound too small: must never happen)


def plant_from(obs: xr.Dataset) -> tuple[Plant, int]:
    """The arrays of ``obs`` (one workload, or stacked along ``workload``) and the static MVA bound."""
    f = lambda v, dt=jnp.float64: jnp.asarray(obs[v].values, dt)  # noqa: E731
    dev = Device(f("s_ssd"), f("k_ssd"), f("s_hdd"), f("k_hdd"), f("l_ram"), f("hdd_write_s"))
    plant = Plant(f("cum_reads"), f("cum_ram_hits"), f("cum_ssd_hits"), f("cum_distinct"), f("block_accesses"),
                  f("size_step_units"), f("seg_start"), f("seg_end"), f("population", jnp.int64), f("think_s"),
                  f("read_frac"), f("write_frac"), f("reads_per_access"), f("unit_bytes"), f("noise_sigma"),
                  f("sample_s"), dev)
    # the MVA recursion runs to a static bound (masked beyond each phase's N): a power of two, so that
    # workloads of different populations (FileBench 32, SPECsfs 20) share one compilation
    return plant, bucket(int(obs["population"].max()))


def _frac_index(x, step, n):
    """``x / step`` split into a cell ``i`` in ``[0, n - 2]`` and a weight in ``[0, 1]``."""
    u = jnp.clip(x / step, 0.0, n - 1.0)
    i = jnp.clip(jnp.floor(u), 0, n - 2).astype(jnp.int32)
    return i, u - i


def _cum1(c, pos, block):
    i, w = _frac_index(pos, block, c.shape[0])
    return c[i] * (1.0 - w) + c[i + 1] * w


def _cum_ssd(pl: Plant, pos, m):
    i, w = _frac_index(pos, pl.block, pl.cum_ssd.shape[0])
    j, v = _frac_index(m, pl.step, pl.cum_ssd.shape[1])
    c = pl.cum_ssd
    row = lambda r: c[r, j] * (1.0 - v) + c[r, j + 1] * v  # noqa: E731
    return row(i) * (1.0 - w) + row(i + 1) * w


def ssd_hits_between(pl: Plant, p0, p1, m):
    """SSD hits (in accesses) of the reads in ``[p0, p1)`` with ``m`` units resident (bilinear)."""
    return _cum_ssd(pl, p1, m) - _cum_ssd(pl, p0, m)


def plant_init(pl: Plant) -> PlantState:
    """Cold SSD at the start of the first phase's segment; the first throughput estimate uses the RAM
    hit ratio of the first block."""
    p0 = pl.seg_start[0]
    p1 = p0 + pl.block
    reads = jnp.maximum(_cum1(pl.cum_reads, p1, pl.block) - _cum1(pl.cum_reads, p0, pl.block), 1e-12)
    hr = (_cum1(pl.cum_ram, p1, pl.block) - _cum1(pl.cum_ram, p0, pl.block)) / reads
    z = jnp.zeros((), jnp.float64)
    return PlantState(p0.astype(jnp.float64), z, jnp.clip(hr, 0.0, 1.0), z, jnp.zeros((), bool))


def plant_sample(pl: Plant, st: PlantState, phase, eps, cap_units, n_max: int):
    """One 5 s daemon sample: returns the new state and the sample's record.

    The partition holds at most ``cap_units`` units (the eviction engine: ``floor(util_cap P / unit)``).
    Throughput comes from the last sample's hit ratios; the reads of this sample are the next
    ``X read_frac sample_s / reads_per_access`` accesses of the phase's segment; their RAM and SSD hits
    (at ``m`` held fixed) give the sample's ratios, its latency (a second MVA) and the SSD fill.
    """
    N, Z = pl.population[phase], pl.think_s[phase]
    rf, wf = pl.read_frac[phase], pl.write_frac[phase]
    pos = jnp.maximum(st.pos, pl.seg_start[phase])
    m = jnp.minimum(st.m, cap_units)
    X0, _ = op_response(pl.dev, st.h_ram, st.h_ssd, N, Z, rf, wf, n_max)
    want = X0 * rf * pl.sample_s / pl.reads_per_access
    end = jnp.minimum(pos + want, pl.seg_end[phase])
    exhausted = st.exhausted | (pos + want > pl.seg_end[phase] + 1e-9)
    reads = _cum1(pl.cum_reads, end, pl.block) - _cum1(pl.cum_reads, pos, pl.block)
    ram = _cum1(pl.cum_ram, end, pl.block) - _cum1(pl.cum_ram, pos, pl.block)
    ssd = ssd_hits_between(pl, pos, end, m)
    ok = reads > 1e-9
    safe = jnp.where(ok, reads, 1.0)
    h_ram = jnp.where(ok, jnp.clip(ram / safe, 0.0, 1.0), st.h_ram)
    h_ssd = jnp.where(ok, jnp.clip(ssd / safe, 0.0, 1.0 - h_ram), st.h_ssd)
    X, lat = op_response(pl.dev, h_ram, h_ssd, N, Z, rf, wf, n_max)
    misses = jnp.maximum(reads - ram - ssd, 0.0)
    # the resident set never exceeds the distinct keys seen (m is held fixed inside a sample, so the
    # misses of a filling cache are over-counted by at most one sample's worth; this bound is exact)
    m_new = jnp.minimum(jnp.minimum(cap_units, m + misses), _cum1(pl.cum_distinct, end, pl.block))
    sig = pl.noise_sigma
    lat_obs = lat * jnp.exp(sig * eps - 0.5 * sig * sig)
    rec = {"latency_s": lat_obs, "latency_model_s": lat, "used_bytes": m_new * pl.unit_bytes,
           "ssd_hit_ratio": h_ssd, "ram_hit_ratio": h_ram, "ops_per_s": X, "reads_per_s": X * rf,
           "position": end}
    return PlantState(end, m_new, h_ram, h_ssd, exhausted), rec


def latency_vs_size(pl: Plant, p0, p1, phase, n_max: int):
    """Mean read latency (s) at every grid size for the reads in ``[p0, p1)`` (the master controller's
    latency-vs-size curve): the SSD hit ratio at each candidate size from the cumulative curves, then
    the closed loop at the phase's load. Returns ``(sizes_units (G,), latency_s (G,))``."""
    G = pl.cum_ssd.shape[1]
    sizes = jnp.arange(G, dtype=jnp.float64) * pl.step
    reads = jnp.maximum(_cum1(pl.cum_reads, p1, pl.block) - _cum1(pl.cum_reads, p0, pl.block), 1e-12)
    h_ram = jnp.clip((_cum1(pl.cum_ram, p1, pl.block) - _cum1(pl.cum_ram, p0, pl.block)) / reads, 0.0, 1.0)
    i0, w0 = _frac_index(p0, pl.block, pl.cum_ssd.shape[0])
    i1, w1 = _frac_index(p1, pl.block, pl.cum_ssd.shape[0])
    c = pl.cum_ssd
    hits = (c[i1] * (1 - w1) + c[i1 + 1] * w1) - (c[i0] * (1 - w0) + c[i0 + 1] * w0)
    h_ssd = jnp.clip(hits / reads, 0.0, 1.0 - h_ram)
    N, Z = pl.population[phase], pl.think_s[phase]
    lat = jax.vmap(lambda hs: op_response(pl.dev, h_ram, hs, N, Z, pl.read_frac[phase], pl.write_frac[phase],
                                          n_max)[1])(h_ssd)
    return sizes, lat


def hys_fields() -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(HybridStoreParams))
