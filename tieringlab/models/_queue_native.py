"""Native (numba) engine of :func:`tieringlab.models.queueing.priority_departure_times`.

A non-preemptive priority queue is sequential by nature: which job the server takes when it frees
depends on every earlier choice (the per-class Lindley recursions of FCFS do not compose under
priorities). The state the choice needs is small, though: with classes served FIFO inside, the set of
waiting jobs is described by one pointer per class to its oldest unserved job. This module walks the
jobs **in service order** with that carry (the class heads and the time the server frees), as a
compiled loop of a few nanoseconds per job; the jitted :func:`jax.lax.scan` of ``queueing`` does the
same walk (the reference and accelerator engine; XLA's CPU backend spends about a microsecond per scan
step). ``tests/test_priority_queue.py`` checks that both engines give identical departures.

A :func:`tieringlab.native.jit` kernel: numba is imported (and the kernel compiled, about a second) only
when the numba engine first runs, in each process.
"""

from __future__ import annotations

import numpy as np

from tieringlab import native


@native.jit(cache=False, nogil=True)
def priority_departures(a, s, rank, n_classes, t0, dep):
    """Departure times ``dep[j]`` of jobs ``(a[j], s[j], rank[j])`` at one non-preemptive server.

    ``a`` non-decreasing (input order = arrival order), ``rank`` in ``[0, n_classes)`` (0 first).
    When the server frees at ``t`` it takes the oldest job of the smallest rank among the jobs with
    ``a <= t``; when none waits it idles until the earliest next arrival and takes, among the jobs
    arriving then, the smallest rank. ``t0``: the time the server first frees (``-inf``: idle).
    """
    n = a.shape[0]
    nil = -1
    head = np.full(n_classes, nil, np.int64)
    tail = np.full(n_classes, nil, np.int64)
    nxt = np.full(n, nil, np.int64)
    for i in range(n):                       # one FIFO list per class, in input order
        k = rank[i]
        if tail[k] == nil:
            head[k] = i
        else:
            nxt[tail[k]] = i
        tail[k] = i
    t = t0
    for _ in range(n):
        best = nil
        for k in range(n_classes):           # the smallest class with a waiting head
            h = head[k]
            if h != nil and a[h] <= t:
                best = k
                break
        if best == nil:                      # idle: the earliest head arrival; ties to the smaller class
            tmin = np.inf
            for k in range(n_classes):
                h = head[k]
                if h != nil and a[h] < tmin:
                    tmin = a[h]
                    best = k
            t = tmin
        j = head[best]
        head[best] = nxt[j]
        start = t if t > a[j] else a[j]
        t = start + s[j]
        dep[j] = t
    return dep
