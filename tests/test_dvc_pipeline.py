"""The DVC pipeline conventions, end to end on a copy of the repository:

a stage runs its notebook through papermill with its params.yaml section, a second `dvc repro` does
nothing, changing one of its parameters reruns it, and a bad value stops the stage with a message naming the key.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from repo_copy import copy_repo, sh

STAGE = "00_quickstart"

pytestmark = pytest.mark.slow


@pytest.fixture()
def repo_copy(tmp_path, cloudphysics_path) -> Path:
    return copy_repo(tmp_path / "repo", cloudphysics_path, max_requests=3000, cache_sizes_mb=[1, 4])


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
