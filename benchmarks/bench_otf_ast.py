"""Both OTF-AST windows under every policy, and the two array-op kernels against plain peers.

Ours: ``registry.run`` of OTF-AST, OTF-AST without write-back, static tiering, FlashCache (pass 1 and
pass 2) and HDD only on the src1_0 (100 min) and src1_1 (120 min) twins at paper scale (``--quick``:
scale 0.05), one 24 GB SSD, each timed after a warm-up call on the same window (the first call's extra
time, jit compilation, is ``compile_s``). ``total_s`` is all twelve runs.

Peers, measured in the same run on the same inputs:

- **SimPy** (the project's queueing peer): the HDD-only replay's per-disk FIFO queues (the same pieces,
  arrival and service times) as a discrete-event model, one process per piece. Must give the same
  departures (asserted, 1e-9 relative). ``ratio_queues_vs_simpy = simpy_s / ours_s`` (ours:
  :func:`tieringlab.models.storage.fifo_departures`).
- **A plain Python OTF-AST controller**: the monitoring as a loop over requests (counting each request
  into its interval and sub-LUN) and the decisions as Python loops over sub-LUNs, the move engine at
  the no-load pace (``copy_share_floor = 1``). Must give the same move log (asserted).
  ``ratio_controller_vs_python = python_s / ours_s`` (ours: :func:`interval_counts`, :func:`hot_matrix`
  and the jitted interval scan, compiled beforehand).
"""

from __future__ import annotations

import time

import jax
import numpy as np
import simpy

import tieringlab  # noqa: F401  (x64)
from tieringlab.models import storage
from tieringlab.policies import otf_ast as oa
from tieringlab.policies import registry
from tieringlab.policies.otf_ast.engine import controller
from tieringlab.policies.otf_ast.replay import replay
from tieringlab.traces import msr_twin
from tieringlab.units import GiB

GOAL = 'seconds per window'  # the README's goal column (benchmarks/readme.py)

POLICIES = ("OTF-AST", "OTF-AST without write-back", "static tiering", "FlashCache", "FlashCache pass 2", "HDD only")


def _simpy_fifo(arrival, service, site, n_sites):
    env = simpy.Environment()
    servers = [simpy.Resource(env, capacity=1) for _ in range(n_sites)]
    dep = np.empty(arrival.size)
    order = np.argsort(arrival, kind="stable")

    def job(i):
        with servers[site[i]].request() as req:
            yield req
            yield env.timeout(service[i])
        dep[i] = env.now

    def source():
        for i in order:
            yield env.timeout(max(arrival[i] - env.now, 0.0))
            env.process(job(i))

    env.process(source())
    env.run()
    return dep


def _python_controller(sub, time_s, is_write, p, cap, length_s):
    """Plain Python OTF-AST (notes Sec. 1.4): per-request counting, per-interval decisions, FIFO engine."""
    S, t_s = p.lun_subluns, p.t_s
    K = int(np.ceil(length_s / t_s))
    cnt = [[0] * S for _ in range(K)]
    for s, x in zip(sub.tolist(), time_s.tolist()):          # the per-request loop the array version avoids
        cnt[min(int(x // t_s), K - 1)][s] += 1
    up_s, down_s = p.copy_s
    tier, busy, streak, tmo = [0] * S, [False] * S, [0] * S, [0] * S
    queue, log = [], []
    free_at, running = 0.0, None
    for k in range(K):
        end = (k + 1) * t_s
        # engine: moves back to back at the no-load pace (plus the sync of the writes they absorbed)
        while True:
            if running is not None and running["te"] <= end:
                tier[running["sub"]] = 1 if running["up"] else 0
                busy[running["sub"]] = False
                tmo[running["sub"]] = streak[running["sub"]] = 0
                free_at, running = running["te"], None
            if running is None and queue:
                occ = sum(tier)
                if queue[0]["up"] and occ >= cap:
                    break
                m = queue.pop(0)
                m["ts"] = max(free_at, m["tq"])
                if m["ts"] >= end:
                    queue.insert(0, m)
                    break
                m["tc"] = m["ts"] + m["w0"]
                running = m
                w = is_write & (sub == m["sub"])
                tt = time_s[w]
                sec = np.floor(tt)
                overlap = np.clip(np.minimum(m["tc"], sec + 1) - np.maximum(m["ts"], sec), 0, None)
                m["te"] = m["tc"] + float(np.sum(overlap)) / p.testbed.sync_max_iops
                log.append(m)
                continue
            break
        row = cnt[k]
        order = sorted(range(S), key=lambda s: (-row[s], s))
        top = [s for s in order[:p.n_top] if row[s] > 0]
        total = sum(row)
        hot = set(top) if total > 0 and sum(row[s] for s in top) >= p.i_pct / 100 * total else set()
        for s in range(S):
            if not busy[s]:
                if tier[s] == 0:
                    streak[s] = streak[s] + 1 if s in hot else 0
                else:
                    tmo[s] = 0 if s in hot else tmo[s] + 1
        demote = [s for s in range(S) if not busy[s] and tier[s] == 1 and tmo[s] >= p.o_intervals]
        cand = [s for s in range(S) if not busy[s] and tier[s] == 0 and streak[s] >= p.c_intervals]
        pending_up = sum(1 for m in queue if m["up"]) + (1 if running is not None and running["up"] else 0)
        staying = sum(1 for s in range(S) if not busy[s] and tier[s] == 1 and s not in demote)
        promote = sorted(cand, key=lambda s: (-row[s], s))[:max(cap - staying - pending_up, 0)]
        for s in demote:
            queue.append(dict(sub=s, up=False, tq=float(end), w0=down_s))
            busy[s] = True
        for s in promote:
            queue.append(dict(sub=s, up=True, tq=float(end), w0=up_s))
            busy[s] = True
            streak[s] = 0
    return log


def _ours_controller(rq, p, cap):
    """Monitoring (interval counts, hot matrix) and the interval scan, as in :func:`oa.otf_ast`; the HDD
    load input is zeros (the peer runs copies at the no-load pace too: ``copy_share_floor = 1``)."""
    K = max(1, int(np.ceil(rq["length_s"] / p.t_s)))
    cnt = oa.interval_counts(rq["sub"], rq["time"], p.lun_subluns, p.t_s, p.m_window, K)
    hot, _ = oa.hot_matrix(cnt, p)
    n_sec, S = K * p.t_s, p.lun_subluns
    zeros = np.zeros((n_sec, S))
    w = rq["is_write"]
    cell = np.minimum(rq["time"][w] // 1, n_sec - 1).astype(np.int64) * S + rq["sub"][w]
    writes = np.bincount(cell, minlength=n_sec * S).astype(np.float64).reshape(n_sec, S)
    jnp = jax.numpy
    log, n, _ = controller(jnp.asarray(hot), jnp.zeros(hot.shape, jnp.int32), jnp.asarray(cnt), zeros, writes,
                           jnp.int32(cap), jnp.int32(p.c_intervals), jnp.int32(p.o_intervals), *p.copy_s,
                           p.copy_share_floor, p.testbed.sync_max_iops, False, t_s=int(p.t_s),
                           n_moves_max=2 * K * p.lun_subluns + 8, conc=1, history=False, evict=False)
    jax.block_until_ready(log)
    return {k: np.asarray(v)[: int(n)] for k, v in log.items()}


def run(quick: bool = False) -> dict:
    scale = 0.05 if quick else 1.0
    key = jax.random.key(0)
    unit = max(4096, int(GiB * scale) // 4096 * 4096)          # the twin's (scaled) sub-LUN
    cap = [24 * unit]
    out = {"scale": scale, "twins": {}}
    total = 0.0
    compile_s = 0.0
    twins = {name: msr_twin(name, scale, seed=0) for name in ("src1_0", "src1_1")}
    for name, ds in twins.items():
        rec = {"requests_replayed": 0}
        for pol in POLICIES:
            knobs = {"sublun_bytes": unit}
            t0 = time.perf_counter()
            r = registry.run(pol, ds, cap, knobs=knobs, key=key)
            first = time.perf_counter() - t0
            t0 = time.perf_counter()
            r = registry.run(pol, ds, cap, knobs=knobs, key=key)
            dt = time.perf_counter() - t0
            rec[pol] = {"s": dt, "ssd_ratio": float(r["hit_ratio"][0]),
                        "mean_response_ms": 1e3 * float(r["mean_response_s"][0])}
            rec["requests_replayed"] = int(r["requests"][0])
            total += dt
            compile_s += max(first - dt, 0.0)
        out["twins"][name] = rec

    # peer 1: SimPy on the HDD-only replay's disk queues of src1_1
    ds = twins["src1_1"]
    p = oa.HddOnlyParams()
    rq = replay(ds, p)
    h = p.testbed.hdd
    j, d, o, b = storage.raid0_pieces(h, rq["offset"], rq["size"])
    rng = np.random.default_rng(0)
    svc, _ = storage.hdd_service_times(h, rq["time"][j], d, o, b, rq["is_write"][j], rng.random(j.size))
    arr = rq["time"][j]
    n_peer = arr.size if not quick else min(arr.size, 20_000)
    storage.fifo_departures(arr[:n_peer], svc[:n_peer], d[:n_peer], h.n_disks)
    t0 = time.perf_counter()
    ours_dep = storage.fifo_departures(arr[:n_peer], svc[:n_peer], d[:n_peer], h.n_disks)
    ours_q = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref_dep = _simpy_fifo(arr[:n_peer], svc[:n_peer], d[:n_peer], h.n_disks)
    simpy_s = time.perf_counter() - t0
    np.testing.assert_allclose(ours_dep, ref_dep, rtol=1e-9)

    # peer 2: a plain Python controller on the src1_1 window (no-load copies), same move log
    po = oa.OtfAstParams(copy_share_floor=1.0, sublun_bytes=unit)
    rq = replay(ds, po)
    n_ssd = int(cap[0] // po.sublun_bytes)
    _ours_controller(rq, po, n_ssd)                           # compile
    t0 = time.perf_counter()
    ours_log = _ours_controller(rq, po, n_ssd)
    ours_c = time.perf_counter() - t0
    t0 = time.perf_counter()
    py_log = _python_controller(rq["sub"], rq["time"], rq["is_write"], po, n_ssd, rq["length_s"])
    py_s = time.perf_counter() - t0
    started = np.isfinite(ours_log["ts"])
    assert [m["sub"] for m in py_log] == ours_log["sub"][started].tolist(), "controllers disagree"
    np.testing.assert_allclose([m["ts"] for m in py_log], ours_log["ts"][started], atol=1e-6)

    out.update(total_s=total, compile_s=compile_s, pieces=int(n_peer), ours_queue_s=ours_q, simpy_s=simpy_s,
               ratio_queues_vs_simpy=simpy_s / ours_q, ours_controller_s=ours_c, python_controller_s=py_s,
               ratio_controller_vs_python=py_s / ours_c, moves=int(started.sum()))
    return out
