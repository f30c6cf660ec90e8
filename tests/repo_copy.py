"""A copy of the repository in a temporary folder, for tests that run DVC on it (a git repository of
its own with one commit: the tracked and untracked-but-not-ignored files, the CloudPhysics trace in
``data/``, and the quickstart stage made small)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
# A commit needs an author; DVC's experiment commits take it from the environment like git. The dates are
# fixed too, so two copies of the same files are the same commit (the metrics record it, results.provenance).
GIT_IDENTITY = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@t", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+00:00",
                "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+00:00"}


def sh(cmd: list[str], cwd: Path, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run ``cmd`` in ``cwd`` with this venv first on PATH (dvc stages call ``tieringlab``)."""
    env = {**os.environ, **GIT_IDENTITY, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
           "TIERINGLAB_PROGRESS": "0"}
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def copy_repo(dest: Path, cloudphysics_path: Path, **quickstart) -> Path:
    """Copy the repository to ``dest``, set ``quickstart`` parameters in its params.yaml, commit."""
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
    params["quickstart"].update(quickstart)
    (dest / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "copy"]):
        sh(cmd, dest)
    return dest
