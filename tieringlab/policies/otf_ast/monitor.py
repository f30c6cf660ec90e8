"""OTF-AST's monitor and hot-interval rule (notes Sec. 1.4 and 2.2) as array operations over the
``(interval, sub-LUN)`` count matrix, every interval at once (no loop over requests or intervals)."""

from __future__ import annotations

import numpy as np

from tieringlab.policies.otf_ast.parameters import OtfAstSettings

__all__ = ["interval_counts", "hot_matrix", "history_counts"]


def interval_counts(sub, time, n_sub: int, t_s: int, window_s: int, n_intervals: int):
    """``cnt[k, s]``: user IOs to sub-LUN ``s`` in the ``window_s`` seconds before the end of interval ``k``
    (``(k + 1) t_s``), for every interval at once: per-second counts, a prefix sum, two gathers."""
    n_sec = int(n_intervals) * int(t_s)
    sec = np.minimum(np.asarray(time) // 1, n_sec - 1).astype(np.int64)
    per_sec = np.zeros((n_sec + 1, n_sub), np.int64)
    np.add.at(per_sec, (sec + 1, np.asarray(sub)), 1)
    P = np.cumsum(per_sec, axis=0)                       # P[x] = IOs in seconds [0, x)
    ends = (np.arange(int(n_intervals)) + 1) * int(t_s)
    return P[ends] - P[np.maximum(ends - int(window_s), 0)]


def hot_matrix(cnt, p: OtfAstSettings):
    """``(hot[k, s], concentrated[k])`` for every interval at once (notes Sec. 1.4 and 2.2).

    - n1 ``top_n``: ``S_k`` = the ``n`` sub-LUNs with the largest ``cnt`` (count > 0, ties to the lower
      index); concentrated when ``sum_{S_k} cnt >= (i/100) sum cnt``; hot = ``S_k``.
    - n2 ``prefix_to_i``: the smallest prefix of the sorted counts reaching ``i`` % of the IOs;
      concentrated when it has at most ``n`` members; hot = that prefix.
    - n3 ``pct_of_subluns``: n1 with ``n`` read as a percentage of the sub-LUNs (20 % of 300 = 60).
    - i2 ``i_reading="absolute"``: a top-n sub-LUN is hot when it received at least ``i`` IOs.
    - m2 ``total_floor``: an interval with fewer than ``m`` IOs is never concentrated; m3
      ``sublun_floor``: a sub-LUN needs at least ``m`` IOs to be hot.

    numpy: one stable sort per row dominates, over a small matrix (intervals x 300), so there is nothing
    for jit to gain and its per-shape compilation would cost seconds.
    """
    cnt = np.asarray(cnt)
    K, S = cnt.shape
    order = np.argsort(-cnt, axis=1, kind="stable")      # descending counts, ties to the lower index
    srt = np.take_along_axis(cnt, order, axis=1)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(S), (K, S)), axis=1)
    total = cnt.sum(axis=1)
    n = int(p.n_top) if p.hot_rule != "pct_of_subluns" else max(1, int(round(p.n_top / 100.0 * S)))
    n = min(n, S)
    if p.hot_rule == "prefix_to_i" and p.i_reading == "percent":
        cum = np.cumsum(srt, axis=1)
        need = (p.i_pct / 100.0) * total
        prefix = np.sum(cum < need[:, None], axis=1) + 1   # members of the smallest prefix reaching i %
        conc = (total > 0) & (prefix <= n)
        hot = conc[:, None] & (rank < prefix[:, None]) & (cnt > 0)
    elif p.i_reading == "absolute":
        hot = (rank < n) & (cnt >= p.i_pct) & (cnt > 0)
        conc = (total > 0) & hot.any(axis=1)
    else:
        top = srt[:, :n].sum(axis=1)
        conc = (total > 0) & (top >= (p.i_pct / 100.0) * total)
        hot = conc[:, None] & (rank < n) & (cnt > 0)
    if p.m_reading == "total_floor":
        conc = conc & (total >= p.m_window)
        hot = hot & conc[:, None]
    elif p.m_reading == "sublun_floor":
        hot = hot & (cnt >= p.m_window)
    return hot, conc


def history_counts(hot, m: int):
    """Hot intervals of each sub-LUN among the last ``m`` intervals (c2 / m4), by a prefix sum."""
    h = np.asarray(hot, np.int32)
    P = np.concatenate([np.zeros((1, h.shape[1]), np.int32), np.cumsum(h, axis=0, dtype=np.int32)])
    k = np.arange(h.shape[0]) + 1
    return P[k] - P[np.maximum(k - int(m), 0)]
