"""Speed benchmarks: each ``bench_<name>.py`` measures tieringlab against a peer in the same run.

A benchmark module defines ``run(quick: bool = False) -> dict``; the dict holds the measured
quantities and at least one ``"ratio_*"`` entry (peer time / tieringlab time, or the like).
``python -m benchmarks [name ...] [--quick]`` runs them, prints a summary and writes
``benchmarks/out/<name>.json``. No test depends on wall-clock time: these are reports, not tests.
"""
