"""The ARA experiment's comparisons: "A beats B" by the paired per-replication gap (:mod:`tieringlab.stats`), with
the unpaired interval separation beside it, and the orderings of Table 1 and Fig. 8 under each setting of the
sensitivity study.

Every policy of one experiment sees the same jobs and seeds (common random numbers: replication r of A and of B
share their arrival stream and services), so "A beats B" (A's mean response time lower) is decided by the
**paired** relative gap ``g_r = 100 (B_r - A_r) / A_r`` of each replication r (:func:`tieringlab.stats.paired_gap_pct`):
A beats B when the 95 % Student-t interval of the ``g_r`` lies above 0 (:func:`tieringlab.stats.paired_above`).
A comparison's value is the lower end of that interval (in % of A's mean): > 0 exactly when A beats B under the
paired rule (an exact 0, from identical runs, beats nothing: the claims' checks are strict,
:func:`tieringlab.claims.above`). Comparisons across workloads (Table 1's I, Table 2's cells) pair
replication r of one with replication r of the other: still a valid paired test (the pairs are independent
across r), just with less correlation to remove.

The **unpaired** rule (before issue 28/34: the two marginal 95 % intervals must separate) is kept as a second
reading of every such row: its value is B's lower 95 % end minus A's upper end, in % of A's mean
(:func:`tieringlab.stats.relative_separation`), > 0 exactly when the intervals separate. Both values are on the
same scale, so the claim's one check decides both.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
import scipy.stats
import xarray as xr

from tieringlab.claims import ara as C
from tieringlab.stats import mean_ci, paired_gap_pct, relative_separation

__all__ = ["Comparison", "RULES", "compare", "gaps", "verdict", "note", "sensitivity_table",
           "orderings_never_reproduced", "replications_for_relative_ci"]

#: The verdict rules of an ordering: the paired gap's interval (the ledger's), the marginal intervals' separation.
RULES = ("paired", "unpaired")


class Comparison(NamedTuple):
    """One "A beats B" comparison: ``value`` (lower 95 % end of the paired gap, % of A), ``unpaired`` (the
    intervals' separation, % of A), ``gap`` and ``half`` (the paired gap's mean and half-width, %), ``samples``
    (the per-replication gaps, %), ``note`` (in words) and ``paper_gap`` (the thesis' gap for the same pair, %;
    None where the thesis prints no number)."""

    value: float
    unpaired: float
    gap: float
    half: float
    samples: tuple[float, ...]
    note: str
    paper_gap: float | None = None


def gaps(a, b) -> np.ndarray:
    """The per-replication relative gaps ``100 (b - a) / a`` (%) of paired samples (last axis: replications)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return 100.0 * (b - a) / a


def compare(a, b, what: str, paper_gap: float | None = None) -> Comparison:
    """"``a`` beats ``b``" (``a`` lower) over paired replications (last axis) under both rules."""
    g, h = paired_gap_pct(b, a)
    unpaired = 100.0 * relative_separation(b, a, higher=True)
    v = g - h
    word = ("beats (paired interval above 0)" if v > 0 else
            "REVERSED (paired interval below 0)" if g + h < 0 else "undecided (paired interval holds 0)")
    sep = "separate" if unpaired > 0 else "overlap"
    paper = f"; thesis {paper_gap:+.1f} %" if paper_gap is not None else ""
    return Comparison(float(v), float(unpaired), float(g), float(h), tuple(float(x) for x in gaps(a, b)),
                      f"{what}: {word}, paired gap {g:+.1f} % +- {h:.1f} %; marginal intervals {sep} "
                      f"({unpaired:+.1f} %){paper}.", paper_gap)


def verdict(a, b, rule: str = "paired") -> str:
    """"yes" (``a`` beats ``b``), "REVERSED" (``b`` beats ``a``) or "undecided", over the replications (last axis),
    under ``rule``: "paired" (the ledger's: the paired gap's 95 % interval lies on one side of 0) or "unpaired"
    (the two marginal 95 % intervals separate)."""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}; got {rule!r}")
    if rule == "paired":
        g, h = paired_gap_pct(b, a)
        return "yes" if g - h > 0 else "REVERSED" if g + h < 0 else "undecided"
    if relative_separation(b, a, higher=True) > 0:
        return "yes"
    return "REVERSED" if relative_separation(a, b, higher=True) > 0 else "undecided"


def note(a, b, what: str) -> str:
    """The comparison in words (both rules)."""
    return compare(a, b, what).note


def _all(vs) -> str:
    """"yes" when every verdict is, "REVERSED" when any is, else "undecided"."""
    return "yes" if all(v == "yes" for v in vs) else "REVERSED" if "REVERSED" in vs else "undecided"


def sensitivity_table(sens: xr.Dataset, rule: str = "paired") -> pd.DataFrame:
    """Which settings reproduce which of Table 1's and Fig. 8's orderings: per setting, "yes" (the thesis'
    direction under ``rule``: by default the paired gap's interval, :func:`verdict`), "REVERSED" (the other
    way) or "undecided"; and Rand's mean on the phased workload (Table 2's 1109.33 s). Table 1's workloads are
    selected by their index of dispersion (:data:`tieringlab.claims.ara.TABLE1_I`)."""
    Is = [float(i) for i in sens.index_of_dispersion.values]
    S, W, P = C.STRONG_I, C.WEAK_I, C.NONBURSTY_I
    rows = []
    for s in sens.setting.values:
        x = sens.sel(setting=s)
        t1 = lambda I, pol, x=x: x.t1_response_s.sel(index_of_dispersion=I, t1_policy=pol).values  # noqa: E731
        f8 = lambda pol, x=x: x.f8_response_s.sel(f8_policy=pol).values  # noqa: E731
        row = {c: x[c].item() for c in ("mean_interarrival_s", "mean_service_s", "service_scv", "rate_ratio",
                                        "t1_rate_ratio", "jobs_in_burst", "default") if c in x.coords}
        if P in Is:
            row["T1 non-bursty: Qlen < Rand"] = verdict(t1(P, "qlen"), t1(P, "rand"), rule)
        if W in Is:
            row["T1 weak: Rand < Qlen"] = verdict(t1(W, "rand"), t1(W, "qlen"), rule)
        if S in Is:
            row["T1 strong: Rand < Qlen"] = verdict(t1(S, "rand"), t1(S, "qlen"), rule)
        if len(Is) > 1:
            order = sorted(Is)
            row["T1 burstiness degrades both"] = _all([verdict(t1(lo, pol), t1(hi, pol), rule)
                                                       for pol in ("qlen", "rand") for lo, hi in zip(order, order[1:])])
        row["F8 Qlen worst"] = _all([verdict(f8(o), f8("qlen"), rule) for o in ("rand", "ara_opt", "ara_pred")])
        for pol, lab in (("ara_opt", "ARA_OPT"), ("ara_pred", "ARA_PRED")):
            row[f"F8 {lab} beats Qlen and Rand"] = _all([verdict(f8(pol), f8(b), rule) for b in ("qlen", "rand")])
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


def replications_for_relative_ci(samples, target: float = 0.05, max_n: int = 100_000) -> int:
    """The fewest replications n whose 95 % Student-t half-width ``t(0.975, n - 1) sd / sqrt(n)`` is at most
    ``target`` times the mean, with the per-replication sd and the mean estimated from ``samples`` (>= 2 values,
    mean > 0): how many replications a relative-interval target (params: Table 2's Rand within 5 %) needs."""
    x = np.asarray(samples, float)
    if x.ndim != 1 or x.size < 2 or not np.all(np.isfinite(x)):
        raise ValueError(f"samples must be >= 2 finite replications; got shape {x.shape}")
    if not 0 < target < 1:
        raise ValueError(f"target must lie in (0, 1) (a share of the mean); got {target!r}")
    m, sd = float(x.mean()), float(x.std(ddof=1))
    if not m > 0:
        raise ValueError(f"samples must have a positive mean; got {m!r}")
    for n in range(2, max_n + 1):
        if scipy.stats.t.ppf(0.975, n - 1) * sd / np.sqrt(n) <= target * m:
            return n
    raise ValueError(f"more than max_n = {max_n} replications needed")
