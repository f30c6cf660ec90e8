"""Interval statistics over replications: the one module every experiment and claim uses.

Every replicated run reports the mean and the half-width of the two-sided 95 % Student-t interval over its
replications (seeds). Comparisons come in two forms, and a claim says which it uses:

- **unpaired**: the two configurations' intervals must separate (:func:`separated`,
  :func:`separation_ratio`, :func:`relative_separation`). Right when the runs share nothing;
- **paired**: where both configurations ran on the same workload and seeds (common random numbers), the
  per-replication difference (:func:`paired_diff`) or relative gap (:func:`paired_gap_pct`) has its own,
  much narrower interval; "A beats B" is that interval lying on one side of 0 (:func:`paired_above`).

Parameters of a comparison travel as coordinates of labelled results (``res.sel(policy=..., k=...)``):
nothing here parses a label.

``mean_ci`` is the primitive; the others are expressions of it, each written once. They are plain numpy
(float64) and return Python floats or bools where a claim needs one number.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.stats

__all__ = ["Interval", "mean_ci", "interval", "separated", "separation_ratio", "relative_separation",
           "paired_diff", "paired_gap_pct", "paired_above", "fmt_ci", "LEVEL"]

#: The confidence level of every interval the package reports (two-sided), and its Student-t quantile.
LEVEL = 0.95
_QUANTILE = 0.975


class Interval(NamedTuple):
    """A mean and the half-width of its 95 % interval (``lo``/``hi`` are the ends)."""

    mean: float
    half: float

    @property
    def lo(self) -> float:
        return self.mean - self.half

    @property
    def hi(self) -> float:
        return self.mean + self.half


def mean_ci(x, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """Mean and the half-width of the 95 % Student-t confidence interval over ``axis`` (replications).

    One replication has no interval: its half-width is NaN (so no comparison built on it passes).
    """
    x = np.asarray(x, np.float64)
    r = x.shape[axis]
    m = x.mean(axis=axis)
    half = scipy.stats.t.ppf(_QUANTILE, r - 1) * x.std(axis=axis, ddof=1) / math.sqrt(r) if r > 1 else np.nan * m
    return m, half


def interval(x) -> Interval:
    """:func:`mean_ci` of a 1-D sample (replications) as an :class:`Interval` of floats."""
    m, h = mean_ci(np.asarray(x, float))
    return Interval(float(m), float(h))


def separated(a, b) -> bool:
    """True when the 95 % interval of ``a`` (replications) lies entirely above that of ``b`` (unpaired)."""
    am, ah = mean_ci(np.asarray(a, float))
    bm, bh = mean_ci(np.asarray(b, float))
    return bool(am - ah > bm + bh)


def separation_ratio(a, b) -> float:
    """How far ``a``'s 95 % interval lies below ``b``'s: ``(mean_b - ci_b) / (mean_a + ci_a)`` over the
    replications (last axis); > 1 exactly when the intervals separate with ``a`` lower (for positive means)."""
    ma, ha = mean_ci(np.asarray(a, float))
    mb, hb = mean_ci(np.asarray(b, float))
    return float((mb - hb) / (ma + ha))


def relative_separation(a, b, higher: bool, axis: int = -1) -> float:
    """The gap between two samples' 95 % intervals relative to ``b``'s mean: for ``higher`` the lower end of
    ``a``'s interval minus the upper end of ``b``'s (> 0: ``a`` above ``b`` with separated intervals), else the
    lower end of ``b``'s minus the upper end of ``a``'s. NaN when ``b``'s mean is 0."""
    ma, ha = mean_ci(a, axis=axis)
    mb, hb = mean_ci(b, axis=axis)
    g = (ma - ha) - (mb + hb) if higher else (mb - hb) - (ma + ha)
    return float(g / abs(mb)) if mb != 0 else float("nan")


def paired_diff(a, b) -> tuple[float, float]:
    """Mean and 95 % half-width of the per-replication difference ``a - b`` (paired by replication)."""
    m, h = mean_ci(np.asarray(a) - np.asarray(b))
    return float(m), float(h)


def paired_gap_pct(a, b) -> tuple[float, float]:
    """Mean and 95 % half-width of the paired relative gap ``100 (a - b) / b`` over replications."""
    g = 100.0 * (np.asarray(a, float) - np.asarray(b, float)) / np.asarray(b, float)
    m, h = mean_ci(g)
    return float(m), float(h)


def paired_above(diff) -> bool:
    """True when the 95 % interval of the paired differences ``diff`` (one per replication) lies above 0."""
    m, h = mean_ci(np.asarray(diff, float))
    return bool(m - h > 0)


def fmt_ci(x, scale: float = 1.0, unit: str = "", axis: int = -1) -> str:
    """``"mean ± half"`` of ``x * scale`` over ``axis`` (4 and 2 significant digits), with ``unit``."""
    m, hw = mean_ci(np.asarray(x) * scale, axis=axis)
    return f"{m:.4g} ± {hw:.2g}{unit}"
