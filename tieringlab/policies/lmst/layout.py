"""The disks, the ALUNs and their initial placement (thesis Sec. 4.1.3, Tables 4 and 6)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tieringlab.models.workloads import lmst as wl
from tieringlab.policies.lmst.params import LmstParams

__all__ = ["SystemLayout", "system_layout"]


@dataclass(frozen=True)
class SystemLayout:
    """Disks, ALUNs and the initial placement of one (system, workload) pair.

    Disks ``0 .. n_ssd-1`` are the SSDs (D1, D2 of Table 5), the rest the FCs (D3..D7). ``home[i]``: ALUN
    i's initial disk (Sec. 4.1.3: SLA^H ALUNs on the SSDs, SLA^L on the FCs; striped round-robin over the
    tier's disks, which gives Table 6's per-disk loads C_SSD and C_FC).
    """

    mu: np.ndarray             #: (m,) bytes/s
    fast: np.ndarray           #: (m,) bool, SSD tier
    slots: int                 #: ALUN slots per disk
    sla: np.ndarray            #: (2,) seconds, SLA^H and SLA^L
    alun_class: np.ndarray     #: (n,) 0 = SLA^H, 1 = SLA^L
    alun_app: np.ndarray       #: (n,)
    app_class: np.ndarray      #: (n_apps,)
    home: np.ndarray           #: (n,) initial disk

    @property
    def m(self) -> int:
        return int(self.mu.size)


def system_layout(p: LmstParams, wp: wl.LmstWorkloadParams, *, home=None, alun_class=None) -> SystemLayout:
    """The disks of ``p`` and the ALUNs of ``wp``, placed as Sec. 4.1.3 and Table 6 say.

    ``alun_class`` (0 = SLA^H, 1 = SLA^L per ALUN) and ``home`` (initial disk per ALUN) override the thesis
    layout (what-if runs and tests); each disk must fit its ALUNs.
    """
    m = p.n_ssd + p.n_fc
    mu = np.r_[np.full(p.n_ssd, float(p.ssd_rate)), np.full(p.n_fc, float(p.fc_rate))]
    fast = np.r_[np.ones(p.n_ssd, bool), np.zeros(p.n_fc, bool)]
    slots = int(p.disk_capacity_bytes // wp.alun_bytes)
    lay = wl.alun_layout(wp)
    cls = lay.alun_class
    if alun_class is not None:
        c = np.asarray(alun_class)
        if c.shape != (wp.n_aluns,) or (c.size and (c.dtype == bool or not np.issubdtype(c.dtype, np.integer))):
            raise ValueError(f"alun_class must be {wp.n_aluns} integers (one per ALUN); got shape {c.shape}, "
                             f"dtype {c.dtype}")
        if np.any((c != 0) & (c != 1)):
            i = int(np.flatnonzero((c != 0) & (c != 1))[0])
            raise ValueError(f"alun_class must be 0 (SLA^H) or 1 (SLA^L), the two classes of Sec. 4.1.3; "
                             f"alun_class[{i}] = {int(c[i])}")
        cls = c.astype(np.int64)
    if home is None:
        h = np.empty(wp.n_aluns, np.int64)
        hi = np.flatnonzero(cls == 0)
        lo = np.flatnonzero(cls == 1)
        h[hi] = np.arange(hi.size) % p.n_ssd
        h[lo] = p.n_ssd + np.arange(lo.size) % p.n_fc
    else:
        h = np.asarray(home)
        if h.shape != (wp.n_aluns,) or (h.size and not np.issubdtype(h.dtype, np.integer)):
            raise ValueError(f"home must be {wp.n_aluns} disk indices (one per ALUN); got shape {h.shape}")
        if h.size and (h.min() < 0 or h.max() >= m):
            raise ValueError(f"home must lie in [0, {m}) (disks 0..{p.n_ssd - 1} are the SSDs); got "
                             f"{h.min()}..{h.max()}")
        h = h.astype(np.int64)
    load = np.bincount(h, minlength=m)
    if slots < 1 or np.any(load > slots):
        d = int(np.argmax(load - slots))
        raise ValueError(f"the workload does not fit: disk {d} would hold {int(load[d])} ALUNs of "
                         f"{wp.alun_bytes} bytes, but disk_capacity_bytes={p.disk_capacity_bytes} holds {slots}; "
                         "use fewer applications or larger disks")
    app_class = np.array([cls[lay.alun_app == a].min() if np.any(lay.alun_app == a) else 1
                          for a in range(wp.n_apps)])                  # a handful of applications
    return SystemLayout(mu, fast, slots, np.array([p.sla_high_s, p.sla_low_s]), cls, lay.alun_app, app_class, h)
