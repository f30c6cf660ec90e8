"""Markov-modulated Poisson processes: analytic moments, sampling and the MMPP(2) fitter.

The thesis (Sec. 3.1, footnote 1) draws its bursty arrival flows from a 2-state MMPP, "a special
case of the Markovian Arrival Process (MAP)", parameterized to the same mean inter-arrival time
(10 s) and three indices of dispersion I = 313.5, 32.25 and 1 (Fig. 3). Sec. 2.3 defines I by
Eq. 2, ``I = SCV (1 + 2 sum_k rho_k)``, from the SCV and the lag-k autocorrelations ``rho_k``
(Eq. 1) of the inter-arrival times; for a stationary point process this equals the limit of the
index of dispersion for counts, ``lim_{t->inf} Var N(t) / E N(t)``, which is what the closed forms
below return.

Notation (MAP, Neuts): ``D0`` holds the phase changes without an arrival (diagonal: minus the total
outflow), ``D1`` the transitions with an arrival; for an MMPP ``D1 = diag(lambda)``. With
``Q = D0 + D1``, ``pi Q = 0`` (time-stationary phases), ``lambda = pi D1 1`` (mean rate),
``phi = pi D1 / lambda`` (phase seen at an arrival), ``M = (-D0)^{-1}``, ``P = M D1``:

- ``E[X^k] = k! phi M^k 1``                                   (inter-arrival moments)
- ``rho_k = (phi M P^k M 1 - E[X]^2) / Var X``                 (lag-k autocorrelation, Eq. 1)
- ``I = 1 - 2 lambda + 2 pi D1 (1 pi - Q)^{-1} D1 1 / lambda``  (limiting IDC, = Eq. 2)
- ``Var N(t) = (lambda - 2 lambda^2 + 2 pi D1 Z D1 1) t - 2 pi D1 (Id - e^{Qt}) Z^2 D1 1``,
  ``Z = (1 pi - Q)^{-1}``                                      (finite-t IDC)

MMPP(2): rates ``lam1, lam2`` (1/s) in phases 1 and 2, switching rates ``r12`` (1 -> 2) and ``r21``
(2 -> 1), ``s = r12 + r21``. Closed forms: ``lambda = (lam1 r21 + lam2 r12) / s``,
``I = 1 + 2 r12 r21 (lam1 - lam2)^2 / (s^3 lambda)``,
``I(t) = 1 + (I - 1) (1 - (1 - e^{-s t}) / (s t))``, ``rho_k = rho_1 gamma^{k-1}`` with
``gamma = lam1 lam2 / (lam1 lam2 + lam1 r21 + lam2 r12)``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from tieringlab.arrays import bucket, is_concrete, numpy_rng

__all__ = ["MMPP2", "MMPP", "fit_mmpp2", "FIT_DEFAULTS", "sample_with_phases", "on_off_intervals", "on_off_points"]


# ============================================================================ n-state MMPP / MAP

class MMPP:
    """An n-state MMPP given by its MAP matrices ``D0`` and ``D1`` (rates in 1/s).

    The analytic methods accept any MAP (``D1`` need not be diagonal); sampling needs an MMPP
    (``D1 = diag(lambda)``), where arrivals do not change the phase.
    """

    def __init__(self, D0, D1):
        D0 = jnp.asarray(D0, jnp.float64)
        D1 = jnp.asarray(D1, jnp.float64)
        if D0.ndim != 2 or D0.shape[0] != D0.shape[1] or D0.shape != D1.shape:
            raise ValueError(f"D0 and D1 must be square matrices of the same shape; got {D0.shape}, {D1.shape}")
        if is_concrete(D0, D1):
            d0, d1 = np.asarray(D0), np.asarray(D1)
            off = d0 - np.diag(np.diag(d0))
            if np.any(off < 0) or np.any(d1 < 0):
                raise ValueError("D0 off-diagonal entries and all D1 entries must be >= 0 (rates in 1/s)")
            rows = (d0 + d1).sum(axis=1)
            if not np.allclose(rows, 0.0, atol=1e-9 * max(1.0, np.abs(d0).max())):
                raise ValueError(f"rows of D0 + D1 must sum to 0 (a generator); row sums are {rows}")
            if not np.any(d1 > 0):
                raise ValueError("D1 has no positive rate: the process never arrives")
        self.D0, self.D1 = D0, D1

    # ---------------------------------------------------------------- stationary quantities
    @property
    def n_phases(self) -> int:
        return self.D0.shape[0]

    @property
    def Q(self):
        """Generator of the phase process ``Q = D0 + D1``."""
        return self.D0 + self.D1

    def stationary(self):
        """Time-stationary phase distribution ``pi``: ``pi Q = 0``, ``pi 1 = 1``."""
        return _stationary(self.Q)

    def mean_rate(self):
        """``lambda = pi D1 1`` (arrivals per second)."""
        return self.stationary() @ self.D1 @ jnp.ones(self.n_phases)

    def arrival_phase_distribution(self):
        """``phi = pi D1 / lambda``: the phase just after an arrival (embedded stationary law)."""
        pd1 = self.stationary() @ self.D1
        return pd1 / pd1.sum()

    def _M(self):
        return jnp.linalg.inv(-self.D0)

    def moment(self, k: int):
        """``E[X^k] = k! phi (-D0)^{-k} 1`` of the stationary inter-arrival time X (seconds^k)."""
        M = self._M()
        v = jnp.ones(self.n_phases)
        for _ in range(int(k)):
            v = M @ v
        return math.factorial(int(k)) * self.arrival_phase_distribution() @ v

    def mean_interarrival(self):
        return self.moment(1)

    def scv(self):
        """Squared coefficient of variation of the inter-arrival times, ``Var X / E[X]^2``."""
        m1, m2 = self.moment(1), self.moment(2)
        return m2 / m1**2 - 1.0

    def autocorrelation(self, k):
        """Lag-k autocorrelation ``rho_k`` of inter-arrival times (thesis Eq. 1), k >= 0 int or array."""
        k = np.asarray(k, dtype=np.int64)
        if np.any(k < 0):
            raise ValueError(f"lags k must be >= 0; got {k}")
        kmax = int(k.max()) if k.size else 0
        rho = _map_autocorrelations(self.D0, self.D1, kmax)
        return rho[k]

    def index_of_dispersion(self):
        """Limiting index of dispersion for counts ``I = lim Var N(t) / E N(t)`` (= thesis Eq. 2)."""
        pi = self.stationary()
        lam = pi @ self.D1 @ jnp.ones(self.n_phases)
        Z = jnp.linalg.inv(jnp.outer(jnp.ones(self.n_phases), pi) - self.Q)
        return 1.0 - 2.0 * lam + 2.0 * (pi @ self.D1 @ Z @ self.D1 @ jnp.ones(self.n_phases)) / lam

    def index_of_dispersion_counts(self, t):
        """Finite-window index of dispersion ``I(t) = Var N(t) / E N(t)`` of counts in a window of
        ``t`` seconds (time-stationary start); ``I(t) -> index_of_dispersion()`` as t grows."""
        t = jnp.atleast_1d(jnp.asarray(t, jnp.float64))
        return _map_idc_t(self.D0, self.D1, t)

    # ---------------------------------------------------------------- sampling
    def _rates_for_sampling(self):
        d1 = np.asarray(self.D1)
        if not np.allclose(d1, np.diag(np.diag(d1))):
            raise ValueError("sampling is implemented for MMPPs (diagonal D1); this MAP changes phase at arrivals")
        lam = np.diag(d1)
        Q = np.asarray(self.Q)
        q = -np.diag(Q)                                # phase holding rates
        with np.errstate(invalid="ignore", divide="ignore"):
            P = np.where(q[:, None] > 0, (Q + np.diag(q)) / q[:, None], np.eye(len(q)))
        return lam, q, P

    def sample(self, key, n: int):
        """``n`` consecutive stationary inter-arrival times (seconds), as a float64 array.

        Time 0 is an arrival with its phase drawn from ``phi`` (the arrival-stationary law), so the
        sequence is stationary. The phase path is drawn sojourn by sojourn (``lax.scan`` over the
        phase changes, never over arrivals); each sojourn of ``tau`` seconds in phase i holds
        Poisson(``lambda_i tau``) arrivals placed uniformly in it. Same key -> same sample.
        """
        return _sample_interarrivals(self, key, int(n))

    def sample_counts(self, key, n_intervals: int, dt: float):
        """Arrival counts in ``n_intervals`` consecutive windows of ``dt`` seconds, starting from the
        time-stationary phase law ``pi``. Returns (n_intervals,) int64."""
        return _sample_counts(self, key, int(n_intervals), float(dt))


@jax.jit
def _stationary(Q):
    n = Q.shape[0]
    A = jnp.concatenate([Q.T, jnp.ones((1, n))], axis=0)
    b = jnp.concatenate([jnp.zeros(n), jnp.ones(1)])
    return jnp.linalg.lstsq(A, b)[0]


@functools.partial(jax.jit, static_argnums=2)
def _map_autocorrelations(D0, D1, kmax):
    """``rho_0 .. rho_kmax`` of the inter-arrival times: ``(phi M P^k M 1 - E[X]^2) / Var X``, k >= 1."""
    n = D0.shape[0]
    one = jnp.ones(n)
    M = jnp.linalg.inv(-D0)
    P = M @ D1
    pd1 = _stationary(D0 + D1) @ D1
    phi = pd1 / pd1.sum()
    m1 = phi @ M @ one
    var = 2.0 * phi @ M @ M @ one - m1**2
    right = M @ one

    def step(row, _):
        row = row @ P
        return row, row @ right

    _, vals = jax.lax.scan(step, phi @ M, None, length=kmax)      # vals[j] = phi M P^(j+1) M 1
    rho = (vals - m1**2) / var
    return jnp.concatenate([jnp.ones(1), rho])


@jax.jit
def _map_idc_t(D0, D1, t):
    n = D0.shape[0]
    one = jnp.ones(n)
    Q = D0 + D1
    pi = _stationary(Q)
    lam = pi @ D1 @ one
    Z = jnp.linalg.inv(jnp.outer(one, pi) - Q)
    a = lam - 2 * lam**2 + 2 * pi @ D1 @ Z @ D1 @ one
    u = pi @ D1                                    # row
    w = Z @ Z @ D1 @ one                           # column
    expQt = jax.vmap(lambda tt: jax.scipy.linalg.expm(Q * tt))(t)
    corr = u @ w - jnp.einsum("i,tij,j->t", u, expQt, w)
    return (a * t - 2 * corr) / (lam * t)


# ============================================================================ MMPP(2)

@dataclass(frozen=True)
class MMPP2:
    """2-state MMPP: Poisson rate ``lam1`` in phase 1 and ``lam2`` in phase 2 (1/s); the phase
    switches 1 -> 2 at rate ``r12`` and 2 -> 1 at rate ``r21`` (1/s), both > 0.

    A JAX pytree (the four rates are leaves), so the closed forms can be jitted and vmapped over
    parameters. Thesis Sec. 3.1, footnote 1; build one for a target (mean, I) with :func:`fit_mmpp2`.
    """

    lam1: float
    lam2: float
    r12: float
    r21: float

    def __post_init__(self):
        if is_concrete(self.lam1, self.lam2, self.r12, self.r21):
            vals = dict(lam1=self.lam1, lam2=self.lam2, r12=self.r12, r21=self.r21)
            for name, v in vals.items():
                if not np.all(np.isfinite(np.asarray(v, float))):
                    raise ValueError(f"MMPP2.{name} must be finite; got {v!r}")
            if np.any(np.asarray(self.lam1) < 0) or np.any(np.asarray(self.lam2) < 0):
                raise ValueError(f"MMPP2 rates lam1, lam2 must be >= 0 (1/s); got {self.lam1!r}, {self.lam2!r}")
            if np.any(np.asarray(self.lam1) + np.asarray(self.lam2) <= 0):
                raise ValueError("MMPP2 needs lam1 + lam2 > 0")
            if np.any(np.asarray(self.r12) <= 0) or np.any(np.asarray(self.r21) <= 0):
                raise ValueError(f"MMPP2 switching rates r12, r21 must be > 0 (1/s); got {self.r12!r}, {self.r21!r}")

    # ---------------------------------------------------------------- closed forms
    def _s(self):
        return self.r12 + self.r21

    def stationary(self):
        """``pi = (r21, r12) / (r12 + r21)``."""
        s = self._s()
        return jnp.stack([jnp.asarray(self.r21 / s), jnp.asarray(self.r12 / s)])

    def mean_rate(self):
        """``lambda = (lam1 r21 + lam2 r12) / (r12 + r21)`` arrivals per second."""
        return (self.lam1 * self.r21 + self.lam2 * self.r12) / self._s()

    def mean_interarrival(self):
        return 1.0 / self.mean_rate()

    def _det(self):
        # det(-D0) = (lam1 + r12)(lam2 + r21) - r12 r21
        return self.lam1 * self.lam2 + self.lam1 * self.r21 + self.lam2 * self.r12

    def _phi(self):
        lam = self.mean_rate()
        s = self._s()
        return self.r21 / s * self.lam1 / lam, self.r12 / s * self.lam2 / lam

    def _second_moment(self):
        # E[X^2] = 2 phi M^2 1 with M = (-D0)^{-1} = [[lam2 + r21, r12], [r21, lam1 + r12]] / det
        l1, l2, a, b = self.lam1, self.lam2, self.r12, self.r21
        det = self._det()
        s = a + b
        v1, v2 = (l2 + s) / det, (l1 + s) / det                      # M 1
        w1, w2 = ((l2 + b) * v1 + a * v2) / det, (b * v1 + (l1 + a) * v2) / det   # M^2 1
        p1, p2 = self._phi()
        return 2.0 * (p1 * w1 + p2 * w2)

    def scv(self):
        """SCV of the inter-arrival times, ``E[X^2] / E[X]^2 - 1`` (2x2 closed form)."""
        return self._second_moment() * self.mean_rate() ** 2 - 1.0

    def _gamma(self):
        """Second eigenvalue of the embedded phase chain ``P = (-D0)^{-1} D1``."""
        return self.lam1 * self.lam2 / self._det()

    def _rho1(self):
        # E[X0 X1] = phi M P M 1 = phi M M D1 M 1 ; P = M D1
        l1, l2, a, b = self.lam1, self.lam2, self.r12, self.r21
        det = self._det()
        s = a + b
        v1, v2 = (l2 + s) / det, (l1 + s) / det                      # M 1
        u1, u2 = l1 * v1, l2 * v2                                    # D1 M 1
        y1, y2 = ((l2 + b) * u1 + a * u2) / det, (b * u1 + (l1 + a) * u2) / det   # M D1 M 1
        z1, z2 = ((l2 + b) * y1 + a * y2) / det, (b * y1 + (l1 + a) * y2) / det   # M M D1 M 1
        p1, p2 = self._phi()
        m1 = 1.0 / self.mean_rate()
        var = self._second_moment() - m1**2
        return (p1 * z1 + p2 * z2 - m1**2) / var

    def autocorrelation(self, k):
        """Lag-k autocorrelation of inter-arrival times (Eq. 1): ``rho_k = rho_1 gamma^{k-1}``, k >= 1;
        ``rho_0 = 1``. ``k`` int or int array."""
        k = jnp.asarray(k)
        rho1 = self._rho1()
        g = self._gamma()
        return jnp.where(k == 0, 1.0, rho1 * g ** jnp.maximum(k - 1, 0))

    def index_of_dispersion(self):
        """Limiting index of dispersion for counts, ``I = 1 + 2 r12 r21 (lam1 - lam2)^2 / (s^3 lambda)``."""
        s = self._s()
        return 1.0 + 2.0 * self.r12 * self.r21 * (self.lam1 - self.lam2) ** 2 / (s**3 * self.mean_rate())

    def index_of_dispersion_counts(self, t):
        """Finite-window IDC of counts in ``t`` seconds: ``1 + (I - 1)(1 - (1 - e^{-st}) / (st))``."""
        t = jnp.asarray(t, jnp.float64)
        x = self._s() * t
        return 1.0 + (self.index_of_dispersion() - 1.0) * (1.0 - (-jnp.expm1(-x)) / x)

    # ---------------------------------------------------------------- conversions and sampling
    def to_mmpp(self) -> MMPP:
        """The same process as an :class:`MMPP` with ``D0 = [[-lam1-r12, r12], [r21, -lam2-r21]]``,
        ``D1 = diag(lam1, lam2)``."""
        D0 = jnp.array([[-self.lam1 - self.r12, self.r12], [self.r21, -self.lam2 - self.r21]], jnp.float64)
        D1 = jnp.diag(jnp.array([self.lam1, self.lam2], jnp.float64))
        return MMPP(D0, D1)

    def sample(self, key, n: int):
        """``n`` stationary inter-arrival times (seconds); see :meth:`MMPP.sample`."""
        return self.to_mmpp().sample(key, n)

    def sample_counts(self, key, n_intervals: int, dt: float):
        """Counts in ``n_intervals`` windows of ``dt`` seconds; see :meth:`MMPP.sample_counts`."""
        return self.to_mmpp().sample_counts(key, n_intervals, dt)

    def window_transition(self, dt):
        """Transition matrix of the phase chain over ``dt`` seconds, ``P(dt) = e^{Q dt}``; for two phases
        ``P(dt) = 1 pi + e^{-s dt} (Id - 1 pi)`` with ``s = r12 + r21`` (rows: from phase 1, 2)."""
        pi = self.stationary()
        one_pi = jnp.stack([pi, pi])
        return one_pi + jnp.exp(-self._s() * jnp.asarray(dt, jnp.float64)) * (jnp.eye(2) - one_pi)

    def sample_window_phases(self, key, n_windows: int, dt: float, shape: tuple[int, ...] = ()):
        """The phase in force at the start of each of ``n_windows`` windows of ``dt`` seconds, for
        ``shape`` independent copies of the process: int array ``(n_windows,) + shape``, 0 = phase 1
        (rate ``lam1``), 1 = phase 2 (rate ``lam2``).

        The phase process seen on a grid of step ``dt`` is the Markov chain with transition matrix
        :meth:`window_transition`; the first window's phase is drawn from ``pi`` (stationary start).
        Use it to modulate a per-window rate (an MMPP observed at the window grid, the rate held over
        each window). One ``lax.scan`` over the windows, all copies at once; same key -> same phases.
        """
        n = int(n_windows)
        if n < 1 or not dt > 0:
            raise ValueError(f"need n_windows >= 1 and dt > 0 seconds; got {n_windows!r}, {dt!r}")
        P = self.window_transition(dt)
        pi1 = self.stationary()[0]
        u = jax.random.uniform(key, (n,) + tuple(shape), dtype=jnp.float64)
        first = jnp.where(u[0] < pi1, 0, 1)

        def step(ph, ui):
            to1 = jnp.where(ph == 0, P[0, 0], P[1, 0])
            nxt = jnp.where(ui < to1, 0, 1)
            return nxt, nxt

        _, rest = jax.lax.scan(step, first, u[1:])
        return jnp.concatenate([first[None], rest], axis=0)


jax.tree_util.register_dataclass(MMPP2, data_fields=["lam1", "lam2", "r12", "r21"], meta_fields=[])


# ============================================================================ fitter

FIT_DEFAULTS = dict(
    burst_fraction=0.1,   # documented choice: the high-rate phase holds 10 % of the time (thesis silent)
    rate_ratio=10.0,      # documented choice: lam1 / lam2 = 10, bursts ten times busier than idle (thesis silent)
)


def fit_mmpp2(mean_interarrival, index_of_dispersion, *, burst_fraction: float = FIT_DEFAULTS["burst_fraction"],
              rate_ratio: float = FIT_DEFAULTS["rate_ratio"]) -> MMPP2:
    """MMPP(2) with mean inter-arrival time ``1 / lambda`` and limiting index of dispersion ``I``,
    in closed form (thesis Sec. 3.1, Fig. 3: mean 10 s, I = 313.5, 32.25, 1).

    MMPP(2) has four rates and the targets fix two; the other two are named parameters:

    - ``burst_fraction`` p = ``pi_1`` = ``r21 / (r12 + r21)``, the share of time in the high-rate
      phase 1 (default 0.1, a documented choice; the thesis does not give the MMPP parameters);
    - ``rate_ratio`` R = ``lam1 / lam2`` > 1 (default 10, a documented choice).

    Then ``lam2 = lambda / (p R + 1 - p)``, ``lam1 = R lam2`` (the mean is exact) and the closed form
    ``I = 1 + 2 p (1 - p) (lam1 - lam2)^2 / (s lambda)`` gives the modulation speed
    ``s = r12 + r21 = 2 p (1 - p) (lam1 - lam2)^2 / ((I - 1) lambda)``, ``r21 = p s``,
    ``r12 = (1 - p) s``: a larger I means slower switching (longer bursts). Any I > 1 is reachable.

    ``I = 1`` (Poisson): ``lam1 = lam2 = lambda`` and ``r12 = (1 - p) lambda``, ``r21 = p lambda``
    (any positive switching rates give the same Poisson law; rate_ratio is not used).
    ``I < 1`` raises: an MMPP is never less variable than Poisson.
    """
    m = float(mean_interarrival)
    I = float(index_of_dispersion)
    p = float(burst_fraction)
    R = float(rate_ratio)
    if not (m > 0 and math.isfinite(m)):
        raise ValueError(f"mean_interarrival must be a positive number of seconds; got {mean_interarrival!r}")
    if not (I >= 1 and math.isfinite(I)):
        raise ValueError(f"index_of_dispersion must be >= 1 for an MMPP (1 = Poisson); got {index_of_dispersion!r}")
    if not 0 < p < 1:
        raise ValueError(f"burst_fraction must lie in (0, 1); got {burst_fraction!r}")
    if not R > 1:
        raise ValueError(f"rate_ratio (lam1 / lam2) must be > 1; got {rate_ratio!r}")
    lam = 1.0 / m
    if I == 1.0:
        return MMPP2(lam, lam, (1 - p) * lam, p * lam)
    lam2 = lam / (p * R + 1 - p)
    lam1 = R * lam2
    s = 2 * p * (1 - p) * (lam1 - lam2) ** 2 / ((I - 1) * lam)
    return MMPP2(lam1, lam2, (1 - p) * s, p * s)


# ============================================================================ sampling internals

@functools.partial(jax.jit, static_argnums=4)
def _phase_path(key, phase0, q, P_cum, n_jumps):
    """``n_jumps`` sojourns of the phase CTMC from ``phase0``: (phases, sojourn lengths, next phase).

    The uniforms and exponentials are drawn as whole arrays; ``lax.scan`` runs only the jump chain
    over phase changes (never over arrivals). An absorbing phase (q = 0) has an infinite sojourn."""
    k1, k2 = jax.random.split(key)
    u = jax.random.uniform(k1, (n_jumps,), dtype=jnp.float64)
    e = jax.random.exponential(k2, (n_jumps,), dtype=jnp.float64)
    n_ph = q.shape[0]

    def step(phase, ui):
        nxt = jnp.minimum(jnp.searchsorted(P_cum[phase], ui, side="right"), n_ph - 1)
        nxt = jnp.where(q[phase] > 0, nxt, phase)
        return nxt, phase

    last, phases = jax.lax.scan(step, phase0, u)
    qp = q[phases]
    taus = jnp.where(qp > 0, e / jnp.where(qp > 0, qp, 1.0), jnp.inf)
    return phases, taus, last


def _path_block(mm: MMPP, key, phase0: int, horizon: float):
    """Phase path covering ``horizon`` seconds from ``phase0`` (few Python iterations over blocks
    of sojourns, never over arrivals). Returns phases, sojourn lengths (the last one cut at the
    horizon) and the phase in force at the horizon."""
    lam, q, P = mm._rates_for_sampling()
    P_cum = jnp.asarray(np.cumsum(P, axis=1))
    qj = jnp.asarray(q)
    pi = np.asarray(mm.stationary())
    switch_rate = float(np.sum(pi * q))
    want = min(max(64.0, 1.3 * switch_rate * horizon + 64.0), 2.0**21)
    n_block = 1 << int(math.ceil(math.log2(want)))       # powers of two: few distinct compilations
    phases, taus = [], []
    covered, phase, b = 0.0, int(phase0), 0
    while covered < horizon:
        ph, tau, last = _phase_path(jax.random.fold_in(key, b), jnp.int64(phase), qj, P_cum, n_block)
        ph, tau = np.asarray(ph), np.asarray(tau)
        ends = covered + np.cumsum(tau)
        if ends[-1] >= horizon:
            cut = int(np.searchsorted(ends, horizon, side="left"))   # sojourn holding the horizon
            tau = tau[: cut + 1].copy()
            tau[-1] = horizon - (ends[cut] - tau[cut])
            phases.append(ph[: cut + 1])
            taus.append(tau)
            return np.concatenate(phases), np.concatenate(taus), int(ph[cut])
        phases.append(ph)
        taus.append(tau)
        covered = float(ends[-1])
        phase = int(last)
        b += 1
    raise AssertionError("unreachable")


@jax.jit
def _poisson_jit(key, lam_tau):
    return jax.random.poisson(key, lam_tau, dtype=jnp.int64)


def _poisson_counts(key, lam_tau):
    """Poisson(lam_tau) draws; the input is padded to a power-of-two length (one compilation per
    size class) and the padding dropped."""
    lam_tau = np.asarray(lam_tau, dtype=np.float64)
    n = lam_tau.shape[0]
    padded = np.zeros(bucket(n, minimum=64))
    padded[:n] = lam_tau
    return np.asarray(_poisson_jit(key, jnp.asarray(padded)))[:n]


@functools.partial(jax.jit, static_argnums=1)
def _uniform_jit(key, n):
    return jax.random.uniform(key, (n,), dtype=jnp.float64)


def _uniforms(key, n: int):
    return np.asarray(_uniform_jit(key, bucket(n, minimum=64)))[:n]


def _sample_interarrivals(mm: MMPP, key, n: int):
    if n < 0:
        raise ValueError(f"n must be >= 0; got {n}")
    lam, _, _ = mm._rates_for_sampling()
    if n == 0:
        return jnp.zeros(0)
    phi = np.asarray(mm.arrival_phase_distribution())
    k_phase, k_rest = jax.random.split(key)
    phase = int(jax.random.choice(k_phase, len(phi), p=jnp.asarray(phi / phi.sum())))
    rate = float(mm.mean_rate())
    times, t0, need, b = [], 0.0, n, 0
    while need > 0:
        kb = jax.random.fold_in(k_rest, b)
        kp, kc, ku = jax.random.split(kb, 3)
        horizon = 1.2 * need / rate + 10.0 / rate
        ph, tau, phase = _path_block(mm, kp, phase, horizon)
        counts = _poisson_counts(kc, lam[ph] * tau)
        starts = t0 + np.concatenate([[0.0], np.cumsum(tau)[:-1]])
        total = int(counts.sum())
        idx = np.repeat(np.arange(len(tau)), counts)
        u = _uniforms(ku, total)
        t = np.sort(starts[idx] + u * tau[idx])        # sojourns are disjoint and ordered in time
        times.append(t[:need])
        need -= min(need, total)
        t0 += float(tau.sum())
        b += 1
    arrivals = np.concatenate(times)
    return jnp.diff(jnp.asarray(arrivals), prepend=0.0)


def _sample_counts(mm: MMPP, key, n_intervals: int, dt: float):
    if n_intervals < 0 or not dt > 0:
        raise ValueError(f"need n_intervals >= 0 and dt > 0 seconds; got {n_intervals}, {dt}")
    lam, _, _ = mm._rates_for_sampling()
    if n_intervals == 0:
        return jnp.zeros(0, jnp.int64)
    pi = np.asarray(mm.stationary())
    k_phase, kp, kc = jax.random.split(key, 3)
    phase = int(jax.random.choice(k_phase, len(pi), p=jnp.asarray(np.clip(pi, 0, None) / np.clip(pi, 0, None).sum())))
    horizon = n_intervals * dt
    ph, tau, _ = _path_block(mm, kp, phase, horizon)
    ends = np.cumsum(tau)
    ends[-1] = horizon
    grid = np.arange(1, n_intervals + 1) * dt
    grid[-1] = horizon
    # pieces: the union of sojourn ends and window ends; each piece lies in one sojourn and one window
    cuts = np.unique(np.concatenate([ends, grid]))
    starts = np.concatenate([[0.0], cuts[:-1]])
    mid = 0.5 * (starts + cuts)
    piece_phase = ph[np.minimum(np.searchsorted(ends, mid, side="left"), len(ph) - 1)]
    piece_win = np.minimum((mid // dt).astype(np.int64), n_intervals - 1)
    c = jnp.asarray(_poisson_counts(kc, lam[piece_phase] * (cuts - starts)))
    return jax.ops.segment_sum(c, jnp.asarray(piece_win), num_segments=n_intervals)


def sample_with_phases(mm: MMPP2, key, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` arrival times (s) of the MMPP(2) ``mm`` from time 0, with the phase in force at each.

    Returns ``(arrival_times, in_phase1)``; ``in_phase1`` is True for arrivals in phase 1 (the
    high-rate phase of :func:`fit_mmpp2`; thesis Sec. 3.2.3: the true burst state that ARA_OPT uses).
    The phases of an MMPP(2) alternate, so the sojourns are drawn as whole arrays (the first phase from
    the stationary law ``pi``, lengths exponential), then Poisson counts per sojourn, uniform placement
    inside it and one sort: no loop over arrivals. Draws come from a numpy generator seeded by ``key``
    (:func:`tieringlab.arrays.numpy_rng`), so the same key gives the same arrivals. (:meth:`MMPP2.sample`
    draws the same process with ``jax.random``, without the phases.)
    """
    lam = np.array([float(mm.lam1), float(mm.lam2)])
    soj = np.array([1.0 / float(mm.r12), 1.0 / float(mm.r21)])
    pi1 = float(mm.r21) / (float(mm.r12) + float(mm.r21))
    rate = float(mm.mean_rate())
    rng = numpy_rng(key)
    M = 2 * int(math.ceil(1.3 * n / (rate * soj.sum()))) + 16
    while True:  # almost always once; more sojourns if the draw fell short
        first = int(rng.random() >= pi1)                         # 0 = phase 1, 1 = phase 2
        phase = (first + np.arange(M)) % 2
        tau = rng.exponential(1.0, M) * soj[phase]
        counts = rng.poisson(lam[phase] * tau)
        if counts.sum() >= n:
            break
        M *= 2
    start = np.cumsum(tau) - tau
    idx = np.repeat(np.arange(M), counts)
    t = start[idx] + rng.random(idx.size) * tau[idx]
    order = np.argsort(t, kind="stable")[:n]
    return t[order], phase[idx][order] == 0


# ============================================================================ ON/OFF (OFF rate 0) sampling

def on_off_intervals(rng: np.random.Generator, duration_s: float, mean_on_s: float, mean_off_s: float,
                       *, start_on: bool = False, total_on: float | None = None) -> np.ndarray:
    """ON intervals ``[[start, end], ...]`` of a 2-state continuous-time Markov chain on ``[0, duration_s)``.

    Sojourn times are exponential with means ``mean_on_s`` (ON) and ``mean_off_s`` (OFF), i.e. the
    modulating chain of an MMPP(2) with switching rates ``1/mean_on_s`` and ``1/mean_off_s``.
    Vectorized: draw enough alternating sojourns at once and take their cumulative sum.

    With ``total_on`` the chain is conditioned on its total ON time instead (the twins use this so a
    spike's throughput is the designed one): ``K = max(1, round(total_on / mean_on_s))`` exponential ON
    sojourns are rescaled to sum to ``total_on`` and ``K + 1`` exponential OFF gaps to fill the rest of
    ``duration_s`` (``mean_off_s`` is then implied: ``(duration_s - total_on) / (K + 1)``).
    """
    if total_on is not None:
        k = max(1, int(round(total_on / mean_on_s)))
        on = rng.exponential(1.0, k)
        on *= total_on / on.sum()
        off = rng.exponential(1.0, k + 1)
        off *= (duration_s - total_on) / off.sum()
        starts = np.cumsum(off[:-1]) + np.concatenate(([0.0], np.cumsum(on)[:-1]))
        return np.stack([starts, starts + on], axis=1)
    cycle = mean_on_s + mean_off_s
    n = int(np.ceil(duration_s / cycle * 2.0)) + 16
    while True:
        on = rng.exponential(mean_on_s, n)
        off = rng.exponential(mean_off_s, n)
        seq = np.stack([on, off], axis=1) if start_on else np.stack([off, on], axis=1)
        edges = np.concatenate(([0.0], np.cumsum(seq.reshape(-1))))
        if edges[-1] >= duration_s:
            break
        n *= 2
    starts, ends = (edges[0:-1:2], edges[1::2]) if start_on else (edges[1:-1:2], edges[2::2])
    ends = ends[: starts.shape[0]]
    keep = starts < duration_s
    return np.stack([starts[keep], np.minimum(ends[keep], duration_s)], axis=1)


def on_off_points(rng: np.random.Generator, intervals: np.ndarray, n: int) -> np.ndarray:
    """``n`` sorted event times of a Poisson process that runs only inside ``intervals``, given its count.

    Conditioned on the count, Poisson points are uniform over the union of the intervals: draw uniform
    positions on the concatenated ON time and map them back through its cumulative length.
    """
    lengths = intervals[:, 1] - intervals[:, 0]
    cum = np.concatenate(([0.0], np.cumsum(lengths)))
    u = np.sort(rng.uniform(0.0, cum[-1], n))
    k = np.clip(np.searchsorted(cum, u, side="right") - 1, 0, len(lengths) - 1)
    return intervals[k, 0] + (u - cum[k])
