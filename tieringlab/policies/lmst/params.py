"""The parameters of LMST, NMST and SMST (thesis Sec. 4.1): the multi-tier system and the LMST controller.

Every field is declared once, with its unit (the library's SI units: bytes, bytes/s, seconds, fractions),
its bounds or choices and where its default comes from (a thesis section, or a documented choice where the
thesis is silent; the notes' ambiguity numbers A1-A29 in brackets). ``params.yaml`` (``lmst.policy``), a
notebook's parameters cell and ``registry.make_params`` set these fields directly.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass

import numpy as np

from tieringlab.models.devices import LMST_TIERS
from tieringlab.params import cross_field, field_problems, param
from tieringlab.units import KB, MB, MINUTE, MS

__all__ = ["POLICIES", "TIMINGS", "MIGRATION_TERMS", "VECTOR_KNOBS", "LmstParams"]

POLICIES = ("nmst", "lmst", "smst")
TIMINGS = ("causal", "lookahead")
#: The during-migration term of Eqs. 11/14 (notes A10): "guard" (reading a, Eq. 9 guarded at rho_max) or "hidden"
#: (reading c: migration I/Os have the lowest priority, so applications see g(lambda), not g(lambda + dl)).
MIGRATION_TERMS = ("guard", "hidden")
#: Numeric knobs that may be given as a 1-D sequence: one parameter set per entry (dimension ``config``).
VECTOR_KNOBS = ("alpha", "e", "beta", "tau_h", "tau_l", "rho_max")

_SSD, _FC = LMST_TIERS
#: The type of a knob of :data:`VECTOR_KNOBS`: a number, or a sequence of them (one parameter set each).
Knob = float | tuple[float, ...]


@dataclass(frozen=True)
class LmstParams:
    """The multi-tier system and the LMST controller, with the thesis's values (section of each).

    The knobs of :data:`VECTOR_KNOBS` may each be a 1-D sequence (all of one length): one parameter set per
    entry, run side by side on the same I/Os (a Fig. 16 sweep is one call); ``params.yaml`` sets them as
    numbers (its sweeps are the section's ``fig16_*`` lists).
    """

    policy: str = param("lmst", "the system: NMST (Sec. 4.1.3.1), LMST (Sec. 4.1.2), SMST (Sec. 4.1.3.4); the "
                        "registry name fixes it", choices=POLICIES)
    n_ssd: int = param(_SSD.disk_number, "SSDs, Table 4: 2", bounds=(1, None), unit="disks")
    n_fc: int = param(_FC.disk_number, "FC disks, Table 4: 5", bounds=(1, None), unit="disks")
    ssd_rate: float = param(_SSD.service_rate_bytes_per_s, "mu of an SSD, Table 4: 500 MB/s (= 500 KB/ms)",
                            bounds=(1.0, None), unit="bytes/s")
    fc_rate: float = param(_FC.service_rate_bytes_per_s, "mu of an FC disk, Table 4: 160 MB/s", bounds=(1.0, None),
                           unit="bytes/s")
    disk_capacity_bytes: int = param(int(_SSD.capacity_per_disk_bytes), "per-disk capacity: Table 4's tier totals "
                                     "(40 GB, 100 GB) over the disks = 20 GB (reading A1 a), 20 ALUN slots of 1 GB",
                                     bounds=(1, None), unit="bytes")
    sla_high_s: float = param(1 * MS, "SLA^H = 1 ms (Sec. 4.1.3)", bounds=(1e-6, None), unit="s")
    sla_low_s: float = param(20 * MS, "SLA^L = 20 ms (Sec. 4.1.3)", bounds=(1e-6, None), unit="s")
    window_s: float = param(20 * MINUTE, "t_win = 20 minutes (Sec. 4.1.2.1); equal to the workload's slot (A25)",
                            bounds=(1e-6, None), unit="s")
    alpha: Knob = param(0.3, "Eq. 4 conservativeness; 'most benefits ... close to 0.3' (Sec. 4.1.3.3)",
                        bounds=(0.0, None), unit="factor")
    e: Knob = param(0.0, "Eq. 16 threshold e% as a fraction (0: response time expected to decrease; thesis "
                    "examples -5 %, +5 %)", bounds=(-0.99, 0.99), unit="fraction")
    beta: Knob = param(1.0, "Eq. 17 capacity factor (thesis silent; documented choice 1: the I/Os carry no writes)",
                       bounds=(1e-3, None), unit="factor")
    tau_h: Knob = param(7.5 * KB / MS, "hot threshold, 7.5 KB/ms (thesis silent; documented choice: midway "
                        "between the SLA^L idle 5 and bursty 10 KB/ms of Sec. 4.1.3.1)", bounds=(0.0, None),
                        unit="bytes/s")
    tau_l: Knob = param(6.0 * KB / MS, "cold threshold, 6 KB/ms (thesis silent; documented choice; tau_l < tau_h)",
                        bounds=(0.0, None), unit="bytes/s")
    rho_max: Knob = param(0.95, "guard of Eq. 9 in the during-migration terms (A10 reading a; not in the thesis)",
                          bounds=(0.01, 0.9999), unit="fraction")
    chunk_bytes: int = param(1 * MB, "migration chunk of the closed-loop copy, 1 MB (thesis silent; documented "
                             "choice, A16)", bounds=(1, None), unit="bytes")
    timing: str = param("causal", "decision timing of Eqs. 10-14 (A5, A8): 'causal' (the main reading) or "
                        "'lookahead' (the variant); see tieringlab.policies.lmst", choices=TIMINGS)
    rt_check_backward: bool = param(False, "Eq. 16 for backward candidates too (thesis: forward only, A12)")
    migration_term: str = param("guard", "the during-migration term of Eqs. 11/14 (A10): 'guard' (reading a, "
                                "g(lambda + dl) guarded at rho_max) or 'hidden' (reading c: the lowest-priority "
                                "migration I/Os are not seen by applications, the term is g(lambda))",
                                choices=MIGRATION_TERMS)

    def __post_init__(self):
        """Each field against its declaration (:func:`tieringlab.params.field_problems`, per parameter set for
        the knobs of :data:`VECTOR_KNOBS`), then the cross-field checks: one length for the sequence-valued
        knobs and ``tau_l < tau_h`` (Sec. 4.1.2.2)."""
        problems = []
        lengths = set()
        for name in VECTOR_KNOBS:
            v = getattr(self, name)
            a = np.asarray(v, dtype=float) if _numeric(v) else None
            if a is None or a.ndim > 1 or a.size == 0 or not np.all(np.isfinite(a)):
                problems.append(f"{name} must be a finite number or a non-empty 1-D sequence of them; got {v!r}")
            elif a.ndim == 1:
                lengths.add(a.size)
        if len(lengths) > 1:
            problems.append(f"the sequence-valued knobs of {VECTOR_KNOBS} must have one length; got lengths "
                            f"{sorted(lengths)}")
        cross_field(problems)
        for q in self._sets():
            problems += [m for m in field_problems(q) if m not in problems]
        k = self.knob_arrays()
        if not problems and not np.all(k["tau_l"] < k["tau_h"]):
            problems.append(f"tau_l must be below tau_h (tau_l < tau_h, Sec. 4.1.2.2); got tau_l={self.tau_l!r}, "
                            f"tau_h={self.tau_h!r}")
        cross_field(problems)

    def _sets(self):
        """One unchecked copy per parameter set, its knobs scalars (what :func:`field_problems` reads)."""
        if all(np.ndim(getattr(self, n)) == 0 for n in VECTOR_KNOBS):
            return [self]
        k = self.knob_arrays()
        out = []
        for i in range(self.n_configs):
            q = copy.copy(self)                      # no __init__: the copy is only read
            for n in VECTOR_KNOBS:
                object.__setattr__(q, n, float(k[n][i]))
            out.append(q)
        return out

    @property
    def n_configs(self) -> int:
        """Parameter sets this instance holds (> 1 when a knob of :data:`VECTOR_KNOBS` is a sequence)."""
        return max(np.size(getattr(self, n)) for n in VECTOR_KNOBS)

    def knob_arrays(self) -> dict[str, np.ndarray]:
        """The :data:`VECTOR_KNOBS`, each as a float array of length :attr:`n_configs` (scalars broadcast)."""
        c = max(np.size(np.asarray(getattr(self, n), float)) for n in VECTOR_KNOBS)
        return {n: np.broadcast_to(np.asarray(getattr(self, n), float), (c,)).astype(float) for n in VECTOR_KNOBS}

    def configs(self) -> list[LmstParams]:
        """One scalar-knob :class:`LmstParams` per parameter set."""
        k = self.knob_arrays()
        return [dataclasses.replace(self, **{n: float(k[n][i]) for n in VECTOR_KNOBS}) for i in range(self.n_configs)]


def _numeric(v) -> bool:
    try:
        a = np.asarray(v)
    except Exception:  # noqa: BLE001
        return False
    return a.dtype != bool and (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating))
