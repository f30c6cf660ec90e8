"""Reading an MSR-format CSV and computing every vFRM Table 1 statistic (issue 3's performance goal).

Writes a 10^7-request MSR Cambridge CSV (quick: 10^5) to a temporary directory (in a child process, so
its memory does not count), then, in this process: ``read_msr`` + volume size, working-set size, read
ratio, 5-minute re-access ratio and the LRU hit ratio (1 GB, 4 KB lines). Reports the parse rate in MB/s
next to ``pandas.read_csv`` on the same file (same dtypes, whole file at once), ``ratio_parse =
pandas_s / ours_s``, and the peak resident memory (``resource.getrusage``) of the read + statistics.
Goal: < 60 s and < 4 GB on the project's 2-core machine.

The file's content: a 7-day trace over a 100 GB volume, request sizes 4-64 KB (the twins' size mix,
mean 17 KB), offsets from a mix of a small hot set and uniform cold accesses, 30 % writes.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL = '< 60 s and < 4 GiB for the 10^7-request CSV'  # the README's goal column (benchmarks/readme.py)

GEN = r"""
import sys, numpy as np, pandas as pd
n, path = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(0)
ts = 128166372003061629 + np.cumsum(rng.integers(0, 120_000, n))          # ~6 ms mean gap (7 days at 10^7)
pages = np.array([1, 2, 4, 8, 16])[rng.choice(5, n, p=[0.4, 0.2, 0.15, 0.15, 0.1])]
hot = rng.random(n) < 0.8
page = np.where(hot, rng.integers(0, 200_000, n), rng.integers(0, 25_000_000, n))   # 100 GB volume
chunk = 1_000_000
with open(path, "w") as fh:
    for s in range(0, n, chunk):
        e = min(n, s + chunk)
        pd.DataFrame({"t": ts[s:e], "h": "usr", "d": 2, "ty": np.where(rng.random(e - s) < 0.3, "Write", "Read"),
                      "o": page[s:e] * 4096, "sz": pages[s:e] * 4096, "rt": rng.integers(50, 50_000, e - s)}
                     ).to_csv(fh, header=False, index=False)
"""


def run(quick: bool = False) -> dict:
    import pandas as pd

    from tieringlab.traces import read_msr, stats
    from tieringlab.traces.readers import MSR_COLUMNS

    n = 100_000 if quick else 10_000_000
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench_0.csv"
        subprocess.run([sys.executable, "-c", GEN, str(n), str(path)], check=True)
        mb = path.stat().st_size / 1e6
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MiB (Linux: KiB)

        t0 = time.perf_counter()
        ds = read_msr(path)
        t_parse = time.perf_counter() - t0
        t1 = time.perf_counter()
        row = stats.table1_row(ds)
        t_stats = time.perf_counter() - t1
        ours_total = time.perf_counter() - t0
        rss_ours = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        assert row["n_requests"] == n
        del ds

        t0 = time.perf_counter()
        df = pd.read_csv(path, header=None, names=list(MSR_COLUMNS),
                         dtype={"Hostname": "category", "Type": "category"}, engine="c")
        t_pandas = time.perf_counter() - t0
        assert len(df) == n
    return {
        "n_requests": n, "file_mb": round(mb, 1),
        "parse_s": round(t_parse, 3), "stats_s": round(t_stats, 3), "total_s": round(ours_total, 3),
        "pandas_read_csv_s": round(t_pandas, 3),
        "parse_mb_per_s": round(mb / t_parse, 1), "pandas_mb_per_s": round(mb / t_pandas, 1),
        "ratio_parse": t_pandas / t_parse,
        "peak_rss_mib": round(rss_ours, 1), "rss_before_mib": round(rss0, 1),
        "goal_total_s": 60, "goal_peak_gib": 4, "meets_goal": bool(ours_total < 60 and rss_ours < 4096),
        "table1": {k: v for k, v in row.items() if k != "name"},
    }
