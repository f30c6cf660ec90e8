"""Block-IO traces: readers for real formats, fixed-unit splitting, whole-trace statistics, MSR twins.

- :func:`read_msr`, :func:`read_cloudphysics` -> ``xarray.Dataset`` (dim ``request``; ``time`` s,
  ``offset``/``size`` bytes, ``is_write``); :class:`TraceFormatError` on malformed input.
- :func:`check_trace`: the one check of a trace Dataset every trace policy runs (non-empty, finite
  non-decreasing times, offsets and sizes in range).
- :func:`load`: trace by name (twin or verified real file); an unknown name lists the known ones.
- :func:`split_units`: requests -> 4 KB pages / 1 MB bins / 1 GB sub-LUNs, keeping the request index.
- :mod:`tieringlab.traces.stats`: vFRM Table 1 columns, Fig. 1 / Fig. 2 statistics, dispersion.
- :func:`msr_twin`, :data:`TWINS`: synthetic twins of the papers' MSR traces.
- :func:`mix_traces`: several traces merged into one multi-VM trace (vFRM Sec. 5.3 workloads).
"""

from tieringlab.traces import stats
from tieringlab.traces.mix import member_of, mix_traces
from tieringlab.traces.readers import TraceFormatError, check_trace, make_dataset, read_cloudphysics, read_msr
from tieringlab.traces.source import effective_scale, load
from tieringlab.traces.split import split_arrays, split_units
from tieringlab.traces.twins import PAPER_NAMES, TWINS, TwinSpec, msr_twin, twin_table
from tieringlab.units import BIN_BYTES, PAGE_BYTES, SUBLUN_BYTES

__all__ = ["TraceFormatError", "read_msr", "read_cloudphysics", "make_dataset", "check_trace", "split_units",
           "split_arrays", "stats", "msr_twin", "mix_traces", "member_of", "load", "effective_scale", "TWINS",
           "TwinSpec", "PAPER_NAMES", "twin_table", "PAGE_BYTES", "BIN_BYTES", "SUBLUN_BYTES"]
