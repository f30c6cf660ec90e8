"""The ARA experiment's comparisons: "A beats B" by separated 95 % intervals (:mod:`tieringlab.stats`), and
the orderings of Table 1 and Fig. 8 under each setting of the sensitivity study.

A comparison's value is :func:`tieringlab.stats.separation_ratio` (B's lower 95 % end over A's upper end, > 1
exactly when A's interval lies below B's); every policy sees the same jobs, so each note also gives the paired
relative gap (:func:`tieringlab.stats.paired_gap_pct`), though the verdict follows the unpaired rule.
"""

from __future__ import annotations

import pandas as pd
import xarray as xr

from tieringlab.claims import ara as C
from tieringlab.stats import mean_ci, paired_gap_pct, separation_ratio

__all__ = ["verdict", "note", "sensitivity_table", "orderings_never_reproduced"]


def verdict(a, b) -> str:
    """"yes" (A's 95 % interval below B's), "REVERSED" (B's below A's) or "undecided" (they overlap), over the
    replications (last axis) of ``a`` and ``b``."""
    if separation_ratio(a, b) > 1:
        return "yes"
    return "REVERSED" if separation_ratio(b, a) > 1 else "undecided"


def note(a, b, what: str) -> str:
    """The verdict in words and the paired difference's interval (common random numbers)."""
    g, h = paired_gap_pct(b, a)
    word = {"yes": "intervals separate", "REVERSED": "REVERSED: the other side's interval lies below",
            "undecided": "undecided: the intervals overlap"}[verdict(a, b)]
    return f"{what}: {word}; paired gap {g:+.1f} % +- {h:.1f} %."


def _all(vs) -> str:
    """"yes" when every verdict is, "REVERSED" when any is, else "undecided"."""
    return "yes" if all(v == "yes" for v in vs) else "REVERSED" if "REVERSED" in vs else "undecided"


def sensitivity_table(sens: xr.Dataset) -> pd.DataFrame:
    """Which settings reproduce which of Table 1's and Fig. 8's orderings: per setting, "yes" (the 95 %
    intervals separate in the thesis' direction), "REVERSED" (they separate the other way) or
    "undecided"; and Rand's mean on the phased workload (Table 2's 1109.33 s). Table 1's workloads are
    selected by their index of dispersion (:data:`tieringlab.claims.ara.TABLE1_I`)."""
    Is = [float(i) for i in sens.index_of_dispersion.values]
    S, W, P = C.STRONG_I, C.WEAK_I, C.NONBURSTY_I
    rows = []
    for s in sens.setting.values:
        x = sens.sel(setting=s)
        t1 = lambda I, pol, x=x: x.t1_response_s.sel(index_of_dispersion=I, t1_policy=pol).values  # noqa: E731
        f8 = lambda pol, x=x: x.f8_response_s.sel(f8_policy=pol).values  # noqa: E731
        row = {c: x[c].item() for c in ("mean_interarrival_s", "mean_service_s", "service_scv", "rate_ratio",
                                        "jobs_in_burst", "default")}
        if P in Is:
            row["T1 non-bursty: Qlen < Rand"] = verdict(t1(P, "qlen"), t1(P, "rand"))
        if W in Is:
            row["T1 weak: Rand < Qlen"] = verdict(t1(W, "rand"), t1(W, "qlen"))
        if S in Is:
            row["T1 strong: Rand < Qlen"] = verdict(t1(S, "rand"), t1(S, "qlen"))
        if len(Is) > 1:
            order = sorted(Is)
            row["T1 burstiness degrades both"] = _all([verdict(t1(lo, pol), t1(hi, pol)) for pol in ("qlen", "rand")
                                                       for lo, hi in zip(order, order[1:])])
        row["F8 Qlen worst"] = _all([verdict(f8(o), f8("qlen")) for o in ("rand", "ara_opt", "ara_pred")])
        for pol, lab in (("ara_opt", "ARA_OPT"), ("ara_pred", "ARA_PRED")):
            row[f"F8 {lab} beats Qlen and Rand"] = _all([verdict(f8(pol), f8(b)) for b in ("qlen", "rand")])
        g, h = paired_gap_pct(f8("ara_pred"), f8("ara_opt"))
        row["F8 ARA_PRED within 1 % of ARA_OPT"] = ("yes" if g + h <= C.PRED_OPT_GAP_PCT else
                                                   "REVERSED" if g - h > C.PRED_OPT_GAP_PCT else "undecided")
        m, hw = mean_ci(f8("rand"))
        row["phased Rand (s)"] = f"{m:.4g} +- {hw:.2g}"
        rows.append(row)
    return pd.DataFrame(rows)


def orderings_never_reproduced(table: pd.DataFrame) -> list[str]:
    """The ordering columns of :func:`sensitivity_table` that no setting reproduces ("yes" nowhere)."""
    cols = [c for c in table.columns if c.startswith(("T1 ", "F8 "))]
    return [c for c in cols if not (table[c] == "yes").any()]
