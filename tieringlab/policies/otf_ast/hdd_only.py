"""The HDD RAID0 alone (Figs. 7 and 9, curve "HDD"): every IO to the HDD, whatever the SSD size."""

from __future__ import annotations

import jax
import numpy as np
import xarray as xr

from tieringlab.models.storage import HDD
from tieringlab.policies.contract import check_capacities
from tieringlab.policies.otf_ast.example import example
from tieringlab.policies.otf_ast.parameters import SOURCE, HddOnlyParams
from tieringlab.policies.otf_ast.replay import replay
from tieringlab.policies.otf_ast.result import result, serve_and_count
from tieringlab.policies.registry import PolicySpec, register

__all__ = ["hdd_only"]


def hdd_only(ds: xr.Dataset, capacities, params: HddOnlyParams | None = None, key=None) -> xr.Dataset:
    """The HDD RAID0 alone (Figs. 7, 9): every IO to the HDD, whatever the SSD size."""
    p = HddOnlyParams() if params is None else params
    key = jax.random.key(0) if key is None else key
    caps = check_capacities(capacities)
    rq = replay(ds, p)
    route = np.full(rq["time"].size, HDD, np.int64)
    d, out = serve_and_count(p, key, rq, route)
    d["hits"] = 0
    d["hdd_util_per_s"] = out["hdd_util"]
    return result("HDD only", p, caps, rq, [d] * caps.size,
                   extra_dims={"hdd_util_per_s": (("second",), lambda d: d["hdd_util_per_s"])})


register(PolicySpec(name="HDD only", kind="trace", fn=hdd_only, params_type=HddOnlyParams,
                    source=SOURCE + "; Figs. 7, 9 curve 'HDD'", random=True, example=example(HddOnlyParams),
                    description="the HDD RAID0 alone"))
