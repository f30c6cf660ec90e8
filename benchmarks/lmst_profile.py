"""Where notebook 05's paper-scale CPU goes: one replication of its work, by stage (issue 31).

Runs, at the section's paper scale (``params.yaml``'s ``lmst:``), one replication of: the focus cell (70 GB /
50 %) with every configuration a cell runs (NMST, LMST, SMST, the look-ahead and policy readings), the same
cell under the workload reading (slot persistence 0.7: NMST, LMST, SMST on its own I/Os), and the focus
cell's call with Fig. 16's sweep beside. Each stage's CPU time (``time.process_time``, all threads) is split
into the workload generator (``generate_slot``), the event engine (``advance``, with its kernel runs and the
I/Os they simulate) and the rest (the controller, JAX dispatch, the result), measured by thread CPU time
around each call. Usage: ``python -m benchmarks.lmst_profile [--cprofile FILE]`` (FILE: the main thread's
cProfile of the first stage, i.e. the driver and the controller; the engine and the generator run on the
pool's threads).

Measured 2026-11-26 (HEAD d965a50, params.yaml: n_reps 10, readings e_m5, rho_0p8, a10c, persist_0p7, look-ahead;
one replication, machine under load ~4, CPU s):

- focus cell, 7 configurations: 53.2 (generator 9.4 for 30 slots of ~8.1 M I/Os; engine 42.4 in 211 kernel runs
  over 1,668 M I/O-runs, 25.4 ns each, i.e. 6.8 runs per generated I/O: trajectory sharing saves only the first
  window; controller 0.7; driver, JAX and result 0.7);
- persist_0p7 (own I/Os, NMST, LMST, SMST): 23.3 (generator 7.2, engine 15.7 over 718 M I/O-runs, 21.8 ns);
- the focus cell with Fig. 16's sweep: 80.4, i.e. 27.2 more than the cell alone (engine 1,619 M I/O-runs more);
- the main thread's cProfile: 95 % waiting on the pool (the engine and the generator), plan_window 1.3 s.

So 80 % of the CPU is the event engine (~25 ns per I/O per configuration run), 20 % the generator (~38 ns per
I/O), the controller and the rest ~2 %. The nine cells carry 9.0 x the focus cell's I/Os; the notebook is about
715 CPU-s per replication, 7,150 at n_reps 10 (~6,100 scaled to the quiet fd2cbc2 run's CPU per I/O): one
configuration run of every cell is ~56 CPU-s per replication, the generator ~85, the persistence reading ~210.
Floors, one paper-scale 70 GB slot: the generator 25-33 ns per I/O; a bare Lindley recursion (NMST's numbers bit
for bit) 8.3-8.8 ns per I/O against the event engine's 10.8-16.9 for NMST: now the engine's quiet-window path
(engine.QUIET_MIN_IOS), worth ~3-5 % of the notebook. Even at that floor for every configuration, the main
reading alone (generator + NMST, LMST, SMST over the nine cells) is ~120 CPU-s per replication, ~1,200 at 10.

Issue 31, the engine's arrivals-only loop (2026-11-27, HEAD 62ffe7d before, the same plus
``_lmst_native._arrivals_only`` after; each run alone under the heavy-run lock, the machine otherwise loaded
3-6; CPU s, before -> after):

- focus cell, 7 configurations: 50.1 -> 46.0 (engine 39.9 -> 35.2 over 1,668 M I/O-runs, 23.9 -> 21.1 ns each;
  generator 9.2 -> 9.6);
- persist_0p7 (NMST, LMST, SMST): 21.2 -> 18.2 (engine 14.0 -> 11.2 over 718 M I/O-runs, 19.5 -> 15.6 ns);
- the focus cell with Fig. 16's sweep: 84.7 -> 68.3 (engine 75.6 -> 60.1 over 3,287 M I/O-runs, 23.0 -> 18.3 ns);
- the whole run: 168.8 -> 144.7 CPU s (user + sys, peak RSS 1.6 GB both); projection 6,765 -> 6,001 CPU-s for the
  notebook at n_reps 10 (~56 -> ~50 min on 2 cores), still far from 10 minutes.

The results are the same bit for bit: every value of ``metrics/05_lmst.json`` and the report of a papermill
run at the small defaults, the Dataset of one paper-scale replication of the focus cell over 10 slots (7
configurations, 582 M I/O-runs, 678 migrations), and the 20 replayed kernel calls below.

Where an LMST kernel run's time goes (one replication of the focus cell, windows 1, 3 and 6, each kernel call's
inputs captured and replayed in one process, the old and the new kernel interleaved, min of 4 runs; outputs and
final states equal bit for bit): the window's migrations end 60-190 s into its 1,200 s, with 5-17 % of its I/Os,
at 30-80 ns per I/O (22-340 thousand eager events: chunk hand-offs, the migrating disks' choices); the rest of
the window, nothing but arrivals, ran at 19-30 ns per I/O in the general loop against 8-10 for NMST's quiet
path. The difference is the SLA^L I/Os that LMST moved onto the SSDs (10-20 % of the I/Os: buffered, since an
SLA^H I/O may still overtake them, and chosen at the disk's next catch-up); an ablation that commits them (wrong
answers) runs at 13-17. An instruction-level profile (perf timer samples mapped onto the kernel's machine code;
the VM has no hardware counters) is flat over the arrival path: branches on the arrival's disk and class (coin
flips to the CPU), stack reloads and the service-time division, no hot spot. The arrivals-only loop
(``_lmst_native`` module doc) takes the rest of the window to 15-23 ns; per kernel run 17-32 -> 14.5-27 ns per
I/O (17 LMST/SMST/look-ahead/reading runs: 3.58 -> 3.00 s, -16 %), NMST's quiet runs unchanged (8-10).
The generator (21-30 ns per I/O on this machine) is at its floor without changing the draws: NumPy's two
exponentials and one uniform per I/O (PCG64) 13.5-15 ns, ``fill_pieces`` 3.3, ``sample_rates`` 2.2, the size
scaling 0.5. Halving the CPU per simulated I/O is therefore not in reach with bit-identical results: an
SLA^L I/O that starts at its arrival on an idle SSD could be committed there (the same response), but its
metrics would then be added before those the buffered path adds first, which moves the sums in their last bits.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import threading
import time
from collections import defaultdict

import jax

import tieringlab  # noqa: F401  (x64)
from tieringlab import params as tparams
from tieringlab.experiments import lmst as X
from tieringlab.models.workloads import lmst as wl
from tieringlab.policies import _lmst_native as nat
from tieringlab.policies.lmst import engine

_acc = defaultdict(float)
_lock = threading.Lock()


def _timed(name, fn, count=None):
    def wrapped(*a, **k):
        t0 = time.thread_time()
        out = fn(*a, **k)
        dt = time.thread_time() - t0
        with _lock:
            _acc[name + "_s"] += dt
            _acc[name + "_calls"] += 1
            if count is not None:
                _acc[name + "_ios"] += count(a, k)
        return out
    return wrapped


def _install():
    engine.wl.generate_slot = _timed("generate", wl.generate_slot)
    nat_advance = nat.advance
    nat.advance = _timed("engine", nat_advance, count=lambda a, k: a[4].shape[0] + a[8][0].shape[0])
    nat.advance_quiet = _timed("engine", nat.advance_quiet, count=lambda a, k: a[2].shape[0])
    engine.plan_window = _timed("controller", engine.plan_window)


def _io_rate(p, c, b) -> float:
    """Expected I/Os per second of cell (c GB, burst ratio b): idle rates, doubled in bursty slots (Sec. 4.1.3.1)."""
    wp = X.workload(p, c, b)
    return float(wl.mean_byte_rates(wp).sum() / wp.mean_io_bytes * (1 + b * (wp.burst_rate_factor - 1)))


def _stage(name, fn):
    _acc.clear()
    c0, w0 = time.process_time(), time.perf_counter()
    fn()
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    parts = {k: v for k, v in _acc.items()}
    other = cpu - parts.get("generate_s", 0.0) - parts.get("engine_s", 0.0)
    print(f"{name}: cpu {cpu:.1f} s, wall {wall:.1f} s | generator {parts.get('generate_s', 0):.1f} s "
          f"({int(parts.get('generate_calls', 0))} slots) | engine {parts.get('engine_s', 0):.1f} s "
          f"({int(parts.get('engine_calls', 0))} kernel runs, {parts.get('engine_ios', 0) / 1e6:.0f} M I/O-runs, "
          f"{1e9 * parts.get('engine_s', 0) / max(parts.get('engine_ios', 1), 1):.1f} ns each) | controller "
          f"{parts.get('controller_s', 0):.1f} s | other (driver, controller, JAX, result) {other:.1f} s",
          flush=True)
    return cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cprofile", default=None)
    ap.add_argument("--stages", default="cell,persist,sweep")
    args = ap.parse_args()
    p = tparams.validate_section("lmst", tparams.read_yaml("params.yaml").get("lmst") or {})
    one = dataclasses.replace(p, capacities_gb=(p.focus_capacity_gb,), burst_ratios=(p.focus_burst,), n_reps=1)
    small = dataclasses.replace(
        one, workload=dataclasses.replace(one.workload, n_slots=3, slot_s=60.0, alun_bytes=50_000_000, sample_s=3.0),
        policy=dataclasses.replace(one.policy, window_s=60.0, disk_capacity_bytes=1_000_000_000))
    key = jax.random.fold_in(jax.random.key(0), 7)
    X.cells_and_sweep(small, key)                      # compile (numba, JAX) at the small size
    X.cells_workload_readings(small, key)
    _install()
    print(f"paper-scale section: {one.workload.n_slots} slots of {one.workload.slot_s} s, focus cell "
          f"{one.focus_capacity_gb} GB / {one.focus_burst}, configs {X._labels(one)}", flush=True)
    stages = args.stages.split(",")
    cpu = {}
    if "cell" in stages:
        if args.cprofile:
            prof = cProfile.Profile()
            prof.enable()
        cpu["cell"] = _stage("focus cell, all configurations (cells)", lambda: X.cells(one, key))
        if args.cprofile:
            prof.disable()
            prof.dump_stats(args.cprofile)
    if "persist" in stages:
        cpu["persist"] = _stage("focus cell, workload reading persist_0p7", lambda: X.cells_workload_readings(one, key))
    if "sweep" in stages:
        cpu["sweep"] = _stage("focus cell with Fig. 16 sweep (cells_and_sweep)", lambda: X.cells_and_sweep(one, key))
    if len(cpu) == 3:
        # the notebook's cells cost about the focus cell's times their I/Os (the engine and the generator are per I/O)
        scale = sum(_io_rate(p, c, b) for c in p.capacities_gb for b in p.burst_ratios) / _io_rate(
            p, p.focus_capacity_gb, p.focus_burst)
        per_rep = scale * (cpu["cell"] + cpu["persist"]) + cpu["sweep"] - cpu["cell"]
        print(f"projection: the cells carry {scale:.2f} x the focus cell's I/Os; per replication about "
              f"{per_rep:.0f} CPU-s, at n_reps = {p.n_reps}: {p.n_reps * per_rep:.0f} CPU-s "
              f"(~{p.n_reps * per_rep / 120:.0f} min on 2 cores)", flush=True)


if __name__ == "__main__":
    main()
