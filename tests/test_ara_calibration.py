"""ARA, issue 34: Table 1's rate ratio calibrated on Table 1's own Rand column, the rate-ratio readings of the
sensitivity study, the predictor's window m (its detection lags) and the replications a relative interval needs,
each against hand-computed small cases."""

from __future__ import annotations

import math
import types

import jax
import numpy as np
import pandas as pd
import pytest

from tieringlab.claims import ara as C
from tieringlab.claims import registry
from tieringlab.experiments.ara import compare as K
from tieringlab.experiments.ara import grids as G
from tieringlab.experiments.ara import ledger as L
from tieringlab.experiments.ara import tables as T
from tieringlab.experiments.ara.section import AraLoadBalancingParams, _fig3_mmpps, _phased_mmpp, _streams

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


# ------------------------------------------------------------------------------------------ calibration replications


def _key_offset(key) -> float:
    """A number in [0, 1) that tells keys apart (the fake services' offset)."""
    return float(np.asarray(jax.random.key_data(key)).astype(np.uint64).sum() % 997) / 997


class _Fake:
    """Stands in for the grids' dispatcher (registry.run) and service sampler: records each dispatcher call's system
    and batch shape; services are each row's mean plus an offset that names the key they were drawn from; a
    replication's "response" is its stream's last arrival plus its mean service. So the tests can tell which streams
    and which service key a run used, without simulating or compiling the samplers (the on/off predictor, which
    no calibration run reads, says "off" throughout, and the preconditions measure 0)."""

    def __init__(self, monkeypatch):
        self.calls = []
        monkeypatch.setattr(G.registry, "run", self.run)
        monkeypatch.setattr(G, "_services", self.services)
        monkeypatch.setattr(G, "predicted_burst_state", lambda arr, params=None: np.zeros(np.shape(arr), bool))
        for name in ("herding_exposure", "measured_index_of_dispersion"):   # preconditions: not under test here
            monkeypatch.setattr(G, name, lambda arr, *_: np.zeros(len(arr)))

    def run(self, system, arrivals, services, **_):
        arrivals, services = np.asarray(arrivals), np.asarray(services)
        self.calls.append((system, arrivals.shape))
        return {"mean_response_s": types.SimpleNamespace(values=arrivals[:, -1] + services.mean(axis=1))}

    @staticmethod
    def services(key, n, means, scvs):
        return np.repeat(np.asarray(means, float)[:, None] + _key_offset(key), n, axis=1)


def _small(**kw):
    return AraLoadBalancingParams(n_jobs=200, n_reps=2, calibration_n_reps=6, ks=(1, 2), th_l_grid=(1,),
                                  th_s_grid=(1,), table2_sites=(16,), table2_delays_s=(1.0,), table2_loads=(0.5,),
                                  calibration_rate_ratios=(400.0, 700.0), table1_calibration_rate_ratios=(50.0, 700.0),
                                  **kw)


def test_calibrations_run_rand_alone_on_calibration_n_reps(monkeypatch):
    fake = _Fake(monkeypatch)
    p, key = _small(), jax.random.key(4)
    cal = G.rate_ratio_calibration(p, key)
    cal1 = G.table1_rate_ratio_calibration(p, key)
    # one batched Rand call per workload: 6 replications of the phased one at each ratio, then of Table 1's two
    # bursty ones at each ratio
    assert fake.calls == [("Rand", (6, 200))] * (2 + 2 * 2)
    assert list(cal.rate_ratio) == [400.0, 700.0] and list(cal.default) == [False, True]
    # ratio 700's mean is over its 6 streams (s = 1, r = 0..5 of key 0) with services from key 1 -> fold 1
    arr, _ = _streams([_phased_mmpp(p, rate_ratio=700.0)], jax.random.fold_in(key, 0), 200, 6, settings=[1])
    want = arr[:, -1].mean() + 80.0 + _key_offset(jax.random.fold_in(jax.random.fold_in(key, 1), 1))
    assert cal.rand_mean_s.iloc[1] == pytest.approx(want, rel=1e-12)
    assert cal.log_error.iloc[1] == pytest.approx(math.log(want / 1109.33), rel=1e-12)
    assert cal1.shape[0] == 4 and set(cal1.index_of_dispersion) == {C.STRONG_I, C.WEAK_I}
    # the phased fit: least |log error| (here 400 -> 700 s, 700 -> 1000 s against 1109.33 s)
    assert G.fit_rate_ratio(cal.assign(log_error=np.log(np.array([700.0, 1000.0]) / 1109.33))) == 700.0
    with pytest.raises(ValueError, match="calibration_rate_ratios"):
        G.fit_rate_ratio(cal.iloc[:0])


def test_calibration_rows_extend_the_shared_replications_with_rand_alone(monkeypatch):
    fake = _Fake(monkeypatch)
    p, key = _small(), jax.random.key(5)
    static = G.static_experiment(p, key)
    # Qlen, Rand, ARA K = 1, 2 on 3 workloads x 2 replications; then Rand alone, 4 more of each bursty workload
    assert fake.calls == [(s, (6, 200)) for s in ("Qlen", "Rand", "ARA", "ARA")] + [("Rand", (4, 200))] * 2
    cal = static.rand_calibration_s
    assert cal.dims == ("calibration_index_of_dispersion", "calibration_seed") and cal.shape == (2, 6)
    assert list(cal.calibration_index_of_dispersion.values) == [C.STRONG_I, C.WEAK_I]
    assert list(cal.calibration_seed.values) == list(range(6))
    # the first n_reps are Rand's shared replications; the rest continue the same workloads' arrival streams
    # (replications 2..5 of streams s = 0, 1 of key 0) with services from the extension's own key (3 -> 0 -> j)
    np.testing.assert_array_equal(cal.values[:, :2], static.response_s.sel(config="rand").values[:2])
    last = _streams(_fig3_mmpps(p)[:2], jax.random.fold_in(key, 0), 200, 6)[0].reshape(2, 6, 200)[:, 2:, -1]
    svc = 80.0 + np.array([[_key_offset(jax.random.fold_in(jax.random.fold_in(jax.random.fold_in(key, 3), 0), j))]
                           for j in range(2)])
    assert svc[0, 0] != svc[1, 0]
    np.testing.assert_allclose(cal.values[:, 2:], last + svc, rtol=1e-12)
    strong = T.table1(static).query("policy == 'rand' and index_of_dispersion == @C.STRONG_I").iloc[0]
    assert strong.calibration_reps == 6 and strong.calibration_mean_s == pytest.approx(cal.values[0].mean())
    t2 = G.table2_experiment(p, key)
    assert fake.calls[-1] == ("Rand", (4, 200))     # the base cell's Rand, 4 more replications
    assert t2.rand_calibration_s.dims == ("calibration_seed",) and t2.rand_calibration_s.size == 6
    np.testing.assert_array_equal(t2.rand_calibration_s.values[:2],
                                  t2.response_s.sel(cell=t2.attrs["base_cell"], config="rand").values)


def test_calibration_rows_read_calibration_n_reps_and_record_their_samples():
    from test_ara import _synthetic_datasets

    static, online, t2, fig6a = _synthetic_datasets(False)
    # 10 replications (the synthetic runs' 8, then 2 more), alternating mean -+ 10 %: strong 100 s, weak 10 s
    x = np.array([[90.0, 110.0] * 5, [9.0, 11.0] * 5])
    static["rand_calibration_s"] = (("calibration_index_of_dispersion", "calibration_seed"), x)
    static = static.assign_coords(calibration_index_of_dispersion=[C.STRONG_I, C.WEAK_I])
    t2["rand_calibration_s"] = ("calibration_seed", np.array([900.0, 1100.0] * 5))
    rows = L.claim_records(static, online, t2, fig6a)
    base = rows[C.absolute_claim_id("table2", "rand", "base")]
    assert base.value == pytest.approx(1000.0, rel=1e-15) and base.samples == (900.0, 1100.0) * 5
    # 95 % half-width t(0.975, 9) sd / sqrt(10) = 2.262157 * 105.409 / 3.162278 = 75.41 s: 7.5 % of the mean
    assert base.note == ("Rand over 10 replications (calibration_n_reps: the 8 every policy ran, then 2 of Rand "
                         "alone): 95 % +- 75.4 s = 7.5 % of the mean.")
    assert rows[C.table1_claim_id("rand", C.STRONG_I)].value == pytest.approx(100.0, rel=1e-15)
    assert rows[C.table1_claim_id("rand", C.WEAK_I)].value == pytest.approx(10.0, rel=1e-15)
    # not calibration rows: the mean over the n_reps every policy ran, as before
    for cid, mean in ((C.table1_claim_id("rand", C.NONBURSTY_I), static.mean_s.sel(index_of_dispersion=1.0,
                                                                                    config="rand")),
                      (C.table1_claim_id("qlen", C.STRONG_I), static.mean_s.sel(index_of_dispersion=C.STRONG_I,
                                                                                 config="qlen")),
                      (C.absolute_claim_id("table2", "qlen", "base"), t2.mean_s.sel(cell="N=16", config="qlen"))):
        assert rows[cid] == L.Row(float(mean)), cid


def test_calibration_n_reps_is_sized_for_the_5pct_target_and_bad_values_are_refused():
    from tieringlab import params

    # paper scale before issue 34: Table 2's base Rand +- 9.4 % of its mean at 16 replications, so sd / mean =
    # 0.094 sqrt(16) / t(0.975, 15) = 0.094 * 4 / 2.1314 = 0.1764; 5 % needs the least n with
    # t(0.975, n - 1) 0.1764 / sqrt(n) <= 0.05: n = 50 gives 2.0096 * 0.1764 / 7.0711 = 0.0501, n = 51 0.0496
    z = np.linspace(-1.0, 1.0, 16)
    x = 1.0 + 0.1764 * (z - z.mean()) / z.std(ddof=1)
    assert K.replications_for_relative_ci(x, 0.05) == 51
    assert AraLoadBalancingParams().calibration_n_reps == 64 >= math.ceil(1.25 * 51)   # 51 + a 25 % margin
    for bad, allowed in ((0, r"\[2, 4096\]"), (-3, r"\[2, 4096\]"), (8, r"\[n_reps, 4096\] = \[16, 4096\]")):
        with pytest.raises(params.ParamsError, match=rf"ara_load_balancing\.calibration_n_reps.*{allowed}"):
            params.validate_section("ara_load_balancing", {"calibration_n_reps": bad})
    with pytest.raises(ValueError, match=r"calibration_n_reps = 3 is below n_reps = 4"):
        AraLoadBalancingParams(n_reps=4, calibration_n_reps=3)
