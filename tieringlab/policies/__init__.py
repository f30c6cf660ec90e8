"""One module per paper system and its baselines: pure functions over whole traces.

- :mod:`~tieringlab.policies.caching`  LRU, ARC, CAR page caches (vFRM paper baselines)
- :mod:`~tieringlab.policies.vfrm`     vFRM, GLB-vFRM (G1) and G2-vFRM
- :mod:`~tieringlab.policies.ara`      ARA (static, ARA_PRED, ARA_OPT), Qlen and Rand load balancers

Submodules are imported on demand.
"""
