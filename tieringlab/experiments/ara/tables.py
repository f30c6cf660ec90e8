"""The ARA notebook's tables, derived from the labelled results (parameters read from coordinates)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from tieringlab.claims import ara as C
from tieringlab.stats import mean_ci

__all__ = ["table1", "table2_frame", "fig5_table", "fig8_table"]

#: Table 2's part -> the cell coordinate its rows vary ((a) N, (b) D, (c) the site load).
_T2_AXIS = {"a": "n_sites", "b": "delay_s", "c": "utilization"}


def table1(static: xr.Dataset) -> pd.DataFrame:
    """Table 1: Rand and Qlen mean response (s) with 95 % CI per workload (``n_reps``), beside the thesis' numbers
    (:data:`tieringlab.claims.ara.TABLE1_PAPER`, by policy and index of dispersion); for the calibration rows (Rand,
    the two bursty workloads) also the mean, CI and replications over ``calibration_n_reps`` (``rand_calibration_s``;
    NaN elsewhere), the values the ledger records there."""
    cal = static.get("rand_calibration_s")
    cal_I = [] if cal is None else [float(i) for i in static.calibration_index_of_dispersion.values]
    rows = []
    for pol in ("rand", "qlen"):
        cfg = static.config.values[static.policy.values == pol][0]
        for I in static.index_of_dispersion.values:
            sel = static.sel(config=cfg, index_of_dispersion=I)
            row = {"policy": pol, "index_of_dispersion": float(I), "mean_s": float(sel.mean_s),
                   "ci95_s": float(sel.ci95_s), "paper_s": C.TABLE1_PAPER.get((pol, float(I)), float("nan")),
                   "calibration_mean_s": np.nan, "calibration_ci95_s": np.nan, "calibration_reps": 0}
            if pol == "rand" and float(I) in cal_I:
                m, h = mean_ci(cal.sel(calibration_index_of_dispersion=float(I)).values)
                row.update(calibration_mean_s=float(m), calibration_ci95_s=float(h),
                           calibration_reps=int(cal.sizes["calibration_seed"]))
            rows.append(row)
    return pd.DataFrame(rows)


def table2_frame(t2: xr.Dataset) -> pd.DataFrame:
    """Table 2 as rows (part, cell, policy, mean, CI, paper; the side-by-side readings without a paper value).
    The paper's value is looked up by the cell's part and its coordinate (N, D or the load) and the row's
    dispatcher policy under the default th_l rule (:data:`tieringlab.claims.ara.TABLE2_PAPER`)."""
    rows = []
    for cell, part in zip(t2.cell.values, t2.part.values):
        axis = _T2_AXIS.get(str(part))
        at = None if axis is None else t2[axis].sel(cell=cell).item()
        paper = C.TABLE2_PAPER.get((str(part), at), (np.nan,) * 4)
        for cfg in t2.config.values:
            sel = t2.sel(cell=cell, config=cfg)
            pol, rule = str(sel.policy.item()), str(sel.th_l_rule.item())
            j = C.TABLE2_POLICIES.index(pol) if rule in ("", "scaled") and pol in C.TABLE2_POLICIES else None
            rows.append({"part": str(part), "cell": str(cell), "policy": str(cfg), "mean_s": float(sel.mean_s),
                         "ci95_s": float(sel.ci95_s), "paper_s": paper[j] if j is not None else np.nan})
    return pd.DataFrame(rows)


def _mean_ci_frame(ds: xr.Dataset) -> pd.DataFrame:
    """``mean_s`` and ``ci95_s`` by the dims (the parameter coordinates left out), one row per point."""
    m, h = (ds[v].reset_coords(drop=True) for v in ("mean_s", "ci95_s"))
    return m.to_dataframe().reset_index().merge(h.to_dataframe().reset_index())


def fig5_table(static: xr.Dataset) -> pd.DataFrame:
    """Fig. 5: mean response (s) and 95 % half-width per workload (index of dispersion) and configuration."""
    return _mean_ci_frame(static)


def fig8_table(online: xr.Dataset) -> pd.DataFrame:
    """Fig. 8: mean response (s) and 95 % half-width per configuration."""
    return _mean_ci_frame(online)
