"""Speed benchmarks: each ``bench_<name>.py`` measures tieringlab against a peer in the same run.

A benchmark module defines ``run(quick: bool = False) -> dict``; the dict holds the measured
quantities and at least one ``"ratio_*"`` entry (peer time / tieringlab time, or the like).
``python -m benchmarks [name ...] [--quick]`` runs them, prints a summary and writes
``benchmarks/out/<name>.json``. No test depends on wall-clock time: these are reports, not tests.
"""

import time


def best_of(f, repeats: int):
    """``(best wall-clock seconds of repeats calls of f, the last call's result)``: the benchmarks' timing rule."""
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t0)
    return best, out
