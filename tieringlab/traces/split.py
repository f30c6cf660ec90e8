"""Splitting requests into fixed-size units (vFRM paper Sec. 5.1: a request is a flash hit only when all
of its units are in flash): 4 KB pages (cache lines), 1 MB bins (vFRM's migration unit, Sec. 4) and
1 GB sub-LUNs (OTF-AST).

The unit sizes live in :mod:`tieringlab.units`. Everything is vectorized: a cumulative sum of the steps
between consecutive units (1 inside a request, a jump at each request's first unit), no loop over
requests.
"""

from __future__ import annotations

import numpy as np

from tieringlab.units import BIN_BYTES, PAGE_BYTES, SUBLUN_BYTES

__all__ = ["PAGE_BYTES", "BIN_BYTES", "SUBLUN_BYTES", "unit_span", "split_units", "split_arrays"]


def unit_span(offset, size, unit_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """(first unit, number of units) touched by each request ``[offset, offset + size)``.

    The one rule for every splitter (pages of the page caches, bins of vFRM, sub-LUNs): offsets must be
    >= 0 and sizes > 0 bytes (the trace readers enforce both); anything else is a ``ValueError`` naming
    the first offending request.
    """
    if int(unit_bytes) <= 0:
        raise ValueError(f"unit_bytes must be a positive number of bytes, got {unit_bytes!r}")
    offset = np.asarray(offset, dtype=np.int64)
    size = np.asarray(size, dtype=np.int64)
    if offset.size and offset.min() < 0:
        raise ValueError("trace variable 'offset' must be >= 0 bytes; "
                         f"request {int(np.argmax(offset < 0))} is negative")
    if size.size and size.min() <= 0:
        raise ValueError(f"trace variable 'size' must be > 0 bytes; request {int(np.argmax(size <= 0))} is not")
    first = offset // unit_bytes
    last = (offset + size - 1) // unit_bytes
    return first, last - first + 1


def split_arrays(offset, size, unit_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`split_units` on bare arrays: (unit_keys int64, request_index int64)."""
    first, count = unit_span(offset, size, unit_bytes)
    unit_keys, starts = _unit_keys(first, count)
    request_index = np.zeros(unit_keys.shape[0], dtype=np.int64)
    request_index[starts[1:]] = 1
    np.cumsum(request_index, out=request_index)
    return unit_keys, request_index


def _unit_keys(first, count) -> tuple[np.ndarray, np.ndarray]:
    """(unit_keys int64, starts int64): every unit of every request, and each request's first position.

    Consecutive units of one request differ by 1, and the first unit of request ``r`` follows the last
    unit of request ``r - 1`` by ``first[r] - (first[r-1] + count[r-1] - 1)``: a cumulative sum of these
    steps gives every key (cheaper than ``np.repeat`` for requests of a few units).
    """
    count = np.asarray(count, dtype=np.int64)
    first = np.asarray(first, dtype=np.int64)
    starts = np.cumsum(count) - count                      # position of each request's first unit
    total = int(count.sum())
    unit_keys = np.ones(total, dtype=np.int64)
    if total:
        unit_keys[0] = first[0]
        unit_keys[starts[1:]] = first[1:] - (first[:-1] + count[:-1] - 1)
        np.cumsum(unit_keys, out=unit_keys)
    return unit_keys, starts


def split_units(ds, unit_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """Split every request of trace ``ds`` into the fixed units it touches.

    Returns ``(unit_keys, request_index)``, both int64 and of equal length: unit ``unit_keys[k]`` (the
    byte offset divided by ``unit_bytes``) is touched by request ``request_index[k]``; units appear in
    request order, and in address order within a request. Use ``PAGE_BYTES`` (4 KB), ``BIN_BYTES``
    (1 MB) or ``SUBLUN_BYTES`` (1 GB).
    """
    return split_arrays(ds["offset"].values, ds["size"].values, unit_bytes)
