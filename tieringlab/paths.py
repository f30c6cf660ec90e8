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


#: ``TIERINGLAB_CACHE`` values that turn every on-disk cache off (twins, workloads, numba's compiled kernels)
CACHE_OFF = ("off", "0", "false", "no", "none")


def cache_dir() -> Path | None:
    """The root of the package's on-disk caches, or ``None`` when ``TIERINGLAB_CACHE=off``.

    ``$TIERINGLAB_CACHE`` when set (relative paths are taken from the current directory), else
    ``build/cache`` of the checkout the package is imported from (``build/`` is ignored by git), else of
    the checkout :func:`repo_root` finds, else ``~/.cache/tieringlab`` (an installed package used outside a
    checkout). Read on every call, so a test or a stage can point it elsewhere. Everything under it is
    derived data: ``make clean-cache`` (or deleting the folder) only costs the next run the time.
    """
    env = os.environ.get("TIERINGLAB_CACHE", "").strip()
    if env.lower() in CACHE_OFF:
        return None
    if env:
        return Path(env).expanduser().resolve()
    for root in (Path(__file__).resolve().parent.parent, repo_root()):
        if (root / "dvc.yaml").is_file():
            return root / "build" / "cache"
    return Path.home() / ".cache" / "tieringlab"
