"""The papers' device and tier catalogs as data with units, in one place.

Every number below is typed from a table of a paper (cited at each catalog) and converted to the
library's units: **seconds, bytes, bytes/second, IO/second**; prices stay in **US dollars per GB**
as the paper prints them. Each record also keeps the paper's printed value where a unit choice was
needed, so a reader can check the conversion.

Unit choices (the papers do not say which "K", "M", "G" they mean; the constants are those of
:mod:`tieringlab.units`):

- Capacities, bandwidths and service rates are **decimal** (``KB = 10**3``, ``MB = 10**6``,
  ``GB = 10**9``, ``TB = 10**12`` bytes), the convention of SSD datasheets (AutoTiering Tables I and IV
  list vendor products) and the one AutoTiering Alg. 1 line 31 uses (bandwidth = IOPS x size / 10^6 in
  MBPS). LMST states rates in KB/ms and Table 4 in MB/s; any consistent ``K`` makes them equal, and
  decimal keeps 500 MB/s = 500 KB/ms exactly.
- IO sizes in the vFRM latency table are **binary** (4K = 4 KiB = 4096 bytes, 128K = 128 KiB =
  131072 bytes): they are the 4 KB cache line and the 128 KB migration IO of which 8 make the 1 MB
  VMFS block (vFRM paper Sec. 5.1: "8 IOs ... as each IO operation is 128KB and the bin size is 1MB").

Catalogs:

- :data:`AUTOTIERING_SSD_TYPES` — AutoTiering paper Table I (SSD types, July 2017).
- :data:`AUTOTIERING_TIERS` — AutoTiering paper Table IV (the three flash tiers of the evaluation).
- :data:`VFRM_LATENCY_US` / :func:`vfrm_latency` — vFRM paper Table 3 (= thesis Table 11): measured
  average response times of SSD and magnetic-disk (MD) reads and writes by IO size and pattern, the
  ``T`` terms of the IO cost model, vFRM Eq. 4.
- :data:`LMST_TIERS` — thesis Table 4 (LMST's SSD and FC tiers).

Tables as ``pandas.DataFrame``: :func:`autotiering_ssd_table`, :func:`autotiering_tier_table`,
:func:`vfrm_latency_table`, :func:`lmst_tier_table` (units in the column names).
"""

from __future__ import annotations

import operator
from dataclasses import asdict, dataclass

import pandas as pd

from tieringlab.units import GB, MB, TB, US, KiB

__all__ = [
    "SsdType", "AUTOTIERING_SSD_TYPES", "autotiering_ssd_table",
    "FlashTier", "AUTOTIERING_TIERS", "autotiering_tier_table",
    "VFRM_SSD", "VFRM_MD", "VFRM_LATENCY_US", "vfrm_latency", "vfrm_latency_table",
    "DiskTier", "LMST_TIERS", "lmst_tier_table",
]



# ----------------------------------------------------------------------------- AutoTiering Table I


@dataclass(frozen=True)
class SsdType:
    """One row of AutoTiering Table I ("Performance and cost of different SSDs in July 2017")."""

    name: str
    cost_usd_per_gb: float  #: "Cost ($/GB)", as printed
    max_size_bytes: int  #: "Max Size (Bytes)", decimal (375G = 375e9 bytes)
    read_time_s: float  #: "Read Time (µs)", converted to seconds
    write_time_s: float  #: "Write Time (µs)", converted to seconds
    max_size_printed: str  #: the paper's text for the size, e.g. "3.2T"


#: AutoTiering paper Sec. II, Table I.
AUTOTIERING_SSD_TYPES: tuple[SsdType, ...] = (
    SsdType("3D XPoint", 4.50, 375 * GB, 10 * US, 10 * US, "375G"),
    SsdType("NVMe", 0.57, 3200 * GB, 20 * US, 20 * US, "3.2T"),
    SsdType("SLC SATA3", 0.64, 480 * GB, 25 * US, 250 * US, "480G"),
    SsdType("MLC SATA3", 0.30, 2 * TB, 50 * US, 750 * US, "2T"),
    SsdType("TLC SATA3", 0.28, 3840 * GB, 75 * US, 1125 * US, "3.84T"),
)


def autotiering_ssd_table() -> pd.DataFrame:
    """AutoTiering Table I as a DataFrame indexed by SSD type (units in column names)."""
    return pd.DataFrame([asdict(s) for s in AUTOTIERING_SSD_TYPES]).set_index("name")


# ----------------------------------------------------------------------------- AutoTiering Table IV


@dataclass(frozen=True)
class FlashTier:
    """One row of AutoTiering Table IV ("Multi-tier flash drivers configuration"); per-disk figures
    (each tier has several such disks, Sec. V-A)."""

    tier: int  #: 1 = fastest; the paper's tier order is its migration priority order (Sec. IV-4)
    model: str
    protocol: str
    read_iops: float  #: "IOPS R" (240K = 240,000 IO/s)
    write_iops: float  #: "IOPS W"
    read_bytes_per_s: float  #: "MBPS R", decimal MB/s converted to bytes/s
    write_bytes_per_s: float  #: "MBPS W"
    disk_size_bytes: int  #: "PerDisk Size (GB)", decimal


#: AutoTiering paper Sec. V-A, Table IV.
AUTOTIERING_TIERS: tuple[FlashTier, ...] = (
    FlashTier(1, "Samsung PM953", "NVMe", 240e3, 19e3, 1000 * MB, 870 * MB, 480 * GB),
    FlashTier(2, "Samsung PM1633", "SAS", 200e3, 37e3, 1400 * MB, 930 * MB, 960 * GB),
    FlashTier(3, "Samsung PM863", "SATA", 99e3, 18e3, 540 * MB, 480 * MB, 960 * GB),
)


def autotiering_tier_table() -> pd.DataFrame:
    """AutoTiering Table IV as a DataFrame indexed by tier number."""
    return pd.DataFrame([asdict(t) for t in AUTOTIERING_TIERS]).set_index("tier")


# ----------------------------------------------------------------------------- vFRM Table 3

#: The SSD behind vFRM Table 3 (vFRM paper Sec. 5.1): Intel DC S3500 Series, 80 GB.
VFRM_SSD = {"model": "Intel DC S3500 Series", "capacity_bytes": 80 * GB}
#: The magnetic disk (MD) behind vFRM Table 3: Western Digital WD20EURS-63S48Y0, 2 TB, 5400 RPM.
VFRM_MD = {"model": "Western Digital WD20EURS-63S48Y0", "capacity_bytes": 2 * TB, "rpm": 5400}

_DEVICES = ("ssd", "md")
_OPS = ("read", "write")
_PATTERNS = ("sequential", "random")
_IO_BYTES = (4 * KiB, 128 * KiB)

#: vFRM paper Table 3 (thesis Table 11), in microseconds as printed:
#: ``VFRM_LATENCY_US[(io_bytes, pattern)] = (T_SsdRead, T_SsdWrt, T_MdRead, T_MdWrt)``.
VFRM_LATENCY_US: dict[tuple[int, str], tuple[int, int, int, int]] = {
    (4 * KiB, "sequential"): (53, 59, 63, 92),
    (128 * KiB, "sequential"): (558, 1242, 1070, 1104),
    (4 * KiB, "random"): (135, 58, 7671, 3922),
    (128 * KiB, "random"): (790, 1241, 8665, 4942),
}


def _choice(name: str, value, allowed):
    if isinstance(value, str):
        value = value.lower()
    if value not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)} (vFRM paper Table 3), got {value!r}")
    return value


def vfrm_latency(device: str, op: str, pattern: str, io_bytes: int) -> float:
    """Average response time in **seconds** of one IO, from vFRM paper Table 3 (thesis Table 11).

    ``device``: ``"ssd"`` (Flash) or ``"md"`` (magnetic disk); ``op``: ``"read"`` or ``"write"``;
    ``pattern``: ``"sequential"`` or ``"random"``; ``io_bytes``: 4096 (the 4 KB cache line of
    LRU/ARC/CAR) or 131072 (vFRM's 128 KB migration IO). These are the ``T`` terms of the IO cost,
    vFRM Eq. 4: ``C_IO = N_SsdRd T_SsdRd + N_SsdWrt T_SsdWrt + N_MdRd T_MdRd + N_MdWrt T_MdWrt``.
    Any other value raises ``ValueError`` naming the parameter and the values the table has.

    >>> vfrm_latency("md", "read", "random", 4096)  # 7671 µs
    0.007671
    """
    device = _choice("device", device, _DEVICES)
    op = _choice("op", op, _OPS)
    pattern = _choice("pattern", pattern, _PATTERNS)
    try:
        size = None if isinstance(io_bytes, bool) else operator.index(io_bytes)
    except TypeError:
        size = None
    if size not in _IO_BYTES:
        raise ValueError(
            f"io_bytes must be one of {list(_IO_BYTES)} (vFRM paper Table 3: 4K and 128K IOs), got {io_bytes!r}")
    io_bytes = size
    col = _DEVICES.index(device) * 2 + _OPS.index(op)
    return VFRM_LATENCY_US[(io_bytes, pattern)][col] * US


def vfrm_latency_table() -> pd.DataFrame:
    """vFRM Table 3 as a long DataFrame: ``device, op, pattern, io_bytes, latency_s``."""
    rows = [
        {"device": d, "op": o, "pattern": p, "io_bytes": b, "latency_s": vfrm_latency(d, o, p, b)}
        for b in _IO_BYTES for p in _PATTERNS for d in _DEVICES for o in _OPS
    ]
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- LMST Table 4


@dataclass(frozen=True)
class DiskTier:
    """One row of thesis Table 4 ("Device parameters of two tiers"), used by LMST (Sec. 4.1.3).

    ``service_rate_bytes_per_s`` is ``μ_{D_j}`` of Eq. 6-9 and 17 for each disk of the tier (the thesis
    gives μ per disk, in KB/ms, in its Table 3 of notations; 500 MB/s = 500 KB/ms).
    ``total_capacity_bytes`` is the column "Total Capacity" as printed, read as the whole tier's
    capacity (so 20 GB per disk in both tiers, an inference). Sec. 4.1.3 also speaks of "the total
    100GB storage capacity", which matches the FC tier alone, not the 140 GB sum.
    """

    disk_type: str
    disk_number: int
    total_capacity_bytes: int  #: "Total Capacity", decimal GB
    service_rate_bytes_per_s: float  #: "Service Rate", decimal MB/s converted to bytes/s

    @property
    def capacity_per_disk_bytes(self) -> float:
        """``total_capacity_bytes / disk_number`` (under the whole-tier reading of the column)."""
        return self.total_capacity_bytes / self.disk_number


#: Thesis Sec. 4.1.3, Table 4.
LMST_TIERS: tuple[DiskTier, ...] = (
    DiskTier("SSD", 2, 40 * GB, 500 * MB),
    DiskTier("FC", 5, 100 * GB, 160 * MB),
)


def lmst_tier_table() -> pd.DataFrame:
    """Thesis Table 4 as a DataFrame indexed by disk type."""
    return pd.DataFrame([asdict(t) for t in LMST_TIERS]).set_index("disk_type")
