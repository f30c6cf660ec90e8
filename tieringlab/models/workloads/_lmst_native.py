"""Compiled (numba) inner loops of :mod:`tieringlab.models.workloads.lmst`: placing the points of the
superposed Poisson pieces and labelling them, and summing the monitoring samples. Single passes over
arrays drawn by NumPy (the randomness stays in :mod:`~tieringlab.models.workloads.lmst`); as NumPy
expressions they needed a dozen gathers of ~10^7 elements per slot. Kept apart so that numba is imported
only when a slot is generated.
"""

from __future__ import annotations

import numpy as np

from tieringlab import native

#: indices known to be >= 0 are cast to unsigned: numba wraps a negative *signed* index (a compare and a
#: select per index, which LLVM cannot drop for computed or loaded indices); the two loops stay apart
#: (fused, they ran slower)
_U = np.uint64


@native.jit(cache=False, nogil=True)
def fill_pieces(e, u, cut, counts, rate, t0, time, alun):
    """Piece ``k = [cut[k], cut[k+1])`` holds ``counts[k]`` points: sorted times by exponential spacings
    (``U_(i) = S_i / S_{c+1}`` from the piece's ``c + 1`` unit exponentials of ``e``, consumed in order) and
    labels drawn with probabilities ``rate[k] / sum(rate[k])`` by Walker's alias method (Vose's
    construction; one uniform of ``u`` per point). Writes ``time`` (``t0`` + offset) and ``alun``."""
    n = rate.shape[1]
    prob = np.empty(n)
    alias = np.empty(n, np.int64)
    small = np.empty(n, np.int64)
    large = np.empty(n, np.int64)
    scaled = np.empty(n)
    pair = np.empty(2, np.int64)
    p = 0
    q = 0
    for k in range(counts.shape[0]):
        c = counts[k]
        if c > 0:
            tot = 0.0
            for i in range(n):
                tot += rate[k, i]
            ns = 0
            nl = 0
            for i in range(n):
                scaled[i] = rate[k, i] * n / tot
                alias[i] = i
                if scaled[i] < 1.0:
                    small[ns] = i
                    ns += 1
                else:
                    large[nl] = i
                    nl += 1
            while ns > 0 and nl > 0:
                ns -= 1
                s = small[ns]
                g = large[nl - 1]
                prob[s] = scaled[s]
                alias[s] = g
                scaled[g] = (scaled[g] + scaled[s]) - 1.0
                if scaled[g] < 1.0:
                    nl -= 1
                    small[ns] = g
                    ns += 1
            for i in range(nl):
                prob[large[i]] = 1.0
            for i in range(ns):
                prob[small[i]] = 1.0           # rounding leftovers
        norm = 0.0
        for i in range(c + 1):
            norm += e[p + i]
        run = 0.0
        lo_t = cut[k]
        width = cut[k + 1] - cut[k]
        for i in range(c):
            run += e[_U(p + i)]
            time[_U(q + i)] = t0 + (lo_t + (run / norm) * width)
            x = u[_U(q + i)] * n
            b = int(x)
            if b > n - 1:
                b = n - 1
            # the column or its alias, picked by indexing a pair: which one is a coin flip to the CPU, and
            # LLVM turns a select (or its arithmetic forms) with a loaded operand back into a branch
            # (measured: 10 ns per point, 1.8 ns with the pair)
            pair[0] = alias[_U(b)]
            pair[1] = b
            alun[_U(q + i)] = pair[_U((x - b) < prob[_U(b)])]
        p += c + 1
        q += c
    return time


@native.jit(cache=False, nogil=True)
def sample_rates(time, size, alun, t0, dt, k, out, counts):
    """``out[i, m]`` += bytes of ALUN i's I/Os in ``[t0 + m dt, t0 + (m + 1) dt)`` (last bin closed), then / dt;
    ``counts[i]`` += ALUN i's I/Os."""
    for j in range(time.shape[0]):
        m = int((time[j] - t0) / dt)
        if m > k - 1:
            m = k - 1
        a = _U(alun[j])
        out[a, _U(m)] += size[j]
        counts[a] += 1
    for i in range(out.shape[0]):
        for m in range(k):
            out[i, m] /= dt
    return out
