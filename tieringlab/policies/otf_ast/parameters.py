"""The parameters of OTF-AST and its baselines, each field declared once with its source (Table 1-3, Fig. 4,
Sec. 4.1, the reading notes' Sec. 2.2 readings, or a documented choice "C").

Every system shares :class:`MeasureParams` (the testbed and how response times are summarised); a system's
own fields are a class of their own (:class:`OtfAstSettings`, :class:`StaticTieringSettings`,
:class:`FlashCacheSettings`) so that an experiment sets the shared fields once and each system's own ones
beside them; a system's parameters are the two together (:class:`OtfAstParams` = measurement + settings +
the fields its registered name fixes). Field checks come from the declarations
(:func:`tieringlab.params.field_problems`); ``__post_init__`` adds the checks across fields.
"""

from __future__ import annotations

from dataclasses import dataclass

from tieringlab.models.storage import Testbed
from tieringlab.params import cross_field, field_problems, param
from tieringlab.units import MINUTE, PAGE_BYTES, SUBLUN_BYTES, US

__all__ = ["MeasureParams", "OtfAstSettings", "OtfAstParams", "StaticTieringSettings", "StaticTieringParams",
           "FlashCacheSettings", "FlashCacheParams", "HddOnlyParams", "HOT_RULES", "I_READINGS", "M_READINGS",
           "C_READINGS", "FULL_POLICIES", "COPY_UNITS", "CLEANINGS", "SOURCE"]

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

#: FlashCache's cleaning: the dirty threshold over the whole cache (C) or per set (FlashCache's own).
CLEANINGS = ("global", "per_set")

#: Where the systems are defined (the ``source`` of every result).
SOURCE = "OTF-AST paper (Oe et al., Fujitsu Labs) Sec. 3-4; reading notes notes/otf_ast.md"


def _check(obj, *across) -> None:
    """Raise every field problem of ``obj`` (its declarations), else every problem the checks ``across``
    (functions of ``obj``, run once each field is valid) find across fields."""
    problems = field_problems(obj)
    if not problems:
        for fn in across:
            problems += fn(obj)
    cross_field(problems)


def _not_multiple(value, k: int) -> bool:
    """Whether a whole number ``value`` is not a multiple of ``k`` (a value of another type: its declaration's
    check names it)."""
    try:
        return int(value) == value and int(value) % k != 0
    except (TypeError, ValueError, OverflowError):
        return False


def _measure_problems(p) -> list[str]:
    out = []
    if not isinstance(p.testbed, Testbed):
        out.append(f"testbed must be a tieringlab.models.storage.Testbed; got {type(p.testbed).__name__}")
    if _not_multiple(p.sublun_bytes, PAGE_BYTES):
        out.append(f"sublun_bytes must be a positive multiple of {PAGE_BYTES} bytes; got {p.sublun_bytes!r}")
    if not p.hist_lo_s < p.hist_hi_s:
        out.append(f"hist_lo_s must be < hist_hi_s; got {p.hist_lo_s!r}, {p.hist_hi_s!r}")
    return out


@dataclass(frozen=True)
class MeasureParams:
    """Fields every system here shares: the testbed and how response times are summarised (Sec. 4.1)."""

    testbed: Testbed = param(Testbed(), "Table 1 devices (tieringlab.models.storage; its choices documented there)")
    sublun_bytes: int = param(SUBLUN_BYTES, "Fig. 4: sub-LUN = 1 GB (GiB: device-mapper sizes are sectors, C); "
                              "a whole number of 4 KiB pages", bounds=(PAGE_BYTES, None), unit="bytes")
    lun_subluns: int = param(300, "Fig. 4: LUN = 300 GB (sub-LUNs)", bounds=(1, None))
    first_window_s: float = param(20 * MINUTE, "Table 5: the 'first 20 minutes' row (every policy gets it, notes "
                                  "Sec. 3.4)", bounds=(60.0, 7200.0), unit="s")
    le_cut_s: float = param(0.100, "Table 5: src1_1 mean over the IOs with response <= 100 ms",
                            bounds=(0.001, 10.0), unit="s")
    hist_lo_s: float = param(10 * US, "Sec. 4.1 (L195-204): the driver's histogram spans 10 us ...",
                             bounds=(1e-9, None), unit="s")
    hist_hi_s: float = param(1.0, "... to 1 s (IOs outside are clipped into the end bins, notes Sec. 1.7)",
                             bounds=(1e-9, None), unit="s")
    hist_bins_per_decade: int = param(10, "C: the histogram's resolution is not printed", bounds=(1, None))
    load_scale: float = param(1.0, "a twin's scale (its sub-LUNs and IO counts x scale): the testbed is slowed by "
                              "1/scale so each disk carries the load, and a sub-LUN copies in the seconds, of scale 1 "
                              "(otf_ast.sim.scaled_testbed); responses are reported x scale (paper-scale seconds)",
                              bounds=(1e-3, 1.0))

    def __post_init__(self):
        _check(self, _measure_problems)


def _otf_problems(p, lun_subluns: int | None) -> list[str]:
    """OTF-AST's checks across fields; ``lun_subluns`` given: also n against the LUN."""
    out = []
    if p.i_reading == "percent" and not (0 < p.i_pct <= 100):
        out.append(f"i_pct (i) must be in (0, 100] (a share of the interval's IOs, in %); got {p.i_pct!r}")
    if p.i_reading == "absolute" and not p.i_pct > 0:
        out.append(f"i_pct (i) must be > 0 IOs under i_reading='absolute'; got {p.i_pct!r}")
    pct = p.hot_rule == "pct_of_subluns"
    n_max = 100 if pct else lun_subluns
    if n_max is not None and not p.n_top <= n_max:
        what = "100 % of the sub-LUNs" if pct else "the number of sub-LUNs"
        out.append(f"n_top (n) must be an integer in [1, {n_max}] ({what}, lun_subluns={lun_subluns}); "
                   f"got {p.n_top!r}")
    if p.c_reading == "within_m" and p.c_intervals > p.m_window:
        out.append(f"c_intervals (c) must be <= m_window (m) under c_reading='within_m'; got c={p.c_intervals}, "
                   f"m={p.m_window}")
    return out


@dataclass(frozen=True)
class OtfAstSettings:
    """OTF-AST's own fields (Table 3: ``t=60, i=50, n=20, m=60, c=3, o=10``) under the notes' readings (Sec. 2)."""

    t_s: int = param(60, "t, Table 3 / Fig. 4 't=60 s': the monitoring and decision interval", bounds=(1, 3600),
                     unit="s")
    i_pct: float = param(50.0, "i, Table 3: the concentration share threshold, % of the interval's IOs (notes "
                         "reading M); an IO count under i_reading='absolute'", bounds=(0.0, None))
    n_top: int = param(20, "n, Table 3: the top-n sub-LUNs of the concentration test (notes reading L-M)",
                       bounds=(1, None))
    m_window: int = param(60, "m, Table 3: the counting window in s under reading m1 (= t: no effect; notes "
                          "reading L); IOs under m2/m3, intervals under m4", bounds=(1, None))
    c_intervals: int = param(3, "c, Table 3: consecutive hot intervals before promotion (notes reading M)",
                             bounds=(1, None))
    o_intervals: int = param(10, "o, Table 3 / Fig. 4: intervals outside the hot set before demotion (the timeout)",
                             bounds=(1, None))
    hot_rule: str = param("top_n", "notes Sec. 2.2 n1 (recommended): top-n share >= i %; n2 'prefix_to_i', n3 "
                          "'pct_of_subluns'", choices=HOT_RULES)
    i_reading: str = param("percent", "i as a share (C); 'absolute': a top-n sub-LUN needs >= i IOs (i2)",
                           choices=I_READINGS)
    m_reading: str = param("window", "notes Sec. 2.2 m1 (recommended): m is the counting window; m2 'total_floor', "
                           "m3 'sublun_floor', m4 'history'", choices=M_READINGS)
    c_reading: str = param("consecutive", "c1 (C); 'within_m': c hot intervals among the last m (c2 = m4's rule)",
                           choices=C_READINGS)
    full_policy: str = param("wait", "notes Sec. 2.2 f1 (recommended; L247-256 reasons with timeouts only): no "
                             "eviction on demand; f2 'evict_max_timeout'", choices=FULL_POLICIES)
    move_concurrency: int = param(1, "C: one temporary buffer the size of a sub-LUN (Sec. 3.3.2): one move at a "
                                  "time", bounds=(1, None))
    copy_up: float = param(2.5, "Table 1: HDD->SSD copy of 1 GB, 2-3 (no user IO), in copy_unit: kcopyd's pace "
                           "never exceeds it (the devices alone give it too: Testbed.from_table1)",
                           bounds=(1e-9, None))
    copy_down: float = param(6.5, "Table 1: SSD->HDD copy of 1 GB, 6-7 (no user IO), in copy_unit",
                             bounds=(1e-9, None))
    copy_unit: str = param("seconds", "unit of copy_up/copy_down: seconds (M, notes Sec. 1.6); 'minutes' ablation",
                           choices=COPY_UNITS)
    copy_share_floor: float = param(0.1, "C, the replaced fluid engine's only (.engine, kept for the benchmarks): "
                                    "the share of disk time a copy keeps under saturation; no effect on the "
                                    "closed-loop simulation, where copies queue with user IO", bounds=(0.01, 1.0))

    def __post_init__(self):
        _check(self, lambda p: _otf_problems(p, None))

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
class OtfAstParams(OtfAstSettings, MeasureParams):
    """OTF-AST: the shared measurement, its settings, and the field its registered names fix."""

    skip_demotion_copy: bool = param(False, "Table 5 variant 'without SSD->HDD write-back': a demotion is a "
                                     "tiering-table update (set by the name 'OTF-AST without write-back')")

    def __post_init__(self):
        _check(self, _measure_problems, lambda p: _otf_problems(p, p.lun_subluns))


@dataclass(frozen=True)
class StaticTieringSettings:
    """Static tiering's own field (Table 3, L130-137; notes Sec. 3.1): placed once before the replay."""

    rank_by: str = param("requests", "C: sub-LUNs ranked by request count (reads + writes) in the training window",
                         choices=("requests", "bytes"))

    def __post_init__(self):
        _check(self)


@dataclass(frozen=True)
class StaticTieringParams(StaticTieringSettings, MeasureParams):
    """Static tiering as evaluated: the shared measurement and its settings."""

    def __post_init__(self):
        _check(self, _measure_problems)


def _flashcache_problems(p) -> list[str]:
    if _not_multiple(p.block_bytes, 512):
        return [f"block_bytes must be a positive multiple of 512; got {p.block_bytes!r}"]
    return []


@dataclass(frozen=True)
class FlashCacheSettings:
    """FlashCache's own fields (Table 3: 4 KB blocks, 24 GB, LRU; write-back, notes Sec. 3.2-3.3)."""

    block_bytes: int = param(PAGE_BYTES, "Table 3: block size 4 KB (a multiple of 512 B)", bounds=(512, None),
                             unit="bytes")
    dirty_thresh_pct: float = param(20.0, "FlashCache's default (its docs; the paper is silent): cleaning keeps the "
                                    "dirty blocks <= 20 % of the cache (global here, C)", bounds=(1.0, 100.0),
                                    unit="%")
    metadata_bytes: int = param(4096, "C: a write-back write updates FlashCache's on-SSD metadata synchronously",
                                bounds=(0, None), unit="bytes")
    clean_merge_bytes: int = param(128 * 1024, "C: the cleaner merges contiguous dirty blocks into writes of at "
                                   "most 128 KiB", bounds=(1, None), unit="bytes")
    cleaning: str = param("global", "C (notes Sec. 3.2 allow it): dirty blocks kept <= dirty_thresh_pct of the whole "
                          "cache; 'per_set': of each set of set_ways blocks, as FlashCache does", choices=CLEANINGS)
    set_ways: int = param(512, "notes Sec. 3.2: FlashCache's sets are 512-way (reading cleaning='per_set')",
                          bounds=(1, None))

    def __post_init__(self):
        _check(self, _flashcache_problems)


@dataclass(frozen=True)
class FlashCacheParams(FlashCacheSettings, MeasureParams):
    """FlashCache as evaluated: the shared measurement, its settings, and the pass its registered names fix."""

    pass_number: int = param(1, "Sec. 4.1 (L189-193): replayed twice; pass 1 cold, pass 2 on pass 1's cache (set "
                             "by the names 'FlashCache' and 'FlashCache pass 2')", bounds=(1, None))

    def __post_init__(self):
        _check(self, _measure_problems, _flashcache_problems)


@dataclass(frozen=True)
class HddOnlyParams(MeasureParams):
    """The HDD RAID0 alone (Figs. 7 and 9, curve "HDD"; no mean is printed): the shared measurement only."""
