"""ARA, issue 34: Table 1's rate ratio calibrated on Table 1's own Rand column, the rate-ratio readings of the
sensitivity study, the predictor's window m (its detection lags) and the replications a relative interval needs,
each against hand-computed small cases."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tieringlab.claims import ara as C
from tieringlab.claims import registry
from tieringlab.experiments.ara import compare as K
from tieringlab.experiments.ara import grids as G
from tieringlab.experiments.ara import ledger as L
from tieringlab.experiments.ara.section import AraLoadBalancingParams

# ------------------------------------------------------------------------------------------ calibration


def _cal(rows):
    """A calibration table as table1_rate_ratio_calibration returns it, from (ratio, I, Rand mean) rows."""
    df = pd.DataFrame(rows, columns=["rate_ratio", "index_of_dispersion", "rand_mean_s"])
    df["thesis_rand_s"] = df.index_of_dispersion.map(G.TABLE1_CALIBRATION_TARGETS)
    df["log_error"] = np.log(df.rand_mean_s / df.thesis_rand_s)
    df["sse"] = df.groupby("rate_ratio").log_error.transform(lambda e: float(np.sum(np.square(e))))
    return df


def test_table1_ratio_is_the_least_squares_fit_to_rands_two_bursty_cells():
    S, W = C.STRONG_I, C.WEAK_I
    assert G.TABLE1_CALIBRATION_TARGETS == {S: 1520.9, W: 168.5}   # Table 1's Rand, the two bursty cells
    # ratio 50: strong x2, weak exact -> ln(2)^2 = 0.480; ratio 700: both x1.3 -> 2 ln(1.3)^2 = 0.138;
    # ratio 5000: strong exact, weak x1.5 -> ln(1.5)^2 = 0.164: 700 wins though 5000 hits the strong cell exactly
    cal = _cal([(50.0, S, 2 * 1520.9), (50.0, W, 168.5), (700.0, S, 1.3 * 1520.9), (700.0, W, 1.3 * 168.5),
                (5000.0, S, 1520.9), (5000.0, W, 1.5 * 168.5)])
    assert cal.groupby("rate_ratio").sse.first().to_dict() == pytest.approx(
        {50.0: math.log(2) ** 2, 700.0: 2 * math.log(1.3) ** 2, 5000.0: math.log(1.5) ** 2})
    assert G.fit_table1_rate_ratio(cal) == 700.0
    with pytest.raises(ValueError, match="table1_calibration_rate_ratios"):
        G.fit_table1_rate_ratio(cal.iloc[:0])


def test_table1_and_phased_ratios_are_separate_parameters():
    p = AraLoadBalancingParams(mmpp_rate_ratio=700.0, table1_rate_ratio=5000.0)
    from tieringlab.experiments.ara.section import _fig3_mmpps, _phased_mmpp
    from tieringlab.models.workloads.ara import bursty_mmpp, phased_mmpp

    assert _fig3_mmpps(p)[0] == bursty_mmpp(10.0, C.STRONG_I, 0.51, 5000.0)
    assert _phased_mmpp(p) == phased_mmpp(10.0, 0.51, 6.0, 700.0)
    assert _fig3_mmpps(p, rate_ratio=50.0)[1] == bursty_mmpp(10.0, C.WEAK_I, 0.51, 50.0)
    # the fitted rows are calibration rows, not claims
    reg = registry()
    for I in (C.STRONG_I, C.WEAK_I):
        assert reg[C.table1_claim_id("rand", I)].kind == "calibration"
    assert reg[C.table1_claim_id("qlen", C.STRONG_I)].kind == "claim"
    assert reg[C.table1_claim_id("rand", C.NONBURSTY_I)].kind == "claim"   # Poisson at every ratio: not fitted


# ------------------------------------------------------------------------------------------ rate-ratio readings


def test_rate_ratio_settings_set_every_mmpp_and_are_named_readings():
    p = AraLoadBalancingParams(table1_rate_ratio=2000.0, sens_mean_interarrival_s=(10.0,), sens_service_scv=(1.0,),
                               sens_rate_ratio=(50.0, 700.0), sens_rate_ratio_between=(200.0,),
                               sens_jobs_in_burst=(0.51,))
    st = G.sensitivity_settings(p)
    assert list(zip(st.rate_ratio, st.t1_rate_ratio)) == [(50.0, 50.0), (700.0, 700.0), (200.0, 200.0),
                                                          (700.0, 2000.0)]
    assert list(st.default) == [False, False, False, True]     # the default: both calibrated ratios
    names = [L.sensitivity_reading(dict(r._asdict()), p).name for r in st.itertuples(index=False)]
    assert names == ["sens.ratio_50.t1ratio_50", "sens.t1ratio_700", "sens.ratio_200.t1ratio_200", "sens"]
    r = L.sensitivity_reading(dict(st.iloc[0]), p)
    assert dict(r.overrides) == {"mmpp_rate_ratio": 50.0, "table1_rate_ratio": 50.0}
    assert all(L.is_reading(dict(row), p) for _, row in st.iterrows())   # the ratio is not stated: all readings


def _entry(value, **readings):
    return L.Entry(value, None, readings, None)


def test_reading_verdicts_side_by_side_with_flips_and_preconditions():
    reg = registry()
    entries = {cid: _entry(None) for cid in reg if cid.startswith("ara.")}
    entries[C.RAND_BEATS_QLEN_STRONG] = _entry(-1.0, **{"sens.ratio_50": 2.0, "sens.ratio_5000": 3.0})
    entries[C.QLEN_BEATS_RAND_NONBURSTY] = _entry(50.0, **{"sens.ratio_50": 40.0})
    entries[C.PRE_T1_HERDING] = _entry(0.9, **{"sens.ratio_5000": 0.2})   # fails only under ratio 5000
    table, flips = L.reading_verdicts(entries, ["sens.ratio_50", "sens.ratio_5000"])
    row = table.set_index("id")
    assert list(row.loc[C.RAND_BEATS_QLEN_STRONG]) == ["differs", "holds", "untestable"]
    assert list(row.loc[C.QLEN_BEATS_RAND_NONBURSTY]) == ["holds", "holds", ""]   # not run under 5000: blank
    assert flips == {"sens.ratio_50": [C.RAND_BEATS_QLEN_STRONG], "sens.ratio_5000": [C.RAND_BEATS_QLEN_STRONG]}
    assert C.PRE_T1_HERDING not in row.index and set(table.columns) == {"id", "default", "sens.ratio_50",
                                                                        "sens.ratio_5000"}


# ------------------------------------------------------------------------------------------ predictor window


def test_detection_lags_on_a_planted_stream():
    # jobs at t = 0..9; truth: idle 0-2, burst 3-6, idle 7-9; the predictor turns on at job 5, off at job 9
    a = np.arange(10.0)
    truth = np.array([0, 0, 0, 1, 1, 1, 1, 0, 0, 0], bool)
    pred = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 0], bool)
    on, on_miss, off, off_miss = G.detection_lags(a, truth, pred)
    assert (on, on_miss, off, off_miss) == (2.0, 0.0, 2.0, 0.0)   # burst from t=3 seen at 5; idle from 7 seen at 9
    # a burst the predictor never sees is missed; the first run (its start unseen) is skipped
    on, on_miss, off, off_miss = G.detection_lags(a, truth, np.zeros(10, bool))
    assert on_miss == 1.0 and math.isnan(on) and (off, off_miss) == (0.0, 0.0)


# ------------------------------------------------------------------------------------------ replications


def test_replications_for_a_relative_interval_by_hand():
    # two replications 100 +- d: sd = d sqrt(2), half-width at n = 2 is t(0.975, 1) d = 12.706 d: within 5 % of
    # the mean (5) for d <= 0.3935; at n = 3 it is t(0.975, 2) d sqrt(2) / sqrt(3) = 3.513 d
    assert K.replications_for_relative_ci([99.61, 100.39], 0.05) == 2
    assert K.replications_for_relative_ci([99.6, 100.4], 0.05) == 3
    assert K.replications_for_relative_ci([100 - 1.4, 100 + 1.4], 0.05) == 3     # 3.513 * 1.4 = 4.92
    assert K.replications_for_relative_ci([100 - 1.5, 100 + 1.5], 0.05) == 4     # 3.513 * 1.5 = 5.27
    with pytest.raises(ValueError, match="target"):
        K.replications_for_relative_ci([1.0, 2.0], 5.0)
    with pytest.raises(ValueError, match="samples"):
        K.replications_for_relative_ci([1.0], 0.05)
