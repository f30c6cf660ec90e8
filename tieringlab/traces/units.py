"""Splitting requests into fixed-size units (vFRM paper Sec. 5.1: a request is a flash hit only when all
of its units are in flash): 4 KB pages (cache lines), 1 MB bins (vFRM's migration unit, Sec. 4) and
1 GB sub-LUNs (OTF-AST).

Everything is vectorized: ``np.repeat`` of each request's first unit and a running index within each
request (an ``arange`` minus the repeated start of each request's run), no loop over requests.
"""

from __future__ import annotations

import numpy as np

__all__ = ["PAGE_BYTES", "BIN_BYTES", "SUBLUN_BYTES", "GB", "unit_span", "split_units", "split_arrays"]

PAGE_BYTES = 4096          # vFRM Table 1: 4 KB cache lines
BIN_BYTES = 1 << 20        # vFRM Sec. 4: 1 MB bins
SUBLUN_BYTES = 1 << 30     # OTF-AST: 1 GB sub-LUNs
GB = 1 << 30               # "GB" in tables: binary gigabytes (a documented choice; the papers do not say)


def unit_span(offset, size, unit_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """(first unit, number of units) touched by each request ``[offset, offset + size)``."""
    if int(unit_bytes) <= 0:
        raise ValueError(f"unit_bytes must be a positive number of bytes, got {unit_bytes!r}")
    offset = np.asarray(offset, dtype=np.int64)
    size = np.asarray(size, dtype=np.int64)
    first = offset // unit_bytes
    last = (offset + np.maximum(size, 1) - 1) // unit_bytes
    return first, last - first + 1


def split_arrays(offset, size, unit_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`split_units` on bare arrays: (unit_keys int64, request_index int64)."""
    first, count = unit_span(offset, size, unit_bytes)
    n = first.shape[0]
    total = int(count.sum())
    request_index = np.repeat(np.arange(n, dtype=np.int64), count)
    starts = np.cumsum(count) - count                      # position of each request's first unit
    within = np.arange(total, dtype=np.int64) - np.repeat(starts, count)
    unit_keys = np.repeat(first, count) + within
    return unit_keys, request_index


def split_units(ds, unit_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """Split every request of trace ``ds`` into the fixed units it touches.

    Returns ``(unit_keys, request_index)``, both int64 and of equal length: unit ``unit_keys[k]`` (the
    byte offset divided by ``unit_bytes``) is touched by request ``request_index[k]``; units appear in
    request order, and in address order within a request. Use ``PAGE_BYTES`` (4 KB), ``BIN_BYTES``
    (1 MB) or ``SUBLUN_BYTES`` (1 GB).
    """
    return split_arrays(ds["offset"].values, ds["size"].values, unit_bytes)
