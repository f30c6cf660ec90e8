"""Static tiering as the paper evaluates it (Table 3, L130-137; notes Sec. 3.1): the SSD holds, for the whole
replay, the sub-LUNs with the most requests in the window of the replay's length just before it."""

from __future__ import annotations

import jax
import numpy as np
import xarray as xr

from tieringlab.models.storage import HDD, SSD
from tieringlab.policies.otf_ast.example import example
from tieringlab.policies.otf_ast.parameters import SOURCE, StaticTieringParams
from tieringlab.policies.otf_ast.replay import replay, replay_window, ssd_subluns
from tieringlab.policies.otf_ast.result import result, serve_and_count
from tieringlab.policies.registry import PolicySpec, register

__all__ = ["static_tiering"]


def static_tiering(ds: xr.Dataset, capacities, params: StaticTieringParams | None = None,
                   key=None) -> xr.Dataset:
    """Static tiering (Table 3, notes Sec. 3.1): the SSD holds, for the whole replay, the sub-LUNs with the
    most requests in the window of the replay's length just before it (ties to the lower index)."""
    p = StaticTieringParams() if params is None else params
    key = jax.random.key(0) if key is None else key
    n_ssd = ssd_subluns(capacities, p)
    rq = replay(ds, p)
    start, end = replay_window(ds)
    t = ds["time"].values
    lo, hi = np.searchsorted(t, [start - (end - start), start], side="left")
    if hi <= lo:
        raise ValueError(f"static tiering trains on the {end - start:.0f} s before replay_start_s={start}; "
                         f"the trace has no request there (set ds.attrs['replay_start_s'] later)")
    tr_sub = ds["offset"].values[lo:hi] // int(p.sublun_bytes)
    wts = ds["size"].values[lo:hi] if p.rank_by == "bytes" else None
    score = np.bincount(tr_sub, weights=wts, minlength=int(p.lun_subluns))[: int(p.lun_subluns)]
    order = np.argsort(-score, kind="stable")
    per = []
    for c in n_ssd:   # a handful of SSD sizes
        on_ssd = np.zeros(int(p.lun_subluns), bool)
        on_ssd[order[: int(c)]] = True
        route = np.where(on_ssd[rq["sub"]], SSD, HDD).astype(np.int64)
        d, out = serve_and_count(p, key, rq, route)
        d["hits"] = int((route == SSD).sum())
        d["hdd_util_per_s"] = out["hdd_util"]
        d["placed"] = on_ssd
        per.append(d)
    return result("static tiering", p, capacities, rq, per,
                   extra_dims={"placed": (("sublun",), lambda d: d["placed"]),
                               "hdd_util_per_s": (("second",), lambda d: d["hdd_util_per_s"])})


register(PolicySpec(name="static tiering", kind="trace", fn=static_tiering, params_type=StaticTieringParams,
                    source=SOURCE + "; Table 3, L130-137", random=True, example=example(StaticTieringParams),
                    description="top sub-LUNs of the preceding equal-length window, placed once"))
