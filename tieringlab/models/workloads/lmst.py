"""LMST's synthetic I/O workload (thesis Sec. 4.1.3.1), generated slot by slot as arrays.

Thesis Sec. 4.1.3.1: "we generate a synthetic trace of I/O jobs for each virtual ALUN such that an I/O
trace consists of 30 time slots, each of which lasts around 20 minutes. The specifications of an I/O
job include I/O arrival time, I/O locality, and I/O size, in which I/O locality is uniformly
distributed within an ALUN and I/O size is drawn from an exponential distribution." A slot is *idle*
(Poisson arrivals) or *bursty* (a 2-state MMPP); the mean arrival rates of idle slots are 10 KB/ms for
high-priority and 5 KB/ms for low-priority applications, doubled in bursty slots; the mean I/O size is
100 KB. Each application owns 10 ALUNs of 1 GB (Sec. 4.1.3.2, Table 6).

Readings and documented choices (named parameters of :class:`LmstWorkloadParams`):

- The rates are **per ALUN** (reading A2 of the notes: per application they would leave the FC disks
  about 5 % busy, which cannot produce the hundreds of ms of Tables 5 and 7). Rates in bytes/s:
  10 KB/ms = 10^7 B/s (decimal units, as thesis Table 4 is read in :mod:`tieringlab.models.devices`).
- **Burst ratio** ``p``: "50 % of each virtual ALUN's arrival flows are bursty across the overall
  simulation period". Each (ALUN, slot) is bursty with probability ``p``, independently (A4 reading a);
  ``slot_persistence`` > 0 makes the slot states a 2-state Markov chain over slots with stationary ``p``
  and lag-1 correlation ``slot_persistence`` (reading A4 b). Bursts apply to the ALUNs of high-priority
  applications too (``bursts_high_priority``, reading A3: Sec. 4.1.3.1 says "each virtual ALUN" and
  gives a bursty rate for high priority).
- **The MMPP(2) of a bursty slot** is not given. It is :class:`tieringlab.models.mmpp.MMPP2` with the
  bursty-slot mean ``m`` and three named shape parameters: the share of time in the high-rate phase
  ``pi_H`` (``burst_high_share``), the high-phase rate as a multiple ``k`` of ``m``
  (``burst_peak_ratio``), and the mean high-phase sojourn ``T_H`` (``burst_high_sojourn_s``). Then
  ``lam1 = k m``, ``lam2 = m (1 - pi_H k) / (1 - pi_H)`` (so the mean is exactly ``m``; needs
  ``pi_H k < 1``), ``r12 = 1 / T_H``, ``r21 = r12 pi_H / (1 - pi_H)``. The MMPP restarts from its
  stationary phase law at the start of every bursty slot.
- Slots last exactly ``slot_s`` = 20 min ("around 20 minutes"; aligned with LMST's window, A25).
- Arrival rates are rates of **bytes**; the I/O rate is the byte rate over the mean I/O size.
- Monitoring samples (the "previously recorded arrival rates" of Eq. 4, reading A6 a): the bytes that
  arrive to each ALUN in each ``sample_s`` = 1 min of a slot (Fig. 14 plots I/Os per minute), as rates.

Randomness: :func:`slot_states` draws every (ALUN, slot) state from ``fold_in(key, 0)``; slot ``w``'s I/Os
come from a NumPy generator seeded by ``fold_in(key, w + 1)``, so one slot can be generated without the
others and the same key gives bit-identical I/Os whatever is generated before.

Layout of a slot (:class:`SlotIO`): all ALUNs' I/Os in one stream **sorted by time**, each labelled with
its ALUN. It is drawn by superposition, which gives exactly the law of independent per-ALUN processes:
given the MMPP phase paths, ALUN ``i`` is a Poisson process of piecewise-constant rate ``lambda_i(t)``; cut
the slot at every rate change of any ALUN, and in each piece the superposition is Poisson with rate
``Lambda = sum_i lambda_i`` whose points belong to ALUN ``i`` with probability ``lambda_i / Lambda``,
independently. So each piece gets a Poisson count, sorted uniform times by exponential spacings
(``U_(i) = S_i / S_{c+1}``, ``S`` the running sums of ``c + 1`` unit exponentials) and categorical labels
(Walker's alias method, one uniform per I/O):
nothing is sorted or merged (the simulator consumes the stream in time order).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import NamedTuple

import jax
import numpy as np

from tieringlab.arrays import numpy_rng, thread_scratch
from tieringlab.models.mmpp import MMPP2
from tieringlab.params import cross_field, field_problems, param
from tieringlab.units import GB, KB, MINUTE, MS

__all__ = ["LmstWorkloadParams", "SlotIO", "SlotBuffers", "AlunLayout", "alun_layout", "burst_mmpp", "slot_states",
           "generate_slot", "mean_byte_rates"]


@dataclass(frozen=True)
class LmstWorkloadParams:
    """The workload of thesis Sec. 4.1.3 (defaults: the 70 GB, 50 % burst case of Sec. 4.1.3.1).

    Every field is declared once with its unit and source; the MMPP(2) shape of bursty slots is not in the
    thesis and was calibrated once to Table 5's NMST rows (:func:`tieringlab.experiments.lmst.calibration_grid`).
    """

    n_high_apps: int = param(2, "Num_H, SLA^H applications (Table 6: 1 / 2 / 3 at 40 / 70 / 100 GB)", bounds=(0, None),
                             unit="applications")
    n_low_apps: int = param(5, "Num_L, SLA^L applications (Table 6: 3 / 5 / 7)", bounds=(0, None), unit="applications")
    aluns_per_app: int = param(10, "'each application requests 10 ALUNs, each of which has the capacity of 1GB' "
                               "(Sec. 4.1.3.2)", bounds=(1, None), unit="ALUNs")
    alun_bytes: int = param(1 * GB, "the ALUN, 'the minimal capacity/migration unit', 1 GB (Sec. 4.1.1)",
                            bounds=(1, None), unit="bytes")
    n_slots: int = param(30, "'an I/O trace consists of 30 time slots' (Sec. 4.1.3.1)", bounds=(1, None),
                         unit="slots")
    slot_s: float = param(20 * MINUTE, "'each of which lasts around 20 minutes' (Sec. 4.1.3.1), exactly 20 (A25)",
                          bounds=(1e-6, None), unit="s")
    burst_ratio: float = param(0.5, "p, '50 % of each virtual ALUN's arrival flows are bursty' (Sec. 4.1.3.1; "
                               "Table 7: 0.3 / 0.5 / 0.7)", bounds=(0.0, 1.0), unit="fraction")
    idle_rate_high: float = param(10 * KB / MS, "idle-slot mean of an SLA^H ALUN, 10 KB/ms (Sec. 4.1.3.1; per "
                                  "ALUN, A2)", bounds=(1e-9, None), unit="bytes/s")
    idle_rate_low: float = param(5 * KB / MS, "idle-slot mean of an SLA^L ALUN, 5 KB/ms (Sec. 4.1.3.1; per ALUN, A2)",
                                 bounds=(1e-9, None), unit="bytes/s")
    burst_rate_factor: float = param(2.0, "'we double the mean arrival rates in bursty time slots' (Sec. 4.1.3.1)",
                                     bounds=(1e-9, None), unit="factor")
    mean_io_bytes: float = param(100 * KB, "'The mean I/O size is 100KB' (exponential sizes, Sec. 4.1.3.1)",
                                 bounds=(1e-9, None), unit="bytes")
    burst_high_share: float = param(0.1, "pi_H, share of a bursty slot's time in the MMPP's high phase (thesis "
                                    "silent; calibrated to Table 5 NMST)", bounds=(1e-4, 0.9999), unit="fraction")
    burst_peak_ratio: float = param(6.5, "k, high-phase rate / bursty-slot mean (thesis silent; calibrated on 30-slot "
                                    "runs; needs k burst_high_share < 1)", bounds=(1.0, None), unit="factor")
    burst_high_sojourn_s: float = param(10.0, "T_H, mean high-phase sojourn (thesis silent; calibrated)",
                                        bounds=(1e-3, None), unit="s")
    slot_persistence: float = param(0.0, "lag-1 correlation of a slot's state with the previous (A4: 0 = i.i.d. "
                                    "Bernoulli(p))", bounds=(0.0, 0.99), unit="fraction")
    bursts_high_priority: bool = param(True, "bursty slots for SLA^H ALUNs too (reading A3: 'each virtual ALUN')")
    sample_s: float = param(1 * MINUTE, "monitoring interval of the per-ALUN rate samples of Eq. 4: per minute, "
                            "as Fig. 14 plots (A6; thesis silent); divides slot_s", bounds=(1e-6, None), unit="s")

    def __post_init__(self):
        """Each field against its declaration (:func:`tieringlab.params.field_problems`), then the cross-field
        checks: at least one application, ``k pi_H < 1`` (the low phase's rate >= 0), ``sample_s`` divides
        ``slot_s``."""
        problems = field_problems(self)
        if not problems:
            if self.n_high_apps + self.n_low_apps < 1:
                problems.append("n_low_apps: the workload needs at least one application (n_high_apps + n_low_apps "
                                ">= 1)")
            if not self.burst_peak_ratio * self.burst_high_share < 1.0:
                problems.append("burst_peak_ratio k must satisfy k < 1 / burst_high_share (the low phase needs a "
                                f"rate >= 0); got k={self.burst_peak_ratio!r}, burst_high_share="
                                f"{self.burst_high_share!r}")
            n_samples = self.slot_s / self.sample_s
            if abs(n_samples - round(n_samples)) > 1e-9 * n_samples:
                problems.append(f"sample_s must divide slot_s; got {self.sample_s!r} and {self.slot_s!r}")
        cross_field(problems)

    @property
    def n_apps(self) -> int:
        return self.n_high_apps + self.n_low_apps

    @property
    def n_aluns(self) -> int:
        return self.n_apps * self.aluns_per_app

    @property
    def samples_per_slot(self) -> int:
        return int(round(self.slot_s / self.sample_s))

    @property
    def duration_s(self) -> float:
        return self.n_slots * self.slot_s


class AlunLayout(NamedTuple):
    """Who owns which ALUN: applications ``0..Num_H-1`` are high priority (SLA class 0), the rest low (1).

    ``alun_app[i]``, ``alun_class[i]`` per ALUN (ALUNs numbered application by application);
    ``app_class[a]`` per application.
    """

    alun_app: np.ndarray
    alun_class: np.ndarray
    app_class: np.ndarray


def alun_layout(wp: LmstWorkloadParams) -> AlunLayout:
    """The ALUNs of Table 6's applications: ``aluns_per_app`` consecutive ALUNs per application, the
    ``n_high_apps`` high-priority applications first."""
    app_class = np.r_[np.zeros(wp.n_high_apps, np.int64), np.ones(wp.n_low_apps, np.int64)]
    alun_app = np.repeat(np.arange(wp.n_apps), wp.aluns_per_app)
    return AlunLayout(alun_app, app_class[alun_app], app_class)


def mean_byte_rates(wp: LmstWorkloadParams) -> np.ndarray:
    """Idle-slot mean byte rate (bytes/s) of each ALUN: 10 KB/ms (high) or 5 KB/ms (low), Sec. 4.1.3.1."""
    return np.where(alun_layout(wp).alun_class == 0, wp.idle_rate_high, wp.idle_rate_low).astype(np.float64)


def burst_mmpp(wp: LmstWorkloadParams, idle_byte_rate: float) -> MMPP2:
    """The MMPP(2) of a bursty slot, in I/Os per second, for an ALUN whose idle mean is ``idle_byte_rate``.

    Mean ``m = burst_rate_factor * idle_byte_rate / mean_io_bytes`` I/O/s; ``lam1 = k m`` (high phase),
    ``lam2 = m (1 - pi_H k) / (1 - pi_H)``, ``r12 = 1 / T_H``, ``r21 = r12 pi_H / (1 - pi_H)`` (see module
    docstring). Its closed forms (mean rate, index of dispersion) are :class:`MMPP2`'s.
    """
    m = wp.burst_rate_factor * float(idle_byte_rate) / wp.mean_io_bytes
    pi, k = wp.burst_high_share, wp.burst_peak_ratio
    r12 = 1.0 / wp.burst_high_sojourn_s
    return MMPP2(k * m, m * (1.0 - pi * k) / (1.0 - pi), r12, r12 * pi / (1.0 - pi))


def slot_states(key, wp: LmstWorkloadParams) -> np.ndarray:
    """``(n_aluns, n_slots)`` bool: True where the (ALUN, slot) is bursty.

    Independent Bernoulli(``p``) per (ALUN, slot) when ``slot_persistence`` is 0 (reading A4 a); otherwise a
    2-state Markov chain over slots, started from its stationary law ``p``, with
    ``P(B -> B) = p + phi (1 - p)`` and ``P(I -> B) = p (1 - phi)`` (``phi`` = ``slot_persistence``). ALUNs
    of high-priority applications stay idle when ``bursts_high_priority`` is False.
    """
    rng = numpy_rng(jax.random.fold_in(key, 0))
    p, phi = wp.burst_ratio, wp.slot_persistence
    u = rng.random((wp.n_aluns, wp.n_slots))
    if phi == 0.0:
        states = u < p
    else:
        # each slot: bursty iff u < P(bursty | previous); one short scan over the 30 slots, arrays over ALUNs
        states = np.empty_like(u, dtype=bool)
        states[:, 0] = u[:, 0] < p
        for w in range(1, wp.n_slots):
            prob = np.where(states[:, w - 1], p + phi * (1.0 - p), p * (1.0 - phi))
            states[:, w] = u[:, w] < prob
    if not wp.bursts_high_priority:
        states[alun_layout(wp).alun_class == 0] = False
    return states


class SlotIO(NamedTuple):
    """The I/Os of one slot in one stream sorted by time (ties: generation order), labelled by ALUN.

    ``time`` (s, absolute), ``size`` (bytes), ``alun`` (int32), ``offset`` (bytes inside the ALUN, uniform;
    ``None`` unless asked for); ``bursty`` ``(n_aluns,)`` the slot's states; ``counts`` ``(n_aluns,)`` I/Os
    per ALUN; ``sample_rate`` ``(n_aluns, samples_per_slot)`` the byte rate (bytes/s) that arrived to each
    ALUN in each monitoring interval (Eq. 4's samples).
    """

    slot: int
    t0: float
    time: np.ndarray
    size: np.ndarray
    alun: np.ndarray
    offset: np.ndarray | None
    bursty: np.ndarray
    counts: np.ndarray
    sample_rate: np.ndarray


#: per-thread scratch of the generator's temporary draws (a paper-scale notebook draws ~10^10 of them)
_SCRATCH = threading.local()


class SlotBuffers:
    """Output arrays that :func:`generate_slot` writes a slot's ``time``, ``size`` and ``alun`` into
    (``out=``), grown when a slot outgrows them, never shrunk. A paper-scale slot is 10^7 I/Os: 160 MB of
    fresh arrays cost about as much CPU in zeroed pages (kernel time) as drawing them, so a simulator that
    generates slot after slot hands each replication's processed slots' buffers back to the generator.
    The arrays a slot returns are views of these buffers: valid until the buffers are used again."""

    def __init__(self):
        self._room = 0
        self.time = self.size = self.alun = None

    def take(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Views of the first ``n`` entries of the three arrays (time, size: float64; alun: int32)."""
        if n > self._room:
            self._room = int(n * 1.25) + 1024
            self.time, self.size = np.empty(self._room), np.empty(self._room)
            self.alun = np.empty(self._room, np.int32)
        return self.time[:n], self.size[:n], self.alun[:n]


def generate_slot(key, wp: LmstWorkloadParams, slot: int, states: np.ndarray | None = None, *,
                  offsets: bool = False, out: SlotBuffers | None = None) -> SlotIO:
    """The I/Os of slot ``slot`` (0-based) of every ALUN (thesis Sec. 4.1.3.1), as arrays.

    Idle (ALUN, slot): a Poisson process of the ALUN's idle I/O rate. Bursty: :func:`burst_mmpp` started
    from its stationary phase law; its phases alternate, so the sojourns are drawn as one array per
    ALUN (exponential with the phase's leaving rate) and cut at the slot's end. The ALUNs' processes are
    then drawn together by superposition (module docstring). Sizes are exponential with mean
    ``mean_io_bytes``; offsets (``offsets=True``) uniform in ``[0, alun_bytes - size)`` clipped at 0.

    ``states``: the ``(n_aluns, n_slots)`` slot states (default: :func:`slot_states` of ``key``).
    ``out``: :class:`SlotBuffers` to write ``time``, ``size`` and ``alun`` into (the same draws as without;
    the returned arrays are then views of them); default: fresh arrays.
    """
    from tieringlab.models.workloads import _lmst_native  # noqa: PLC0415  (numba on first use)

    if isinstance(slot, bool) or not isinstance(slot, (int, np.integer)) or not 0 <= slot < wp.n_slots:
        raise ValueError(f"slot must be an integer in [0, n_slots) = [0, {wp.n_slots}); got {slot!r}")
    if out is not None and not isinstance(out, SlotBuffers):
        raise TypeError(f"out must be a SlotBuffers (or None for fresh arrays); got {type(out).__name__}")
    if states is None:
        states = slot_states(key, wp)
    bursty = np.asarray(states, bool)[:, slot]
    rng = numpy_rng(jax.random.fold_in(key, int(slot) + 1))
    n = wp.n_aluns
    t0 = slot * wp.slot_s
    T = wp.slot_s
    idle_io = mean_byte_rates(wp) / wp.mean_io_bytes                   # I/O per second per ALUN

    # piecewise-constant rates: cut points of every ALUN (its phase changes), rate of each ALUN per piece
    b_idx = np.flatnonzero(bursty)
    cuts = [np.array([0.0, T])]
    paths = []
    if b_idx.size:
        mms = [burst_mmpp(wp, r * wp.mean_io_bytes) for r in idle_io[b_idx]]
        lam = np.array([[float(m.lam1), float(m.lam2)] for m in mms])      # (nb, 2) high, low
        leave = np.array([float(mms[0].r12), float(mms[0].r21)])            # the same shape for every ALUN
        pi_high = float(mms[0].stationary()[0])
        M = int(2 * math.ceil(T * leave.prod() / leave.sum()) + 8 * math.sqrt(T * leave.max()) + 16)
        first_low = rng.random(b_idx.size) >= pi_high                       # start phase ~ stationary law
        while True:                                                          # almost always once
            phase = (first_low[:, None].astype(np.int64) + np.arange(M)[None, :]) % 2   # 0 = high, 1 = low
            tau = rng.standard_exponential((b_idx.size, M)) / leave[phase]
            end = np.cumsum(tau, axis=1)
            if np.all(end[:, -1] >= T):
                break
            M *= 2
        cuts.append(end[end < T])
        paths = (end, np.take_along_axis(lam, phase, axis=1))
    cut = np.unique(np.concatenate(cuts))                                    # piece k = [cut[k], cut[k+1])
    mid = 0.5 * (cut[:-1] + cut[1:])
    rate = np.broadcast_to(idle_io, (mid.size, n)).copy()                  # (pieces, ALUNs) I/O per s
    if b_idx.size:
        end, lam_ph = paths
        which = np.array([np.searchsorted(end[q], mid, side="right") for q in range(b_idx.size)])  # per bursty ALUN
        rate[:, b_idx] = np.take_along_axis(lam_ph, which, axis=1).T
    total = rate.sum(axis=1)
    length = np.diff(cut)
    counts_piece = rng.poisson(total * length)
    N = int(counts_piece.sum())
    # the same draws as without out=
    e = rng.standard_exponential(out=thread_scratch(_SCRATCH, "e", N + counts_piece.size))
    u = rng.random(out=thread_scratch(_SCRATCH, "u", N))
    time, size, alun = (np.empty(N), np.empty(N), np.empty(N, np.int32)) if out is None else out.take(N)
    _lmst_native.fill_pieces(e, u, cut, counts_piece, np.ascontiguousarray(rate), float(t0), time, alun)
    rng.standard_exponential(out=size)                                  # the same draws as without out=
    size *= wp.mean_io_bytes
    off = None
    if offsets:
        off = np.floor(rng.random(N) * np.maximum(wp.alun_bytes - size, 0.0))
    k = wp.samples_per_slot
    counts = np.zeros(n, np.int64)
    sample = _lmst_native.sample_rates(time, size, alun, float(t0), float(wp.sample_s), k, np.zeros((n, k)), counts)
    return SlotIO(int(slot), float(t0), time, size, alun, off, bursty, counts, sample)
