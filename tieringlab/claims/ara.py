"""Claims of thesis Chapter 3 (ARA), checked by notebooks/04_ara_load_balancing.ipynb.

Values come from :func:`tieringlab.experiments.ara_load_balancing.claim_values`. Every tolerance
below was fixed (and committed) before the first paper-scale run of this version of the ledger.

How comparisons are decided (issue 16; the paired rule since issues 28/34):

- **"A beats B"** (lower mean response time): every policy of one experiment runs on the same jobs and seeds
  (common random numbers), so the verdict follows the **paired** relative gap ``100 (B_r - A_r) / A_r`` of each
  replication r (:func:`tieringlab.stats.paired_gap_pct`): A beats B when its 95 % Student-t interval lies
  above 0 (:func:`tieringlab.stats.paired_above`). The row's value is the *lower end* of that interval, in % of
  A's mean (> 0 exactly when A beats B); its ``samples`` are the per-replication gaps of the comparison that
  decides the row. The unpaired rule of issue 16 (the two marginal 95 % intervals must separate) is recorded
  as the row's reading ``unpaired``: B's lower 95 % end minus A's upper end, in % of A's mean
  (:func:`tieringlab.stats.relative_separation`), > 0 exactly when the intervals separate: the same scale, so
  the same check decides both. Comparisons across workloads or cells pair replication r with replication r
  (independent pairs: a valid paired test with less correlation to remove).
- **"worsens"** is "beats" read the other way (the smaller setting beats the larger one).
- **"within x %"** uses the upper end of the 95 % interval of the paired relative gap.

Preconditions (kind ``precondition``, issue 28): properties of OUR workload that a claim's mechanism needs,
measured on the streams the grids run (:mod:`tieringlab.experiments.ara.preconditions`), each with a threshold
fixed from the thesis' text before the first run; a claim lists those it needs in ``requires`` and is
``untestable`` where one fails. They are never calibration targets.

The results carry their parameters as coordinates (the index of dispersion, K, th_s, th_l, N, D, the load);
the workloads and cells the claims are about are the constants below (:data:`TABLE1_I`, :data:`T2A_SITES`, ...),
which the experiment selects by coordinate.

Kinds: ``claim`` rows are the thesis' claims our run could contradict (the only ones counted);
``calibration`` rows are numbers our workload was fitted to (the phased workload's MMPP rate ratio is chosen so
that Rand matches Table 2's 1109.33 s; Table 1's own rate ratio so that Rand comes closest to Table 1's two bursty
Rand cells, issue 34); ``sanity`` rows hold by construction of the simulator.
"""

from tieringlab.claims import Claim, above, at_least, at_most, is_true, within_rel

SRC = "04_ara_load_balancing"
PAPER = "Tai thesis (ARA)"

QLEN_BEATS_RAND_NONBURSTY = "ara.table1.qlen_beats_rand_nonbursty"
RAND_BEATS_QLEN_STRONG = "ara.table1.rand_beats_qlen_strong"
RAND_BEATS_QLEN_WEAK = "ara.table1.rand_beats_qlen_weak"
BURSTINESS_DEGRADES_BOTH = "ara.table1.burstiness_degrades_both"
STATIC_ARA_BEATS_BOTH = "ara.fig5.static_ara_beats_both"
SOME_K_BEATS_BOTH_WEAK = "ara.fig5.some_k_beats_both_weak"
BEST_K_GROWS = "ara.fig5.best_k_grows_with_burstiness"
FIG6A_I_PEAKS_AT_CHANGES = "ara.fig6a.index_of_dispersion_peaks_at_changes"
FIG6B_PREDICTOR_PHASED = "ara.fig6b.predictor_follows_phased_bursts"
FIG6C_PREDICTOR_STRONG = "ara.fig6c.predictor_follows_strong_bursts"
FIG8_QLEN_WORST = "ara.fig8.qlen_worst"
FIG8_ROBUST = "ara.fig8.pred_beats_both_for_thl_above_8_ths_below_6"
PRED_WITHIN_FEW_PERCENT_OF_OPT = "ara.table2.pred_within_few_percent_of_opt"
PRED_BEATS_QLEN_AND_RAND = "ara.table2.pred_beats_qlen_and_rand_everywhere"
T2A_BASELINES_WORSEN_WITH_N = "ara.table2a.rand_and_qlen_worsen_with_n"
T2A_ARA_DOES_NOT_WORSEN = "ara.table2a.ara_does_not_worsen_with_n"
QLEN_DEGRADES_WITH_DELAY = "ara.table2b.qlen_degrades_with_delay"
RAND_FLAT_IN_DELAY = "ara.table2b.rand_flat_in_delay"
T2C_QLEN_BEATS_RAND_AT_80 = "ara.table2c.qlen_beats_rand_at_80pct"
EC2_STUDY = "ara.sec33.ec2_online_ara_improvement"

PRE_T1_BURSTINESS_ORDERED = "ara.pre.table1_burstiness_ordered"
PRE_T1_HERDING = "ara.pre.table1_bursts_share_delay_window"
PRE_PHASED_HERDING = "ara.pre.phased_bursts_share_delay_window"
PRE_PREDICTOR_BEATS_CHANCE = "ara.pre.predictor_beats_chance"

#: Herding exposure (experiments.ara.preconditions.herding_exposure) at or above which a greedy balancer's stale
#: view is the typical burst job's condition: Sec. 3.1 explains Qlen's loss by "the load balancer always submits
#: the bursty arrivals [plural] to that top-ranked site within the delay period", which needs most (more than
#: half of the) burst jobs to arrive after another job of the same delay window. Fixed before the first run.
HERDING_EXPOSURE_MIN = 0.5
#: Balanced accuracy of chance: a predictor that ignores the arrivals (always "on", always "off", or a coin)
#: scores 0.5 (Sec. 3.2.2's on/off states must carry information for ARA_PRED to differ from a fixed-K mix).
CHANCE_BALANCED_ACCURACY = 0.5

#: Balanced accuracy (mean of the shares of burst jobs and of idle jobs given the right state) at or
#: above which the on/off predictor "follows" the bursts (thesis: "accurately capture"; our threshold).
PREDICTOR_BALANCED_ACCURACY = 0.8
#: "Within a few percent": the thesis' largest ARA_PRED-over-ARA_OPT gap in Table 2 is 0.81 % (N = 32,
#: 1051.21 / 1042.79); the tolerance is that gap rounded up to 1 %.
PRED_OPT_GAP_PCT = 1.0
#: Fig. 6 (a): "the values of I significantly increase" in W2 and W4; read as at least twice the largest
#: I of the stable windows W1, W3, W5.
FIG6A_RATIO = 2.0

WORKLOAD_NOTE = ("Workload (see the notebook's sensitivity study): mean inter-arrival 10 s as printed (E[S] = 80 s), "
                 "exponential services, MMPP(2) with 51 % of the jobs in bursts and a burst/idle rate ratio "
                 "calibrated on Rand: Table 2's for the phased workload, Table 1's own Rand column for Table 1's "
                 "workloads.")
SEP = ("Value: lower 95 % end of the paired per-replication gap (the other side minus this side, % of this side; "
       "> 0: the thesis' direction under the paired rule); reading 'unpaired': the marginal intervals' separation "
       "on the same scale. ")

CLAIMS = [
    Claim(id=QLEN_BEATS_RAND_NONBURSTY, paper=PAPER, where="Table 1",
          text="Without burstiness the greedy Qlen beats Rand (paired gap's 95 % interval above 0)",
          paper_value="Qlen 7.6 s < Rand 80.5 s", check=above(0.0), source=SRC, unit="%",
          note=SEP + WORKLOAD_NOTE),
    Claim(id=RAND_BEATS_QLEN_STRONG, paper=PAPER, where="Table 1",
          text="Under strong burstiness (I = 313.5) Rand beats Qlen (paired gap's 95 % interval above 0)",
          paper_value="Rand 1520.9 s < Qlen 6541.5 s", check=above(0.0), source=SRC, unit="%",
          requires=(PRE_T1_HERDING,),
          note=SEP + WORKLOAD_NOTE),
    Claim(id=RAND_BEATS_QLEN_WEAK, paper=PAPER, where="Table 1",
          text="Under weak burstiness (I = 32.25) Rand beats Qlen (paired gap's 95 % interval above 0)",
          paper_value="Rand 168.5 s < Qlen 466.5 s", check=above(0.0), source=SRC, unit="%",
          requires=(PRE_T1_HERDING,),
          note=SEP + WORKLOAD_NOTE),
    Claim(id=BURSTINESS_DEGRADES_BOTH, paper=PAPER, where="Table 1",
          text="Burstiness degrades both Qlen and Rand: each is worse at I = 32.25 than at I = 1 and worse at "
               "I = 313.5 than at I = 32.25 (value: the smallest of the four paired gaps' lower 95 % ends)",
          paper_value="Rand 80.5 < 168.5 < 1520.9 s; Qlen 7.6 < 466.5 < 6541.5 s", check=above(0.0), source=SRC,
          unit="%", requires=(PRE_T1_BURSTINESS_ORDERED,), note=SEP + WORKLOAD_NOTE),
    Claim(id=STATIC_ARA_BEATS_BOTH, paper=PAPER, where="Fig. 5", kind="sanity",
          text="The best static ARA over K = 1..N is no worse than the better of Qlen and Rand under all three "
               "workloads (worst ratio best-ARA / min(Qlen, Rand) <= 1)",
          paper_value="best-K ARA bars lowest in Fig. 5 (a)-(c)", check=at_most(1.0), source=SRC, unit="x",
          note="A check of the simulator, not evidence: K = 1 is Qlen exactly and K = N is uniform over all sites "
               "like Rand, and the best of 16 noisy means is taken, so it holds by construction."),
    Claim(id=SOME_K_BEATS_BOTH_WEAK, paper=PAPER, where="Fig. 5 (b)",
          text="Under weak burstiness some intermediate K (1 < K < N) makes static ARA beat both Qlen and Rand "
               "(value: the lower 95 % end of the best K's paired gap below the better baseline)",
          paper_value="'ARA with an appropriate K value can be beneficial ... with bursty arrivals'",
          check=above(0.0), source=SRC, unit="%", requires=(PRE_T1_HERDING,),
          note=SEP + "The best of N - 2 values of K is taken (selection makes this optimistic). " + WORKLOAD_NOTE),
    Claim(id=BEST_K_GROWS, paper=PAPER, where="Fig. 5",
          text="The best K grows with burstiness: K* (lowest mean over K = 1..N) is non-decreasing from the "
               "non-bursty to the weak to the strong workload and larger under strong than without burstiness",
          paper_value="K = 3 non-bursty, K close to N under strong burstiness", check=is_true(), source=SRC,
          requires=(PRE_T1_BURSTINESS_ORDERED, PRE_T1_HERDING),
          note="The note of each run gives the three K*. " + WORKLOAD_NOTE),
    Claim(id=FIG6A_I_PEAKS_AT_CHANGES, paper=PAPER, where="Fig. 6 (a)", kind="sanity",
          text=f"I (Eq. 2) is at least {FIG6A_RATIO:g} x larger in the windows that hold a change of phase (W2, W4) "
               "than in any stable window (W1, W3, W5) (value: min(I_W2, I_W4) / max(I_W1, I_W3, I_W5))",
          paper_value="I small in W1, W3, W5; 'significantly' larger in W2, W4", check=at_least(FIG6A_RATIO),
          source=SRC, unit="x",
          note="Our trace is built to the figure's description (idle, one peak, idle; Poisson within each phase, "
               "the phase changes in the middle of W2 and W4), so the result follows from Eq. 2: a check of our "
               "Eq. 2 on the thesis' picture, not evidence about the paper."),
    Claim(id=FIG6B_PREDICTOR_PHASED, paper=PAPER, where="Fig. 6 (b)",
          text="The on/off predictor follows the bursts of the phased workload (balanced accuracy by job: the mean "
               "of the shares of burst jobs and of idle jobs that get the right state)",
          paper_value="'the changes of states on and off correctly follow the actual bursts'",
          check=at_least(PREDICTOR_BALANCED_ACCURACY), source=SRC,
          note=f"Threshold {PREDICTOR_BALANCED_ACCURACY:g} is our reading of 'accurately'. The predictor's window "
               "and thresholds are models.burstiness defaults (documented choices, not tuned). " + WORKLOAD_NOTE),
    Claim(id=FIG6C_PREDICTOR_STRONG, paper=PAPER, where="Fig. 6 (c)",
          text="The on/off predictor follows the bursts of the strong-bursty workload of Fig. 3 (a) (balanced "
               "accuracy by job against the MMPP's true phase)",
          paper_value="'accurate prediction results for the arrival traffic with strong burstiness'",
          check=at_least(PREDICTOR_BALANCED_ACCURACY), source=SRC,
          note=f"Threshold {PREDICTOR_BALANCED_ACCURACY:g} is our reading of 'accurate'. " + WORKLOAD_NOTE),
    Claim(id=FIG8_QLEN_WORST, paper=PAPER, where="Fig. 8",
          text="On the phased workload Qlen is the worst: Rand, ARA_OPT and ARA_PRED (th_s = 1, th_l = 14) each beat "
               "it (value: the smallest of the three paired gaps' lower 95 % ends)",
          paper_value="'Qlen even presents the worst behavior'", check=above(0.0), source=SRC, unit="%",
          requires=(PRE_PHASED_HERDING,),
          note=SEP + WORKLOAD_NOTE),
    Claim(id=FIG8_ROBUST, paper=PAPER, where="Fig. 8 (a), (b)",
          text="ARA_PRED beats both Qlen and Rand for every th_l > 8 (th_s = 1) and every th_s < 6 (th_l = 14) "
               "(value: the smallest paired gap's lower 95 % end over those settings and both baselines)",
          paper_value="improvement 'as long as th_l is larger than ... 8 ... and th_s is smaller than ... 6'",
          check=above(0.0), source=SRC, unit="%", requires=(PRE_PHASED_HERDING, PRE_PREDICTOR_BEATS_CHANCE),
          note=SEP + WORKLOAD_NOTE),
    Claim(id=PRED_WITHIN_FEW_PERCENT_OF_OPT, paper=PAPER, where="Table 2",
          text="ARA_PRED is within 1 % of ARA_OPT in every cell of Table 2 (value: the largest upper 95 % end of "
               "the paired relative gap (ARA_PRED - ARA_OPT) / ARA_OPT over the cells)",
          paper_value="at most 0.81 % (N = 32)", check=at_most(PRED_OPT_GAP_PCT), source=SRC, unit="%",
          requires=(PRE_PREDICTOR_BEATS_CHANCE,),
          note=f"Tolerance {PRED_OPT_GAP_PCT:g} %: the thesis' largest gap, 0.81 %, rounded up (was 5 % before "
               "issue 16). The predictor's parameters are models.burstiness defaults (documented choices). "
               + WORKLOAD_NOTE),
    Claim(id=PRED_BEATS_QLEN_AND_RAND, paper=PAPER, where="Table 2",
          text="ARA_PRED beats both Qlen and Rand in every cell of Table 2 (value: the smallest paired gap's "
               "lower 95 % end over the cells and both baselines)",
          paper_value="true in all 9 cells", check=above(0.0), source=SRC, unit="%",
          requires=(PRE_PHASED_HERDING, PRE_PREDICTOR_BEATS_CHANCE), note=SEP + WORKLOAD_NOTE),
    Claim(id=T2A_BASELINES_WORSEN_WITH_N, paper=PAPER, where="Table 2 (a)",
          text="Rand and Qlen get worse as N grows from 8 to 16 to 32 (value: the smallest paired gap's lower "
               "95 % end over both policies and both steps)",
          paper_value="Rand 1089 < 1109 < 1148 s; Qlen 1101 < 1244 < 1751 s", check=above(0.0), source=SRC,
          unit="%", requires=(PRE_PHASED_HERDING,),
          note=SEP + "Services scaled with N to keep 50 % (as the thesis says); the notebook runs the other reading "
                     "(arrival rate scaled) beside it. " + WORKLOAD_NOTE),
    Claim(id=T2A_ARA_DOES_NOT_WORSEN, paper=PAPER, where="Table 2 (a)",
          text="ARA_OPT and ARA_PRED do not get worse from N = 8 to N = 32 (value: the larger lower 95 % end of "
               "their paired gaps N = 32 over N = 8; <= 0 means no significant worsening)",
          paper_value="ARA_OPT 1063 > 1056 > 1043 s; ARA_PRED 1065 > 1059 > 1051 s", check=at_most(0.0),
          source=SRC, unit="%", requires=(PRE_PREDICTOR_BEATS_CHANCE,),
          note=SEP + "Services scaled with N (as the thesis says); the notebook runs the other reading beside it. "
               + WORKLOAD_NOTE),
    Claim(id=QLEN_DEGRADES_WITH_DELAY, paper=PAPER, where="Table 2 (b)",
          text="Qlen degrades as the information delay D grows (lower 95 % end of the paired gap of Qlen at "
               "D = 6 s over D = 1 s, at least 10 %)",
          paper_value="3653.21 / 1244.32 = 2.94 (+193.6 %)", check=at_least(10.0), source=SRC, unit="%",
          requires=(PRE_PHASED_HERDING,),
          note="Tolerance: a degradation of at least 10 % (before issue 28: between the marginal interval ends, "
               "the reading 'unpaired'; before issue 16: between the means). " + SEP + WORKLOAD_NOTE),
    Claim(id=RAND_FLAT_IN_DELAY, paper=PAPER, where="Table 2 (b)", kind="sanity",
          text="Rand does not depend on D (largest relative spread of Rand over D = 1, 2, 6 s)",
          paper_value="1109.33 / 1111.07 / 1110.77 s (0.2 %)", check=at_most(2.0), source=SRC, unit="%",
          note="A check of the simulator, not evidence: the same jobs and random draws in every cell, and Rand "
               "ignores the load view, so its assignments are identical for every D (0 by construction)."),
    Claim(id=T2C_QLEN_BEATS_RAND_AT_80, paper=PAPER, where="Table 2 (c)",
          text="At 80 % site load Qlen beats Rand (paired gap's 95 % interval above 0)",
          paper_value="Qlen 4138.34 s < Rand 4220.09 s", check=above(0.0), source=SRC, unit="%",
          note=SEP + WORKLOAD_NOTE),
    Claim(id=EC2_STUDY, paper=PAPER, where="Sec. 3.3, Fig. 10",
          text="On Amazon EC2 (8 instances, Fibonacci jobs) online ARA with th_s = 1 and the best th_l = 4 improves "
               "the mean end-to-end response time by 48 % over Qlen and 50 % over Rand",
          paper_value="48 % / 50 %", check=at_least(1.0), source=SRC,
          note="Not reproducible here: it needs the thesis' EC2 deployment (a Tomcat load-balancer instance, 8 "
               "small instances reporting `sar` utilisation every second) and its request trace, none of which is "
               "published; a simulation of it would only repeat Fig. 8 on other parameters."),
    # ---------------------------------------------------------------------------------------- preconditions
    Claim(id=PRE_T1_BURSTINESS_ORDERED, paper=PAPER, where="Sec. 3.1, Fig. 3; Sec. 3.2.2", kind="precondition",
          text="Table 1's three generated workloads are ordered in burstiness as the thesis' are: measured I "
               "(Eq. 2 on the inter-arrival times we ran, mean over replications) at least "
               f"{FIG6A_RATIO:g} x larger from non-bursty to weak and from weak to strong (value: the smaller of "
               "the two ratios)",
          paper_value="I = 1 < 32.25 < 313.5 ('the higher I indicates stronger burstiness', Sec. 3.1)",
          check=at_least(FIG6A_RATIO), source=SRC, unit="x",
          note=f"Threshold {FIG6A_RATIO:g}: our reading of Sec. 3.2.2's 'significantly increase' (as for Fig. 6 "
               "(a)), fixed before the first run. Needed by the claims that compare the workloads with each other "
               "(burstiness degrades both, the best K grows): a finite stream whose measured I does not rise "
               "across the three cannot show an effect of rising burstiness."),
    Claim(id=PRE_T1_HERDING, paper=PAPER, where="Sec. 3.1", kind="precondition",
          text="Table 1's bursty workloads (I = 313.5 and 32.25) put most burst jobs in an information-delay "
               "window (D = 1 s) after an earlier job of the same window, where a greedy balancer's stale view "
               "misses that job's assignment (value: the smaller of the two workloads' shares, mean over "
               "replications)",
          paper_value="'the load balancer always submits the bursty arrivals to that top-ranked site within the "
                      "delay period'", check=at_least(HERDING_EXPOSURE_MIN), source=SRC,
          note=f"Threshold {HERDING_EXPOSURE_MIN:g} (most burst jobs), fixed before the first run: Sec. 3.1's "
               "mechanism for Qlen's loss under burstiness (herding on a stale view) is the typical burst job's "
               "condition only if most burst jobs share their window with an earlier arrival. Measured on the "
               "streams the Table 1 grid runs (experiments.ara.preconditions.herding_exposure)."),
    Claim(id=PRE_PHASED_HERDING, paper=PAPER, where="Sec. 3.1, 3.2.3, 3.2.4", kind="precondition",
          text="The phased workload (Fig. 8, Table 2) puts most burst jobs in an information-delay window "
               "(D = 1 s) after an earlier job of the same window (share, mean over replications)",
          paper_value="Qlen is worst 'because of the moderate burstiness in arrivals' (Sec. 3.2.3); 'more jobs in "
                      "bursty periods are then sent together to the same site due to the outdated load "
                      "information' (Sec. 3.2.4)", check=at_least(HERDING_EXPOSURE_MIN), source=SRC,
          note=f"Threshold {HERDING_EXPOSURE_MIN:g}, as for Table 1's workloads (Sec. 3.1's mechanism), fixed "
               "before the first run; measured at the base D = 1 s (a longer D only adds exposure)."),
    Claim(id=PRE_PREDICTOR_BEATS_CHANCE, paper=PAPER, where="Sec. 3.2.2, Fig. 7", kind="precondition",
          text="On the phased workload the on/off predictor's state carries information about the true burst "
               "phase: balanced accuracy by job (mean over replications) above chance",
          paper_value="ARA_PRED 'detects the phases of burst and idle' and switches K on them (Sec. 3.2.2)",
          check=at_least(CHANCE_BALANCED_ACCURACY), source=SRC,
          note=f"Threshold {CHANCE_BALANCED_ACCURACY:g}: the balanced accuracy of any predictor that ignores the "
               "arrivals. The same measurement as the Fig. 6 (b) row, read against chance instead of the "
               f"{PREDICTOR_BALANCED_ACCURACY:g} of 'accurately': the claims about ARA_PRED need its switch to "
               "follow the bursts at all, not the thesis' accuracy."),
]

#: The three MMPP(2) workloads of Fig. 3 and Table 1 by their index of dispersion I (thesis Sec. 3.1): the
#: experiment's results carry I as a coordinate and the claims select these values.
STRONG_I, WEAK_I, NONBURSTY_I = 313.5, 32.25, 1.0
TABLE1_I = (STRONG_I, WEAK_I, NONBURSTY_I)
#: Table 1's mean response times (s) by (policy, I).
TABLE1_PAPER = {("rand", STRONG_I): 1520.9, ("rand", WEAK_I): 168.5, ("rand", NONBURSTY_I): 80.5,
                ("qlen", STRONG_I): 6541.5, ("qlen", WEAK_I): 466.5, ("qlen", NONBURSTY_I): 7.6}
#: Table 2's policies, in the thesis' column order, and its mean response times (s) by (part, value): (a) N,
#: (b) D in seconds, (c) the site utilisation; each tuple in :data:`TABLE2_POLICIES` order.
TABLE2_POLICIES = ("rand", "ara_opt", "ara_pred", "qlen")
TABLE2_PAPER = {("a", 8): (1089.25, 1063.39, 1064.66, 1101.02), ("a", 16): (1109.33, 1056.07, 1059.00, 1244.32),
                ("a", 32): (1148.38, 1042.79, 1051.21, 1751.43), ("b", 1.0): (1109.33, 1056.07, 1059.00, 1244.32),
                ("b", 2.0): (1111.07, 1057.76, 1062.97, 1692.26), ("b", 6.0): (1110.77, 1063.23, 1070.57, 3653.21),
                ("c", 0.3): (487.83, 471.05, 473.04, 606.62), ("c", 0.5): (1109.33, 1056.07, 1059.00, 1244.32),
                ("c", 0.8): (4220.09, 3964.39, 3968.77, 4138.34)}
#: The cells the Table 2 claims compare: (a) N = 8 -> 16 -> 32, (b) D = 1 s against 6 s, (c) 80 % load.
T2A_SITES = (8, 16, 32)
T2B_DELAYS_S = (1.0, 6.0)
T2C_LOAD = 0.8
#: Fig. 8's robust range: th_l above 8 (with th_s = 1) and th_s below 6 (with th_l = 14), thesis Sec. 3.2.3.
FIG8_TH_L_ABOVE, FIG8_TH_S_BELOW = 8, 6
#: Fig. 8 (b)'s th_l with th_s = 1: Table 2's base cell (N = 16, D = 1 s, 50 %) runs the same configuration
#: ("all the other parameters ... the same as ... Figure 8", Sec. 3.2.4), so its means are Fig. 8's there.
FIG8_BASE_TH_L = 14

_ABS = {("table1", pol, f"{I:g}"): v for (pol, I), v in sorted(TABLE1_PAPER.items(), key=lambda kv: (
    ("rand", "qlen").index(kv[0][0]), TABLE1_I.index(kv[0][1])))}
_ABS.update({("table2", pol, "base"): v for pol, v in zip(TABLE2_POLICIES, TABLE2_PAPER[("a", 16)])})


def absolute_claim_id(table: str, policy: str, cell: str) -> str:
    """The id of an absolute-number row: ``table`` ("table1", "table2"), ``policy`` and the cell ("313.5" for
    Table 1's I, "base" for Table 2's N = 16, D = 1 s, 50 %)."""
    return f"ara.{table}.abs.{policy}.{cell.replace('.', '_')}"


def table1_claim_id(policy: str, index_of_dispersion: float) -> str:
    """The absolute row of Table 1's ``policy`` under the workload with index of dispersion I."""
    return absolute_claim_id("table1", policy, f"{index_of_dispersion:g}")


_ABS_NOTES = {
    ("table1", "rand", "1"): "At 50 % load and E[S] = 80 s, Rand on Poisson arrivals is N M/G/1 queues with a "
                             "mean of at least 1.5 E[S] = 120 s (P-K, deterministic services), so 80.5 s cannot be "
                             "reached; the sensitivity study shows it needs E[A] near 0.1 s and a service SCV near "
                             "200. ",
    ("table1", "qlen", "1"): "Below E[S] = 80 s, which no FCFS job can beat: infeasible at the printed time scale. ",
    ("table2", "rand", "base"): "Calibration: the MMPP rate ratio was chosen so that Rand matches this cell. ",
    ("table1", "rand", "313.5"): "Calibration: Table 1's rate ratio (table1_rate_ratio) was chosen by least squares "
                                 "in log on this cell and the weak-bursty one (Rand does not herd; issue 34). ",
    ("table1", "rand", "32.25"): "Calibration: Table 1's rate ratio (table1_rate_ratio) was chosen by least squares "
                                 "in log on this cell and the strong-bursty one (Rand does not herd; issue 34). ",
}
#: The absolute rows our workload was fitted to (kind ``calibration``): Table 2's base Rand (the phased workload's
#: rate ratio) and Table 1's two bursty Rand cells (Table 1's rate ratio, issue 34).
CALIBRATION_CELLS = {("table2", "rand", "base"), ("table1", "rand", "313.5"), ("table1", "rand", "32.25")}

for (table, policy, cell), value in _ABS.items():
    where = "Table 1" if table == "table1" else "Table 2 (N = 16, D = 1 s, 50 %)"
    what = f"I = {cell}" if table == "table1" else "the phased workload"
    CLAIMS.append(Claim(
        id=absolute_claim_id(table, policy, cell), paper=PAPER, where=where,
        text=f"Mean response time of {policy} under {what} (absolute number, paper beside ours)",
        paper_value=f"{value} s", check=within_rel(value, 0.25), source=SRC, unit="s",
        kind="calibration" if (table, policy, cell) in CALIBRATION_CELLS else "claim",
        note=_ABS_NOTES.get((table, policy, cell), "")
        + "Tolerance 25 %; absolute numbers depend on workload choices the thesis does not state."))
