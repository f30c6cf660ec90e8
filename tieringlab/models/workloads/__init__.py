"""Workload generators of the papers, one module per system, as array code with explicit randomness.

Each generator takes a ``jax.random`` key (or a numpy Generator derived from one) and returns arrays in
seconds and bytes; every parameter the paper leaves out is a named, documented argument.

Submodules are imported on demand (``from tieringlab.models.workloads import ara``).
"""
