"""The DVC pipeline conventions, end to end on a copy of the repository:

a stage runs its notebook through papermill with its params.yaml section, a second `dvc repro` does
nothing, changing one of its parameters reruns it, and a bad value stops the stage with a message naming the key.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
STAGE = "00_quickstart"

pytestmark = pytest.mark.slow


def sh(cmd: list[str], cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "TIERINGLAB_PROGRESS": "0"}
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture()
def repo_copy(tmp_path, cloudphysics_path) -> Path:
    dest = tmp_path / "repo"
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=REPO, capture_output=True, text=True, check=True).stdout.split("\0")
    for rel in filter(None, files):
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    (dest / "data/cloudphysics").mkdir(parents=True, exist_ok=True)
    shutil.copy2(cloudphysics_path, dest / "data/cloudphysics/cloudPhysicsIO.csv")
    params = yaml.safe_load((dest / "params.yaml").read_text())
    params["quickstart"].update(max_requests=3000, cache_sizes_mb=[1, 4])
    (dest / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"],
                ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "copy"]):
        sh(cmd, dest)
    return dest


def ran(proc: subprocess.CompletedProcess) -> bool:
    return f"Running stage '{STAGE}'" in proc.stdout


def test_repro_idempotent_and_param_sensitive(repo_copy):
    first = sh(["dvc", "repro", "--single-item", STAGE], repo_copy)
    assert ran(first), first.stdout
    for sub in ("figures", "tables"):
        assert any((repo_copy / "results" / sub / STAGE).iterdir())
    assert (repo_copy / f"results/metrics/{STAGE}.json").is_file()
    assert (repo_copy / f"results/notebooks/{STAGE}.ipynb").is_file()

    second = sh(["dvc", "repro", "--single-item", STAGE], repo_copy)
    assert not ran(second), "a second dvc repro must do nothing:\n" + second.stdout

    params = yaml.safe_load((repo_copy / "params.yaml").read_text())
    params["quickstart"]["cache_sizes_mb"] = [1, 2, 4]
    (repo_copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    third = sh(["dvc", "repro", "--single-item", STAGE], repo_copy)
    assert ran(third), third.stdout


def test_bad_param_stops_stage_with_clear_message(repo_copy):
    params = yaml.safe_load((repo_copy / "params.yaml").read_text())
    params["quickstart"]["line_bytes"] = 1000
    (repo_copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    proc = sh(["dvc", "repro", "--single-item", STAGE], repo_copy, check=False)
    assert proc.returncode != 0
    assert "quickstart.line_bytes: expected one of 512" in proc.stdout + proc.stderr
    assert not (repo_copy / f"results/metrics/{STAGE}.json").exists()
