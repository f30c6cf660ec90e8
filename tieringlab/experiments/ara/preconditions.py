"""What the ARA claims' mechanisms need from OUR workload, measured on the arrival streams the grids run.

Each function measures one property per replication (stream); :mod:`.ledger` turns them into the precondition
rows of :mod:`tieringlab.claims.ara` (thresholds and reasons there, fixed from the thesis before the first run):

- :func:`herding_exposure`: the share of burst-phase jobs that arrive in an information-delay window (the
  dispatcher's refresh windows ``[w D, (w + 1) D)``, :func:`tieringlab.policies.ara.window_index`) that already
  holds an earlier arrival: the jobs a greedy balancer assigns on a view that misses at least one assignment
  of the same window. Sec. 3.1's mechanism ("the load balancer always submits the bursty arrivals to that
  top-ranked site within the delay period") needs this to be the typical burst job;
- :func:`measured_index_of_dispersion`: thesis Eq. 2 on a stream's inter-arrival times
  (:func:`tieringlab.models.burstiness.index_of_dispersion`, its default truncation), i.e. how bursty the stream
  we ran actually is, beside the I it was built for;
- :func:`burstiness_order_ratio`: the smallest ratio between consecutive workloads' measured I (Table 1's three
  workloads in the thesis' order of burstiness);
- the predictor's balanced accuracy is :func:`tieringlab.experiments.ara.section.balanced_accuracy`.
"""

from __future__ import annotations

import numpy as np

from tieringlab.models import burstiness
from tieringlab.policies.ara import window_index

__all__ = ["herding_exposure", "measured_index_of_dispersion", "burstiness_order_ratio"]


def herding_exposure(arrivals, burst, delay_s: float) -> np.ndarray:
    """Per stream (last axis: jobs, arrival-ordered): the share of burst-phase jobs (``burst`` True) whose
    delay window ``floor(a / D)`` already holds an earlier arrival (of either phase). NaN for a stream without
    burst jobs. ``arrivals``, ``burst``: ``(n,)`` or ``(streams, n)``."""
    a = np.atleast_2d(np.asarray(arrivals, float))
    b = np.atleast_2d(np.asarray(burst, bool))
    if a.shape != b.shape:
        raise ValueError(f"arrivals and burst must have one flag per job; got {a.shape} and {b.shape}")
    if np.any(np.diff(a, axis=-1) < 0):
        raise ValueError("arrivals must be sorted along the last axis")
    w = window_index(a, float(delay_s))
    follows = np.zeros(a.shape, bool)
    follows[:, 1:] = w[:, 1:] == w[:, :-1]          # an earlier job of the same window exists
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (follows & b).sum(-1) / b.sum(-1)
    return out if np.ndim(arrivals) > 1 else out[0]


def measured_index_of_dispersion(arrivals) -> np.ndarray:
    """Per stream (last axis: jobs): thesis Eq. 2 on the inter-arrival times (the first job's arrival counted
    from 0), :func:`tieringlab.models.burstiness.index_of_dispersion` with its default truncation."""
    a = np.atleast_2d(np.asarray(arrivals, float))
    x = np.diff(a, axis=-1, prepend=0.0)
    out = np.array([float(burstiness.index_of_dispersion(row)) for row in x])
    return out if np.ndim(arrivals) > 1 else out[0]


def burstiness_order_ratio(measured: dict[float, float], order) -> float:
    """The smallest ratio ``I_measured(more bursty) / I_measured(less bursty)`` over consecutive workloads of
    ``order`` (their nominal I, from least to most bursty); ``measured``: nominal I -> measured I. NaN when a
    workload is missing."""
    if any(i not in measured for i in order) or len(order) < 2:
        return float("nan")
    return float(min(measured[hi] / measured[lo] for lo, hi in zip(order, order[1:])))
