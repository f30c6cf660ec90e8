"""AutoTiering (Yang et al.), claims C1-C18 of the reading notes (``autotiering.md`` Sec. 5), checked on
notebook 06's simulation (AutoTiering, IDT and EDT on the Table V workloads in the declared 3-tier
all-flash model, ``n_seeds`` seeds, epochs 0-3 left out).

The paper measured a testbed; these rows test whether its orderings and rough magnitudes follow from
the algorithm under our declared device and workload model. Tolerances (fixed before the first
paper-scale run, following the notes' Sec. 5):

- "AT beats X" (higher throughput, lower latency, less migration): the 95 % intervals over seeds must
  separate. The value is the gap between the intervals' facing ends relative to X's mean (> 0: separated).
- C1/C2 "up to": the mean over seeds of the largest per-epoch gain must lie within a factor of 2 of the
  printed percentage; their direction rows need the 95 % interval of the mean per-epoch gain above 0.
- Structural / ordering claims without a policy comparison (C14, C15): they must hold in >= 80 % of seeds.
- C9-C11 are judged on the scale-free form (AT's median above the baselines' 90th percentiles); the
  literal thresholds (100K IOPS, 125K, 1,200 MBPS) depend on the number of disks, which the paper does
  not print, and are reported in the notes.
- C12's "much smaller" latency area is read as at least 25 % smaller than each baseline's.
- C18 (TSSCS linearity) tests the simulator, not the paper: reported as a sanity check.
"""

from __future__ import annotations

from tieringlab.claims import Claim, at_least, at_most, between

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

_SEP = "Intervals: 95 % Student-t over seeds; value = gap between the facing interval ends / baseline mean (%)."

CLAIMS = [
    Claim(C1_UP_TO, PAPER, "Sec. V-B, Fig. 3(a)", "AT reaches up to 44.74 % higher all-tier IOPS than IDT",
          "up to 44.74 %", between(22.37, 89.48), SRC, unit="%",
          note="Value: mean over seeds of the largest per-epoch gain; within a factor of 2 of 44.74 %."),
    Claim(C1_MEAN, PAPER, "Sec. V-B, Fig. 3(a)", "AT's all-tier IOPS exceed IDT's (direction of C1)",
          "AT > IDT", at_least(0.0), SRC, unit="%",
          note="Value: lower end of the 95 % interval of the mean per-epoch gain."),
    Claim(C2_UP_TO, PAPER, "Sec. V-B, Fig. 3(a)", "AT reaches up to 38.78 % higher all-tier IOPS than EDT",
          "up to 38.78 %", between(19.39, 77.56), SRC, unit="%",
          note="Value: mean over seeds of the largest per-epoch gain; within a factor of 2 of 38.78 %."),
    Claim(C2_MEAN, PAPER, "Sec. V-B, Fig. 3(a)", "AT's all-tier IOPS exceed EDT's (direction of C2)",
          "AT > EDT", at_least(0.0), SRC, unit="%",
          note="Value: lower end of the 95 % interval of the mean per-epoch gain."),
    Claim(C3, PAPER, "Fig. 3(b)", "AT has higher all-tier bandwidth than IDT and EDT",
          "AT higher (no number)", at_least(0.0), SRC, unit="%", note=_SEP),
    Claim(C4, PAPER, "Fig. 3(c)", "AT has lower all-tier read and write latency than IDT and EDT",
          "AT lower (no number)", at_least(0.0), SRC, unit="%", note=_SEP + " IO-weighted latency."),
    Claim(C5, PAPER, "Fig. 4", "On tier 1, AT is best in read and write IOPS, MB/s and latency",
          "AT best on T1 (12 comparisons)", at_least(12), SRC, unit="comparisons",
          note="Value: comparisons (3 quantities x 2 directions x 2 baselines) whose 95 % intervals separate in "
               "AT's favour."),
    Claim(C6, PAPER, "Fig. 4(a)(b)", "On tiers 2/3, AT sometimes has lower IOPS or MB/s than IDT or EDT",
          "sometimes lower", at_least(1), SRC, unit="cells",
          note="Value: T2/T3 x Rd/Wt x {IOPS, MB/s} x baseline cells with the baseline's interval above AT's."),
    Claim(C7, PAPER, "Fig. 4(a)", "EDT has (slightly) higher write IOPS than AT on tier 3",
          "EDT slightly higher", at_least(0.0), SRC, unit="%", note=_SEP + " 'Slightly' is not judged."),
    Claim(C8, PAPER, "Fig. 4(c)", "AT has the lowest latency in every tier x direction except write on tier 2",
          "lowest in 5 of 6 cells; not in T2 Wt", at_least(6), SRC, unit="conditions",
          note="Value: the 5 cells with AT's interval below both baselines' plus 1 if AT's mean is not the lowest "
               "in T2 Wt."),
    Claim(C9, PAPER, "Fig. 5(a)", "Under AT most samples exceed 100K total IOPS and half exceed 125K (scale-free: "
          "AT's median above both baselines' 90th percentiles)", "> 100K mostly, median >= 125K",
          at_least(0.0), SRC, unit="%",
          note="Value: (AT median - baseline 90th percentile) / 90th percentile, the smaller of the two. "
               "The literal thresholds are in the note of the computed row."),
    Claim(C10, PAPER, "Fig. 5(a)", ">= 90 % of the baselines' samples lie below AT's level (literal: below 100K IOPS)",
          ">= 90 % below 100K", at_least(0.9), SRC, unit="fraction",
          note="Value: the smaller of P(IDT < AT median), P(EDT < AT median) on pooled post-warm-up epochs."),
    Claim(C11, PAPER, "Fig. 5(b)", "About 90 % of IDT's and EDT's samples lie below 1,200 MBPS and more than half "
          "of AT's above (scale-free: AT's median bandwidth above both baselines' 90th percentiles)",
          "90 % < 1,200 MBPS; AT half above", at_least(0.0), SRC, unit="%",
          note="Value: (AT median - baseline 90th percentile) / 90th percentile, the smaller of the two."),
    Claim(C12_AREAS, PAPER, "Fig. 6(a)-(f)", "AT's stacked IOPS and MB/s areas over time exceed IDT's and EDT's",
          "larger areas", at_least(4), SRC, unit="comparisons",
          note="Value: of the 4 comparisons (IOPS, MB/s x 2 baselines), those with separated 95 % intervals."),
    Claim(C12_LATENCY, PAPER, "Fig. 6(g)-(i)", "AT's stacked latency area is much smaller than IDT's and EDT's",
          "much smaller", at_most(0.75), SRC, unit="ratio",
          note="Value: the larger of AT's latency area / each baseline's; 'much smaller' read as <= 0.75."),
    Claim(C13, PAPER, "Fig. 6, Sec. V-C", "AT warms up over epochs 0-3, after which its per-tier bands are thicker",
          "warm-up 0-3, then thicker", at_least(3), SRC, unit="conditions",
          note="Value: 1 if AT's first migration is decided at the first migration epoch in every seed, plus 1 per "
               "baseline whose smallest per-tier IOPS share lies below AT's (separated intervals)."),
    Claim(C14, PAPER, "Fig. 6(i)", "Most of AT's latency is in tier 3", "majority in T3", at_least(0.8), SRC,
          unit="fraction of seeds", note="Value: share of seeds where T3 has the largest share of AT's latency area."),
    Claim(C15, PAPER, "Sec. V-C", "AT places read-intensive VMs with large VMDKs on tier 3 and write-intensive ones "
          "on tiers 1-2", "read-intensive, large on T3", at_least(0.8), SRC, unit="fraction of seeds",
          note="Value: share of seeds where AT's T3 VMDKs have both a higher mean read fraction and a higher mean "
               "size than its T1+T2 VMDKs (post-warm-up, VMDK-epochs)."),
    Claim(C16, PAPER, "Fig. 7", "AT migrates the least total data", "least", at_least(0.0), SRC, unit="%", note=_SEP),
    Claim(C17, PAPER, "Fig. 7", "AT migrates the fewest distinct VMs", "fewest", at_least(0.0), SRC, unit="%",
          note=_SEP + " A VM counts once however often any of its VMDKs moved."),
    Claim(C18, PAPER, "Sec. IV-2", "Average IO latency is linear in the injected latency (TSSCS premise)",
          "linear (preliminary experiments, not shown)", at_least(0.9), SRC, unit="R²",
          note="Tests the simulator, not the paper (sanity). Value: mean R² of the per-VMDK TSSCS lines.",
          kind="sanity"),
]
