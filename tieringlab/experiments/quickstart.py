"""notebooks/00_quickstart.ipynb: the real CloudPhysics trace through the whole package."""

from __future__ import annotations

from dataclasses import dataclass

from tieringlab.claims.quickstart import REACCESS_CLOUDPHYSICS
from tieringlab.params import MAX_MIB, cross_field, increasing, param, section
from tieringlab.units import GiB, MiB


@section("quickstart")
@dataclass(frozen=True)
class QuickstartParams:
    max_requests: int = param(0, "use only the first N requests (0 = all 113,872); small values make quick runs",
                              bounds=(0, None))
    cache_sizes_mb: tuple[float, ...] = param(
        (1.0, 4.0, 16.0, 64.0, 256.0, 1024.0),
        "LRU cache sizes for the hit-ratio curve, increasing; 1 GB is vFRM Table 1's size (at most 2^43 - 1 "
        "MiB: the sizes are int64 bytes)", bounds=(1e-3, None), unit="MiB")
    line_bytes: int = param(4096, "cache line (page) size; vFRM Table 1 uses 4 KB lines",
                            choices=(512, 1024, 2048, 4096, 8192, 16384, 65536), unit="bytes")
    reaccess_window_s: float = param(300.0, "re-access window; vFRM Table 1 uses 5 minutes", bounds=(1.0, None),
                                     unit="s")
    arrival_bin_s: float = param(60.0, "bin width of the arrivals-over-time plot (a documented choice)",
                                 bounds=(1.0, None), unit="s")

    def __post_init__(self):
        """Cross-field checks (ValueError naming the parameter): the cache sizes are the x axis of the
        hit-ratio curve and the ``cache_size_mb`` coordinate of the result, so each appears once, in order, and
        each fits the int64 byte counts of :func:`tieringlab.traces.stats.lru_hit_ratio`."""
        problems = increasing("cache_sizes_mb", self.cache_sizes_mb, "the x axis of the hit-ratio curve")
        too_big = [s for s in self.cache_sizes_mb if s > MAX_MIB]
        if too_big:  # the LRU model counts bytes in int64: larger sizes wrapped to negative ones at run time
            problems.append(f"cache_sizes_mb: {too_big} exceed {MAX_MIB} MiB (2^43 - 1: the sizes are counted in "
                            f"int64 bytes)")
        cross_field(problems)


def run(p: QuickstartParams, trace):
    """Characterise one trace for the quickstart: arrivals over time, the LRU hit-ratio curve,
    the 5-minute re-access ratio (vFRM Table 1's definition, see :mod:`tieringlab.traces.stats`).

    Returns an ``xarray.Dataset`` with dims ``time_bin`` and ``cache_size_mb`` and the scalar
    statistics as 0-d variables, every variable with its unit in ``attrs``. Cache sizes are binary
    megabytes (MiB), the unit of the papers' 1 MB bins and 4 KB pages.
    """
    import numpy as np  # noqa: PLC0415
    import xarray as xr  # noqa: PLC0415

    from tieringlab.traces import stats  # noqa: PLC0415

    if p.max_requests:
        trace = trace.isel(request=slice(0, p.max_requests))
    is_write = trace["is_write"].values
    reads = np.asarray(stats.arrival_counts(trace.isel(request=np.flatnonzero(~is_write)), p.arrival_bin_s))
    writes = np.asarray(stats.arrival_counts(trace.isel(request=np.flatnonzero(is_write)), p.arrival_bin_s))
    n_bins = max(len(reads), len(writes))
    reads = np.pad(reads, (0, n_bins - len(reads)))
    writes = np.pad(writes, (0, n_bins - len(writes)))
    sizes_mb = np.asarray(p.cache_sizes_mb, dtype=np.float64)
    hit = np.asarray(stats.lru_hit_ratio(trace, sizes_mb * MiB, line_bytes=p.line_bytes), dtype=np.float64)
    ds = xr.Dataset(
        {
            "read_rate": ("time_bin", reads / p.arrival_bin_s, {"units": "requests/s", "long_name": "reads"}),
            "write_rate": ("time_bin", writes / p.arrival_bin_s, {"units": "requests/s", "long_name": "writes"}),
            "hit_ratio": ("cache_size_mb", hit,
                          {"units": "1", "long_name": f"LRU IO hit ratio ({p.line_bytes} B lines)"}),
            "n_requests": ((), int(trace.sizes["request"]), {"units": "requests"}),
            "duration_s": ((), float(trace["time"].values[-1] - trace["time"].values[0]), {"units": "s"}),
            "read_ratio": ((), float(stats.read_ratio(trace)), {"units": "1"}),
            "volume_gb": ((), float(stats.volume_size(trace)) / GiB, {"units": "GiB"}),
            "working_set_gb": ((), float(stats.working_set_size(trace, page_bytes=p.line_bytes)) / GiB,
                               {"units": "GiB"}),
            "reaccess_ratio": ((), float(stats.reaccess_ratio(trace, window_s=p.reaccess_window_s,
                                                               page_bytes=p.line_bytes)), {"units": "1"}),
        },
        coords={
            "time_bin": ("time_bin", np.arange(n_bins) * p.arrival_bin_s, {"units": "s", "long_name": "bin start"}),
            "cache_size_mb": ("cache_size_mb", sizes_mb, {"units": "MiB"}),
        },
        attrs={"trace": trace.attrs.get("name", "trace"), "line_bytes": p.line_bytes},
    )
    return ds


def claim_values(p: QuickstartParams, res) -> dict:
    """``{claim_id: (value, note)}`` of :mod:`tieringlab.claims.quickstart` from :func:`run`'s result."""
    return {REACCESS_CLOUDPHYSICS: (100 * float(res.reaccess_ratio),
                                    None if p.max_requests == 0 else f"first {p.max_requests} requests only")}
