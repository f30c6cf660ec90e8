"""AutoTiering (Yang et al.), claims C1-C18 of the reading notes (``autotiering.md`` Sec. 5), checked on
notebook 06's simulation (AutoTiering, IDT and EDT on the Table V workloads in the declared 3-tier
all-flash model, ``n_seeds`` seeds, epochs 0-3 left out).

The paper measured a testbed; these rows test whether its orderings and rough magnitudes follow from
the algorithm under our declared device and workload model. Tolerances (fixed before the first
paper-scale run, following the notes' Sec. 5):

- "AT beats X" (higher throughput, lower latency, less migration): the three policies run on the same scenarios
  and seeds (common random numbers), so the comparison is **paired** per seed (:mod:`tieringlab.stats`): the value
  is the end of the 95 % Student-t interval of the per-seed relative gap (``paired_gap_pct``; for migration totals,
  which may be 0 in a seed, the per-seed difference ``paired_diff`` over X's mean) on the side the paper claims,
  in % (> 0: AT is ahead in the paired test).
- C1/C2 "up to": the mean over seeds of the largest per-epoch gain must lie within a factor of 2 of the
  printed percentage; their direction rows need the 95 % interval of the mean per-epoch gain above 0. A maximum
  over epochs is positive even between identical policies: each "up to" row requires its noise-floor
  precondition (the best-case gain of the seed-mean series beats both its reverse, the baseline's best case over
  AT, and the 95 % quantile of its paired sign-flip null: ``stats.beats_noise_floor``).
- Structural / ordering claims without a policy comparison (C14, C15): they must hold in >= 80 % of seeds.
- C9-C11 are judged on the scale-free form (AT's median above the baselines' 90th percentiles), **per seed**
  (each seed's post-warm-up epochs; the seeds are paired): C9, C11 on the lower end of the 95 % interval over
  seeds of the per-seed gap, C10 on the seed mean of the per-seed share; the literal thresholds (100K IOPS, 125K,
  1,200 MBPS) depend on the number of disks, which the paper does not print, and are reported in the notes.
- C16, C17 (Fig. 7) count the migrations decided after the warm-up: every policy's first round undoes the same
  random initial placement (a burn-in), which would otherwise saturate "VMs migrated".
- C12's "much smaller" latency area is read as at least 25 % smaller than each baseline's.
- C18 (TSSCS linearity) tests the simulator, not the paper: reported as a sanity check.

**Preconditions** (``kind="precondition"``, ids ``autotiering.pre.*``): properties of our simulated plant and
workload that the claims' mechanisms need, measured on the run by :mod:`tieringlab.experiments.autotiering`, their
thresholds fixed from the paper before measuring (the paper prints none of these numbers, so each threshold is a
named reading of its text, with the reason in the row). A claim whose precondition fails is ``untestable``:

- copies finish within the paper's warm-up (Sec. V-C / Fig. 6: "warming up periods from 0-3 epochs"): the share of
  copies (every policy) that finish within 4 monitor epochs; and AutoTiering's placement has taken effect after the
  warm-up (the share of post-warm-up VMDK-epochs with one of its copies still in flight);
- tier sensitivity exists (Sec. IV-2, Fig. 2: "VMs running different types of applications have varying performance
  sensitivity to the tier", VM1 steepest, VM3 "relatively flat"): the spread of the fitted TSSCS slopes across the
  data VMDKs;
- the tiers are not all saturated: in an epoch where every tier is offered more device time than it has, the
  all-tier throughput is the device-time budget whatever the placement, so placement cannot raise it;
- C1/C2: the best-case gain beats its noise floor (above).
"""

from __future__ import annotations

from tieringlab.claims import Claim, at_least, at_most, between, is_true

PAPER = "AutoTiering"
SRC = "06_autotiering"

C1_UP_TO = "autotiering.fig3a.c1_up_to_vs_idt"
C1_MEAN = "autotiering.fig3a.c1_mean_gain_vs_idt"
C2_UP_TO = "autotiering.fig3a.c2_up_to_vs_edt"
C2_MEAN = "autotiering.fig3a.c2_mean_gain_vs_edt"
C3 = "autotiering.fig3b.c3_higher_bandwidth"
C4 = "autotiering.fig3c.c4_lower_latency"
C5 = "autotiering.fig4.c5_tier1_best"
C6 = "autotiering.fig4.c6_baseline_higher_on_t2_t3"
C7 = "autotiering.fig4a.c7_edt_higher_t3_write_iops"
C8 = "autotiering.fig4c.c8_lowest_latency_except_t2_write"
C9 = "autotiering.fig5a.c9_at_median_above_baselines"
C10 = "autotiering.fig5a.c10_baselines_below"
C11 = "autotiering.fig5b.c11_bandwidth_cdf"
C12_AREAS = "autotiering.fig6.c12_larger_iops_bandwidth_areas"
C12_LATENCY = "autotiering.fig6.c12_smaller_latency_area"
C13 = "autotiering.fig6.c13_warmup_then_thicker_bands"
C14 = "autotiering.fig6i.c14_latency_mostly_tier3"
C15 = "autotiering.sec5c.c15_read_intensive_large_on_tier3"
C16 = "autotiering.fig7.c16_least_data_migrated"
C17 = "autotiering.fig7.c17_fewest_vms_migrated"
C18 = "autotiering.sec4.c18_tsscs_linear"

PRE_COPIES_FINISH = "autotiering.pre.copies_finish_in_warmup"
PRE_IN_FLIGHT = "autotiering.pre.copy_in_flight_share"
PRE_SLOPE_SPREAD = "autotiering.pre.tsscs_slope_spread"
PRE_NOT_SATURATED = "autotiering.pre.tiers_not_all_saturated"
PRE_C1_FLOOR = "autotiering.pre.c1_up_to_beats_noise_floor"
PRE_C2_FLOOR = "autotiering.pre.c2_up_to_beats_noise_floor"

#: Thresholds of the preconditions, fixed from the paper's text before any run measured them (the paper prints no
#: number for any of them; each is a named reading, its reason in the row's ``paper_value`` and ``note``).
#: Copies must finish within the paper's warm-up: epochs 0-3, i.e. 4 monitor epochs (Sec. V-C, Fig. 6).
COPY_WITHIN_EPOCHS = 4
#: ... and nearly all of them do: 9 in 10 (a tail of 10 % for copies that start under a demand spike).
MIN_COPIES_FINISHED = 0.9
#: After the warm-up AutoTiering's bands are steady ("thicker", "proper and less migrations", Sec. V-C): a copy is
#: still pending in at most 1 in 10 of its post-warm-up VMDK-epochs.
MAX_IN_FLIGHT_SHARE = 0.1
#: Fig. 2's VM1 has "the greatest gradient", VM3 is "relatively flat": slopes differing by about one slope unit;
#: we ask for half of that between the 10th and 90th percentile VMDK.
MIN_SLOPE_SPREAD = 0.5
#: Placement can raise the all-tier throughput only in epochs where some tier has device time to spare: in most
#: (more than half) of the post-warm-up epochs not every tier is offered more than its device-time cap.
MAX_ALL_SATURATED_SHARE = 0.5

#: The preconditions of the claims whose mechanism is a better placement of VMDKs acting on performance.
_PERF = (PRE_COPIES_FINISH, PRE_IN_FLIGHT, PRE_SLOPE_SPREAD, PRE_NOT_SATURATED)
#: ... of the claims about where AutoTiering's placement puts VMDKs (its decisions must have taken effect).
_PLACED = (PRE_COPIES_FINISH, PRE_IN_FLIGHT)

_SEP = ("Paired over seeds (same scenarios for the three policies): value = the end, on the side the paper claims, of "
        "the 95 % Student-t interval of the per-seed relative gap AT vs the baseline (%); the smaller over baselines.")

_NOISE = ("a maximum over epochs is positive even between two identical policies, so the 'up to' statistic means "
          "something only above its noise floor")

CLAIMS = [
    Claim(C1_UP_TO, PAPER, "Sec. V-B, Fig. 3(a)", "AT reaches up to 44.74 % higher all-tier IOPS than IDT",
          "up to 44.74 %", between(22.37, 89.48), SRC, unit="%",
          note="Value: mean over seeds of the largest per-epoch gain; within a factor of 2 of 44.74 %.",
          requires=(PRE_C1_FLOOR, *_PERF)),
    Claim(C1_MEAN, PAPER, "Sec. V-B, Fig. 3(a)", "AT's all-tier IOPS exceed IDT's (direction of C1)",
          "AT > IDT", at_least(0.0), SRC, unit="%",
          note="Value: lower end of the 95 % interval of the per-seed mean per-epoch gain (paired).", requires=_PERF),
    Claim(C2_UP_TO, PAPER, "Sec. V-B, Fig. 3(a)", "AT reaches up to 38.78 % higher all-tier IOPS than EDT",
          "up to 38.78 %", between(19.39, 77.56), SRC, unit="%",
          note="Value: mean over seeds of the largest per-epoch gain; within a factor of 2 of 38.78 %.",
          requires=(PRE_C2_FLOOR, *_PERF)),
    Claim(C2_MEAN, PAPER, "Sec. V-B, Fig. 3(a)", "AT's all-tier IOPS exceed EDT's (direction of C2)",
          "AT > EDT", at_least(0.0), SRC, unit="%",
          note="Value: lower end of the 95 % interval of the per-seed mean per-epoch gain (paired).", requires=_PERF),
    Claim(C3, PAPER, "Fig. 3(b)", "AT has higher all-tier bandwidth than IDT and EDT",
          "AT higher (no number)", at_least(0.0), SRC, unit="%", note=_SEP, requires=_PERF),
    Claim(C4, PAPER, "Fig. 3(c)", "AT has lower all-tier read and write latency than IDT and EDT",
          "AT lower (no number)", at_least(0.0), SRC, unit="%", note=_SEP + " IO-weighted latency, both directions.",
          requires=_PERF),
    Claim(C5, PAPER, "Fig. 4", "On tier 1, AT is best in read and write IOPS, MB/s and latency",
          "AT best on T1 (12 comparisons)", at_least(12), SRC, unit="comparisons",
          note="Value: comparisons (3 quantities x 2 directions x 2 baselines) whose paired 95 % interval of the "
               "per-seed gap lies on AT's side of 0.", requires=_PERF),
    Claim(C6, PAPER, "Fig. 4(a)(b)", "On tiers 2/3, AT sometimes has lower IOPS or MB/s than IDT or EDT",
          "sometimes lower", at_least(1), SRC, unit="cells",
          note="Value: T2/T3 x Rd/Wt x {IOPS, MB/s} x baseline cells whose paired 95 % interval of the per-seed gap "
               "lies on the baseline's side of 0.", requires=_PERF),
    Claim(C7, PAPER, "Fig. 4(a)", "EDT has (slightly) higher write IOPS than AT on tier 3",
          "EDT slightly higher", at_least(0.0), SRC, unit="%",
          note="Paired over seeds: value = lower end of the 95 % interval of the per-seed gap (EDT - AT) / AT (%). "
               "'Slightly' is not judged.", requires=_PERF),
    Claim(C8, PAPER, "Fig. 4(c)", "AT has the lowest latency in every tier x direction except write on tier 2",
          "lowest in 5 of 6 cells; not in T2 Wt", at_least(6), SRC, unit="conditions",
          note="Value: the 5 cells where AT's latency is below both baselines' (paired 95 % interval of the per-seed "
               "gap above 0) plus 1 if AT's mean is not the lowest in T2 Wt.", requires=_PERF),
    Claim(C9, PAPER, "Fig. 5(a)", "Under AT most samples exceed 100K total IOPS and half exceed 125K (scale-free: "
          "AT's median above both baselines' 90th percentiles)", "> 100K mostly, median >= 125K",
          at_least(0.0), SRC, unit="%",
          note="Value: lower end of the 95 % interval over seeds of the per-seed (AT median - baseline 90th "
               "percentile) / 90th percentile (%), the smaller over the baselines. The literal thresholds are in the "
               "note of the computed row.", requires=_PERF),
    Claim(C10, PAPER, "Fig. 5(a)", ">= 90 % of the baselines' samples lie below AT's level (literal: below 100K IOPS)",
          ">= 90 % below 100K", at_least(0.9), SRC, unit="fraction",
          note="Value: mean over seeds of the per-seed smaller of P(IDT < AT median), P(EDT < AT median) over the "
               "seed's post-warm-up epochs.",
          requires=_PERF),
    Claim(C11, PAPER, "Fig. 5(b)", "About 90 % of IDT's and EDT's samples lie below 1,200 MBPS and more than half "
          "of AT's above (scale-free: AT's median bandwidth above both baselines' 90th percentiles)",
          "90 % < 1,200 MBPS; AT half above", at_least(0.0), SRC, unit="%",
          note="Value: lower end of the 95 % interval over seeds of the per-seed (AT median - baseline 90th "
               "percentile) / 90th percentile (%), the smaller over the baselines.", requires=_PERF),
    Claim(C12_AREAS, PAPER, "Fig. 6(a)-(f)", "AT's stacked IOPS and MB/s areas over time exceed IDT's and EDT's",
          "larger areas", at_least(4), SRC, unit="comparisons",
          note="Value: of the 4 comparisons (IOPS, MB/s x 2 baselines), those whose paired 95 % interval of the "
               "per-seed gap lies above 0.", requires=_PERF),
    Claim(C12_LATENCY, PAPER, "Fig. 6(g)-(i)", "AT's stacked latency area is much smaller than IDT's and EDT's",
          "much smaller", at_most(0.75), SRC, unit="ratio",
          note="Value: the larger of AT's latency area / each baseline's; 'much smaller' read as <= 0.75.",
          requires=_PERF),
    Claim(C13, PAPER, "Fig. 6, Sec. V-C", "AT warms up over epochs 0-3, after which its per-tier bands are thicker",
          "warm-up 0-3, then thicker", at_least(3), SRC, unit="conditions",
          note="Value: 1 if AT's first migration is decided at the first migration epoch in every seed, plus 1 per "
               "baseline whose smallest per-tier IOPS share lies below AT's (paired 95 % interval above 0).",
          requires=_PERF),
    Claim(C14, PAPER, "Fig. 6(i)", "Most of AT's latency is in tier 3", "majority in T3", at_least(0.8), SRC,
          unit="fraction of seeds", note="Value: share of seeds where T3 has the largest share of AT's latency area.",
          requires=_PLACED),
    Claim(C15, PAPER, "Sec. V-C", "AT places read-intensive VMs with large VMDKs on tier 3 and write-intensive ones "
          "on tiers 1-2", "read-intensive, large on T3", at_least(0.8), SRC, unit="fraction of seeds",
          note="Value: share of seeds where AT's T3 VMDKs have both a higher mean read fraction and a higher mean "
               "size than its T1+T2 VMDKs (post-warm-up, VMDK-epochs).", requires=_PLACED),
    Claim(C16, PAPER, "Fig. 7", "AT migrates the least total data", "least", at_least(0.0), SRC, unit="%",
          note="Migrations decided after the warm-up (burn-in of the random start). Paired over seeds: value = lower "
               "end of the 95 % interval of the per-seed difference (baseline - AT) / the baseline's mean (%); the "
               "smaller over baselines.", requires=(PRE_COPIES_FINISH,)),
    Claim(C17, PAPER, "Fig. 7", "AT migrates the fewest distinct VMs", "fewest", at_least(0.0), SRC, unit="%",
          note="Migrations decided after the warm-up (burn-in of the random start). Paired over seeds: value = lower "
               "end of the 95 % interval of the per-seed difference (baseline - AT) / the baseline's mean (%); the "
               "smaller over baselines. A VM counts once however often any of its VMDKs moved.",
          requires=(PRE_COPIES_FINISH,)),
    Claim(C18, PAPER, "Sec. IV-2", "Average IO latency is linear in the injected latency (TSSCS premise)",
          "linear (preliminary experiments, not shown)", at_least(0.9), SRC, unit="R²",
          note="Tests the simulator, not the paper (sanity). Value: mean R² of the per-VMDK TSSCS lines; the note "
               "gives the prediction error after real moves and the shares of predicted latencies <= 0 and below "
               "the tier's unloaded latency.",
          kind="sanity"),
    # ---------------------------------------------------------------- preconditions (measured on the run)
    Claim(PRE_COPIES_FINISH, PAPER, "Sec. V-C, Fig. 6", "Copies finish within the paper's warm-up: share of the "
          f"copies started by any policy that finish within {COPY_WITHIN_EPOCHS} monitor epochs (the smallest share "
          "over the three policies)", "warm-up 0-3 epochs (no copy time printed)", at_least(MIN_COPIES_FINISHED), SRC,
          unit="fraction", kind="precondition",
          note=f"The paper's placement settles within epochs 0-3 ({COPY_WITHIN_EPOCHS} epochs, Sec. V-C), so its "
               f"copies finish within that; {MIN_COPIES_FINISHED:g} leaves a tail of 10 %. Copies started fewer than "
               f"{COPY_WITHIN_EPOCHS} epochs before the run ends are left out. A stricter reading (first decision at "
               "the end of epoch 2, warm-up over at epoch 3: 1 epoch per copy) is not used. Needed by every claim "
               "whose mechanism is a placement that takes effect; the same copy mechanics serve all three policies."),
    Claim(PRE_IN_FLIGHT, PAPER, "Sec. V-C, Fig. 6", "AutoTiering's placement has taken effect after the warm-up: share "
          "of its post-warm-up VMDK-epochs with a copy in flight", "steady ('thicker') bands after warm-up 0-3",
          at_most(MAX_IN_FLIGHT_SHARE), SRC, unit="fraction", kind="precondition",
          note="After the warm-up AutoTiering 'can better utilize ... resources of each tier by proper and less "
               f"migrations' (Sec. V-C): read as a copy pending in at most {MAX_IN_FLIGHT_SHARE:g} of its "
               "post-warm-up VMDK-epochs (a VMDK serves from its source until its copy ends, notes 6.5)."),
    Claim(PRE_SLOPE_SPREAD, PAPER, "Sec. IV-2, Fig. 2", "Tier sensitivity exists: spread (90th - 10th percentile) of "
          "AutoTiering's fitted TSSCS slopes across the data VMDKs (per-VMDK median over post-warm-up epochs; mean "
          "over seeds)", "VM1 'the greatest gradient', VM3 'relatively flat'", at_least(MIN_SLOPE_SPREAD), SRC,
          kind="precondition",
          note="AutoTiering matches VMDKs to tiers by their sensitivity m (A1.35); with every slope alike every VMDK "
               "gains the same from a faster tier and the match cannot pay. Fig. 2's slopes differ by about one "
               f"slope unit; we ask for {MIN_SLOPE_SPREAD:g}."),
    Claim(PRE_NOT_SATURATED, PAPER, "Sec. V-B, Eq. 5", "Tiers not all saturated: share of post-warm-up epochs in "
          "which every tier is offered at least its device-time cap rho_max (the largest share over the three "
          "policies)", "placement raises throughput (not printed as a load level)",
          at_most(MAX_ALL_SATURATED_SHARE), SRC, unit="fraction", kind="precondition",
          note="Offered device time of a tier = sum over its VMDKs of offered IO/s x device time per IO (read/write "
               "mix), over its disks. When every tier is offered more than it can serve the all-tier throughput is "
               "the device-time budget whatever the placement; the gains of Fig. 3-6 need spare time somewhere in "
               f"most epochs (> {1 - MAX_ALL_SATURATED_SHARE:g})."),
    Claim(PRE_C1_FLOOR, PAPER, "Sec. V-B, Fig. 3(a)", "C1's best-case gain beats its noise floor: the forward 'up "
          "to' (AT over IDT, max over post-warm-up epochs of the seed-mean gain) exceeds both its reverse (IDT over "
          "AT) and the 95 % quantile of its paired sign-flip null", "up to 44.74 %", is_true(), SRC,
          kind="precondition", note=_NOISE + " (stats.beats_noise_floor; the three values and the margin in the "
                                             "row's note)."),
    Claim(PRE_C2_FLOOR, PAPER, "Sec. V-B, Fig. 3(a)", "C2's best-case gain beats its noise floor: the forward 'up "
          "to' (AT over EDT) exceeds both its reverse (EDT over AT) and the 95 % quantile of its paired sign-flip "
          "null", "up to 38.78 %", is_true(), SRC, kind="precondition",
          note=_NOISE + " (stats.beats_noise_floor; the three values and the margin in the row's note)."),
]
