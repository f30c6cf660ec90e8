"""vFRM: temperature-based Flash placement of 1 MB bins every 5-minute epoch, and the IO cost of Eq. 4.

vFRM paper (Tai et al.), Sec. 4.4 and 5.1; thesis Sec. 4.2. At the start of each epoch ``i`` (``m = 5``
minutes) every 1 MB bin gets the temperature ``T_i = sum_{j=1..N} λ M_{i-j} C_j`` (Eq. 1-3, ``N = 8``,
from :func:`tieringlab.models.temperature.temperatures`), the bins are re-ordered by temperature and the
hottest fill Flash (Sec. 4.4.2). During the epoch nothing moves: a request is a Flash hit only if all
its bins are in Flash, and misses go to the MD without admission (Table 2(a), vFRM row).

Operation counts (Table 2): read hit -> SSD read, read miss -> MD read, write hit -> SSD write, write
miss -> MD write, each request counted in ``ceil(size / access_io_bytes)`` IOs of 128 KB (Sec. 5.1: "the
basic IO sizes ... of vFRM are 128KB"); a bin moved in costs 8 x (MD read + SSD write) and a dirty bin
moved out 8 x (SSD read + MD write), 8 = 1 MB / 128 KB (Table 2(b), Sec. 5.1).

Documented choices where the paper is silent (fields of :class:`VfrmParams`):

* only bins with ``T_i > 0`` are candidates (a bin untouched for ``N`` epochs is not hot); ties in ``T_i``
  are broken by the lower bin number, so that the Flash content of size ``K`` bins is the first ``K`` of
  one ranking, and every Flash size of a sweep is a prefix of the same sort (one pass for all sizes);
* a bin in Flash becomes dirty when a write request that hits touches it; it stays dirty until it is
  moved out (then written back). Bins still in Flash at the end of the trace are not flushed;
* epochs are counted from the first request's time.

Implementation: arrays over (epoch, bin); the per-epoch ranking is one ``argsort`` along the bin axis,
hits of all Flash sizes come from one "worst rank of the request's bins" array, and the dirty state is a
``jax.lax.scan`` over epochs vectorized over bins. No loop per request or per bin.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import xarray as xr

from tieringlab.models import devices
from tieringlab.models.temperature import temperatures

__all__ = ["VfrmParams", "CostParams", "bin_accesses", "simulate", "io_cost"]

MiB = 1 << 20
KiB = 1 << 10


@dataclass(frozen=True)
class VfrmParams:
    """vFRM parameters with the paper's defaults."""

    bin_bytes: int = MiB  # 1 MB bins, vFRM Sec. 4.3 and 5.1 (the VMFS block size)
    epoch_s: float = 300.0  # m = 5 minutes per epoch, vFRM Sec. 4.4.2 and 5.1
    n_epochs: int = 8  # N = 8 past epochs in the heat map, vFRM Sec. 4.3
    lam: float = 1.0  # λ = 1: every workload equally important, vFRM Sec. 5.2.1
    migration_io_bytes: int = 128 * KiB  # a bin moves in 8 IOs of 128 KB, vFRM Sec. 5.1
    access_io_bytes: int = 128 * KiB  # vFRM's basic IO size for request access, vFRM Sec. 5.1

    def __post_init__(self):
        for name in ("bin_bytes", "migration_io_bytes", "access_io_bytes"):
            if getattr(self, name) <= 0:
                raise ValueError(f"VfrmParams.{name} must be > 0; got {getattr(self, name)}")
        if self.bin_bytes % self.migration_io_bytes:
            raise ValueError("VfrmParams.bin_bytes must be a multiple of migration_io_bytes")
        if self.epoch_s <= 0:
            raise ValueError(f"VfrmParams.epoch_s must be > 0 seconds; got {self.epoch_s}")


@dataclass(frozen=True)
class CostParams:
    """Which Table 3 latencies Eq. 4 uses (the paper does not say which of sequential and random).

    * ``access_pattern = "random"``: user requests of a VM arrive at scattered offsets, and a cache
      miss or write-back of one 4 KB page is a single isolated IO;
    * ``writeback_pattern = "random"``: LRU/ARC/CAR evict pages one at a time, wherever they are;
    * ``migration_pattern = "sequential"``: vFRM moves a 1 MB bin as 8 consecutive 128 KB IOs of one
      contiguous extent (Sec. 5.1: "large IOs (e.g., 128KB) can be employed ... to improve disk IO
      performance").
    """

    access_pattern: str = "random"
    writeback_pattern: str = "random"
    migration_pattern: str = "sequential"


def _check_trace(ds) -> None:
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"trace must be an xarray.Dataset with dim 'request'; got {type(ds).__name__}")
    missing = [v for v in ("time", "offset", "size", "is_write") if v not in ds]
    if missing:
        raise ValueError(f"trace is missing variable(s) {missing}; needs time, offset, size, is_write over 'request'")


def bin_accesses(ds: xr.Dataset, params: VfrmParams = VfrmParams()):
    """Split requests into the bins they touch: ``(bin_id, request, n_bins, epoch)``.

    ``bin_id`` is dense (0..B-1, in the order of the bin numbers ``offset // bin_bytes``); ``epoch`` is
    per request, ``floor((time - time[0]) / epoch_s)``.
    """
    _check_trace(ds)
    off = np.asarray(ds["offset"].values, np.int64)
    size = np.asarray(ds["size"].values, np.int64)
    if np.any(size <= 0):
        raise ValueError(f"trace variable 'size' must be > 0 bytes; request {int(np.argmax(size <= 0))} is not")
    t = np.asarray(ds["time"].values, np.float64)
    if np.any(np.diff(t) < 0):
        raise ValueError("trace variable 'time' must be non-decreasing along 'request'")
    first = off // params.bin_bytes
    n = (off + size - 1) // params.bin_bytes - first + 1
    req = np.repeat(np.arange(off.size), n)
    starts = np.cumsum(n) - n
    b = np.repeat(first, n) + (np.arange(req.size) - np.repeat(starts, n))
    _, bin_id = np.unique(b, return_inverse=True)
    epoch = np.floor((t - t[0]) / params.epoch_s).astype(np.int64) if t.size else np.zeros(0, np.int64)
    return bin_id.astype(np.int64), req, n, epoch


@jax.jit
def _dirty_scan(in_flash, write_hit):
    """dirty[e] = inF[e] & (written by a hit in e | (dirty[e-1] & inF[e-1])); returns dirty evictions.

    in_flash, write_hit: (E, B) bool. A bin moved out at the start of epoch e (in Flash during e-1 and
    not during e) is written back if it was dirty at the end of e-1.
    """

    def step(carry, xs):
        dirty_prev, in_prev = carry
        inf, wh = xs
        out_dirty = in_prev & ~inf & dirty_prev
        dirty = inf & (wh | (dirty_prev & in_prev))
        return (dirty, inf), out_dirty.sum()

    b = in_flash.shape[1]
    init = (jnp.zeros(b, bool), jnp.zeros(b, bool))
    _, n_out_dirty = jax.lax.scan(step, init, (in_flash, write_hit))
    return n_out_dirty


def simulate(ds: xr.Dataset, flash_bytes, params: VfrmParams = VfrmParams()) -> xr.Dataset:
    """Replay trace ``ds`` under vFRM for each Flash size (bytes; ``flash_bytes // bin_bytes`` bins).

    Returns a Dataset over ``flash_bytes`` with ``hits``, ``hit_ratio``, ``request_hit``, the Eq. 4
    counts ``n_ssd_read``, ``n_ssd_write``, ``n_md_read``, ``n_md_write`` (128 KB IOs, access and
    migration together), and ``n_bins_in``, ``n_bins_out``, ``n_bins_out_dirty`` (migrated bins).
    """
    fb = np.atleast_1d(np.asarray(flash_bytes, np.int64))
    k_bins = fb // params.bin_bytes
    if np.any(k_bins < 1):
        raise ValueError(f"flash_bytes must hold at least one {params.bin_bytes}-byte bin; got {flash_bytes!r}")
    bin_id, req, nb, epoch = bin_accesses(ds, params)
    n_req = int(nb.size)
    n_bins = int(bin_id.max()) + 1 if bin_id.size else 1
    n_ep = int(epoch.max()) + 1 if epoch.size else 1
    e_acc = epoch[req]
    counts = np.zeros((n_ep, n_bins), np.int64)
    np.add.at(counts, (e_acc, bin_id), 1)  # M_i: requests touching each bin per epoch
    temp = np.asarray(temperatures(counts, params.lam, params.n_epochs))  # (E, B), Eq. 1-3
    # rank of every bin in every epoch: hottest first, ties by lower bin id; T = 0 is never placed
    order = np.argsort(-temp, axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(n_bins)[None, :].repeat(n_ep, 0), axis=1)
    rank = np.where(temp > 0, rank, np.iinfo(np.int64).max)
    # a request hits with K bins iff the worst rank of its bins is < K (every size is a prefix)
    worst = np.full(n_req, -1, np.int64)
    np.maximum.at(worst, req, rank[e_acc, bin_id])
    request_hit = worst[None, :] < k_bins[:, None]  # (K, R)

    w = np.asarray(ds["is_write"].values, bool)
    size = np.asarray(ds["size"].values, np.int64)
    n_io = -(-size // params.access_io_bytes)
    per_bin_io = params.bin_bytes // params.migration_io_bytes
    rows = {k: [] for k in ("ssd_r", "ssd_w", "md_r", "md_w", "in", "out", "out_dirty")}
    for i, k in enumerate(k_bins):  # a handful of sizes; each is whole-array work
        hit = request_hit[i]
        in_flash = rank < k
        prev = np.vstack([np.zeros((1, n_bins), bool), in_flash[:-1]])
        n_in = int((in_flash & ~prev).sum())
        n_out = int((prev & ~in_flash).sum())
        write_hit = np.zeros((n_ep, n_bins), bool)
        sel = (w & hit)[req]
        write_hit[e_acc[sel], bin_id[sel]] = True
        n_out_dirty = int(np.asarray(_dirty_scan(jnp.asarray(in_flash), jnp.asarray(write_hit))).sum())
        rows["ssd_r"].append(int(n_io[hit & ~w].sum()) + per_bin_io * n_out_dirty)
        rows["ssd_w"].append(int(n_io[hit & w].sum()) + per_bin_io * n_in)
        rows["md_r"].append(int(n_io[~hit & ~w].sum()) + per_bin_io * n_in)
        rows["md_w"].append(int(n_io[~hit & w].sum()) + per_bin_io * n_out_dirty)
        rows["in"].append(n_in)
        rows["out"].append(n_out)
        rows["out_dirty"].append(n_out_dirty)
    out = xr.Dataset(
        {
            "hits": ("flash_bytes", request_hit.sum(axis=1)),
            "hit_ratio": ("flash_bytes", request_hit.mean(axis=1) if n_req else np.zeros(fb.size)),
            "n_ssd_read": ("flash_bytes", np.array(rows["ssd_r"])),
            "n_ssd_write": ("flash_bytes", np.array(rows["ssd_w"])),
            "n_md_read": ("flash_bytes", np.array(rows["md_r"])),
            "n_md_write": ("flash_bytes", np.array(rows["md_w"])),
            "n_bins_in": ("flash_bytes", np.array(rows["in"])),
            "n_bins_out": ("flash_bytes", np.array(rows["out"])),
            "n_bins_out_dirty": ("flash_bytes", np.array(rows["out_dirty"])),
            "request_hit": (("flash_bytes", "request"), request_hit),
        },
        coords={"flash_bytes": fb},
        attrs={"policy": "vfrm", "bin_bytes": params.bin_bytes, "epoch_s": params.epoch_s,
               "n_epochs": params.n_epochs, "lam": params.lam, "io_bytes": params.access_io_bytes,
               "migration_io_bytes": params.migration_io_bytes, "n_requests": n_req,
               "source": "vFRM paper Sec. 4.4, 5.1, Eq. 1-3, Table 2"},
    )
    out["flash_bytes"].attrs["units"] = "bytes"
    return out


def io_cost(result: xr.Dataset, cost: CostParams = CostParams()) -> xr.DataArray:
    """Overall IO cost ``C_IO`` of vFRM Eq. 4 in seconds, for a result of :func:`simulate` here or of
    :func:`tieringlab.policies.caching.simulate`.

    ``C_IO = N_SsdRd T_SsdRd + N_SsdWrt T_SsdWrt + N_MdRd T_MdRd + N_MdWrt T_MdWrt`` with the Table 3
    latencies (:func:`tieringlab.models.devices.vfrm_latency`) of the result's IO size (4 KB pages for
    LRU/ARC/CAR, 128 KB for vFRM). The access part uses ``cost.access_pattern``; the Flash update part
    uses ``cost.writeback_pattern`` (dirty page evictions) or ``cost.migration_pattern`` (bin moves).
    """
    def lat(dev, op, pattern, io):
        return devices.vfrm_latency(dev, op, pattern, io)

    if result.attrs.get("policy") == "vfrm":
        io = int(result.attrs["migration_io_bytes"])
        per_bin = int(result.attrs["bin_bytes"]) // io
        mig_in = per_bin * result["n_bins_in"]
        mig_out = per_bin * result["n_bins_out_dirty"]
        upd_pattern = cost.migration_pattern
        upd = (mig_in * (lat("md", "read", upd_pattern, io) + lat("ssd", "write", upd_pattern, io))
               + mig_out * (lat("ssd", "read", upd_pattern, io) + lat("md", "write", upd_pattern, io)))
        acc = dict(ssd_r=result["n_ssd_read"] - mig_out, ssd_w=result["n_ssd_write"] - mig_in,
                   md_r=result["n_md_read"] - mig_in, md_w=result["n_md_write"] - mig_out)
        io_acc = int(result.attrs["io_bytes"])
    else:
        io_acc = int(result.attrs["io_bytes"])
        wb = result["n_dirty_evictions"]
        p = cost.writeback_pattern
        upd = wb * (lat("ssd", "read", p, io_acc) + lat("md", "write", p, io_acc))
        acc = dict(ssd_r=result["n_ssd_read"] - wb, ssd_w=result["n_ssd_write"],
                   md_r=result["n_md_read"], md_w=result["n_md_write"] - wb)
    p = cost.access_pattern
    c = (acc["ssd_r"] * lat("ssd", "read", p, io_acc) + acc["ssd_w"] * lat("ssd", "write", p, io_acc)
         + acc["md_r"] * lat("md", "read", p, io_acc) + acc["md_w"] * lat("md", "write", p, io_acc) + upd)
    c.name = "io_cost"
    c.attrs.update(units="s", equation="vFRM Eq. 4", access_pattern=cost.access_pattern,
                   writeback_pattern=cost.writeback_pattern, migration_pattern=cost.migration_pattern)
    return c
