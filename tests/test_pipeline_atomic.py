"""A pipeline stage (`tieringlab run`, the command of every dvc.yaml stage) is bit-identical when rerun,
and a stage killed with SIGKILL mid-run leaves no partial output; its rerun leaves no stale file.

One test, three runs of the quickstart stage at small parameters: run A; run K, killed (the whole
process group: papermill and its kernel) once it has written outputs into its staging folder; run B.
Run A's outputs (every DVC output: executed notebook, figures, tables, metrics) must equal run B's byte
for byte, run K must leave results/ exactly as run A left it, and after run B nothing but the stage's
outputs and its log remains (no staging folder, no temporary file).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tieringlab import fileio, report

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
STAGE = "00_quickstart"

pytestmark = pytest.mark.slow


def start(results: Path, params: Path) -> subprocess.Popen:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "TIERINGLAB_PROGRESS": "0",
           "JAX_PLATFORMS": "cpu"}
    return subprocess.Popen([str(BIN / "tieringlab"), "run", f"notebooks/{STAGE}.ipynb", "--params", str(params),
                             "--results", str(results)], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def finish(proc: subprocess.Popen) -> None:
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, f"tieringlab run failed ({proc.returncode}):\n{out}\n{err}"


def snapshot(results: Path) -> dict[str, bytes]:
    """Every file under results/ except the logs (wall-clock times, not a DVC output)."""
    return {str(p.relative_to(results)): p.read_bytes() for p in sorted(results.rglob("*"))
            if p.is_file() and p.relative_to(results).parts[0] != "logs"}


def test_rerun_is_bit_identical_and_a_killed_stage_leaves_no_partial_output(tmp_path, cloudphysics_path):
    data = yaml.safe_load((REPO / "params.yaml").read_text())
    data["quickstart"].update(max_requests=2000, cache_sizes_mb=[1, 4])
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(data, sort_keys=False))
    results = tmp_path / "results"

    finish(start(results, params))                                                   # run A
    first = snapshot(results)
    assert {f"notebooks/{STAGE}.ipynb", f"metrics/{STAGE}.json"} <= set(first)
    assert any(k.startswith(f"figures/{STAGE}/") for k in first) and any(k.startswith("tables/") for k in first)
    log = json.loads((results / "logs" / f"{STAGE}.json").read_text())
    assert log["stage"]["stage_seconds"] > 0 and log["stage"]["cells"]               # the times went here
    # the kernel's resources (a kernel that imported JAX and xarray holds well over 100 MB; it used CPU)
    assert log["stage"]["kernel_peak_rss_bytes"] > 100 * 2**20 and log["stage"]["cpu_user_s"] > 0.5
    # where the kernel's CPU went (tieringlab.profile): functions of the package, none of them the profiler's
    prof = log["stage"]["profile"]
    assert 0 < prof["sampled_cpu_s"] <= prof["process_cpu_s"] * 1.05 and prof["top"]
    assert all(n.startswith(("tieringlab.", "import tieringlab", "<")) and "profile" not in n for n, *_ in prof["top"])
    assert not (results / ".staging" / STAGE / ".profile").exists()
    nb = (results / "notebooks" / f"{STAGE}.ipynb").read_text()
    assert '"duration"' not in nb and "start_time" not in nb and ".staging" not in nb

    staged = results / ".staging" / STAGE                                            # run K, killed mid-stage
    proc = start(results, params)
    deadline = time.monotonic() + 300
    try:
        while not (staged / "figures" / STAGE).is_dir() or not any((staged / "figures" / STAGE).iterdir()):
            assert proc.poll() is None, "the stage finished before it could be killed"
            assert time.monotonic() < deadline, "the stage never started writing"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    after_kill = snapshot(results)
    assert any(k.startswith(f".staging/{STAGE}/figures/") for k in after_kill)  # killed while writing outputs ...
    assert {k: v for k, v in after_kill.items() if not k.startswith(".staging/")} == first  # ... results/ as it was
    report.build(results)                                        # the report does not trip over the leftovers

    finish(start(results, params))                                                   # run B: the rerun
    assert snapshot(results) == first                                                # bit-identical, no leftovers
    assert not (results / ".staging").exists()
    assert not [p for p in results.rglob("*") if fileio.is_temp_name(p.name)]
