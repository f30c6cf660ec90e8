"""A 15-hour EAFC controller run (Fig. 4d: SPECsfs2008-like, 3 ms, 90 cwnds of 120 samples) in seconds,
against a plain-Python closed loop of the same hybrid store timed in the same run.

Ours: ``registry.run("EAFC", obs, ...)`` on the paper-scale SPECsfs workload (1 MiB units, 14 GB RAM,
one trace): the build of the observations (trace generation and the stack-distance hit curves at every
size, once per trace) and the controller run (first call: compilation included; then the run alone)
are timed separately; then a 20-point gain sweep over the same observations (no re-simulation of the
cache per size or per gain).

Peer: the same closed loop written plainly — the monitoring daemon's 5 s samples in a Python loop,
every access of the sample through an OrderedDict RAM LRU and an OrderedDict SSD LRU resized to
``floor(0.9 P / unit)`` (exact, access by access), the MVA recursion in Python, Fig. 3 in Python, the
same noise draws. ``ratio_vs_python_loop`` = peer time / our run time (compilation excluded);
``ratio_realtime`` = simulated seconds / our run time. The two runs' mean partition sizes are reported
side by side (they differ only by the step-level approximation of the scan, notes §7.2).
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict

import jax
import numpy as np

from tieringlab.models import hybridstore as hys
from tieringlab.models.workloads import eafc as wl
from tieringlab.policies import eafc as pe
from tieringlab.policies import registry
from tieringlab.units import GB, MS, MiB

GOAL = 'seconds per 15-hour run'  # the README's goal column (benchmarks/readme.py)


def _mva_py(dem, mult, delay, N):
    Q = [0.0] * len(dem)
    Qp, X = list(Q), 0.0
    for n in range(1, N + 1):
        R = [d * (1 + q) for d, q in zip(dem, Q)]
        X = n / (delay + sum(m * r for m, r in zip(mult, R)))
        Qp, Q = Q, [X * r for r in R]
    return X, Qp


def _response_py(h, hr, hs, ph):
    hm = max(0.0, 1 - hr - hs)
    dem = [ph.read_frac * hs * h.s_ssd / h.k_ssd,
           (ph.read_frac * hm + ph.write_frac * h.hdd_write_s) * h.s_hdd / h.k_hdd]
    X, Qp = _mva_py(dem, [h.k_ssd, h.k_hdd], ph.think_s + h.l_ram * (ph.read_frac * hr + 1 - ph.read_frac),
                    ph.population)
    return X, hr * h.l_ram + hs * h.s_ssd * (1 + Qp[0]) + hm * h.s_hdd * (1 + Qp[1])


def python_loop(w: wl.Workload, h: hys.HybridStoreParams, p: pe.EafcParams, eps: np.ndarray):
    """The plain closed loop (module docstring). Returns the partition per cwnd."""
    ram_units = int(h.ram_bytes // w.unit_bytes)
    ram, ssd = OrderedDict(), OrderedDict()
    keys, is_read = w.keys.tolist(), w.is_read.tolist()

    def through_ram(k):
        if k in ram:
            ram.move_to_end(k)
            return True
        if ram_units:
            if len(ram) >= ram_units:
                ram.popitem(last=False)
            ram[k] = None
        return False

    for i in range(int(w.seg_start[0])):  # the creation pass warms the RAM
        through_ram(keys[i])
    E, S = eps.shape
    ends = np.cumsum([ph.duration_s for ph in w.phases])
    pos, P, hr, hs = float(w.seg_start[0]), p.p_init, 0.0, 0.0
    parts = []
    for e in range(E):
        cap = math.floor(p.util_cap * P / w.unit_bytes + 1e-9)
        while len(ssd) > cap:
            ssd.popitem(last=False)
        lats, used = [], []
        for s in range(S):
            k_ph = min(int(np.searchsorted(ends, (e * S + s) * h.sample_s, side="right")), len(w.phases) - 1)
            ph = w.phases[k_ph]
            pos = max(pos, float(w.seg_start[k_ph]))
            X0, _ = _response_py(h, hr, hs, ph)
            end = min(pos + X0 * ph.read_frac * h.sample_s / w.reads_per_access, float(w.seg_end[k_ph]))
            n = r_hit = s_hit = 0
            for i in range(int(pos), int(end)):
                k = keys[i]
                hit = through_ram(k)
                if not is_read[i]:
                    continue
                n += 1
                if hit:
                    r_hit += 1
                elif k in ssd:
                    ssd.move_to_end(k)
                    s_hit += 1
                elif cap > 0:
                    if len(ssd) >= cap:
                        ssd.popitem(last=False)
                    ssd[k] = None
            pos = end
            if n:
                hr, hs = r_hit / n, s_hit / n
            _, lat = _response_py(h, hr, hs, ph)
            lats.append(lat * math.exp(h.noise_sigma * eps[e, s] - 0.5 * h.noise_sigma ** 2))
            used.append(len(ssd) * w.unit_bytes)
        lat_obs = float(np.percentile(lats, p.percentile))
        lat_min = p.lat_min_frac * p.lat_max_s
        parts.append(P)
        if lat_obs > p.lat_max_s and np.mean(used) / P >= p.t_util:
            P = P * (1 + min((lat_obs - p.lat_max_s) * p.kp_inc, p.t_inc))
        elif lat_obs < lat_min:
            P = P * (1 - min((lat_min - lat_obs) * p.kp_dec, p.t_dec))
        P = min(max(P, p.p_floor), p.p_ceiling)
    return np.array(parts)


def run(quick: bool = False) -> dict:
    sp = wl.SpecSfsParams(unit_bytes=(8 if quick else 1) * MiB)
    if quick:
        sp = wl.SpecSfsParams(unit_bytes=8 * MiB, phase_s=3600.0)
    h = hys.HybridStoreParams(ram_bytes=14 * GB, max_blocks=4096 if quick else 1 << 15)
    rpa = sp.unit_bytes / sp.read_bytes
    n = [int(math.ceil(hys.max_ops_per_s(ph, h) * ph.read_frac * ph.duration_s / rpa * 1.001)) + 2
         for ph in sp.phases()]
    key = jax.random.key(20261123)
    t0 = time.perf_counter()
    w = wl.specsfs2008(key, sp, n)
    obs = hys.observations(w, h, 600.0)
    build_s = time.perf_counter() - t0
    knobs = {"lat_max_s": 3 * MS}
    t0 = time.perf_counter()
    ours = registry.run("EAFC", obs, knobs=knobs, key=jax.random.key(1))
    first_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    ours = registry.run("EAFC", obs, knobs=knobs, key=jax.random.key(1))
    run_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for kp in np.linspace(5, 100, 20):
        registry.run("EAFC", obs, knobs={**knobs, "kp_inc": float(kp)}, key=jax.random.key(1))
    sweep_s = time.perf_counter() - t0
    eps = np.asarray(jax.random.normal(jax.random.key(1), (obs.sizes["epoch"], obs.sizes["sample"]), np.float64))
    p = registry.make_params("EAFC", knobs)
    t0 = time.perf_counter()
    ref = python_loop(w, h, p, eps)
    peer_s = time.perf_counter() - t0
    simulated_s = w.duration_s
    return {
        "workload": f"SPECsfs2008-like, {simulated_s / 3600:g} h, {len(w.keys)} accesses of {sp.unit_bytes} bytes",
        "n_cwnds": int(obs.sizes["epoch"]),
        "samples": int(obs.sizes["epoch"] * obs.sizes["sample"]),
        "build_observations_s": build_s,
        "first_run_s_with_compile": first_s,
        "run_s": run_s,
        "gain_sweep_20_runs_s": sweep_s,
        "python_loop_s": peer_s,
        "mean_partition_gb_ours": float(ours["partition_bytes"].mean() / GB),
        "mean_partition_gb_python_loop": float(ref.mean() / GB),
        "ratio_realtime": simulated_s / run_s,
        "ratio_vs_python_loop": peer_s / run_s,
        "ratio_vs_python_loop_incl_compile_and_build": peer_s / (run_s + build_s + first_s),
    }
