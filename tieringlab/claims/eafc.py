"""Claims of the EAFC paper ("SLO based SSD resource management in Hybrid Store"), checked by
notebooks/07_eafc.ipynb.

The paper has no tables and no figure data: every number below is quoted from its text (Sec. IV, V,
abstract). Tolerances are the reading notes' suggestions (``shared/papers/notes/eafc.md`` §9), taken
as written and fixed before the notebook's first paper-scale run. Values come from
:func:`tieringlab.experiments.eafc.claim_values`: means over the replications (trace and noise seeds)
for "near" claims, the 95 % interval of a difference for "bigger / smaller" claims, the worst
replication for "always" claims.

Standing caveats (notes §7.6 item 8): the hardware is unknown (our latency model is a closed queueing
network with datasheet-like constants, calibrated on one anchor: vanilla's ~1 ms, labelled a
calibration below); the FileBench popularity is not given (we use independent uniform reads, notes
§6.3); the FileBench file count and working set disagree in the paper (1.6 M x 20 KB = 32 GB, not
40 GB, notes U11: we keep the 40 GB); the controller's gains are not given (notes §2.4 defaults).
"""

from tieringlab.claims import Claim, above, at_least, at_most, between, is_true, within_abs, within_rel

SRC = "07_eafc"

FIG4A_PARTITION = "eafc.fig4a.avg_partition_10ms"
FIG4B_PARTITION = "eafc.fig4b.avg_partition_5ms"
TIGHTER_TARGET_BIGGER = "eafc.fig4ab.tighter_target_bigger_partition"
VANILLA_WHOLE_WS = "eafc.vanilla.caches_whole_working_set"
VANILLA_1MS = "eafc.vanilla.latency_about_1ms"
VANILLA_44GB = "eafc.vanilla.partition_44gb"
CONFORMANCE = "eafc.conformance.fb40_after_warmup"
WARMUP_ABOVE = "eafc.warmup.latency_above_target"
FIG4C_PARTITION = "eafc.fig4c.avg_partition_30gb"
SMALLER_WS_SMALLER = "eafc.fig4c.smaller_working_set_smaller_partition"
FRACTION_CACHED = "eafc.fraction_of_working_set_cached"
SFS_PHASE1 = "eafc.fig4d.phase1_met_partition_shrinks"
SFS_RISES = "eafc.fig4d.partition_rises_with_load"
SFS_SPIKES = "eafc.fig4d.latency_spikes_at_load_steps"
SFS_SAVING = "eafc.fig4d.saving_about_50pct"
SAVINGS_RANGE = "eafc.abstract.savings_6_to_50pct"
P75_BEATS = "eafc.p75.beats_stricter_percentiles"
BAND = "eafc.band.reduces_oscillation"
USAGE_CAP = "eafc.eviction.usage_at_most_90pct"
SHORT_HISTORY = "eafc.cwnd.short_history_suffices"
PRE_SFS_WS_RAM = "eafc.pre.sfs_working_set_exceeds_ram_after_phase1"
PRE_PCT_OSC = "eafc.pre.p90_p99_partition_reverses"
PRE_BAND_OSC = "eafc.pre.noband_aggressive_partition_reverses"
FIXED_BAND = "eafc.fixed_partition.latency_in_a_band"
PRE_FIXED_VARIES = "eafc.pre.fixed_partition_latency_varies"
PAPER = "EAFC"
#: Preconditions (thresholds fixed from the paper before measuring; never tuned):
#: Sec. V.B credits the SLO of the first 5 h to "high buffer cache hit ratio" and the partition's rise and the
#: latency spikes after to "buffer cache miss increases": the claims about hours 5-15 need a working set larger
#: than the RAM there (ratio >= 1).
WS_OVER_RAM_MIN = 1.0
#: Sec. IV.A/IV.B: P90/P99 sizing, no band and an aggressive decrease "resulted in partition size oscillation".
#: An oscillation is a partition that goes up and comes back down (or the reverse): a claim that one setting
#: oscillates less than another can only be tested where the other reverses its partition's direction at least
#: once per run on average (fewer: it never oscillated, and the comparison counts warm-up steps).
REVERSALS_MIN = 1.0
#: One quantity, one tolerance: the FileBench partition rows' +-3 GB (notes §9, C1/C2). The abstract's savings range
#: (6-50 %) has the 5 ms FileBench saving (1 - 41/44) as its low end: on the same tolerance that end reaches
#: 1 - (41 + 3) / 44 = 0 % (a 44 GB partition is vanilla's: no saving), and its high end is the SPECsfs saving
#: row's upper bound (35-65 %, notes C14).
PARTITION_TOL_GB = 3.0
VANILLA_PAPER_GB = 44.0
SFS_SAVING_BOUNDS = (35.0, 65.0)
SAVINGS_RANGE_PCT = (100.0 * (1.0 - (41.0 + PARTITION_TOL_GB) / VANILLA_PAPER_GB), SFS_SAVING_BOUNDS[1])
#: Sec. IV.A: at a fixed size below the working set "the observed latency oscillated within a range", and EAFC's
#: band [latency_min, latency_max] with latency_min = half the target was built around that range: a fixed
#: partition's observed latency (the cwnd's P75) should stay within a factor latency_max / latency_min = 2.
FIXED_BAND_RATIO_MAX = 1.0 / 0.5
MODEL_NOTE = ("Model: closed queueing network (32 outstanding FileBench requests, 8 SSD units, 4 HDD spindles), "
              "uniform file popularity, Fig. 3 gains of the notes (Kp 0.02/ms, T_inc 0.25, T_dec 0.05, "
              "T_util 0.8), P_init 10 GB; warm-up ends at the first cwnd meeting the target (notes U14).")
U11 = " The paper's 1.6 M files of ~20 KB make 32 GB, not its 40 GB working set (notes U11); we keep 40 GB."

SAVING_NOTE = (" One quantity, one row, one tolerance: the paper's FileBench savings (11 % at 10 ms, 6 % at 5 ms) "
               "are 1 - P / 44 GB of these partitions, so a saving row would be this row written again (the ledger "
               "audit found the former ones exactly affine in it); the savings table shows them, and the gain "
               "sweep's readings give this row (hence the saving) under each gain. Reading 'whole_run_average': "
               "the mean over the whole run, warm-up included (notes U14).")


CLAIMS = [
    Claim(id=FIG4A_PARTITION, paper=PAPER, where="Sec. V.A, Fig. 4a",
          text="FileBench, 40 GB working set, 10 ms target: average EAFC partition after warm-up",
          paper_value="39 GB (the paper's 11 % saving is 1 - 39/44 of it)", check=within_abs(39.0, PARTITION_TOL_GB),
          source=SRC, unit="GB", note=MODEL_NOTE + U11 + SAVING_NOTE),
    Claim(id=FIG4B_PARTITION, paper=PAPER, where="Sec. V.A, Fig. 4b",
          text="FileBench, 40 GB working set, 5 ms target: average EAFC partition after warm-up",
          paper_value="41 GB (the paper's 6 % saving is 1 - 41/44 of it)", check=within_abs(41.0, PARTITION_TOL_GB),
          source=SRC, unit="GB", note=MODEL_NOTE + U11 + SAVING_NOTE),
    Claim(id=TIGHTER_TARGET_BIGGER, paper=PAPER, where="Sec. V.A",
          text="A tighter target needs a bigger partition: the 95 % interval of the paired per-replication "
               "difference (5 ms minus 10 ms partition, the same traces and noise) lies above 0 (value: its lower "
               "end, >= 0 holds)",
          paper_value="41 GB > 39 GB", check=at_least(0.0), source=SRC, unit="GB"),
    Claim(id=VANILLA_WHOLE_WS, paper=PAPER, where="Sec. V.A",
          text="Vanilla (no controller) ends with the whole 40 GB working set in the SSD",
          paper_value="40 GB used", check=within_rel(40.0, 0.02), source=SRC, unit="GB",
          note="True by construction of an LRU larger than the working set: a simulator sanity check.",
          kind="sanity"),
    Claim(id=VANILLA_1MS, paper=PAPER, where="Sec. V.A",
          text="Vanilla's mean observed latency after warm-up (FileBench, 40 GB)",
          paper_value="approximately 1 ms", check=at_most(1.5), source=SRC, unit="ms",
          note="The calibration anchor of the latency model (the SSD service time is set so that all-SSD-hit "
               "reads take 1 ms): not a verdict.", kind="calibration"),
    Claim(id=VANILLA_44GB, paper=PAPER, where="Sec. V.A",
          text="Vanilla's partition equivalent: SSD used / 0.9 (usage never exceeds 90 % of a partition)",
          paper_value="44 GB (40 / 0.9 = 44.4, rounded down)", check=within_abs(44.0, 0.5), source=SRC,
          unit="GB", note="Arithmetic on the vanilla run: a sanity check.", kind="sanity"),
    Claim(id=CONFORMANCE, paper=PAPER, where="Sec. V.A",
          text="SLO conformance after warm-up (fraction of cwnds whose mean latency meets the target), worst "
               "replication of both FileBench 40 GB targets", paper_value="100 %",
          check=at_least(0.95), source=SRC, unit="fraction",
          note="The paper's 100 % can only exclude the warm-up it also describes (notes §5.3)."),
    Claim(id=WARMUP_ABOVE, paper=PAPER, where="Sec. V.A",
          text="During the initial SSD warm-up the observed latency is above the target (first cwnd, every "
               "replication, Fig. 4a-c)", paper_value="qualitative", check=is_true(), source=SRC),
    Claim(id=FIG4C_PARTITION, paper=PAPER, where="Sec. V.A, Fig. 4c",
          text="FileBench, 30 GB working set, 10 ms target: average EAFC partition after warm-up",
          paper_value="28 GB", check=within_abs(28.0, PARTITION_TOL_GB), source=SRC, unit="GB", note=MODEL_NOTE),
    Claim(id=SMALLER_WS_SMALLER, paper=PAPER, where="Sec. V.A, Fig. 4a/4c",
          text="A smaller working set needs a smaller partition at 10 ms: the 95 % intervals separate "
               "(upper end for 30 GB minus lower end for 40 GB, <= 0 holds)", paper_value="28 GB < 39 GB",
          check=at_most(0.0), source=SRC, unit="GB"),
    Claim(id=FRACTION_CACHED, paper=PAPER, where="Sec. I (insight 1)",
          text="Only part of the working set needs caching: SSD used / working set after warm-up, largest over "
               "the 10 ms runs and replications", paper_value="0.9 x 39 / 40 = 0.88; 0.9 x 28 / 30 = 0.84",
          check=at_most(0.95), source=SRC, unit="fraction"),
    Claim(id=SFS_PHASE1, paper=PAPER, where="Sec. V.B, Fig. 4d",
          text="By construction (our 12 GB phase-1 working set fits the 14 GB RAM): SPECsfs at 2000 ops/s (first 5 h), "
               "every cwnd meets 3 ms and the partition ends below its initial 10 GB (every replication)",
          paper_value="qualitative (buffer-cache hits)",
          check=is_true(), source=SRC, kind="sanity",
          note="By construction: our phase-1 working set (6 MB per op/s x 2000 = 12 GB) fits the 14 GB RAM buffer "
               "cache, so nearly every read is a RAM hit whatever the partition (the paper's own explanation, "
               "buffer-cache hits, built into the documented workload): a check of the model, not of EAFC."),
    Claim(id=SFS_RISES, paper=PAPER, where="Sec. V.B, Fig. 4d",
          text="SPECsfs at 4000 and 5000 ops/s: the partition rises within each phase and ends above its "
               "size at 5 h (every replication)", paper_value="qualitative", check=is_true(), source=SRC,
          requires=(PRE_SFS_WS_RAM,)),
    Claim(id=SFS_SPIKES, paper=PAPER, where="Sec. V.B, Fig. 4d",
          text="Latency spikes where the load rises: mean latency of the first cwnd after 5 h and 10 h over the "
               "cwnd before (smallest of the two, over replications)", paper_value="two sudden rises",
          check=at_least(1.5), source=SRC, unit="x", requires=(PRE_SFS_WS_RAM,)),
    Claim(id=SFS_SAVING, paper=PAPER, where="Sec. V.B",
          text="SSD saved against vanilla over the 15 h SPECsfs run: 1 - mean_t P_EAFC / mean_t(Used_vanilla / 0.9)",
          paper_value="around 50 %", check=between(*SFS_SAVING_BOUNDS), source=SRC, unit="%",
          note="Formula: notes U18 reading (a); the paper gives none. Working set 6 MB per op/s (12/24/30 GB), "
               "Zipf(0.8), 14 GB RAM buffer cache (documented choices).", requires=(PRE_SFS_WS_RAM,)),
    Claim(id=SAVINGS_RANGE, paper=PAPER, where="Abstract",
          text=f"Savings against vanilla span 6-50 %: every saving of the savings table lies in "
               f"[{SAVINGS_RANGE_PCT[0]:g} %, {SAVINGS_RANGE_PCT[1]:g} %] (the range's ends on the tolerances of "
               f"the rows that state them)",
          paper_value="6-50 %", check=is_true(), source=SRC, requires=(PRE_SFS_WS_RAM,),
          note="One quantity, one tolerance: the 6 % end is the 5 ms partition (1 - 41/44), whose row allows "
               "+-3 GB, i.e. up to 44 GB = no saving (0 %); the 50 % end is the SPECsfs saving row's [35, 65] %. "
               "FileBench savings divide by our vanilla's Used / 0.9 (44.4 GB; the paper rounds to 44)."),
    Claim(id=P75_BEATS, paper=PAPER, where="Sec. I (insight 2), Sec. IV.B",
          text="Sizing to the 75th percentile: conformance at least that of P90 and P99, and fewer partition "
               "changes per hour than both by a margin: the 95 % interval of the paired per-replication "
               "difference (P90 or P99 minus P75, the same traces and noise) lies above 0 (FileBench 40 GB, both "
               "targets)",
          paper_value="P90/P99 oscillate and violate the average", check=is_true(), source=SRC,
          note="Needs latency noise (sigma > 0): with none, every percentile equals the mean. The margin rule: a "
               "difference of about one partition change over all replications is within the seeds' noise.",
          requires=(PRE_PCT_OSC,)),
    Claim(id=BAND, paper=PAPER, where="Sec. IV.A",
          text="The min-max band (latency_min = half the target) changes the partition less often than no band "
               "(latency_min = target) and than an aggressive decrease (T_dec 0.5, Kp_dec 0.5/ms)",
          paper_value="oscillations reduced", check=is_true(), source=SRC, requires=(PRE_BAND_OSC,)),
    Claim(id=USAGE_CAP, paper=PAPER, where="Sec. V",
          text="SSD used never exceeds 90 % of the partition (largest ratio over every sample of Fig. 4a-d)",
          paper_value="<= 0.9", check=at_most(0.9), source=SRC, unit="fraction",
          note="Holds by construction of the eviction engine: a sanity check.", kind="sanity"),
    Claim(id=SHORT_HISTORY, paper=PAPER, where="Sec. I (insight 3)",
          text="A short history is enough: with cwnd = 5 and 20 minutes the 40 GB partitions stay within "
               "39 +- 3 / 41 +- 3 GB and conformance after warm-up >= 0.95",
          paper_value="'a few 100 history points'", check=is_true(), source=SRC),
    Claim(id=PRE_SFS_WS_RAM, paper=PAPER, where="Sec. V.B",
          text="SPECsfs after the first phase: the smallest working set / RAM buffer cache over the 4000 and 5000 "
               "ops/s phases (the phases whose partition rise, latency spikes and saving the claims are about)",
          paper_value="'As the load increases to 4000 and 5000 IOPS, the buffer cache miss increases'",
          check=at_least(WS_OVER_RAM_MIN), source=SRC, unit="x", kind="precondition",
          note="Sec. V.B: the partition rises only once the reads miss the RAM; working set as run (6 MB per op/s, "
               "notes §7.3) over sfs_ram_gb (16 GB RAM minus the OS, notes U10)."),
    Claim(id=PRE_PCT_OSC, paper=PAPER, where="Sec. I (insight 2), Sec. IV.B",
          text="The runs P75 is compared with oscillate: the smallest over the P90 and P99 ablation runs (both "
               "FileBench targets) of the mean number of partition reversals per run (a resize in the opposite "
               "direction of the previous resize)",
          paper_value="P90/P99 'resulted in partition size oscillation'", check=at_least(REVERSALS_MIN),
          source=SRC, unit="reversals", kind="precondition",
          note="Sec. IV.B: P90/P99 oscillate; oscillation needs a partition that goes up and comes back down."),
    Claim(id=PRE_BAND_OSC, paper=PAPER, where="Sec. IV.A",
          text="The runs the band is compared with oscillate: the smallest over the no-band (latency_min = target) "
               "and aggressive-decrease ablation runs (both FileBench targets) of the mean number of partition "
               "reversals per run",
          paper_value="aggressive decrease / no band: 'oscillation'", check=at_least(REVERSALS_MIN), source=SRC,
          unit="reversals", kind="precondition",
          note="Sec. IV.A items 3-4: shrinking as soon as the SLO improves caused oscillation; the band reduced it."),
    Claim(id=FIXED_BAND, paper=PAPER, where="Sec. IV.A",
          text="A fixed partition below the working set gives an observed latency that oscillates within a range: "
               "largest, over the fixed partitions smaller than the working set, both FileBench targets and the "
               "replications, of max / min of the cwnds' observed latency (P75) once the partition is full",
          paper_value="'for every static size, less than the working set size, the observed latency oscillated "
                      "within a range'; the band built on it is [0.5, 1] x target",
          check=at_most(FIXED_BAND_RATIO_MAX), source=SRC, unit="x", requires=(PRE_FIXED_VARIES,),
          note="Threshold fixed from the paper before the run: EAFC's band, latency_max / latency_min = 2, is the "
               "range Sec. IV.A derived from these runs. Notes C18 (the ablation's static-partition runs, FileBench "
               "40 GB)."),
    Claim(id=PRE_FIXED_VARIES, paper=PAPER, where="Sec. IV.A",
          text="The fixed-partition runs' observed latency varies from cwnd to cwnd: smallest, over the fixed "
               "partitions smaller than the working set, targets and replications, of max / min of the cwnds' "
               "observed latency (P75) once the partition is full",
          paper_value="'the observed latency oscillates because of the very nature of the workload and SSD cache "
                      "misses'", check=above(1.0), source=SRC, unit="x", kind="precondition",
          note="Notes §7.4: with no latency noise (sigma = 0) the P75 equals the mean and C18 cannot be tested; a "
               "ratio of exactly 1 is a latency that never moves."),
]
