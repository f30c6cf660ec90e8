"""OTF-AST (on-the-fly automated storage tiering) and its baselines on a sub-LUN tiering simulator.

OTF-AST paper (Oe et al., Fujitsu Laboratories, IPSJ technical report, Japanese, OCR only); the
algorithm section (Sec. 3.1-3.2) is lost, so the monitoring rule follows the reading notes
``../shared/papers/notes/otf_ast.md`` (**"notes"** below), Sec. 1.4 and 2: the recommended reading is
the default and every alternative reading is a named parameter.

The system (Fig. 4-5, Sec. 3.3, Table 1-3)
------------------------------------------
A **300 GB LUN** is cut into **1 GB sub-LUNs** (Fig. 4; GiB, a choice); at most **24 sub-LUNs** sit on
the SSD (Sec. 4.1); the rest of the LUN lives on an HDD RAID0 (Table 1). Every ``t`` seconds (interval
``k``) the user-space monitor counts the user IOs of each sub-LUN over the last ``m`` seconds,
``cnt[k, s]``, and decides (notes Sec. 1.4, recommended reading):

- ``S_k`` = the ``n`` sub-LUNs with the most IOs (count > 0; ties to the lower index);
- the interval is *concentrated* when ``sum_{s in S_k} cnt[k, s] >= (i / 100) * sum_s cnt[k, s]``
  (degree of concentration); then ``hot[k, s] = s in S_k``;
- a sub-LUN on the HDD that has been hot ``c`` intervals in a row is **promoted** (duration of hot
  status); one on the SSD that has not been hot for ``o`` intervals in a row is **demoted** (the timeout
  of Fig. 4: ``o = 10`` intervals of ``t = 60 s``);
- promotions go by count, highest first, while the SSD has room (no eviction on demand: candidates
  wait for timeouts, reading f1); the demotions decided in an interval queue ahead of its promotions.

Moves (Sec. 3.3, 3.3.2): one at a time (one temporary buffer the size of a sub-LUN), FIFO; a move
copies the sub-LUN with kcopyd (Table 1: 2.5 s up, 6.5 s down with no user IO); while it copies, writes
to it go to the temporary buffer (and reads of what they wrote are served from it; other reads from
the source); after the copy the buffer is synced to the destination at <= 500 IOPS; then the tiering
table points at the destination.

How it is computed
------------------
1. **Monitoring** as array ops over the ``(interval, sub-LUN)`` count matrix (:func:`hot_matrix`, :mod:`.monitor`): a
   sort per row, the share test, the hot mask, for every interval at once (user IO only: it does not depend on
   the moves).
2. **Everything else in one closed-loop event simulation** (:mod:`.sim`, compiled with numba, one pass in time
   order): the decision at each interval's end, the moves (kcopyd chunks, up to ``Testbed.copy_inflight`` in
   flight, each reading its source and writing its destination through the same disk queues as user IO, never
   faster than Table 1's no-load pace; then the buffer's sync at ``sync_max_iops``), every user IO routed at its
   arrival by the tiering table and the move in flight (the buffer's 512-B bitmap), and the devices: RAID0 pieces
   per disk, the disks' LRU read caches, FIFO or CFQ-like queues (``Testbed.copy_scheduler``), the HDD write cache
   (``Testbed.hdd_write_cache``), the SSD's channels. Copies slow down under user load and user IO waits behind
   copies (closed loop). Checked request by request against a SimPy model and, with no move in flight, against
   the sort-based model of :mod:`tieringlab.models.storage` (tests/test_otf_engine.py).
3. ``MeasureParams.load_scale``: a twin at a reduced scale runs on the testbed slowed to it
   (:func:`.sim.scaled_testbed`), so the load per disk and the copy times are scale 1's; responses are reported
   in paper-scale seconds.

The interval scan of :mod:`.engine` with the routing of :mod:`.routing` (copies paced open-loop from a fluid
HDD-only load estimate) is the engine this replaced; it stays only as the benchmarks' "before"
(benchmarks/bench_otf_engine.py).

Baselines (Sec. 4.1, Table 3): **static tiering** (the top 24 sub-LUNs by request count in the window
of the same length just before the replay, placed once, notes Sec. 3.1), **FlashCache** (4 KB blocks,
24 GB, LRU, write-back, notes Sec. 3.2-3.3; pass 1 cold, pass 2 warm: the same window replayed again on
the cache pass 1 left), **OTF-AST without SSD->HDD write-back** (demotion is a table update, Table 5),
**HDD only** (Figs. 7, 9).

Trace input: a trace Dataset (:mod:`tieringlab.traces`) whose attrs may carry ``replay_start_s`` and
``replay_end_s`` (default: the whole trace). Only requests in ``[replay_start_s, replay_end_s)`` are
replayed (times re-based to the replay start); static tiering trains on the window of equal length
before it. ``capacities`` are SSD sizes in bytes (whole sub-LUNs for the tiering systems; 24 GB is the
paper's). Results follow :func:`tieringlab.policies.contract.trace_result`; ``hits`` are user IOs
served by the SSD (the SSD access ratio of Table 4 is ``hit_ratio``).

The package, one module per concern: :mod:`.parameters` (every system's fields, declared once),
:mod:`.replay` (the replay window, the sub-LUN split), :mod:`.monitor` (counts and the hot-interval rule),
:mod:`.sim` (the closed-loop event simulation), :mod:`.result` (the counts and the result), and one module per
system (:mod:`.system` OTF-AST, :mod:`.static_tiering`, :mod:`.flashcache`, :mod:`.hdd_only`), each registering its
names.
"""

from __future__ import annotations

from tieringlab.policies.otf_ast.flashcache import flashcache
from tieringlab.policies.otf_ast.hdd_only import hdd_only
from tieringlab.policies.otf_ast.monitor import hot_matrix, interval_counts
from tieringlab.policies.otf_ast.parameters import (
                                                        C_READINGS,
                                                        COPY_UNITS,
                                                        FULL_POLICIES,
                                                        HOT_RULES,
                                                        I_READINGS,
                                                        M_READINGS,
                                                        FlashCacheParams,
                                                        FlashCacheSettings,
                                                        HddOnlyParams,
                                                        MeasureParams,
                                                        OtfAstParams,
                                                        OtfAstSettings,
                                                        StaticTieringParams,
                                                        StaticTieringSettings,
)
from tieringlab.policies.otf_ast.replay import replay_window
from tieringlab.policies.otf_ast.result import RESPONSE_GRID_S
from tieringlab.policies.otf_ast.static_tiering import static_tiering
from tieringlab.policies.otf_ast.system import otf_ast

__all__ = ["MeasureParams", "OtfAstSettings", "OtfAstParams", "StaticTieringSettings", "StaticTieringParams",
           "FlashCacheSettings", "FlashCacheParams", "HddOnlyParams", "hot_matrix", "interval_counts", "otf_ast",
           "static_tiering", "flashcache", "hdd_only", "HOT_RULES", "I_READINGS", "M_READINGS", "C_READINGS",
           "FULL_POLICIES", "COPY_UNITS", "replay_window", "RESPONSE_GRID_S"]
