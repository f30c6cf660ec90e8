"""The I/Os of one slot from given arrays (direct mode), and the per-disk mean I/O size ``s_{D_j}``."""

from __future__ import annotations

import numpy as np

from tieringlab.models.workloads import lmst as wl

__all__ = ["IoSlots", "mean_size_per_disk"]


class IoSlots:
    """Slots from given I/O arrays (direct mode): the I/Os of slot w, ALUN by ALUN, time order inside."""

    def __init__(self, arrivals, sizes, alun, wp: wl.LmstWorkloadParams):
        a = np.asarray(arrivals, np.float64)
        s = np.asarray(sizes, np.float64)
        al = np.asarray(alun)
        n = a.shape[0] if a.ndim == 1 else -1
        if a.ndim != 1:
            raise ValueError(f"arrivals must be a 1-D array of seconds (one run); got shape {a.shape}. "
                             "For replications give a batch of keys and let the workload be generated")
        if s.shape != (n,) or al.shape != (n,):
            raise ValueError(f"services (I/O sizes, bytes) and alun must have one entry per arrival ({n}); "
                             f"got shapes {s.shape} and {al.shape}")
        if not np.all(np.isfinite(a)) or (n and a[0] < 0):
            raise ValueError("arrivals must be finite and >= 0 seconds")
        if n > 1 and np.any(np.diff(a) < 0):
            i = int(np.flatnonzero(np.diff(a) < 0)[0]) + 1
            raise ValueError(f"arrivals must be non-decreasing (sort the I/Os by arrival time); arrivals[{i}] = "
                             f"{a[i]!r} < arrivals[{i - 1}] = {a[i - 1]!r}")
        if not np.all(np.isfinite(s)) or np.any(s < 0):
            i = int(np.flatnonzero(~(np.isfinite(s) & (s >= 0)))[0])
            raise ValueError("services are the I/O sizes in bytes and must be finite and >= 0; "
                             f"services[{i}] = {s[i]!r}")
        if n and (al.dtype == bool or not np.issubdtype(al.dtype, np.integer)):
            raise ValueError(f"alun must hold integer ALUN indices; got dtype {al.dtype}")
        if n and (al.min() < 0 or al.max() >= wp.n_aluns):
            i = int(np.flatnonzero((al < 0) | (al >= wp.n_aluns))[0])
            raise ValueError(f"alun must lie in [0, n_aluns) = [0, {wp.n_aluns}) for this workload; "
                             f"alun[{i}] = {int(al[i])}")
        slot = np.floor(a / wp.slot_s).astype(np.int64)
        if n and slot.max() >= wp.n_slots:
            i = int(np.flatnonzero(slot >= wp.n_slots)[0])
            raise ValueError(f"arrivals must lie in [0, n_slots * slot_s) = [0, {wp.duration_s}) s; "
                             f"arrivals[{i}] = {a[i]!r}")
        self.wp, self.a, self.s, self.al = wp, a, s, al.astype(np.int32)
        self.slot_bounds = np.searchsorted(slot, np.arange(wp.n_slots + 1))   # arrivals are sorted
        self.order = np.arange(n)                                            # the stream is the input order
        self.n = n

    def __call__(self, w: int, out: wl.SlotBuffers | None = None) -> wl.SlotIO:
        """Slot ``w``; ``out`` is unused (the slot's arrays are views of the given ones), taken for the same
        call shape as the generator's."""
        wp = self.wp
        sl = slice(self.slot_bounds[w], self.slot_bounds[w + 1])
        al = self.al[sl]
        t0 = w * wp.slot_s
        k = wp.samples_per_slot
        which = np.minimum(((self.a[sl] - t0) / wp.sample_s).astype(np.int64), k - 1)
        sample = np.bincount(al * k + which, weights=self.s[sl], minlength=wp.n_aluns * k).reshape(wp.n_aluns, k)
        return wl.SlotIO(w, t0, self.a[sl], self.s[sl], al, None, np.zeros(wp.n_aluns, bool),
                         np.bincount(al, minlength=wp.n_aluns).astype(np.int64), sample / wp.sample_s)


def mean_size_per_disk(slot: wl.SlotIO, mapping: np.ndarray, m: int, default: float, sample_s: float) -> np.ndarray:
    """``s_{D_j}``: the mean size of the I/Os the window sent to each disk (bytes); ``default`` where none."""
    counts = slot.counts.astype(float)
    nbytes = slot.sample_rate.sum(axis=1)          # bytes per sample interval, summed (a common factor)
    C = mapping.shape[0]
    out = np.empty((C, m))
    for c in range(C):                             # parameter sets (a few), not I/Os
        nb = np.bincount(mapping[c], weights=nbytes, minlength=m)
        nc = np.bincount(mapping[c], weights=counts, minlength=m)
        out[c] = np.where(nc > 0, nb * sample_s / np.maximum(nc, 1.0), default)
    return out
