"""The OTF-AST testbed as latency/queueing models: an HDD RAID0, an MLC SSD, the temporary buffer.

OTF-AST paper (Oe et al., Fujitsu Laboratories; OCR text, reading notes ``notes/otf_ast.md``):
Table 1 gives the hardware, a RAID0 of **4 SAS 10,000 rpm disks of 450 GB** behind an HBA and an
**Intel 520 MLC SSD** (240 GB), and the time to copy one **1 GB sub-LUN** with no user IO:
**2-3 s HDD->SSD and 6-7 s SSD->HDD** (unit read as seconds, notes Sec. 1.6, M). Sec. 3.3.2 adds the
**temporary buffer** (host RAM, one sub-LUN in size, a bitmap of one bit per 512 B) that absorbs the
writes to a sub-LUN while it moves, then is synced to the destination at **<= 500 IOPS**.

Everything here is in seconds and bytes. The paper gives no device internals; every number below that
is not in Table 1 is a named field with a one-line reason (C = a choice, notes Sec. 6.3).

HDD (:class:`Raid0Hdd`)
-----------------------
- **Striping**: LUN byte ``x`` is in stripe unit ``k = x // stripe_bytes``, on disk ``k mod n_disks`` at
  disk byte ``(k // n_disks) * stripe_bytes + x mod stripe_bytes`` (the LUN sits at the start of each
  disk, so only its outer part is used: short-stroking). A request becomes one *piece* per disk it touches
  (:func:`raid0_pieces`; stripe units of one request on one disk are contiguous there).
- **Per-disk FIFO** queue (:func:`fifo_departures`, the Lindley recursion as prefix ops):
  the order a disk serves its pieces is their arrival order, so the head position before each piece,
  hence its seek, is known before the queue is solved.
- **Service time** of a piece of ``b`` bytes, after the piece served before it on its disk ended at
  disk byte ``e`` (:func:`hdd_service_times`):

  * read found in the disk's **read cache** (an LRU of ``cache_segment_bytes`` segments, ``cache_bytes``
    per disk, filled by reads: the read cache/read-ahead the notes, Sec. 4.8, argue the model needs):
    ``cache_hit_s + b / bus_bytes_per_s``;
  * **sequential** (starts at ``e``): ``b / seq_read_bytes_per_s`` or ``b / seq_write_bytes_per_s``,
    the streaming rates that make a no-load 1 GB copy take Table 1's time (:meth:`Raid0Hdd.from_table1`);
  * otherwise ``seek(d) + U * rev_s + b / media_bytes_per_s`` (+ ``write_settle_s`` for a write), with
    ``seek(d) = seek_min_s + (seek_max_s - seek_min_s) * sqrt(d / disk_bytes)`` for a distance ``d > 0``
    and ``U`` uniform on [0, 1) (rotational latency, one draw per request and disk: common random numbers
    across policies).
- The **write cache is off** (C): writes pay the mechanism; that gives the read/write asymmetry of the
  Table 1 copy times (2.5 s up, 6.5 s down).

SSD (:class:`MlcSsd`): ``channels`` independent FIFO servers, jobs dealt round-robin in arrival order;
a job of ``b`` bytes holds a channel for a fixed part plus ``b * channels / bytes_per_s`` (the channels
share the device bandwidth). Never the bottleneck here.

Temporary buffer: ``buffer_s`` per IO, no queue (RAM). Every user IO also pays ``driver_s`` (the
tiering driver, device-mapper).

Copies (kcopyd): ``copy_chunk_bytes`` chunks, read from the source and written to the destination, that
share the disks' FIFO queues with user IO (:func:`copy_jobs`), issued in batches of ``copy_batch_bytes``
(a CFQ-like time slice for the sequential stream, so a copy stays sequential on the disks while user IO
waits for the slice; one chunk per batch is the plain FIFO interleaving, notes Sec. 6.3). With no user IO
a copy is limited by the HDD side: ``T_up = SUBLUN / (n_disks * seq_read_bytes_per_s)`` and
``T_down = SUBLUN / (n_disks * seq_write_bytes_per_s)`` (:func:`no_load_copy_s`, a closed form the tests
check against the queue).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import jax
import numpy as np

from tieringlab.models.stackdist import stack_distances
from tieringlab.units import GB, MB, SUBLUN_BYTES, US, KiB, MiB

__all__ = ["Raid0Hdd", "MlcSsd", "Testbed", "TABLE1", "raid0_pieces", "hdd_service_times", "hdd_queue",
           "ssd_queue", "fifo_departures", "no_load_copy_s", "copy_jobs", "busy_per_second", "serve", "HDD", "SSD",
           "BUFFER", "buffer_read_hits"]

#: Routes of a user IO (what :func:`serve` is told for each request).
HDD, SSD, BUFFER = 0, 1, 2

#: OTF-AST paper Table 1 as printed (L148-164; copy-time unit read as seconds, notes Sec. 1.6).
TABLE1 = {
    "server": "Fujitsu PRIMERGY TX300 S7", "cpu": "2 x Intel Xeon E5-2650L", "memory_bytes": 32 * GB,
    "hdd": "4 x SAS 10,000 rpm 450 GB, RAID0", "ssd": "Intel 520 (MLC) 240 GB", "os": "CentOS 5.4 64-bit",
    "copy_up_s": (2.0, 3.0),      # 1 GB sub-LUN HDD -> SSD, no user IO
    "copy_down_s": (6.0, 7.0),    # 1 GB sub-LUN SSD -> HDD, no user IO
}


@dataclass(frozen=True)
class Raid0Hdd:
    """RAID0 of SAS 10k disks (OTF-AST Table 1); fields not in Table 1 are choices (C), notes Sec. 6.3."""

    n_disks: int = 4                          # Table 1: 4 SAS disks, RAID0
    disk_bytes: int = 450 * GB                # Table 1: 450 GB each (vendor GB, decimal)
    rpm: float = 10_000.0                     # Table 1: 10,000 rpm -> 6 ms per revolution
    stripe_bytes: int = 64 * KiB              # C: the RAID stripe-unit default of the period
    seek_min_s: float = 0.3e-3                # C: track-to-track seek of 2.5-inch 10k spec sheets
    seek_max_s: float = 7.5e-3                # C: full-stroke seek of the same sheets
    write_settle_s: float = 0.5e-3            # C: writes settle ~0.5 ms longer than reads (spec sheets)
    media_bytes_per_s: float = 130 * MB       # C: media transfer rate, 110-150 MB/s (outer zones)
    seq_read_bytes_per_s: float = SUBLUN_BYTES / 4 / 2.5   # Table 1: 1 GB HDD->SSD in 2.5 s (2-3), 4 disks
    seq_write_bytes_per_s: float = SUBLUN_BYTES / 4 / 6.5  # Table 1: 1 GB SSD->HDD in 6.5 s (6-7), cache off
    cache_bytes: int = 16 * MiB               # C: per-disk read cache of SAS disks of 2012 (16-64 MB)
    cache_segment_bytes: int = 64 * KiB       # C: read-ahead unit (a miss fetches its whole segment)
    cache_hit_s: float = 0.1e-3               # C: a cache hit costs ~0.1 ms of command overhead
    bus_bytes_per_s: float = 300 * MB         # C: SAS 3 Gb/s link
    write_cache_bytes: int = 16 * MiB         # C: per-disk write-back cache when Testbed.hdd_write_cache is on (the
                                              # same 16 MiB buffer as the read cache; used by the OTF-AST event model)

    def __post_init__(self):
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if not (np.isfinite(v) and v > 0):
                raise ValueError(f"Raid0Hdd.{f.name} must be a finite number > 0; got {v!r}")
        if self.seek_max_s < self.seek_min_s:
            raise ValueError(f"Raid0Hdd.seek_max_s ({self.seek_max_s}) must be >= seek_min_s ({self.seek_min_s})")
        if self.cache_bytes < self.cache_segment_bytes:
            raise ValueError("Raid0Hdd.cache_bytes must hold at least one cache_segment_bytes segment")

    @property
    def rev_s(self) -> float:
        """One revolution, s (60 / rpm): rotational latency is uniform on [0, rev_s)."""
        return 60.0 / self.rpm

    @property
    def cache_segments(self) -> int:
        return int(self.cache_bytes // self.cache_segment_bytes)

    @classmethod
    def from_table1(cls, copy_up_s: float = 2.5, copy_down_s: float = 6.5, unit_bytes: int = SUBLUN_BYTES, **kw):
        """The HDD whose no-load sub-LUN copies take ``copy_up_s`` (HDD->SSD) and ``copy_down_s`` (SSD->HDD):
        the streaming rates ``unit_bytes / (n_disks * copy_s)`` per disk (Table 1 calibration, claim C13)."""
        for name, v in (("copy_up_s", copy_up_s), ("copy_down_s", copy_down_s)):
            if not (np.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be > 0 seconds; got {v!r}")
        n = int(kw.get("n_disks", cls.n_disks))
        return cls(seq_read_bytes_per_s=unit_bytes / n / copy_up_s,
                   seq_write_bytes_per_s=unit_bytes / n / copy_down_s, **kw)


@dataclass(frozen=True)
class MlcSsd:
    """Intel 520 (MLC, SandForce) at spec-sheet scale (C, notes Sec. 6.3): never the bottleneck here.

    ``channels`` FIFO servers share the device bandwidth: a job of ``b`` bytes holds one channel for
    ``fixed + b * channels / bytes_per_s``, where the fixed part makes a 4 KiB IO take ``read_4k_s`` /
    ``write_4k_s`` at queue depth 1, and ``channels`` jobs in flight stream at ``bytes_per_s``.
    """

    channels: int = 8                         # C: ~8-way internal parallelism (one FIFO per channel)
    read_4k_s: float = 100 * US               # C: 4 KiB random read ~0.10 ms at low queue depth
    write_4k_s: float = 80 * US               # C: 4 KiB random write ~0.08 ms
    read_bytes_per_s: float = 500 * MB        # C: ~500 MB/s sequential read (Intel 520 sheet: 550)
    write_bytes_per_s: float = 500 * MB       # C: 300-520 MB/s sequential write (compressible data)

    def __post_init__(self):
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if not (np.isfinite(v) and v > 0):
                raise ValueError(f"MlcSsd.{f.name} must be a finite number > 0; got {v!r}")
        for op in ("read", "write"):
            if self.fixed_s(op) < 0:
                raise ValueError(f"MlcSsd.{op}_4k_s must be >= the 4 KiB transfer time at {op}_bytes_per_s / channels")

    def fixed_s(self, op: str) -> float:
        """The per-IO fixed part of a channel's service time (s)."""
        if op == "read":
            return self.read_4k_s - 4 * KiB * self.channels / self.read_bytes_per_s
        return self.write_4k_s - 4 * KiB * self.channels / self.write_bytes_per_s


@dataclass(frozen=True)
class Testbed:
    """The whole IO path: HDD, SSD, temporary buffer, driver overhead, copy chunking (OTF-AST Sec. 3.3, 4.1)."""

    hdd: Raid0Hdd = Raid0Hdd()
    ssd: MlcSsd = MlcSsd()
    buffer_s: float = 10 * US                 # C: a RAM buffer hit, the lower edge of the paper's 10 us-1 s histogram
    driver_s: float = 15 * US                 # C: device-mapper tiering driver, 10-20 us per IO
    copy_chunk_bytes: int = 512 * KiB         # C: kcopyd chunk (Sec. 3.3 footnote *5: kcopyd copies the data)
    copy_batch_bytes: int = 16 * MiB          # C: CentOS 5.4's default scheduler is CFQ, which serves a sequential
                                              # stream in time slices (~100 ms: 16 MiB at the copy's streaming rate),
                                              # so chunks reach the disks in batches (notes Sec. 6.3); 512 KiB = FIFO
    sync_max_iops: float = 500.0              # Sec. 3.3.2 (L114-117): buffer write-out throttled to <= 500 IOPS
    # --- the closed-loop event model of OTF-AST (tieringlab.policies.otf_ast.sim); serve() ignores these
    copy_inflight: int = 8                    # notes Sec. 6.3: kcopyd keeps up to 8 chunks in flight (C)
    copy_scheduler: str = "cfq"               # Table 1: CentOS 5.4, whose default IO scheduler is CFQ; "fifo": one
                                              # arrival-order queue per disk (notes Sec. 6.3's default reading)
    cfq_slice_s: float = 0.1                  # notes Sec. 6.3: CFQ-like time slices of about 100 ms (CFQ slice_sync)
    hdd_write_cache: bool = False             # notes Sec. 6.3 (C): write cache off, writes pay the mechanism (the
                                              # Table 1 read/write copy asymmetry); True: the reading "cache on"

    def __post_init__(self):
        for name in ("buffer_s", "driver_s", "copy_chunk_bytes", "copy_batch_bytes", "sync_max_iops", "cfq_slice_s",
                     "copy_inflight"):
            v = getattr(self, name)
            if isinstance(v, (bool, np.bool_)) or not (np.isfinite(v) and v > 0):
                raise ValueError(f"Testbed.{name} must be > 0; got {v!r}")
        if self.copy_scheduler not in ("cfq", "fifo"):
            raise ValueError(f"Testbed.copy_scheduler must be 'cfq' or 'fifo'; got {self.copy_scheduler!r}")
        if not isinstance(self.hdd_write_cache, (bool, np.bool_)):
            raise ValueError(f"Testbed.hdd_write_cache must be True or False; got {self.hdd_write_cache!r}")
        if int(self.copy_inflight) != self.copy_inflight:
            raise ValueError(f"Testbed.copy_inflight must be a whole number of chunks; got {self.copy_inflight!r}")


# ----------------------------------------------------------------------------- HDD

def raid0_pieces(hdd: Raid0Hdd, offset, size):
    """Split LUN requests ``[offset, offset + size)`` over the RAID0 disks.

    Returns ``(job, disk, disk_offset, nbytes)``, one row per (request, disk) touched, ordered by request
    then disk: the stripe units of one request that fall on one disk are contiguous on it, so they merge
    into one piece. No loop over requests (unit split by cumulative sums, then a group-by on (job, disk)).
    """
    offset = np.asarray(offset, np.int64)
    size = np.maximum(np.asarray(size, np.int64), 1)
    U, n = int(hdd.stripe_bytes), int(hdd.n_disks)
    if offset.size == 0:
        z = np.zeros(0, np.int64)
        return z, z.copy(), z.copy(), z.copy()
    first = offset // U
    count = (offset + size - 1) // U - first + 1
    total = int(count.sum())
    job = np.repeat(np.arange(offset.size, dtype=np.int64), count)
    pos = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(count) - count, count)
    unit = first[job] + pos
    lo = np.maximum(offset[job], unit * U)
    hi = np.minimum(offset[job] + size[job], (unit + 1) * U)
    disk = unit % n
    doff = (unit // n) * U + (lo - unit * U)
    # group the units of (job, disk): a request touches each disk at most once per n consecutive units,
    # and those units are contiguous on the disk, so (min offset, summed bytes) is the piece.
    key = job * n + disk
    order = np.argsort(key, kind="stable")
    k_sorted = key[order]
    starts = np.flatnonzero(np.r_[True, k_sorted[1:] != k_sorted[:-1]])
    nbytes = np.add.reduceat((hi - lo)[order], starts)
    d_off = np.minimum.reduceat(doff[order], starts)
    ks = k_sorted[starts]
    return ks // n, ks % n, d_off, nbytes


def _disk_cache_hits(hdd: Raid0Hdd, order, disk, disk_offset, nbytes, is_write):
    """Per-disk read-cache hits: an LRU over ``cache_segment_bytes`` segments of each disk, fed by the
    reads in each disk's service (FIFO) order; a read hits when all its segments are cached (LRU stack
    distance < segments per disk, Mattson et al., :func:`tieringlab.models.stackdist.stack_distances`)."""
    hit = np.zeros(disk.size, bool)
    r = order[~np.asarray(is_write, bool)[order]]             # reads, grouped by disk, FIFO within disk
    if r.size == 0:
        return hit
    S = int(hdd.cache_segment_bytes)
    seg0 = disk_offset[r] // S
    nseg = (disk_offset[r] + np.maximum(nbytes[r], 1) - 1) // S - seg0 + 1
    job = np.repeat(np.arange(r.size), nseg)
    seg = seg0[job] + np.arange(job.size) - np.repeat(np.cumsum(nseg) - nseg, nseg)
    # disks are contiguous in this stream, so distances only count segments of the same disk
    keys = disk[r][job] * (int(hdd.disk_bytes) // S + 1) + seg
    d = stack_distances(keys)
    ok = d < hdd.cache_segments
    starts = np.cumsum(nseg) - nseg
    hit[r] = np.logical_and.reduceat(ok, starts)
    return hit


def hdd_service_times(hdd: Raid0Hdd, arrival, disk, disk_offset, nbytes, is_write, u_rot):
    """Service time (s) of each HDD piece, and whether it was a read-cache hit (module docstring).

    Pieces are served per disk in arrival order (FIFO; ties in input order), which fixes the head
    position before each piece: the end of the piece served just before it on the same disk.
    ``u_rot`` (uniform on [0, 1), one per piece) draws the rotational latency.
    """
    arrival = np.asarray(arrival, np.float64)
    disk = np.asarray(disk, np.int64)
    disk_offset = np.asarray(disk_offset, np.int64)
    nbytes = np.asarray(nbytes, np.int64)
    is_write = np.asarray(is_write, bool)
    n = arrival.size
    service = np.zeros(n)
    if n == 0:
        return service, np.zeros(0, bool)
    order = np.lexsort((np.arange(n), arrival, disk))
    d_o, off_o, b_o = disk[order], disk_offset[order], nbytes[order]
    prev_end = np.r_[-1, (off_o + b_o)[:-1]]
    first = np.r_[True, d_o[1:] != d_o[:-1]]
    seq = (~first) & (prev_end == off_o)
    dist = np.where(first, off_o, np.abs(off_o - prev_end)).astype(np.float64)
    seek = np.where(dist > 0, hdd.seek_min_s + (hdd.seek_max_s - hdd.seek_min_s) * np.sqrt(dist / hdd.disk_bytes), 0.0)
    w_o = is_write[order]
    rnd = (seek + np.asarray(u_rot, np.float64)[order] * hdd.rev_s + b_o / hdd.media_bytes_per_s
           + w_o * hdd.write_settle_s)
    seq_s = np.where(w_o, b_o / hdd.seq_write_bytes_per_s, b_o / hdd.seq_read_bytes_per_s)
    hit = _disk_cache_hits(hdd, order, disk, disk_offset, nbytes, is_write)
    hit_o = hit[order]
    s_o = np.where(hit_o, hdd.cache_hit_s + b_o / hdd.bus_bytes_per_s, np.where(seq, seq_s, rnd))
    service[order] = s_o
    return service, hit


def fifo_departures(arrival, service, site, n_sites: int):
    """Departure times of jobs at ``n_sites`` FIFO single servers (ties in input order), in input order.

    The Lindley recursion of :mod:`tieringlab.models.queueing` as prefix operations, per server:
    ``D_n = S_n + max_{i<=n} (a_i - S_{i-1})`` with ``S`` the cumulative service of the server's jobs in
    arrival order. numpy, not JAX, because a stable sort by (server, arrival) dominates and XLA's sort
    compiles for ~20 s per input size class on this project's CPU (measured), while the policies here call
    it with a new size every run; the loop is over the few servers (4 disks, 8 SSD channels), never over
    jobs. Same results as :func:`tieringlab.models.queueing.fcfs_per_site_departure_times` (tests).
    """
    arrival = np.asarray(arrival, np.float64)
    service = np.asarray(service, np.float64)
    site = np.asarray(site, np.int64)
    dep = np.empty(arrival.size)
    order = np.lexsort((np.arange(arrival.size), arrival, site))
    bounds = np.searchsorted(site[order], np.arange(int(n_sites) + 1))
    for k in range(int(n_sites)):
        o = order[bounds[k]:bounds[k + 1]]
        if o.size:
            S = np.cumsum(service[o])
            dep[o] = S + np.maximum.accumulate(arrival[o] - (S - service[o]))
    return dep


def hdd_queue(hdd: Raid0Hdd, arrival, disk, disk_offset, nbytes, is_write, u_rot):
    """Departure times (s) of HDD pieces at the per-disk FIFO queues, with their service times and
    cache hits: :func:`hdd_service_times`, then the Lindley recursion per disk (:func:`fifo_departures`)."""
    service, hit = hdd_service_times(hdd, arrival, disk, disk_offset, nbytes, is_write, u_rot)
    if service.size == 0:
        return np.zeros(0), service, hit
    return fifo_departures(arrival, service, disk, int(hdd.n_disks)), service, hit


# ----------------------------------------------------------------------------- SSD

def ssd_service_times(ssd: MlcSsd, nbytes, is_write):
    """Channel holding time (s) of SSD jobs: ``fixed + b * channels / bytes_per_s`` (see :class:`MlcSsd`)."""
    b = np.asarray(nbytes, np.float64)
    w = np.asarray(is_write, bool)
    return np.where(w, ssd.fixed_s("write") + b * ssd.channels / ssd.write_bytes_per_s,
                    ssd.fixed_s("read") + b * ssd.channels / ssd.read_bytes_per_s)


def ssd_queue(ssd: MlcSsd, arrival, nbytes, is_write):
    """Departure times (s) of SSD jobs: ``channels`` FIFO servers, jobs dealt round-robin in arrival order."""
    arrival = np.asarray(arrival, np.float64)
    n = arrival.size
    if n == 0:
        return np.zeros(0)
    rank = np.empty(n, np.int64)
    rank[np.argsort(arrival, kind="stable")] = np.arange(n)
    return fifo_departures(arrival, ssd_service_times(ssd, nbytes, is_write), rank % ssd.channels, int(ssd.channels))


# ----------------------------------------------------------------------------- copies

def no_load_copy_s(tb: Testbed, direction: str, unit_bytes: int = SUBLUN_BYTES) -> float:
    """Closed form of a no-load copy of ``unit_bytes`` (Table 1, claim C13): the copy streams through the
    slower of its two sides, ``max(HDD side, SSD side)``; ``direction`` is ``"up"`` (HDD->SSD) or ``"down"``."""
    h, s = tb.hdd, tb.ssd
    if direction == "up":
        return max(unit_bytes / (h.n_disks * h.seq_read_bytes_per_s), unit_bytes / s.write_bytes_per_s)
    if direction == "down":
        return max(unit_bytes / (h.n_disks * h.seq_write_bytes_per_s), unit_bytes / s.read_bytes_per_s)
    raise ValueError(f"direction must be 'up' (HDD->SSD) or 'down' (SSD->HDD); got {direction!r}")


def copy_jobs(tb: Testbed, unit_index, start, end, up, unit_bytes: int = SUBLUN_BYTES):
    """The kcopyd chunks of the copies ``(unit_index, [start, end), up)``, issued at the copy's pace over its
    window in batches of ``copy_batch_bytes`` (the IO scheduler's time slice for the sequential stream):
    batch ``j`` of a copy of ``K`` chunks in batches of ``B`` is issued at ``start + j B (end - start) / K``.
    With ``B`` = one chunk the chunks are evenly paced and interleave with user IO in the FIFO queues.

    Returns ``(move, time, lun_offset, nbytes, hdd_is_write)``: one row per chunk, the HDD side of each
    (a read from the sub-LUN's home for a promotion, ``up``; a write to it for a demotion); the SSD side
    is the same chunk with the opposite direction.
    """
    unit_index = np.asarray(unit_index, np.int64)
    start = np.asarray(start, np.float64)
    end = np.asarray(end, np.float64)
    up = np.asarray(up, bool)
    K = -(-int(unit_bytes) // int(tb.copy_chunk_bytes))
    m = unit_index.size
    move = np.repeat(np.arange(m), K)
    k = np.tile(np.arange(K), m)
    B = max(1, int(tb.copy_batch_bytes) // int(tb.copy_chunk_bytes))
    t = start[move] + (k // B) * B * (end - start)[move] / K
    off = unit_index[move] * unit_bytes + k * tb.copy_chunk_bytes
    nb = np.minimum(tb.copy_chunk_bytes, unit_bytes - k * tb.copy_chunk_bytes)
    return move, t, off, nb, ~up[move]


def buffer_read_hits(window, time, offset, size, is_write, sector_bytes: int = 512):
    """Which requests the temporary buffer serves (OTF-AST Sec. 3.3.2, bitmap of one bit per 512 B).

    ``window`` (int per request, -1 = none) names the move whose buffer is open for the request. A write
    in a window goes to the buffer and sets its sectors' bits; a read in a window is a buffer hit when
    every 512-B sector it reads was written earlier in the same window (a partly covered read is served
    by the device, a documented simplification of the notes' per-run split). Returns a bool per request
    (True for the reads served by the buffer; writes are the caller's to route). Sort-based, no loop.
    """
    window = np.asarray(window, np.int64)
    idx = np.flatnonzero(window >= 0)
    out = np.zeros(window.size, bool)
    if idx.size == 0:
        return out
    off = np.asarray(offset, np.int64)[idx]
    sz = np.maximum(np.asarray(size, np.int64)[idx], 1)
    w = np.asarray(is_write, bool)[idx]
    t = np.asarray(time, np.float64)[idx]
    s0 = off // sector_bytes
    ns = (off + sz - 1) // sector_bytes - s0 + 1
    j = np.repeat(np.arange(idx.size), ns)
    sec = s0[j] + np.arange(j.size) - np.repeat(np.cumsum(ns) - ns, ns)
    # order by (window, sector, time, writes-before-reads is irrelevant: a read never covers itself)
    order = np.lexsort((j, t[j], sec, window[idx][j]))
    g_win, g_sec, g_w = window[idx][j][order], sec[order], w[j][order]
    new_group = np.r_[True, (g_win[1:] != g_win[:-1]) | (g_sec[1:] != g_sec[:-1])]
    grp = np.cumsum(new_group) - 1
    wcum = np.cumsum(g_w)
    before = wcum - g_w                                   # writes strictly before, in the whole stream
    grp_base = before[np.flatnonzero(new_group)][grp]     # writes before the group started
    covered = np.zeros(j.size, bool)
    covered[order] = (before - grp_base) > 0
    full = np.logical_and.reduceat(covered, np.cumsum(ns) - ns)
    out[idx] = full & ~w
    return out


# ----------------------------------------------------------------------------- utilization

def busy_per_second(start, end, site, n_sites: int, n_seconds: int, t0: float = 0.0):
    """Busy share of each server in each second ``[t0 + s, t0 + s + 1)``: shape ``(n_sites, n_seconds)``.

    ``[start, end)`` are the service intervals of one FIFO server's jobs (they never overlap on a
    server). The busy time up to ``x`` is a prefix sum over the jobs sorted by start; evaluated at the
    second boundaries by searchsorted (the iostat ``%util`` analogue, notes Sec. 1.7).
    """
    start = np.asarray(start, np.float64) - t0
    end = np.asarray(end, np.float64) - t0
    site = np.asarray(site, np.int64)
    out = np.zeros((int(n_sites), int(n_seconds)))
    edges = np.arange(int(n_seconds) + 1, dtype=np.float64)
    for k in range(int(n_sites)):   # a handful of servers (4 disks)
        m = site == k
        if not m.any():
            continue
        s, e = start[m], end[m]
        o = np.argsort(s, kind="stable")
        s, e = s[o], e[o]
        cum = np.r_[0.0, np.cumsum(e - s)]
        i = np.searchsorted(s, edges, side="right")          # jobs started by each edge
        # busy(x) = full busy of jobs 0..i-2 + the part of job i-1 before x
        last_s = np.where(i > 0, s[np.maximum(i - 1, 0)], 0.0)
        last_e = np.where(i > 0, e[np.maximum(i - 1, 0)], 0.0)
        B = np.where(i > 0, cum[np.maximum(i - 1, 0)] + np.clip(edges - last_s, 0.0, last_e - last_s), 0.0)
        out[k] = np.diff(B)
    return out


# ----------------------------------------------------------------------------- the whole IO path

def serve(tb: Testbed, key, *, time, offset, size, is_write, route, bg_hdd=None, bg_ssd=None,
          ssd_extra_bytes=None, util_window=None):
    """Response times of user IOs routed to HDD / SSD / temporary buffer, with background IO sharing the queues.

    ``route`` (per request): :data:`HDD`, :data:`SSD` or :data:`BUFFER`. ``bg_hdd``: dict of HDD jobs
    that are not user IO (copy chunks, buffer sync, cache cleaning) with ``time, offset, size, is_write``
    (LUN addresses); ``bg_ssd``: dict of SSD jobs ``time, size, is_write``. ``ssd_extra_bytes`` (per
    request, optional) adds a serial SSD write to a user SSD IO (FlashCache's metadata update).
    ``key`` (a ``jax.random`` key) seeds the numpy Generators that draw the rotational latencies: one
    uniform per (request, disk), so the same request sees the same draw under every policy; background
    pieces draw from a second stream.

    Returns a dict: ``response_s`` per request (``driver_s`` + queueing + service, or ``buffer_s`` for the
    buffer), ``bg_hdd_departure`` per background HDD job (its last piece), ``hdd_cache_hits`` (user HDD
    pieces served by the disk read cache), and with ``util_window = (t0, n_seconds)`` the per-disk busy
    share per second ``hdd_util`` (n_disks, n_seconds).
    """
    h = tb.hdd
    time = np.asarray(time, np.float64)
    n = time.size
    offset = np.asarray(offset, np.int64)
    size = np.asarray(size, np.int64)
    is_write = np.asarray(is_write, bool)
    route = np.asarray(route, np.int64)
    bg_hdd = bg_hdd or {"time": np.zeros(0), "offset": np.zeros(0, np.int64), "size": np.zeros(0, np.int64),
                        "is_write": np.zeros(0, bool)}
    bg_ssd = bg_ssd or {"time": np.zeros(0), "size": np.zeros(0, np.int64), "is_write": np.zeros(0, bool)}
    rng_user, rng_bg = (np.random.default_rng(np.asarray(jax.random.key_data(k)).ravel())
                        for k in jax.random.split(key))

    # HDD: user pieces then background pieces, one FIFO per disk
    u_idx = np.flatnonzero(route == HDD)
    uj, ud, uo, ub = raid0_pieces(h, offset[u_idx], size[u_idx])
    bj, bd, bo, bb = raid0_pieces(h, bg_hdd["offset"], bg_hdd["size"])
    u_rot_user = rng_user.random((n, h.n_disks))[u_idx[uj], ud]
    u_rot_bg = rng_bg.random(bj.size)
    arr = np.r_[time[u_idx][uj], np.asarray(bg_hdd["time"], np.float64)[bj]]
    dsk = np.r_[ud, bd]
    dof = np.r_[uo, bo]
    nby = np.r_[ub, bb]
    wr = np.r_[is_write[u_idx][uj], np.asarray(bg_hdd["is_write"], bool)[bj]]
    dep, svc, hit = hdd_queue(h, arr, dsk, dof, nby, wr, np.r_[u_rot_user, u_rot_bg])
    nu = uj.size
    response = np.zeros(n)
    if nu:
        last = np.full(u_idx.size, -np.inf)
        np.maximum.at(last, uj, dep[:nu])
        response[u_idx] = last - time[u_idx]
    bg_dep = np.full(np.asarray(bg_hdd["time"]).size, -np.inf)
    if bj.size:
        np.maximum.at(bg_dep, bj, dep[nu:])

    # SSD: user jobs then background jobs
    s_idx = np.flatnonzero(route == SSD)
    extra = np.zeros(n, np.int64) if ssd_extra_bytes is None else np.asarray(ssd_extra_bytes, np.int64)
    s_arr = np.r_[time[s_idx], np.asarray(bg_ssd["time"], np.float64)]
    s_b = np.r_[size[s_idx], np.asarray(bg_ssd["size"], np.int64)]
    s_w = np.r_[is_write[s_idx], np.asarray(bg_ssd["is_write"], bool)]
    if s_arr.size:
        rank = np.empty(s_arr.size, np.int64)
        rank[np.argsort(s_arr, kind="stable")] = np.arange(s_arr.size)
        svc_s = ssd_service_times(tb.ssd, s_b, s_w)
        svc_s[: s_idx.size] += np.where(extra[s_idx] > 0, ssd_service_times(tb.ssd, extra[s_idx], True), 0.0)
        s_dep = fifo_departures(s_arr, svc_s, rank % tb.ssd.channels, int(tb.ssd.channels))
        response[s_idx] = s_dep[: s_idx.size] - time[s_idx]
    response[route == BUFFER] = tb.buffer_s
    response = response + tb.driver_s
    out = {"response_s": response, "bg_hdd_departure": bg_dep, "hdd_cache_hits": int(hit[:nu].sum()),
           "hdd_pieces": int(nu)}
    if util_window is not None:
        t0, n_sec = util_window
        out["hdd_util"] = busy_per_second(dep - svc, dep, dsk, h.n_disks, int(n_sec), float(t0))
    return out
