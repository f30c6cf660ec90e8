"""Compiled (numba) inner loops of :mod:`tieringlab.models.workloads.lmst`: placing Poisson points in their
segments and summing the monitoring samples. Both are single passes over arrays drawn by NumPy (the
randomness stays in :mod:`~tieringlab.models.workloads.lmst`); as NumPy expressions they needed a dozen
gathers of ~10^7 elements per slot. Kept apart so that numba is imported only when a slot is generated.
"""

from __future__ import annotations

from numba import njit


@njit(cache=False, nogil=True)
def segments_to_times(e, seg_start, seg_len, counts, out):
    """``out``: for each segment g, ``counts[g]`` sorted points in ``[seg_start[g], seg_start[g] + seg_len[g])``
    by exponential spacings, ``U_(i) = S_i / S_{c+1}`` with ``S`` the running sums of the ``c + 1`` unit
    exponentials of ``e`` that belong to the segment (consumed in order)."""
    p = 0
    q = 0
    for g in range(counts.shape[0]):
        c = counts[g]
        norm = 0.0
        for i in range(c + 1):
            norm += e[p + i]
        run = 0.0
        for i in range(c):
            run += e[p + i]
            out[q + i] = seg_start[g] + (run / norm) * seg_len[g]
        p += c + 1
        q += c
    return out


@njit(cache=False, nogil=True)
def sample_rates(time, size, bounds, t0, dt, k, out):
    """``out[i, m]`` += bytes of ALUN i's I/Os in ``[t0 + m dt, t0 + (m + 1) dt)`` (last bin closed), then / dt."""
    for i in range(bounds.shape[0] - 1):
        for j in range(bounds[i], bounds[i + 1]):
            m = int((time[j] - t0) / dt)
            if m > k - 1:
                m = k - 1
            out[i, m] += size[j]
    for i in range(out.shape[0]):
        for m in range(k):
            out[i, m] /= dt
    return out
