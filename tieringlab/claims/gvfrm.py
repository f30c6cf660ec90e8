"""Claims checked by notebooks/03_gvfrm_multi_vm.ipynb: GLB-vFRM (G1-vFRM) and G2-vFRM on the multi-VM
workloads cf4, cuf4, all8 (vFRM paper Sec. 5.3, Fig. 8-9; thesis Sec. 4.3.3, Fig. 24-25).

Values are computed by :func:`tieringlab.experiments.gvfrm_multi_vm.claim_values` from the sweep.
Tolerances, fixed before any run: "about 99 %" and "around 93 %" are read as ±1.5 points (the 93 %
plateau on both the smallest and the largest conventional hit ratio over 8-32 GB); the 65.29 % cost
reduction as ±10 points (the twins are calibrated to Table 1's hit and re-access ratios, not to IO
costs or bin popularity, so the cost is an out-of-calibration prediction); "keeps rising" and "the
reduction is increasing" allow steps down of at most :data:`RISING_TOL_PTS` points; "catch up" is
within :data:`CATCH_UP_PTS` point of the best conventional cache (the reading of vFRM Fig. 6's rows);
"much less IO cost" is at most :data:`MUCH_LOWER_RATIO` of the cheapest conventional cache's at every
size; "slightly lower" hit ratios are 0 to :data:`SLIGHTLY_LOWER_PTS` points below the best
conventional cache, on average over the sizes.

**Readings.** Choices the papers leave open that decide verdicts (issue 17), run side by side; a row is
one paper claim, its value the default reading's, its values under the other readings the sweep ran recorded on it
(``readings=``, issue 28):

- ``io_pricing`` (:data:`PRICINGS`; :mod:`tieringlab.policies.iocost`): IOs 2..n of a multi-IO request
  at Table 3's random (default) or sequential rows. Fig. 9 / Fig. 25 rows;
- G2-vFRM's counter ``aging_period`` (epochs): one day (288, the default, see
  :class:`tieringlab.policies.gvfrm.GvfrmParams`) and every other period the sweep ran (one hour, one epoch: the
  reading of the first version). G2 rows.

Reading names (:func:`reading_name`): ``aging_<period>`` and/or ``sequential_runs``, joined by ``.``; the default is
``"default"``. G1-vFRM rows hold under "one zone per bin" (issue 17: a bin joining a private zone leaves the public
zone), not a reading but the algorithm.

**Comparisons.** Every policy replays the same mix (one twin per member and seed; deterministic engines): "G1 below
LRU" or "G2 above G1" compares two numbers of one run, not two samples, so no interval is involved (over several
seeds, :func:`tieringlab.stats.paired_diff` would be the statistic; the notebook runs one).

**Preconditions** (per mix, measured on the mix's trace alone with
:func:`tieringlab.experiments.vfrm_single_vm.bin_reuse`; thresholds fixed from the papers before any run, never tuned
to):

- ``gvfrm.pre.<mix>.move_ins_never_reused``: share (%) of bin heatings (G-vFRM move-ins: IO after N = 8 epochs
  without) followed by no IO to the bin in the next N epochs, at most 50 % (Obv. 2 and Sec. 5.3.2: the lazy
  epoch-wise move-ins are why the cost is low; as the vFRM rows). Needed by the G1 cost rows;
- ``gvfrm.pre.<mix>.reusable_set_over_flash``: the VMs' aggregate reusable data (bins with IO in at least two epochs)
  over the smallest Flash size of the sweep, at least 1: Sec. 4.5 divides Flash among VMs because it cannot hold
  every VM's working set; if all of it fits at the smallest size, no allocation (G1's zones, G2's frequency split)
  decides what is cached. Needed by the G2 rows (the allocation claims);
- ``gvfrm.pre.<mix>.vm_heterogeneity``: the largest VM's reusable data over the smallest VM's, at least
  :data:`HETEROGENEITY_MIN` = 2: the thesis (Sec. 4.3.2) motivates G2 by VMs whose demands differ from G1's equal
  portions ("a VM's working data set might be less than its private Flash partition"; "some VMs have bins with
  relatively high IOPS"). Factor 2 is our documented choice (the thesis gives none), fixed before any run and below
  the spread of Table 1's working-set sizes within each paper mix (cf4 2.4x, cuf4 17x, all8 137x). Needed by the G2
  rows.

By default the traces are synthetic twins (tieringlab.traces.twins), not the MSR files: a row that
differs there is a finding about the twin model as much as about the paper; with
``traces.source: msr`` the rows test the paper.
"""

from tieringlab.claims import Claim, at_least, at_most, between, is_true, within_abs
from tieringlab.readings import Reading, axis

SOURCE = "03_gvfrm_multi_vm"
#: A "rising" curve may step down by this many percentage points (numerical noise of a finite trace).
RISING_TOL_PTS = 0.1
#: "Catch up": within this many points of the best of LRU/ARC/CAR (as vFRM Fig. 6's catch_up_pct).
CATCH_UP_PTS = 1.0
#: "Much less IO cost": at most this fraction of the cheapest conventional cache's cost.
MUCH_LOWER_RATIO = 0.5
#: "Slightly lower" hit ratio: on average at most this many points below the best conventional cache.
SLIGHTLY_LOWER_PTS = 5.0

#: io_pricing readings, the default first.
PRICINGS = ("random", "sequential_runs")
#: G2-vFRM aging periods (epochs) in the ledger, the default (one day) first.
AGING_READINGS = (288, 1)

CF4_G1_TOP = "gvfrm.fig8.cf4.g1_hit_ratio_at_32gb"
CF4_G1_RISING = "gvfrm.fig8.cf4.g1_keeps_rising"
CF4_CONV_PLATEAU = "gvfrm.fig8.cf4.conventional_plateau_above_4gb"
CF4_CONV_PLATEAU_MAX = "gvfrm.fig8.cf4.conventional_plateau_above_4gb.max"
CF4_G1_ABOVE_CONV = "gvfrm.fig8.cf4.g1_above_conventional_at_32gb"
CUF4_G1_MAX_REDUCTION = "gvfrm.fig9.cuf4.g1_max_cost_reduction_vs_lru"
CUF4_G1_REDUCTION_GROWS = "gvfrm.fig9.cuf4.g1_cost_reduction_grows_with_flash"
MIXES = ("cf4", "cuf4", "all8")
#: The mixes of "catch up and even slightly overcome" and "much less cost, slightly lower hit ratio".
UNFRIENDLY_MIXES = ("cuf4", "all8")


#: Where the readings set their value: the ``policy`` (:class:`tieringlab.policies.gvfrm.GvfrmParams`) of the
#: ``gvfrm_multi_vm`` section.
AGING_PATH, PRICING_PATH = "policy.aging_period", "policy.io_pricing"


def aging_axis(periods=AGING_READINGS, default: int = AGING_READINGS[0]) -> tuple[Reading, ...]:
    """G2-vFRM's aging readings (:func:`tieringlab.readings.axis`): ``policy.aging_period`` at each of ``periods``
    (epochs), named ``aging_<period>``; ``default`` sets nothing."""
    return axis(AGING_PATH, tuple(int(a) for a in periods), "G2-vFRM's counter aging period (thesis Sec. 4.3.2 ages "
                "'periodically' without a period)", default=int(default), name=lambda v: f"aging_{v}")


def pricing_axis(pricings=PRICINGS, default: str = PRICINGS[0]) -> tuple[Reading, ...]:
    """The IO-pricing readings: ``policy.io_pricing`` at each of ``pricings``, named after it."""
    return axis(PRICING_PATH, tuple(pricings), "how IOs 2..n of a multi-IO request are priced "
                "(tieringlab.policies.iocost; the paper is silent)", default=default, name=str)


#: Accounting readings (issue 34; as :mod:`tieringlab.claims.vfrm`): ``end_flush`` (``none``: dirty data left in
#: Flash at the trace's end is never written back, the paper's accounting; ``flush``: every policy writes it back
#: at its own Table 2(b) price, reading name ``flush_at_end``) and ``hit_pricing`` (``paper``: G1/G2's hits at the
#: 128 KB row, the page caches' at the 4 KB row; ``page``: every manager's hits per 4 KB page at the 4 KB row,
#: reading name ``hits_4k``). Both re-price the same counts
#: (:func:`tieringlab.experiments.vfrm_single_vm.accounting_costs`); they move the Fig. 9 cost rows only.
FLUSHES = ("none", "flush")
HIT_PRICINGS = ("paper", "page")


def reading_name(aging: int | None = None, pricing: str | None = None, flush: str | None = None,
                 hits: str | None = None, twin: str | None = None) -> str:
    """The name of a reading in the ledger (``readings=`` of a row): ``"default"`` for one day (288 epochs),
    ``random``, no flush and the paper's hit pricing (None: the default), else ``aging_<period>``,
    ``sequential_runs``, ``flush_at_end``, ``hits_4k`` (those that apply) joined by ``.``; ``twin`` (a twin reading
    of :data:`tieringlab.claims.vfrm.TWIN_READING_NAMES`, the mix built from its regenerated members, issue 34)
    comes first (``"reads_10.flush_at_end"``)."""
    if twin is not None:
        from tieringlab.claims.vfrm import TWIN_READING_NAMES  # noqa: PLC0415  (the vFRM twin readings)

        if twin not in TWIN_READING_NAMES:
            raise ValueError(f"unknown twin reading {twin!r}; allowed {TWIN_READING_NAMES}")
        rest = reading_name(aging, pricing, flush, hits)
        return twin if rest == "default" else f"{twin}.{rest}"
    a = AGING_READINGS[0] if aging is None else int(aging)
    pr = PRICINGS[0] if pricing is None else pricing
    fl = FLUSHES[0] if flush is None else flush
    hp = HIT_PRICINGS[0] if hits is None else hits
    if a < 1 or pr not in PRICINGS or fl not in FLUSHES or hp not in HIT_PRICINGS:
        raise ValueError(f"unknown reading aging={aging!r} pricing={pricing!r} flush={flush!r} hits={hits!r}; aging "
                         f">= 1 epoch, pricing in {PRICINGS}, flush in {FLUSHES}, hits in {HIT_PRICINGS}")
    parts = (([] if a == AGING_READINGS[0] else [f"aging_{a}"]) + ([] if pr == PRICINGS[0] else [pr])
             + ([] if fl == FLUSHES[0] else ["flush_at_end"]) + ([] if hp == HIT_PRICINGS[0] else ["hits_4k"]))
    return ".".join(parts) or "default"


#: "Most" of the bins: more than half (the vFRM rows' reading).
MOST_PCT = 50.0
#: VM heterogeneity: the largest VM's reusable data at least this multiple of the smallest VM's (documented choice).
HETEROGENEITY_MIN = 2.0


def pre_never_reused(mix: str) -> str:
    return f"gvfrm.pre.{mix}.move_ins_never_reused"


def pre_reusable_over_flash(mix: str) -> str:
    return f"gvfrm.pre.{mix}.reusable_set_over_flash"


def pre_heterogeneity(mix: str) -> str:
    return f"gvfrm.pre.{mix}.vm_heterogeneity"


def pre_writebacks_billed(mix: str) -> str:
    return f"gvfrm.pre.{mix}.fig9_writebacks_billed"


def pre_caches_evict(mix: str) -> str:
    return f"gvfrm.pre.{mix}.fig9_caches_evict"


def g1_cost_below_lru(mix: str) -> str:
    return f"gvfrm.fig9.{mix}.g1_cost_below_lru"


def g2_threshold(mix: str) -> str:
    return f"gvfrm.fig24.{mix}.g2_beats_conventional_above_threshold"


def g2_cost_below_g1(mix: str) -> str:
    return f"gvfrm.fig25.{mix}.g2_cost_below_g1"


def g2_hit_above_g1(mix: str) -> str:
    return f"gvfrm.fig24.{mix}.g2_hit_ratio_above_g1"


def g1_catches_up(mix: str) -> str:
    return f"gvfrm.fig8.{mix}.g1_catches_up_at_32gb"


def g1_overcomes_some(mix: str) -> str:
    return f"gvfrm.fig8.{mix}.g1_overcomes_some_conventional_at_32gb"


def g1_cost_much_lower(mix: str) -> str:
    return f"gvfrm.fig9.{mix}.g1_cost_much_lower_than_conventional"


def g1_hit_slightly_lower(mix: str) -> str:
    return f"gvfrm.fig8.{mix}.g1_hit_ratio_slightly_lower"


_TWIN = ("Default data: the synthetic twins (calibrated to Table 1 hit/re-access ratios only), all members "
         "of a mix at one twin scale with the flash scaled alike; with traces.source=msr this tests the paper.")
_PRICING = {"random": "io_pricing=random: every user IO at Table 3's random row (a 64 KB read miss costs LRU "
                      "16 x (7671 + 58) us). ",
            "sequential_runs": "io_pricing=sequential_runs: IOs 2..n of a request that continue the same "
                               "operation at Table 3's sequential row (the same miss: (7671 + 58) + 15 x (63 + 59) "
                               "us). "}
_AGING = {288: "G2 counters aged by one bit once a day (288 epochs; the default: the thesis ages only against "
               "overflow, and a day keeps a 16-bit counter below 2^16 for up to 32,767 accesses a day). ",
          1: "G2 counters aged by one bit every 5-minute epoch (the first version's reading: the counters then "
             "measure the last few epochs, not a long-run frequency). "}


def _expand(base, *, aging: bool, pricing: bool, requires: tuple[str, ...] = (), **kw) -> list[Claim]:
    """One row (``base``) whose value is the default reading's; its note says which readings are recorded on it."""
    on = [x for x, f in (("G2 aging_period (one day by default; the other periods the sweep ran)", aging),
                         ("io_pricing (random by default; sequential_runs)", pricing)) if f]
    note = ("The value is the default reading's: " + (_AGING[288] if aging else "") + (_PRICING["random"] if pricing
                                                                                        else "")
            + "The other readings of " + " x ".join(on) + " are recorded on this row. ") if on else ""
    return [Claim(id=base, text=kw["text"], source=SOURCE, note=note + kw.get("note", ""), requires=requires,
                  **{k: v for k, v in kw.items() if k not in ("text", "note")})]


_G1_COST_NOTE = ("Eq. 4 prices every vFRM user IO at the 128 KB Table 3 rows (Sec. 5.1) and the page caches' at 4 KB "
                 "per page: a small hit costs G1 790 us (read) / 1241 us (write) against 135 / 58 us per 4 KB page "
                 "for LRU, so on a hit-dominated mix (cf4) G1 can cost more than LRU; misses (7671 us per 4 KB page "
                 "for LRU) favour G1. ")

CLAIMS: list[Claim] = [
    Claim(id=CF4_G1_TOP, paper="vFRM", where="Sec. 5.3, Fig. 8(a); thesis Fig. 24(a)",
          text="cf4: GLB-vFRM (G1-vFRM) IO hit ratio keeps rising to about 99 % as Flash grows (value: at 32 GB)",
          paper_value="about 99 %", check=within_abs(99.0, 1.5), unit="%", source=SOURCE,
          note="'About 99 %' read as 99 ± 1.5 points at the largest flash size, 32 GB. On the twins the friendly "
               "traces' cold data is touched once, at a random time, in bins no hot object shares, so 1 MB bins "
               "prefetch little and G1 stays near the page caches' first-touch bound (~90 %); the paper's 99 % "
               "above LRU's 93 % needs first touches that land in bins already hot. " + _TWIN),
    Claim(id=CF4_G1_RISING, paper="vFRM", where="Sec. 5.3, Fig. 8(a)",
          text="cf4: GLB-vFRM's hit ratio keeps rising with Flash size (no step down over 1-32 GB)",
          paper_value="keeps rising", check=is_true(), source=SOURCE,
          note=f"Steps down of at most {RISING_TOL_PTS} points are allowed. " + _TWIN),
    Claim(id=CF4_CONV_PLATEAU, paper="vFRM", where="Sec. 5.3, Fig. 8(a); thesis Fig. 24(a)",
          text="cf4: the conventional caches (LRU, ARC, CAR) stop at around 93 % when Flash is larger than 4 GB "
               "(value: the smallest of their hit ratios over 8-32 GB)",
          paper_value="around 93 %", check=within_abs(93.0, 1.5), unit="%", source=SOURCE,
          note="'Around 93 %' read as 93 ± 1.5 points for every conventional cache at every size above 4 GB: this "
               "row checks the smallest, the '.max' row the largest. The cf4 twins' LRU hit ratio at 1 GB per VM "
               "is calibrated to Table 1 (85.6-90.8 %); the plateau is set by their first-touch misses (about "
               "90 % on the twins). " + _TWIN),
    Claim(id=CF4_CONV_PLATEAU_MAX, paper="vFRM", where="Sec. 5.3, Fig. 8(a); thesis Fig. 24(a)",
          text="cf4: the conventional caches (LRU, ARC, CAR) stop at around 93 % when Flash is larger than 4 GB "
               "(value: the largest of their hit ratios over 8-32 GB)",
          paper_value="around 93 %", check=within_abs(93.0, 1.5), unit="%", source=SOURCE,
          note="The upper end of the plateau; see the row without '.max'. " + _TWIN),
    Claim(id=CF4_G1_ABOVE_CONV, paper="vFRM", where="Sec. 5.3, Fig. 8(a)",
          text="cf4: GLB-vFRM gains better Flash utilization than the conventional caches (value: G1 hit ratio "
               "minus the best conventional one at 32 GB)",
          paper_value="about 99 % vs around 93 %", check=at_least(0.0), unit="points", source=SOURCE,
          note=_TWIN),
    *_expand(CUF4_G1_MAX_REDUCTION, aging=False, pricing=True,
             requires=(pre_never_reused("cuf4"), pre_writebacks_billed("cuf4")),
             paper="vFRM", where="Sec. 5.3, Fig. 9; thesis Fig. 25",
             text="cuf4: GLB-vFRM's overall IO cost (Eq. 4) is decreased up to 65.29 % relative to LRU "
                  "(value: the largest 100 x (1 - C_G1 / C_LRU) over 1-32 GB)",
             paper_value="up to 65.29 %", check=within_abs(65.29, 10.0), unit="%",
             note="The text says Fig. 9(a) but names cuf4, whose panel is (b) in the caption; we follow the named "
                  "workload. Tolerance ±10 points: the IO cost depends on write and migration counts that no twin "
                  "parameter was calibrated to. The cuf4 twins are dominated by first-touch 64 KB scan IOs: LRU pays "
                  "MD read + SSD write per 4 KB page of each (Table 2(a)), G1 one 128 KB MD IO without admission, so "
                  "the saving can exceed the paper's. " + _TWIN),
    *_expand(CUF4_G1_REDUCTION_GROWS, aging=False, pricing=True,
             requires=(pre_never_reused("cuf4"), pre_writebacks_billed("cuf4")),
             paper="vFRM", where="Sec. 5.3, Fig. 9",
             text="cuf4: GLB-vFRM's relative IO-cost reduction versus LRU increases as Flash size increases",
             paper_value="increasing with Flash size", check=is_true(),
             note=f"Steps down of at most {RISING_TOL_PTS} points are allowed. " + _TWIN),
    *[c for m in MIXES for c in _expand(
        g1_cost_below_lru(m), aging=False, pricing=True, requires=(pre_never_reused(m), pre_writebacks_billed(m)),
        paper="vFRM", where="Sec. 5.3, Fig. 9; thesis Fig. 25",
        text=f"{m}: GLB-vFRM significantly reduces the overall IO cost compared to LRU at every Flash size "
             f"(value: the largest C_G1 / C_LRU over 1-32 GB)",
        paper_value="below LRU", check=at_most(1.0), unit="x LRU", note=_G1_COST_NOTE + _TWIN)],
    *[c for m in UNFRIENDLY_MIXES for c in _expand(
        g1_catches_up(m), aging=False, pricing=False, paper="vFRM", where="Sec. 5.3.1, Fig. 8(b)(c)",
        text=f"{m}: the IO hit ratio of GLB-vFRM catches up with the conventional caches as Flash grows (value: "
             f"G1's hit ratio minus the best of LRU/ARC/CAR at 32 GB, points)",
        paper_value="'catch up and even slightly overcome some of the conventional algorithms'",
        check=at_least(-CATCH_UP_PTS), unit="points",
        note=f"'Catch up' read as within {CATCH_UP_PTS:g} point of the best conventional cache at the largest "
             f"size (the Fig. 6 reading). " + _TWIN)],
    *[c for m in UNFRIENDLY_MIXES for c in _expand(
        g1_overcomes_some(m), aging=False, pricing=False, paper="vFRM", where="Sec. 5.3.1, Fig. 8(b)(c)",
        text=f"{m}: GLB-vFRM's IO hit ratio even slightly overcomes some of the conventional caches as Flash grows "
             f"(value: whether G1 is above at least one of LRU/ARC/CAR at 32 GB)",
        paper_value="'even slightly overcome some of the conventional algorithms'", check=is_true(), note=_TWIN)],
    *[c for m in UNFRIENDLY_MIXES for c in _expand(
        g1_cost_much_lower(m), aging=False, pricing=True,
        requires=(pre_never_reused(m), pre_writebacks_billed(m), pre_caches_evict(m)),
        paper="vFRM", where="Sec. 5.3.2, Fig. 9(b)(c)",
        text=f"{m}: GLB-vFRM consumes much less IO cost than the conventional caches (value: the largest, over "
             f"1-32 GB, of C_G1 over the cheapest of C_LRU, C_ARC, C_CAR)",
        paper_value="'much less IO cost ... although the IO hit ratios of GLB-VFRM are slightly lower'",
        check=at_most(MUCH_LOWER_RATIO), unit="x cheapest conventional",
        note=f"'Much less' read as at most {MUCH_LOWER_RATIO:g} of the cheapest conventional cache's cost at every "
             f"size. " + _G1_COST_NOTE + _TWIN)],
    *[c for m in UNFRIENDLY_MIXES for c in _expand(
        g1_hit_slightly_lower(m), aging=False, pricing=False, paper="vFRM", where="Sec. 5.3.2, Fig. 8(b)(c)",
        text=f"{m}: GLB-vFRM's IO hit ratios are slightly lower than the conventional caches' (value: the best of "
             f"LRU/ARC/CAR minus G1, points, averaged over 1-32 GB)",
        paper_value="'the IO hit ratios of GLB-VFRM are slightly lower'",
        check=between(0.0, SLIGHTLY_LOWER_PTS), unit="points",
        note=f"'Slightly lower' read as 0 to {SLIGHTLY_LOWER_PTS:g} points below on average over the sweep (the "
             f"same section says G1 catches up as Flash grows, so the gap is averaged, not taken at one size). "
             + _TWIN)],
    *[c for m in MIXES for c in _expand(
        g2_threshold(m), aging=True, pricing=False, requires=(pre_reusable_over_flash(m), pre_heterogeneity(m)),
        paper="Tai thesis (G-vFRM)", where="Sec. 4.3.4, Fig. 24",
        text=f"{m}: G2-vFRM's hit ratio beats the conventional caches as long as Flash is larger than a "
             f"threshold (value: whether some size of the 1-32 GB sweep exists from which G2 beats LRU, ARC and "
             f"CAR at it and at every larger size; the note gives it)",
        paper_value="above a threshold, under all workloads", check=is_true(),
        note="The thesis gives no threshold value; any threshold within the 1-32 GB sweep counts. " + _TWIN)],
    *[c for m in MIXES for c in _expand(
        g2_hit_above_g1(m), aging=True, pricing=False, requires=(pre_reusable_over_flash(m), pre_heterogeneity(m)),
        paper="Tai thesis (G-vFRM)", where="Sec. 4.3.4, Fig. 24",
        text=f"{m}: G2-vFRM obtains better IO hit ratios than G1-vFRM (value: the smallest, over 1-32 GB, of G2's "
             f"hit ratio minus G1's, points)",
        paper_value="'G2-vFRM obtains better IO hit ratios'", check=at_least(0.0), unit="points",
        note="Read as: at least as high at every flash size of the sweep. " + _TWIN)],
    *[c for m in MIXES for c in _expand(
        g2_cost_below_g1(m), aging=True, pricing=True,
        requires=(pre_never_reused(m), pre_reusable_over_flash(m), pre_heterogeneity(m)),
        paper="Tai thesis (G-vFRM)", where="Sec. 4.3.5, Fig. 25",
        text=f"{m}: G2-vFRM beats G1-vFRM by saving more IO cost (value: the largest C_G2 / C_G1 over 1-32 GB)",
        paper_value="below G1-vFRM", check=at_most(1.0), unit="x G1",
        note="Read as: at every flash size of the sweep. " + _TWIN)],
]


_NEVER = ("Share (%) of the mix's bin heatings (an epoch with IO to a 1 MB bin after N = 8 epochs without, before the "
          "last epoch; each VM's bins apart: G-vFRM moves such a bin in at the next boundary when a zone has room, 8 x "
          "128 KB MD reads + SSD writes) after which the bin gets no IO in the next N epochs: the move-in serves no "
          "IO. Threshold fixed from the paper before any run: at most MOST_PCT = 50 % (vFRM Obv. 2; Sec. 5.3.2: the "
          "lazy epoch-wise move-ins are the first reason G-vFRM's cost is low). Measured on the mix alone (no "
          "policy), so every reading shares it. ")
_REUSABLE = ("The VMs' aggregate reusable data (1 MB bins with IO in at least two 5-minute epochs: what a placement "
             "can profit from) over the smallest Flash size of the sweep, both at the mix's twin scale. Threshold "
             "fixed from the paper before any run: at least 1 (Sec. 4.5: Flash is divided among VMs because it cannot "
             "hold every VM's working set; when all reusable data fits at the smallest size, the allocation decides "
             "nothing). Measured on the mix alone. ")
_HETERO = ("The largest VM's reusable data (bins with IO in at least two epochs) over the smallest VM's (at least one "
           "bin). Threshold: at least HETEROGENEITY_MIN = 2, our documented choice fixed before any run (the thesis, "
           "Sec. 4.3.2, motivates G2 by VMs whose demands differ from G1's equal private portions and gives no "
           "number; Table 1's working-set sizes differ by 2.4x within cf4, 17x within cuf4, 137x within all8). "
           "Measured on the mix alone. ")

_BILLED = ("Whether the page caches' Table 2(b) write-back cost is billed at every Flash size of the sweep: the mix's "
           "distinct 4 KB pages (each VM's apart) exceed the cache's pages at each size (LRU, ARC and CAR admit every "
           "miss, so they evict exactly then), or the reading flushes dirty data at the trace's end (flush_at_end: "
           "true there by construction). Fixed from the paper before any run (issue 34, as notebook 02's "
           "vfrm.pre.*.fig7_writebacks_billed): Table 2(b) prices the conventional caches' dirty evictions inside "
           "C_IO, so Fig. 9's cost comparison at a size presupposes caches that write their dirty pages back there; a "
           "cache that holds the whole footprint absorbs every write for free and the ratio at that size measures the "
           "accounting, not the placement. The Fig. 9 rows take their value over every size (largest ratio, largest "
           "reduction), so every size must bill. The note names the sizes whose cache holds the footprint. ")
_EVICT = ("The number of Flash sizes of the sweep at which the mix's page caches evict (its distinct 4 KB pages exceed "
          "the cache's pages: there LRU, ARC and CAR replace pages and differ; elsewhere they hold the whole "
          "footprint and have the same counts). Fixed from the paper before any run: at least one, since Fig. 9 "
          "compares G1 with the cheapest of three conventional caches shown apart, and they differ only in what "
          "they evict (as notebook 02's vfrm.pre.fig7_caches_evict.some_trace). ")

CLAIMS = [
    *[Claim(id=pre_writebacks_billed(m), paper="vFRM", where="Sec. 5.1 Table 2(b), Sec. 5.3 Fig. 9",
            kind="precondition",
            text=f"{m}: the page caches' dirty data is billed at every Fig. 9 Flash size (the cache evicts at each "
                 f"size, or the reading flushes at the trace's end)",
            paper_value="conventional caches pay SSD read + MD write per dirty page written back (Table 2(b))",
            check=is_true(), source=SOURCE, note=_BILLED + _TWIN) for m in MIXES],
    *[Claim(id=pre_caches_evict(m), paper="vFRM", where="Sec. 5.3, Fig. 9", kind="precondition",
            text=f"{m}: Flash sizes of the sweep at which the page caches evict, so that ARC and CAR differ from LRU",
            paper_value="Fig. 9 shows LRU, ARC and CAR as three different costs", check=at_least(1), unit="sizes",
            source=SOURCE, note=_EVICT + _TWIN) for m in UNFRIENDLY_MIXES],  # the mixes with a row that needs it
    *[Claim(id=pre_never_reused(m), paper="vFRM", where="Sec. 3.3 Obv. 2, Sec. 5.3.2", kind="precondition",
            text=f"{m}: share of bin heatings (G-vFRM move-ins) followed by no IO to the bin in the next 8 epochs, "
                 f"the premise of Fig. 9's cost saving",
            paper_value="at most half (popularity stable over time, Obv. 2)", check=at_most(MOST_PCT), unit="%",
            source=SOURCE, note=_NEVER + _TWIN) for m in MIXES],
    *[Claim(id=pre_reusable_over_flash(m), paper="Tai thesis (G-vFRM)", where="vFRM Sec. 4.5; thesis Sec. 4.3.2",
            kind="precondition",
            text=f"{m}: the VMs' aggregate reusable data over the smallest Flash size of the sweep (global allocation "
                 f"has something to trade)",
            paper_value="Flash cannot hold every VM's working set (Sec. 4.5)", check=at_least(1.0),
            unit="x smallest Flash", source=SOURCE, note=_REUSABLE + _TWIN) for m in MIXES],
    *[Claim(id=pre_heterogeneity(m), paper="Tai thesis (G-vFRM)", where="thesis Sec. 4.3.2", kind="precondition",
            text=f"{m}: the VMs differ in demand: the largest VM's reusable data over the smallest VM's",
            paper_value="heterogeneous VMs (G1's two drawbacks)", check=at_least(HETEROGENEITY_MIN),
            unit="x", source=SOURCE, note=_HETERO + _TWIN) for m in MIXES],
    *CLAIMS,
]
