"""The paper systems and their baselines, one module per system, behind one contract and one registry.

**The contract** (:mod:`tieringlab.policies.contract`): four kinds of system, one call shape each.

==============  ===================================================================================
kind            call shape
==============  ===================================================================================
``trace``       ``fn(ds, capacities, params[, key]) -> Dataset`` over ``capacity_bytes`` with the
                counts ``iocost`` prices
``queueing``    ``fn(params, arrivals, services[, key], **inputs) -> Dataset`` over ``job`` (and
                ``replication``)
``controller``  ``fn(params, observations[, key]) -> Dataset`` over ``epoch``
``scenario``    ``fn(params, workload, key) -> Dataset`` over ``replication`` x ``config`` (the paper
                defines the workload with the system)
==============  ===================================================================================

Which system is which kind is the registry's to say, not this text's: ``registry.describe()`` lists every
registered name by kind with its source (``python -c "from tieringlab.policies import registry;
print(registry.describe())"``), and ``tests/test_contract.py`` runs each through its kind's contract.

Parameters are one frozen dataclass per system with the paper's defaults, each default with the
section it comes from; a documented choice where the paper is silent says so.

**The registry** (:mod:`tieringlab.policies.registry`) maps the papers' names to implementations:
``registry.run("G1-vFRM", ds, capacities, params=...)`` (or ``knobs=`` a dict of its params' fields: an unknown one
is an error). Experiments name systems and never import a policy module for its functions.

**Modules**

- :mod:`~tieringlab.policies.caching`  page caches in trace mode (4 KB lines, Table 2 counts), over the
  algorithms :mod:`~tieringlab.policies.lru`, :mod:`~tieringlab.policies.arc`,
  :mod:`~tieringlab.policies.car`, each on the shared array lists of
  :mod:`~tieringlab.policies._arraylist` (a JAX scan engine and a numba engine, :mod:`tieringlab.native`)
- :mod:`~tieringlab.policies.vfrm`     vFRM (vFRM paper Sec. 4.4), the bin/epoch layout all three share
- :mod:`~tieringlab.policies.gvfrm`    GLB-vFRM (G1-vFRM) and G2-vFRM (vFRM paper Alg. 1, thesis Alg. 1-2)
- :mod:`~tieringlab.policies.ara`      ARA (static, ARA_PRED, ARA_OPT), Qlen and Rand (thesis Ch. 3); the scan
  engine in :mod:`~tieringlab.policies._ara_engine`
- :mod:`~tieringlab.policies.lmst`     LMST, NMST, SMST (thesis Sec. 4.1): a package of params, controller
  equations, engine, slot buffers and result
- :mod:`~tieringlab.policies.otf_ast`  OTF-AST, static tiering, FlashCache, HDD only (OTF-AST paper): a package
  over a shared replay/sub-LUN/routing layer
- :mod:`~tieringlab.policies.autotiering`  AutoTiering, IDT, EDT (AutoTiering paper Alg. 1-2)
- :mod:`~tieringlab.policies.iocost`   vFRM Eq. 4 IO cost from the Table 3 latencies
- :mod:`~tieringlab.policies.eafc`     EAFC (EAFC paper Fig. 3), vanilla, static partitions, and the master
  controller (ours) over the hybrid store of :mod:`tieringlab.models.hybridstore`

CONTRIBUTING.md ("add a paper system") gives the layers a new system adds, in order.
"""

from tieringlab.policies.contract import CAPACITY_DIM, KINDS
from tieringlab.policies.registry import PolicySpec, get, make_params, names, register, run

__all__ = ["CAPACITY_DIM", "KINDS", "PolicySpec", "get", "make_params", "names", "register", "run"]
