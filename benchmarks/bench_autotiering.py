"""AutoTiering scoring and matching for one migration epoch: 10^4 VMDKs x 3 tiers (Table IV).

Ours: :func:`tieringlab.policies.autotiering.autotiering_scores` (Alg. 1 lines 22-35, Alg. 2 lines 1-18,
Eq. 6-7 as array code over tiers x VMDKs) followed by :func:`~tieringlab.policies.autotiering.tier_major_greedy`
(Alg. 2 lines 19-25, a ``lax.scan`` per tier) and :func:`~tieringlab.policies.autotiering.place_leftovers`,
jitted; timed after one warm-up call (the compile time is reported separately).

Peer: the same computation as a plain NumPy/Python loop over VMDKs (the paper's loops: for every tier,
for every VMDK, the scalar formulas; then per tier a sort and a loop with the capacity check), measured in
the same run on the same inputs. Identical placements are asserted.

Inputs (seeded): calibrated lines ``m`` in [0, 2], intercepts 0.1-3 ms, confidences, the VMDKs' tiers,
IO sizes of 4/8/64 KiB, sizes 1-60 GB (so storage binds on every tier), measured throughputs.
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

from tieringlab.models import allflash as af
from tieringlab.models.devices import autotiering_tier_table
from tieringlab.policies import autotiering as at
from tieringlab.units import GB, MB

GOAL = 'milliseconds per epoch'  # the README's goal column (benchmarks/readme.py)

SEED = 20261122
SPC = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 0.0, 1.0]])
WET = np.ones((3, 3))
AGING, WET_MIG, FLOOR, MIG_EPOCH = 0.5, 0.1, 1 * MB, 900.0


def inputs(n: int, seed: int = SEED) -> dict:
    rng = np.random.default_rng(seed)
    tiers = af.tier_arrays(autotiering_tier_table(), (200, 400, 800))   # room for ~10^4 VMDKs of 1-60 GB
    caps = af.capacity_caps(tiers, 0.9, 0.9)
    return dict(
        m=rng.uniform(0.0, 2.0, n), b=rng.uniform(100e-6, 3e-3, n), conf=rng.uniform(0.05, 1.0, n),
        L=np.array([300e-6, 900e-6, 2e-3]), cal=rng.integers(0, 3, n), cur=rng.integers(0, 3, n),
        io=rng.choice([4096.0, 8192.0, 65536.0], n), size=rng.uniform(1, 60, n) * GB,
        read=rng.uniform(0, 50, n) * MB, used=rng.uniform(0, 1e5, (3, 2)) * MB, hist=rng.uniform(0, 0.1, (3, n)),
        pinned=np.where(rng.random(n) < 0.02, rng.integers(0, 3, n), -1), caps=caps)


def ours(d: dict):
    sc = at.autotiering_scores(d["m"], d["b"], d["conf"], d["L"], d["cal"], d["cur"], d["io"], d["size"], d["read"],
                               d["used"], d["hist"], caps=d["caps"], spc=SPC, wet=WET, sla=1.0, aging_factor=AGING,
                               wet_mig=WET_MIG, mig_speed_floor=FLOOR, migration_epoch_s=MIG_EPOCH)
    cap3 = jnp.stack([d["caps"].P, d["caps"].B, d["caps"].S], axis=-1)
    dest, _ = at.tier_major_greedy(sc.score, sc.eligible, sc.cap, cap3, d["pinned"])
    return jax.block_until_ready(at.place_leftovers(dest, d["cur"], d["size"], d["caps"].S))


def numpy_loop(d: dict) -> np.ndarray:
    """The paper's loops over VMDKs with NumPy scalars and Python control flow."""
    caps = {k: np.asarray(v) for k, v in d["caps"]._asdict().items()}
    T, V = 3, d["m"].size
    maxX = np.stack([caps["P"], caps["B"], caps["S"]], axis=1)
    remR = caps["B_rw"][:, 0] - d["used"][:, 0]
    remW = caps["B_rw"][:, 1] - d["used"][:, 1]
    score = np.empty((T, V))
    cap = np.empty((T, V, 3))
    elig = np.empty((T, V), bool)
    for t in range(T):
        for v in range(V):
            lat = d["m"][v] * (d["L"][t] - d["L"][d["cal"][v]]) + d["b"][v]
            iops = 1.0 / lat if lat > 0 else 0.0
            x = np.array([iops, iops * d["io"][v], d["size"][v]])
            cap[t, v] = x
            spd = max(min(remR[d["cur"][v]] + d["read"][v], remW[t]), FLOOR)
            cost = 0.0 if t == d["cur"][v] else d["size"][v] / spd / MIG_EPOCH
            if np.any(x > maxX[t]):
                elig[t, v], score[t, v] = False, -1.0
                continue
            omega = np.dot(SPC[t] * WET[t], x / maxX[t]) * d["conf"][v] / WET[t].sum()
            elig[t, v], score[t, v] = True, AGING * d["hist"][t, v] + omega - WET_MIG * cost
    dest = d["pinned"].copy()
    load = np.zeros((T, 3))
    for v in np.flatnonzero(dest >= 0):
        load[dest[v]] += cap[dest[v], v]
    for t in range(T):
        for v in np.argsort(-score[t], kind="stable"):
            if dest[v] < 0 and elig[t, v] and np.all(load[t] + cap[t, v] <= maxX[t]):
                load[t] += cap[t, v]
                dest[v] = t
    s_load = np.array([d["size"][dest == t].sum() for t in range(T)])
    for v in np.flatnonzero(dest < 0):
        room = s_load + d["size"][v] <= caps["S"]
        t = d["cur"][v] if room[d["cur"][v]] else (int(np.argmax(room)) if room.any() else d["cur"][v])
        s_load[t] += d["size"][v]
        dest[v] = t
    return dest


def run(quick: bool = False) -> dict:
    n = 10**3 if quick else 10**4
    d = inputs(n)
    dj = {k: (jnp.asarray(v) if isinstance(v, np.ndarray) else v) for k, v in d.items()}
    t0 = time.perf_counter()
    first = np.asarray(ours(dj))
    compile_s = time.perf_counter() - t0
    reps = []
    for _ in range(5):
        t0 = time.perf_counter()
        out = np.asarray(ours(dj))
        reps.append(time.perf_counter() - t0)
    ours_ms = 1e3 * min(reps)
    t0 = time.perf_counter()
    ref = numpy_loop(d)
    peer_ms = 1e3 * (time.perf_counter() - t0)
    assert np.array_equal(out, first) and np.array_equal(out, ref), "placements differ from the NumPy loop"
    return {"n_vmdks": n, "n_tiers": 3, "ours_ms": ours_ms, "ours_first_call_s": compile_s,
            "numpy_loop_ms": peer_ms, "ratio_numpy_loop_over_ours": peer_ms / ours_ms,
            "moved": int(np.sum(out != d["cur"]))}
