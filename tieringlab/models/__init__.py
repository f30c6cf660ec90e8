"""The shared math every policy stands on, as pure functions over whole arrays.

- :mod:`~tieringlab.models.temperature`  vFRM heating/cooling (Eq. 1-3), G2-vFRM aged counters, AutoTiering aging
- :mod:`~tieringlab.models.mmpp`         2-state and n-state MMPP: sampling, moments, fitting
- :mod:`~tieringlab.models.burstiness`   index of dispersion, autocorrelation, the on/off burst predictor
- :mod:`~tieringlab.models.queueing`     FCFS (Lindley) as prefix operations, M/M/1, M/G/1, M/M/c, LMST Eq. 6 and 9
- :mod:`~tieringlab.models.regression`   AutoTiering's least-squares lines with the CV confidence rule
- :mod:`~tieringlab.models.stackdist`    exact LRU stack distances and hit-ratio curves (Mattson et al.)
- :mod:`~tieringlab.models.devices`      device and tier catalogs of the papers, with units
- :mod:`~tieringlab.models.allflash`     AutoTiering's multi-tier all-flash datacenter: Eq. 5 caps, M/M/c tiers,
                                         closed-loop VMDK serving, TSSCS probes, VMDK migrations

Submodules are imported on demand (``from tieringlab.models import queueing``).
"""
