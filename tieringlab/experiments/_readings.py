"""Sweeps run under several readings of what a paper leaves open, one dimension per reading.

An experiment that reruns a system under each reading (vFRM's idle-bin rule, G2-vFRM's aging period, the
IO pricing) keeps them as dimensions of one Dataset and names its primary reading in ``res.attrs``;
:func:`select_reading` cuts one reading out for the tables, figures and claims.
"""

from __future__ import annotations

import xarray as xr


def select_reading(res: xr.Dataset, **choice) -> xr.Dataset:
    """The sweep ``res`` under one reading: ``choice`` maps each reading dimension to its value (None: the
    sweep's primary reading, ``res.attrs[dim]``). The result drops those dimensions and records the chosen
    values in its attrs. A value the sweep did not run raises a ValueError listing the values it ran."""
    pick = {dim: (res.attrs[dim] if v is None else v) for dim, v in choice.items()}
    if any(v not in res[dim].values for dim, v in pick.items()):
        asked = ", ".join(f"{dim}={v!r}" for dim, v in pick.items())
        ran = ", ".join(f"{dim} {res[dim].values.tolist()}" for dim in pick)
        raise ValueError(f"no reading {asked} in the sweep ({ran})")
    out = res.sel(pick, drop=True)
    out.attrs = {**res.attrs, **pick}
    return out
