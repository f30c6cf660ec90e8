"""The VM workloads of the AutoTiering evaluation (AutoTiering paper Sec. V-A, Table V) as VMDK demands
that change over epochs, with explicit randomness.

Table V prints, for 14 IOMeter/FIO workloads, a load class, a represented scenario, the throughput
(IOPS) and the bandwidth ("BPS"). Everything else a simulator needs is a documented reading (reading
notes ``autotiering.md`` Sec. 1.6 and 6.4; none of it is a paper number):

- **IO size** ``s = BW / IOPS`` with ``M = 2^20`` bytes for BPS and ``K = 10^3`` for IOPS (SyncWrite's
  "16K" BPS read as 16 KiB): the quotients land on exact power-of-two sizes (4, 8, 64 KiB), so this is
  the unit reading that makes the table consistent.
- **Read fractions, phases, windows** ``q``: from the workload names and fio's example job files of the
  same names (reading notes Sec. 6.4 table), in :data:`BEHAVIOUR`.
- **VMDKs**: each VM has several VMDKs ("a system disk, datastore disk, ...", Sec. V-A): here two, a
  system VMDK (``system_size_bytes``, ``system_load_fraction`` of the VM's IOPS, 4 KiB, 50 % reads,
  window 1) and a data VMDK that carries the Table V workload.
- **Data VMDK sizes**: log-uniform in ``data_size_range_bytes`` (seeded), rescaled so that all VMDKs
  together fill ``fill_fraction`` of the tiers' raw capacity (tier 1 must not hold everything).
- **Offered load**: Table V's rates (with Zipf's fraction, below) sum to about 1.8x the device time of the
  tiers pooled into one device (:func:`pooled_utilisation`); every VMDK's rate is scaled by one factor to
  ``pooled_utilisation`` of it (0.7: busy, but servable; None keeps the printed rates, the overload reading).
- **Zipf IOs**: its 1942K IOPS exceed any Table IV disk eightfold (fio's ``zipf.fio`` uses the null
  engine); the device demand is ``zipf_device_fraction`` of it.
- **Dynamics** ("VMs are changing behaviors during runtime", "I/O spikes or bursties", Sec. III-B,
  IV-4): the offered rate of VMDK ``v`` in epoch ``tau`` is
  ``lam_v(tau) = lam_v * M_v(tau) * exp(sigma eps - sigma^2 / 2)``, ``eps ~ N(0, 1)``, where ``M_v`` is
  the rate multiplier of an MMPP(2) (:class:`tieringlab.models.mmpp.MMPP2`; phase 1 = spike with
  multiplier ``spike_factor``, phase 2 = normal with multiplier 1, a ``spike_probability`` share of the
  time in spikes whose mean length is ``spike_mean_epochs`` epochs) observed at the epoch grid
  (:meth:`~tieringlab.models.mmpp.MMPP2.sample_window_phases`); multi-phase jobs (write then verify,
  SSDTest's four steps) cycle through their phases every ``epochs_per_phase`` epochs from a random
  starting offset.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import xarray as xr

from tieringlab.models import allflash as af
from tieringlab.models.mmpp import MMPP2
from tieringlab.params import cross_field, field_problems, param
from tieringlab.units import GB, KiB, MiB

__all__ = [
    "TableVRow", "TABLE_V", "table_v", "BEHAVIOUR", "VM_COLUMNS", "vm_table", "check_vm_table",
    "WorkloadParams", "Vmdks", "make_vmdks", "pooled_utilisation", "mean_read_fraction", "offered_load", "spike_mmpp",
    "initial_placement", "scenario", "tiers_from_scenario",
]


@dataclass(frozen=True)
class TableVRow:
    """One row of AutoTiering Table V ("Resource demands of selected workloads")."""

    load: str                     #: load class, as printed (Heavy / Middle / Light)
    workload: str
    scenario: str                 #: "Represented Scenarios"
    iops: float                   #: "Thrupt. (IOPS)", K = 10^3
    bandwidth_bytes_per_s: float  #: "BW. (BPS)", M = 2^20 bytes (K = 2^10 for SyncWrite's 16K)
    iops_printed: str
    bandwidth_printed: str


#: AutoTiering paper Sec. V-A, Table V (14 workloads; numbers exactly as printed, oddities kept).
TABLE_V: tuple[TableVRow, ...] = (
    TableVRow("Heavy", "BasicVerify", "SQL database server", 95.5e3, 373 * MiB, "95.5K", "373M"),
    TableVRow("Heavy", "SSDSteady", "System development", 116e3, 453 * MiB, "116K", "453M"),
    TableVRow("Heavy", "Zipf IOs", "Web apps", 1942e3, 7585 * MiB, "1942K", "7585M"),
    TableVRow("Heavy", "AsyncRead", "Read intensive apps", 88.3e3, 345 * MiB, "88.3K", "345M"),
    TableVRow("Heavy", "AsyncWrite", "Write intensive apps", 6.65e3, 25 * MiB, "6.65K", "25M"),
    TableVRow("Middle", "Flow", "Big data frameworks", 19.2e3, 150 * MiB, "19.2K", "150M"),
    TableVRow("Middle", "IOmeter", "File server", 47e3, 205 * MiB, "47K", "205M"),
    TableVRow("Middle", "JESD", "High endurance apps", 18.3e3, 136 * MiB, "18.3K", "136M"),
    TableVRow("Middle", "LatencyProfile", "Cloud system manager", 39.6e3, 155 * MiB, "39.6K", "155M"),
    TableVRow("Middle", "SSDTest", "Hardware development", 47e3, 205 * MiB, "47K", "205M"),
    TableVRow("Light", "RandZone", "Multi-user database", 7.75e3, 30.3 * MiB, "7.75K", "30.3M"),
    TableVRow("Light", "SurfaceScan", "Enterprise backup server", 6.98e3, 436 * MiB, "6.98K", "436M"),
    TableVRow("Light", "SyncRead", "Read intensive sync apps", 6.65e3, 25 * MiB, "6.65K", "25M"),
    TableVRow("Light", "SyncWrite", "Metadata sync server", 4.0, 16 * KiB, "4", "16K"),
)


def table_v() -> pd.DataFrame:
    """Table V as printed (IOPS in IO/s, BPS in bytes/s under the M = 2^20 reading), indexed by workload."""
    return pd.DataFrame([asdict(r) for r in TABLE_V]).set_index("workload")


#: Readings for what Table V leaves out, per workload: read fraction of each phase and the window
#: ``q`` (outstanding IOs). From the names and fio's example jobs of the same names (reading notes
#: Sec. 6.4; [X/R], not paper numbers).
BEHAVIOUR: dict[str, tuple[tuple[float, ...], int]] = {
    "BasicVerify": ((0.0, 1.0), 16),          # write, then verify-read
    "SSDSteady": ((0.0,), 128),               # 4 KiB random write, steady state
    "Zipf IOs": ((1.0,), 32),
    "AsyncRead": ((1.0,), 32),
    "AsyncWrite": ((0.0,), 32),
    "Flow": ((8.0 / 9.0,), 256),              # randread : write = 8 : 1
    "IOmeter": ((0.8,), 16),                  # file-server profile
    "JESD": ((0.4,), 256),
    "LatencyProfile": ((1.0,), 32),
    "SSDTest": ((1.0, 1.0, 0.0, 0.0), 4),     # seq-read, rand-read, seq-write, rand-write
    "RandZone": ((1.0,), 1),
    "SurfaceScan": ((0.0, 1.0), 1),           # write, then verify-read, 64 KiB
    "SyncRead": ((1.0,), 1),
    "SyncWrite": ((0.0,), 1),
}

#: The columns a VM table needs (one row per VM; :func:`vm_table` builds the default one).
VM_COLUMNS = ("iops", "bandwidth_bytes_per_s", "read_fractions", "window")


def vm_table() -> pd.DataFrame:
    """Table V plus the readings of :data:`BEHAVIOUR`: ``iops``, ``bandwidth_bytes_per_s``, the derived
    ``io_bytes`` (= BW / IOPS), ``read_fractions`` (a tuple, one per phase) and ``window``."""
    df = table_v()[["load", "scenario", "iops", "bandwidth_bytes_per_s"]].copy()
    df["io_bytes"] = df["bandwidth_bytes_per_s"] / df["iops"]
    df["read_fractions"] = [BEHAVIOUR[w][0] for w in df.index]
    df["window"] = [BEHAVIOUR[w][1] for w in df.index]
    return df


def check_vm_table(table, *, name: str = "VM table (AutoTiering Table V)") -> None:
    """Bad input: a missing column, a non-positive or non-finite ``iops``/``bandwidth_bytes_per_s``/
    ``window``, or a read fraction outside [0, 1] raises ``ValueError`` naming the table, row and column."""
    cols = list(getattr(table, "columns", []))
    missing = [c for c in VM_COLUMNS if c not in cols]
    if missing:
        raise ValueError(f"{name}: missing column(s) {missing}; a VM table needs {list(VM_COLUMNS)}")
    if len(table) == 0:
        raise ValueError(f"{name}: no rows (at least one VM is needed)")
    for i, (label, row) in enumerate(table.iterrows()):
        for c in ("iops", "bandwidth_bytes_per_s", "window"):
            try:
                x = float(row[c])
            except (TypeError, ValueError):
                x = float("nan")
            if not (math.isfinite(x) and x > 0):
                raise ValueError(f"{name}: row {i} ({label}), column {c!r} must be a finite number > 0; got {row[c]!r}")
        fr = row["read_fractions"]
        fr = (fr,) if np.ndim(fr) == 0 else tuple(fr)
        if not fr or any(not (0.0 <= float(x) <= 1.0) for x in fr):
            raise ValueError(f"{name}: row {i} ({label}), column 'read_fractions' must be one or more fractions "
                             f"in [0, 1] (one per phase); got {row['read_fractions']!r}")


@dataclass(frozen=True)
class WorkloadParams:
    """Documented choices for the Table V workloads (reading notes Sec. 6.4; none is a paper number)."""

    system_size_bytes: float = param(40 * GB, "a VM's system disk ('system disk', Sec. V-A): 40 GB (documented "
                                              "choice)", bounds=(1.0, None), unit="bytes")
    system_load_fraction: float = param(0.01, "system VMDK load, a fraction of the VM's IOPS (documented choice)",
                                        bounds=(0.0, 1.0))
    system_io_bytes: float = param(4 * KiB, "system VMDK IO size (documented choice)", bounds=(1.0, None),
                                   unit="bytes")
    system_read_fraction: float = param(0.5, "system VMDK read fraction (documented choice)", bounds=(0.0, 1.0))
    system_window: float = param(1.0, "system VMDK outstanding IOs (documented choice)", bounds=(0.001, None))
    data_size_range_bytes: tuple[float, float] = param((50 * GB, 400 * GB), "log-uniform data VMDK sizes before "
                                                       "scaling to fill_fraction (documented choice)",
                                                       bounds=(1.0, None), unit="bytes")
    fill_fraction: float = param(0.6, "all VMDKs fill this share of the tiers' raw capacity (documented choice)",
                                 bounds=(0.05, 0.85))
    zipf_device_fraction: float = param(0.02, "Zipf IOs' device demand / its printed 1942K IOPS (fio's zipf.fio "
                                              "uses the null engine; documented choice)", bounds=(1e-4, 1.0))
    sigma: float = param(0.25, "lognormal epoch-to-epoch rate noise (documented choice)", bounds=(0.0, 2.0))
    spike_factor: float = param(3.0, "MMPP(2) spike rate multiplier ('I/O spikes', Sec. IV-4; documented choice)",
                                bounds=(1.0, 100.0))
    spike_probability: float = param(0.05, "share of VMDK-epochs in a spike (documented choice)",
                                     bounds=(0.001, 0.5))
    spike_mean_epochs: float = param(1.0, "mean spike length in epochs (documented choice)", bounds=(0.01, None))
    epochs_per_phase: int = param(10, "multi-phase jobs change phase every this many epochs (documented choice)",
                                  bounds=(1, 1000))
    pooled_utilisation: float | None = param(
        0.7, "offered load: every VMDK's Table V rate is scaled by one factor so that the tiers, pooled into one "
             "device, would be busy this share of their device time at the base rates (spikes add about 10 %); "
             "Table V's rates sum to about 1.8x what the tiers serve and Fig. 5's totals (100-150K IOPS) are far below "
             "Table V's 499K, so they cannot all be offered at once; 0.7: busy, but a placement decides which tier "
             "saturates (documented choice). None: Table V's rates as printed (the overload reading)",
        bounds=(0.01, 5.0))

    def __post_init__(self):
        cross_field(field_problems(self))
        if len(self.data_size_range_bytes) != 2 or not self.data_size_range_bytes[0] <= self.data_size_range_bytes[1]:
            cross_field([f"data_size_range_bytes must be (low, high) with 0 < low <= high; got "
                         f"{self.data_size_range_bytes!r}"])


class Vmdks(NamedTuple):
    """Static description of the VMDKs (shape (V,); VMDK ``2 i`` is VM ``i``'s system disk, ``2 i + 1``
    its data disk)."""

    vm: np.ndarray            #: VM (Table V row) of each VMDK
    is_data: np.ndarray       #: bool, the data VMDK carrying the workload
    size_bytes: jax.Array
    io_bytes: jax.Array
    window: jax.Array
    base_iops: jax.Array      #: offered IO/s before dynamics
    phase_read: jax.Array     #: (V, P) read fraction of each phase (padded by repetition)
    n_phases: jax.Array       #: (V,) int


def make_vmdks(key, table: pd.DataFrame, raw_capacity_bytes: float, wp: WorkloadParams = WorkloadParams()) -> Vmdks:
    """Two VMDKs per VM of ``table`` (:func:`vm_table` by default), sizes drawn with ``key``.

    Data VMDK sizes are log-uniform in ``wp.data_size_range_bytes`` and then scaled so that all VMDKs
    together are ``wp.fill_fraction * raw_capacity_bytes``; "Zipf IOs" offers ``zipf_device_fraction``
    of its printed IOPS.
    """
    check_vm_table(table)
    n_vm = len(table)
    names = list(table.index)
    iops = np.asarray(table["iops"], float).copy()
    for i, w in enumerate(names):
        if str(w).lower().startswith("zipf"):
            iops[i] *= wp.zipf_device_fraction
    io = np.asarray(table["bandwidth_bytes_per_s"], float) / np.asarray(table["iops"], float)
    phases = [tuple(np.atleast_1d(np.asarray(r, float))) for r in table["read_fractions"]]
    n_ph = np.array([len(p) for p in phases])
    pmax = int(n_ph.max())
    phase_read_vm = np.array([[p[k % len(p)] for k in range(pmax)] for p in phases])
    lo, hi = wp.data_size_range_bytes
    u = np.asarray(jax.random.uniform(key, (n_vm,), dtype=jnp.float64))
    data = np.exp(np.log(lo) + u * (np.log(hi) - np.log(lo)))
    target = wp.fill_fraction * raw_capacity_bytes - n_vm * wp.system_size_bytes
    if target <= 0:
        raise ValueError(f"fill_fraction x raw capacity ({wp.fill_fraction * raw_capacity_bytes:.4g} bytes) leaves "
                         f"no room for data VMDKs after {n_vm} system VMDKs of {wp.system_size_bytes:.4g} bytes")
    data = data * target / data.sum()
    vm = np.repeat(np.arange(n_vm), 2)
    is_data = np.tile([False, True], n_vm)
    size = np.where(is_data, data[vm], wp.system_size_bytes)
    return Vmdks(
        vm=vm, is_data=is_data,
        size_bytes=jnp.asarray(size),
        io_bytes=jnp.asarray(np.where(is_data, io[vm], wp.system_io_bytes)),
        window=jnp.asarray(np.where(is_data, np.asarray(table["window"], float)[vm], wp.system_window)),
        base_iops=jnp.asarray(np.where(is_data, iops[vm], wp.system_load_fraction * iops[vm])),
        phase_read=jnp.asarray(np.where(is_data[:, None], phase_read_vm[vm], wp.system_read_fraction)),
        n_phases=jnp.asarray(np.where(is_data, n_ph[vm], 1)),
    )


def pooled_utilisation(tiers: af.TierArrays, base_iops, io_bytes, read_frac) -> float:
    """The share of the tiers' device time the VMDKs would use if the tiers were one pooled device:
    ``sum_v lam_v (f_v / C_R(s_v) + (1 - f_v) / C_W(s_v))`` with ``C_d(s) = sum_t n_t / u_{t,d}(s)`` the pooled
    IO/s in direction ``d`` at IO size ``s`` (:func:`tieringlab.models.allflash.device_time`; the Table V limits
    per disk). Below 1 the tiers together could serve the load; each tier alone may still saturate."""
    u = np.asarray(af.device_time(tiers, np.asarray(io_bytes, float)))           # (T, 2, V)
    c = np.sum(np.asarray(tiers.n_disks)[:, None, None] / u, axis=0)             # (2, V) pooled IO/s
    f = np.asarray(read_frac, float)
    return float(np.sum(np.asarray(base_iops, float) * (f / c[0] + (1.0 - f) / c[1])))


def mean_read_fraction(vmdks: Vmdks) -> np.ndarray:
    """Each VMDK's read fraction averaged over its phases (V,)."""
    pr, n = np.asarray(vmdks.phase_read), np.asarray(vmdks.n_phases)
    return np.array([pr[v, : n[v]].mean() for v in range(pr.shape[0])])


def spike_mmpp(wp: WorkloadParams, epoch_s: float) -> MMPP2:
    """The MMPP(2) of rate multipliers: phase 1 (spike) multiplies the rate by ``spike_factor``, phase 2
    by 1; the spike phase holds ``spike_probability`` of the time (``pi_1 = r21 / (r12 + r21)``) and lasts
    ``spike_mean_epochs`` epochs on average (``r12 = 1 / (spike_mean_epochs epoch_s)``)."""
    r12 = 1.0 / (wp.spike_mean_epochs * epoch_s)
    p = wp.spike_probability
    return MMPP2(float(wp.spike_factor), 1.0, r12, r12 * p / (1.0 - p))


def offered_load(key, vmdks: Vmdks, n_epochs: int, epoch_s: float, wp: WorkloadParams = WorkloadParams()):
    """Per-epoch offered rate and read fraction of every VMDK: ``(lam (E, V) IO/s, read_frac (E, V),
    spike (E, V) bool, phase (E, V) int)``.

    ``lam = base_iops * M(tau) * exp(sigma eps - sigma^2/2)`` with ``M`` the spike MMPP(2)'s rate
    multiplier in force at the epoch (its phase chain sampled at the epoch grid, all VMDKs at once), and
    the read fraction of the phase ``floor((tau + offset_v) / epochs_per_phase) mod n_phases`` with a
    uniform random ``offset_v`` per VM. One key feeds all draws.
    """
    return _offered_load(key, vmdks.base_iops, vmdks.n_phases, vmdks.phase_read, jnp.asarray(vmdks.vm),
                         int(np.max(vmdks.vm)) + 1, int(n_epochs), float(epoch_s), wp)


@partial(jax.jit, static_argnames=("n_vm", "n_epochs", "epoch_s", "wp"))
def _offered_load(key, base_iops, n_phases, phase_read, vm, n_vm, n_epochs, epoch_s, wp):
    k_ph, k_eps, k_off = jax.random.split(key, 3)
    V = base_iops.shape[0]
    mm = spike_mmpp(wp, epoch_s)
    phase = mm.sample_window_phases(k_ph, n_epochs, epoch_s, shape=(V,))        # (E, V) 0 = spike
    mult = jnp.where(phase == 0, mm.lam1, mm.lam2)
    eps = jax.random.normal(k_eps, (n_epochs, V), dtype=jnp.float64)
    lam = base_iops[None, :] * mult * jnp.exp(wp.sigma * eps - 0.5 * wp.sigma**2)
    cycle = wp.epochs_per_phase * jnp.max(n_phases)
    off = jax.random.randint(k_off, (n_vm,), 0, cycle)[vm]
    tau = jnp.arange(n_epochs)[:, None]
    ph = ((tau + off[None, :]) // wp.epochs_per_phase) % n_phases[None, :]
    read = jnp.take_along_axis(phase_read, ph.T, axis=1).T
    return lam, read, phase == 0, ph


def initial_placement(key, size_bytes, cap_s):
    """A seeded random feasible placement, the same for every policy (reading notes 6.1): each VMDK
    draws a tier uniformly and is placed there if the storage cap ``cap_s`` (T,) allows, else on the
    first tier with room (:func:`tieringlab.models.allflash.first_fit`). Returns (V,) int tiers."""
    n_t = jnp.asarray(cap_s).shape[0]
    pref = jax.random.randint(key, (jnp.asarray(size_bytes).shape[0],), 0, n_t)
    tier, _, _ = af.first_fit(pref, size_bytes, cap_s)
    return tier


_TIER_VARS = af.TIER_COLUMNS + ("n_disks",)


def scenario(key, *, tier_table: pd.DataFrame, n_disks, vms: pd.DataFrame | None = None, n_epochs: int = 60,
             epoch_s: float = 300.0, gamma_s: float = 0.9, wp: WorkloadParams = WorkloadParams()) -> xr.Dataset:
    """The environment of one AutoTiering run as a labelled Dataset (the ``observations`` of the
    AutoTiering / IDT / EDT controllers): the tiers (``tier_table`` with ``n_disks``), the VMDKs of
    ``vms`` (:func:`vm_table` by default) with sizes drawn from ``key``, their base rates scaled by one factor
    (``attrs["load_scale"]``) to ``wp.pooled_utilisation`` of the pooled tiers (:func:`pooled_utilisation`; None:
    as printed), their offered load per epoch (:func:`offered_load`) and a random feasible initial placement
    under the storage caps ``gamma_s x raw capacity``. Dims ``epoch`` (``n_epochs`` monitor epochs of
    ``epoch_s`` seconds),
    ``vmdk``, ``tier``. Bad tables raise ``ValueError`` naming the table, row and column, as does a tier
    smaller than one VMDK."""
    vms = vm_table() if vms is None else vms
    tiers = af.tier_arrays(tier_table, n_disks)
    if isinstance(n_epochs, bool) or not isinstance(n_epochs, (int, np.integer)) or n_epochs < 1:
        raise ValueError(f"n_epochs must be a positive int; got {n_epochs!r}")
    if not epoch_s > 0:
        raise ValueError(f"epoch_s must be > 0 seconds; got {epoch_s!r}")
    raw = float(jnp.sum(tiers.n_disks * tiers.disk_bytes))
    k_size, k_load, k_place = jax.random.split(key, 3)
    vm = make_vmdks(k_size, vms, raw, wp)
    u_printed = pooled_utilisation(tiers, vm.base_iops, vm.io_bytes, mean_read_fraction(vm))
    load_scale = 1.0 if wp.pooled_utilisation is None else wp.pooled_utilisation / u_printed
    vm = vm._replace(base_iops=vm.base_iops * load_scale)
    cap_s = gamma_s * tiers.n_disks * tiers.disk_bytes
    names = list(vms.index)
    labels = [f"{names[i]}/{'data' if d else 'system'}" for i, d in zip(vm.vm, vm.is_data)]
    af.check_fits(vm.size_bytes, cap_s, vmdk_labels=labels, tier_labels=list(tier_table.index))
    lam, read, spike, phase = offered_load(k_load, vm, int(n_epochs), float(epoch_s), wp)
    place0 = initial_placement(k_place, vm.size_bytes, cap_s)
    tcols = {c: np.asarray(tier_table[c], float) for c in af.TIER_COLUMNS}
    tcols["n_disks"] = np.asarray(tiers.n_disks)
    ds = xr.Dataset(
        {**{c: ("tier", v) for c, v in tcols.items()},
         "size_bytes": ("vmdk", np.asarray(vm.size_bytes)), "io_bytes": ("vmdk", np.asarray(vm.io_bytes)),
         "window": ("vmdk", np.asarray(vm.window)), "base_iops": ("vmdk", np.asarray(vm.base_iops)),
         "initial_tier": ("vmdk", np.asarray(place0)),
         "offered_iops": (("epoch", "vmdk"), np.asarray(lam)), "read_fraction": (("epoch", "vmdk"), np.asarray(read)),
         "spike": (("epoch", "vmdk"), np.asarray(spike)), "phase": (("epoch", "vmdk"), np.asarray(phase))},
        coords={"epoch": np.arange(int(n_epochs)), "tier": np.asarray(tier_table.index), "vmdk": np.arange(len(labels)),
                "vm": ("vmdk", vm.vm), "workload": ("vmdk", np.asarray(names, dtype=object)[vm.vm].astype(str)),
                "is_data": ("vmdk", vm.is_data), "label": ("vmdk", np.asarray(labels))})
    units = {"read_bytes_per_s": "bytes/s", "write_bytes_per_s": "bytes/s", "disk_size_bytes": "bytes",
             "read_iops": "IO/s", "write_iops": "IO/s", "size_bytes": "bytes", "io_bytes": "bytes",
             "base_iops": "IO/s", "offered_iops": "IO/s"}
    for k, u in units.items():
        ds[k].attrs["units"] = u
    ds["initial_tier"].attrs["long_name"] = "initial tier (0-based position in the tier table)"
    ds.attrs.update(epoch_s=float(epoch_s), gamma_s=float(gamma_s), load_scale=float(load_scale),
                    pooled_utilisation_printed=float(u_printed),
                    source="AutoTiering paper Table IV (tiers), Table V (workloads); readings of autotiering.md 6.4")
    return ds


def tiers_from_scenario(ds: xr.Dataset) -> af.TierArrays:
    """The :class:`~tieringlab.models.allflash.TierArrays` of a :func:`scenario` Dataset (seed-free:
    the tiers are the same for every seed)."""
    missing = [c for c in _TIER_VARS if c not in ds]
    if missing:
        raise ValueError(f"scenario Dataset: missing tier variable(s) {missing}")
    cols = {}
    for c in _TIER_VARS:
        da = ds[c]
        if "seed" in da.dims:
            da = da.isel(seed=0)
        cols[c] = da.values
    return af.tier_arrays(cols, name="scenario tier table")
