"""The ARA ledger: each claim's value from the labelled results, and its verdict under each reading of Table 2.

Every selection is by coordinate: the workloads by ``index_of_dispersion`` (the thesis' values are
:data:`tieringlab.claims.ara.TABLE1_I`), static ARA by ``system == "ARA"`` and its ``k``, Fig. 8's settings by
``fig8_part``, ``th_s`` and ``th_l``, Table 2's cells by ``part`` and ``n_sites``, ``delay_s`` or
``utilization``, and its configurations by ``policy`` and ``th_l_rule``.

Table 2 has two open settings, run side by side in one experiment (:class:`Table2Reading`): the th_l of a
network of N sites (choice 5: Fig. 8's 14 of 16 scaled with N, or Fig. 7's ceil(N / 2)) and what keeps the load
at 50 % when N changes (choice 6: the service time, as the text says, or the arrival rate). :data:`READINGS`
states them with :mod:`tieringlab.readings`; :func:`verdicts_by_reading` gives each claim's verdict under each.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from tieringlab import readings
from tieringlab.claims import ara as C
from tieringlab.experiments.ara.compare import note
from tieringlab.experiments.ara.grids import TH_L_RULES
from tieringlab.params import cross_field, field_problems, param
from tieringlab.stats import interval, paired_gap_pct, separation_ratio

__all__ = ["Table2Reading", "READINGS", "claim_values", "claim_verdicts", "values_by_reading",
           "verdicts_by_reading", "reading_label"]

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


def _where(ds: xr.Dataset, dim: str, **coords) -> list[str]:
    """The labels along ``dim`` whose coordinates equal ``coords``, in the dataset's order."""
    mask = np.ones(ds.sizes[dim], bool)
    for name, value in coords.items():
        mask &= np.asarray(ds[name].values == value)
    return [str(x) for x in ds[dim].values[mask]]


def _first(ds: xr.Dataset, dim: str, **coords) -> str | None:
    found = _where(ds, dim, **coords)
    return found[0] if found else None


def _worst(values_notes):
    """The smallest value among (value, note) pairs, with every note joined."""
    vals = [v for v, _ in values_notes]
    return min(vals), " ".join(n for _, n in values_notes)


def _beats(a, b, what):
    return separation_ratio(a, b), note(a, b, what)


def _static_values(static: xr.Dataset, out: dict) -> None:
    """Table 1 and Fig. 5 (static ARA over K)."""
    Is = [float(i) for i in static.index_of_dispersion.values]
    S, W, P = C.STRONG_I, C.WEAK_I, C.NONBURSTY_I
    resp, m = static.response_s, static.mean_s
    cfg = {pol: _first(static, "config", policy=pol) for pol in ("qlen", "rand")}

    def s1(I, c):
        return resp.sel(index_of_dispersion=I, config=c).values

    def mean(I, c):
        return float(m.sel(index_of_dispersion=I, config=c))

    if P in Is:
        out[C.QLEN_BEATS_RAND_NONBURSTY] = _beats(s1(P, cfg["qlen"]), s1(P, cfg["rand"]), f"Qlen vs Rand, I = {P:g}")
    if S in Is:
        out[C.RAND_BEATS_QLEN_STRONG] = _beats(s1(S, cfg["rand"]), s1(S, cfg["qlen"]), f"Rand vs Qlen, I = {S:g}")
    if W in Is:
        out[C.RAND_BEATS_QLEN_WEAK] = _beats(s1(W, cfg["rand"]), s1(W, cfg["qlen"]), f"Rand vs Qlen, I = {W:g}")
    if {P, W, S} <= set(Is):
        out[C.BURSTINESS_DEGRADES_BOTH] = _worst([_beats(s1(lo, cfg[pol]), s1(hi, cfg[pol]),
                                                         f"{pol} I = {lo:g} vs {hi:g}")
                                                  for pol in ("qlen", "rand") for lo, hi in ((P, W), (W, S))])
    ara = _where(static, "config", system="ARA")
    ks = [int(static.k.sel(config=c)) for c in ara]
    at_k = dict(zip(ks, ara))
    if ks:
        out[C.STATIC_ARA_BEATS_BOTH] = (max(min(mean(I, c) for c in ara)
                                            / min(mean(I, cfg["qlen"]), mean(I, cfg["rand"])) for I in Is), None)
    N = int(static.attrs.get("n_sites", max(ks) if ks else 1))
    inner = [k for k in ks if 1 < k < N]
    if W in Is and inner:
        best_base = min(("qlen", "rand"), key=lambda pol: mean(W, cfg[pol]))
        kbest = min(inner, key=lambda k: mean(W, at_k[k]))
        out[C.SOME_K_BEATS_BOTH_WEAK] = _beats(s1(W, at_k[kbest]), s1(W, cfg[best_base]),
                                               f"ARA K = {kbest} vs {best_base}, I = {W:g}")
    if ks and {P, W, S} <= set(Is):
        kstar = {I: min(ks, key=lambda k: mean(I, at_k[k])) for I in Is}
        grows = kstar[P] <= kstar[W] <= kstar[S] and kstar[P] < kstar[S]
        out[C.BEST_K_GROWS] = (bool(grows), f"K* = {kstar[P]} (I = {P:g}), {kstar[W]} (I = {W:g}), "
                                            f"{kstar[S]} (I = {S:g}).")


def _fig8_values(online: xr.Dataset, out: dict) -> None:
    """Fig. 8: the phased workload, ARA_PRED and ARA_OPT over th_l (part a) and th_s (part b)."""
    o = online.response_s
    qlen, rand = (_first(online, "config", policy=pol) for pol in ("qlen", "rand"))
    opt1 = _first(online, "config", system="ARA_OPT", fig8_part="b", th_s=1)
    pred1 = _first(online, "config", system="ARA_PRED", fig8_part="b", th_s=1)
    if pred1 is not None and opt1 is not None:
        out[C.FIG8_QLEN_WORST] = _worst([_beats(o.sel(config=c).values, o.sel(config=qlen).values, f"{lab} vs Qlen")
                                         for c, lab in ((rand, "Rand"), (opt1, "ARA_OPT"), (pred1, "ARA_PRED"))])
    pred = _where(online, "config", system="ARA_PRED")
    a = sorted({int(online.th_l.sel(config=c)) for c in pred if online.fig8_part.sel(config=c) == "a"})
    b = sorted({int(online.th_s.sel(config=c)) for c in pred if online.fig8_part.sel(config=c) == "b"})
    robust = ([(_first(online, "config", system="ARA_PRED", fig8_part="a", th_l=x), f"a_thl{x}")
               for x in a if x > C.FIG8_TH_L_ABOVE]
              + [(_first(online, "config", system="ARA_PRED", fig8_part="b", th_s=x), f"b_ths{x}")
                 for x in b if x < C.FIG8_TH_S_BELOW])
    if robust:
        out[C.FIG8_ROBUST] = _worst([_beats(o.sel(config=c).values, o.sel(config=base).values, f"{what} vs {pol}")
                                     for c, what in robust for pol, base in (("qlen", qlen), ("rand", rand))])


def _table2_values(t2: xr.Dataset, reading: Table2Reading, out: dict) -> None:
    """Table 2 under ``reading`` (its th_l rule and, for part (a), its load scaling)."""
    t = t2.response_s
    cells = [str(c) for c, part in zip(t2.cell.values, t2.part.values) if part in ("a", "b", "c")]

    def config(pol):
        return _first(t2, "config", policy=pol, th_l_rule="" if pol in ("qlen", "rand") else reading.th_l)

    def c2(cell, pol):
        if reading.n_scaling == "arrivals" and t2.part.sel(cell=cell) == "a":
            cell = _first(t2, "cell", part="a_arrivals", n_sites=int(t2.n_sites.sel(cell=cell))) or cell
        return t.sel(cell=cell, config=config(pol)).values

    if cells:
        gaps = [(paired_gap_pct(c2(c, "ara_pred"), c2(c, "ara_opt")), c) for c in cells]
        (g, h), cw = max(gaps, key=lambda x: x[0][0] + x[0][1])
        out[C.PRED_WITHIN_FEW_PERCENT_OF_OPT] = (g + h, f"largest at {cw}: gap {g:+.2f} % +- {h:.2f} %.")
        out[C.PRED_BEATS_QLEN_AND_RAND] = _worst([_beats(c2(c, "ara_pred"), c2(c, b), f"{c} ARA_PRED vs {b}")
                                                  for c in cells for b in ("qlen", "rand")])
    ncells = [c for n in C.T2A_SITES for c in _where(t2, "cell", part="a", n_sites=n)[:1]]
    if len(ncells) == len(C.T2A_SITES):
        out[C.T2A_BASELINES_WORSEN_WITH_N] = _worst([_beats(c2(lo, pol), c2(hi, pol), f"{pol} {lo} vs {hi}")
                                                     for pol in ("rand", "qlen")
                                                     for lo, hi in zip(ncells, ncells[1:])])
        lo, hi = ncells[0], ncells[-1]
        vals = [_beats(c2(lo, pol), c2(hi, pol), f"{pol} {lo} vs {hi}") for pol in ("ara_opt", "ara_pred")]
        out[C.T2A_ARA_DOES_NOT_WORSEN] = (max(v for v, _ in vals), " ".join(n_ for _, n_ in vals))
    d0, d1 = (_first(t2, "cell", part="b", delay_s=d) for d in C.T2B_DELAYS_S)
    if d0 is not None and d1 is not None:
        out[C.QLEN_DEGRADES_WITH_DELAY] = _beats(c2(d0, "qlen"), c2(d1, "qlen"),
                                                 f"Qlen D = {C.T2B_DELAYS_S[0]:g} s vs {C.T2B_DELAYS_S[1]:g} s")
        r = np.array([float(t2.mean_s.sel(cell=c, config=config("rand"))) for c in _where(t2, "cell", part="b")])
        out[C.RAND_FLAT_IN_DELAY] = (float(100 * (r.max() - r.min()) / r.min()), None)
    high = _first(t2, "cell", part="c", utilization=C.T2C_LOAD)
    if high is not None:
        out[C.T2C_QLEN_BEATS_RAND_AT_80] = _beats(c2(high, "qlen"), c2(high, "rand"),
                                                  f"Qlen vs Rand, {int(round(100 * C.T2C_LOAD))} %")


def claim_values(static: xr.Dataset, online: xr.Dataset, t2: xr.Dataset, fig6a: xr.Dataset | None = None, *,
                 reading: Table2Reading = Table2Reading()) -> dict[str, tuple]:
    """``{claim_id: (value, note)}`` for every claim of :mod:`tieringlab.claims.ara` (value ``None`` where
    this run cannot compute it). ``reading`` picks the Table 2 configurations the values come from (the ledger
    uses the default; :func:`verdicts_by_reading` the others)."""
    out: dict[str, tuple] = {}
    Is = [float(i) for i in static.index_of_dispersion.values]
    _static_values(static, out)
    if fig6a is not None:
        I = fig6a.index_of_dispersion.values
        ch = fig6a.holds_change.values
        out[C.FIG6A_I_PEAKS_AT_CHANGES] = (float(I[ch].min() / I[~ch].max()),
                                           "I = " + ", ".join(f"{w} {v:.3g}" for w, v in zip(fig6a.window.values, I)))
    if "predictor_balanced_accuracy" in online:
        a = online.predictor_balanced_accuracy.values
        out[C.FIG6B_PREDICTOR_PHASED] = (float(np.mean(a)), f"mean over replications, 95 % +- {interval(a).half:.3f}.")
    if "predictor_balanced_accuracy" in static and C.STRONG_I in Is:
        a = static.predictor_balanced_accuracy.sel(index_of_dispersion=C.STRONG_I).values
        out[C.FIG6C_PREDICTOR_STRONG] = (float(np.mean(a)), f"mean over replications, 95 % +- {interval(a).half:.3f}.")
    _fig8_values(online, out)
    _table2_values(t2, reading, out)
    out[C.EC2_STUDY] = (None, None)
    m = static.mean_s
    for I in C.TABLE1_I:
        for pol in ("rand", "qlen"):
            cfg = _first(static, "config", policy=pol)
            out[C.table1_claim_id(pol, I)] = (float(m.sel(index_of_dispersion=I, config=cfg)) if I in Is else None,
                                              None)
    base = t2.attrs.get("base_cell", "")
    for pol in C.TABLE2_POLICIES:
        rule = "" if pol in ("qlen", "rand") else reading.th_l
        cfg = _first(t2, "config", policy=pol, th_l_rule=rule)
        out[C.absolute_claim_id("table2", pol, "base")] = (float(t2.mean_s.sel(cell=base, config=cfg)) if base
                                                           else None, None)
    return out


def claim_verdicts(values: dict[str, tuple]) -> pd.DataFrame:
    """The ledger's verdict for each claim value (id, kind, value, verdict), in the order of ``values``."""
    from tieringlab.claims import registry as claim_registry  # noqa: PLC0415

    reg = claim_registry()
    return pd.DataFrame([{"id": cid, "kind": reg[cid].kind, "value": v, "verdict": reg[cid].verdict(v)}
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
