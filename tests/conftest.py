"""Shared test fixtures and settings: the real CloudPhysics trace, the hypothesis profiles.

**The CloudPhysics trace** (``cloudphysics_path``) is found the way the package finds it
(:func:`tieringlab.data.locate`: the checkout's ``data/``, where ``make data`` puts it, then the
``../shared`` mirror), verified by its pinned checksums. Where it is missing, a test that needs it is
skipped with the reason, except under ``CI=true``, where it FAILS: CI must never pass by skipping.

**Hypothesis**: under ``CI=true`` the ``ci`` profile is loaded: derandomized (examples depend only on the
test, so every CI run tries the same ones), no example database, and the failing example printed with
its ``@reproduce_failure`` blob. To replay a CI failure locally run the same test with ``CI=true`` (or
``TIERINGLAB_HYPOTHESIS=ci``). Elsewhere the ``dev`` profile explores random examples. Tests keep their
own ``max_examples``; a profile sets the rest.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

os.environ.setdefault("TIERINGLAB_PROGRESS", "0")
os.environ.setdefault("MPLBACKEND", "Agg")

import tieringlab  # noqa: F401  (enables x64 before any test imports jax)

REPO = Path(__file__).resolve().parent.parent
#: CI=true (the CI entry point .ci/run, GitHub Actions, GitLab set it)
CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")

settings.register_profile("ci", derandomize=True, database=None, print_blob=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", print_blob=True, deadline=None)
settings.load_profile(os.environ.get("TIERINGLAB_HYPOTHESIS") or ("ci" if CI else "dev"))


def require_cloudphysics(root: Path = REPO, *, ci: bool = CI) -> Path:
    """The verified CloudPhysics trace of checkout ``root`` (data/ first, then ../shared); where it is
    missing or corrupt: ``pytest.fail`` under CI, ``pytest.skip`` elsewhere, with the reason."""
    from tieringlab import data

    try:
        return data.locate("cloudphysics", root=root)
    except (FileNotFoundError, data.ChecksumError) as exc:
        skip_or_fail(f"the CloudPhysics trace is needed: {exc}", ci=ci)


def skip_or_fail(reason: str, *, ci: bool = CI) -> None:
    """``pytest.skip(reason)``, except under ``CI=true``, where a test that cannot run FAILS with the reason."""
    if ci:
        pytest.fail(f"{reason} (CI=true: a test that cannot run fails instead of skipping)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def cloudphysics_path() -> Path:
    """The real CloudPhysics trace (see the module docstring: skip where missing, fail under CI)."""
    return require_cloudphysics()


# On-disk caches (tieringlab.paths.cache_dir). numba's compiled kernels and JAX's compiled computations: the
# folders are fixed now, before this file points TIERINGLAB_CACHE elsewhere: the checkout's build/cache/numba
# and build/cache/jax (git-ignored derived code, like __pycache__), or under wherever TIERINGLAB_CACHE points
# when pytest starts; TIERINGLAB_NUMBA_CACHE and TIERINGLAB_JAX_CACHE pass them on to the subprocesses and
# notebook kernels (nbval) the tests start. Twins and workloads: this process, its subprocesses and kernels
# write them under a temporary folder of the session (removed at exit), never into the repository.
# TIERINGLAB_CACHE=off when pytest starts keeps every cache off.
import atexit  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402

from tieringlab import native as _native  # noqa: E402
from tieringlab import paths as _paths  # noqa: E402

if _native.numba_cache_dir() is not None:
    os.environ.setdefault("TIERINGLAB_NUMBA_CACHE", str(_native.numba_cache_dir()))
import jax as _jax  # noqa: E402  (configured by `import tieringlab` above: JAX's compilation cache folder)

if _jax.config.jax_compilation_cache_dir and not os.environ.get("JAX_COMPILATION_CACHE_DIR"):
    os.environ.setdefault("TIERINGLAB_JAX_CACHE", _jax.config.jax_compilation_cache_dir)
if _paths.cache_dir() is not None:
    _DATA_CACHE = tempfile.mkdtemp(prefix="tieringlab-test-cache-")
    atexit.register(shutil.rmtree, _DATA_CACHE, True)
    os.environ["TIERINGLAB_CACHE"] = _DATA_CACHE
