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

Sizing and noise floors:

- :func:`power` / :func:`replications_for`: the power of the two-sided paired (one-sample) t-test at :data:`LEVEL`
  to detect a standardized effect ``effect / sd`` with ``n`` replications (noncentral t), and the smallest ``n``
  reaching :data:`POWER`. An experiment sizes its replications from the effect its claims must detect;
- an "up to" or "best case" claim is a maximum over conditions, which is positive even between two identical
  systems. :func:`best_case` computes such a statistic both ways (A over B, and the reverse, B over A);
  :func:`sign_flip_null` gives its permutation null under pairing (each replication's two runs swapped at
  random); :func:`beats_noise_floor` says whether the forward value exceeds both.

``mean_ci`` is the primitive; the others are expressions of it, each written once. They are plain numpy
(float64) and return Python floats or bools where a claim needs one number.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.stats

__all__ = ["Interval", "mean_ci", "interval", "separated", "separation_ratio", "relative_separation",
           "paired_diff", "paired_gap_pct", "paired_above", "fmt_ci", "LEVEL", "POWER", "power",
           "replications_for", "replications_observed", "best_case", "sign_flip_null", "beats_noise_floor"]

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


#: The power every replication count is sized for (the chance of detecting the effect a claim must detect).
POWER = 0.8


def power(effect: float, sd: float, n: int, level: float = LEVEL) -> float:
    """Power of the two-sided one-sample (paired) t-test at confidence ``level`` to detect a mean ``effect`` in
    replications (or paired differences) with standard deviation ``sd``, from ``n`` of them: the noncentral-t
    probability of rejecting 0. ``n`` < 2 has no test (power 0)."""
    if n < 2:
        return 0.0
    if sd <= 0:
        return 1.0 if effect != 0 else 0.0
    df = n - 1
    crit = scipy.stats.t.ppf(1 - (1 - level) / 2, df)
    nc = abs(effect) / sd * math.sqrt(n)
    near, far = float(scipy.stats.nct.sf(crit, df, nc)), float(scipy.stats.nct.cdf(-crit, df, nc))
    # scipy's noncentral t returns nan for the far tail at a large standardized effect and few degrees of
    # freedom (e.g. 13.31 +- 1.918 at n = 2), where that tail is below any float: it counts 0
    return near + (0.0 if math.isnan(far) else far)


def replications_for(effect: float, sd: float, target: float = POWER, level: float = LEVEL,
                     n_max: int = 10_000) -> int:
    """The smallest number of replications (paired differences) whose two-sided t-test at ``level`` detects a
    mean ``effect`` with standard deviation ``sd`` with probability ``target`` (:func:`power`). A ``ValueError``
    when ``n_max`` is not enough (an effect too small to detect at any affordable replication count)."""
    if not 0 < target < 1:
        raise ValueError(f"target power must be in (0, 1); got {target!r}")
    if effect == 0:
        raise ValueError("an effect of 0 cannot be detected; give the smallest effect the claim must detect")
    n = 2
    while power(effect, sd, n, level) < target:
        n += 1
        if n > n_max:
            raise ValueError(f"detecting an effect of {effect:g} at sd {sd:g} needs more than {n_max} replications")
    return n


def replications_observed(a, b=None) -> float:
    """:func:`replications_for` (power :data:`POWER`) at the effect and standard deviation a run observed: of the
    paired differences ``a`` (``b`` None), or of two independent samples ``a``, ``b`` (effect: the difference of
    their means; sd: sqrt(sd_a^2 + sd_b^2), that of a difference of two independent draws). ``inf`` where no
    affordable count detects it (a zero or tiny effect), ``nan`` without a standard deviation (under two values)."""
    a = np.asarray(a, float)
    if b is None:
        if a.size < 2:
            return math.nan
        effect, sd = float(a.mean()), float(a.std(ddof=1))
    else:
        b = np.asarray(b, float)
        if min(a.size, b.size) < 2:
            return math.nan
        effect, sd = float(a.mean() - b.mean()), float(np.hypot(a.std(ddof=1), b.std(ddof=1)))
    if not (math.isfinite(effect) and math.isfinite(sd)):
        return math.nan
    if effect == 0.0:
        return math.inf
    try:
        return float(replications_for(effect, sd))
    except ValueError:
        return math.inf


def best_case(a, b, gain=None) -> tuple[float, float]:
    """An "up to" statistic both ways: ``(max gain of a over b, max gain of b over a)`` over the conditions.

    ``a``, ``b``: paired arrays ``(conditions, ...)`` (one value per condition and replication; replications are
    averaged first). ``gain(x, y)`` is the claim's gain of ``x`` over ``y`` (default: the relative increase
    ``100 (x - y) / y``, in %). The reverse value is the noise floor of the forward one: between two identical
    systems both are about equal and positive."""
    gain = gain or (lambda x, y: 100.0 * (x - y) / y)
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    if a.shape != b.shape:
        raise ValueError(f"best_case: a and b must be paired (same shape); got {a.shape} and {b.shape}")
    ma = a.reshape(a.shape[0], -1).mean(axis=1) if a.ndim > 1 else a
    mb = b.reshape(b.shape[0], -1).mean(axis=1) if b.ndim > 1 else b
    return float(np.max(gain(ma, mb))), float(np.max(gain(mb, ma)))


def sign_flip_null(a, b, gain=None, n: int = 999, seed: int = 0, q: float = 0.95) -> float:
    """The ``q`` quantile of the forward :func:`best_case` statistic under the paired permutation null: in each of
    ``n`` draws, each replication's (a, b) pair of every condition is swapped with probability 1/2 (the same swap
    for every condition of that replication: they share its seed). ``a``, ``b``: ``(conditions, replications)``.
    Deterministic for a given ``seed``."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    if a.ndim != 2 or a.shape != b.shape:
        raise ValueError(f"sign_flip_null: a and b must be paired (conditions, replications); got {a.shape}, "
                         f"{b.shape}")
    rng = np.random.default_rng(seed)
    swap = rng.random((n, a.shape[1])) < 0.5
    stats = np.empty(n)
    for i in range(n):
        x = np.where(swap[i], b, a)
        y = np.where(swap[i], a, b)
        stats[i] = best_case(x, y, gain)[0]
    return float(np.quantile(stats, q))


def beats_noise_floor(a, b, gain=None, n: int = 999, seed: int = 0) -> tuple[bool, dict[str, float]]:
    """Whether the forward "up to" statistic of ``a`` over ``b`` exceeds both its reverse and the 95 % quantile of
    its paired permutation null (:func:`best_case`, :func:`sign_flip_null`); with the three numbers."""
    fwd, rev = best_case(a, b, gain)
    null = sign_flip_null(a, b, gain, n=n, seed=seed)
    return bool(fwd > rev and fwd > null), {"forward": fwd, "reverse": rev, "null_q95": null}
