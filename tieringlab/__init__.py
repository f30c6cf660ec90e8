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

import jax as _jax

_jax.config.update("jax_enable_x64", True)

__version__ = "0.1.0"

__all__ = ["__version__"]
