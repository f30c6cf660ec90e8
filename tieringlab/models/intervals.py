"""Confidence intervals over replications (every experiment that runs seeds reports them).

:func:`mean_ci`: the mean and the half-width of the two-sided 95 % Student-t interval over one axis;
two configurations whose intervals do not overlap differ at that level (a "beats" claim needs this,
not the point estimates).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.stats

__all__ = ["mean_ci"]


def mean_ci(x, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """Mean and the half-width of the 95 % Student-t confidence interval over ``axis`` (replications)."""
    x = np.asarray(x, np.float64)
    r = x.shape[axis]
    m = x.mean(axis=axis)
    half = scipy.stats.t.ppf(0.975, r - 1) * x.std(axis=axis, ddof=1) / math.sqrt(r) if r > 1 else np.nan * m
    return m, half
