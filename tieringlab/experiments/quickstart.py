"""notebooks/00_quickstart.ipynb: the real CloudPhysics trace through the whole package."""

from __future__ import annotations

from dataclasses import dataclass

from tieringlab.params import param, section


@section("quickstart")
@dataclass(frozen=True)
class QuickstartParams:
    max_requests: int = param(0, "use only the first N requests (0 = all 113,872); small values make quick runs",
                              bounds=(0, None))
    cache_sizes_mb: tuple[float, ...] = param(
        (1.0, 4.0, 16.0, 64.0, 256.0, 1024.0),
        "LRU cache sizes for the hit-ratio curve; 1 GB is vFRM Table 1's size", bounds=(1e-3, None))
    line_bytes: int = param(4096, "cache line (page) size; vFRM Table 1 uses 4 KB lines",
                            choices=(512, 1024, 2048, 4096, 8192, 16384, 65536))
    reaccess_window_s: float = param(300.0, "re-access window; vFRM Table 1 uses 5 minutes", bounds=(1.0, None))
    arrival_bin_s: float = param(60.0, "bin width of the arrivals-over-time plot (a documented choice)",
                                 bounds=(1.0, None))
