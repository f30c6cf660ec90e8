"""The paper systems and their baselines, one module per system, behind one contract and one registry.

**The contract** (:mod:`tieringlab.policies.contract`): three kinds of system, one call shape each.

=============  =========================================================  =======================================
kind           call shape                                                 systems
=============  =========================================================  =======================================
``trace``      ``fn(ds, capacities, params[, key]) -> Dataset`` over      LRU, ARC, CAR, vFRM, G1-vFRM (GLB-vFRM),
               ``capacity_bytes`` with the counts ``iocost`` prices       G2-vFRM
``queueing``   ``fn(params, arrivals, services[, key], **inputs)``        Qlen, Rand, ARA, ARA_PRED, ARA_OPT
               ``-> Dataset`` over ``job`` (and ``replication``)
``controller`` ``fn(params, observations[, key]) -> Dataset`` over        AutoTiering, IDT, EDT, EAFC,
               ``epoch``                                                  static-partition, vanilla, EAFC-master,
                                                                          EAFC-proportional
=============  =========================================================  =======================================

Parameters are one frozen dataclass per system with the paper's defaults, each default with the
section it comes from; a documented choice where the paper is silent says so.

**The registry** (:mod:`tieringlab.policies.registry`) maps the papers' names to implementations:
``registry.run("G1-vFRM", ds, capacities, knobs=...)``. Experiments name systems and never import a
policy module for its functions.

**Modules**

- :mod:`~tieringlab.policies.caching`  page caches in trace mode (4 KB lines, Table 2 counts), over the
  algorithms :mod:`~tieringlab.policies.lru`, :mod:`~tieringlab.policies.arc`,
  :mod:`~tieringlab.policies.car`, each on the shared array lists of
  :mod:`~tieringlab.policies._arraylist` (a JAX scan engine and a numba engine)
- :mod:`~tieringlab.policies.vfrm`     vFRM (vFRM paper Sec. 4.4), the bin/epoch layout all three share
- :mod:`~tieringlab.policies.gvfrm`    GLB-vFRM (G1-vFRM) and G2-vFRM (vFRM paper Alg. 1, thesis Alg. 1-2)
- :mod:`~tieringlab.policies.ara`      ARA (static, ARA_PRED, ARA_OPT), Qlen and Rand (thesis Ch. 3)
- :mod:`~tieringlab.policies.iocost`   vFRM Eq. 4 IO cost from the Table 3 latencies
- :mod:`~tieringlab.policies.eafc`     EAFC (EAFC paper Fig. 3), vanilla, static partitions, and the master
  controller (ours) over the hybrid store of :mod:`tieringlab.models.hybridstore`

CONTRIBUTING.md ("add a paper system") gives the layers a new system adds, in order.
"""

from tieringlab.policies.contract import CAPACITY_DIM, KINDS
from tieringlab.policies.registry import PolicySpec, get, make_params, names, register, run

__all__ = ["CAPACITY_DIM", "KINDS", "PolicySpec", "get", "make_params", "names", "register", "run"]
