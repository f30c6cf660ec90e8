"""ARA's ledger (issues 28/34): the paired verdict rule beside the unpaired one, the preconditions measured on the
arrival streams (against hand-computed small cases), and the rows notebook 04 records with their readings."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tieringlab.claims import ara as C
from tieringlab.claims import registry
from tieringlab.experiments.ara import compare as K
from tieringlab.experiments.ara import ledger as L
from tieringlab.experiments.ara import preconditions as PC
from tieringlab.stats import paired_above, separated

# ------------------------------------------------------------------------------------- paired vs unpaired


def test_paired_rule_says_yes_where_the_unpaired_rule_cannot():
    # four replications whose level varies a lot (the seeds' workloads differ) while B is always ~10 % above A on
    # the same seed: the marginal intervals overlap, the paired gaps 9.5..10.5 % lie far above 0
    a = np.array([10.0, 20.0, 30.0, 40.0])
    b = a * np.array([1.10, 1.095, 1.105, 1.10])
    assert not separated(b, a)                      # unpaired: B's interval is not above A's
    assert paired_above(b - a)                      # paired: the differences are
    c = K.compare(a, b, "A vs B")
    gaps = 100 * (b - a) / a
    t3 = 3.182446305284263                          # t_{0.975, 3}
    want_lo = gaps.mean() - t3 * gaps.std(ddof=1) / 2.0
    assert c.value == pytest.approx(want_lo) and c.value > 9.0
    assert c.samples == pytest.approx(tuple(gaps))
    # unpaired value: B's lower end minus A's upper end, % of A's mean (negative: the intervals overlap)
    half = lambda x: t3 * x.std(ddof=1) / 2.0
    assert c.unpaired == pytest.approx(100 * ((b.mean() - half(b)) - (a.mean() + half(a))) / a.mean())
    assert c.unpaired < 0
    assert K.verdict(a, b) == "yes" and K.verdict(a, b, rule="unpaired") == "undecided"
    assert K.verdict(b, a) == "REVERSED"
    # the ledger's check decides both readings on the same scale
    row = registry()[C.QLEN_BEATS_RAND_NONBURSTY]
    assert row.verdict(c.value) == "holds" and row.verdict(c.unpaired) == "differs"
    with pytest.raises(ValueError, match="rule must be one of"):
        K.verdict(a, b, rule="marginal")


def test_paired_rule_says_no_when_the_gap_changes_sign():
    a = np.array([10.0, 20.0, 30.0, 40.0])
    b = a * np.array([1.2, 0.8, 1.2, 0.8])
    assert K.verdict(a, b) == "undecided" and K.compare(a, b, "x").value < 0


def test_identical_runs_beat_nothing_and_do_not_worsen():
    # ARA_OPT on a stream without a burst is Qlen exactly: a gap of 0 +- 0 must not read as "beats"
    a = np.array([10.0, 20.0, 30.0])
    c = K.compare(a, a.copy(), "ARA_OPT vs Qlen")
    assert c.value == 0 and c.unpaired < 0 and K.verdict(a, a.copy()) == "undecided"
    reg = registry()
    assert reg[C.FIG8_QLEN_WORST].verdict(c.value) == "differs"
    assert reg[C.T2A_ARA_DOES_NOT_WORSEN].verdict(c.value) == "holds"


# ------------------------------------------------------------------------------------------- preconditions


def test_herding_exposure_on_a_planted_sequence():
    t = np.array([0.1, 0.5, 0.9, 1.2, 3.0, 3.1])
    burst = np.array([True, True, True, False, True, True])
    # D = 1 s: windows 0 0 0 1 3 3; burst jobs after an earlier job of their window: 0.5, 0.9, 3.1 -> 3 of 5
    assert PC.herding_exposure(t, burst, 1.0) == pytest.approx(3 / 5)
    # D = 0.5 s: windows 0 1 1 2 6 6: 0.9 and 3.1 -> 2 of 5
    assert PC.herding_exposure(t, burst, 0.5) == pytest.approx(2 / 5)
    # a job arriving exactly at a refresh instant opens a new window (policies.ara's convention)
    assert PC.herding_exposure([0.5, 1.0], [True, True], 1.0) == 0.0
    # the non-burst job in a window still exposes the burst job after it
    assert PC.herding_exposure([0.2, 0.3], [False, True], 1.0) == 1.0
    two = PC.herding_exposure(np.stack([t, t + 0.05]), np.stack([burst, burst]), 1.0)
    np.testing.assert_allclose(two, [3 / 5, 3 / 5])
    assert np.isnan(PC.herding_exposure(t, np.zeros(6, bool), 1.0))
    # a replication without a burst job is left out of the mean; none at all: not measured
    rows = {}
    L._phased_preconditions(np.array([0.8, np.nan, 0.6]), None, rows)
    assert rows[C.PRE_PHASED_HERDING].value == pytest.approx(0.7)
    L._phased_preconditions(np.array([np.nan, np.nan]), None, rows)
    assert rows[C.PRE_PHASED_HERDING].value is None
    with pytest.raises(ValueError, match="sorted"):
        PC.herding_exposure(t[::-1], burst, 1.0)


def test_measured_index_of_dispersion_separates_poisson_from_planted_bursts():
    rng = np.random.default_rng(3)
    poisson = np.cumsum(rng.exponential(1.0, 4000))
    # planted: 40 bursts of 50 jobs 0.01 s apart, separated by 100 s of silence
    gaps = np.tile(np.r_[100.0, np.full(49, 0.01)], 40)
    planted = np.cumsum(gaps)
    i_p = PC.measured_index_of_dispersion(poisson)
    i_b = PC.measured_index_of_dispersion(planted)
    assert 0.7 < i_p < 1.3          # Eq. 2 gives I = 1 for exponential inter-arrival times
    assert i_b > 20 * i_p
    # the ratio of consecutive workloads' measured I, in the thesis' order of burstiness
    assert PC.burstiness_order_ratio({1.0: 1.0, 32.25: 5.0, 313.5: 40.0}, (1.0, 32.25, 313.5)) == 5.0
    assert PC.burstiness_order_ratio({1.0: 1.0, 32.25: 5.0, 313.5: 4.0}, (1.0, 32.25, 313.5)) == 0.8
    assert np.isnan(PC.burstiness_order_ratio({1.0: 1.0}, (1.0, 32.25)))


def test_precondition_rows_have_thresholds_reasons_and_are_required():
    reg = registry()
    pre = [c for c in C.CLAIMS if c.kind == "precondition"]
    assert len(pre) >= 2
    for c in pre:
        assert c.id.startswith("ara.pre.") and c.note and c.paper_value and c.where.startswith("Sec.")
    required = {pid for c in C.CLAIMS for pid in c.requires}
    assert required == {c.id for c in pre}
    assert reg[C.RAND_BEATS_QLEN_STRONG].requires == (C.PRE_T1_HERDING,)
    assert C.PRE_PREDICTOR_BEATS_CHANCE in reg[C.FIG8_ROBUST].requires
    assert not reg[C.QLEN_BEATS_RAND_NONBURSTY].requires   # no burstiness: no herding mechanism to need


# ------------------------------------------------------------------------------------------- the ledger


def _with_preconditions(data, herding=0.9, measured=(1.0, 10.0, 100.0), accuracy=None):
    static, online, t2, fig6a = data
    R = static.sizes["seed"]
    static = static.copy()
    static["herding_exposure"] = (("index_of_dispersion", "seed"), np.full((3, R), herding))
    static["measured_index_of_dispersion"] = (("index_of_dispersion", "seed"),
                                              np.repeat(np.array(measured[::-1])[:, None], R, axis=1))
    online = online.copy()
    online["herding_exposure"] = ("seed", np.full(R, herding))
    if accuracy is not None:
        online["predictor_balanced_accuracy"] = ("seed", np.full(R, accuracy))
    return static, online, t2, fig6a


def test_ledger_entries_record_every_row_with_samples_and_the_unpaired_reading():
    from test_ara import _synthetic_datasets

    data = _with_preconditions(_synthetic_datasets(False))
    entries = L.ledger_entries(*data)
    assert set(entries) == {c.id for c in C.CLAIMS}
    for c in C.CLAIMS:
        if c.kind == "precondition":
            assert entries[c.id].value is not None, c.id
    assert entries[C.PRE_T1_BURSTINESS_ORDERED].value == pytest.approx(10.0)
    assert entries[C.PRE_T1_HERDING].value == pytest.approx(0.9)
    for cid in (C.RAND_BEATS_QLEN_STRONG, C.FIG8_QLEN_WORST, C.T2A_BASELINES_WORSEN_WITH_N, C.T2C_QLEN_BEATS_RAND_AT_80,
                C.PRED_BEATS_QLEN_AND_RAND, C.BURSTINESS_DEGRADES_BOTH, C.QLEN_DEGRADES_WITH_DELAY):
        e = entries[cid]
        assert "unpaired" in e.readings and len(e.samples) == 8, cid
        assert np.mean(e.samples) > e.value              # the value is the lower end of the samples' interval
    # Table 2's th_l reading is recorded only on the rows that read ARA in Table 2
    assert "th_l_half" in entries[C.PRED_BEATS_QLEN_AND_RAND].readings
    assert "th_l_half" not in entries[C.RAND_BEATS_QLEN_STRONG].readings
    power = L.ordering_power(L.claim_records(*data)).set_index("id")
    assert power.loc[C.RAND_BEATS_QLEN_STRONG, "paper_gap_pct"] == pytest.approx(100 * (6541.5 - 1520.9) / 1520.9)
    assert power.loc[C.RAND_BEATS_QLEN_STRONG, "replications_for_paper_effect"] >= 2


def test_a_failing_precondition_makes_the_verdict_table_untestable():
    from test_ara import _synthetic_datasets

    ok = L.claim_verdicts(L.claim_values(*_with_preconditions(_synthetic_datasets(False)))).set_index("id")
    assert ok.loc[C.RAND_BEATS_QLEN_STRONG, "verdict"] == "holds"
    low = _with_preconditions(_synthetic_datasets(False), herding=0.2, measured=(1.0, 1.5, 3.0), accuracy=0.45)
    bad = L.claim_verdicts(L.claim_values(*low)).set_index("id").verdict
    assert bad[C.PRE_T1_HERDING] == "differs" and bad[C.PRE_T1_BURSTINESS_ORDERED] == "differs"
    for cid in (C.RAND_BEATS_QLEN_STRONG, C.BURSTINESS_DEGRADES_BOTH, C.FIG8_QLEN_WORST, C.FIG8_ROBUST,
                C.PRED_WITHIN_FEW_PERCENT_OF_OPT):
        assert bad[cid] == "untestable", cid
    assert bad[C.QLEN_BEATS_RAND_NONBURSTY] == "differs"   # requires nothing: still decided


def test_sensitivity_settings_are_named_readings():
    from tieringlab.experiments.ara.section import AraLoadBalancingParams

    p = AraLoadBalancingParams()
    r = L.sensitivity_reading({"mean_interarrival_s": 0.1, "service_scv": 198.25, "rate_ratio": 700.0,
                               "jobs_in_burst": 0.51}, p)
    assert r.name == "sens.ea_0p1.scv_198p25"
    assert dict(r.overrides) == {"mean_interarrival_s": 0.1, "service_scv": 198.25}
    assert L.sensitivity_reading({"mean_interarrival_s": 10.0, "service_scv": 1.0, "rate_ratio": 700.0,
                                  "jobs_in_burst": 0.51}, p).name == "sens"
    # only settings that read what the thesis leaves open are readings of the ledger's rows
    base = {"mean_interarrival_s": 10.0, "service_scv": 20.0, "rate_ratio": 50.0, "jobs_in_burst": 0.51}
    assert L.is_reading(base, p) and L.is_reading({**base, "mean_interarrival_s": 0.1}, p)
    assert not L.is_reading({**base, "mean_interarrival_s": 1.0}, p)      # E[A] is printed as 10 s
    assert not L.is_reading({**base, "jobs_in_burst": 0.25}, p)           # Sec. 3.2.3 states 51 %


def test_notebook_records_every_entry_with_readings_and_samples():
    nb = json.loads((Path(__file__).parents[1] / "notebooks" / "04_ara_load_balancing.ipynb").read_text())
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert "X.ledger_entries(static, online, t2, f6a, sens, P)" in code
    assert "out.claim(cid, e.value, note=e.note, readings=e.readings or None, samples=e.samples)" in code
    assert 'out.metric("sensitivity_orderings_never_reproduced", never)' in code
    assert 'X.sensitivity_table(sens, rule="unpaired")' in code
