"""The DVC-native workflow on a copy of the repository: `dvc exp run -S` in the workspace and
`--queue` + `dvc queue start` in a temporary copy, `dvc exp show` listing both with their metrics,
`dvc metrics diff` / `dvc params diff` between them, and `dvc plots show` rendering the quickstart
figure from its CSV table.

Independent truth: each experiment's working set (a metric of 00_quickstart) equals the number of
distinct ``line_bytes`` pages the first 3000 requests touch, counted here by expanding every request
of the raw CSV into its pages (pandas and a Python set, no tieringlab code).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd
import pytest
from repo_copy import copy_repo, sh

STAGE = "00_quickstart"
METRICS = f"results/metrics/{STAGE}.json"
N = 3000

pytestmark = pytest.mark.slow


def working_set_gb(csv: Path, line_bytes: int) -> float:
    trace = pd.read_csv(csv, nrows=N)
    pages = set()
    for offset, size in zip(trace["lbn"] * 512, trace["size"]):
        pages.update(range(offset // line_bytes, (offset + size - 1) // line_bytes + 1))
    return len(pages) * line_bytes / 2**30


def experiments(show: list[dict]) -> dict[str, dict]:
    """``{name: data}`` of the experiments in ``dvc exp show --json``."""
    out = {}
    for row in show:
        for exp in row.get("experiments") or []:
            for rev in exp["revs"]:
                out[rev["name"]] = rev["data"]
    return out


def wait_for_experiment(repo: Path, name: str, timeout_s: float = 540) -> None:
    """Until the queued experiment ``name`` has its git ref (written when it succeeds). The ref is
    polled with git (cheap); DVC's queue status, slower to ask, only every 20 s, to stop at a failure."""
    start = last_status = time.monotonic()
    while True:
        refs = sh(["git", "for-each-ref", "--format=%(refname)", "refs/exps"], repo).stdout.split()
        if any(ref.endswith(f"/{name}") for ref in refs):
            return
        now = time.monotonic()
        if now - last_status > 20:
            status = sh(["dvc", "queue", "status"], repo).stdout
            last_status = now
            if "Failed" in status:
                logs = sh(["dvc", "queue", "logs", name], repo, check=False)
                raise AssertionError(f"queued experiment {name} failed:\n{status}\n{logs.stdout}{logs.stderr}")
        assert now - start < timeout_s, f"queued experiment {name} did not finish in {timeout_s} s"
        time.sleep(1)


def test_exp_run_queue_show_and_diff(tmp_path, cloudphysics_path):
    repo = copy_repo(tmp_path / "repo", cloudphysics_path, max_requests=N, cache_sizes_mb=[1, 4])
    # Queued: runs in a temporary copy of the repository, into which -C copies the git-ignored data.
    sh(["dvc", "exp", "run", "--queue", "-n", "lb16k", "-S", "quickstart.line_bytes=16384", "-C", "data", STAGE], repo)
    sh(["dvc", "queue", "start"], repo)
    done = False
    try:
        # In the workspace, while the queued one runs.
        sh(["dvc", "exp", "run", "-n", "lb8k", "-S", "quickstart.line_bytes=8192", STAGE], repo)
        wait_for_experiment(repo, "lb16k")
        done = True
    finally:
        if not done:
            sh(["dvc", "queue", "stop", "--kill"], repo, check=False)

    exps = experiments(json.loads(sh(["dvc", "exp", "show", "--json"], repo).stdout))
    assert set(exps) == {"lb8k", "lb16k"}
    truth = {}
    for name, line_bytes in (("lb8k", 8192), ("lb16k", 16384)):
        assert exps[name]["params"]["params.yaml"]["data"]["quickstart"]["line_bytes"] == line_bytes
        values = exps[name]["metrics"][METRICS]["data"]["values"]
        assert values["n_requests"] == N
        truth[name] = working_set_gb(cloudphysics_path, line_bytes)
        assert values["working_set_gb"] == pytest.approx(truth[name], rel=1e-12), name
    # the workspace holds the last workspace run's results
    assert json.loads((repo / METRICS).read_text())["values"] == exps["lb8k"]["metrics"][METRICS]["data"]["values"]

    metrics = json.loads(sh(["dvc", "metrics", "diff", "--json", "lb8k", "lb16k"], repo).stdout)[METRICS]
    assert metrics["values.working_set_gb"]["old"] == pytest.approx(truth["lb8k"], rel=1e-12)
    assert metrics["values.working_set_gb"]["new"] == pytest.approx(truth["lb16k"], rel=1e-12)
    assert "values.n_requests" not in metrics  # unchanged: not listed
    params = json.loads(sh(["dvc", "params", "diff", "--json", "lb8k", "lb16k"], repo).stdout)["params.yaml"]
    assert params == {"quickstart.line_bytes": {"old": 8192, "new": 16384, "diff": 8192}}

    plots = json.loads(sh(["dvc", "plots", "show", "--json"], repo).stdout)["data"]
    (quick,) = plots["LRU hit ratio vs cache size (CloudPhysics)"]
    table = pd.read_csv(repo / "results/tables/00_quickstart/lru_hit_ratio.csv")
    points = [(float(v["cache_size_mb"]), float(v["hit_ratio"])) for v in quick["content"]["data"]["values"]]
    assert points == list(zip(table["cache_size_mb"], table["hit_ratio"]))
