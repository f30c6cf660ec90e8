"""The IO level and the result every system of the OTF-AST paper returns (Tables 4-5, Figs. 7-9).

:func:`serve_and_count` serves the replayed requests, routed, through the testbed's queues (the event
simulation :func:`tieringlab.policies.otf_ast.sim.simulate`: driver + queueing + service) and counts the operations;
:func:`summary` gives Table 4/5's quantities of one capacity (notes Sec. 1.7 and 6.4); :func:`result` builds
the :func:`~tieringlab.policies.contract.trace_result` over the capacities (attrs ``policy`` and ``source``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from tieringlab.models.storage import BUFFER, HDD, SSD
from tieringlab.policies import registry
from tieringlab.policies.contract import CAPACITY_DIM, check_capacities, trace_result
from tieringlab.policies.otf_ast import sim
from tieringlab.policies.otf_ast.parameters import MeasureParams
from tieringlab.units import PAGE_BYTES

__all__ = ["RESPONSE_GRID_S", "summary", "pages", "result", "serve_and_count"]


def summary(p: MeasureParams, rq, resp):
    """Table 4/5 quantities of one capacity (module docstring; notes Sec. 1.7 and 6.4)."""
    t = rq["time"]
    n = t.size
    lo, hi = np.log10(p.hist_lo_s), np.log10(p.hist_hi_s)
    nb = int(round((hi - lo) * p.hist_bins_per_decade))
    edges = np.logspace(lo, hi, nb + 1)
    centers = np.sqrt(edges[:-1] * edges[1:])
    b = np.clip(np.searchsorted(edges, resp, side="right") - 1, 0, nb - 1)
    first = t < p.first_window_s
    le = resp <= p.le_cut_s
    mean = lambda m: float(resp[m].mean()) if np.any(m) else float("nan")  # noqa: E731
    return {"mean_response_s": float(resp.mean()) if n else float("nan"),
            "mean_response_first_s": mean(first),
            "mean_response_le_cut_s": mean(le),
            "hist_mean_response_s": float(centers[b].mean()) if n else float("nan"),
            "hist_mean_response_le_cut_s": float(centers[b][le].mean()) if np.any(le) else float("nan")}


#: The response-time CDF grid (s): 1 us .. 10 s, 10 points per decade (the axis of Figs. 7-9).
RESPONSE_GRID_S = np.logspace(-6, 1, 71)


def pages(size):
    return -(-np.maximum(np.asarray(size, np.int64), 1) // PAGE_BYTES)


def result(name: str, p: MeasureParams, capacities, rq, per_cap: list[dict], *, extra_dims: dict | None = None):
    """Assemble the trace_result Dataset over the capacities from per-capacity dicts."""
    caps = check_capacities(capacities)
    n = rq["time"].size
    stack = lambda k: np.asarray([d[k] for d in per_cap])  # noqa: E731
    counts = {k: stack(k) for k in ("ssd_reads", "ssd_writes", "md_reads", "md_writes")}
    for k in ("update_ssd_reads", "update_ssd_writes", "update_md_reads", "update_md_writes", "dirty_evictions"):
        if k in per_cap[0]:
            counts[k] = stack(k)
    resp = np.stack([d["response_s"] for d in per_cap])
    scalars = [k for k, v in per_cap[0].items()
               if isinstance(v, (int, float, bool, np.integer, np.floating, np.bool_))
               and k not in counts and k != "hits"]
    extra = {k: stack(k) for k in scalars}
    extra["response_s"] = ((CAPACITY_DIM, "replay_request"), resp)
    extra["route"] = ((CAPACITY_DIM, "replay_request"), np.stack([d["route"] for d in per_cap]).astype(np.int8))
    extra["response_cdf"] = ((CAPACITY_DIM, "response_grid_s"),
                             np.stack([np.searchsorted(np.sort(r), RESPONSE_GRID_S, side="right") / max(n, 1)
                                       for r in resp]))
    for k, (dims, fn) in (extra_dims or {}).items():
        extra[k] = (((CAPACITY_DIM,) + dims), np.stack([fn(d) for d in per_cap]))
    ds = trace_result(caps, policy=name, source=registry.get(name).source, requests=n, hits=stack("hits"),
                      counts=counts,
                      io_bytes=PAGE_BYTES, extra=extra,
                      attrs={"replay_length_s": float(rq["length_s"]), "replay_start_s": float(rq["start_s"])})
    ds = ds.assign_coords(response_grid_s=("response_grid_s", RESPONSE_GRID_S),
                          replay_time_s=("replay_request", rq["time"]))
    ds["response_s"].attrs.update(units="s", long_name="user IO response time (driver + queueing + service)")
    ds["response_cdf"].attrs.update(units="1", long_name="share of user IOs with response <= grid value")
    ds["route"].attrs.update(long_name="where the IO was served: 0 HDD, 1 SSD, 2 temporary buffer")
    for k in ("mean_response_s", "mean_response_first_s", "mean_response_le_cut_s", "hist_mean_response_s",
              "hist_mean_response_le_cut_s"):
        if k in ds:
            ds[k].attrs["units"] = "s"
    ds.attrs.update({k: v for k, v in dataclasses.asdict(p).items() if np.isscalar(v)})
    return ds


def serve_and_count(p: MeasureParams, key, rq, route, *, bg_hdd=None, bg_ssd=None, ssd_extra=None, sim_out=None):
    """Serve the routed requests (and open-loop background IO) through the event simulation
    (:func:`tieringlab.policies.otf_ast.sim.simulate`, on the testbed at ``p.load_scale``; responses reported x
    ``load_scale``) and count the operations. ``sim_out``: a finished simulation (OTF-AST routes as it runs)."""
    s = float(p.load_scale)
    if sim_out is None:
        tb = sim.scaled_testbed(p.testbed, s)
        sim_out = sim.simulate(tb, key, rq, route=route, bg_hdd=bg_hdd, bg_ssd=bg_ssd, ssd_extra_bytes=ssd_extra,
                               n_subluns=int(p.lun_subluns), sublun_bytes=int(p.sublun_bytes))
    out = dict(sim_out)
    out["response_s"] = out["response_s"] * s
    route = out["route"]
    t, w, sz = rq["time"], rq["is_write"], rq["size"]
    pg = pages(sz)
    d = {"response_s": out["response_s"], "route": route, **summary(p, rq, out["response_s"]),
         "ssd_reads": int(pg[(route == SSD) & ~w].sum()), "ssd_writes": int(pg[(route == SSD) & w].sum()),
         "md_reads": int(pg[(route == HDD) & ~w].sum()), "md_writes": int(pg[(route == HDD) & w].sum()),
         "buffer_hits": int((route == BUFFER).sum()), "hdd_cache_hits": out["hdd_cache_hits"]}
    d["buffer_ratio"] = d["buffer_hits"] / max(t.size, 1)
    return d, out
