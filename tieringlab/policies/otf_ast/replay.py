"""The replay window and the sub-LUN split every system of the OTF-AST paper shares (Sec. 4.1, Table 2).

A trace Dataset (:mod:`tieringlab.traces`) may carry attrs ``replay_start_s`` and ``replay_end_s`` (default:
the whole trace). Only requests in ``[replay_start_s, replay_end_s)`` are replayed (times re-based to the
replay start); static tiering trains on the window of equal length before it. Each request belongs to the
sub-LUN of its first byte (``offset // sublun_bytes``).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from tieringlab.policies.contract import check_capacities, check_trace
from tieringlab.policies.otf_ast.parameters import MeasureParams

__all__ = ["replay_window", "replay", "ssd_subluns"]


def replay_window(ds: xr.Dataset):
    """``(start, end)`` of the replay in trace seconds: attrs ``replay_start_s`` / ``replay_end_s``
    (default: the whole trace)."""
    t = ds["time"].values
    start = float(ds.attrs.get("replay_start_s", t[0] if t.size else 0.0))
    end = float(ds.attrs.get("replay_end_s", (t[-1] + 1e-9) if t.size else start))
    if not end > start:
        raise ValueError(f"the trace's replay window is empty: replay_start_s={start}, replay_end_s={end}")
    return start, end


def _check_trace(ds: xr.Dataset, p: MeasureParams):
    # the contract's one trace check (variables, at least one request, finite non-decreasing times, whole
    # offsets and sizes), as every trace policy runs it; then this testbed's own limit, the LUN
    check_trace(ds, f"{type(p).__name__.removesuffix('Params')} testbed")
    end = ds["offset"].values + np.maximum(ds["size"].values, 1)
    lun = int(p.lun_subluns) * int(p.sublun_bytes)
    if end.size and int(end.max()) > lun:
        i = int(np.argmax(end))
        raise ValueError(f"request {i} ends at byte {int(end[i])}, beyond the LUN of lun_subluns x sublun_bytes = "
                         f"{lun} bytes")


def replay(ds: xr.Dataset, p: MeasureParams):
    """The replayed requests as arrays: time (s from the replay start), offset, size, is_write, sub-LUN."""
    _check_trace(ds, p)
    start, end = replay_window(ds)
    t = ds["time"].values
    lo, hi = np.searchsorted(t, [start, end], side="left")
    r = slice(int(lo), int(hi))
    off = ds["offset"].values[r].astype(np.int64)
    return {"time": t[r] - start, "offset": off, "size": ds["size"].values[r].astype(np.int64),
            "is_write": ds["is_write"].values[r].astype(bool), "sub": off // int(p.sublun_bytes),
            "length_s": end - start, "start_s": start}


def ssd_subluns(capacities, p: MeasureParams) -> np.ndarray:
    caps = check_capacities(capacities)
    lun = int(p.lun_subluns) * int(p.sublun_bytes)
    if np.any(caps > lun):
        raise ValueError(f"capacities: an SSD of {int(caps.max())} bytes is larger than the LUN "
                         f"({p.lun_subluns} sub-LUNs x {p.sublun_bytes} bytes = {lun} bytes); allowed 0 .. {lun}")
    return caps // int(p.sublun_bytes)
