"""Claims checked by notebooks/02_vfrm_single_vm.ipynb: vFRM on one VM against LRU, ARC and CAR
(vFRM paper Sec. 5.2, Fig. 6 and Fig. 7; thesis Sec. 4.2.3.2, Fig. 20 and 21), the epoch-length claim
of Sec. 5.1 and the metadata overhead of Sec. 4.3. The multi-VM rows (Fig. 8/9) are in
:mod:`tieringlab.claims.gvfrm`.

Values come from :func:`tieringlab.experiments.vfrm_single_vm.claim_values`. The paper rows use the
Table 1 (and, when run, thesis Table 9) traces; by default those are the synthetic twins, which are
calibrated to Table 1's sizes, LRU hit ratio at 1 GB and 5-minute re-access ratio only: read ratio,
request sizes and how long hot data stays hot are modelling choices of :mod:`tieringlab.traces.twins`,
and both vFRM's hit ratio and Eq. 4's costs depend on them. A verdict on the twins therefore tests the
twin model as much as the paper; with ``traces.source: msr`` (the real files) the rows test the paper.
The ``*.cloudphysics`` rows apply the same claims out of sample to the real CloudPhysics VM trace
(113,872 requests over about two hours: 25 epochs of 5 minutes).

**Readings.** Two choices the paper leaves open decide verdicts, so every row that depends on them
exists once per reading (issue 17), its verdict conditional on it:

- ``idle_bins`` (:data:`IDLE_READINGS`; choice 3 of :mod:`tieringlab.policies.vfrm`): what a Flash with
  more room than warm bins holds: ``keep`` (default), ``recency``, ``disk``. Fig. 6 and Fig. 7 rows;
- ``io_pricing`` (:data:`PRICINGS`; :mod:`tieringlab.policies.iocost`): whether IOs 2..n of a
  multi-IO request are priced at Table 3's random or sequential rows. Fig. 7 rows.

The default reading keeps the row's base id; the others append ``.idle_<rule>`` and/or
``.sequential_runs`` (:func:`rid`, through :func:`tieringlab.readings.claim_id`). Tolerances were fixed
before any run: 5 points on mds0's 31.87 %, ``catch_up_pct`` = 1 point for "catches up" and for
"without any increasing of IO hit ratio", "most" = more than half of the traces, "order of magnitude" = a
ratio of at most 10 %, the metadata overhead ±0.00005 % (half a unit of the paper's last printed digit).
"""

from tieringlab.claims import Claim, at_most, is_true, within_abs
from tieringlab.readings import Reading, axis, claim_id

SOURCE = "02_vfrm_single_vm"

#: idle_bins readings (choice 3 of tieringlab.policies.vfrm), the default first.
IDLE_READINGS = ("keep", "recency", "disk")
#: io_pricing readings (tieringlab.policies.iocost.IO_PRICINGS), the default first.
PRICINGS = ("random", "sequential_runs")

MDS0_COST_REL_LRU = "vfrm.fig7.mds0_cost_rel_lru"
COST_FRACTION_OF_LRU = "vfrm.fig7.cost_fraction_of_lru.every_trace"
COST_BELOW_ALL_CONVENTIONAL = "vfrm.fig7.cost_below_all_conventional.every_trace"
ORDER_OF_MAGNITUDE = "vfrm.fig7.order_of_magnitude.most_traces"
CATCHES_UP = "vfrm.fig6.catches_up.most_traces"
GAP_NARROWS = "vfrm.fig6.gap_narrows.most_traces"
COST_FRACTION_OF_LRU_CLOUDPHYSICS = "vfrm.fig7.cost_fraction_of_lru.cloudphysics"
CATCHES_UP_CLOUDPHYSICS = "vfrm.fig6.catches_up.cloudphysics"
SHORT_EPOCHS_NO_HIT_GAIN = "vfrm.sec51.shorter_epochs_no_hit_gain"
SHORT_EPOCHS_EXTRA_COST = "vfrm.sec51.shorter_epochs_extra_cost.most_traces"
HEAT_MAP_OVERHEAD = "vfrm.sec43.heat_map_overhead_pct"

#: Rows that depend on idle_bins only, and on idle_bins and io_pricing.
IDLE_ROWS = (CATCHES_UP, GAP_NARROWS, CATCHES_UP_CLOUDPHYSICS)
COST_ROWS = (MDS0_COST_REL_LRU, COST_FRACTION_OF_LRU, COST_BELOW_ALL_CONVENTIONAL, ORDER_OF_MAGNITUDE,
             COST_FRACTION_OF_LRU_CLOUDPHYSICS)


#: Where the readings set their value: the ``policy`` (:class:`tieringlab.policies.vfrm.VfrmParams`) of the
#: ``vfrm_single_vm`` section.
IDLE_PATH, PRICING_PATH = "policy.idle_bins", "policy.io_pricing"


def idle_axis(rules=IDLE_READINGS, default: str = IDLE_READINGS[0]) -> tuple[Reading, ...]:
    """The idle-bin readings (:func:`tieringlab.readings.axis`): ``policy.idle_bins`` at each of ``rules``, named
    ``idle_<rule>``; ``default`` sets nothing."""
    return axis(IDLE_PATH, tuple(rules), "what a Flash with more room than warm bins holds (choice 3 of "
                "tieringlab.policies.vfrm; the paper is silent)", default=default, name=lambda v: f"idle_{v}")


def pricing_axis(pricings=PRICINGS, default: str = PRICINGS[0]) -> tuple[Reading, ...]:
    """The IO-pricing readings: ``policy.io_pricing`` at each of ``pricings``, named after it."""
    return axis(PRICING_PATH, tuple(pricings), "how IOs 2..n of a multi-IO request are priced "
                "(tieringlab.policies.iocost; the paper is silent)", default=default, name=str)


#: The ledger's readings by value: the default reading (``keep``, ``random``) keeps a row's base id.
_IDLE_READING = dict(zip(IDLE_READINGS, idle_axis()))
_PRICING_READING = dict(zip(PRICINGS, pricing_axis()))


def rid(base: str, idle: str = IDLE_READINGS[0], pricing: str = PRICINGS[0]) -> str:
    """The id of row ``base`` under a reading (:func:`tieringlab.readings.claim_id`): the base id for the defaults,
    else ``.idle_<rule>`` and/or ``.sequential_runs`` appended."""
    if idle not in IDLE_READINGS or pricing not in PRICINGS:
        raise ValueError(f"unknown reading idle={idle!r} pricing={pricing!r}; allowed {IDLE_READINGS} x {PRICINGS}")
    return claim_id(base, _IDLE_READING[idle], _PRICING_READING[pricing])


_DATA = ("On the twins by default (see the module docstring: vFRM's hits and Eq. 4's costs depend on twin "
         "properties that are modelling choices, not calibration targets); with traces.source=msr on the real "
         "traces. ")
_COST = ("Eq. 4 with Table 2 counts and Table 3 latencies (tieringlab.policies.iocost): LRU/ARC/CAR pay 4 KB IOs "
         "per page and write back dirty pages only when evicted (dirty pages still in Flash at the end are not "
         "flushed); vFRM pays one 128 KB IO per started 128 KB of a request, sends its misses (reads and writes) "
         "to the MD without admission, and pays 8 sequential 128 KB IOs per bin moved in or dirty bin moved out. ")
_PRICING = {"random": "Every user IO at Table 3's random row (io_pricing=random: a 64 KB read miss costs LRU "
                      "16 x (7671 + 58) us = 124 ms). ",
            "sequential_runs": "IOs 2..n of a request that continue the same operation at Table 3's sequential "
                               "row (io_pricing=sequential_runs: the same miss costs (7671 + 58) + 15 x (63 + 59) "
                               "us = 9.6 ms). "}
_IDLE = {"keep": "idle_bins=keep (default): bins with no IO in the previous 8 epochs (T = 0) keep their place in "
                 "Flash while room is left and never move in. ",
         "recency": "idle_bins=recency: bins with T = 0 fill the room left, most recently accessed first, resident "
                    "or not (a bin can move in after it cooled). ",
         "disk": "idle_bins=disk: Flash holds only bins with IO in the previous 8 epochs (40 min), even with room "
                 "to spare. "}
_RECENT = ("vFRM places bins only at 5-minute epoch boundaries and admits nothing on a miss: data re-used only "
           "within the epoch of its first access misses, while a 4 GB page cache keeps a working set of a few GB. ")


def _reading(idle, pricing=None) -> str:
    r = f"idle_bins={idle}" + ("" if pricing is None else f", io_pricing={pricing}")
    d = idle == IDLE_READINGS[0] and pricing in (None, PRICINGS[0])
    return f" [reading: {r}{'; the default' if d else ''}]"


def _conditional(idle, pricing=None) -> str:
    return ("Verdict conditional on " + _IDLE[idle] + (_PRICING[pricing] if pricing else "")
            + "The rows with the same claim and the other readings are beside this one. ")


_FAMILIES = {
    MDS0_COST_REL_LRU: dict(
        where="Sec. 5.2.2, Fig. 7", text="mds0: vFRM's IO cost at 4 GB of Flash relative to LRU's",
        paper_value="31.87 %", check=within_abs(31.87, 5.0), unit="%",
        note=_DATA + _COST + _RECENT + "Tolerance: 5 points (documented choice for a ratio of two Eq. 4 sums)."),
    COST_FRACTION_OF_LRU: dict(
        where="Sec. 5.2.2, Fig. 7",
        text="vFRM's IO cost at 4 GB is a fraction of LRU's on every Table 1 trace: the largest vFRM/LRU cost "
             "ratio over the traces",
        paper_value="below LRU 'in all cases' (mds0: 31.87 %)", check=at_most(100.0), unit="%",
        note=_DATA + _COST + _RECENT),
    COST_BELOW_ALL_CONVENTIONAL: dict(
        where="Sec. 5.2.2, Fig. 7",
        text="vFRM's IO cost at 4 GB is below those of LRU, ARC and CAR on every Table 1 trace: the largest ratio "
             "of vFRM's cost to the cheapest conventional cache's, over the traces",
        paper_value="'far less than those of the other three' in all cases", check=at_most(100.0), unit="%",
        note=_DATA + _COST),
    ORDER_OF_MAGNITUDE: dict(
        where="Sec. 5.2.2, Fig. 7",
        text="For most traces vFRM's IO cost at 4 GB is an order of magnitude below LRU's: more than half of the "
             "Table 1 traces have a vFRM/LRU cost ratio of at most 10 %",
        paper_value="'most of them are order of magnitude better'", check=is_true(),
        note=_DATA + _COST + "'Most ... order of magnitude' read as: the count of traces at <= 10 % is more than "
             "half of them (the note of each run gives the count)."),
    CATCHES_UP: dict(
        where="Sec. 5.2.1, Fig. 6",
        text="As Flash grows to 4 GB, vFRM's IO hit ratio catches up with or beats LRU, ARC and CAR on most "
             "Table 1 traces: at the largest Flash size, vFRM's hit ratio is at least the best of the three "
             "minus catch_up_pct points (1 by default) on more than half of the traces",
        paper_value="'catches up or even outperforms ... for most of the workloads'", check=is_true(),
        note=_DATA + _RECENT + "The note of each run names the traces that catch up."),
    GAP_NARROWS: dict(
        where="Sec. 5.2.1, Fig. 6",
        text="vFRM's hit-ratio deficit to the best of LRU/ARC/CAR shrinks as Flash grows: it is smaller at the "
             "largest Flash size than at the smallest on more than half of the Table 1 traces",
        paper_value="'as the size of Flash increases, the IO hit ratio of vFRM catches up'", check=is_true(),
        note=_DATA),
    COST_FRACTION_OF_LRU_CLOUDPHYSICS: dict(
        where="Sec. 5.2.2, Fig. 7",
        text="vFRM's IO cost at 4 GB relative to LRU's, checked out of sample on the real CloudPhysics VM trace",
        paper_value="below LRU 'in all cases' (MSR traces)", check=at_most(100.0), unit="%",
        note="A different real trace from the paper's. " + _COST),
    CATCHES_UP_CLOUDPHYSICS: dict(
        where="Sec. 5.2.1, Fig. 6",
        text="vFRM's IO hit ratio at the largest Flash size is at least the best of LRU/ARC/CAR minus "
             "catch_up_pct points, checked out of sample on the real CloudPhysics VM trace",
        paper_value="'catches up or even outperforms' (MSR traces)", check=is_true(),
        note="A different real trace from the paper's, about two hours long: vFRM's Flash starts empty and is "
             "refilled only at 5-minute boundaries, from the bins accessed in earlier epochs."),
}


def _claims() -> list[Claim]:
    out = []
    for base, f in _FAMILIES.items():
        pricings = PRICINGS if base in COST_ROWS else (None,)
        for idle in IDLE_READINGS:
            for pricing in pricings:
                cid = rid(base, idle, pricing or PRICINGS[0])
                out.append(Claim(id=cid, paper="vFRM", where=f["where"], text=f["text"] + _reading(idle, pricing),
                                 paper_value=f["paper_value"], check=f["check"], unit=f.get("unit", ""),
                                 source=SOURCE, note=_conditional(idle, pricing) + f["note"]))
    return out


CLAIMS = _claims() + [
    Claim(id=SHORT_EPOCHS_NO_HIT_GAIN, paper="vFRM", where="Sec. 5.1",
          text="Epochs shorter than 5 minutes do not raise vFRM's IO hit ratio: the largest gain (points) of any "
               "shorter epoch of the epoch sweep over 5 minutes, over the Table 1 traces, at 4 GB",
          paper_value="'short temporal granularity (i.e., less than 5min) ... without any increasing of IO hit "
                      "ratio'", check=at_most(1.0), unit="points", source=SOURCE,
          note="Tolerance: catch_up_pct = 1 point (fixed before the run). N stays 8 epochs (Sec. 4.3 keeps the "
               "previous 8), so a shorter epoch also shortens Eq. 1's history. Under the default reading "
               "(idle_bins=keep); conditional on it. " + _DATA),
    Claim(id=SHORT_EPOCHS_EXTRA_COST, paper="vFRM", where="Sec. 5.1",
          text="Epochs shorter than 5 minutes incur extra operational cost: on more than half of the Table 1 "
               "traces, vFRM's Flash-update cost (Eq. 4's Table 2(b) part: bin migrations) at the shortest epoch "
               "of the sweep exceeds the one at 5 minutes, at 4 GB",
          paper_value="'short temporal granularity ... might incur extra operational cost'", check=is_true(),
          source=SOURCE, note="Under the default reading (idle_bins=keep); conditional on it. " + _DATA),
    Claim(id=HEAT_MAP_OVERHEAD, paper="vFRM", where="Sec. 4.3",
          text="vFRM's heat map needs 28 bytes per 1 MB bin (N = 8 epochs x 2-byte counts + 8 + 4 bytes of "
               "address), 0.0027 % of the VMDK: the run's metadata bytes per bin over the bin size, in %",
          paper_value="28 bytes, 0.0027 %", check=within_abs(0.0027, 0.00005), unit="%", source=SOURCE,
          kind="sanity",
          note="Arithmetic on the run's N and bin size (2 N + 8 + 4 bytes per bin_bytes): it holds by construction "
               "at the paper's N = 8 and 1 MB bins, so it is a sanity check, not evidence. For comparison, the "
               "page caches' lists here keep about 9 bytes per 4 KB page (0.2 %)."),
]
