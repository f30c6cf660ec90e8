"""OTF-AST (on-the-fly automated storage tiering, Fig. 4-5, Sec. 3.3, Table 1-3) over a trace: the monitor
(:mod:`.monitor`), then one closed-loop event simulation (:mod:`.sim`) of the decisions, the moves' copy chunks
and sync, and every request's route and response, and the counts (:mod:`.result`). Registered as "OTF-AST" and "OTF-AST
without write-back" (Table 5: a demotion is a tiering-table update)."""

from __future__ import annotations

from functools import partial

import jax
import numpy as np
import xarray as xr

from tieringlab.models.storage import SSD
from tieringlab.policies.otf_ast.example import example
from tieringlab.policies.otf_ast.monitor import history_counts, hot_matrix, interval_counts
from tieringlab.policies.otf_ast.parameters import SOURCE, OtfAstParams
from tieringlab.policies.otf_ast.replay import replay, ssd_subluns
from tieringlab.policies.otf_ast.result import result, serve_and_count
from tieringlab.policies.otf_ast.sim import scaled_testbed, simulate
from tieringlab.policies.registry import PolicySpec, register
from tieringlab.units import MINUTE, PAGE_BYTES

__all__ = ["otf_ast"]


def _otf_ast_one(rq, n_ssd: int, p: OtfAstParams, key, pre):
    hot, hsum, cnt, K = pre
    tb = scaled_testbed(p.testbed, p.load_scale)
    r = simulate(tb, key, rq, ctrl=(hot, hsum, cnt), n_subluns=int(p.lun_subluns), sublun_bytes=int(p.sublun_bytes),
                 cap=int(n_ssd), copy_s=p.copy_s, t_s=int(p.t_s), c=int(p.c_intervals), o=int(p.o_intervals),
                 history=bool(p.history), evict=p.full_policy == "evict_max_timeout",
                 skip_down=bool(p.skip_demotion_copy), conc=int(p.move_concurrency))
    d, out = serve_and_count(p, key, rq, None, sim_out=r)
    log = r["log"]
    n_moves = int(r["n_moves"])
    up = log["up"]
    started = np.isfinite(log["ts"])
    done = np.isfinite(log["te"])
    unit_pages = int(p.sublun_bytes) // PAGE_BYTES
    copied_up = int((up & done).sum())
    copied_down = int((~up & done & (log["tc"] > log["ts"])).sum())
    d.update(hits=int((d["route"] == SSD).sum()),
             update_md_reads=copied_up * unit_pages, update_ssd_writes=copied_up * unit_pages,
             update_ssd_reads=copied_down * unit_pages, update_md_writes=copied_down * unit_pages,
             promotions=int((up & started).sum()), demotions=int((~up & started).sum()),
             n_moves=n_moves)
    # Fig. 6: SSD-resident sub-LUNs at each minute, from the move log (a move counts when it ends)
    minutes = np.arange(int(np.ceil(rq["length_s"] / MINUTE)) + 1) * MINUTE
    te = log["te"]
    sign = np.where(up, 1, -1)
    o = np.argsort(te, kind="stable")
    cum = np.r_[0, np.cumsum(sign[o])]
    d["resident_per_minute"] = cum[np.searchsorted(te[o], minutes, side="right")]
    d["hdd_util_per_s"] = out["hdd_util"]
    d["hdd_user_util_per_s"] = out["hdd_user_util"]
    d["interval_resident"] = r["resident"]
    d["interval_hot"] = r["n_hot"]
    tc = np.where(np.isfinite(log["tc"]), log["tc"], np.nan)
    moves = dict(sub=log["sub"], up=up, queued_s=log["tq"], start_s=log["ts"], copy_end_s=log["tc"],
                 sync_end_s=log["te"], measured_copy_end_s=tc, buffer_writes=log["nbw"].astype(float),
                 sync_ios=log["nsync"])
    d["moves"] = moves
    return d


def _precompute(rq, p: OtfAstParams):
    t_s = int(p.t_s)
    K = max(1, int(np.ceil(rq["length_s"] / t_s)))
    S = int(p.lun_subluns)
    window = int(p.m_window) if p.m_reading == "window" else t_s
    cnt = interval_counts(rq["sub"], rq["time"], S, t_s, window, K)
    hot, _conc = hot_matrix(cnt, p)
    hsum = history_counts(hot, int(p.m_window)) if p.history else np.zeros(hot.shape, np.int32)
    return hot, hsum, cnt, K


def otf_ast(ds: xr.Dataset, capacities, params: OtfAstParams | None = None, key=None) -> xr.Dataset:
    """OTF-AST over the replay window of ``ds`` for each SSD size (bytes; whole sub-LUNs) in ``capacities``.

    ``key`` (``jax.random``) draws the disks' rotational latencies (same draws for every policy).
    Returns :func:`~tieringlab.policies.contract.trace_result` with, beside the counts, Table 4's
    ``hit_ratio`` (SSD) and ``buffer_ratio``, Table 5's means (``mean_response_s``, ``_first_s``,
    ``_le_cut_s``, histogram means), ``response_s`` and ``response_cdf`` (Figs. 7-9), Fig. 6's
    ``resident_per_minute``, ``hdd_util_per_s`` and the move log (dim ``move``).
    """
    p = OtfAstParams() if params is None else params
    key = jax.random.key(0) if key is None else key
    n_ssd = ssd_subluns(capacities, p)
    rq = replay(ds, p)
    pre = _precompute(rq, p)
    per = [_otf_ast_one(rq, int(c), p, key, pre) for c in n_ssd]   # a handful of SSD sizes
    n_min = per[0]["resident_per_minute"].size
    m_max = max(d["n_moves"] for d in per)

    def pad_moves(d, k, fill):
        v = np.asarray(d["moves"][k])
        return np.r_[v, np.full(m_max - v.size, fill, dtype=np.result_type(v.dtype, type(fill)))]

    extra = {"resident_per_minute": (("minute",), lambda d: d["resident_per_minute"]),
             "hdd_util_per_s": (("second",), lambda d: d["hdd_util_per_s"]),
             "hdd_user_util_per_s": (("second",), lambda d: d["hdd_user_util_per_s"]),
             "interval_resident": (("interval",), lambda d: d["interval_resident"]),
             "interval_hot": (("interval",), lambda d: d["interval_hot"])}
    for k, fill in (("sub", -1), ("up", False), ("queued_s", np.nan), ("start_s", np.nan), ("copy_end_s", np.nan),
                    ("sync_end_s", np.nan), ("measured_copy_end_s", np.nan), ("buffer_writes", np.nan),
                    ("sync_ios", -1)):
        extra[f"move_{k}"] = (("move",), partial(pad_moves, k=k, fill=fill))
    ds_out = result("OTF-AST without write-back" if p.skip_demotion_copy else "OTF-AST", p, capacities, rq,
                     per, extra_dims=extra)
    ds_out = ds_out.assign_coords(minute=("minute", np.arange(n_min)))
    return ds_out


register(PolicySpec(name="OTF-AST", kind="trace", fn=otf_ast, params_type=OtfAstParams, source=SOURCE,
                    fixed={"skip_demotion_copy": False}, random=True,
                    example=example(OtfAstParams, {"skip_demotion_copy": False}),
                    description="on-the-fly AST: promote sub-LUNs hot for c intervals, demote after o quiet ones"))
register(PolicySpec(name="OTF-AST without write-back", kind="trace", fn=otf_ast, params_type=OtfAstParams,
                    source=SOURCE + "; Table 5 'without SSD->HDD write-back'", fixed={"skip_demotion_copy": True},
                    random=True, aliases=("OTF-AST no write-back",),
                    example=example(OtfAstParams, {"skip_demotion_copy": True}),
                    description="OTF-AST whose demotions skip the SSD->HDD copy (a tiering-table update)"))
