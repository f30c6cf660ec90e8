"""Claims of thesis Chapter 3 (ARA), checked by notebooks/04_ara_load_balancing.ipynb.

Values come from :func:`tieringlab.experiments.ara_load_balancing.claim_values`. Every tolerance
below was fixed (and committed) before the first paper-scale run of this version of the ledger.

How comparisons are decided (issue 16):

- **"A beats B"** (lower mean response time) needs the two 95 % Student-t intervals over the
  replications (:func:`tieringlab.stats.mean_ci`) to separate. The value is the
  *interval separation* ``(mean_B - ci_B) / (mean_A + ci_A)`` (:func:`tieringlab.stats.separation_ratio`):
  B's lower end over A's upper end,
  > 1 exactly when A's whole interval lies below B's. A value <= 1 is either a reversal (then the
  reversed separation is > 1, said in the row's note) or undecided at this width (the intervals
  overlap). Every policy sees the same jobs (common random numbers); the note also gives the paired
  difference's interval, but the verdict follows the rule above.
- **"worsens"** is "beats" read the other way (the smaller setting beats the larger one).
- **"within x %"** uses the upper end of the 95 % interval of the paired relative gap
  (:func:`tieringlab.stats.paired_gap_pct`).

The results carry their parameters as coordinates (the index of dispersion, K, th_s, th_l, N, D, the load);
the workloads and cells the claims are about are the constants below (:data:`TABLE1_I`, :data:`T2A_SITES`, ...),
which the experiment selects by coordinate.

Kinds: ``claim`` rows are the thesis' claims our run could contradict (the only ones counted);
``calibration`` rows are numbers our workload was fitted to (the MMPP rate ratio is chosen so that
Rand matches Table 2's 1109.33 s); ``sanity`` rows hold by construction of the simulator.
"""

from tieringlab.claims import Claim, at_least, at_most, is_true, within_rel

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
                 "calibrated on Table 2's Rand.")
SEP = ("Value: interval separation, the other side's lower 95 % end over this side's upper end (> 1: the "
       "intervals separate in the thesis' direction). ")

CLAIMS = [
    Claim(id=QLEN_BEATS_RAND_NONBURSTY, paper=PAPER, where="Table 1",
          text="Without burstiness the greedy Qlen beats Rand (95 % intervals separate)",
          paper_value="Qlen 7.6 s < Rand 80.5 s", check=at_least(1.0), source=SRC, unit="x",
          note=SEP + WORKLOAD_NOTE),
    Claim(id=RAND_BEATS_QLEN_STRONG, paper=PAPER, where="Table 1",
          text="Under strong burstiness (I = 313.5) Rand beats Qlen (95 % intervals separate)",
          paper_value="Rand 1520.9 s < Qlen 6541.5 s", check=at_least(1.0), source=SRC, unit="x",
          note=SEP + WORKLOAD_NOTE),
    Claim(id=RAND_BEATS_QLEN_WEAK, paper=PAPER, where="Table 1",
          text="Under weak burstiness (I = 32.25) Rand beats Qlen (95 % intervals separate)",
          paper_value="Rand 168.5 s < Qlen 466.5 s", check=at_least(1.0), source=SRC, unit="x",
          note=SEP + WORKLOAD_NOTE),
    Claim(id=BURSTINESS_DEGRADES_BOTH, paper=PAPER, where="Table 1",
          text="Burstiness degrades both Qlen and Rand: each is worse at I = 32.25 than at I = 1 and worse at "
               "I = 313.5 than at I = 32.25 (value: the smallest of the four interval separations)",
          paper_value="Rand 80.5 < 168.5 < 1520.9 s; Qlen 7.6 < 466.5 < 6541.5 s", check=at_least(1.0), source=SRC,
          unit="x", note=SEP + WORKLOAD_NOTE),
    Claim(id=STATIC_ARA_BEATS_BOTH, paper=PAPER, where="Fig. 5", kind="sanity",
          text="The best static ARA over K = 1..N is no worse than the better of Qlen and Rand under all three "
               "workloads (worst ratio best-ARA / min(Qlen, Rand) <= 1)",
          paper_value="best-K ARA bars lowest in Fig. 5 (a)-(c)", check=at_most(1.0), source=SRC, unit="x",
          note="A check of the simulator, not evidence: K = 1 is Qlen exactly and K = N is uniform over all sites "
               "like Rand, and the best of 16 noisy means is taken, so it holds by construction."),
    Claim(id=SOME_K_BEATS_BOTH_WEAK, paper=PAPER, where="Fig. 5 (b)",
          text="Under weak burstiness some intermediate K (1 < K < N) makes static ARA beat both Qlen and Rand "
               "(value: the best K's interval separation below the better baseline)",
          paper_value="'ARA with an appropriate K value can be beneficial ... with bursty arrivals'",
          check=at_least(1.0), source=SRC, unit="x",
          note=SEP + "The best of N - 2 values of K is taken (selection makes this optimistic). " + WORKLOAD_NOTE),
    Claim(id=BEST_K_GROWS, paper=PAPER, where="Fig. 5",
          text="The best K grows with burstiness: K* (lowest mean over K = 1..N) is non-decreasing from the "
               "non-bursty to the weak to the strong workload and larger under strong than without burstiness",
          paper_value="K = 3 non-bursty, K close to N under strong burstiness", check=is_true(), source=SRC,
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
               "it (value: the smallest of the three interval separations)",
          paper_value="'Qlen even presents the worst behavior'", check=at_least(1.0), source=SRC, unit="x",
          note=SEP + WORKLOAD_NOTE),
    Claim(id=FIG8_ROBUST, paper=PAPER, where="Fig. 8 (a), (b)",
          text="ARA_PRED beats both Qlen and Rand for every th_l > 8 (th_s = 1) and every th_s < 6 (th_l = 14) "
               "(value: the smallest interval separation over those settings and both baselines)",
          paper_value="improvement 'as long as th_l is larger than ... 8 ... and th_s is smaller than ... 6'",
          check=at_least(1.0), source=SRC, unit="x", note=SEP + WORKLOAD_NOTE),
    Claim(id=PRED_WITHIN_FEW_PERCENT_OF_OPT, paper=PAPER, where="Table 2",
          text="ARA_PRED is within 1 % of ARA_OPT in every cell of Table 2 (value: the largest upper 95 % end of "
               "the paired relative gap (ARA_PRED - ARA_OPT) / ARA_OPT over the cells)",
          paper_value="at most 0.81 % (N = 32)", check=at_most(PRED_OPT_GAP_PCT), source=SRC, unit="%",
          note=f"Tolerance {PRED_OPT_GAP_PCT:g} %: the thesis' largest gap, 0.81 %, rounded up (was 5 % before "
               "issue 16). The predictor's parameters are models.burstiness defaults (documented choices). "
               + WORKLOAD_NOTE),
    Claim(id=PRED_BEATS_QLEN_AND_RAND, paper=PAPER, where="Table 2",
          text="ARA_PRED beats both Qlen and Rand in every cell of Table 2 (value: the smallest interval "
               "separation over the cells and both baselines)",
          paper_value="true in all 9 cells", check=at_least(1.0), source=SRC, unit="x", note=SEP + WORKLOAD_NOTE),
    Claim(id=T2A_BASELINES_WORSEN_WITH_N, paper=PAPER, where="Table 2 (a)",
          text="Rand and Qlen get worse as N grows from 8 to 16 to 32 (value: the smallest interval separation "
               "over both policies and both steps)",
          paper_value="Rand 1089 < 1109 < 1148 s; Qlen 1101 < 1244 < 1751 s", check=at_least(1.0), source=SRC,
          unit="x", note=SEP + "Services scaled with N to keep 50 % (as the thesis says); the notebook runs the "
                              "other reading (arrival rate scaled) beside it. " + WORKLOAD_NOTE),
    Claim(id=T2A_ARA_DOES_NOT_WORSEN, paper=PAPER, where="Table 2 (a)",
          text="ARA_OPT and ARA_PRED do not get worse from N = 8 to N = 32 (value: the larger of their interval "
               "separations 'N = 8 below N = 32'; <= 1 means no significant worsening)",
          paper_value="ARA_OPT 1063 > 1056 > 1043 s; ARA_PRED 1065 > 1059 > 1051 s", check=at_most(1.0),
          source=SRC, unit="x",
          note="Services scaled with N (as the thesis says); the notebook runs the other reading beside it. "
               + WORKLOAD_NOTE),
    Claim(id=QLEN_DEGRADES_WITH_DELAY, paper=PAPER, where="Table 2 (b)",
          text="Qlen degrades as the information delay D grows (interval separation of Qlen at D = 1 s below "
               "Qlen at D = 6 s, at least 1.1)",
          paper_value="3653.21 / 1244.32 = 2.94", check=at_least(1.1), source=SRC, unit="x",
          note="Tolerance: a degradation of at least 10 % between the interval ends (before issue 16: between the "
               "means). " + WORKLOAD_NOTE),
    Claim(id=RAND_FLAT_IN_DELAY, paper=PAPER, where="Table 2 (b)", kind="sanity",
          text="Rand does not depend on D (largest relative spread of Rand over D = 1, 2, 6 s)",
          paper_value="1109.33 / 1111.07 / 1110.77 s (0.2 %)", check=at_most(2.0), source=SRC, unit="%",
          note="A check of the simulator, not evidence: the same jobs and random draws in every cell, and Rand "
               "ignores the load view, so its assignments are identical for every D (0 by construction)."),
    Claim(id=T2C_QLEN_BEATS_RAND_AT_80, paper=PAPER, where="Table 2 (c)",
          text="At 80 % site load Qlen beats Rand (95 % intervals separate)",
          paper_value="Qlen 4138.34 s < Rand 4220.09 s", check=at_least(1.0), source=SRC, unit="x",
          note=SEP + WORKLOAD_NOTE),
    Claim(id=EC2_STUDY, paper=PAPER, where="Sec. 3.3, Fig. 10",
          text="On Amazon EC2 (8 instances, Fibonacci jobs) online ARA with th_s = 1 and the best th_l = 4 improves "
               "the mean end-to-end response time by 48 % over Qlen and 50 % over Rand",
          paper_value="48 % / 50 %", check=at_least(1.0), source=SRC,
          note="Not reproducible here: it needs the thesis' EC2 deployment (a Tomcat load-balancer instance, 8 "
               "small instances reporting `sar` utilisation every second) and its request trace, none of which is "
               "published; a simulation of it would only repeat Fig. 8 on other parameters."),
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
}

for (table, policy, cell), value in _ABS.items():
    where = "Table 1" if table == "table1" else "Table 2 (N = 16, D = 1 s, 50 %)"
    what = f"I = {cell}" if table == "table1" else "the phased workload"
    CLAIMS.append(Claim(
        id=absolute_claim_id(table, policy, cell), paper=PAPER, where=where,
        text=f"Mean response time of {policy} under {what} (absolute number, paper beside ours)",
        paper_value=f"{value} s", check=within_rel(value, 0.25), source=SRC, unit="s",
        kind="calibration" if (table, policy, cell) == ("table2", "rand", "base") else "claim",
        note=_ABS_NOTES.get((table, policy, cell), "")
        + "Tolerance 25 %; absolute numbers depend on workload choices the thesis does not state."))
