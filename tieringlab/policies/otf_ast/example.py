"""A small valid call of each system here, for the contract test (``PolicySpec.example``): the paper's structure
shrunk to 12 sub-LUNs of 1 MiB, 10-s intervals, a replay window of two minutes after two minutes of history (static
tiering places from the window before the replay), a hot pair of sub-LUNs that drifts every 25 s."""

from __future__ import annotations

import dataclasses

import numpy as np

from tieringlab.units import MiB

#: The shrunk system: sub-LUNs, sub-LUN size, interval (s), intervals, SSD capacity (sub-LUNs).
S, SUB, T, K, CAP = 12, 1 * MiB, 10, 12, 4
#: Fields of every system's params set for the shrunk system (each system takes the ones it has).
SMALL = dict(lun_subluns=S, sublun_bytes=SUB, t_s=T, m_window=T, n_top=3, i_pct=50.0, c_intervals=2, o_intervals=3,
             copy_up=2.5, copy_down=6.5, copy_share_floor=1.0)


def trace(seed: int = 0, n: int = 1200):
    """Random requests over the shrunk LUN in [0, 2 K T) s (replayed: the second half), 70 % of them on a hot pair
    of sub-LUNs that moves every 25 s."""
    from tieringlab.traces.readers import make_dataset  # noqa: PLC0415  (only the contract test calls it)

    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0, 2 * K * T, n))
    hot = (t // 25).astype(int) % (S - 1)
    sub = np.where(rng.random(n) < 0.7, hot + rng.integers(0, 2, n), rng.integers(0, S, n))
    off = sub * SUB + rng.integers(0, SUB // 4096 - 2, n) * 4096
    return make_dataset(t, off, rng.choice([4096, 8192], n), rng.random(n) < 0.3, name="small", source="example",
                        replay_start_s=float(K * T), replay_end_s=float(2 * K * T))


def example(params_type: type, fixed: dict | None = None):
    """``example() -> ((trace, [CAP sub-LUNs]), {"params": ...})`` for a system whose params are ``params_type``."""

    def call():
        names = {f.name for f in dataclasses.fields(params_type)}
        p = params_type(**{k: v for k, v in SMALL.items() if k in names}, **(fixed or {}))
        return (trace(), [CAP * SUB]), {"params": p}

    return call
