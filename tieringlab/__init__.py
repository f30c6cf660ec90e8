"""tieringlab: reproducible storage tiering and flash caching research.

Importing the package turns on JAX 64-bit mode: timestamps (seconds since the first request
of week-long traces) and byte offsets (up to hundreds of GB) do not fit float32/int32.

Layout (one direction of data flow):

- :mod:`tieringlab.traces`      read, validate and characterise block traces; synthetic twins
- :mod:`tieringlab.models`      shared math: temperature, MMPP, burstiness, queueing, regression,
                                LRU stack distance, device catalogs
- :mod:`tieringlab.policies`    one module per paper system and its baselines
- :mod:`tieringlab.experiments` one module per paper: parameter grids -> labelled xarray results
- :mod:`tieringlab.results`     the one helper notebooks use to save figures, tables and metrics
- :mod:`tieringlab.report`      the claims ledger (results/REPORT.md)
"""

from __future__ import annotations

import os as _os
from pathlib import Path as _Path

import jax as _jax

from tieringlab import paths as _paths

_jax.config.update("jax_enable_x64", True)

#: JAX's own compilation cache (issue 35): computations whose XLA compile takes at least this long (s) are
#: stored under ``<cache dir>/jax`` and loaded, not recompiled, by the next process that builds the same
#: computation (the same shapes, dtypes and static arguments): a notebook re-run, the next stage, a test
#: worker. Our choice: 0.2 s, below JAX's default 1 s, because the package's many scans over small test and
#: notebook shapes compile in 0.2-1 s each and recur in every process; a shorter compile is cheaper to redo
#: than to read back.
JAX_CACHE_MIN_COMPILE_S = 0.2
#: Cap of that cache (bytes); JAX evicts the least recently used entries beyond it, and setting a cap is
#: also what makes JAX lock the folder, so concurrent stages and test workers never read a half-written
#: entry. Notebooks 06 and 07 at paper scale write 2.6 MB.
JAX_CACHE_MAX_BYTES = 1 << 30


def _jax_compilation_cache() -> None:
    """Point JAX's persistent compilation cache at ``<cache dir>/jax`` (:func:`tieringlab.paths.cache_dir`),
    or at ``$TIERINGLAB_JAX_CACHE`` (the tests pass the checkout's folder on to their subprocesses this way,
    as ``TIERINGLAB_NUMBA_CACHE`` for numba; ``off`` turns only this cache off). Nothing is set when
    ``TIERINGLAB_CACHE=off`` or when the user configured ``JAX_COMPILATION_CACHE_DIR`` themselves. A cached
    executable is the one the compiler would build again (JAX keys it by the computation, the compile
    options, the backend and jaxlib's version), so results do not depend on whether it was cached."""
    if _os.environ.get("JAX_COMPILATION_CACHE_DIR"):
        return
    root = _paths.cache_dir()
    own = _os.environ.get("TIERINGLAB_JAX_CACHE", "").strip()
    if root is None or own.lower() in _paths.CACHE_OFF:
        return
    _jax.config.update("jax_compilation_cache_dir", str(_Path(own).expanduser().resolve() if own else root / "jax"))
    _jax.config.update("jax_persistent_cache_min_compile_time_secs", JAX_CACHE_MIN_COMPILE_S)
    _jax.config.update("jax_compilation_cache_max_size", JAX_CACHE_MAX_BYTES)


_jax_compilation_cache()

if _os.environ.get("TIERINGLAB_PROFILE"):  # set by `tieringlab run` for a stage's kernel (tieringlab.profile)
    from tieringlab import profile as _profile

    _profile.start_from_env()

__version__ = "0.1.0"

__all__ = ["__version__"]
