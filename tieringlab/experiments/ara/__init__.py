"""The ARA experiment (thesis Ch. 3, notebooks/04_ara_load_balancing.ipynb), split along its seams.

- :mod:`.section`: the ``ara_load_balancing`` params section (the dispatcher's :class:`AraParams` embedded as
  ``policy``) and the workloads it implies;
- :mod:`.grids`: the experiment grids (Table 1, Fig. 3, 5, 6, 8, Table 2, the sensitivity study), each a
  labelled Dataset whose configurations carry the parameters they ran with as coordinates;
- :mod:`.compare`: "A beats B" by the paired per-replication gap, the unpaired interval separation beside it, and
  the orderings of the sensitivity study (:mod:`tieringlab.stats`);
- :mod:`.preconditions`: what the claims' mechanisms need from our workload, measured on the streams run
  (herding exposure, Eq. 2's I, the predictor's accuracy);
- :mod:`.tables`: the tables the notebook saves;
- :mod:`.ledger`: the claims' values, selected by coordinate, with their samples and their values under every
  reading the notebook runs (unpaired rule, Table 2's readings, the sensitivity settings).

The notebook imports :mod:`tieringlab.experiments.ara_load_balancing`, which holds the documented choices and
re-exports these.
"""
