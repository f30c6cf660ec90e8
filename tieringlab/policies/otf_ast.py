"""OTF-AST (on-the-fly automated storage tiering) and its baselines on a sub-LUN tiering simulator.

OTF-AST paper (Oe et al., Fujitsu Laboratories, IPSJ technical report, Japanese, OCR only); the
algorithm section (Sec. 3.1-3.2) is lost, so the monitoring rule follows the reading notes
``../shared/papers/notes/otf_ast.md`` (**"notes"** below), Sec. 1.4 and 2: the recommended reading is
the default and every alternative reading is a named parameter.

The system (Fig. 4-5, Sec. 3.3, Table 1-3)
------------------------------------------
A **300 GB LUN** is cut into **1 GB sub-LUNs** (Fig. 4; GiB, a choice); at most **24 sub-LUNs** sit on
the SSD (Sec. 4.1); the rest of the LUN lives on an HDD RAID0 (Table 1). Every ``t`` seconds (interval
``k``) the user-space monitor counts the user IOs of each sub-LUN over the last ``m`` seconds,
``cnt[k, s]``, and decides (notes Sec. 1.4, recommended reading):

- ``S_k`` = the ``n`` sub-LUNs with the most IOs (count > 0; ties to the lower index);
- the interval is *concentrated* when ``sum_{s in S_k} cnt[k, s] >= (i / 100) * sum_s cnt[k, s]``
  (degree of concentration); then ``hot[k, s] = s in S_k``;
- a sub-LUN on the HDD that has been hot ``c`` intervals in a row is **promoted** (duration of hot
  status); one on the SSD that has not been hot for ``o`` intervals in a row is **demoted** (the timeout
  of Fig. 4: ``o = 10`` intervals of ``t = 60 s``);
- promotions go by count, highest first, while the SSD has room (no eviction on demand: candidates
  wait for timeouts, reading f1); the demotions decided in an interval queue ahead of its promotions.

Moves (Sec. 3.3, 3.3.2): one at a time (one temporary buffer the size of a sub-LUN), FIFO; a move
copies the sub-LUN with kcopyd (Table 1: 2.5 s up, 6.5 s down with no user IO); while it copies, writes
to it go to the temporary buffer (and reads of what they wrote are served from it; other reads from
the source); after the copy the buffer is synced to the destination at <= 500 IOPS; then the tiering
table points at the destination.

How it is computed (no loop over requests)
------------------------------------------
1. **Monitoring** as array ops over the ``(interval, sub-LUN)`` count matrix (:func:`hot_matrix`): a
   sort per row, the share test, the hot mask, for every interval at once.
2. **Decisions and the move engine**: one ``jax.lax.scan`` over the intervals (:func:`_controller`),
   carrying per-sub-LUN state (tier, streak, timeout) and a move log; inside an interval, a loop over
   its seconds advances the copies. A copy progresses at the share of disk time user IO leaves free in
   each second (``max(1 - u, copy_share_floor)`` of the no-load pace, ``u`` the HDD utilisation the
   user IO routed to the HDD would cause: a fluid estimate); the buffer fills with the writes that
   arrive meanwhile (estimated from per-second write counts, weighted by the overlap of each second with
   the copy); the sync lasts ``writes / sync_max_iops``.
3. **IO level** (:mod:`tieringlab.models.storage`): every request is routed by the move log (a
   searchsorted per request), the copies' kcopyd chunks are injected at their pace, in CFQ-like batches
   (``Testbed.copy_batch_bytes``), into the same per-disk FIFO queues as user IO, and the queues are
   solved by prefix operations. The response of a
   request is driver + queueing + service. The measured end of each copy (its last chunk's departure)
   is reported beside the engine's estimate.

Baselines (Sec. 4.1, Table 3): **static tiering** (the top 24 sub-LUNs by request count in the window
of the same length just before the replay, placed once, notes Sec. 3.1), **FlashCache** (4 KB blocks,
24 GB, LRU, write-back, notes Sec. 3.2-3.3; pass 1 cold, pass 2 warm: the same window replayed again on
the cache pass 1 left), **OTF-AST without SSD->HDD write-back** (demotion is a table update, Table 5),
**HDD only** (Figs. 7, 9).

Trace input: a trace Dataset (:mod:`tieringlab.traces`) whose attrs may carry ``replay_start_s`` and
``replay_end_s`` (default: the whole trace). Only requests in ``[replay_start_s, replay_end_s)`` are
replayed (times re-based to the replay start); static tiering trains on the window of equal length
before it. ``capacities`` are SSD sizes in bytes (whole sub-LUNs for the tiering systems; 24 GB is the
paper's). Results follow :func:`tieringlab.policies.contract.trace_result`; ``hits`` are user IOs
served by the SSD (the SSD access ratio of Table 4 is ``hit_ratio``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import xarray as xr

from tieringlab.arrays import choice
from tieringlab.models import storage
from tieringlab.models.storage import BUFFER, HDD, SSD, Testbed
from tieringlab.policies import caching
from tieringlab.policies.contract import CAPACITY_DIM, check_capacities, check_trace, trace_result
from tieringlab.policies.registry import PolicySpec, register
from tieringlab.traces.split import split_arrays
from tieringlab.units import MINUTE, PAGE_BYTES, SUBLUN_BYTES, US

__all__ = ["OtfAstParams", "StaticTieringParams", "FlashCacheParams", "HddOnlyParams", "hot_matrix",
           "otf_ast", "static_tiering", "flashcache", "hdd_only", "HOT_RULES", "I_READINGS", "M_READINGS",
           "C_READINGS", "FULL_POLICIES", "COPY_UNITS", "replay_window"]

#: Readings of the hot-set rule (notes Sec. 2.2): n1 (recommended), n2, n3.
HOT_RULES = ("top_n", "prefix_to_i", "pct_of_subluns")
#: Readings of i: a percentage share (recommended) or an absolute per-interval count (i2).
I_READINGS = ("percent", "absolute")
#: Readings of m: m1 counting window (recommended), m2 total floor, m3 per-sub-LUN floor, m4 history.
M_READINGS = ("window", "total_floor", "sublun_floor", "history")
#: Readings of c: c1 consecutive intervals (recommended), c2 c hot intervals among the last m (= m4's rule).
C_READINGS = ("consecutive", "within_m")
#: SSD full: f1 wait for timeouts (recommended), f2 evict the resident with the largest timeout count.
FULL_POLICIES = ("wait", "evict_max_timeout")
#: Unit of the Table 1 copy times: seconds (recommended, notes Sec. 1.6) or minutes (ablation).
COPY_UNITS = ("seconds", "minutes")

_SOURCE = "OTF-AST paper (Oe et al., Fujitsu Labs) Sec. 3-4; reading notes notes/otf_ast.md"


# ============================================================================ parameters

@dataclass(frozen=True)
class _Measure:
    """Fields every system here shares: the testbed and how response times are summarised (Sec. 4.1)."""

    testbed: Testbed = Testbed()             # Table 1 devices (tieringlab.models.storage), choices documented there
    sublun_bytes: int = SUBLUN_BYTES         # Fig. 4: sub-LUN = 1 GB (GiB: device-mapper sizes are sectors, C)
    lun_subluns: int = 300                   # Fig. 4: LUN = 300 GB
    first_window_s: float = 20 * MINUTE      # Table 5: "first 20 minutes" row (every policy gets it, notes Sec. 3.4)
    le_cut_s: float = 0.100                  # Table 5: src1_1 mean over IOs with response <= 100 ms
    hist_lo_s: float = 10 * US               # Sec. 4.1 (L195-204): the driver's histogram spans 10 us ...
    hist_hi_s: float = 1.0                   # ... to 1 s (IOs outside are clipped into the end bins, notes Sec. 1.7)
    hist_bins_per_decade: int = 10           # C: the histogram's resolution is not printed

    def __post_init__(self):
        if int(self.sublun_bytes) <= 0 or int(self.sublun_bytes) % PAGE_BYTES:
            raise ValueError(f"sublun_bytes must be a positive multiple of {PAGE_BYTES} bytes; got {self.sublun_bytes!r}")
        if int(self.lun_subluns) < 1:
            raise ValueError(f"lun_subluns must be >= 1; got {self.lun_subluns!r}")
        if not (0 < self.hist_lo_s < self.hist_hi_s):
            raise ValueError(f"need 0 < hist_lo_s < hist_hi_s; got {self.hist_lo_s!r}, {self.hist_hi_s!r}")
        if self.first_window_s <= 0 or self.le_cut_s <= 0 or int(self.hist_bins_per_decade) < 1:
            raise ValueError("first_window_s, le_cut_s must be > 0 s and hist_bins_per_decade >= 1")
        if not isinstance(self.testbed, Testbed):
            raise TypeError(f"testbed must be a tieringlab.models.storage.Testbed; got {type(self.testbed).__name__}")


@dataclass(frozen=True)
class OtfAstParams(_Measure):
    """OTF-AST (Table 3: ``t=60, i=50, n=20, m=60, c=3, o=10``) under the notes' readings (Sec. 2)."""

    t_s: int = 60                        # t, Table 3 / Fig. 4 "t=60 s": monitoring/decision interval (H)
    i_pct: float = 50.0                  # i, Table 3: concentration share threshold, % (reading M)
    n_top: int = 20                      # n, Table 3: top-n sub-LUNs of the concentration test (reading L-M)
    m_window: int = 60                   # m, Table 3: m1 counting window in s (= t: no effect); other readings below
    c_intervals: int = 3                 # c, Table 3: consecutive hot intervals before promotion (reading M)
    o_intervals: int = 10                # o, Table 3 / Fig. 4: intervals outside the hot set before demotion (H)
    hot_rule: str = "top_n"              # n1 (C, notes Sec. 2.2); "prefix_to_i" n2, "pct_of_subluns" n3
    i_reading: str = "percent"           # i as a share (C); "absolute": a top-n sub-LUN needs >= i IOs (i2)
    m_reading: str = "window"            # m1 (C); "total_floor" m2, "sublun_floor" m3, "history" m4
    c_reading: str = "consecutive"       # c1 (C); "within_m": c hot intervals among the last m (c2 = m4's rule)
    full_policy: str = "wait"            # f1 (C, L247-256 reasons with timeouts only); "evict_max_timeout" f2
    move_concurrency: int = 1            # C: a single sub-LUN-sized temporary buffer (Sec. 3.3.2) -> one move at a time
    copy_up: float = 2.5                 # Table 1: HDD->SSD copy of 1 GB, 2-3 (no user IO)
    copy_down: float = 6.5               # Table 1: SSD->HDD copy of 1 GB, 6-7 (no user IO)
    copy_unit: str = "seconds"           # unit of copy_up/copy_down: seconds (M, notes Sec. 1.6); "minutes" ablation
    skip_demotion_copy: bool = False     # Table 5 variant "without SSD->HDD write-back": demotion is a table update
    copy_share_floor: float = 0.1        # C: share of disk time a copy keeps when user IO saturates the HDD (FIFO never starves it)

    def __post_init__(self):
        super().__post_init__()
        choice("hot_rule", self.hot_rule, HOT_RULES, what="notes Sec. 2.2 readings n1, n2, n3")
        choice("i_reading", self.i_reading, I_READINGS)
        choice("m_reading", self.m_reading, M_READINGS, what="notes Sec. 2.2 readings m1-m4")
        choice("c_reading", self.c_reading, C_READINGS, what="notes Sec. 2.2 readings c1, c2")
        choice("full_policy", self.full_policy, FULL_POLICIES, what="notes Sec. 2.2 readings f1, f2")
        choice("copy_unit", self.copy_unit, COPY_UNITS)
        if int(self.t_s) != self.t_s or self.t_s < 1:
            raise ValueError(f"t_s (t) must be a whole number of seconds >= 1; got {self.t_s!r}")
        if self.i_reading == "percent" and not (0 < self.i_pct <= 100):
            raise ValueError(f"i_pct (i) must be in (0, 100] (a share of the interval's IOs, in %); got {self.i_pct!r}")
        if self.i_reading == "absolute" and not self.i_pct > 0:
            raise ValueError(f"i_pct (i) must be > 0 IOs under i_reading='absolute'; got {self.i_pct!r}")
        n_max = self.lun_subluns if self.hot_rule != "pct_of_subluns" else 100
        what = "the number of sub-LUNs" if self.hot_rule != "pct_of_subluns" else "100 % of the sub-LUNs"
        if int(self.n_top) != self.n_top or not (1 <= self.n_top <= n_max):
            raise ValueError(f"n_top (n) must be an integer in [1, {n_max}] ({what}, lun_subluns={self.lun_subluns}); "
                             f"got {self.n_top!r}")
        if int(self.m_window) != self.m_window or self.m_window < 1:
            raise ValueError(f"m_window (m) must be a whole number >= 1 (seconds under m1, IOs under m2/m3, "
                             f"intervals under m4); got {self.m_window!r}")
        if int(self.c_intervals) != self.c_intervals or self.c_intervals < 1:
            raise ValueError(f"c_intervals (c) must be an integer >= 1 (hot intervals before promotion); got {self.c_intervals!r}")
        if self.c_reading == "within_m" and self.c_intervals > self.m_window:
            raise ValueError(f"c_intervals (c) must be <= m_window (m) under c_reading='within_m'; got c={self.c_intervals}, m={self.m_window}")
        if int(self.o_intervals) != self.o_intervals or self.o_intervals < 1:
            raise ValueError(f"o_intervals (o) must be an integer >= 1 (timeout intervals); got {self.o_intervals!r}")
        if int(self.move_concurrency) != self.move_concurrency or self.move_concurrency < 1:
            raise ValueError(f"move_concurrency must be an integer >= 1; got {self.move_concurrency!r}")
        for name in ("copy_up", "copy_down"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be > 0 (Table 1 copy time, in copy_unit); got {v!r}")
        if not (0 < self.copy_share_floor <= 1):
            raise ValueError(f"copy_share_floor must be in (0, 1]; got {self.copy_share_floor!r}")

    @property
    def copy_s(self) -> tuple[float, float]:
        """(up, down) no-load copy times of one sub-LUN in seconds."""
        k = 60.0 if self.copy_unit == "minutes" else 1.0
        return float(self.copy_up) * k, float(self.copy_down) * k

    @property
    def history(self) -> bool:
        """c counted among the last m intervals (m4 = c2)."""
        return self.m_reading == "history" or self.c_reading == "within_m"


@dataclass(frozen=True)
class StaticTieringParams(_Measure):
    """Static tiering as evaluated (Table 3, L130-137; notes Sec. 3.1): placed once before the replay."""

    rank_by: str = "requests"            # C: sub-LUNs ranked by request count (reads + writes) in the training window

    def __post_init__(self):
        super().__post_init__()
        choice("rank_by", self.rank_by, ("requests", "bytes"))


@dataclass(frozen=True)
class FlashCacheParams(_Measure):
    """Facebook FlashCache as evaluated (Table 3: 4 KB blocks, 24 GB, LRU; write-back, notes Sec. 3.2-3.3)."""

    block_bytes: int = PAGE_BYTES        # Table 3: block size 4 KB
    pass_number: int = 1                 # Sec. 4.1 (L189-193): replayed twice; pass 1 cold, pass 2 on pass 1's cache
    dirty_thresh_pct: float = 20.0       # FlashCache default (its docs): cleaning keeps dirty blocks <= 20 % (global here, C)
    metadata_bytes: int = 4096           # C: a write-back write updates FlashCache's on-SSD metadata synchronously
    clean_merge_bytes: int = 128 * 1024  # C: the cleaner merges contiguous dirty blocks into writes of at most 128 KiB

    def __post_init__(self):
        super().__post_init__()
        if int(self.block_bytes) <= 0 or int(self.block_bytes) % 512:
            raise ValueError(f"block_bytes must be a positive multiple of 512; got {self.block_bytes!r}")
        if int(self.pass_number) != self.pass_number or self.pass_number < 1:
            raise ValueError(f"pass_number must be an integer >= 1; got {self.pass_number!r}")
        if not (0 < self.dirty_thresh_pct <= 100):
            raise ValueError(f"dirty_thresh_pct must be in (0, 100]; got {self.dirty_thresh_pct!r}")
        if int(self.metadata_bytes) < 0:
            raise ValueError(f"metadata_bytes must be >= 0; got {self.metadata_bytes!r}")


@dataclass(frozen=True)
class HddOnlyParams(_Measure):
    """The HDD RAID0 alone (Figs. 7 and 9, curve "HDD"; no mean is printed)."""


# ============================================================================ trace window

def replay_window(ds: xr.Dataset):
    """``(start, end)`` of the replay in trace seconds: attrs ``replay_start_s`` / ``replay_end_s``
    (default: the whole trace)."""
    t = ds["time"].values
    start = float(ds.attrs.get("replay_start_s", t[0] if t.size else 0.0))
    end = float(ds.attrs.get("replay_end_s", (t[-1] + 1e-9) if t.size else start))
    if not end > start:
        raise ValueError(f"the trace's replay window is empty: replay_start_s={start}, replay_end_s={end}")
    return start, end


def _check_trace(ds: xr.Dataset, p: _Measure):
    # the contract's one trace check (variables, at least one request, finite non-decreasing times, whole
    # offsets and sizes), as every trace policy runs it; then this testbed's own limit, the LUN
    check_trace(ds, f"{type(p).__name__.removesuffix('Params')} testbed")
    end = ds["offset"].values + np.maximum(ds["size"].values, 1)
    lun = int(p.lun_subluns) * int(p.sublun_bytes)
    if end.size and int(end.max()) > lun:
        i = int(np.argmax(end))
        raise ValueError(f"request {i} ends at byte {int(end[i])}, beyond the LUN of lun_subluns x sublun_bytes = {lun} bytes")


def _replay(ds: xr.Dataset, p: _Measure):
    """The replayed requests as arrays: time (s from the replay start), offset, size, is_write, sub-LUN."""
    _check_trace(ds, p)
    start, end = replay_window(ds)
    t = ds["time"].values
    lo, hi = np.searchsorted(t, [start, end], side="left")
    r = slice(int(lo), int(hi))
    off = ds["offset"].values[r].astype(np.int64)
    return {"time": t[r] - start, "offset": off, "size": ds["size"].values[r].astype(np.int64),
            "is_write": ds["is_write"].values[r].astype(bool), "sub": off // int(p.sublun_bytes),
            "length_s": end - start, "start_s": start}


def _ssd_subluns(capacities, p: _Measure) -> np.ndarray:
    caps = check_capacities(capacities)
    lun = int(p.lun_subluns) * int(p.sublun_bytes)
    if np.any(caps > lun):
        raise ValueError(f"capacities: an SSD of {int(caps.max())} bytes is larger than the LUN "
                         f"({p.lun_subluns} sub-LUNs x {p.sublun_bytes} bytes = {lun} bytes); allowed 0 .. {lun}")
    return caps // int(p.sublun_bytes)


# ============================================================================ monitoring (array ops)

def interval_counts(sub, time, n_sub: int, t_s: int, window_s: int, n_intervals: int):
    """``cnt[k, s]``: user IOs to sub-LUN ``s`` in the ``window_s`` seconds before the end of interval ``k``
    (``(k + 1) t_s``), for every interval at once: per-second counts, a prefix sum, two gathers."""
    n_sec = int(n_intervals) * int(t_s)
    sec = np.minimum(np.asarray(time) // 1, n_sec - 1).astype(np.int64)
    per_sec = np.zeros((n_sec + 1, n_sub), np.int64)
    np.add.at(per_sec, (sec + 1, np.asarray(sub)), 1)
    P = np.cumsum(per_sec, axis=0)                       # P[x] = IOs in seconds [0, x)
    ends = (np.arange(int(n_intervals)) + 1) * int(t_s)
    return P[ends] - P[np.maximum(ends - int(window_s), 0)]


def hot_matrix(cnt, p: OtfAstParams):
    """``(hot[k, s], concentrated[k])`` for every interval at once (notes Sec. 1.4 and 2.2).

    - n1 ``top_n``: ``S_k`` = the ``n`` sub-LUNs with the largest ``cnt`` (count > 0, ties to the lower
      index); concentrated when ``sum_{S_k} cnt >= (i/100) sum cnt``; hot = ``S_k``.
    - n2 ``prefix_to_i``: the smallest prefix of the sorted counts reaching ``i`` % of the IOs;
      concentrated when it has at most ``n`` members; hot = that prefix.
    - n3 ``pct_of_subluns``: n1 with ``n`` read as a percentage of the sub-LUNs (20 % of 300 = 60).
    - i2 ``i_reading="absolute"``: a top-n sub-LUN is hot when it received at least ``i`` IOs.
    - m2 ``total_floor``: an interval with fewer than ``m`` IOs is never concentrated; m3
      ``sublun_floor``: a sub-LUN needs at least ``m`` IOs to be hot.

    numpy: one stable sort per row dominates, over a small matrix (intervals x 300), so there is nothing
    for jit to gain and its per-shape compilation would cost seconds.
    """
    cnt = np.asarray(cnt)
    K, S = cnt.shape
    order = np.argsort(-cnt, axis=1, kind="stable")      # descending counts, ties to the lower index
    srt = np.take_along_axis(cnt, order, axis=1)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(S), (K, S)), axis=1)
    total = cnt.sum(axis=1)
    n = int(p.n_top) if p.hot_rule != "pct_of_subluns" else max(1, int(round(p.n_top / 100.0 * S)))
    n = min(n, S)
    if p.hot_rule == "prefix_to_i" and p.i_reading == "percent":
        cum = np.cumsum(srt, axis=1)
        need = (p.i_pct / 100.0) * total
        prefix = np.sum(cum < need[:, None], axis=1) + 1   # members of the smallest prefix reaching i %
        conc = (total > 0) & (prefix <= n)
        hot = conc[:, None] & (rank < prefix[:, None]) & (cnt > 0)
    elif p.i_reading == "absolute":
        hot = (rank < n) & (cnt >= p.i_pct) & (cnt > 0)
        conc = (total > 0) & hot.any(axis=1)
    else:
        top = srt[:, :n].sum(axis=1)
        conc = (total > 0) & (top >= (p.i_pct / 100.0) * total)
        hot = conc[:, None] & (rank < n) & (cnt > 0)
    if p.m_reading == "total_floor":
        conc = conc & (total >= p.m_window)
        hot = hot & conc[:, None]
    elif p.m_reading == "sublun_floor":
        hot = hot & (cnt >= p.m_window)
    return hot, conc


def _history_counts(hot, m: int):
    """Hot intervals of each sub-LUN among the last ``m`` intervals (c2 / m4), by a prefix sum."""
    h = np.asarray(hot, np.int32)
    P = np.concatenate([np.zeros((1, h.shape[1]), np.int32), np.cumsum(h, axis=0, dtype=np.int32)])
    k = np.arange(h.shape[0]) + 1
    return P[k] - P[np.maximum(k - int(m), 0)]


# ============================================================================ decisions + move engine (lax.scan)

_IDLE, _QUEUED, _COPY, _SYNC, _DONE = 0, 1, 2, 3, 4


@partial(jax.jit, static_argnames=("t_s", "n_moves_max", "conc", "history", "evict"))
def _controller(hot, hsum, cnt, work, writes, cap, c, o, copy_up_s, copy_down_s, floor, sync_iops, skip_down,
                *, t_s, n_moves_max, conc, history, evict):
    """The interval scan (module docstring, step 2). Per interval ``k``: the engine runs through its
    seconds (copies advance at the disk time user IO leaves free), then the decision at its end queues
    demotions and promotions. Returns the move log and per-interval state counts.

    State: per sub-LUN ``tier`` (where the tiering table points), ``busy`` (a move is queued or running),
    ``streak`` and ``tmo``; the move log (``n_moves_max`` rows: sub-LUN, direction, queue/start/copy-end/
    sync-end times, work, buffered writes; rows are written at queue, start and end); the FIFO ``head``;
    and ``conc`` engine slots holding the running moves (so an event costs O(conc), not O(log)).
    """
    K, S = hot.shape
    M = n_moves_max
    inf = jnp.inf
    log0 = dict(sub=jnp.full(M, S, jnp.int32), up=jnp.zeros(M, bool), tq=jnp.full(M, inf), ts=jnp.full(M, inf),
                tc=jnp.full(M, inf), te=jnp.full(M, inf), w0=jnp.zeros(M), nbw=jnp.zeros(M), rem=jnp.zeros(M))
    slot0 = dict(mv=jnp.full(conc, M, jnp.int32), sub=jnp.full(conc, S, jnp.int32), up=jnp.zeros(conc, bool),
                 phase=jnp.zeros(conc, jnp.int32), rem=jnp.zeros(conc), nbw=jnp.zeros(conc),
                 ts=jnp.full(conc, inf), tc=jnp.full(conc, inf), te=jnp.full(conc, inf))
    st0 = dict(tier=jnp.zeros(S, jnp.int32), busy=jnp.zeros(S, bool), streak=jnp.zeros(S, jnp.int32),
               tmo=jnp.zeros(S, jnp.int32), n=jnp.int32(0), head=jnp.int32(0), pending_up=jnp.int32(0),
               log=log0, slot=slot0)

    def second(j, carry):
        st, k = carry
        x0 = (k * t_s + j).astype(jnp.float64)
        w_sec = work[k * t_s + j]
        wr_sec = writes[k * t_s + j]
        f = jnp.maximum(1.0 - jnp.sum(jnp.where(st["tier"] == HDD, w_sec, 0.0)), floor)

        def body(c_):
            st_, x = c_
            lg, sl = st_["log"], st_["slot"]
            # start the head of the queue in a free slot (a promotion needs an SSD slot too)
            free = sl["phase"] == _IDLE
            h = st_["head"]
            hs = jnp.minimum(h, M - 1)
            occupancy = jnp.sum(st_["tier"] == SSD) + jnp.sum(sl["up"] & ~free)
            can = (h < st_["n"]) & free.any() & (~lg["up"][hs] | (occupancy < cap))
            q = jnp.argmax(free)
            put = lambda a, v: a.at[q].set(jnp.where(can, v, a[q]))  # noqa: E731
            sl = dict(sl, mv=put(sl["mv"], hs), sub=put(sl["sub"], lg["sub"][hs]), up=put(sl["up"], lg["up"][hs]),
                      phase=put(sl["phase"], _COPY), rem=put(sl["rem"], lg["w0"][hs]), nbw=put(sl["nbw"], 0.0),
                      ts=put(sl["ts"], x))
            lg = dict(lg, ts=lg["ts"].at[jnp.where(can, hs, M)].set(x, mode="drop"))
            # advance to the next event: a copy ends, a sync ends, or the second ends
            copying = sl["phase"] == _COPY
            rate = f / jnp.maximum(jnp.sum(copying), 1)
            t_copy = jnp.where(copying, x + sl["rem"] / rate, inf)
            t_sync = jnp.where(sl["phase"] == _SYNC, sl["te"], inf)
            e = jnp.where(can, x, jnp.minimum(jnp.minimum(t_copy.min(), t_sync.min()), x0 + 1.0))
            dt = e - x
            rem = jnp.where(copying, jnp.maximum(sl["rem"] - rate * dt, 0.0), sl["rem"])
            nbw = jnp.where(copying, sl["nbw"] + wr_sec[jnp.minimum(sl["sub"], S - 1)] * dt, sl["nbw"])
            fin_copy = copying & (t_copy <= e)
            te = jnp.where(fin_copy, e + nbw / sync_iops, sl["te"])
            tc = jnp.where(fin_copy, e, sl["tc"])
            phase = jnp.where(fin_copy, _SYNC, sl["phase"])
            fin = (phase == _SYNC) & (te <= e)
            # a finished move: log it, flip the tiering table, free the slot
            mv = jnp.where(fin, sl["mv"], M)
            lg = dict(lg, tc=lg["tc"].at[jnp.where(fin_copy, sl["mv"], M)].set(tc, mode="drop"),
                      te=lg["te"].at[mv].set(te, mode="drop"), nbw=lg["nbw"].at[mv].set(nbw, mode="drop"))
            subs = jnp.where(fin, sl["sub"], S)
            st_ = dict(st_, head=h + can.astype(jnp.int32), log=lg,
                       tier=st_["tier"].at[subs].set(jnp.where(sl["up"], SSD, HDD), mode="drop"),
                       busy=st_["busy"].at[subs].set(False, mode="drop"),
                       tmo=st_["tmo"].at[subs].set(0, mode="drop"),
                       streak=st_["streak"].at[subs].set(0, mode="drop"),
                       pending_up=st_["pending_up"] - jnp.sum(fin & sl["up"]).astype(jnp.int32))
            sl = dict(sl, rem=rem, nbw=nbw, te=jnp.where(fin, inf, te), tc=jnp.where(fin, inf, tc),
                      phase=jnp.where(fin, _IDLE, phase), up=jnp.where(fin, False, sl["up"]),
                      mv=jnp.where(fin, M, sl["mv"]), sub=jnp.where(fin, S, sl["sub"]))
            return dict(st_, slot=sl), e

        st, _ = jax.lax.while_loop(lambda c_: c_[1] < x0 + 1.0, body, (st, x0))
        return st, k

    def interval(st, k):
        st, _ = jax.lax.fori_loop(0, t_s, second, (st, k))
        # --- the decision at the end of interval k (notes Sec. 1.4)
        hk = hot[k]
        idle = ~st["busy"]
        on_hdd = idle & (st["tier"] == HDD)
        on_ssd = idle & (st["tier"] == SSD)
        streak = jnp.where(on_hdd, jnp.where(hk, st["streak"] + 1, 0), st["streak"])
        tmo = jnp.where(on_ssd, jnp.where(hk, 0, st["tmo"] + 1), st["tmo"])
        ready = (hsum[k] >= c) if history else (streak >= c)
        demote = on_ssd & (tmo >= o)
        cand = on_hdd & ready
        staying = jnp.sum(on_ssd & ~demote)
        slots = jnp.maximum(cap - staying - st["pending_up"], 0)
        n_cand = jnp.sum(cand)
        if evict:
            # f2: evict the residents not hot now with the largest timeout count, one per waiting candidate
            evictable = on_ssd & ~demote & (tmo >= 1)
            ev_key = jnp.where(evictable, -tmo, jnp.iinfo(jnp.int32).max)
            ev_rank = jnp.empty(S, jnp.int32).at[jnp.argsort(ev_key, stable=True)].set(jnp.arange(S, dtype=jnp.int32))
            n_ev = jnp.minimum(jnp.maximum(n_cand - slots, 0), jnp.sum(evictable))
            demote = demote | (evictable & (ev_rank < n_ev))
            slots = slots + n_ev
        # promotions: candidates by count, highest first (ties to the lower index), while there is room
        c_key = jnp.where(cand, -cnt[k], jnp.iinfo(cnt.dtype).max)
        c_rank = jnp.empty(S, jnp.int32).at[jnp.argsort(c_key, stable=True)].set(jnp.arange(S, dtype=jnp.int32))
        promote = cand & (c_rank < slots)
        # queue: demotions (by sub-LUN index) ahead of promotions (by count)
        n_dem = jnp.sum(demote).astype(jnp.int32)
        n_pro = jnp.sum(promote).astype(jnp.int32)
        d_rank = jnp.cumsum(demote) - 1
        pos = jnp.where(demote, st["n"] + d_rank, jnp.where(promote, st["n"] + n_dem + c_rank, M))
        pos = jnp.where(pos < M, pos, M)
        tq = ((k + 1) * t_s).astype(jnp.float64)
        work0 = jnp.where(promote, copy_up_s, jnp.where(skip_down, 0.0, copy_down_s))
        lg = st["log"]
        lg = dict(lg, sub=lg["sub"].at[pos].set(jnp.arange(S, dtype=jnp.int32), mode="drop"),
                  up=lg["up"].at[pos].set(promote, mode="drop"), tq=lg["tq"].at[pos].set(tq, mode="drop"),
                  w0=lg["w0"].at[pos].set(work0, mode="drop"))
        st = dict(st, streak=jnp.where(promote, 0, streak), tmo=tmo, busy=st["busy"] | demote | promote, log=lg,
                  n=jnp.minimum(st["n"] + n_dem + n_pro, M).astype(jnp.int32), pending_up=st["pending_up"] + n_pro)
        out = dict(resident=jnp.sum(st["tier"] == SSD), queued=st["n"] - st["head"],
                   moving=jnp.sum(st["slot"]["phase"] != _IDLE), n_hot=jnp.sum(hk), promoted=n_pro, demoted=n_dem)
        return st, out

    st, ys = jax.lax.scan(interval, st0, jnp.arange(K))
    # copies still running at the end: their remaining work (the IO level paces their chunks by it)
    # and the syncs still running (their planned end and buffered writes)
    sl, lg = st["slot"], st["log"]
    cp = jnp.where(sl["phase"] == _COPY, sl["mv"], M)
    sy = jnp.where(sl["phase"] == _SYNC, sl["mv"], M)
    lg = dict(lg, rem=lg["rem"].at[cp].set(sl["rem"], mode="drop"), te=lg["te"].at[sy].set(sl["te"], mode="drop"),
              nbw=lg["nbw"].at[sy].set(sl["nbw"], mode="drop"))
    return lg, st["n"], ys


def _hdd_only_work(tb: Testbed, rq, key, n_sec: int, n_sub: int):
    """HDD disk time of each (second, sub-LUN) if every request went to the HDD, as a share of the array
    (disk-seconds / n_disks): the user load the copies compete with (fluid estimate, module docstring)."""
    h = tb.hdd
    j, d, o, b = storage.raid0_pieces(h, rq["offset"], rq["size"])
    rng = np.random.default_rng(np.asarray(jax.random.key_data(jax.random.split(key)[0])).ravel())
    u = rng.random((rq["time"].size, h.n_disks))[j, d] if j.size else np.zeros(0)
    svc, _ = storage.hdd_service_times(h, rq["time"][j], d, o, b, rq["is_write"][j], u)
    sec = np.minimum(rq["time"] // 1, n_sec - 1).astype(np.int64)
    cell = sec * n_sub + rq["sub"]
    W = np.bincount(cell[j], weights=svc / h.n_disks, minlength=n_sec * n_sub).reshape(n_sec, n_sub)
    # writes per (second, sub-LUN): the engine's estimate of what the buffer absorbs during a copy is
    # the writes of each second it overlaps, weighted by the overlap (exact in whole seconds)
    w = rq["is_write"]
    WR = np.bincount(cell[w], minlength=n_sec * n_sub).astype(np.float64).reshape(n_sec, n_sub)
    return W, WR


# ============================================================================ routing and the IO level

def _route_by_moves(rq, log, n_moves, initial_ssd, p: _Measure):
    """Per request: the route (HDD / SSD / BUFFER), the move whose buffer window it falls in (-1: none),
    from the move log (searchsorted over (sub-LUN, start) keys; no loop over requests)."""
    sub, t, w = rq["sub"], rq["time"], rq["is_write"]
    n = t.size
    started = np.flatnonzero(np.isfinite(log["ts"][:n_moves]))
    ms, mt = log["sub"][started].astype(np.int64), log["ts"][started]
    o = np.lexsort((started, mt, ms))
    started, ms, mt = started[o], ms[o], mt[o]
    # the last move of the request's sub-LUN that started at or before it
    big = float(max(t.max() if n else 0.0, mt.max() if mt.size else 0.0)) + 2.0
    keys_m = ms * big + mt
    keys_r = sub * big + t
    pos = np.searchsorted(keys_m, keys_r, side="right") - 1
    has = (pos >= 0) & (ms[np.maximum(pos, 0)] == sub) if started.size else np.zeros(n, bool)
    mv = np.where(has, started[np.maximum(pos, 0)] if started.size else 0, -1)
    init = np.asarray(initial_ssd, bool)[sub]
    up = np.where(has, log["up"][np.maximum(mv, 0)], False)
    tc = np.where(has, log["tc"][np.maximum(mv, 0)], -np.inf)
    te = np.where(has, log["te"][np.maximum(mv, 0)], -np.inf)
    in_copy = has & (t < tc)
    in_sync = has & ~in_copy & (t < te)
    dest_ssd = np.where(has, up, init)
    src_ssd = np.where(has, ~up, init)
    window = np.where(in_copy | in_sync, mv, -1)
    buf_read = storage.buffer_read_hits(window, t, rq["offset"], rq["size"], w)
    route = np.where(dest_ssd, SSD, HDD)
    route = np.where(in_copy, np.where(src_ssd, SSD, HDD), route)
    route = np.where(in_copy & w, BUFFER, route)
    route = np.where(buf_read, BUFFER, route)
    return route.astype(np.int64), window


def _move_background(rq, route, window, log, n_moves, p: _Measure):
    """Background IO of the moves: kcopyd chunks over each copy window (both sides) and the buffer sync
    (one write per distinct buffered extent, in address order, at sync_max_iops after the copy)."""
    tb = p.testbed
    L = float(rq["length_s"])
    idx = np.arange(n_moves)
    ts, tc = log["ts"][idx], log["tc"][idx]
    real = np.isfinite(ts) & (log["w0"][idx] > 0)
    mv = idx[real]
    # a copy still running at the end of the replay: chunks at the pace it had reached
    done_w = np.maximum(log["w0"][mv] - log["rem"][mv], 1e-9)
    end = np.where(np.isfinite(tc[mv]), tc[mv], ts[mv] + (L - ts[mv]) * log["w0"][mv] / done_w)
    cm, ct, co, cb, cw = storage.copy_jobs(tb, log["sub"][mv], ts[mv], end, log["up"][mv], unit_bytes=int(p.sublun_bytes))
    keep = ct < L
    cm, ct, co, cb, cw = cm[keep], ct[keep], co[keep], cb[keep], cw[keep]
    # sync: the buffered writes of each move, deduplicated by extent, in address order
    b = np.flatnonzero((route == BUFFER) & rq["is_write"] & (window >= 0))
    bw, bo, bs = window[b], rq["offset"][b], rq["size"][b]
    if b.size:
        o = np.lexsort((bs, bo, bw))
        bw, bo, bs = bw[o], bo[o], bs[o]
        keep = np.r_[True, (bw[1:] != bw[:-1]) | (bo[1:] != bo[:-1])]
        bw, bo, bs = bw[keep], bo[keep], bs[keep]
    first = np.searchsorted(bw, bw, side="left")
    k = np.arange(bw.size) - first
    st = log["tc"][bw] + k / tb.sync_max_iops
    ok = st < L
    bw, bo, bs, st = bw[ok], bo[ok], bs[ok], st[ok]
    up_b = log["up"][bw] if bw.size else np.zeros(0, bool)
    hdd = dict(time=np.r_[ct, st[~up_b]], offset=np.r_[co, bo[~up_b]], size=np.r_[cb, bs[~up_b]],
               is_write=np.r_[cw, np.ones((~up_b).sum(), bool)])
    ssd = dict(time=np.r_[ct, st[up_b]], size=np.r_[cb, bs[up_b]], is_write=np.r_[~cw, np.ones(up_b.sum(), bool)])
    sync_ios = np.bincount(bw, minlength=n_moves) if bw.size else np.zeros(n_moves, np.int64)
    return hdd, ssd, mv[cm] if cm.size else np.zeros(0, np.int64), sync_ios


def _summary(p: _Measure, rq, resp):
    """Table 4/5 quantities of one capacity (module docstring; notes Sec. 1.7 and 6.4)."""
    t = rq["time"]
    n = t.size
    lo, hi = np.log10(p.hist_lo_s), np.log10(p.hist_hi_s)
    nb = int(round((hi - lo) * p.hist_bins_per_decade))
    edges = np.logspace(lo, hi, nb + 1)
    centers = np.sqrt(edges[:-1] * edges[1:])
    b = np.clip(np.searchsorted(edges, resp, side="right") - 1, 0, nb - 1)
    first = t < p.first_window_s
    le = resp <= p.le_cut_s
    mean = lambda m: float(resp[m].mean()) if np.any(m) else float("nan")  # noqa: E731
    return {"mean_response_s": float(resp.mean()) if n else float("nan"),
            "mean_response_first_s": mean(first),
            "mean_response_le_cut_s": mean(le),
            "hist_mean_response_s": float(centers[b].mean()) if n else float("nan"),
            "hist_mean_response_le_cut_s": float(centers[b][le].mean()) if np.any(le) else float("nan")}


_GRID = np.logspace(-6, 1, 71)   # response-time CDF grid, 1 us .. 10 s, 10 points per decade (Figs. 7-9 axis)


def _pages(size):
    return -(-np.maximum(np.asarray(size, np.int64), 1) // PAGE_BYTES)


def _result(name: str, p: _Measure, capacities, rq, per_cap: list[dict], *, extra_dims: dict | None = None):
    """Assemble the trace_result Dataset over the capacities from per-capacity dicts."""
    caps = check_capacities(capacities)
    n = rq["time"].size
    stack = lambda k: np.asarray([d[k] for d in per_cap])  # noqa: E731
    counts = {k: stack(k) for k in ("ssd_reads", "ssd_writes", "md_reads", "md_writes")}
    for k in ("update_ssd_reads", "update_ssd_writes", "update_md_reads", "update_md_writes", "dirty_evictions"):
        if k in per_cap[0]:
            counts[k] = stack(k)
    resp = np.stack([d["response_s"] for d in per_cap])
    scalars = [k for k, v in per_cap[0].items()
               if isinstance(v, (int, float, bool, np.integer, np.floating, np.bool_)) and k not in counts and k != "hits"]
    extra = {k: stack(k) for k in scalars}
    extra["response_s"] = ((CAPACITY_DIM, "replay_request"), resp)
    extra["route"] = ((CAPACITY_DIM, "replay_request"), np.stack([d["route"] for d in per_cap]).astype(np.int8))
    extra["response_cdf"] = ((CAPACITY_DIM, "response_grid_s"),
                             np.stack([np.searchsorted(np.sort(r), _GRID, side="right") / max(n, 1) for r in resp]))
    for k, (dims, fn) in (extra_dims or {}).items():
        extra[k] = (((CAPACITY_DIM,) + dims), np.stack([fn(d) for d in per_cap]))
    ds = trace_result(caps, policy=name, source=_SOURCE, requests=n, hits=stack("hits"), counts=counts,
                      io_bytes=PAGE_BYTES, extra=extra,
                      attrs={"replay_length_s": float(rq["length_s"]), "replay_start_s": float(rq["start_s"])})
    ds = ds.assign_coords(response_grid_s=("response_grid_s", _GRID), replay_time_s=("replay_request", rq["time"]))
    ds["response_s"].attrs.update(units="s", long_name="user IO response time (driver + queueing + service)")
    ds["response_cdf"].attrs.update(units="1", long_name="share of user IOs with response <= grid value")
    ds["route"].attrs.update(long_name="where the IO was served: 0 HDD, 1 SSD, 2 temporary buffer")
    for k in ("mean_response_s", "mean_response_first_s", "mean_response_le_cut_s", "hist_mean_response_s",
              "hist_mean_response_le_cut_s"):
        if k in ds:
            ds[k].attrs["units"] = "s"
    ds.attrs.update({k: v for k, v in dataclasses.asdict(p).items() if np.isscalar(v)})
    return ds


def _serve_and_count(p: _Measure, key, rq, route, *, bg_hdd=None, bg_ssd=None, ssd_extra=None, util=True):
    t, w, sz = rq["time"], rq["is_write"], rq["size"]
    n_sec = int(np.ceil(rq["length_s"]))
    out = storage.serve(p.testbed, key, time=t, offset=rq["offset"], size=sz, is_write=w, route=route,
                        bg_hdd=bg_hdd, bg_ssd=bg_ssd, ssd_extra_bytes=ssd_extra,
                        util_window=(0.0, n_sec) if util else None)
    pg = _pages(sz)
    d = {"response_s": out["response_s"], "route": route, **_summary(p, rq, out["response_s"]),
         "ssd_reads": int(pg[(route == SSD) & ~w].sum()), "ssd_writes": int(pg[(route == SSD) & w].sum()),
         "md_reads": int(pg[(route == HDD) & ~w].sum()), "md_writes": int(pg[(route == HDD) & w].sum()),
         "buffer_hits": int((route == BUFFER).sum()), "hdd_cache_hits": out["hdd_cache_hits"]}
    d["buffer_ratio"] = d["buffer_hits"] / max(t.size, 1)
    return d, out


# ============================================================================ the systems

def _otf_ast_one(rq, n_ssd: int, p: OtfAstParams, key, pre):
    hot, hsum, cnt, W, WR, K = pre
    up_s, down_s = p.copy_s
    # no-load copy work is in seconds of an otherwise idle array; the engine's floor keeps it moving
    M = 2 * int(K) * int(p.lun_subluns) + 8     # a bound for any SSD size: one shape per window length
    log, n_moves, ys = _controller(hot, hsum, cnt, W, WR, jnp.int32(n_ssd), jnp.int32(p.c_intervals),
                                   jnp.int32(p.o_intervals), up_s, down_s, p.copy_share_floor,
                                   p.testbed.sync_max_iops, bool(p.skip_demotion_copy), t_s=int(p.t_s),
                                   n_moves_max=M, conc=int(p.move_concurrency), history=bool(p.history),
                                   evict=p.full_policy == "evict_max_timeout")
    log = {k: np.asarray(v) for k, v in log.items()}
    n_moves = int(n_moves)
    ys = {k: np.asarray(v) for k, v in ys.items()}
    route, window = _route_by_moves(rq, log, n_moves, np.zeros(p.lun_subluns, bool), p)
    bg_hdd, bg_ssd, chunk_move, sync_ios = _move_background(rq, route, window, log, n_moves, p)
    d, out = _serve_and_count(p, key, rq, route, bg_hdd=bg_hdd, bg_ssd=bg_ssd)
    measured = np.full(n_moves, np.nan)
    nc = chunk_move.size
    if nc:
        m_end = np.full(n_moves, -np.inf)
        np.maximum.at(m_end, chunk_move, out["bg_hdd_departure"][:nc])
        measured = np.where(np.isfinite(m_end) & np.isfinite(log["tc"][:n_moves]), m_end, np.nan)
    up = log["up"][:n_moves]
    started = np.isfinite(log["ts"][:n_moves])
    done = np.isfinite(log["te"][:n_moves])
    unit_pages = int(p.sublun_bytes) // PAGE_BYTES
    copied_up = int((up & done).sum())
    copied_down = int((~up & done & (log["tc"][:n_moves] > log["ts"][:n_moves])).sum())
    d.update(hits=int((route == SSD).sum()),
             update_md_reads=copied_up * unit_pages, update_ssd_writes=copied_up * unit_pages,
             update_ssd_reads=copied_down * unit_pages, update_md_writes=copied_down * unit_pages,
             promotions=int((up & started).sum()), demotions=int((~up & started).sum()),
             n_moves=n_moves)
    # Fig. 6: SSD-resident sub-LUNs at each minute, from the move log (a move counts when it ends)
    minutes = np.arange(int(np.ceil(rq["length_s"] / MINUTE)) + 1) * MINUTE
    te = log["te"][:n_moves]
    sign = np.where(up, 1, -1)
    o = np.argsort(te, kind="stable")
    cum = np.r_[0, np.cumsum(sign[o])]
    d["resident_per_minute"] = cum[np.searchsorted(te[o], minutes, side="right")]
    d["hdd_util_per_s"] = out["hdd_util"].mean(axis=0)
    d["interval_resident"] = ys["resident"]
    d["interval_hot"] = ys["n_hot"]
    moves = dict(sub=log["sub"][:n_moves], up=up, queued_s=log["tq"][:n_moves], start_s=log["ts"][:n_moves],
                 copy_end_s=log["tc"][:n_moves], sync_end_s=log["te"][:n_moves], measured_copy_end_s=measured,
                 buffer_writes=log["nbw"][:n_moves], sync_ios=sync_ios[:n_moves])
    d["moves"] = moves
    return d


def _precompute(rq, p: OtfAstParams, key):
    t_s = int(p.t_s)
    K = max(1, int(np.ceil(rq["length_s"] / t_s)))
    S = int(p.lun_subluns)
    window = int(p.m_window) if p.m_reading == "window" else t_s
    cnt = interval_counts(rq["sub"], rq["time"], S, t_s, window, K)
    hot, _conc = hot_matrix(cnt, p)
    hsum = _history_counts(hot, int(p.m_window)) if p.history else np.zeros(hot.shape, np.int32)
    W, WR = _hdd_only_work(p.testbed, rq, key, K * t_s, S)
    return jnp.asarray(hot), jnp.asarray(hsum), jnp.asarray(cnt), jnp.asarray(W), jnp.asarray(WR), K


def otf_ast(ds: xr.Dataset, capacities, params: OtfAstParams = OtfAstParams(), key=None) -> xr.Dataset:
    """OTF-AST over the replay window of ``ds`` for each SSD size (bytes; whole sub-LUNs) in ``capacities``.

    ``key`` (``jax.random``) draws the disks' rotational latencies (same draws for every policy).
    Returns :func:`~tieringlab.policies.contract.trace_result` with, beside the counts, Table 4's
    ``hit_ratio`` (SSD) and ``buffer_ratio``, Table 5's means (``mean_response_s``, ``_first_s``,
    ``_le_cut_s``, histogram means), ``response_s`` and ``response_cdf`` (Figs. 7-9), Fig. 6's
    ``resident_per_minute``, ``hdd_util_per_s`` and the move log (dim ``move``).
    """
    p = params
    key = jax.random.key(0) if key is None else key
    n_ssd = _ssd_subluns(capacities, p)
    rq = _replay(ds, p)
    pre = _precompute(rq, p, key)
    per = [_otf_ast_one(rq, int(c), p, key, pre) for c in n_ssd]   # a handful of SSD sizes
    n_min = per[0]["resident_per_minute"].size
    m_max = max(d["n_moves"] for d in per)

    def pad_moves(d, k, fill):
        v = np.asarray(d["moves"][k])
        return np.r_[v, np.full(m_max - v.size, fill, dtype=np.result_type(v.dtype, type(fill)))]

    extra = {"resident_per_minute": (("minute",), lambda d: d["resident_per_minute"]),
             "hdd_util_per_s": (("second",), lambda d: d["hdd_util_per_s"]),
             "interval_resident": (("interval",), lambda d: d["interval_resident"]),
             "interval_hot": (("interval",), lambda d: d["interval_hot"])}
    for k, fill in (("sub", -1), ("up", False), ("queued_s", np.nan), ("start_s", np.nan), ("copy_end_s", np.nan),
                    ("sync_end_s", np.nan), ("measured_copy_end_s", np.nan), ("buffer_writes", np.nan),
                    ("sync_ios", -1)):
        extra[f"move_{k}"] = (("move",), partial(pad_moves, k=k, fill=fill))
    ds_out = _result("OTF-AST without write-back" if p.skip_demotion_copy else "OTF-AST", p, capacities, rq,
                     per, extra_dims=extra)
    ds_out = ds_out.assign_coords(minute=("minute", np.arange(n_min)))
    return ds_out


def static_tiering(ds: xr.Dataset, capacities, params: StaticTieringParams = StaticTieringParams(),
                   key=None) -> xr.Dataset:
    """Static tiering (Table 3, notes Sec. 3.1): the SSD holds, for the whole replay, the sub-LUNs with the
    most requests in the window of the replay's length just before it (ties to the lower index)."""
    p = params
    key = jax.random.key(0) if key is None else key
    n_ssd = _ssd_subluns(capacities, p)
    rq = _replay(ds, p)
    start, end = replay_window(ds)
    t = ds["time"].values
    lo, hi = np.searchsorted(t, [start - (end - start), start], side="left")
    if hi <= lo:
        raise ValueError(f"static tiering trains on the {end - start:.0f} s before replay_start_s={start}; "
                         f"the trace has no request there (set ds.attrs['replay_start_s'] later)")
    tr_sub = ds["offset"].values[lo:hi] // int(p.sublun_bytes)
    wts = ds["size"].values[lo:hi] if p.rank_by == "bytes" else None
    score = np.bincount(tr_sub, weights=wts, minlength=int(p.lun_subluns))[: int(p.lun_subluns)]
    order = np.argsort(-score, kind="stable")
    per = []
    for c in n_ssd:   # a handful of SSD sizes
        on_ssd = np.zeros(int(p.lun_subluns), bool)
        on_ssd[order[: int(c)]] = True
        route = np.where(on_ssd[rq["sub"]], SSD, HDD).astype(np.int64)
        d, out = _serve_and_count(p, key, rq, route)
        d["hits"] = int((route == SSD).sum())
        d["hdd_util_per_s"] = out["hdd_util"].mean(axis=0)
        d["placed"] = on_ssd
        per.append(d)
    return _result("static tiering", p, capacities, rq, per,
                   extra_dims={"placed": (("sublun",), lambda d: d["placed"]),
                               "hdd_util_per_s": (("second",), lambda d: d["hdd_util_per_s"])})


def hdd_only(ds: xr.Dataset, capacities, params: HddOnlyParams = HddOnlyParams(), key=None) -> xr.Dataset:
    """The HDD RAID0 alone (Figs. 7, 9): every IO to the HDD, whatever the SSD size."""
    p = params
    key = jax.random.key(0) if key is None else key
    caps = check_capacities(capacities)
    rq = _replay(ds, p)
    route = np.full(rq["time"].size, HDD, np.int64)
    d, out = _serve_and_count(p, key, rq, route)
    d["hits"] = 0
    d["hdd_util_per_s"] = out["hdd_util"].mean(axis=0)
    return _result("HDD only", p, caps, rq, [d] * caps.size,
                   extra_dims={"hdd_util_per_s": (("second",), lambda d: d["hdd_util_per_s"])})


def flashcache(ds: xr.Dataset, capacities, params: FlashCacheParams = FlashCacheParams(), key=None) -> xr.Dataset:
    """FlashCache (Table 3; notes Sec. 3.2-3.3): a 4 KB-block LRU write-back cache, pass ``pass_number``.

    - **Cacheable** IOs are block-aligned whole blocks; others go straight to the HDD (FlashCache's
      uncached path; the invalidation of overlapping cached blocks is left out, C).
    - The block LRU is the project's engine (:func:`tieringlab.policies.caching.replay`); pass ``P`` is
      the last of ``P`` back-to-back replays of the window (the cache state carries over; the disks'
      queues start empty).
    - A request is a **hit** (an SSD access of Table 4) when all its blocks hit. Reads that miss go to
      the HDD (the fill is an SSD write in the background); writes go to the SSD (write-back,
      write-allocate) with a synchronous metadata write.
    - **Cleaning**: dirty blocks are kept to ``dirty_thresh_pct`` of the cache, the least recently written
      cleaned first (FlashCache cleans per set in LRU order; one global set here, C). The dirty set is then
      the LRU of the write stream at ``dirty_thresh_pct`` x capacity blocks (the same engine on the writes):
      a write that hits it is a **dirty write hit** (Table 4), an eviction from it is a cleaning write to
      the HDD (address: the write that many write-blocks earlier, C); contiguous blocks cleaned one after
      another merge into one write of at most ``clean_merge_bytes``.
    """
    p = params
    key = jax.random.key(0) if key is None else key
    caps = check_capacities(capacities)
    lun = int(p.lun_subluns) * int(p.sublun_bytes)
    if np.any(caps > lun):
        raise ValueError(f"capacities: a cache of {int(caps.max())} bytes is larger than the LUN ({lun} bytes)")
    rq = _replay(ds, p)
    B = int(p.block_bytes)
    off, sz, w, t = rq["offset"], rq["size"], rq["is_write"], rq["time"]
    n = t.size
    cacheable = (off % B == 0) & (sz % B == 0) & (sz > 0)
    ci = np.flatnonzero(cacheable)

    keys, ridx = split_arrays(off[ci], sz[ci], B)
    wk = w[ci][ridx]
    P = int(p.pass_number)
    keys_all = np.tile(keys, P)
    w_all = np.tile(wk, P)
    last = slice((P - 1) * keys.size, P * keys.size)
    wpos = np.flatnonzero(w_all)
    per = []
    for c in caps:   # a handful of cache sizes
        cap_blocks = int(c) // B
        if cap_blocks == 0:
            hit_pg = np.zeros(keys.size, bool)
            dirty_pg = np.zeros(keys.size, bool)
            n_dirty_ev = 0
            clean_t = np.zeros(0)
            clean_off = clean_len = np.zeros(0, np.int64)
        else:
            hit, dev = caching.replay("lru", keys_all, [cap_blocks], w_all)
            hit_pg = hit[0, last]
            n_dirty_ev = int(dev[0, last].sum())
            d_cap = max(1, int(cap_blocks * p.dirty_thresh_pct / 100.0))
            whit, wev = caching.replay("lru", keys_all[wpos], [d_cap], np.ones(wpos.size, bool))
            dirty_all = np.zeros(keys_all.size, bool)
            dirty_all[wpos] = whit[0]
            dirty_pg = dirty_all[last] & hit_pg & w_all[last]
            # cleaning writes of the last pass: at each write-stream eviction, the block written d_cap writes before
            ev = np.flatnonzero(wev[0])
            victim = ev - d_cap
            ok = victim >= 0
            ev, victim = ev[ok], victim[ok]
            in_last = (wpos[ev] >= last.start) & (wpos[ev] < last.stop)
            ev, victim = ev[in_last], victim[in_last]
            req_of = np.tile(ridx, P)
            clean_t = t[ci][req_of[wpos[ev]]]
            clean_off = keys_all[wpos[victim]] * B
            # contiguous dirty blocks cleaned one after the other merge into one write (FlashCache's
            # cleaner does), up to clean_merge_bytes
            new = np.r_[True, clean_off[1:] != clean_off[:-1] + B] if clean_off.size else np.zeros(0, bool)
            run = np.cumsum(new) - 1
            pos_in_run = np.arange(run.size) - np.flatnonzero(new)[run] if run.size else run
            merge = max(1, int(p.clean_merge_bytes) // B)
            new |= (pos_in_run % merge) == 0
            heads = np.flatnonzero(new)
            clean_len = np.diff(np.r_[heads, clean_off.size]) * B
            clean_t, clean_off = clean_t[heads], clean_off[heads]
        starts = np.cumsum(np.bincount(ridx, minlength=ci.size)) - np.bincount(ridx, minlength=ci.size)
        r_hit = np.zeros(n, bool)
        r_dirty = np.zeros(n, bool)
        if keys.size:
            r_hit[ci] = np.logical_and.reduceat(hit_pg, starts)
            r_dirty[ci] = np.logical_and.reduceat(dirty_pg, starts) & w[ci]
        route = np.where(cacheable & (r_hit | w), SSD, HDD).astype(np.int64)
        fill = cacheable & ~w & ~r_hit                           # read misses fill the cache (background SSD writes)
        bg_ssd = dict(time=t[fill], size=sz[fill], is_write=np.ones(int(fill.sum()), bool))
        bg_hdd = dict(time=clean_t, offset=clean_off, size=clean_len, is_write=np.ones(clean_t.size, bool))
        extra = np.where(w & (route == SSD), int(p.metadata_bytes), 0)
        d, out = _serve_and_count(p, key, rq, route, bg_hdd=bg_hdd, bg_ssd=bg_ssd, ssd_extra=extra)
        d.update(hits=int(r_hit.sum()), dirty_write_hits=int(r_dirty.sum()),
                 dirty_write_hit_ratio=float(r_dirty.sum()) / max(n, 1), dirty_evictions=n_dirty_ev,
                 cleaning_writes=int(clean_t.size), uncacheable=int((~cacheable).sum()))
        d["ssd_writes"] += int(_pages(sz[fill]).sum())
        d["md_writes"] += int(_pages(clean_len).sum()) if clean_len.size else 0
        d["hdd_util_per_s"] = out["hdd_util"].mean(axis=0)
        d["request_hit"] = r_hit
        per.append(d)
    name = "FlashCache" if P == 1 else f"FlashCache pass {P}"
    res = _result(name, p, caps, rq, per, extra_dims={"hdd_util_per_s": (("second",), lambda d: d["hdd_util_per_s"]),
                                                       "request_hit": (("replay_request",), lambda d: d["request_hit"])})
    res["request_hit"].attrs["long_name"] = "all the request's 4 KB blocks were in the cache (Table 4 SSD access)"
    return res


# ============================================================================ registry

register(PolicySpec(name="OTF-AST", kind="trace", fn=otf_ast, params_type=OtfAstParams, source=_SOURCE,
                    fixed={"skip_demotion_copy": False}, random=True,
                    description="on-the-fly AST: promote sub-LUNs hot for c intervals, demote after o quiet ones"))
register(PolicySpec(name="OTF-AST without write-back", kind="trace", fn=otf_ast, params_type=OtfAstParams,
                    source=_SOURCE + "; Table 5 'without SSD->HDD write-back'", fixed={"skip_demotion_copy": True},
                    random=True, aliases=("OTF-AST no write-back",),
                    description="OTF-AST whose demotions skip the SSD->HDD copy (a tiering-table update)"))
register(PolicySpec(name="static tiering", kind="trace", fn=static_tiering, params_type=StaticTieringParams,
                    source=_SOURCE + "; Table 3, L130-137", random=True,
                    description="top sub-LUNs of the preceding equal-length window, placed once"))
register(PolicySpec(name="FlashCache", kind="trace", fn=flashcache, params_type=FlashCacheParams,
                    source=_SOURCE + "; Table 3, ref. [1]", fixed={"pass_number": 1}, random=True,
                    aliases=("FlashCache pass 1",), description="4 KB LRU write-back cache, cold (first pass)"))
register(PolicySpec(name="FlashCache pass 2", kind="trace", fn=flashcache, params_type=FlashCacheParams,
                    source=_SOURCE + "; Table 3-5 (second run)", fixed={"pass_number": 2}, random=True,
                    aliases=("FlashCache warm",), description="4 KB LRU write-back cache, warm (second pass)"))
register(PolicySpec(name="HDD only", kind="trace", fn=hdd_only, params_type=HddOnlyParams,
                    source=_SOURCE + "; Figs. 7, 9 curve 'HDD'", random=True, description="the HDD RAID0 alone"))
