"""Where things live: the repository root, results, data, and the shared folder beside a checkout."""

from __future__ import annotations

import os
from pathlib import Path


def repo_root(start: str | os.PathLike | None = None) -> Path:
    """The nearest directory at or above ``start`` (default: cwd) holding ``dvc.yaml`` and ``params.yaml``.

    Falls back to the directory above the installed package (a source checkout), then to cwd.
    """
    here = Path(start or Path.cwd()).resolve()
    for cand in (here, *here.parents):
        if (cand / "dvc.yaml").is_file() and (cand / "params.yaml").is_file():
            return cand
    pkg_parent = Path(__file__).resolve().parent.parent
    if (pkg_parent / "dvc.yaml").is_file():
        return pkg_parent
    return here


def results_dir(results: str | os.PathLike | None = None) -> Path:
    """``results`` if given (relative paths are taken from the repo root), else the scratch folder.

    Notebooks run by hand or under nbval write to ``build/notebook-outputs`` (ignored by git and not
    a DVC output), so a quick run never overwrites what ``dvc repro`` produced in ``results/``.
    """
    if results is None:
        return repo_root() / "build" / "notebook-outputs"
    p = Path(results)
    return p if p.is_absolute() else repo_root() / p


def shared_dir() -> Path | None:
    """The ``shared/`` folder beside the checkout (papers, the CloudPhysics copy), if present."""
    cand = repo_root().parent / "shared"
    return cand if cand.is_dir() else None
