"""Synthetic twins of MSR src1_0 and src1_1 with the sub-LUN structure of the OTF-AST paper's windows.

The OTF-AST paper replays **src1_0 minutes 1920-2020** and **src1_1 minutes 480-600** (Table 2; the
reading notes ``notes/otf_ast.md`` Sec. 0.1 correct the README's "10 hours"), and trains static tiering
on the 100 / 120 minutes before each (Table 3, L134). The real traces cannot be downloaded here, so a
twin must carry what the paper says about them, and nothing fitted to a policy's result:

- **Calibration targets** (trace statistics, notes Sec. 6.1), and only these:
  293 GB volumes (Table 2); the windows' lengths; 11 % / 99 % reads in the replayed windows (C14,
  L234-235, L244-245); static tiering's 1 % SSD access ratio (C2: a trace statistic, the share of replay
  IOs that land in the previous window's 24 busiest sub-LUNs); FlashCache's pass-1 hit ratio 7 % / 37 %
  (a reuse statistic at 24 GB, 4 KB: the LRU hit ratio of the replay window); on src1_1 FlashCache's pass 2
  equal to pass 1 (37 % -> 37 %: the LRU hit ratio of the window replayed twice, which needs a window
  footprint well above the cache); static tiering's mean response 50.8 / 7.1 ms (it sets the arrival
  intensity against the device model, :mod:`tieringlab.models.storage`). Every statistic is fitted as its
  **mean over seeds 0-4** (:data:`FIT_SEEDS`), not on one draw. The fitted values are :data:`FITTED`
  (``python -m tieringlab.models.workloads.otf_ast --fit`` prints them; deterministic).
- **Priors** (notes Sec. 6.2, each a named field, swept in notebook 08): the wandering concentration's
  width ``band_width`` w = 6 sub-LUNs (Fig. 4 shows 5; the CANDAR 2014 abstract about 6 GB, external),
  its mean dwell ``band_dwell_s`` D = 3 min per position before it moves to the neighbouring band (the
  abstract's "hot regions move every several minutes"; CANDAR 2015 reports ~3 min, external), its share ``band_share``
  q = 0.7 of the IOs during active phases (a concentration must pass the paper's own top-20 >= 50 % test
  with margin), ``p_jump`` = 0 (probability of a random jump instead of the neighbour), and the
  **active phases** of each window from Fig. 6: src1_1 20-80 min, src1_0 40-70 min. Fig. 6 is OTF-AST
  output, so the claim it supports (C12) is only a weak check.
- Everything else is a documented choice (field comments).

Generative model (per IO, vectorized; one numpy Generator seeded from ``(seed, crc32(name))``)
--------------------------------------------------------------------------------------------
**Time.** A 600-minute envelope (the README's "10 hours") holds the training window and the replay
window, both starting where the paper's do (twin minute 0 is trace minute ``trace_offset_min``). IO
come from a 2-state MMPP (:func:`arrivals`, bursts ``burst_ratio`` times busier than the quiet
phase); outside the two windows the rate is thinned by ``outside_rate_factor`` (nothing there is
replayed).

**Where (sub-LUN).** Each IO belongs to one of three components:
(a) **background**, share ``background_share`` b, uniform over the volume's sub-LUNs;
(b) the **band** (active phases only, share q): ``band_width`` neighbouring sub-LUNs, uniformly; the
band starts each active phase at its region's start and, after each dwell (an Exp(``band_dwell_s``)
time), moves to the neighbouring band, ``band_width`` sub-LUNs up (notes Sec. 2.3 and 6.2; with
probability ``p_jump`` to a random position instead): a sub-LUN is hot for one dwell, a few minutes,
comparable to OTF-AST's c*t = 3 min (the premise the paper's abstract states);
(c) the rest: a share ``fleeting_frac`` in **fleeting** concentrations (a band of the same width at a
random position, redrawn every ``fleeting_dwell_s``: short bursts elsewhere, notes Sec. 6.2), the others
**spread** uniformly over the window's region of ``region_subluns`` sub-LUNs. Outside the active phases
the IO is therefore spread: the top 20 sub-LUNs of an interval carry about 0.4 of its IO, so Table 3's
concentration test (i = 50 %, n = 20) fails there, and holds in the active phases (about 0.75).

**Where (inside the sub-LUN).** An IO is a *repeat* with probability ``p_repeat`` (it re-accesses the
extent of the IO issued an Exp(``repeat_delay_s``) time earlier: re-reads on src1_1, overwrites on
src1_0), else *sequential* with probability ``p_seq`` (it continues the sweep of its sub-LUN: per
sub-LUN and block of the envelope, consecutive sequential IOs are contiguous, from a random start,
each ``seq_size_bytes``), else random (4 KiB aligned).
On src1_0 a share ``log_share`` of the IOs writes a small circular **log** of ``log_bytes`` (rewritten
from start to end, over and over). A share ``p_unaligned`` of random IOs start 512 B-misaligned
(FlashCache's uncached path). Sizes: 4 KiB 50 %, 8 KiB 20 %, 16/32/64 KiB 10 % each (notes Sec. 6.2);
sweeps in requests of ``seq_size_bytes`` (64 KiB, the mix's largest, C).
Reads with probability ``read_ratio``.

**Scale.** ``scale < 1`` multiplies every byte count (volume, sub-LUN, log) and the IO rate by
``scale`` (the convention of :mod:`tieringlab.traces.twins`): the sub-LUN structure (300 sub-LUNs), the
time structure and every ratio stay; request sizes do not scale.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace

import jax
import numpy as np

from tieringlab.models.mmpp import on_off_intervals, on_off_points
from tieringlab.units import MINUTE, GiB, KiB, MiB

__all__ = ["OtfTwinSpec", "OTF_TWINS", "FITTED", "ACHIEVED", "TARGETS", "RISING", "FIT_SEEDS", "generate", "arrivals",
           "calibration_stats", "seed_mean_stats", "scaled_sublun_bytes", "SIZES", "SIZE_PROBS", "fit"]

#: Request sizes and their probabilities (notes Sec. 6.2, a documented MSR-like mix).
SIZES = np.array([4, 8, 16, 32, 64], np.int64) * KiB
SIZE_PROBS = np.array([0.5, 0.2, 0.1, 0.1, 0.1])


@dataclass(frozen=True)
class OtfTwinSpec:
    """One OTF-AST twin at ``scale=1`` (seconds, bytes, shares). See the module docstring."""

    name: str                               # MSR file name
    read_ratio: float                       # C14: reads in the replayed window (L234-235, L244-245)
    replay_min: float                       # Table 2: replayed span length (100 / 120 min)
    trace_offset_min: float                 # notes Sec. 6.2: twin minute 0 = this trace minute
    active_phases_min: tuple = ((20.0, 80.0),)   # Fig. 6 (L247-252): active phases, minutes into each window
    replay_start_min: float = 480.0         # twin minute of the replay start (trace 1920 / 480)
    duration_min: float = 600.0             # the 10-hour envelope (README), holds training + replay
    volume_bytes: int = 293 * GiB           # Table 2: 293 GB (GiB: the sub-LUN unit, notes Sec. 1.1)
    sublun_bytes: int = GiB                 # Fig. 4: 1 GB sub-LUNs
    mean_iops: float = 300.0                # FITTED: static tiering's mean response (50.8 / 7.1 ms)
    background_share: float = 0.12          # FITTED: static tiering's 1 % SSD access ratio (C2)
    p_repeat: float = 0.2                   # FITTED: FlashCache pass-1 hit ratio (7 % / 37 %)
    band_share: float = 0.7                 # prior q (notes Sec. 6.2)
    band_width: int = 6                     # prior w (Fig. 4: 5; CANDAR 2014: ~6 GB, external)
    band_dwell_s: float = 180.0             # prior D = 3 min (abstract "every several minutes"; CANDAR 2015, external)
    p_jump: float = 0.0                     # prior: chance the band jumps instead of moving to the neighbour
    fleeting_dwell_s: float = 60.0          # C: short bursts elsewhere last about one monitoring interval
    fleeting_frac: float = 0.3              # C: share of the IO that is neither background nor band in fleeting bursts
    region_subluns: int = 120               # C: sub-LUNs one window's activity covers (area A): a 60-min phase at D = 3
    #                                         min moves the 6-wide band about 20 times, 120 sub-LUNs, before it wraps
    p_seq: float = 0.0                      # C: share of non-repeat IOs continuing their sub-LUN's sweep
    seq_size_bytes: int = 64 * KiB          # C: a sweep's request size, the mix's largest (0: the mix's sizes)
    repeat_delay_s: float = 5.0             # C: re-accesses come seconds later (re-read / overwrite of fresh data)
    log_share: float = 0.0                  # C: share of IOs writing the circular log (src1_0)
    log_bytes: int = 256 * MiB              # C: size of that log
    p_unaligned: float = 0.05               # prior (notes Sec. 6.2): random IOs starting 512 B off a 4 KiB boundary
    burst_ratio: float = 5.0                # C: MMPP burst rate / quiet rate
    burst_on_s: float = 20.0                # C: mean burst length (tens of seconds: a 100-min window holds ~60
    burst_off_s: float = 80.0               # C: mean quiet length  bursts, no one long burst decides its mean response)
    outside_rate_factor: float = 0.1        # C: IO rate outside the training and replay windows (not replayed)

    def __post_init__(self):
        for f in ("read_ratio", "background_share", "p_repeat", "band_share", "p_jump", "p_seq", "log_share",
                  "p_unaligned", "outside_rate_factor", "fleeting_frac"):
            v = getattr(self, f)
            if not (0.0 <= v <= 1.0):
                raise ValueError(f"{self.name}: {f} must be in [0, 1]; got {v!r}")
        if self.background_share + self.band_share > 1.0:
            raise ValueError(f"{self.name}: background_share + band_share must be <= 1; got "
                             f"{self.background_share} + {self.band_share}")
        for f in ("replay_min", "duration_min", "mean_iops", "band_dwell_s", "fleeting_dwell_s", "repeat_delay_s",
                  "burst_ratio", "burst_on_s", "burst_off_s", "volume_bytes", "sublun_bytes", "log_bytes"):
            v = getattr(self, f)
            if not (np.isfinite(v) and v > 0):
                raise ValueError(f"{self.name}: {f} must be > 0; got {v!r}")
        if not (int(self.seq_size_bytes) == self.seq_size_bytes and self.seq_size_bytes >= 0
                and self.seq_size_bytes % (4 * KiB) == 0):
            raise ValueError(f"{self.name}: seq_size_bytes must be 0 (the mix's sizes) or a positive multiple of "
                             f"4 KiB; got {self.seq_size_bytes!r}")
        if int(self.band_width) != self.band_width or not (1 <= self.band_width <= self.n_subluns):
            raise ValueError(f"{self.name}: band_width must be an integer in [1, {self.n_subluns}]; "
                             f"got {self.band_width!r}")
        if int(self.region_subluns) != self.region_subluns or not (self.band_width <= self.region_subluns
                                                                     <= self.n_subluns // 2):
            raise ValueError(f"{self.name}: region_subluns must be an integer in [band_width, {self.n_subluns // 2}]; "
                             f"got {self.region_subluns!r}")
        if self.replay_start_min < self.replay_min or self.replay_start_min + self.replay_min > self.duration_min:
            raise ValueError(f"{self.name}: the training window (replay_min before replay_start_min) and the replay "
                             f"must fit the {self.duration_min}-minute envelope")
        for a, b in self.active_phases_min:
            if not (0 <= a < b <= self.replay_min):
                raise ValueError(f"{self.name}: active phase ({a}, {b}) must lie in "
                                 f"[0, replay_min={self.replay_min}] min")

    @property
    def n_subluns(self) -> int:
        """Sub-LUNs the volume touches (293 of the LUN's 300)."""
        return int(-(-int(self.volume_bytes) // int(self.sublun_bytes)))

    @property
    def replay_start_s(self) -> float:
        return self.replay_start_min * MINUTE

    @property
    def train_start_s(self) -> float:
        return (self.replay_start_min - self.replay_min) * MINUTE


#: Fitted values per twin (calibration targets, module docstring), each statistic the mean over seeds 0-4
#: (:data:`FIT_SEEDS`; trace statistics at scale 0.05, the response at scale 1; :func:`fit`, secant steps by hand
#: for the last round). ``background_share`` -> static tiering's SSD access ratio (1 %, Table 4); ``p_seq`` (src1_0)
#: and ``p_repeat`` (src1_1) -> FlashCache's pass-1 hit ratio (7 % / 37 %, Table 4); ``p_seq`` (src1_1) -> pass 2
#: equal to pass 1 (37 % / 37 %); ``mean_iops`` -> static tiering's mean response (Table 5): src1_1 7.1 ms.
#: src1_0's rate is NOT fitted to its 50.8 ms: on this device model static tiering's mean response sits on the
#: HDD's saturation knee there (5 seeds each, p_seq 0.616: 162 IO/s 18-165 ms by seed, 174 IO/s 35-690 ms; at the
#: fitted p_seq 0.36, 150 IO/s gives 9.8-12.1 ms), where one draw decides a window's mean (issue 30); the twin runs
#: off the knee at 150 IO/s (the largest rate tried with every seed under 2 x 50.8 ms) and the calibration row
#: reports the miss. Achieved: see ``ACHIEVED``.
FITTED: dict[str, dict[str, float]] = {
    "src1_0": {"mean_iops": 150.0, "background_share": 0.0965, "p_seq": 0.36},
    "src1_1": {"mean_iops": 171.0, "background_share": 0.1206, "p_repeat": 0.357, "p_seq": 0.836},
}

#: What the fit achieved (means over seeds 0-4; ratios in %, responses in ms; trace statistics at scale 0.25, the
#: response at scale 1, ``calibration_stats``), beside the paper. src1_0's pass 2 and both footprints are checks and
#: premises, not targets.
ACHIEVED: dict[str, dict[str, float]] = {
    "src1_0": {"static_ratio": 0.99, "lru_hit_ratio": 6.1, "lru_pass2_hit_ratio": 10.8, "footprint_ratio": 1.09,
               "static_mean_response_ms": 10.8},   # paper 1, 7, 19, -, 50.8 (per seed 9.8-12.1 ms; see FITTED)
    "src1_1": {"static_ratio": 0.98, "lru_hit_ratio": 36.9, "lru_pass2_hit_ratio": 37.4, "footprint_ratio": 1.75,
               "static_mean_response_ms": 6.56},  # paper 1, 37, 37, -, 7.1 (per seed 6.1-7.1 ms)
}

#: The calibration targets (paper values) and the knob each one sets, per twin. ``lru_pass2_rise`` (src1_1): the LRU
#: hit ratio of a second replay of the window minus the first's, Table 4's 37 % -> 37 % (whole percentages: a
#: rise under half a point), which needs a window footprint well above the 24 GB cache; src1_0's pass 2 (19 %) is
#: not fitted (a check, C3). src1_0's rate is set off the HDD's saturation knee, not fitted (see :data:`FITTED`).
TARGETS: dict[str, dict[str, tuple[str, float]]] = {
    "src1_0": {"static_ratio": ("background_share", 0.01), "lru_hit_ratio": ("p_seq", 0.07)},
    "src1_1": {"static_mean_response_s": ("mean_iops", 0.0071), "static_ratio": ("background_share", 0.01),
               "lru_hit_ratio": ("p_repeat", 0.37), "lru_pass2_rise": ("p_seq", 0.005)},
}
#: Each statistic rises with its knob, except the hit ratios with ``p_seq`` (sweeps touch fresh data).
RISING = {"mean_iops": True, "background_share": True, "p_repeat": True, "p_seq": False}
#: The seeds every fitted statistic is averaged over.
FIT_SEEDS = (0, 1, 2, 3, 4)

_BASE = {
    # src1_0: replay trace minutes 1920-2020 (Table 2), envelope 1440-2040 (notes Sec. 6.2); write-dominated
    # (11 % reads): random writes in the band (no repeats, C), a share of sequential fresh writes (fitted to
    # pass 1; in 64 KiB requests, whose fresh data keep the footprint above the cache),
    # and a small circular log rewritten throughout (C; below static tiering's 1 % so that target holds).
    "src1_0": dict(name="src1_0", read_ratio=0.11, replay_min=100.0, trace_offset_min=1440.0,
                   active_phases_min=((40.0, 70.0),), p_repeat=0.0, log_share=0.005),
    # src1_1: replay trace minutes 480-600, envelope 0-600; read-only (99 % reads): re-reads (fitted to pass 1)
    # and sweeps (notes Sec. 6.2 (c): "the band is read by a sweep plus re-reads") in 64 KiB requests, their
    # share fitted to pass 2 = pass 1 (the fresh data a sweep reads keeps the footprint well above the cache).
    "src1_1": dict(name="src1_1", read_ratio=0.99, replay_min=120.0, trace_offset_min=0.0,
                   active_phases_min=((20.0, 80.0),), log_share=0.0),
}


def _build() -> dict[str, OtfTwinSpec]:
    return {name: OtfTwinSpec(**{**kw, **FITTED[name]}) for name, kw in _BASE.items()}


#: The two twins' full specifications (fitted values included).
OTF_TWINS: dict[str, OtfTwinSpec] = _build()


def arrivals(rng, spec: OtfTwinSpec, scale: float = 1.0):
    """IO times (s) of the 600-minute envelope: a 2-state MMPP, rate ``lo`` in quiet spells of mean
    ``burst_off_s`` and ``lo * burst_ratio`` in bursts of mean ``burst_on_s`` (mean ``mean_iops * scale``),
    started in its stationary phase; outside the training and replay windows each IO is kept with
    probability ``outside_rate_factor``.

    Sampled as the superposition of a Poisson process at ``lo`` over the whole envelope and one at
    ``lo * (burst_ratio - 1)`` inside the ON intervals of the modulating chain (the MMPP sampling of
    :mod:`tieringlab.models.mmpp`: ``on_off_intervals``, ``on_off_points``).
    """
    T = spec.duration_min * MINUTE
    p_on = spec.burst_on_s / (spec.burst_on_s + spec.burst_off_s)      # stationary share of burst time
    lo = spec.mean_iops * scale / (p_on * spec.burst_ratio + (1.0 - p_on))
    on = on_off_intervals(rng, T, spec.burst_on_s, spec.burst_off_s, start_on=bool(rng.random() < p_on))
    total_on = float((on[:, 1] - on[:, 0]).sum())
    base = rng.uniform(0.0, T, rng.poisson(lo * T))
    burst = (on_off_points(rng, on, int(rng.poisson(lo * (spec.burst_ratio - 1.0) * total_on))) if on.size
             else np.zeros(0))
    t = np.sort(np.concatenate([base, burst]))
    inside = (t >= spec.train_start_s) & (t < spec.replay_start_s + spec.replay_min * MINUTE)
    return t[inside | (rng.random(t.size) < spec.outside_rate_factor)]


def scaled_sublun_bytes(scale: float, sublun_bytes: int = GiB) -> int:
    """The sub-LUN of a twin at ``scale``: ``sublun_bytes x scale``, a whole number of 4 KiB pages."""
    return max(4 * KiB, int(round(sublun_bytes * scale)) // (4 * KiB) * (4 * KiB))


def _window_phase(spec: OtfTwinSpec, t):
    """Per IO: the index of the active phase it falls in (-1: none), counting both windows' phases."""
    starts = []
    for w0 in (spec.train_start_s, spec.replay_start_s):
        for a, b in spec.active_phases_min:
            starts.append((w0 + a * MINUTE, w0 + b * MINUTE))
    ph = np.full(t.size, -1, np.int64)
    for k, (a, b) in enumerate(starts):   # two windows x a few phases
        ph[(t >= a) & (t < b)] = k
    return ph, starts


def generate(spec: OtfTwinSpec, scale: float = 1.0, seed: int = 0):
    """The twin's arrays ``(time s, offset bytes, size bytes, is_write)`` and its window attrs.

    See the module docstring; no loop over IOs (a few loops over phases and pointer-jumping rounds).
    """
    if not (0.0 < float(scale) <= 1.0):
        raise ValueError(f"scale must be in (0, 1], got {scale!r}")
    rng = np.random.default_rng([int(seed), zlib.crc32(spec.name.encode()), 0x07F])
    t = arrivals(rng, spec, scale)
    n = t.size
    S = spec.n_subluns
    w = int(spec.band_width)
    U = scaled_sublun_bytes(scale, spec.sublun_bytes)

    # --- which component, which sub-LUN
    # blocks of replay_min minutes aligned on the replay start (block -1 = training window, 0 = replay);
    # each block's activity lives in its own region of region_subluns neighbouring sub-LUNs, disjoint from
    # the previous block's (a random walk of region starts, steps in [R, S - R])
    L = spec.replay_min * MINUTE
    blk = np.floor((t - spec.replay_start_s) / L).astype(np.int64)
    b_lo = int(np.floor(-spec.replay_start_s / L)) - 1
    b_hi = int(np.ceil((spec.duration_min * MINUTE - spec.replay_start_s) / L)) + 1
    R = min(int(spec.region_subluns), S)
    steps = rng.integers(R, max(R + 1, S - R + 1), b_hi - b_lo)
    reg0 = (int(rng.integers(0, S)) + np.cumsum(steps)) % S          # region start of each block
    reg = reg0[blk - b_lo]
    ph, phases = _window_phase(spec, t)
    u = rng.random(n)
    bsh = spec.background_share
    background = u < bsh
    in_band = (ph >= 0) & ~background & (u < bsh + spec.band_share)
    # the band (active phases): starts at its region's low end and moves to the neighbouring band (band_width
    # sub-LUNs up, notes Sec. 2.3 / 6.2) after each dwell, an Exp(band_dwell_s) time (the abstract gives only "every
    # several minutes", an average: the exponential is the maximum-entropy dwell with that mean, C); with p_jump
    # it goes to a random place in the region instead; positions are offsets in the region, wrapping at its end
    pos = np.zeros(n, np.int64)
    for k, (s0, e0) in enumerate(phases):   # two windows x a few phases
        n_steps = int(np.ceil((e0 - s0) / spec.band_dwell_s)) + 1
        ends = np.cumsum(rng.exponential(spec.band_dwell_s, 4 * n_steps + 16))
        while ends[-1] < e0 - s0:            # rarely: more dwells than drawn (a few loops at most)
            ends = np.r_[ends, ends[-1] + np.cumsum(rng.exponential(spec.band_dwell_s, n_steps + 16))]
        m_steps = ends.size + 1
        jump = rng.random(m_steps) < spec.p_jump
        jump[0] = False
        jpos = rng.integers(0, R, m_steps)
        last = np.maximum.accumulate(np.where(jump, np.arange(m_steps), 0))
        p_k = (np.where(last == 0, 0, jpos[last]) + (np.arange(m_steps) - last) * w) % R
        m = ph == k
        pos[m] = p_k[np.searchsorted(ends, t[m] - s0, side="right")]
    # the rest (neither background nor band): a share fleeting_frac in fleeting concentrations (a band of the
    # same width at a random place in the region, redrawn every fleeting_dwell_s), the others spread uniformly
    # over the region (outside the active phases IO is not concentrated, notes Sec. 6.2 "fainter bursts")
    n_fl = int(np.ceil(spec.duration_min * MINUTE / spec.fleeting_dwell_s)) + 1
    fl_pos = rng.integers(0, R, n_fl)[(t // spec.fleeting_dwell_s).astype(np.int64)]
    fleeting = rng.random(n) < spec.fleeting_frac
    local = np.where(in_band, pos + rng.integers(0, w, n),
                     np.where(fleeting, fl_pos + rng.integers(0, w, n), rng.integers(0, R, n))) % R
    sub = np.where(background, rng.integers(0, S, n), (reg + local) % S)

    # --- sizes and addresses inside the sub-LUN
    size = SIZES[rng.choice(SIZES.size, size=n, p=SIZE_PROBS)]
    size = np.minimum(size, U)
    last_sub_bytes = int(round(spec.volume_bytes * scale)) - (S - 1) * U     # the last sub-LUN is partial
    room = np.where(sub == S - 1, max(last_sub_bytes, 4 * KiB), U)
    kind = rng.random(n)
    repeat = kind < spec.p_repeat
    seq = ~repeat & (kind < spec.p_repeat + (1 - spec.p_repeat) * spec.p_seq)
    log = rng.random(n) < spec.log_share
    repeat &= ~log
    seq &= ~log
    if spec.seq_size_bytes:             # a sweep reads in large requests (0: in the mix's sizes)
        size = np.where(seq, min(int(spec.seq_size_bytes), U), size)
    pages = np.maximum((room - size) // (4 * KiB), 0)
    within = (rng.random(n) * (pages + 1)).astype(np.int64) * (4 * KiB)
    mis = rng.random(n) < spec.p_unaligned
    within = np.where(mis & ~seq, np.maximum(within - 512 * rng.integers(1, 8, n), 0), within)
    # sequential sweeps: per (block, sub-LUN), consecutive sequential IOs are contiguous from a random
    # start, wrapping at the last 64 KiB boundary that leaves room for the largest IO
    si = np.flatnonzero(seq)
    if si.size:
        o = si[np.lexsort((t[si], sub[si], blk[si]))]
        grp = np.r_[True, (sub[o][1:] != sub[o][:-1]) | (blk[o][1:] != blk[o][:-1])]
        csum = np.cumsum(size[o])
        base = (csum - size[o])
        first = np.flatnonzero(grp)
        gid = np.cumsum(grp) - 1
        rel = base - base[first][gid]
        step = int(SIZES.max())
        wrap = np.maximum((room[o] - step) // step * step, step)
        start = (rng.random(first.size) * (U // (4 * KiB))).astype(np.int64) * (4 * KiB)
        within[o] = np.minimum((start[gid] + rel) % wrap, np.maximum(room[o] - size[o], 0))
    offset = sub * U + within
    # the circular log (src1_0): a fixed region rewritten from its start, IO after IO
    if log.any():
        L = max(4 * KiB, int(round(spec.log_bytes * scale)) // (4 * KiB) * (4 * KiB))
        li = np.flatnonzero(log)
        log_sub = int(rng.integers(0, S - 1))
        lpos = (np.cumsum(size[li]) - size[li]) % max(L - int(SIZES.max()), 4 * KiB)
        offset[li] = log_sub * U + lpos // (4 * KiB) * (4 * KiB)
    # repeats: the extent of the IO issued Exp(repeat_delay_s) earlier (resolved through chains of repeats)
    ri = np.flatnonzero(repeat)
    src = np.searchsorted(t, t[ri] - rng.exponential(spec.repeat_delay_s, ri.size), side="right") - 1
    ok = (src >= 0) & (src < ri)
    ri, src = ri[ok], src[ok]
    link = np.arange(n)
    link[ri] = src
    for _ in range(64):   # pointer jumping: every chain of repeats resolves to its first non-repeat IO
        nxt = link[link]
        if np.array_equal(nxt, link):
            break
        link = nxt
    offset = offset[link]
    size = size[link]
    is_write = rng.random(n) >= spec.read_ratio
    attrs = dict(replay_start_s=spec.replay_start_s, replay_end_s=spec.replay_start_s + spec.replay_min * MINUTE,
                 train_start_s=spec.train_start_s, trace_offset_min=spec.trace_offset_min,
                 active_phases_s=np.asarray([p for p in phases], np.float64).ravel().tolist())
    return t, offset.astype(np.int64), size.astype(np.int64), is_write, attrs




def _window(t, lo, hi):
    a, b = np.searchsorted(t, [lo, hi], side="left")
    return slice(int(a), int(b))


def calibration_stats(spec: OtfTwinSpec, scale: float = 1.0, seed: int = 0, *, ssd_subluns: int = 24,
                      cache_bytes: int = 24 * GiB, block_bytes: int = 4 * KiB, response: bool = True,
                      key_seed: int = 0):
    """The twin's values of its calibration targets (module docstring), from the trace and the device model:

    - ``read_ratio``: reads in the replay window (C14);
    - ``static_ratio``: share of replay IOs in the ``ssd_subluns`` busiest sub-LUNs of the training window (C2);
    - ``lru_hit_ratio`` / ``lru_pass2_hit_ratio``: request hit ratio of a ``cache_bytes`` LRU of ``block_bytes``
      blocks over the replay's block-aligned requests, replayed once from an empty cache (FlashCache pass 1) and
      again right after (pass 2; exact LRU stack distances over the window twice, Mattson et al.);
    - ``footprint_ratio``: distinct ``block_bytes`` blocks the replay touches over the cache;
    - ``static_mean_response_s``: static tiering's mean response on :class:`tieringlab.models.storage.Testbed`.
    """
    from tieringlab.models import stackdist, storage  # noqa: PLC0415

    t, off, size, w, attrs = generate(spec, scale, seed)
    U = scaled_sublun_bytes(scale, spec.sublun_bytes)
    tr = _window(t, attrs["train_start_s"], attrs["replay_start_s"])
    rp = _window(t, attrs["replay_start_s"], attrs["replay_end_s"])
    sub = off // U
    score = np.bincount(sub[tr], minlength=spec.n_subluns + 1)
    top = np.argsort(-score, kind="stable")[:ssd_subluns]
    on_ssd = np.zeros(score.size, bool)
    on_ssd[top] = True
    r_sub = sub[rp]
    out = {"n_replay": int(r_sub.size), "read_ratio": float(1 - w[rp].mean()),
           "static_ratio": float(on_ssd[r_sub].mean())}
    o, s = off[rp], size[rp]
    ok = (o % block_bytes == 0) & (s % block_bytes == 0)
    first = o[ok] // block_bytes
    cnt = s[ok] // block_bytes
    keys = np.repeat(first - np.cumsum(cnt) + cnt, cnt) + np.arange(int(cnt.sum()))
    ridx = np.repeat(np.arange(first.size), cnt)
    cap = int(cache_bytes * scale) // block_bytes
    d = stackdist.request_stack_distances(np.r_[keys, keys], np.r_[ridx, ridx + first.size])
    out["lru_hit_ratio"] = float((d[: first.size] < cap).sum()) / max(r_sub.size, 1)
    out["lru_pass2_hit_ratio"] = float((d[first.size:] < cap).sum()) / max(r_sub.size, 1)
    out["lru_pass2_rise"] = out["lru_pass2_hit_ratio"] - out["lru_hit_ratio"]
    lo, hi = o // block_bytes, (o + s - 1) // block_bytes + 1      # each request's blocks [lo, hi)
    srt = np.argsort(lo, kind="stable")
    lo, reach = lo[srt], np.maximum.accumulate(hi[srt])            # the union of the ranges, merged in one pass
    first = np.flatnonzero(np.r_[True, lo[1:] > reach[:-1]]) if lo.size else np.zeros(0, np.int64)
    last = np.r_[first[1:] - 1, lo.size - 1] if lo.size else first
    out["footprint_ratio"] = float((reach[last] - lo[first]).sum()) / max(cap, 1)
    if response:
        tb = storage.Testbed()
        route = np.where(on_ssd[r_sub], storage.SSD, storage.HDD)
        res = storage.serve(tb, jax.random.key(key_seed), time=t[rp] - attrs["replay_start_s"], offset=o, size=s,
                            is_write=w[rp], route=route)
        out["static_mean_response_s"] = float(res["response_s"].mean())
    return out


def seed_mean_stats(spec: OtfTwinSpec, scale: float = 1.0, seeds=FIT_SEEDS, **kw) -> dict[str, float]:
    """:func:`calibration_stats` averaged over ``seeds`` (the twins are fitted across seeds, not to one draw)."""
    rows = [calibration_stats(spec, scale, s, key_seed=s, **kw) for s in seeds]
    return {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}


def fit(name: str, *, seeds=FIT_SEEDS, trace_scale: float = 0.1, rounds: int = 2,
        log=print) -> dict[str, float]:  # pragma: no cover - offline
    """Fit the knobs of :data:`TARGETS` to their targets by bisection, one knob at a time, ``rounds`` times
    (each statistic is monotone in its knob; the others barely move it), then the arrival rate once more (the
    mean response is the steepest target and the reuse knobs move the HDD load). Every statistic is the mean
    over ``seeds``; the trace statistics (ratios of IO counts and of bytes to the cache, which keep their
    value when bytes and IO counts shrink together) at ``trace_scale``, the mean response at scale 1. Starts
    from the current :data:`OTF_TWINS` values. Only published trace statistics enter."""
    spec = OTF_TWINS[name]
    ranges = {"mean_iops": (20.0, 2000.0), "background_share": (0.0, 0.29), "p_seq": (0.0, 1.0),
              "p_repeat": (0.0, 0.95)}
    items = list(TARGETS[name].items())
    plan = items * int(rounds) + [items[0]]
    for stat, (knob, target) in plan:
        lo, hi = ranges[knob]
        geo = knob == "mean_iops"
        if geo:   # bracket around the current rate: the response is steep in it
            lo, hi = spec.mean_iops / 1.5, spec.mean_iops * 1.5
        for _step in range(6 if geo else 7):
            mid = float(np.sqrt(lo * hi)) if geo else 0.5 * (lo + hi)
            got = seed_mean_stats(replace(spec, **{knob: mid}), 1.0 if geo else trace_scale, seeds,
                                  response=geo)[stat]
            rising = RISING[knob]
            lo, hi = (mid, hi) if (got < target) == rising else (lo, mid)
            if log:
                log(f"{name}: {knob}={mid:.4g} -> {stat}={got:.4g} (target {target})")
        val = float(np.sqrt(lo * hi)) if geo else 0.5 * (lo + hi)
        spec = replace(spec, **{knob: round(val, 1 if geo else 4)})
    if log:
        log(f"{name}: final {seed_mean_stats(spec, 1.0, seeds)}")
    return {knob: getattr(spec, knob) for knob, _t in TARGETS[name].values()}


def _main(argv=None) -> None:  # pragma: no cover - offline calibration entry point
    import argparse  # noqa: PLC0415

    ap = argparse.ArgumentParser(description="Fit the OTF-AST twins (prints the FITTED table).")
    ap.add_argument("--fit", nargs="*", default=None, help="twin names (default: src1_0 src1_1)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds over all knobs before the final rate pass")
    args = ap.parse_args(argv)
    for n in args.fit or list(OTF_TWINS):
        print(f'    "{n}": {fit(n, rounds=args.rounds)},', flush=True)


if __name__ == "__main__":  # pragma: no cover
    _main()
