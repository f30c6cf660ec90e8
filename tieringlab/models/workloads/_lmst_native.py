"""Compiled (numba) inner loops of :mod:`tieringlab.models.workloads.lmst`: placing the points of the
superposed Poisson pieces and labelling them, and summing the monitoring samples. Single passes over
arrays drawn by NumPy (the randomness stays in :mod:`~tieringlab.models.workloads.lmst`); as NumPy
expressions they needed a dozen gathers of ~10^7 elements per slot. Kept apart so that numba is imported
only when a slot is generated.
"""

from __future__ import annotations

from numba import njit


@njit(cache=False, nogil=True)
def fill_pieces(e, u, cut, counts, cum, t0, time, alun):
    """Piece ``k = [cut[k], cut[k+1])`` holds ``counts[k]`` points: sorted times by exponential spacings
    (``U_(i) = S_i / S_{c+1}`` from the piece's ``c + 1`` unit exponentials of ``e``, consumed in order) and
    labels drawn from the piece's cumulative rates ``cum[k]`` with the uniforms ``u`` (the first ALUN whose
    cumulative rate exceeds ``u * total``). Writes ``time`` (``t0`` + offset) and ``alun``."""
    p = 0
    q = 0
    n_alun = cum.shape[1]
    for k in range(counts.shape[0]):
        c = counts[k]
        norm = 0.0
        for i in range(c + 1):
            norm += e[p + i]
        run = 0.0
        lo_t = cut[k]
        width = cut[k + 1] - cut[k]
        tot = cum[k, n_alun - 1]
        for i in range(c):
            run += e[p + i]
            time[q + i] = t0 + (lo_t + (run / norm) * width)
            x = u[q + i] * tot
            lo = 0
            hi = n_alun - 1
            while lo < hi:                      # first index with cum > x
                mid = (lo + hi) // 2
                if cum[k, mid] > x:
                    hi = mid
                else:
                    lo = mid + 1
            alun[q + i] = lo
        p += c + 1
        q += c
    return time


@njit(cache=False, nogil=True)
def sample_rates(time, size, alun, t0, dt, k, out):
    """``out[i, m]`` += bytes of ALUN i's I/Os in ``[t0 + m dt, t0 + (m + 1) dt)`` (last bin closed), then / dt."""
    for j in range(time.shape[0]):
        m = int((time[j] - t0) / dt)
        if m > k - 1:
            m = k - 1
        out[alun[j], m] += size[j]
    for i in range(out.shape[0]):
        for m in range(k):
            out[i, m] /= dt
    return out
