"""Units: the one home of every byte and time constant in tieringlab.

Inside the library everything is in **seconds** and **bytes** (DESIGN.md); these constants convert at
the edges (readers, parameters, plots). The papers write "KB", "MB" and "GB" without saying which they
mean, so the two families have names that cannot be confused:

- **binary** ``KiB = 2**10``, ``MiB = 2**20``, ``GiB = 2**30``, ``TiB = 2**40``: cache lines, bins,
  sub-LUNs and flash sizes (the vFRM paper's 4 KB pages and 1 MB VMFS blocks are binary: 8 x 128 KB
  migration IOs make one 1 MB bin, vFRM Sec. 5.1; "GB" of a flash size is read as GiB, a documented
  choice, so a 4 GB flash holds exactly 4096 bins);
- **decimal** ``KB = 10**3``, ``MB = 10**6``, ``GB = 10**9``, ``TB = 10**12``: device capacities,
  bandwidths and service rates of vendor tables (AutoTiering Tables I/IV, thesis Table 4), the
  datasheet convention.

Every module imports its constants from here; none defines its own ``GB``.
"""

from __future__ import annotations

__all__ = ["KiB", "MiB", "GiB", "TiB", "KB", "MB", "GB", "TB", "US", "MS", "MINUTE", "HOUR", "DAY",
           "PAGE_BYTES", "BIN_BYTES", "SUBLUN_BYTES"]

# binary (IEC) multiples: cache lines, bins, sub-LUNs, flash sizes
KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30
TiB = 1 << 40

# decimal (SI) multiples: vendor capacities, bandwidths and service rates
KB = 10**3
MB = 10**6
GB = 10**9
TB = 10**12

# time, in seconds
US = 1e-6      #: one microsecond
MS = 1e-3      #: one millisecond
MINUTE = 60.0
HOUR = 3600.0
DAY = 86400.0

# the papers' fixed units of placement
PAGE_BYTES = 4 * KiB     #: vFRM Table 1, Sec. 5.1: 4 KB cache lines of LRU/ARC/CAR
BIN_BYTES = 1 * MiB      #: vFRM Sec. 4.3: 1 MB bins (the VMFS block), vFRM's migration unit
SUBLUN_BYTES = 1 * GiB   #: OTF-AST: 1 GB sub-LUNs
