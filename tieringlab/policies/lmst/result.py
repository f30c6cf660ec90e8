"""The labelled result of a simulation: the metrics of Sec. 4.1.3 over ``replication`` x ``config``."""

from __future__ import annotations

import numpy as np
import xarray as xr

from tieringlab.policies.lmst.params import VECTOR_KNOBS

__all__ = ["result_dataset"]


def result_dataset(systems, configs, layout, workload, st, tally, burst_ts, *, io_order, keep_jobs) -> xr.Dataset:
    """The labelled metrics of a :func:`simulate` call (see :func:`tieringlab.policies.lmst.run`); ``st[r][c]``:
    the engine state of set c in replication r, ``tally[r][c]``: its (Mgr_Ratio count, forward migrations
    validated)."""
    from tieringlab.policies import _lmst_native as nat  # noqa: PLC0415

    R, C = len(st), len(configs)
    aw = np.stack([[s["app_w"] for s in row] for row in st])          # (R, C, app, window, 4)
    n_io = aw[..., nat.A_N]
    tot = aw.sum(axis=(2, 3))                                           # (R, C, 4)
    per_app = aw.sum(axis=3)                                            # (R, C, app, 4)
    per_win = aw.sum(axis=2)                                            # (R, C, window, 4)

    def ratios(x):
        with np.errstate(invalid="ignore", divide="ignore"):
            return (x[..., nat.A_SUM] / x[..., nat.A_N], x[..., nat.A_VIOL] / x[..., nat.A_N],
                    x[..., nat.A_EXCESS] / x[..., nat.A_VIOL])

    m_resp, v_ratio, v_time = ratios(tot)
    a_resp, a_ratio, a_time = ratios(per_app)
    w_resp, w_ratio, w_time = ratios(per_win)
    cnt = np.stack([[s["counters"] for s in row] for row in st])       # (R, C, 8)
    busy = np.stack([[s["busy"] for s in row] for row in st])          # (R, C, m, 2)
    horizon = workload.duration_s
    with np.errstate(invalid="ignore", divide="ignore"):
        mgr_resp = cnt[..., nat.C_MGR_SUM] / cnt[..., nat.C_MGR_N]
        mgr_io = cnt[..., nat.C_BURST_SSD] / cnt[..., nat.C_BURST_IOS]
    bts = np.asarray(burst_ts, np.int64)
    mgr_count = np.array([[t[0] for t in row] for row in tally], np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mgr_ratio = mgr_count / bts[:, None]
    n_log = cnt[..., nat.C_LOG].astype(np.int64)
    kinds = [[s["log_i"][: int(s["counters"][nat.C_LOG]), 4] for s in row] for row in st]
    cfg = [systems[si] for si, _ in configs]
    cp = [c for si, p in enumerate(systems) for c in p.configs()]
    dims_rc = ("replication", "config")
    sec = lambda x, ln: (x, {"units": "s", "long_name": ln})  # noqa: E731
    one = lambda x, ln: (x, {"units": "1", "long_name": ln})  # noqa: E731
    data = {
        "mean_response_s": (dims_rc, m_resp,
                            {"units": "s", "long_name": "M_Resp: mean response of all application I/Os"}),
        "m_resp_s": (dims_rc, m_resp,
                     {"units": "s", "long_name": "M_Resp (Sec. 4.1.3.1), I/O-weighted over both classes"}),
        "v_ratio": (dims_rc, v_ratio, {"units": "1", "long_name": "V_Ratio: share of I/Os over their class's SLA"}),
        "v_time_s": (dims_rc, v_time, {"units": "s", "long_name": "V_Time: mean (response - SLA) over violating I/Os"}),
        "ios": (dims_rc, tot[..., nat.A_N].astype(np.int64), {"units": "1", "long_name": "application I/Os"}),
        "app_m_resp_s": (dims_rc + ("app",), a_resp, {"units": "s", "long_name": "M_Resp per application (Table 5)"}),
        "app_v_ratio": (dims_rc + ("app",), a_ratio, {"units": "1", "long_name": "V_Ratio per application (Table 5)"}),
        "app_v_time_s": (dims_rc + ("app",), a_time, {"units": "s", "long_name": "V_Time per application"}),
        "app_ios": (dims_rc + ("app",), per_app[..., nat.A_N].astype(np.int64),
                    {"units": "1", "long_name": "I/Os per application"}),
        "window_m_resp_s": (dims_rc + ("window",), w_resp,
                            {"units": "s", "long_name": "M_Resp of the I/Os arriving in each window"}),
        "window_v_ratio": (dims_rc + ("window",), w_ratio, {"units": "1", "long_name": "V_Ratio per window"}),
        "window_ios": (dims_rc + ("window",), per_win[..., nat.A_N].astype(np.int64),
                       {"units": "1", "long_name": "I/Os per window"}),
        "disk_utilization": (dims_rc + ("disk",), busy.sum(-1) / horizon,
                             {"units": "1", "long_name": "disk busy time / simulated duration (migration included)"}),
        "disk_migration_utilization": (dims_rc + ("disk",), busy[..., 1] / horizon,
                                       {"units": "1", "long_name": "disk time serving migration I/Os / duration"}),
        "mgr_resp_s": (dims_rc, mgr_resp,
                       {"units": "s", "long_name": "Mgr_Resp: mean response of I/Os to ALUNs under migration"}),
        "mgr_ios": (dims_rc, cnt[..., nat.C_MGR_N].astype(np.int64),
                    {"units": "1", "long_name": "I/Os to ALUNs under migration"}),
        "burst_ts": (("replication",), bts,
                     {"units": "1", "long_name": "Burst_TS: bursty (ALUN, slot) pairs of the FC-home ALUNs"}),
        "mgr_ratio": (dims_rc, mgr_ratio,
                      {"units": "1", "long_name": "Mgr_Ratio: share of Burst_TS validated (or already) on SSD"}),
        "mgr_ratio_io": (dims_rc, mgr_io,
                         {"units": "1", "long_name": "share of the bursty FC-home slots' I/Os served on SSD"}),
        "migrations_started": (dims_rc, cnt[..., nat.C_STARTED].astype(np.int64),
                               {"units": "1", "long_name": "migrations started"}),
        "migrations_completed": (dims_rc, cnt[..., nat.C_DONE].astype(np.int64),
                                 {"units": "1", "long_name": "migrations completed (cutover)"}),
        "migrations_abandoned": (dims_rc, cnt[..., nat.C_ABANDONED].astype(np.int64),
                                 {"units": "1", "long_name": "validated candidates not started by their window's end"}),
        "forward_migrations": (dims_rc, np.array([[int((k == 1).sum()) for k in row] for row in kinds]),
                               {"units": "1", "long_name": "forward migrations started (FC -> SSD)"}),
        "backward_migrations": (dims_rc, np.array([[int((k == 0).sum()) for k in row] for row in kinds]),
                                {"units": "1", "long_name": "backward migrations started (SSD -> FC)"}),
        "forward_validated": (dims_rc, np.array([[t[1] for t in row] for row in tally]),
                              {"units": "1", "long_name": "forward candidates validated (executed windows)"}),
    }
    del sec, one, n_io
    # the migration log, padded to the longest (window, ALUN, source, destination, kind, start, cutover, Eq. 17)
    M = max(1, int(n_log.max()) if n_log.size else 1)
    li = np.full((R, C, M, 5), -1, np.int64)
    lf = np.full((R, C, M, 3), np.nan)
    for r in range(R):
        for c in range(C):
            k = int(n_log[r, c])
            li[r, c, :k] = st[r][c]["log_i"][:k]
            lf[r, c, :k] = st[r][c]["log_f"][:k]
    dm = dims_rc + ("migration",)
    data.update({
        "mig_window": (dm, li[..., 0], {"units": "1", "long_name": "window the migration was planned in (-1: none)"}),
        "mig_alun": (dm, li[..., 1], {"units": "1", "long_name": "migrated ALUN"}),
        "mig_src": (dm, li[..., 2], {"units": "1", "long_name": "source disk"}),
        "mig_dst": (dm, li[..., 3], {"units": "1", "long_name": "destination disk"}),
        "mig_kind": (dm, li[..., 4], {"units": "1", "long_name": "0 backward (SSD -> FC), 1 forward (FC -> SSD)"}),
        "mig_start_s": (dm, lf[..., 0], {"units": "s", "long_name": "migration start"}),
        "mig_end_s": (dm, lf[..., 1], {"units": "s", "long_name": "cutover (inf: still running at the end)"}),
        "mig_est_s": (dm, lf[..., 2], {"units": "s", "long_name": "Eq. 17 duration estimate t_mgt"}),
    })
    coords = {
        "config": np.arange(C),
        "policy": ("config", np.array([p.policy.upper() for p in cfg])),
        "label": ("config", np.array([p.policy.upper() + ("-lookahead" if p.timing == "lookahead" else "")
                                      for p in cfg])),
        "timing": ("config", np.array([p.timing for p in cfg])),
        **{k: ("config", np.array([float(getattr(p, k)) for p in cp])) for k in VECTOR_KNOBS},
        "app": np.arange(layout.app_class.size),
        "app_class": ("app", np.where(layout.app_class == 0, "H", "L")),
        "disk": np.arange(layout.m),
        "tier": ("disk", np.where(layout.fast, "SSD", "FC")),
        "window": np.arange(workload.n_slots),
        "replication": np.arange(R),
        "migration": np.arange(M),
    }
    ds = xr.Dataset({k: (v[0], v[1], v[2]) for k, v in data.items()}, coords=coords)
    if keep_jobs:
        n_io = st[0][0]["resp"].size
        resp = np.empty((C, n_io))
        disk = np.empty((C, n_io), np.int8)
        for ci in range(C):
            resp[ci, io_order] = st[0][ci]["resp"]
            disk[ci, io_order] = st[0][ci]["disk"]
        ds["response_s"] = (("config", "job"), resp, {"units": "s", "long_name": "response time (waiting + service)"})
        ds["disk_of_job"] = (("config", "job"), disk, {"units": "1", "long_name": "disk that served the I/O"})
    ds.attrs.update({"policy": systems[0].policy.upper(), "source": "thesis Sec. 4.1 (LMST), Sec. 4.1.3 (NMST, SMST)",
                     "horizon_s": horizon, "slot_s": workload.slot_s})
    return ds
