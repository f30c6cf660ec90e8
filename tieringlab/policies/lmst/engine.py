"""The simulation driver: every parameter set of a call on the same I/Os, window by window.

Each window, per replication: the slot's I/Os (generated ahead on the pool, or cut from given arrays), the
plans of the controller (:mod:`.controller`) for every parameter set, then one run of the compiled event
engine (:mod:`tieringlab.policies._lmst_native`) per group of sets that share a trajectory. Replications and
parameter sets of one call run concurrently, one thread per CPU core.
"""

from __future__ import annotations

import copy
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import jax.numpy as jnp
import numpy as np
import xarray as xr

from tieringlab.arrays import thread_scratch
from tieringlab.models.workloads import lmst as wl
from tieringlab.policies.lmst.controller import plan_window
from tieringlab.policies.lmst.layout import system_layout
from tieringlab.policies.lmst.params import LmstParams
from tieringlab.policies.lmst.result import result_dataset
from tieringlab.policies.lmst.slots import IoSlots, mean_size_per_disk

__all__ = ["simulate", "QUIET_MIN_IOS"]

#: Windows in which nothing can be buffered (NMST's, and every set's before its first migration) and that hold at
#: least this many I/Os run as a Lindley recursion per disk (:func:`~tieringlab.policies._lmst_native.advance_quiet`,
#: the same numbers bit for bit as the event engine's: a test runs both). 8.3-8.8 instead of 10.8-16.9 ns per I/O
#: on a paper-scale 70 GB slot (~8 M I/Os); smaller windows (the notebook's quick scale, the tests: at most ~0.4 M) keep
#: the event engine and do not compile the loop (~1 s per process). ``math.inf``: the event engine everywhere.
QUIET_MIN_IOS: float = 1_000_000


def _threads(threads: int | None) -> int:
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
            raise ValueError(f"threads must be a positive integer or None; got {threads!r}")
        return int(threads)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _same_system(systems: Sequence[LmstParams]) -> None:
    phys = ("n_ssd", "n_fc", "ssd_rate", "fc_rate", "disk_capacity_bytes", "sla_high_s", "sla_low_s", "window_s",
            "chunk_bytes")
    for p in systems[1:]:
        for f in phys:
            if getattr(p, f) != getattr(systems[0], f):
                raise ValueError(f"the systems of one call must share the hardware and SLAs; {f} differs "
                                 f"({getattr(systems[0], f)!r} vs {getattr(p, f)!r})")


def simulate(systems: Sequence[LmstParams], workload: wl.LmstWorkloadParams, keys=None, *, io=None,
             keep_jobs: bool = False, threads: int | None = None, home=None, alun_class=None,
             fixed_plans=None) -> xr.Dataset:
    """Run every parameter set of ``systems`` on the same I/Os, replication by replication.

    ``systems``: LMST/NMST/SMST parameter instances (vector knobs expand into several sets) sharing the
    hardware; ``workload``: the application layout and, without ``io``, the generator's parameters;
    ``keys``: one ``jax.random`` key per replication (a typed key array of shape ``(R,)``, or one key);
    ``io``: ``(arrivals_s, sizes_bytes, alun)`` instead of generated I/Os (one replication; ``keep_jobs``
    then returns each I/O's response and disk). ``home``, ``alun_class``: see :func:`system_layout`.
    ``fixed_plans``: ``{window: [(alun, dst, kind), ...]}`` (kind 0 backward, 1 forward) executed instead of
    LMST's controller by every migrating system (tests and what-if runs). Returns the Dataset described
    in :func:`tieringlab.policies.lmst.run`.
    """
    from tieringlab.policies import _lmst_native as nat  # noqa: PLC0415  (numba on first use)

    systems = list(systems)
    if not systems:
        raise ValueError("simulate needs at least one LmstParams")
    _same_system(systems)
    p0 = systems[0]
    if abs(p0.window_s - workload.slot_s) > 1e-9 * workload.slot_s:
        raise ValueError(f"LmstParams.window_s ({p0.window_s} s) must equal the workload's slot_s "
                         f"({workload.slot_s} s): "
                         "LMST's windows are aligned with the slots (reading A25)")
    layout = system_layout(p0, workload, home=home, alun_class=alun_class)
    m, n, n_w = layout.m, workload.n_aluns, workload.n_slots
    configs = [(si, c) for si, p in enumerate(systems) for c in p.configs()]
    C = len(configs)
    if io is not None:
        if keys is not None:
            raise ValueError("give either io (the I/Os of one run) or keys (generated workloads), not both")
        sources = [IoSlots(*io, workload)]
        states = [np.zeros((n, n_w), bool)]
    else:
        if keys is None:
            raise ValueError("simulate needs keys (one jax.random key per replication) or io")
        keys = jnp.asarray(keys)
        if keys.ndim == 0:
            keys = keys[None]
        states = [wl.slot_states(k, workload) for k in keys]
        sources = [partial(lambda k, st, w, buf: wl.generate_slot(k, workload, w, st, out=buf), k, st)
                   for k, st in zip(keys, states)]
        if keep_jobs:
            raise ValueError("keep_jobs needs io (per-I/O results of a generated paper-scale run would not fit in "
                             "memory)")
    R = len(sources)
    n_io = sources[0].n if io is not None else 0
    pool = ThreadPoolExecutor(_threads(threads))
    horizon = workload.duration_s
    low = (layout.alun_class == 1) & ~layout.fast[layout.home]    # SLA^L ALUNs whose home is the FC tier
    sla = layout.sla.astype(np.float64)
    n_apps = layout.app_class.size
    L = n_w * n + 1                               # at most one migration per ALUN per window

    def fresh():
        dsf = np.zeros((m, 2))
        dsf[:, nat.F_FREE] = -np.inf
        dsf[:, nat.F_MIGARR] = np.nan
        dsi = np.full((m, 1), -1, np.int64)
        mig_i = np.full((m, 8), -1, np.int64)
        e = np.zeros(0)
        ei = np.zeros(0, np.int64)
        return {"mapping": layout.home.copy(), "alun_mig": np.full(n, -1, np.int64), "dsf": dsf, "dsi": dsi,
                "mig_i": mig_i, "mig_f": np.zeros(m), "log_i": np.zeros((L, 5), np.int64), "log_f": np.zeros((L, 3)),
                "app_w": np.zeros((n_apps, n_w, 4)), "busy": np.zeros((m, 2)), "counters": np.zeros(8),
                "carry": (e, e, ei, ei, ei, ei, ei),
                "resp": np.full(n_io if keep_jobs else 0, np.nan),
                "disk": np.full(n_io if keep_jobs else 0, -1, np.int8)}

    # Shared trajectories: the engine's state of a set lives in st[r][ci], and sets whose states are equal
    # hold ONE dict (all sets start from the same empty system). Each window, sets that share a state and
    # get the same engine inputs (plan, and SMST's rule and the chunk size where a migration can read them)
    # share one kernel run; a shared state that the plans split is copied first (``share``). Exact: the
    # engine is deterministic, so every set gets the numbers of its own run. It saves the windows before a
    # set's first migration (every causal set's first window), and whole runs in sweeps (settings that never
    # migrate are NMST; settings with equal plans throughout, e.g. two e% at which the same checks pass).
    st = [[fresh()] * C for _ in range(R)]
    tally = [[[0, 0] for _ in range(C)] for _ in range(R)]     # per set: Mgr_Ratio count, forward validated
    burst_ts = [int(states[r][low].sum()) for r in range(R)]
    lookahead_any = any(p.timing == "lookahead" for p in systems)

    scratch = threading.local()

    def job_table(J: int):
        """This thread's scratch for the engine's job table (reused by every call of the thread)."""
        return tuple(thread_scratch(scratch, name, J, dt) for name, dt in
                     (("alun", np.int16), ("flag", np.int8), ("nxt", np.int32)))

    high = layout.alun_class == 0

    def quiet(s, plan, n_ios) -> bool:
        """Nothing can be buffered in this window (see :func:`~tieringlab.policies._lmst_native.advance_quiet`):
        no planned or running migration, no carry-in, no disk holding both classes (and the window is large)."""
        if n_ios < QUIET_MIN_IOS or plan["alun"].size or s["carry"][0].size or (s["mig_i"][:, nat.M_ALUN] >= 0).any():
            return False
        h = np.bincount(s["mapping"][high], minlength=m) > 0
        lo = np.bincount(s["mapping"][~high], minlength=m) > 0
        return not (h & lo).any()

    def kernel(r, ci, slot, plan, t_start, t_end, burst_count, gid_base):
        s = st[r][ci]
        p = systems[configs[ci][0]]
        if quiet(s, plan, slot.time.size):
            s["carry"] = nat.advance_quiet(t_end, horizon, slot.time, slot.size, slot.alun, gid_base, slot.slot,
                                           layout.mu, layout.fast, layout.alun_class, layout.alun_app, sla,
                                           burst_count, s["mapping"], s["dsf"], s["app_w"], s["busy"],
                                           s["counters"], s["resp"], s["disk"])
            return
        out = nat.advance(t_start, t_end, workload.slot_s, horizon, slot.time, slot.size, slot.alun, gid_base,
                          nat.Carry(*s["carry"]), layout.mu, layout.fast, layout.alun_class, layout.alun_app, sla,
                          p.policy == "smst", float(p.chunk_bytes), float(workload.alun_bytes), burst_count,
                          plan["alun"], plan["dst"], plan["kind"], plan["est"], np.zeros(plan["alun"].size, np.int64),
                          slot.slot, nat.State(*(s[f] for f in nat.State._fields)), s["resp"], s["disk"],
                          *job_table(s["carry"][0].size + slot.time.size))
        s["carry"] = out

    empty_plan = {"alun": np.zeros(0, np.int64), "dst": np.zeros(0, np.int64), "kind": np.zeros(0, np.int64),
                  "est": np.zeros(0)}

    def decide(r, w_dec, slots):
        """Plans of window ``w_dec`` for every set of replication r, and the Mgr_Ratio count of the slot the
        decision looks at (``slots``: slot index -> SlotIO, as far as generated)."""
        plans = [empty_plan] * C
        for si, p in enumerate(systems):
            idx = [ci for ci, (sj, _) in enumerate(configs) if sj == si]
            look = w_dec if p.timing == "lookahead" else w_dec - 1
            if p.policy == "nmst" or (fixed_plans is None and not 0 <= look < n_w) or \
                    (fixed_plans is not None and w_dec >= n_w):
                continue
            look = min(max(look, 0), n_w - 1)
            nxt_w = min(look + 1, n_w - 1) if p.timing == "lookahead" else look
            mapping = np.stack([st[r][ci]["mapping"] for ci in idx])
            migrating = np.stack([st[r][ci]["alun_mig"] >= 0 for ci in idx])
            reserved = np.zeros((len(idx), m), np.int64)
            to_fast = np.zeros((len(idx), n), bool)
            for q, ci in enumerate(idx):
                mi = st[r][ci]["mig_i"]
                live = mi[:, nat.M_ALUN] >= 0
                np.add.at(reserved[q], mi[live, nat.M_DST], 1)
                to_fast[q, mi[live, nat.M_ALUN]] = layout.fast[mi[live, nat.M_DST]]
            if fixed_plans is not None:
                fp = np.asarray(fixed_plans.get(w_dec, []), np.int64).reshape(-1, 3)
                one = {"alun": fp[:, 0].copy(), "dst": fp[:, 1].copy(), "kind": fp[:, 2].copy(),
                       "est": np.full(len(fp), np.nan)}
                ps = [one] * len(idx)
                fwd = np.zeros((len(idx), n), bool)
                fwd[:, fp[fp[:, 2] == 1, 0]] = True
            else:
                s_D = mean_size_per_disk(slots[look], mapping, m, workload.mean_io_bytes, workload.sample_s)
                ps, fwd = plan_window(p, layout, slots[look].sample_rate, slots[nxt_w].sample_rate, s_D, mapping,
                                      migrating, reserved, workload.alun_bytes)
            bursty = states[r][:, look] & low
            for q, ci in enumerate(idx):
                if w_dec < n_w:
                    plans[ci] = ps[q]
                counted = bursty & (fwd[q] | layout.fast[mapping[q]] | to_fast[q])
                tally[r][ci][0] += int(counted.sum())
                tally[r][ci][1] += int(fwd[q].sum()) if w_dec < n_w else 0
        return plans

    def share(r, plans) -> list[int]:
        """Groups the sets of replication r whose kernels this window are one computation (the same state
        object and the same engine inputs); gives a shared state that the groups split a copy per extra
        group. Returns one set per group (its kernel runs for the group)."""
        groups = {}
        for ci in range(C):
            s, pl = st[r][ci], plans[ci]
            quiet = pl["alun"].size == 0 and not (s["mig_i"][:, nat.M_ALUN] >= 0).any()
            p = systems[configs[ci][0]]
            rule = None if quiet else (p.policy == "smst", float(p.chunk_bytes))   # read only by migrations
            key = (id(s), rule) + tuple((pl[k].dtype.str, pl[k].tobytes()) for k in ("alun", "dst", "kind", "est"))
            groups.setdefault(key, []).append(ci)
        kept = set()
        for (sid, *_), members in groups.items():
            if sid in kept:                             # a further group of a shared state: its own copy
                s = copy.deepcopy(st[r][members[0]])
                for ci in members:
                    st[r][ci] = s
            kept.add(sid)
        return [members[0] for members in groups.values()]

    def light(s: wl.SlotIO) -> wl.SlotIO:
        """A processed slot keeps only what later decisions read (samples and counts), not its I/Os."""
        z = np.zeros(0)
        return s._replace(time=z, size=z, alun=np.zeros(0, np.int32), offset=None)

    ahead = 2 if lookahead_any else 1                 # slots generated ahead, while the kernels run
    empty_slot = wl.SlotIO(n_w - 1, horizon, np.zeros(0), np.zeros(0), np.zeros(0, np.int32), None,
                           np.zeros(n, bool), np.zeros(n, np.int64), np.zeros((n, workload.samples_per_slot)))

    stop = threading.Event()

    def drive(r: int) -> None:
        """Replication r, window after window: its slots are drawn ahead on the pool, its plans made here,
        its C kernels run on the pool. Replications wait only for their own kernels (no barrier across
        replications: a replication whose window ends early plans its next one while the others still run),
        and each touches only its own state, so the results do not depend on the interleaving."""
        futs, cache = {}, {}
        drawn = 0                                      # slots 0 .. drawn - 1 are submitted to the generator
        # output buffers: a processed slot's go back to the generator (SlotBuffers), so a run touches fresh
        # pages for its first few slots only
        spare, held = [], {}
        gid_base = 0

        def prefetch(upto: int):
            nonlocal drawn
            for u in range(drawn, min(upto, n_w - 1) + 1):
                held[u] = spare.pop() if spare else wl.SlotBuffers()   # (no arrays until used)
                futs[u] = pool.submit(sources[r], u, held[u])
            drawn = max(drawn, min(upto, n_w - 1) + 1)

        prefetch(ahead - 1)
        for w in range(n_w):
            if stop.is_set():                          # another replication failed: its error is raised
                return
            for u in [w] + ([w + 1] if lookahead_any and w + 1 < n_w else []):
                if u not in cache:
                    cache[u] = futs.pop(u).result()
            prefetch(w + ahead)                        # the next slots are drawn while this window's kernels run
            plans = decide(r, w, cache)
            slot = cache[w]
            bc = states[r][:, w] & low
            jobs = [pool.submit(kernel, r, ci, slot, plans[ci], w * workload.slot_s, (w + 1) * workload.slot_s, bc,
                                gid_base) for ci in share(r, plans)]
            for f in jobs:
                f.result()
            gid_base += slot.time.size if io is not None else 0
            cache[w] = light(slot)
            spare.append(held.pop(w))                  # its kernels are done: the arrays are free again
            for u in [u for u in cache if u < w]:
                del cache[u]
        # the causal decision at the end of the last window looks at the last slot: counted, never run
        decide(r, n_w, cache)
        # drain: no more arrivals; every queued I/O and running migration completes
        for f in [pool.submit(kernel, r, ci, empty_slot, empty_plan, horizon, np.inf, np.zeros(n, bool), 0)
                  for ci in share(r, [empty_plan] * C)]:
            f.result()

    try:
        if R == 1:
            drive(0)
        else:  # one driver thread per replication (they plan and wait; the pool's threads compute)
            with ThreadPoolExecutor(R) as drivers:
                running = [drivers.submit(drive, r) for r in range(R)]
                try:
                    for f in running:
                        f.result()
                except BaseException:
                    stop.set()                         # the other drivers stop at their next window
                    raise
    finally:
        pool.shutdown()

    return result_dataset(systems, configs, layout, workload, st, tally, burst_ts,
                          io_order=(sources[0].order if io is not None else None), keep_jobs=keep_jobs)
