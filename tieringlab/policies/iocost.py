"""IO cost of a flash manager, vFRM paper Eq. 4 (thesis Sec. 4.2.3.1), from the Table 3 latencies.

    C_IO = C_IOAccess + C_FlashUpdate
         = N_SsdRd T_SsdRd + N_SsdWrt T_SsdWrt + N_MdRd T_MdRd + N_MdWrt T_MdWrt        (Eq. 4)

The ``T`` terms are the measured average response times of vFRM paper Table 3
(:func:`tieringlab.models.devices.vfrm_latency`); the ``N`` terms are operation counts produced by a
policy, following Table 2:

(a) IO access:   LRU/ARC/CAR (4 KB pages): read hit -> SSD read; read miss -> MD read + SSD write;
                 write (hit or miss) -> SSD write.
                 vFRM/GLB-vFRM/G2-vFRM: hit -> SSD read/write; miss -> MD read/write (no admission).
(b) Flash update: LRU/ARC/CAR: evicting a dirty page -> SSD read + MD write.
                 vFRM family: moving a bin in -> 8 x (MD read + SSD write) of 128 KB; moving a cold
                 dirty bin out -> 8 x (SSD read + MD write) of 128 KB (Sec. 5.1).

**Count names (the contract between policies and this module).** A counts mapping or
``xarray.Dataset`` holds

- ``ssd_reads``, ``ssd_writes``, ``md_reads``, ``md_writes``: operations costed at
  :attr:`CostModel.io_bytes` with :attr:`CostModel.access_pattern` (for LRU/ARC/CAR: every 4 KB page
  operation of Table 2(a) *and* (b), since both are 4 KB page IOs);
- optionally ``update_ssd_reads``, ``update_ssd_writes``, ``update_md_reads``, ``update_md_writes``:
  Flash-update operations costed at :attr:`CostModel.update_io_bytes` with
  :attr:`CostModel.update_pattern` (vFRM bin migrations, 128 KB each). Missing ones count as zero;
- optionally ``cont_ssd_reads``, ``cont_ssd_writes``, ``cont_md_reads``, ``cont_md_writes``
  (:data:`CONTINUATION_NAMES`): the part of each access count that *continues a run*, an operation of a
  multi-IO request whose previous IO in the same request was the same operation on the same device
  (pages 2..n of a 64 KB read miss: MD read after MD read, SSD write after SSD write). Only the
  ``"sequential_runs"`` pricing reads them.

**Pricing of multi-IO requests** (:data:`IO_PRICINGS`, a documented choice that decides verdicts; the
paper says only that the page caches' ``T`` terms are 4 KB IOs and vFRM's 128 KB IOs, Sec. 5.1):

- ``"random"`` (default): every access operation at the model's access row (random): a 64 KB read miss
  of a page cache is 16 x (MD read + SSD write) at the 4 KB random row, 16 x (7671 + 58) us = 124 ms;
- ``"sequential_runs"``: the first IO of a run at the access row, the IOs that continue it at the
  sequential row of the same size (a request is one contiguous extent): the same miss costs
  (7671 + 58) + 15 x (63 + 59) us = 9.6 ms. vFRM's 128 KB IOs are priced the same way.

:data:`CACHE_COST` (4 KB, random everywhere) is the model for the page caches and :data:`VFRM_COST`
(128 KB; user IO random, bin migrations sequential) the one for the vFRM family.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from tieringlab.models.devices import vfrm_latency

__all__ = ["CostModel", "CACHE_COST", "VFRM_COST", "ACCESS_NAMES", "UPDATE_NAMES", "CONTINUATION_NAMES",
           "IO_PRICINGS", "io_cost", "update_cost", "latencies"]

#: Access-cost counts (Table 2(a); also the 4 KB dirty-page write-backs of the page caches).
ACCESS_NAMES = ("ssd_reads", "ssd_writes", "md_reads", "md_writes")
#: Flash-update counts costed separately (Table 2(b), vFRM migrations).
UPDATE_NAMES = ("update_ssd_reads", "update_ssd_writes", "update_md_reads", "update_md_writes")
#: The part of each access count that continues a run (see the module docstring), in ACCESS_NAMES order.
CONTINUATION_NAMES = ("cont_ssd_reads", "cont_ssd_writes", "cont_md_reads", "cont_md_writes")
#: How the IOs of a multi-IO request are priced (module docstring): every one at the access row, or
#: runs priced at the sequential row after their first IO.
IO_PRICINGS = ("random", "sequential_runs")
_DEV_OP = (("ssd", "read"), ("ssd", "write"), ("md", "read"), ("md", "write"))
_PATTERNS = ("sequential", "random")


@dataclass(frozen=True)
class CostModel:
    """Which row of vFRM Table 3 prices which operation.

    ``io_bytes`` / ``update_io_bytes``: 4096 or 131072 (Sec. 5.1: "the basic IO sizes for the
    conventional caching algorithms and vFRM/GLB-vFRM are specified as 4KB and 128KB").
    ``access_pattern`` / ``update_pattern``: ``"sequential"`` or ``"random"``; the paper does not say
    which rows it used, so each is a documented choice (see :data:`CACHE_COST`, :data:`VFRM_COST`).
    """

    io_bytes: int = 4096
    access_pattern: str = "random"
    update_io_bytes: int = 4096
    update_pattern: str = "random"

    def __post_init__(self):
        for name in ("access_pattern", "update_pattern"):
            if getattr(self, name) not in _PATTERNS:
                raise ValueError(f"{name} must be one of {list(_PATTERNS)}, got {getattr(self, name)!r}")
        for name in ("io_bytes", "update_io_bytes"):
            vfrm_latency("ssd", "read", "random", getattr(self, name))  # raises naming the allowed sizes


#: LRU/ARC/CAR: 4 KB page IOs (Sec. 5.1). Random for user IO: trace requests land at scattered
#: addresses and each cache line is its own IO; random for dirty-page write-backs too: an evicted page
#: goes back to its own home address on the disk, not next to the previous eviction.
CACHE_COST = CostModel(io_bytes=4096, access_pattern="random", update_io_bytes=4096, update_pattern="random")

#: vFRM family: 128 KB IOs (Sec. 5.1: "all T terms for ... vFRM/GLB-vFRM are the corresponding disk
#: performance of ... 128KB IOs"). User IO hits/misses are random (scattered trace addresses); a bin
#: migration is sequential: its 8 x 128 KB IOs read/write one contiguous 1 MB VMFS block.
VFRM_COST = CostModel(io_bytes=128 << 10, access_pattern="random", update_io_bytes=128 << 10,
                      update_pattern="sequential")


def latencies(io_bytes: int, pattern: str) -> tuple[float, float, float, float]:
    """(T_SsdRd, T_SsdWrt, T_MdRd, T_MdWrt) in seconds for one Table 3 row."""
    return tuple(vfrm_latency(d, o, pattern, io_bytes) for d, o in _DEV_OP)


def _get(counts, name, required):
    try:
        v = counts[name]
    except KeyError:
        if required:
            have = list(counts.keys()) if hasattr(counts, "keys") else list(getattr(counts, "data_vars", []))
            raise KeyError(f"counts must hold {name!r} (IO cost names: {list(ACCESS_NAMES)} and optional "
                           f"{list(UPDATE_NAMES)}); got {have}") from None
        return 0
    return v


def io_cost(counts: Mapping, model: CostModel = CACHE_COST, io_pricing: str = "random"):
    """Total IO cost ``C_IO`` of vFRM Eq. 4, in **seconds**.

    ``counts`` is a mapping or ``xarray.Dataset`` with the count names of this module's docstring
    (``ssd_reads``, ``ssd_writes``, ``md_reads``, ``md_writes`` required; ``update_*`` optional);
    values may be scalars, numpy arrays or ``xarray.DataArray`` (the result then has their shape /
    labels, e.g. one cost per flash size). ``model`` picks the Table 3 rows (:data:`CACHE_COST` for
    LRU/ARC/CAR, :data:`VFRM_COST` for the vFRM family). ``io_pricing`` (:data:`IO_PRICINGS`):
    ``"random"`` prices every access operation at the model's access row; ``"sequential_runs"``
    prices the ``cont_*`` part of each access count (required then) at the sequential row of the same
    IO size and the rest at the access row.
    """
    if not isinstance(model, CostModel):
        raise TypeError(f"model must be a CostModel (e.g. CACHE_COST or VFRM_COST), got {type(model).__name__}")
    if io_pricing not in IO_PRICINGS:
        raise ValueError(f"io_pricing must be one of {list(IO_PRICINGS)}, got {io_pricing!r}")
    total = 0.0
    for names, size, pattern, required in ((ACCESS_NAMES, model.io_bytes, model.access_pattern, True),
                                           (UPDATE_NAMES, model.update_io_bytes, model.update_pattern, False)):
        for name, t in zip(names, latencies(size, pattern)):
            n = _get(counts, name, required)
            if np.any(np.asarray(n) < 0):
                raise ValueError(f"counts[{name!r}] must be non-negative operation counts")
            total = total + n * t
    if io_pricing == "sequential_runs":
        seq = latencies(model.io_bytes, "sequential")
        first = latencies(model.io_bytes, model.access_pattern)
        for name, cname, t_seq, t_first in zip(ACCESS_NAMES, CONTINUATION_NAMES, seq, first):
            c = _get(counts, cname, True)
            n = _get(counts, name, True)
            if np.any(np.asarray(c) < 0) or np.any(np.asarray(c) > np.asarray(n)):
                raise ValueError(f"counts[{cname!r}] must be between 0 and counts[{name!r}]")
            total = total + c * (t_seq - t_first)
    return total


def update_cost(counts: Mapping, model: CostModel = CACHE_COST):
    """``C_FlashUpdate``, the Table 2(b) part of :func:`io_cost`, in **seconds**.

    With ``update_*`` counts (the vFRM family's bin migrations) they are priced at the model's update
    rows. Without them, ``counts`` must hold ``dirty_evictions`` (the page caches, whose write-backs are
    also inside their access counts): each costs one SSD read + one MD write at the update rows.
    """
    if any(name in counts for name in UPDATE_NAMES):
        parts = {name: _get(counts, name, False) for name in UPDATE_NAMES}
    else:
        d = _get(counts, "dirty_evictions", True)
        parts = {"update_ssd_reads": d, "update_md_writes": d}
    zero = {name: 0 for name in ACCESS_NAMES}
    return io_cost({**zero, **parts}, model)
