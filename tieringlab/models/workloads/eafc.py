"""The EAFC paper's workloads (Sec. V): a FileBench web-server-like and a SPECsfs2008-like generator.

Both emit the **read stream the SSD read cache sees**, as unit-size keys, plus the phases of the
closed-loop load that drives it. What the paper gives and what is chosen here:

FileBench web server (Sec. V.A) — :class:`FileBenchParams`, :func:`filebench_webserver`:

- [P] 400 threads on two clients (200 each), each client its own directory; Test 1: 1.6 million
  small files, 40 GB working set (targets 10 and 5 ms, Fig. 4a/b); Test 2: 750,000 files per client,
  30 GB (Fig. 4c). The 1.6 M x ~20 KB of Test 1 is 32 GB, not 40 GB (notes U11): the working-set
  bytes are kept as the controlling quantity, so Test 1 files average 25 KB and Test 2's 20 KB.
- [X] file sizes: gamma with shape 1.5 around the mean (FileBench's ``fs_sizegamma`` default 1500),
  scaled so that they sum to the working set exactly; whole-file reads (``webserver.f``: open, read
  whole file, close). The 16 KB log appends are a tiny write stream and are left out (they never
  enter the read cache).
- [D] popularity: ``"uniform"`` — every read picks a file uniformly at random (independent reference
  model, IRM), the default, under which an LRU of ``C`` bytes hits ``C/W`` of the reads (notes
  §6.3); ``"rotation"`` — FileBench's own rotor (notes §6.3: without ``indexed`` every thread of a
  client shares one rotor), each client sweeping its files cyclically, the clients interleaved at
  random: a stress case under which an LRU smaller than the sweep gets no hits at all. IRM is a
  documented modelling choice, not a property of FileBench.
- [D] closed loop: at most ``n_clients * rpc_slots_per_client`` = 32 requests outstanding at the
  server (16 RPC slots per NFS mount), of the 400 threads; no think time beyond ``think_s`` (0.5 ms of
  client and network, notes §7.4); run length 8 h (notes U13).

SPECsfs2008-like (Sec. V.B) — :class:`SpecSfsParams`, :func:`specsfs2008`:

- [P] 20 threads; 2000, 4000, 5000 ops/s for 5 hours each (15 h, phase changes at cwnd 30 and 60);
  working set grows with the load.
- [X] SPECsfs2008 NFSv3 mix: 18 % READ, 10 % WRITE, 72 % metadata.
- [D] closed loop with ``N = 20`` and think time ``Z_p = N / lambda_p - nominal_response_s`` so the
  nominal rate is reached when latency is low (notes §7.3); working set 6 MB per op/s (12, 24, 30
  GB), nested: phase p reads the first ``W_p`` bytes of one growing file set; Zipf(0.8) popularity
  over the data, each unit's rank fixed by one random permutation (so a phase's new data is as likely
  to be hot as old data, and starts cold in the caches: the latency spikes of Fig. 4d); 16 KB reads;
  writes absorbed by NVRAM, metadata served from RAM (neither enters the read cache).
- [D] the file set of the first phase was just created through the server's RAM: the trace starts
  with one creation access per unit of phase 1 (``is_read = False``: they pass through the RAM
  buffer cache only; the SSD is a read cache and starts cold), notes U10.

Scale-down (notes §7.2). A key is a **unit** of ``unit_bytes`` (a run of consecutive files, or of
16 KB blocks), and one access stands for ``reads_per_access`` real reads of that unit's data. Under
the IRM only ``C/W`` matters for the hit ratio, and the fill rate in bytes/s is kept (each access
fills one unit), so warm-up length in cwnds is unchanged; for Zipf with exponent < 1 the hit ratio
as a function of ``C/W`` is scale-free in the number of items as well. ``unit_bytes`` is a named
parameter (smaller: finer, more accesses to simulate).

Randomness: a numpy Generator derived from the ``jax.random`` key; same key and parameters ->
bit-identical keys.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from tieringlab.arrays import choice, numpy_rng
from tieringlab.units import GB, HOUR, KB, MB, MS, MiB

__all__ = ["FileBenchParams", "SpecSfsParams", "Phase", "Workload", "filebench_webserver", "specsfs2008",
           "POPULARITY"]

#: FileBench popularity models (module docstring).
POPULARITY = ("uniform", "rotation")


@dataclass(frozen=True)
class Phase:
    """One phase of closed-loop load: ``population`` requests circulate, each ``think_s`` away between
    operations; a fraction ``read_frac`` of operations are data reads (through the caches), ``write_frac``
    writes (absorbed by NVRAM), the rest metadata (served from RAM)."""

    duration_s: float
    population: int
    think_s: float
    read_frac: float
    write_frac: float
    working_set_bytes: float
    nominal_ops_per_s: float | None = None  # the requested rate, when the benchmark sets one


@dataclass(frozen=True)
class Workload:
    """A generated workload: the access stream (unit keys) and the phases that drive it.

    ``keys[seg_start[p]:seg_end[p]]`` are the read accesses available to phase ``p``, drawn from that
    phase's working set; accesses before ``seg_start[0]`` (``is_read = False``) are creation accesses
    that pass through the RAM buffer cache only. One access stands for ``reads_per_access`` real reads
    of ``unit_bytes`` / ``reads_per_access`` bytes each.
    """

    name: str
    keys: np.ndarray
    is_read: np.ndarray
    seg_start: np.ndarray
    seg_end: np.ndarray
    phases: tuple[Phase, ...]
    unit_bytes: int
    reads_per_access: float
    n_units: int
    attrs: Mapping[str, object] = field(default_factory=dict)

    @property
    def duration_s(self) -> float:
        return float(sum(ph.duration_s for ph in self.phases))


def _positive(name, value, *, integer=False):
    if integer and (not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value <= 0):
        raise ValueError(f"{name} must be a positive integer; got {value!r}")
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be > 0; got {value!r}")


@dataclass(frozen=True)
class FileBenchParams:
    """FileBench web server (EAFC paper Sec. V.A); the defaults are Test 1 (Fig. 4a/b)."""

    working_set_bytes: float = 40 * GB  # Sec. V.A: "working set size of 40GB" (Test 2: 30 GB)
    n_files: int = 1_600_000            # Sec. V.A: "1.6 million small files" (Test 2: 2 x 750,000)
    size_shape: float = 1.5             # FileBench fs_sizegamma 1500: gamma(1.5) file sizes [X]
    n_threads: int = 400                # Sec. V.A: 200 threads on each of 2 clients
    n_clients: int = 2                  # Sec. V.A: two Ubuntu NFS clients
    rpc_slots_per_client: int = 16      # [D] NFS client RPC slots per mount: 32 outstanding at the server
    think_s: float = 0.5 * MS           # [D] client + network time between reads (notes §7.4)
    popularity: str = "uniform"         # [D] IRM over files (notes §6.3); "rotation": FileBench's rotor
    duration_s: float = 8 * HOUR        # [D] run length, not given (notes U13): 48 cwnds
    unit_bytes: int = 2 * MiB           # [D] scale-down: one key is 2 MiB of consecutive files

    def __post_init__(self):
        _positive("working_set_bytes", self.working_set_bytes)
        _positive("n_files", self.n_files, integer=True)
        _positive("size_shape", self.size_shape)
        _positive("n_threads", self.n_threads, integer=True)
        _positive("n_clients", self.n_clients, integer=True)
        _positive("rpc_slots_per_client", self.rpc_slots_per_client, integer=True)
        _positive("duration_s", self.duration_s)
        _positive("unit_bytes", self.unit_bytes, integer=True)
        if not np.isfinite(self.think_s) or self.think_s < 0:
            raise ValueError(f"think_s must be >= 0 seconds; got {self.think_s!r}")
        choice("popularity", self.popularity, POPULARITY)
        if self.unit_bytes * 4 > self.working_set_bytes:
            raise ValueError(f"unit_bytes must be at most a quarter of working_set_bytes "
                             f"({self.working_set_bytes:.0f}); got {self.unit_bytes}")

    @property
    def population(self) -> int:
        """Requests outstanding at the server: ``min(n_threads, n_clients * rpc_slots_per_client)``."""
        return int(min(self.n_threads, self.n_clients * self.rpc_slots_per_client))

    def phases(self) -> tuple[Phase, ...]:
        return (Phase(self.duration_s, self.population, self.think_s, 1.0, 0.0, self.working_set_bytes),)


#: FileBench Test 2 (Fig. 4c): 750,000 files per client, 30 GB.
FILEBENCH_TEST2 = dict(working_set_bytes=30 * GB, n_files=1_500_000)


@dataclass(frozen=True)
class SpecSfsParams:
    """SPECsfs2008-like load (EAFC paper Sec. V.B)."""

    ops_per_s: tuple[float, ...] = (2000.0, 4000.0, 5000.0)  # Sec. V.B: total IOPS per phase
    phase_s: float = 5 * HOUR               # Sec. V.B: "increasing the total IOPS after every 5 hours"
    n_threads: int = 20                     # Sec. V.B: 20 threads
    read_frac: float = 0.18                 # [X] SPECsfs2008 mix: READ 18 %
    write_frac: float = 0.10                # [X] SPECsfs2008 mix: WRITE 10 % (metadata: the other 72 %)
    bytes_per_op_per_s: float = 6 * MB      # [D] working set per op/s: 12, 24, 30 GB (notes §7.3)
    read_bytes: int = 16 * KB               # [D] mean read size (only sets the fill rate)
    zipf_alpha: float = 0.8                 # [D] skew of the SFS access distribution (notes U17)
    nominal_response_s: float = 0.1 * MS    # [D] think time Z_p = N / lambda_p - this (notes §7.3)
    ram_warm_start: bool = True             # [D] phase 1's files were just created through RAM (U10)
    unit_bytes: int = 1 * MiB               # [D] scale-down: one key is 1 MiB of data

    def __post_init__(self):
        if len(self.ops_per_s) == 0 or any(not np.isfinite(x) or x <= 0 for x in self.ops_per_s):
            raise ValueError(f"ops_per_s must be a non-empty list of rates > 0; got {self.ops_per_s!r}")
        _positive("phase_s", self.phase_s)
        _positive("n_threads", self.n_threads, integer=True)
        _positive("bytes_per_op_per_s", self.bytes_per_op_per_s)
        _positive("read_bytes", self.read_bytes, integer=True)
        _positive("unit_bytes", self.unit_bytes, integer=True)
        if not (0 < self.read_frac <= 1 and 0 <= self.write_frac and self.read_frac + self.write_frac <= 1):
            raise ValueError(f"read_frac must be in (0, 1] and write_frac >= 0 with read_frac + write_frac <= 1; "
                             f"got {self.read_frac!r}, {self.write_frac!r}")
        if not 0 <= self.zipf_alpha < 5:
            raise ValueError(f"zipf_alpha must be in [0, 5); got {self.zipf_alpha!r}")
        for lam in self.ops_per_s:
            if self.n_threads / lam <= self.nominal_response_s:
                raise ValueError(f"nominal_response_s must be below n_threads / ops_per_s = {self.n_threads / lam:g} s "
                                 f"(a positive think time); got {self.nominal_response_s!r}")
        if self.unit_bytes < self.read_bytes or self.unit_bytes * 4 > min(self.working_sets()):
            raise ValueError(f"unit_bytes must be >= read_bytes ({self.read_bytes}) and at most a quarter of the "
                             f"smallest working set ({min(self.working_sets()):.0f}); got {self.unit_bytes}")

    def working_sets(self) -> tuple[float, ...]:
        return tuple(self.bytes_per_op_per_s * lam for lam in self.ops_per_s)

    def phases(self) -> tuple[Phase, ...]:
        return tuple(Phase(self.phase_s, self.n_threads, self.n_threads / lam - self.nominal_response_s,
                           self.read_frac, self.write_frac, w, nominal_ops_per_s=lam)
                     for lam, w in zip(self.ops_per_s, self.working_sets()))


def _check_counts(n_accesses, n_phases):
    arr = np.atleast_1d(np.asarray(n_accesses))
    if arr.shape != (n_phases,) or not np.issubdtype(arr.dtype, np.integer) or np.any(arr < 1):
        raise ValueError(f"n_accesses must give one positive integer per phase ({n_phases}); got {n_accesses!r}")
    return arr.astype(np.int64)


def filebench_webserver(key, p: FileBenchParams, n_accesses) -> Workload:
    """The read stream of a FileBench web server (:class:`FileBenchParams`): ``n_accesses`` unit keys.

    File sizes: gamma(``size_shape``) scaled to sum to ``working_set_bytes``; files are laid out in
    order, and unit ``u`` holds the files whose first byte lies in ``[u, u + 1) * unit_bytes``.
    ``"uniform"``: each access reads the unit of a uniformly drawn file (unit probability proportional
    to its file count: the IRM over files, coarse-grained exactly). ``"rotation"``: client ``c`` owns
    files ``[c n / n_clients, (c + 1) n / n_clients)`` and reads them in order, wrapping around; the
    client of each access is drawn uniformly; one access reads its client's next unit (the
    ``reads_per_access`` files of the rotor's next stretch). ``n_accesses`` (one phase) bounds the run (the caller
    computes it from the largest throughput the closed loop can reach).
    """
    (n,) = _check_counts(n_accesses, 1)
    rng = numpy_rng(key)
    sizes = rng.gamma(p.size_shape, 1.0, p.n_files)
    sizes *= p.working_set_bytes / sizes.sum()
    start = np.cumsum(sizes) - sizes
    unit_of_file = (start // p.unit_bytes).astype(np.int64)
    n_units = int(unit_of_file[-1]) + 1
    reads_per_access = p.n_files / n_units
    if p.popularity == "uniform":
        keys = unit_of_file[rng.integers(0, p.n_files, n)]
    else:
        client = rng.integers(0, p.n_clients, n)
        per = p.n_files // p.n_clients
        lo = unit_of_file[np.arange(p.n_clients) * per]  # the units of client c's files
        hi = unit_of_file[np.arange(1, p.n_clients + 1) * per - 1] + 1
        rotor = np.empty(n, np.int64)  # how many accesses this client made before this one
        for c in range(p.n_clients):  # a couple of clients; array work each
            idx = np.flatnonzero(client == c)
            rotor[idx] = np.arange(idx.size)
        keys = lo[client] + rotor % (hi - lo)[client]
    return Workload(
        name=f"filebench_{p.working_set_bytes / GB:g}GB_{p.popularity}", keys=keys.astype(np.int64),
        is_read=np.ones(n, bool), seg_start=np.array([0]), seg_end=np.array([n]), phases=p.phases(),
        unit_bytes=int(p.unit_bytes), reads_per_access=float(reads_per_access), n_units=n_units,
        attrs={"file_bytes_mean": p.working_set_bytes / p.n_files, "n_files": p.n_files,
               "popularity": p.popularity, **{f"param_{k}": v for k, v in dataclasses.asdict(p).items()}})


def specsfs2008(key, p: SpecSfsParams, n_accesses) -> Workload:
    """The read stream of the SPECsfs2008-like load (:class:`SpecSfsParams`), ``n_accesses[p]`` unit
    keys for phase ``p`` (a bound on what the closed loop can read in that phase).

    Units ``0 .. n_p - 1`` form phase p's working set (nested: later phases add units). Every unit has
    a popularity rank from one random permutation of all units; phase p draws its units with
    probability proportional to ``rank^-zipf_alpha`` among its own units (inverse CDF). With
    ``ram_warm_start`` the stream starts with one creation access per unit of phase 1, in order
    (``is_read = False``).
    """
    phases = p.phases()
    counts = _check_counts(n_accesses, len(phases))
    rng = numpy_rng(key)
    n_per_phase = np.array([int(np.ceil(w / p.unit_bytes)) for w in p.working_sets()], dtype=np.int64)
    n_per_phase = np.maximum.accumulate(n_per_phase)  # nested working sets
    n_units = int(n_per_phase[-1])
    rank = rng.permutation(n_units) + 1
    weight = rank.astype(np.float64) ** -p.zipf_alpha
    parts, reads = [], []
    if p.ram_warm_start:
        parts.append(np.arange(n_per_phase[0], dtype=np.int64))
        reads.append(np.zeros(n_per_phase[0], bool))
    seg_start, seg_end, pos = [], [], int(parts[0].size) if parts else 0
    for n_p, c in zip(n_per_phase, counts):
        cdf = np.cumsum(weight[:n_p])
        draw = np.searchsorted(cdf, rng.random(int(c)) * cdf[-1], side="right")
        parts.append(np.minimum(draw, n_p - 1).astype(np.int64))
        reads.append(np.ones(int(c), bool))
        seg_start.append(pos)
        pos += int(c)
        seg_end.append(pos)
    return Workload(
        name="specsfs2008", keys=np.concatenate(parts), is_read=np.concatenate(reads),
        seg_start=np.array(seg_start), seg_end=np.array(seg_end), phases=phases, unit_bytes=int(p.unit_bytes),
        reads_per_access=p.unit_bytes / p.read_bytes, n_units=n_units,
        attrs={"units_per_phase": n_per_phase.tolist(),
               **{f"param_{k}": v for k, v in dataclasses.asdict(p).items()}})
