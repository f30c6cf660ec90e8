"""Whole-trace statistics: vFRM paper Table 1 (and thesis Tables 9/12), Fig. 1, Fig. 2/3, Obs. 1-3.

Every function takes a trace Dataset (schema in :mod:`tieringlab.traces.readers`) and is vectorized:
sorting, ``np.unique``/``bincount`` and prefix sums, never a loop over requests.

Table 1 columns (vFRM paper Sec. 3.2, caption of Table 1):

- *Volume size*: "the maximum LBN accessed", here the highest byte touched, ``max(offset + size)``.
- *Working set size*: "the amount of data accessed", here the number of distinct 4 KB pages times 4 KB.
- *Hit ratio by LRU*: fully associative LRU, 4 KB lines, 1 GB cache; a request (IO) is a hit only when
  all of its lines hit (Sec. 5.1), computed through the LRU stack-distance model
  :func:`tieringlab.models.stackdist.lru_request_hits`.
- *Re-access ratio*: "the percentage of IOs whose re-access time is within 5 min". See
  :func:`reaccess_ratio` for the exact reading and why (``REACCESS_DEFINITIONS``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from tieringlab.arrays import whole_bytes
from tieringlab.traces.readers import check_trace
from tieringlab.traces.split import _unit_keys, split_arrays, unit_span
from tieringlab.units import BIN_BYTES, PAGE_BYTES, GiB

__all__ = ["volume_size", "working_set_size", "read_ratio", "reaccess_ratio", "reaccess_times",
           "lru_hit_ratio", "bins_per_epoch", "popularity_matrix", "bin_daily_counts", "arrival_counts",
           "index_of_dispersion_counts", "table1_row", "REACCESS_DEFINITIONS", "TABLE1_CACHE_BYTES",
           "TABLE1_WINDOW_S"]

#: vFRM Table 1: LRU with 1 GB cache and 4 KB lines.
TABLE1_CACHE_BYTES = 1 * GiB
#: The most periods (epochs, windows) a per-period statistic builds (documented choice): 2^24, a year of
#: 2-second windows; a time jump in a trace (10^18 s) is then an error naming the span instead of an
#: allocation of petabytes.
MAX_PERIODS = 1 << 24
#: vFRM Table 1: re-access within 5 minutes.
TABLE1_WINDOW_S = 300.0

#: The readings of "the percentage of IOs whose re-access time is within 5 min" (vFRM Table 1):
#:
#: - ``"among_reaccesses"`` (default): among the IOs that re-access data seen before (at least one of
#:   their 4 KB pages was accessed earlier), the share whose most recent earlier access to any of their
#:   pages is at most 5 min before. The paper's own numbers force this reading: src21 has a 2.82 % LRU
#:   hit ratio with a 1 GB cache, so at least ~97 % of its IOs miss; most of its IOs therefore touch
#:   data never seen before (or seen long ago), and 96.04 % of *all* IOs cannot re-access within 5 min.
#:   Only a share taken among re-accessing IOs can be 96 % there.
#: - ``"all_ios"``: the same count divided by all IOs (first-time IOs count as "not within 5 min").
REACCESS_DEFINITIONS = ("among_reaccesses", "all_ios")


def _arr(ds, var):
    return ds[var].values


def volume_size(ds) -> int:
    """Highest byte touched, ``max(offset + size)`` (Table 1 "Volume Size": the maximum LBN accessed)."""
    return int(np.max(_arr(ds, "offset") + _arr(ds, "size")))


def working_set_size(ds, page_bytes: int = PAGE_BYTES) -> int:
    """Distinct ``page_bytes`` pages touched times ``page_bytes`` (Table 1 "Working Set Size").

    Computed as the length of the union of the requests' page intervals: sort the intervals by first
    page (ties in any order), carry the running maximum of their last pages
    (``np.maximum.accumulate``) and add only the part of each interval beyond it. O(n log n) in
    requests, without expanding requests into pages.
    """
    first, count = unit_span(_arr(ds, "offset"), _arr(ds, "size"), page_bytes)
    if first.size == 0:
        return 0
    bits = int(count.max() - 1).bit_length()
    if first.min() >= 0 and int(first.max()) < 2 ** (62 - bits):
        # one in-place sort of (first page, page count) packed in an int64: the order among intervals
        # with the same first page does not change the union
        packed = np.sort((first << bits) | (count - 1))
        s = packed >> bits
        e = s + (packed & ((1 << bits) - 1))                   # inclusive last page
        del packed
    else:
        order = np.argsort(first, kind="stable")
        s = first[order]
        e = s + count[order] - 1                               # inclusive last page
    reach = np.maximum.accumulate(e)                           # furthest page covered so far
    prev_reach = np.concatenate(([s[0] - 1], reach[:-1]))
    new = np.maximum(0, e - np.maximum(s - 1, prev_reach))     # pages of this interval not yet covered
    return int(new.sum()) * int(page_bytes)


def read_ratio(ds) -> float:
    """Share of requests that are reads."""
    w = _arr(ds, "is_write")
    return float(1.0 - w.mean()) if w.size else float("nan")


def _page_links(ds, page_bytes: int):
    """The shared first step of the page-level Table 1 statistics: split every request into its pages
    once, and link each page access to the previous access of the same page.

    Returns ``(prev, starts, count)``: ``prev`` from
    :func:`tieringlab.models.stackdist._previous_access` (an LSD radix sort of the page keys, stable, so
    requests stay in time order), each request's first position among the page accesses and its number
    of pages.
    """
    from tieringlab.models.stackdist import _previous_access  # noqa: PLC0415

    first, count = unit_span(_arr(ds, "offset"), _arr(ds, "size"), page_bytes)
    keys, starts = _unit_keys(first, count)
    del first
    prev = _previous_access(keys)
    del keys
    return prev, starts, count


def _reaccess_times_from_links(t, prev, starts, count) -> np.ndarray:
    """Per request: min over its pages of ``t[request] - t[request of the page's previous access]``."""
    tu = np.repeat(t, count)                                     # each page access's request time
    gap = tu[prev]                                               # prev = -1 picks a value; masked below
    np.subtract(tu, gap, out=gap)
    del tu
    gap[prev < 0] = np.inf
    # A request that touches the same page twice cannot happen (pages within a request are distinct).
    return np.minimum.reduceat(gap, starts)


def reaccess_times(ds, page_bytes: int = PAGE_BYTES) -> np.ndarray:
    """Per request: seconds since the most recent earlier access to any of its pages (``inf`` if none).

    Pages are keyed and each page access is linked to the previous access of the same page (a stable
    sort by (page, request); requests are in time order), which gives its gap; a request takes the
    minimum gap over its pages (``np.minimum.reduceat`` over the request's run of pages).
    """
    t = _arr(ds, "time")
    if t.shape[0] == 0:
        return np.zeros(0)
    return _reaccess_times_from_links(t, *_page_links(ds, page_bytes))


def _reaccess_ratio_from_gaps(gap, window_s: float, definition: str) -> float:
    within = np.count_nonzero(gap <= window_s)
    denom = np.count_nonzero(np.isfinite(gap)) if definition == "among_reaccesses" else gap.size
    return float(within / denom) if denom else float("nan")


def reaccess_ratio(ds, window_s: float = TABLE1_WINDOW_S, page_bytes: int = PAGE_BYTES, *,
                   definition: str = "among_reaccesses") -> float:
    """vFRM Table 1 "Re-access Ratio": the share of IOs whose re-access time is within ``window_s``.

    An IO's re-access time is the time since the most recent earlier access to any of its
    ``page_bytes`` pages (:func:`reaccess_times`). ``definition`` picks the denominator (see
    :data:`REACCESS_DEFINITIONS`): ``"among_reaccesses"`` (default) divides by the IOs that have a
    re-access time at all; ``"all_ios"`` divides by every IO.
    """
    if definition not in REACCESS_DEFINITIONS:
        raise ValueError(f"definition must be one of {REACCESS_DEFINITIONS}, got {definition!r}")
    return _reaccess_ratio_from_gaps(reaccess_times(ds, page_bytes), window_s, definition)


def lru_hit_ratio(ds, cache_bytes, line_bytes: int = PAGE_BYTES):
    """IO hit ratio of a fully associative LRU cache of ``cache_bytes`` with ``line_bytes`` lines.

    A request hits only if all of its lines hit (vFRM Sec. 5.1). ``cache_bytes`` may be a scalar or an
    array of sizes (whole numbers of bytes >= 0, in any order); the result has the same shape. Built on
    the LRU stack-distance model :func:`tieringlab.models.stackdist.lru_request_hits` (one pass for every
    cache size). The trace is checked as every trace policy checks it
    (:func:`tieringlab.traces.readers.check_trace`): an **empty trace is a ValueError** naming it, as in
    LRU, ARC, CAR and vFRM (the hit ratio of no requests is undefined).
    """
    sizes_b = whole_bytes(cache_bytes, "cache_bytes")
    lines = (sizes_b // int(line_bytes)).reshape(-1)
    n = check_trace(ds, "stats.lru_hit_ratio", needs=("offset", "size"))  # an empty trace is an error
    prev, starts, _ = _page_links(ds, line_bytes)
    ratio = _lru_hits_from_links(prev, starts, lines) / n
    return float(ratio[0]) if sizes_b.ndim == 0 else ratio.reshape(sizes_b.shape)


def _lru_hits_from_links(prev, starts, lines) -> np.ndarray:
    """Request-level LRU hit counts (float64) at each capacity in ``lines``, from page-access links.

    The same numbers as :func:`tieringlab.models.stackdist.lru_request_hits` on the page keys: the
    page stack distances come from the links, a request's distance is the max over its pages.
    """
    from tieringlab.models.stackdist import _distances_from_previous, hit_counts_from_distances  # noqa: PLC0415

    d = np.maximum.reduceat(_distances_from_previous(prev), starts)
    return np.asarray(hit_counts_from_distances(d, lines), dtype=np.float64)


def _epoch_unit_counts(ds, unit_bytes: int, period_s: float):
    """(period index, unit key, count of requests touching that unit in that period), unique pairs."""
    keys, ridx = split_arrays(_arr(ds, "offset"), _arr(ds, "size"), unit_bytes)
    period = np.floor(_arr(ds, "time") / period_s).astype(np.int64)[ridx]
    nkeys = int(keys.max()) + 1 if keys.size else 1
    combined = period * nkeys + keys
    uniq, counts = np.unique(combined, return_counts=True)
    return uniq // nkeys, uniq % nkeys, counts


def _n_periods(ds, period_s: float, duration_s: float | None) -> int:
    """Number of periods: ``ceil(duration / period_s)`` for a known duration (argument or the twins'
    ``duration_s`` attr), else enough to hold the last request (``floor(t_max / period_s) + 1``).
    Requests at or beyond the end are counted in the last period."""
    dur = duration_s if duration_s is not None else float(ds.attrs.get("duration_s", 0.0) or 0.0)
    t_max = float(_arr(ds, "time").max()) if ds.sizes["request"] else 0.0
    if not period_s > 0:
        raise ValueError(f"the period must be > 0 seconds, got {period_s!r}")
    n = dur / period_s if dur > 0 else t_max / period_s
    if not n < MAX_PERIODS:  # checked before any array over periods is built
        raise ValueError(f"trace {ds.attrs.get('name', '')!r}: {n:.4g} periods of {period_s!r} s (duration "
                         f"{dur if dur > 0 else t_max:g} s); at most MAX_PERIODS = {MAX_PERIODS} (a time jump in "
                         f"the trace, or a period far too short?)")
    if dur > 0:
        return max(1, int(np.ceil(dur / period_s)))
    return int(np.floor(t_max / period_s)) + 1


def bins_per_epoch(ds, bin_bytes: int = BIN_BYTES, epoch_s: float = 300.0, *,
                   duration_s: float | None = None) -> xr.DataArray:
    """Number of distinct ``bin_bytes`` bins accessed in each ``epoch_s`` epoch (vFRM Fig. 1: 1 MB, 5 min).

    Dimension ``epoch``, coordinate ``time`` (epoch start, seconds). Epochs with no IO count 0.
    """
    n_epochs = _n_periods(ds, epoch_s, duration_s)
    if ds.sizes["request"] == 0:
        counts = np.zeros(n_epochs, np.int64)
    else:
        ep, key, _ = _epoch_unit_counts(ds, bin_bytes, epoch_s)
        if ep.size and ep.max() >= n_epochs:  # requests at the very end: fold into the last epoch, once per bin
            ep, key = np.minimum(ep, n_epochs - 1), key
            ep = np.unique(ep * (int(key.max()) + 1) + key) // (int(key.max()) + 1)
        counts = np.bincount(ep, minlength=n_epochs)[:n_epochs]
    return xr.DataArray(counts, dims="epoch", coords={"time": ("epoch", np.arange(n_epochs) * float(epoch_s))},
                        name="accessed_bins", attrs={"bin_bytes": int(bin_bytes), "epoch_s": float(epoch_s),
                                                     "units": "bins"})


def popularity_matrix(ds, bin_bytes: int = BIN_BYTES, period_s: float = 3600.0, *,
                      duration_s: float | None = None, max_bins: int | None = None) -> xr.DataArray:
    """IO popularity per bin and period (vFRM Fig. 2/3, thesis Fig. 17: 1 MB bins x hours).

    ``counts[bin, period]`` is the number of requests touching the bin in the period (a request that
    spans two bins counts for both). Dense int32 over bins ``0 .. volume/bin_bytes``; with ``max_bins``,
    consecutive bins are summed into at most ``max_bins`` rows (coordinate ``bin_start`` gives each row's
    first bin) so a 530 GB volume still fits a plot.
    """
    n_periods = _n_periods(ds, period_s, duration_s)
    n_bins = (volume_size(ds) + bin_bytes - 1) // bin_bytes if ds.sizes["request"] else 1
    group = 1 if not max_bins or n_bins <= max_bins else int(np.ceil(n_bins / max_bins))
    n_rows = (n_bins + group - 1) // group
    mat = np.zeros((n_rows, n_periods), dtype=np.int64)
    if ds.sizes["request"]:
        per, key, cnt = _epoch_unit_counts(ds, bin_bytes, period_s)
        np.add.at(mat, (key // group, np.minimum(per, n_periods - 1)), cnt)
    return xr.DataArray(mat.astype(np.int32), dims=("bin", "period"),
                        coords={"bin_start": ("bin", np.arange(n_rows, dtype=np.int64) * group),
                                "time": ("period", np.arange(n_periods) * float(period_s))},
                        name="io_popularity", attrs={"bin_bytes": int(bin_bytes), "bins_per_row": group,
                                                     "period_s": float(period_s), "units": "IOs"})


def bin_daily_counts(ds, bin_bytes: int = BIN_BYTES, day_s: float = 86400.0) -> np.ndarray:
    """Accesses per day of every accessed bin: the mean over the trace's days (Obs. 1's "times a day").

    One value per bin accessed at least once: its request count divided by the trace length in days
    (at least one day; a trace shorter than a day counts as one day).
    """
    keys, ridx = split_arrays(_arr(ds, "offset"), _arr(ds, "size"), bin_bytes)
    _, counts = np.unique(keys, return_counts=True)
    dur = float(ds.attrs.get("duration_s", 0.0)) or float(_arr(ds, "time").max())
    return counts / max(1.0, dur / day_s)


def arrival_counts(ds, bin_s: float, *, duration_s: float | None = None) -> xr.DataArray:
    """Requests arriving in each ``bin_s`` window (dimension ``window``, coordinate ``time``)."""
    if bin_s <= 0:
        raise ValueError(f"bin_s must be > 0 seconds, got {bin_s!r}")
    n = _n_periods(ds, bin_s, duration_s)
    idx = np.floor(_arr(ds, "time") / bin_s).astype(np.int64)
    counts = np.bincount(np.minimum(idx, n - 1), minlength=n) if idx.size else np.zeros(n, np.int64)
    return xr.DataArray(counts, dims="window", coords={"time": ("window", np.arange(n) * float(bin_s))},
                        name="arrivals", attrs={"bin_s": float(bin_s), "units": "requests"})


def index_of_dispersion_counts(ds, bin_s: float, *, duration_s: float | None = None) -> float:
    """Index of dispersion for counts, ``I(bin_s) = Var[N] / E[N]`` of arrivals per window (thesis Ch. 3).

    1 for a Poisson process; larger for bursty (e.g. MMPP) arrivals.
    """
    c = arrival_counts(ds, bin_s, duration_s=duration_s).values.astype(np.float64)
    m = c.mean()
    return float(c.var() / m) if m > 0 else float("nan")


def table1_row(ds, *, cache_bytes: int = TABLE1_CACHE_BYTES, line_bytes: int = PAGE_BYTES,
               window_s: float = TABLE1_WINDOW_S, reaccess_definition: str = "among_reaccesses") -> dict:
    """Every column of vFRM Table 1 for one trace, plus the request count and read ratio.

    Sizes in bytes, ratios as fractions (the notebook converts to GB and %). The same numbers as the
    separate functions; the requests are split into pages and the previous access of every page is
    found once, shared by the re-access ratio, the LRU hit ratio and the working set (the page
    accesses with no previous access are the distinct pages). The trace is checked as in
    :func:`lru_hit_ratio` (an empty trace is a ValueError); ``cache_bytes`` is one size.
    """
    if reaccess_definition not in REACCESS_DEFINITIONS:
        raise ValueError(f"reaccess_definition must be one of {REACCESS_DEFINITIONS}, got {reaccess_definition!r}")
    n = check_trace(ds, "stats.table1_row")  # an empty trace is an error, as for lru_hit_ratio
    if np.ndim(cache_bytes) != 0:
        raise ValueError(f"cache_bytes must be one number of bytes, got {cache_bytes!r}")
    cache_bytes = int(whole_bytes(cache_bytes, "cache_bytes"))
    # split into pages and link each page access to the previous one once, for both statistics
    prev, starts, count = _page_links(ds, line_bytes)
    gap = _reaccess_times_from_links(_arr(ds, "time"), prev, starts, count)
    del count
    reacc = _reaccess_ratio_from_gaps(gap, window_s, reaccess_definition)
    del gap
    lines = np.array([int(cache_bytes) // int(line_bytes)], dtype=np.int64)
    lru = float(_lru_hits_from_links(prev, starts, lines)[0] / n)
    del starts
    # the working set: distinct pages = page accesses without a previous access to the same page
    wss = int(np.count_nonzero(prev < 0)) * int(line_bytes)
    del prev
    return {
        "name": ds.attrs.get("name", ""),
        "n_requests": n,
        "volume_size": volume_size(ds),
        "working_set_size": wss,
        "lru_hit_ratio": lru,
        "reaccess_ratio": reacc,
        "read_ratio": read_ratio(ds),
    }


def table1_frame(rows) -> pd.DataFrame:
    """A list of :func:`table1_row` dicts as a DataFrame in the paper's units (GB, %)."""
    df = pd.DataFrame(list(rows))
    out = pd.DataFrame({
        "name": df["name"],
        "volume_size_gb": df["volume_size"] / GiB,
        "working_set_gb": df["working_set_size"] / GiB,
        "lru_hit_ratio_pct": 100 * df["lru_hit_ratio"],
        "reaccess_ratio_pct": 100 * df["reaccess_ratio"],
        "read_ratio_pct": 100 * df["read_ratio"],
        "n_requests": df["n_requests"],
    })
    return out
