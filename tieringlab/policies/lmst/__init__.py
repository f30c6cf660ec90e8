"""LMST, NMST and SMST: live data migration across storage tiers (thesis Sec. 4.1), as a multi-tier simulator.

J. Tai, PhD thesis (2015), Sec. 4.1 ("Live Data Migration in Multi-tiered Storage Systems"): a pool of
SSD and FC disks (Table 4), 1 GB ALUNs mapped to disks, applications in two SLA classes (SLA^H = 1 ms,
SLA^L = 20 ms, Sec. 4.1.3). Three systems, one simulator:

- **NMST** (Sec. 4.1.3.1): no migration; SLA^H applications on the SSDs, SLA^L on the FCs, for good.
- **LMST** (Sec. 4.1.2, Fig. 13): once per window ``t_win`` it *selects* candidates (forward: FC ALUNs
  with ``lambda_{A_i} > tau_h``; backward: SLA^L ALUNs on SSD with ``lambda_{A_i} < tau_l``; each to the
  least-loaded disk of the other tier with a free ALUN slot), *validates* them (the SLA constraint,
  Eqs. 7-8 with the alpha-conservative rate of Eq. 4; the response-time constraint Eqs. 9-16 with the
  threshold ``e``, for forward migrations) and *schedules* them (duration Eq. 17 with ``beta``; backward
  migrations from the window start, forward ones once all backward ones are done; one migration per disk
  at a time; candidates not started by the window's end are abandoned). Migration I/Os have the lowest
  priority on every disk (Sec. 4.1.3.1: "migration I/Os always have the lowest priority").
- **SMST** (Sec. 4.1.3.4): the same migrations (same selection, validation and schedule), but "the
  migration I/Os are given the higher priority than the regular I/Os ones which request to access those
  to-be-migrated ALUNs": at the source, application I/Os that arrive for the ALUN being migrated wait
  behind the migration I/Os (all other I/Os keep their priority over migration I/Os).

Disk model (Sec. 4.1.2.2, Fig. 12): one server, the queue split into priority buffers (SLA^H, SLA^L,
migration, SMST-suspended), FIFO inside a buffer, no preemption (the queue of
:func:`tieringlab.models.queueing.priority_response_times`); service time = I/O size / ``mu_{D_j}``
(Table 4 rates; no seek term: Table 4 gives one rate per tier and the I/Os carry no read/write type).

**Readings and documented choices** (the notes' ambiguity numbers A1-A29 in brackets; each is a field of
:class:`LmstParams` where it is a number):

- Per-disk capacity 20 GB (Table 4 "Total Capacity" read as the tier's total over its disks, A1 a), so
  20 ALUN slots per disk; decimal units (A26). Initial placement striped round-robin over the tier's disks
  (Table 6 per-disk loads).
- Windows are the workload's 20-minute slots (A25). Eq. 4's "previously recorded arrival rates" are the
  per-minute byte rates of the ALUN in the window the decision looks at (A6 a), population standard
  deviation. The first window has no history: no migration (causal reading).
- **Decision timing, Eqs. 10-14 (A5, A8)** -- ``timing``:
  ``"causal"`` (the main reading): the decision at the start of window ``w`` uses window ``w-1``'s
  samples, and the next-window loads of Eqs. 10-14 are predicted as the current ones
  (``lambda' = lambda``: the thesis gives no predictor); ``"lookahead"`` (the variant): the decision sees
  window ``w``'s own samples (the bursty traffic of the window it acts in, as Sec. 4.1.3.1's "migrating
  all validated bursty traffic" suggests) and the true next-window loads (window ``w+1``'s samples) in
  Eqs. 10-14. Not causal; reported beside the causal reading.
- **Eqs. 11 and 14 are truncated** in the thesis text (each ends with a bare "+"). Reconstruction used
  here, from the sentence before Eq. 9 ("in the next time window, their new workloads will be
  ``lambda'_{D_k} - lambda'_{A_i}`` and ``lambda'_{D_j} + lambda'_{A_i}``")::

      RT'_k = g(k, l_k) (t_win - t_mgt) + g(k, l_k + dl) t_mgt + g(k, l'_k - l'_A) t_win        (Eq. 11)
      RT'_j = g(j, l_j) (t_win - t_mgt) + g(j, l_j + dl) t_mgt + g(j, l'_j + l'_A) t_win        (Eq. 14)

  with Eq. 10 ``RT_k = (g(k, l_k) + g(k, l'_k)) t_win`` (its OCR "lambda_{D'_k}" read as
  ``lambda'_{D_k}``, A7) and Eq. 13 likewise; ``g`` is Eq. 9.
- The sign of Eqs. 12/15 (A9): the text calls RT' the response time *without* the migration while the
  printed Eq. 11 holds the migration terms; Sec. 4.1.3.3 says a larger e is more conservative and a
  positive e demands a benefit. So the relative benefit is ``(RT - RT') / RT`` (RT without, RT' with the
  migration), and Eq. 16 validates when the mean of source and destination benefits exceeds ``e``.
- ``dl`` = ``min{mu_k - lambda_k, mu_j - lambda_j}`` (Sec. 4.1.2.3; Eq. 17's "mu_i - lambda_i", A11)
  makes the bottleneck's during-migration term ``s / 0``: Eq. 9 is guarded there as
  ``g = s / max(mu - x, (1 - rho_max) mu)`` (A10 reading a, ``rho_max`` = 0.95; ``migration_term="hidden"``
  is reading c, the term ``g(lambda)``: the lowest-priority migration I/Os are not seen by applications). The
  look-ahead next-window terms use the same guard (the true next load may exceed ``mu``).
- Eq. 17 assumes ``t_mgt < t_win``: a candidate whose estimate is not is not validated.
- Backward candidates are checked against the SLA constraint only ("(for forward migration)", A12;
  ``rt_check_backward``). The source must satisfy ``lambda_{D_k} < mu_{D_k}`` (A13).
- Candidates one at a time, coldest backward first, hottest forward first; after each accepted one the
  loads and free slots are updated before the next picks its destination (A14). Free slots count the
  space the window's backward migrations free (they run first). An ALUN migrating at the decision counts
  at its source, is not a candidate, and its destination slot stays reserved (A27).
- Migration mechanics (A16): the ALUN is copied in ``chunk_bytes`` chunks, closed loop (read a chunk at
  the source, then write it at the destination, then the next); I/Os for it go to the source until the
  last chunk is written (cutover). The copy is exactly one ALUN (the generated I/Os carry no writes;
  ``beta`` enters only Eq. 17's estimate). SMST's suspended I/Os rejoin their SLA buffer at cutover.
- Metrics (Sec. 4.1.3, notes Sec. 6): M_Resp = mean response of all application I/Os (both classes,
  I/O-weighted); V_Ratio = share of I/Os whose response exceeds their class's SLA; V_Time = mean of
  (response - SLA) over the violating I/Os; disk utilization = busy time / simulated duration (migration
  service included); Mgr_Resp = mean response of the application I/Os that arrive for an ALUN while it is
  being migrated (either direction); Burst_TS = bursty (ALUN, slot) pairs of the SLA^L ALUNs (whose home
  is the FC tier); Mgr_Ratio = the share of those that, at the decision that looks at the slot, passed
  forward validation or were already on (or migrating to) an SSD. ``mgr_ratio_io`` also reports the share
  of those slots' I/Os served from an SSD. An I/O's response counts towards the window it arrived in.

Modules: :mod:`.params` (:class:`LmstParams`, every field declared once with its unit and source),
:mod:`.layout` (disks, ALUNs, placement), :mod:`.controller` (Eqs. 3-17: a jitted ``lax.scan`` over the
candidates, vmapped over parameter sets, so a Fig. 16 sweep is one call), :mod:`.engine` (the driver:
replications and parameter sets of one call run concurrently, one thread per CPU core; the workload of a
replication is generated once, slot by slot, and shared by every parameter set and baseline of the call --
paired comparisons, and no 10^8-element arrays: a paper-scale run never holds more than two slots),
:mod:`.slots` (given I/Os cut into slots), :mod:`.result` (the labelled metrics). The event engine that
executes the plan is a compiled loop (:mod:`tieringlab.policies._lmst_native`; see there for why).

The systems are of the "scenario" kind of :mod:`tieringlab.policies.contract` (:func:`scenario`, registered
as LMST, NMST and SMST): ``fn(params, workload, key) -> Dataset(replication, config)``; :func:`run` also
takes given I/Os (tests, what-if runs).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import xarray as xr

from tieringlab.models.workloads import lmst as wl
from tieringlab.policies.lmst.controller import eq4_rates, plan_window
from tieringlab.policies.lmst.engine import simulate
from tieringlab.policies.lmst.layout import SystemLayout, system_layout
from tieringlab.policies.lmst.params import MIGRATION_TERMS, POLICIES, TIMINGS, VECTOR_KNOBS, LmstParams
from tieringlab.policies.registry import PolicySpec, register

__all__ = ["POLICIES", "TIMINGS", "MIGRATION_TERMS", "VECTOR_KNOBS", "LmstParams", "SystemLayout", "system_layout",
           "eq4_rates", "plan_window", "simulate", "run", "scenario"]


def run(params: LmstParams, arrivals=None, services=None, key=None, *, workload: wl.LmstWorkloadParams | None = None,
        alun=None, baselines: Sequence[str] = (), keep_jobs: bool | None = None, threads: int | None = None,
        home=None, alun_class=None, fixed_plans=None) -> xr.Dataset:
    """LMST, NMST or SMST (``params.policy``) on generated or given I/Os (:func:`scenario` is its registered form).

    Two ways to give the I/Os:

    - **generated** (``arrivals`` and ``services`` None): the workload of thesis Sec. 4.1.3.1
      (:mod:`tieringlab.models.workloads.lmst`, parameters ``workload``) drawn from ``key``, slot by slot;
      a batch of keys (shape ``(R,)``) runs R replications;
    - **given**: ``arrivals`` (s, non-decreasing, within the workload's ``n_slots * slot_s``), ``services`` =
      **the I/O sizes in bytes** (an LMST I/O's service time depends on the disk that serves it,
      size / ``mu_{D_j}``, and the disk changes with migrations), ``alun`` the ALUN of each I/O (the layout of
      ``workload``: ALUNs numbered application by application, SLA^H applications first).

    ``baselines``: other systems run on the same I/Os in the same call (paired comparisons; the I/Os are
    generated once): names among "NMST", "LMST", "SMST", or ``(name, {field: value})`` for a variant
    (``("LMST", {"timing": "lookahead"})``); a baseline takes the first parameter set of ``params``.
    Sequence-valued knobs of ``params`` (:data:`VECTOR_KNOBS`) run one parameter set each (a Fig. 16 sweep
    is one call).

    Returns a Dataset over ``replication`` x ``config`` (coordinates ``policy``, ``timing`` and the knobs)
    with ``mean_response_s`` (= ``m_resp_s``, M_Resp), ``v_ratio``, ``v_time_s``, per ``app`` and per
    ``window`` versions, ``disk_utilization`` per ``disk``, ``mgr_resp_s``, ``burst_ts``, ``mgr_ratio``,
    ``mgr_ratio_io``, the migration counts, and, for given I/Os (``keep_jobs``, default True), per-I/O
    ``response_s`` and ``disk_of_job`` over ``config`` x ``job``.
    """
    if not isinstance(params, LmstParams):
        raise TypeError(f"params must be LmstParams; got {type(params).__name__}")
    workload = wl.LmstWorkloadParams() if workload is None else workload
    if not isinstance(workload, wl.LmstWorkloadParams):
        raise TypeError("workload must be tieringlab.models.workloads.lmst.LmstWorkloadParams; got "
                        f"{type(workload).__name__}")
    systems = [params]
    first = {k: float(np.ravel(np.asarray(getattr(params, k), float))[0]) for k in VECTOR_KNOBS}
    for b in baselines:
        name, over = (b, {}) if isinstance(b, str) else (b[0], dict(b[1]) if len(b) > 1 else {})
        name = str(name).lower()
        if name not in POLICIES:
            raise ValueError(f"baselines must name systems of this simulator, {[x.upper() for x in POLICIES]} "
                             f"(optionally as (name, {{field: value}})); got {b!r}")
        bad = sorted(set(over) - {f.name for f in dataclasses.fields(LmstParams)} | ({"policy"} & set(over)))
        if bad:
            raise ValueError(f"baselines: {b!r} overrides unknown or fixed LmstParams fields {bad}")
        systems.append(dataclasses.replace(params, policy=name, **{**first, **over}))
    if arrivals is None and services is None:
        if alun is not None:
            raise ValueError("alun is given only with arrivals and services (the I/Os)")
        if key is None:
            raise ValueError(f"{params.policy.upper()} draws its workload from key: pass key=jax.random.key(...) "
                             "(or arrivals, services and alun)")
        return simulate(systems, workload, key, threads=threads, home=home, alun_class=alun_class,
                        fixed_plans=fixed_plans)
    if arrivals is None or services is None or alun is None:
        raise ValueError("given I/Os need arrivals (s), services (I/O sizes in bytes) and alun (ALUN per I/O)")
    return simulate(systems, workload, io=(arrivals, services, alun),
                    keep_jobs=True if keep_jobs is None else keep_jobs, threads=threads, home=home,
                    alun_class=alun_class, fixed_plans=fixed_plans)


def scenario(params: LmstParams, workload: wl.LmstWorkloadParams, key, *, baselines: Sequence = (),
             threads: int | None = None, home=None, alun_class=None, fixed_plans=None) -> xr.Dataset:
    """LMST, NMST or SMST (``params.policy``) on the workload of thesis Sec. 4.1.3.1 drawn from ``key``: the
    "scenario" kind of :mod:`tieringlab.policies.contract` (``registry.run("LMST", workload, params=...,
    key=...)``). A batch of keys (shape ``(R,)``) runs R replications; ``baselines`` and the other keywords
    are :func:`run`'s. Returns :func:`run`'s Dataset over ``replication`` x ``config``."""
    out = run(params, key=key, workload=workload, baselines=baselines, threads=threads, home=home,
              alun_class=alun_class, fixed_plans=fixed_plans)
    out.attrs["source"] = SOURCES[params.policy.upper()]
    return out


#: Where the thesis defines each system (the registry's ``source``, and the scenario result's).
SOURCES = {"LMST": "thesis Sec. 4.1.2 (Fig. 13, Eqs. 3-17)", "NMST": "thesis Sec. 4.1.3.1 (no migration)",
           "SMST": "thesis Sec. 4.1.3.4 (synchronous migration)"}

def _example(name: str):
    """A small valid call (the contract test's): one SLA^H and two SLA^L applications of five 50 MB ALUNs,
    three 1-minute slots, per-disk capacity for 20 ALUNs."""
    from tieringlab.units import MB  # noqa: PLC0415  (only the contract test calls it)

    def example():
        wp = wl.LmstWorkloadParams(n_high_apps=1, n_low_apps=2, aluns_per_app=5, n_slots=3, slot_s=60.0,
                                   sample_s=3.0, alun_bytes=50 * MB)
        return (wp,), {"params": LmstParams(policy=name.lower(), window_s=60.0, disk_capacity_bytes=20 * 50 * MB)}

    return example


for _name in ("LMST", "NMST", "SMST"):
    register(PolicySpec(
        name=_name, kind="scenario", fn=scenario, params_type=LmstParams,
        source=SOURCES[_name],
        fixed={"policy": _name.lower()}, aliases=(_name.replace("ST", "sT"),), random=True, example=_example(_name),
        description="multi-tier SSD/FC storage with SLA classes; live, synchronous or no data migration"))
