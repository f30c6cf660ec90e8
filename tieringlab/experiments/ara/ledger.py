"""The ARA ledger: each claim's value from the labelled results, and its verdict under each reading of Table 2.

Every selection is by coordinate: the workloads by ``index_of_dispersion`` (the thesis' values are
:data:`tieringlab.claims.ara.TABLE1_I`), static ARA by ``system == "ARA"`` and its ``k``, Fig. 8's settings by
``fig8_part``, ``th_s`` and ``th_l``, Table 2's cells by ``part`` and ``n_sites``, ``delay_s`` or
``utilization``, and its configurations by ``policy`` and ``th_l_rule``.

Table 2 has two open settings, run side by side in one experiment (:class:`Table2Reading`): the th_l of a
network of N sites (choice 5: Fig. 8's 14 of 16 scaled with N, or Fig. 7's ceil(N / 2)) and what keeps the load
at 50 % when N changes (choice 6: the service time, as the text says, or the arrival rate). :data:`READINGS`
states them with :mod:`tieringlab.readings`; :func:`verdicts_by_reading` gives each claim's verdict under each.

Every "beats" / "worsens" / "is worst" row is decided by the paired per-replication gap
(:func:`tieringlab.experiments.ara.compare.compare`), with the unpaired interval separation recorded as the
reading ``unpaired``; the sensitivity study's workload settings that read what the thesis leaves open (choices
1-3; :func:`is_reading`: not those that move a stated value) are recorded as readings ``sens.<what differs>`` of
the rows they evaluate (:func:`sensitivity_records`), at the study's
smaller scale. :func:`ledger_entries` gathers, per row, the value, note, per-replication samples and every
reading's value, as the notebook records them; :func:`ordering_power` the replications each ordering needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd
import xarray as xr

from tieringlab import readings
from tieringlab.claims import ara as C
from tieringlab.experiments.ara.compare import Comparison, compare
from tieringlab.experiments.ara.grids import TH_L_RULES
from tieringlab.experiments.ara.preconditions import burstiness_order_ratio
from tieringlab.experiments.ara.section import AraLoadBalancingParams, service_scv
from tieringlab.params import cross_field, field_problems, param
from tieringlab.stats import interval, paired_gap_pct, replications_for

__all__ = ["Table2Reading", "READINGS", "UNPAIRED", "Row", "Entry", "claim_records", "claim_values", "claim_verdicts",
           "values_by_reading", "verdicts_by_reading", "reading_label", "sensitivity_reading", "sensitivity_records",
           "is_reading", "ledger_entries", "ordering_power", "reading_verdicts"]

#: How Table 2 (a) keeps the 50 % load as N changes (choice 6).
N_SCALINGS = ("service", "arrivals")


@dataclass(frozen=True)
class Table2Reading:
    """Which of Table 2's side-by-side configurations the claims read (both always run)."""

    th_l: str = param("scaled", "th_l at N sites: 'scaled' = round(14 N / 16), Fig. 8 (b)'s th_l with 'all the "
                                "other parameters ... the same' (Sec. 3.2.4; choice 5), or 'half' = ceil(N / 2), "
                                "Fig. 7 step 1a's example", choices=TH_L_RULES)
    n_scaling: str = param("service", "Table 2 (a) at 50 % load: 'service' scales E[S] with N, as the text says, or "
                                      "'arrivals' scales the arrival rate (what Table 2 (a)'s flat Rand suggests; "
                                      "choice 6)", choices=N_SCALINGS)

    def __post_init__(self):
        cross_field(field_problems(self))


#: The readings the notebook shows: the default, then each open setting's other value alone.
READINGS = (readings.DEFAULT,
            *(r for r in readings.axis("th_l", TH_L_RULES, "Fig. 7 step 1a's example th_l = ceil(N / 2) (choice 5)",
                                       default="scaled") if not r.is_default),
            *(r for r in readings.axis("n_scaling", N_SCALINGS, "Table 2 (a) with the arrival rate scaled with N "
                                       "instead of the service time (choice 6)", default="service")
              if not r.is_default))


def reading_label(reading: readings.Reading) -> str:
    """The verdict table's column of ``reading``: ``"th_l half, N service"``."""
    r = reading.apply(Table2Reading())
    return f"th_l {r.th_l}, N {r.n_scaling}"



#: The reading under which every ordering row also records the unpaired rule's value (separated marginal 95 %
#: intervals; the ledger's rule before issues 28/34).
UNPAIRED = readings.Reading("unpaired", {"rule": "unpaired"}, "'A beats B' by separated marginal 95 % intervals "
                            "(issue 16's rule), beside the paired gap that decides the row")


class Row(NamedTuple):
    """One ledger row's value under one reading: ``value``, ``note``, and for the rows an ordering decides, the
    per-replication ``samples`` and ``unpaired`` value and the deciding :class:`Comparison` (``cmp``)."""

    value: float | bool | None
    note: str | None = None
    samples: tuple[float, ...] | None = None
    unpaired: float | None = None
    cmp: Comparison | None = None


def _row(c: Comparison) -> Row:
    return Row(c.value, c.note, c.samples, c.unpaired, c)


def _where(ds: xr.Dataset, dim: str, **coords) -> list[str]:
    """The labels along ``dim`` whose coordinates equal ``coords``, in the dataset's order."""
    mask = np.ones(ds.sizes[dim], bool)
    for name, value in coords.items():
        mask &= np.asarray(ds[name].values == value)
    return [str(x) for x in ds[dim].values[mask]]


class _Lookup:
    """Label lookup on a DataArray whose leading dims are ``dims``: ``lookup(*labels)`` is
    ``da.sel(dict(zip(dims, labels))).values`` by numpy indexing (the same values; the ledger makes a few hundred
    lookups, and xarray's ``sel`` costs ~1 ms each)."""

    def __init__(self, da: xr.DataArray, *dims: str):
        da = da.transpose(*dims, ...)
        self.values = da.values
        self.index = [{(v.item() if hasattr(v, "item") else v): i for i, v in enumerate(da[d].values)} for d in dims]

    def __call__(self, *labels):
        return self.values[tuple(ix[label] for ix, label in zip(self.index, labels, strict=True))]


def _first(ds: xr.Dataset, dim: str, **coords) -> str | None:
    found = _where(ds, dim, **coords)
    return found[0] if found else None


def _worst(comparisons, largest: bool = False) -> Row:
    """The row decided by the comparison with the smallest (``largest``: the largest) paired value; its unpaired
    value is the same extreme over the unpaired values (each rule applied to every comparison), every note joined."""
    pick = max if largest else min
    c = pick(comparisons, key=lambda x: x.value)
    return Row(c.value, " ".join(x.note for x in comparisons), c.samples,
               pick(x.unpaired for x in comparisons), c)


def _gap(a_s: float | None, b_s: float | None) -> float | None:
    """The thesis' relative gap ``100 (b - a) / a`` (%) of two printed means, None where one is not printed."""
    return None if a_s is None or b_s is None else 100.0 * (b_s - a_s) / a_s


def _t1_paper(pol: str, I: float) -> float | None:
    return C.TABLE1_PAPER.get((pol, float(I)))


def _t2_paper(part: str, at, pol: str) -> float | None:
    """Table 2's mean (s) of ``pol`` in part ``part`` ("a", "b", "c"; "a_arrivals" reads as "a") at ``at``."""
    row = C.TABLE2_PAPER.get((part.split("_")[0], at))
    return None if row is None or pol not in C.TABLE2_POLICIES else row[C.TABLE2_POLICIES.index(pol)]


def _static_values(static: xr.Dataset, out: dict) -> None:
    """Table 1 and Fig. 5 (static ARA over K), and the Table 1 preconditions."""
    Is = [float(i) for i in static.index_of_dispersion.values]
    S, W, P = C.STRONG_I, C.WEAK_I, C.NONBURSTY_I
    resp, m = (_Lookup(static[v], "index_of_dispersion", "config") for v in ("response_s", "mean_s"))
    cfg = {pol: _first(static, "config", policy=pol) for pol in ("qlen", "rand")}

    def s1(I, c):
        return resp(I, c)

    def mean(I, c):
        return float(m(I, c))

    def beats(I, a, b):
        return compare(s1(I, cfg[a]), s1(I, cfg[b]), f"{a} vs {b}, I = {I:g}", _gap(_t1_paper(a, I), _t1_paper(b, I)))

    if P in Is:
        out[C.QLEN_BEATS_RAND_NONBURSTY] = _row(beats(P, "qlen", "rand"))
    if S in Is:
        out[C.RAND_BEATS_QLEN_STRONG] = _row(beats(S, "rand", "qlen"))
    if W in Is:
        out[C.RAND_BEATS_QLEN_WEAK] = _row(beats(W, "rand", "qlen"))
    if {P, W, S} <= set(Is):
        out[C.BURSTINESS_DEGRADES_BOTH] = _worst([
            compare(s1(lo, cfg[pol]), s1(hi, cfg[pol]), f"{pol} I = {lo:g} vs {hi:g}",
                    _gap(_t1_paper(pol, lo), _t1_paper(pol, hi)))
            for pol in ("qlen", "rand") for lo, hi in ((P, W), (W, S))])
    ara = _where(static, "config", system="ARA")
    ks = [int(static.k.sel(config=c)) for c in ara]
    at_k = dict(zip(ks, ara))
    if ks:
        out[C.STATIC_ARA_BEATS_BOTH] = Row(max(min(mean(I, c) for c in ara)
                                               / min(mean(I, cfg["qlen"]), mean(I, cfg["rand"])) for I in Is))
    N = int(static.attrs.get("n_sites", max(ks) if ks else 1))
    inner = [k for k in ks if 1 < k < N]
    if W in Is and inner:
        best_base = min(("qlen", "rand"), key=lambda pol: mean(W, cfg[pol]))
        kbest = min(inner, key=lambda k: mean(W, at_k[k]))
        out[C.SOME_K_BEATS_BOTH_WEAK] = _row(compare(s1(W, at_k[kbest]), s1(W, cfg[best_base]),
                                                     f"ARA K = {kbest} vs {best_base}, I = {W:g}"))
    if ks and {P, W, S} <= set(Is):
        kstar = {I: min(ks, key=lambda k: mean(I, at_k[k])) for I in Is}
        grows = kstar[P] <= kstar[W] <= kstar[S] and kstar[P] < kstar[S]
        out[C.BEST_K_GROWS] = Row(bool(grows), f"K* = {kstar[P]} (I = {P:g}), {kstar[W]} (I = {W:g}), "
                                               f"{kstar[S]} (I = {S:g}).")
    _table1_preconditions(static.get("measured_index_of_dispersion"), static.get("herding_exposure"), Is, out)


def _mean(x) -> float | None:
    """The mean over the replications that measured something (NaN: a stream without a burst job), None when
    none did (the precondition was not measured under that setting)."""
    x = np.asarray(x, float)
    return float(np.mean(x[np.isfinite(x)])) if np.isfinite(x).any() else None


def _table1_preconditions(measured, herding, Is, out: dict) -> None:
    """The Table 1 preconditions from per-(index_of_dispersion, seed) measurements (None: not measured)."""
    if measured is not None:
        mI = {I: _mean(measured.sel(index_of_dispersion=I).values) for I in Is}
        mI = {I: v for I, v in mI.items() if v is not None}
        order = sorted(C.TABLE1_I)
        ratio = burstiness_order_ratio(mI, order)
        out[C.PRE_T1_BURSTINESS_ORDERED] = Row(ratio if np.isfinite(ratio) else None, "measured I (Eq. 2) " + ", ".join(
            f"{mI[I]:.3g} (built for {I:g})" for I in order if I in mI) + ".")
    bursty = [I for I in (C.STRONG_I, C.WEAK_I) if I in Is]
    if herding is not None and bursty:
        h = {I: _mean(herding.sel(index_of_dispersion=I).values) for I in bursty}
        h = {I: v for I, v in h.items() if v is not None}
        out[C.PRE_T1_HERDING] = Row(min(h.values()) if h else None, "share of burst jobs after an earlier job of "
                                    "their window: "
                                    + ", ".join(f"{v:.3f} (I = {I:g})" for I, v in h.items()) + ".")


def _phased_preconditions(herding, accuracy, out: dict) -> None:
    """The phased workload's preconditions from per-seed measurements (None: not measured)."""
    if herding is not None:
        out[C.PRE_PHASED_HERDING] = Row(_mean(herding), f"95 % +- {interval(herding).half:.3f} over replications.")
    if accuracy is not None:
        out[C.PRE_PREDICTOR_BEATS_CHANCE] = Row(_mean(accuracy), f"95 % +- {interval(accuracy).half:.3f} over "
                                                                 "replications.")


def _fig8_values(online: xr.Dataset, out: dict) -> None:
    """Fig. 8: the phased workload, ARA_PRED and ARA_OPT over th_l (part a) and th_s (part b). The thesis prints
    no number of Fig. 8; its th_s = 1, th_l = 14 point is Table 2's base cell ("all the other parameters ... the
    same as ... Figure 8", Sec. 3.2.4), whose means give the paper's gaps there."""
    o = online.response_s
    qlen, rand = (_first(online, "config", policy=pol) for pol in ("qlen", "rand"))
    opt1 = _first(online, "config", system="ARA_OPT", fig8_part="b", th_s=1)
    pred1 = _first(online, "config", system="ARA_PRED", fig8_part="b", th_s=1)
    base_th_l = int(online.th_l.sel(config=pred1)) if pred1 is not None else None

    def paper(pol, th_s, th_l, other):
        at_base = th_s == 1 and th_l == C.FIG8_BASE_TH_L
        return _gap(_t2_paper("a", 16, pol), _t2_paper("a", 16, other)) if at_base else None

    if pred1 is not None and opt1 is not None:
        out[C.FIG8_QLEN_WORST] = _worst([
            compare(o.sel(config=c).values, o.sel(config=qlen).values, f"{lab} vs Qlen", paper(pol, 1, base_th_l,
                                                                                                "qlen"))
            for c, lab, pol in ((rand, "Rand", "rand"), (opt1, "ARA_OPT", "ara_opt"), (pred1, "ARA_PRED", "ara_pred"))])
    pred = _where(online, "config", system="ARA_PRED")
    a = sorted({int(online.th_l.sel(config=c)) for c in pred if online.fig8_part.sel(config=c) == "a"})
    b = sorted({int(online.th_s.sel(config=c)) for c in pred if online.fig8_part.sel(config=c) == "b"})
    robust = ([(_first(online, "config", system="ARA_PRED", fig8_part="a", th_l=x), f"a_thl{x}")
               for x in a if x > C.FIG8_TH_L_ABOVE]
              + [(_first(online, "config", system="ARA_PRED", fig8_part="b", th_s=x), f"b_ths{x}")
                 for x in b if x < C.FIG8_TH_S_BELOW])
    if robust:
        out[C.FIG8_ROBUST] = _worst([
            compare(o.sel(config=c).values, o.sel(config=base).values, f"{what} vs {pol}",
                    paper("ara_pred", int(online.th_s.sel(config=c)), int(online.th_l.sel(config=c)), pol))
            for c, what in robust for pol, base in (("qlen", qlen), ("rand", rand))])
    _phased_preconditions(online["herding_exposure"].values if "herding_exposure" in online else None,
                          online["predictor_balanced_accuracy"].values if "predictor_balanced_accuracy" in online
                          else None, out)


_T2_AXIS = {"a": "n_sites", "a_arrivals": "n_sites", "b": "delay_s", "c": "utilization"}


def _table2_values(t2: xr.Dataset, reading: Table2Reading, out: dict) -> None:
    """Table 2 under ``reading`` (its th_l rule and, for part (a), its load scaling)."""
    t = _Lookup(t2.response_s, "cell", "config")
    cells = [str(c) for c, part in zip(t2.cell.values, t2.part.values) if part in ("a", "b", "c")]
    at_cell = {name: _Lookup(t2[name], "cell") for name in ("part", *sorted(set(_T2_AXIS.values())))
               if name in t2.coords}
    configs: dict[str, str | None] = {}

    def config(pol):
        if pol not in configs:
            configs[pol] = _first(t2, "config", policy=pol, th_l_rule="" if pol in ("qlen", "rand") else reading.th_l)
        return configs[pol]

    def actual(cell):
        if reading.n_scaling == "arrivals" and at_cell["part"](cell) == "a":
            return _first(t2, "cell", part="a_arrivals", n_sites=int(at_cell["n_sites"](cell))) or cell
        return cell

    def c2(cell, pol):
        return t(actual(cell), config(pol))

    def paper(cell, pol):
        part = str(at_cell["part"](cell).item())
        at = at_cell[_T2_AXIS[part]](cell).item() if part in _T2_AXIS else None
        return _t2_paper(part, at, pol)

    def cmp(lo_cell, lo_pol, hi_cell, hi_pol, what):
        return compare(c2(lo_cell, lo_pol), c2(hi_cell, hi_pol), what,
                       _gap(paper(lo_cell, lo_pol), paper(hi_cell, hi_pol)))

    if cells:
        gaps = [(paired_gap_pct(c2(c, "ara_pred"), c2(c, "ara_opt")), c) for c in cells]
        (g, h), cw = max(gaps, key=lambda x: x[0][0] + x[0][1])
        samples = 100.0 * (c2(cw, "ara_pred") - c2(cw, "ara_opt")) / c2(cw, "ara_opt")
        out[C.PRED_WITHIN_FEW_PERCENT_OF_OPT] = Row(g + h, f"largest at {cw}: gap {g:+.2f} % +- {h:.2f} %.",
                                                    tuple(float(x) for x in samples))
        out[C.PRED_BEATS_QLEN_AND_RAND] = _worst([cmp(c, "ara_pred", c, b, f"{c} ARA_PRED vs {b}")
                                                  for c in cells for b in ("qlen", "rand")])
    ncells = [c for n in C.T2A_SITES for c in _where(t2, "cell", part="a", n_sites=n)[:1]]
    if len(ncells) == len(C.T2A_SITES):
        out[C.T2A_BASELINES_WORSEN_WITH_N] = _worst([cmp(lo, pol, hi, pol, f"{pol} {lo} vs {hi}")
                                                     for pol in ("rand", "qlen")
                                                     for lo, hi in zip(ncells, ncells[1:])])
        lo, hi = ncells[0], ncells[-1]
        out[C.T2A_ARA_DOES_NOT_WORSEN] = _worst([cmp(lo, pol, hi, pol, f"{pol} {lo} vs {hi}")
                                                 for pol in ("ara_opt", "ara_pred")], largest=True)
    d0, d1 = (_first(t2, "cell", part="b", delay_s=d) for d in C.T2B_DELAYS_S)
    if d0 is not None and d1 is not None:
        out[C.QLEN_DEGRADES_WITH_DELAY] = _row(cmp(d0, "qlen", d1, "qlen", f"Qlen D = {C.T2B_DELAYS_S[0]:g} s vs "
                                                                           f"{C.T2B_DELAYS_S[1]:g} s"))
        r = np.array([float(t2.mean_s.sel(cell=c, config=config("rand"))) for c in _where(t2, "cell", part="b")])
        out[C.RAND_FLAT_IN_DELAY] = Row(float(100 * (r.max() - r.min()) / r.min()))
    high = _first(t2, "cell", part="c", utilization=C.T2C_LOAD)
    if high is not None:
        out[C.T2C_QLEN_BEATS_RAND_AT_80] = _row(cmp(high, "qlen", high, "rand",
                                                    f"Qlen vs Rand, {int(round(100 * C.T2C_LOAD))} %"))


def _calibration_row(samples, n_shared: int) -> Row:
    """A calibration row (Rand, kind ``calibration``): the mean of its ``calibration_n_reps`` replications, the first
    ``n_shared`` (= n_reps) those every policy ran on, the rest Rand alone
    (:func:`~tieringlab.experiments.ara.grids.rand_extension`); the note gives the 95 % interval in % of the mean
    (the 5 % target, issue 34)."""
    x = np.asarray(samples, float)
    ci = interval(x)
    m = float(np.mean(x))
    alone = f", then {x.size - n_shared} of Rand alone" if x.size > n_shared else ""
    return Row(m, f"Rand over {x.size} replications (calibration_n_reps: the {n_shared} every policy ran{alone}): "
                  f"95 % +- {ci.half:.1f} s = {100 * ci.half / m:.1f} % of the mean.", tuple(float(v) for v in x))


def claim_records(static: xr.Dataset, online: xr.Dataset, t2: xr.Dataset, fig6a: xr.Dataset | None = None, *,
                  reading: Table2Reading = Table2Reading()) -> dict[str, Row]:
    """``{claim_id: Row}`` for every row of :mod:`tieringlab.claims.ara` (preconditions included; value ``None``
    where this run cannot compute it) under the Table 2 ``reading``."""
    out: dict[str, Row] = {}
    Is = [float(i) for i in static.index_of_dispersion.values]
    _static_values(static, out)
    if fig6a is not None:
        I = fig6a.index_of_dispersion.values
        ch = fig6a.holds_change.values
        out[C.FIG6A_I_PEAKS_AT_CHANGES] = Row(float(I[ch].min() / I[~ch].max()), "I = " + ", ".join(
            f"{w} {v:.3g}" for w, v in zip(fig6a.window.values, I)))
    if "predictor_balanced_accuracy" in online:
        a = online.predictor_balanced_accuracy.values
        out[C.FIG6B_PREDICTOR_PHASED] = Row(float(np.mean(a)), "mean over replications, 95 % +- "
                                            f"{interval(a).half:.3f}.", tuple(float(x) for x in a))
    if "predictor_balanced_accuracy" in static and C.STRONG_I in Is:
        a = static.predictor_balanced_accuracy.sel(index_of_dispersion=C.STRONG_I).values
        out[C.FIG6C_PREDICTOR_STRONG] = Row(float(np.mean(a)), "mean over replications, 95 % +- "
                                            f"{interval(a).half:.3f}.", tuple(float(x) for x in a))
    _fig8_values(online, out)
    _table2_values(t2, reading, out)
    out[C.EC2_STUDY] = Row(None)
    m = static.mean_s
    cal_I = ([float(i) for i in static.calibration_index_of_dispersion.values] if "rand_calibration_s" in static
             else [])
    for I in C.TABLE1_I:
        for pol in ("rand", "qlen"):
            cfg = _first(static, "config", policy=pol)
            if pol == "rand" and I in cal_I:
                out[C.table1_claim_id(pol, I)] = _calibration_row(
                    static.rand_calibration_s.sel(calibration_index_of_dispersion=I).values, int(static.sizes["seed"]))
            else:
                out[C.table1_claim_id(pol, I)] = Row(float(m.sel(index_of_dispersion=I, config=cfg)) if I in Is
                                                     else None)
    base = t2.attrs.get("base_cell", "")
    for pol in C.TABLE2_POLICIES:
        rule = "" if pol in ("qlen", "rand") else reading.th_l
        cfg = _first(t2, "config", policy=pol, th_l_rule=rule)
        if pol == "rand" and base and "rand_calibration_s" in t2:
            out[C.absolute_claim_id("table2", pol, "base")] = _calibration_row(t2.rand_calibration_s.values,
                                                                               int(t2.sizes["seed"]))
        else:
            out[C.absolute_claim_id("table2", pol, "base")] = Row(float(t2.mean_s.sel(cell=base, config=cfg)) if base
                                                                  else None)
    for cid in (c.id for c in C.CLAIMS):
        out.setdefault(cid, Row(None))
    return out


def claim_values(static: xr.Dataset, online: xr.Dataset, t2: xr.Dataset, fig6a: xr.Dataset | None = None, *,
                 reading: Table2Reading = Table2Reading()) -> dict[str, tuple]:
    """``{claim_id: (value, note)}`` for every row of :mod:`tieringlab.claims.ara` (:func:`claim_records`, value
    ``None`` where this run cannot compute it). ``reading`` picks the Table 2 configurations the values come from
    (the ledger uses the default; :func:`verdicts_by_reading` the others)."""
    return {cid: (r.value, r.note) for cid, r in claim_records(static, online, t2, fig6a, reading=reading).items()}


def _fmt(v: float) -> str:
    return f"{v:g}".replace(".", "p")


#: The sensitivity study's workload axes (its Dataset's coordinates) and the short names of its readings.
_SENS_AXES = (("mean_interarrival_s", "ea"), ("service_scv", "scv"), ("rate_ratio", "ratio"),
              ("t1_rate_ratio", "t1ratio"), ("jobs_in_burst", "burst"))
#: The sensitivity settings that are readings of what the thesis leaves open, and so go on the ledger's rows: the
#: service SCV and the burst/idle rate ratio (not stated), and E[A] at the printed 10 s or at 0.1 s (choice 1: the
#: "10" read as a rate). A setting that moves a stated value (E[A] = 1 s; a burst share other than Sec. 3.2.3's
#: 51 %) is sensitivity only: the notebook's sensitivity table shows it, the ledger does not count it as a reading.
READING_EA_S = (10.0, 0.1)


def is_reading(setting: dict, p: AraLoadBalancingParams) -> bool:
    """Whether a sensitivity ``setting`` (its coordinates) is a reading of the thesis (:data:`READING_EA_S`)."""
    return (float(setting["mean_interarrival_s"]) in READING_EA_S
            and float(setting["jobs_in_burst"]) == float(p.mmpp_jobs_in_burst))


def sensitivity_reading(setting: dict, p: AraLoadBalancingParams) -> readings.Reading:
    """The reading one sensitivity setting is (``setting``: its coordinates): named ``sens.`` and the axes where it
    differs from ``p``'s defaults (``sens.ea_0p1.scv_198p25``), overriding those parameters; the default setting
    is named ``sens`` (the default workload at the study's smaller scale). ``ratio``: the phased workload's rate
    ratio, ``t1ratio``: Table 1's (a setting of the study's rate-ratio axis sets both)."""
    default = {"mean_interarrival_s": p.mean_interarrival_s, "service_scv": service_scv(p),
               "rate_ratio": p.mmpp_rate_ratio, "t1_rate_ratio": p.table1_rate_ratio,
               "jobs_in_burst": p.mmpp_jobs_in_burst}
    params = {"mean_interarrival_s": "mean_interarrival_s", "service_scv": "service_scv",
              "rate_ratio": "mmpp_rate_ratio", "t1_rate_ratio": "table1_rate_ratio",
              "jobs_in_burst": "mmpp_jobs_in_burst"}
    setting = {**default, **setting}  # an axis the setting does not name is at its default
    diff = [(ax, short) for ax, short in _SENS_AXES if float(setting[ax]) != float(default[ax])]
    name = ".".join(["sens", *(f"{short}_{_fmt(float(setting[ax]))}" for ax, short in diff)])
    return readings.Reading(name, {params[ax]: float(setting[ax]) for ax, _ in diff},
                            "sensitivity study (choices 1-3 of the workload), at sens_n_jobs x sens_n_reps")


def sensitivity_records(sens: xr.Dataset, p: AraLoadBalancingParams) -> dict[str, dict[str, Row]]:
    """``{reading name: {claim_id: Row}}``: the rows the sensitivity study evaluates (Table 1's orderings and
    absolute numbers, Fig. 8's "Qlen is worst", Table 2's base-cell absolute numbers, the preconditions) under
    each of its non-default settings that is a reading of the thesis (:func:`is_reading`,
    :func:`sensitivity_reading`). The default setting is left out: the main run is the default reading."""
    Is = [float(i) for i in sens.index_of_dispersion.values]
    out: dict[str, dict[str, Row]] = {}
    for s in sens.setting.values:
        x = sens.sel(setting=s)
        setting = {ax: x[ax].item() for ax, _ in _SENS_AXES if ax in x.coords}
        if bool(x["default"].item()) or not is_reading(setting, p):
            continue
        rd = sensitivity_reading(setting, p)
        rows: dict[str, Row] = {}

        def t1(I, pol, x=x):
            return x.t1_response_s.sel(index_of_dispersion=I, t1_policy=pol).values

        def f8(pol, x=x):
            return x.f8_response_s.sel(f8_policy=pol).values

        S, W, P = C.STRONG_I, C.WEAK_I, C.NONBURSTY_I
        if P in Is:
            rows[C.QLEN_BEATS_RAND_NONBURSTY] = _row(compare(t1(P, "qlen"), t1(P, "rand"), "qlen vs rand"))
        if S in Is:
            rows[C.RAND_BEATS_QLEN_STRONG] = _row(compare(t1(S, "rand"), t1(S, "qlen"), "rand vs qlen"))
        if W in Is:
            rows[C.RAND_BEATS_QLEN_WEAK] = _row(compare(t1(W, "rand"), t1(W, "qlen"), "rand vs qlen"))
        if {P, W, S} <= set(Is):
            rows[C.BURSTINESS_DEGRADES_BOTH] = _worst([compare(t1(lo, pol), t1(hi, pol), f"{pol} {lo:g} vs {hi:g}")
                                                       for pol in ("qlen", "rand") for lo, hi in ((P, W), (W, S))])
        rows[C.FIG8_QLEN_WORST] = _worst([compare(f8(o), f8("qlen"), f"{o} vs qlen")
                                          for o in ("rand", "ara_opt", "ara_pred")])
        for I in Is:
            if I in C.TABLE1_I:
                for pol in ("rand", "qlen"):
                    rows[C.table1_claim_id(pol, I)] = Row(float(np.mean(t1(I, pol))))
        for pol in C.TABLE2_POLICIES:
            rows[C.absolute_claim_id("table2", pol, "base")] = Row(float(np.mean(f8(pol))))
        if "t1_herding_exposure" in x:
            _table1_preconditions(x.t1_measured_index_of_dispersion, x.t1_herding_exposure, Is, rows)
        if "f8_herding_exposure" in x:
            _phased_preconditions(x.f8_herding_exposure.values, x.f8_predictor_balanced_accuracy.values, rows)
        out[rd.name] = rows
    return out


class Entry(NamedTuple):
    """What the notebook records for one row: ``out.claim(id, value, note, readings=readings, samples=samples)``."""

    value: float | bool | None
    note: str | None
    readings: dict
    samples: tuple[float, ...] | None


def ledger_entries(static: xr.Dataset, online: xr.Dataset, t2: xr.Dataset, fig6a: xr.Dataset | None = None,
                   sens: xr.Dataset | None = None, p: AraLoadBalancingParams | None = None,
                   reads=READINGS) -> dict[str, Entry]:
    """Every row's value under the default reading with its note and per-replication samples, and its value under
    every other reading the notebook ran: ``unpaired`` (the unpaired rule, for the rows an ordering decides),
    Table 2's ``reads`` (where the row's value depends on them) and the sensitivity study's settings (``sens``
    with its params ``p``; :func:`sensitivity_records`)."""
    default = claim_records(static, online, t2, fig6a)
    others = {r.name: claim_records(static, online, t2, fig6a, reading=r.apply(Table2Reading()))
              for r in reads if not r.is_default}
    sensr = sensitivity_records(sens, p or AraLoadBalancingParams()) if sens is not None else {}
    out = {}
    for cid, row in default.items():
        rds: dict = {}
        if row.value is not None and row.unpaired is not None:
            rds[UNPAIRED.name] = row.unpaired
        for name, recs in others.items():
            v = recs[cid].value
            if row.value is not None and v is not None and v != row.value:
                rds[name] = v
        for name, recs in sensr.items():
            if row.value is not None and cid in recs and recs[cid].value is not None:
                rds[name] = recs[cid].value
        out[cid] = Entry(row.value, row.note, rds, row.samples)
    return out


def ordering_power(records: dict[str, Row]) -> pd.DataFrame:
    """Per ordering row (one decided by a paired comparison): the deciding comparison's paired gap and half-width
    (%), the per-replication standard deviation, the replications run, the thesis' gap for the same pair and the
    replications :func:`tieringlab.stats.replications_for` says detect the thesis' effect (its gap beyond the
    row's threshold) at power :data:`tieringlab.stats.POWER` (NaN where the thesis prints no number)."""
    from tieringlab.claims import registry as claim_registry  # noqa: PLC0415

    reg = claim_registry()
    rows = []
    for cid, r in records.items():
        if r.cmp is None or r.value is None:
            continue
        c = r.cmp
        sd = float(np.std(c.samples, ddof=1)) if len(c.samples) > 1 else float("nan")
        effect = None if c.paper_gap is None else c.paper_gap - float(reg[cid].check.target or 0.0)
        need = float("nan")
        if effect is not None and effect != 0 and np.isfinite(sd):
            try:
                need = replications_for(abs(effect), sd)
            except ValueError:
                need = float("inf")
        rows.append({"id": cid, "deciding": c.note.split(":")[0], "paired_gap_pct": c.gap, "half_pct": c.half,
                     "sd_pct": sd, "n_reps": len(c.samples), "paired_value": r.value, "unpaired_value": r.unpaired,
                     "paper_gap_pct": c.paper_gap, "replications_for_paper_effect": need})
    return pd.DataFrame(rows)


def claim_verdicts(values: dict[str, tuple]) -> pd.DataFrame:
    """The ledger's verdict for each claim value (id, kind, value, verdict), in the order of ``values``: a claim
    whose required precondition (its value in ``values``) fails is ``untestable``
    (:func:`tieringlab.claims.verdict_given`)."""
    from tieringlab.claims import registry as claim_registry  # noqa: PLC0415
    from tieringlab.claims import verdict_given  # noqa: PLC0415

    reg = claim_registry()
    pre = {cid: (reg[cid], v) for cid, (v, _) in values.items() if reg[cid].kind == "precondition"}

    def verdict(cid, v):
        need = {pid: pre.get(pid, (reg[pid], None)) for pid in reg[cid].requires}
        return verdict_given(reg[cid], v, need)[0]

    return pd.DataFrame([{"id": cid, "kind": reg[cid].kind, "value": v, "verdict": verdict(cid, v)}
                         for cid, (v, _) in values.items()])


def values_by_reading(static: xr.Dataset, online: xr.Dataset, t2: xr.Dataset, fig6a: xr.Dataset | None = None,
                      reads=READINGS) -> dict[str, dict[str, tuple]]:
    """``{reading name: claim_values(...)}`` under each of ``reads`` (:func:`tieringlab.readings.run_each`)."""
    return readings.run_each(reads, Table2Reading(),
                             lambda r: claim_values(static, online, t2, fig6a, reading=r))


def verdicts_by_reading(static: xr.Dataset, online: xr.Dataset, t2: xr.Dataset, fig6a: xr.Dataset | None = None,
                        reads=READINGS) -> tuple[pd.DataFrame, list[str]]:
    """The verdict table (:func:`claim_verdicts` under the default reading, then one column of verdicts per other
    reading, named by :func:`reading_label`) and the ids whose verdict flips under some reading
    (:func:`tieringlab.readings.verdicts`, :func:`tieringlab.readings.flips`)."""
    from tieringlab.claims import registry as claim_registry  # noqa: PLC0415

    reg = claim_registry()
    by = values_by_reading(static, online, t2, fig6a, reads)
    default = next(r.name for r in reads if r.is_default)
    table = claim_verdicts(by[default])
    for r in reads:
        if not r.is_default:
            table[reading_label(r)] = claim_verdicts(by[r.name]).verdict.values
    flipped = [cid for cid in by[default]
               if readings.flips(readings.verdicts(reg[cid], {name: vals[cid][0] for name, vals in by.items()}),
                                 default=default)]
    return table, flipped


def reading_verdicts(entries: dict[str, Entry], names, default: str = "default") -> tuple[pd.DataFrame, dict]:
    """The claim rows' verdicts side by side under the default reading and each of ``names`` (reading names
    recorded in ``entries``' readings), as the ledger decides them: a row's value under a reading it was not
    recorded under is left blank; a precondition not recorded under a reading keeps its default value there, and a
    failing one makes the claim ``untestable`` (:func:`tieringlab.claims.verdict_given`). Also ``{reading name:
    [ids whose verdict differs from the default's]}``."""
    from tieringlab.claims import registry as claim_registry  # noqa: PLC0415
    from tieringlab.claims import verdict_given  # noqa: PLC0415

    reg = claim_registry()

    def value(cid, name):
        e = entries[cid]
        return e.value if name == default else e.readings.get(name)

    def verdict(cid, name):
        v = value(cid, name)
        if v is None:
            return ""
        need = {}
        for pid in reg[cid].requires:
            pv = value(pid, name) if pid in entries else None
            need[pid] = (reg[pid], entries[pid].value if pv is None and pid in entries else pv)
        return verdict_given(reg[cid], v, need)[0]

    rows, flips = [], {n: [] for n in names}
    for cid in entries:
        if reg[cid].kind != "claim":
            continue
        row = {"id": cid, default: verdict(cid, default)}
        for n in names:
            row[n] = verdict(cid, n)
            if row[n] and row[n] != row[default]:
                flips[n].append(cid)
        rows.append(row)
    return pd.DataFrame(rows), flips
