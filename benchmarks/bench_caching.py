"""Page-level LRU and ARC throughput (requests/s) against libcachesim on the same trace and sizes.

The trace is the real CloudPhysics VM trace (first ``n`` requests) split into 4 KB pages; both sides
replay the same page keys at the same capacities (libcachesim: ``obj_size=1``, one ``get`` per page,
driven from Python). ``ratio_lru = ours_rps / libcachesim_rps`` (> 1: we are faster); ours for LRU is
the exact stack-distance path of :func:`tieringlab.policies.caching.simulate` (all sizes at once),
for ARC the jitted scan (one pass per size). Compilation is excluded (one warm-up call).
"""

from __future__ import annotations

import time

import libcachesim as lcs
import numpy as np
import pandas as pd
import xarray as xr

from tieringlab.paths import shared_dir
from tieringlab.policies import caching


def _trace(n):
    d = pd.read_csv(shared_dir() / "data" / "cloudphysics" / "cloudPhysicsIO.csv", nrows=n)
    return xr.Dataset({"time": ("request", d["time"].to_numpy(np.float64)),
                       "offset": ("request", d["lbn"].to_numpy(np.int64) * 512),
                       "size": ("request", d["size"].to_numpy(np.int64)),
                       "is_write": ("request", (d["op"].astype(str) == "2a").to_numpy())})


def _lcs(policy, pages, caps):
    t0 = time.perf_counter()
    for c in caps:
        cache = {"lru": lcs.LRU, "arc": lcs.ARC}[policy](int(c))
        req = lcs.Request(obj_size=1, op=lcs.ReqOp.OP_GET)
        for k in pages.tolist():
            req.obj_id = k
            cache.get(req)
    return time.perf_counter() - t0


def run(quick: bool = False) -> dict:
    n = 5_000 if quick else 40_000
    ds = _trace(n)
    pages, _, _ = caching.page_accesses(ds)
    flash = np.array([4, 16, 64]) << 20
    caps = flash // caching.PAGE_BYTES
    out = {"n_requests": n, "n_page_accesses": int(pages.size), "flash_bytes": flash.tolist()}
    for policy in ("lru", "arc"):
        caching.simulate(ds.isel(request=slice(0, 200)), policy, flash)  # compile
        caching.simulate(ds, policy, flash[:1])  # compile at this trace's shapes
        t0 = time.perf_counter()
        caching.simulate(ds, policy, flash)
        ours = time.perf_counter() - t0
        peer = _lcs(policy, pages, caps)
        out[f"{policy}_ours_rps"] = n * len(flash) / ours
        out[f"{policy}_libcachesim_rps"] = n * len(flash) / peer
        out[f"ratio_{policy}"] = peer / ours
    return out
