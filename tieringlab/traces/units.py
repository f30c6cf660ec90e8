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
    unit_keys, request_index, _ = _split_compact(offset, size, unit_bytes, np.int64)
    return unit_keys, request_index


def _split_compact(offset, size, unit_bytes: int, index_dtype=None):
    """(unit_keys int64, request_index, starts int64): the split plus each request's first position.

    ``request_index`` is ``int32`` when the request count fits (half the memory of the 4x10^7-unit
    arrays of a 10^7-request trace), unless ``index_dtype`` says otherwise. The unit key at position
    ``k`` of request ``r`` is ``first[r] + (k - starts[r])``, so a single ``np.repeat`` of
    ``first - starts`` plus an ``arange`` gives every key.
    """
    first, count = unit_span(offset, size, unit_bytes)
    n = first.shape[0]
    starts = np.cumsum(count) - count                      # position of each request's first unit
    total = int(count.sum())
    if index_dtype is None:
        index_dtype = np.int32 if n < 2**31 - 1 else np.int64
    request_index = np.repeat(np.arange(n, dtype=index_dtype), count)
    first -= starts
    unit_keys = np.repeat(first, count)
    del first
    unit_keys += np.arange(total, dtype=np.int64)
    return unit_keys, request_index, starts


def split_units(ds, unit_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """Split every request of trace ``ds`` into the fixed units it touches.

    Returns ``(unit_keys, request_index)``, both int64 and of equal length: unit ``unit_keys[k]`` (the
    byte offset divided by ``unit_bytes``) is touched by request ``request_index[k]``; units appear in
    request order, and in address order within a request. Use ``PAGE_BYTES`` (4 KB), ``BIN_BYTES``
    (1 MB) or ``SUBLUN_BYTES`` (1 GB).
    """
    return split_arrays(ds["offset"].values, ds["size"].values, unit_bytes)
