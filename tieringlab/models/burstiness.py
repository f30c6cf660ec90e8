"""Burstiness of a sample: autocorrelation (thesis Eq. 1), index of dispersion (Eq. 2) and the
on/off burst predictor of thesis Sec. 3.2.2.

Eq. 1: ``rho_k = E[(X_t - mu)(X_{t+k} - mu)] / sigma^2``. Estimated here by the standard biased
sample ACF ``c_k / c_0`` with ``c_k = (1/n) sum_{t=1}^{n-k} (x_t - xbar)(x_{t+k} - xbar)`` (the
``1/n`` form: a positive semi-definite sequence with lower variance at large lags than ``1/(n-k)``),
computed for every lag at once by FFT.

Eq. 2: ``I = SCV (1 + 2 sum_k rho_k)``. The thesis prints the sum from k = 0; with ``rho_0 = 1``
that would make ``I = 3`` for a Poisson process, against the thesis' own remark that ``I = 1`` for
exponential inter-arrivals, so the sum runs over k >= 1 (the standard form). The infinite sum of a
sample ACF does not converge (the sample ACF sums to -1/2 over all lags), so it is truncated at a
lag K chosen by a named rule (:data:`TRUNCATION_RULES`):

- ``"sokal"`` (default): the smallest K with ``K >= c * (1 + 2 sum_{k<=K} rho_k)``, ``c = window_c``
  (default 5): Sokal's automatic window for integrated autocorrelation times (A. Sokal, "Monte
  Carlo methods in statistical mechanics", 1997, Sec. 3), capped at ``max_lag``.
  ``1 + 2 sum rho_k`` is exactly the integrated autocorrelation time, so ``I = SCV * tau_int``.
- ``"fixed"``: K = ``max_lag``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from tieringlab.params import param

__all__ = [
    "autocorrelation",
    "index_of_dispersion",
    "index_of_dispersion_counts",
    "counts_in_windows",
    "TRUNCATION_RULES",
    "BurstPredictorParams",
    "BurstPrediction",
    "predict_bursts",
    "burst_state_at",
]

TRUNCATION_RULES = ("sokal", "fixed")


def _as_sample(x, name="x"):
    x = jnp.asarray(x, jnp.float64)
    if x.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sample; got shape {x.shape}")
    if x.shape[0] < 2:
        raise ValueError(f"{name} needs at least 2 values; got {x.shape[0]}")
    return x


@functools.partial(jax.jit, static_argnums=1)
def _acf_fft(x, max_lag):
    n = x.shape[0]
    d = x - x.mean()
    nfft = 1 << (2 * n - 1).bit_length()                 # zero padding: linear, not circular, correlation
    f = jnp.fft.rfft(d, nfft)
    c = jnp.fft.irfft(f * jnp.conj(f), nfft)[: max_lag + 1] / n
    return c / c[0]


def autocorrelation(x, max_lag: int):
    """Sample autocorrelation ``rho_0 .. rho_max_lag`` of ``x`` (thesis Eq. 1), by FFT in O(n log n).

    Biased (``1/n``) estimator, ``rho_0 = 1``. ``max_lag`` must lie in [0, n - 1].
    """
    x = _as_sample(x)
    n = x.shape[0]
    if not 0 <= int(max_lag) <= n - 1:
        raise ValueError(f"max_lag must lie in [0, n - 1] = [0, {n - 1}]; got {max_lag}")
    return _acf_fft(x, int(max_lag))


@functools.partial(jax.jit, static_argnums=(1, 2))
def _idc_eq2(x, max_lag, rule, window_c):
    rho = _acf_fft(x, max_lag)
    m = x.mean()
    scv = x.var() / m**2
    tau = 1.0 + 2.0 * jnp.cumsum(rho[1:])                # tau(K) for K = 1 .. max_lag
    if rule == "fixed":
        K = max_lag
    else:
        lags = jnp.arange(1, max_lag + 1)
        ok = lags >= window_c * tau
        K = jnp.where(ok.any(), jnp.argmax(ok) + 1, max_lag)
    return scv * tau[K - 1], K


def index_of_dispersion(x, max_lag: int | None = None, truncation: str = "sokal", window_c: float = 5.0,
                        return_lag: bool = False):
    """Index of dispersion of a sample of inter-arrival times, thesis Eq. 2:
    ``I = SCV (1 + 2 sum_{k=1}^{K} rho_k)`` with the lag K chosen by ``truncation``.

    Parameters
    ----------
    x : (n,) sample (inter-arrival times, seconds; the value is unit-free).
    max_lag : the largest lag considered (default ``min(n - 1, max(10, n // 10))``).
    truncation : ``"sokal"`` (default: smallest K >= window_c * tau(K), capped at max_lag) or
        ``"fixed"`` (K = max_lag). See the module docstring.
    window_c : Sokal's window constant c (default 5, Sokal's recommendation).
    return_lag : also return the K used.

    ``I ~ 1`` for a Poisson sample; larger I means burstier arrivals (thesis Sec. 2.3).
    """
    x = _as_sample(x)
    n = x.shape[0]
    if max_lag is None:
        max_lag = min(n - 1, max(10, n // 10))
    if not 1 <= int(max_lag) <= n - 1:
        raise ValueError(f"max_lag must lie in [1, n - 1] = [1, {n - 1}]; got {max_lag}")
    if truncation not in TRUNCATION_RULES:
        raise ValueError(f"truncation must be one of {TRUNCATION_RULES}; got {truncation!r}")
    if not window_c > 0:
        raise ValueError(f"window_c must be > 0; got {window_c!r}")
    I, K = _idc_eq2(x, int(max_lag), truncation, float(window_c))
    return (I, K) if return_lag else I


def index_of_dispersion_counts(counts):
    """Index of dispersion for counts, ``Var(N) / E(N)`` over windows (the counting-process view).

    ``counts``: (n_windows,) arrivals per window (e.g. from :func:`counts_in_windows`). Population
    variance (ddof = 0). For a stationary process and long windows this approaches the same limit
    as Eq. 2 on the inter-arrival times.
    """
    c = _as_sample(counts, "counts")
    mean = c.mean()
    if float(mean) <= 0:
        raise ValueError("counts must have a positive mean")
    return c.var() / mean


def counts_in_windows(arrival_times, window_s: float, start: float = 0.0):
    """Arrivals in consecutive windows ``[start + i w, start + (i + 1) w)`` up to the last full window."""
    t = jnp.asarray(arrival_times, jnp.float64)
    if not window_s > 0:
        raise ValueError(f"window_s must be > 0 seconds; got {window_s!r}")
    n_win = int((float(t.max()) - start) // window_s)
    if n_win < 1:
        raise ValueError("no full window: window_s is longer than the span of arrival_times")
    idx = jnp.floor((t - start) / window_s).astype(jnp.int64)
    keep = (idx >= 0) & (idx < n_win)
    return jax.ops.segment_sum(keep.astype(jnp.int64), jnp.where(keep, idx, 0), num_segments=n_win)


# ============================================================================ on/off predictor (Sec. 3.2.2)

@dataclass(frozen=True)
class BurstPredictorParams:
    """Parameters of the on/off burst predictor (thesis Sec. 3.2.2, refining Caniff et al. [74]).

    The thesis gives the structure (index of dispersion over a monitoring window of m requests,
    enlarged to 2m when m is not large enough, combined with the current and previous arrival
    rates as in [74]) but no numbers; every default below is a documented choice.
    """

    m: int = param(64, "monitoring window, in inter-arrival samples (thesis Sec. 3.2.2: 'a small value of m'; "
                       "no number given; 64 is our choice)", bounds=(4, 1_000_000))
    period_s: float | None = param(None, "time in which m samples should arrive; if fewer arrive the window grows "
                                         "to 2m (thesis Sec. 3.2.2). None: m mean inter-arrival times of the input "
                                         "(a window of m samples at the average rate)", bounds=(0.0, float("inf")))
    i_threshold: float = param(4.0, "index of dispersion (Eq. 2) of a window at or above which a change of phase is "
                                    "signalled (thesis Fig. 6: I is small in stable windows, large in windows that "
                                    "hold a change; no number given; 4 is our choice)", bounds=(1.0, float("inf")))
    rate_change: float = param(1.5, "factor by which the window's arrival rate must exceed (burst on) or fall below "
                                    "(burst off) the previous window's rate, as in [74] (our choice)",
                               bounds=(1.0, float("inf")))
    max_lag: int = param(8, "lags summed in Eq. 2 inside one window (fixed truncation; our choice, m/8)",
                         bounds=(1, 1_000_000))
    hop: int | None = param(None, "samples between consecutive decisions (windows overlap so that every change "
                                  "point lies inside some window). None: m // 4 (our choice)", bounds=(1, 1_000_000))

    def __post_init__(self):
        if int(self.m) < 4:
            raise ValueError(f"m must be >= 4 samples; got {self.m}")
        if not 1 <= int(self.max_lag) < int(self.m):
            raise ValueError(f"max_lag must lie in [1, m) = [1, {self.m}); got {self.max_lag}")
        if self.hop is not None and not 1 <= int(self.hop) <= int(self.m):
            raise ValueError(f"hop must lie in [1, m] = [1, {self.m}] or be None; got {self.hop}")
        if self.period_s is not None and not self.period_s > 0:
            raise ValueError(f"period_s must be > 0 seconds or None; got {self.period_s!r}")
        if not self.i_threshold >= 1.0:
            raise ValueError(f"i_threshold must be >= 1; got {self.i_threshold!r}")
        if not self.rate_change >= 1.0:
            raise ValueError(f"rate_change must be >= 1; got {self.rate_change!r}")


class BurstPrediction(NamedTuple):
    """One row per monitoring window (fixed length; rows with ``valid == False`` are padding)."""

    decision_time: jax.Array    # (W,) seconds: arrival time of the window's last sample (when it is known)
    state: jax.Array            # (W,) bool: predicted burst state from decision_time on (True = "on")
    index_of_dispersion: jax.Array  # (W,) Eq. 2 over the window
    rate: jax.Array             # (W,) arrivals per second in the window
    window: jax.Array           # (W,) samples in the window: m or 2m
    valid: jax.Array            # (W,) bool


def _window_stats(xpad, p, w, two_m, max_lag):
    """Eq. 2 and the rate over the ``w`` samples ``xpad[p : p + w]`` (w <= two_m), masked."""
    xs = jax.lax.dynamic_slice(xpad, (p,), (two_m,))
    mask = jnp.arange(two_m) < w
    wf = w.astype(jnp.float64)
    xs = jnp.where(mask, xs, 0.0)
    span = xs.sum()
    mean = span / wf
    d = jnp.where(mask, xs - mean, 0.0)
    c0 = jnp.sum(d * d) / wf
    ck = jnp.stack([jnp.sum(d[: two_m - k] * d[k:]) / wf for k in range(1, max_lag + 1)])
    rho = ck / jnp.where(c0 > 0, c0, 1.0)
    scv = c0 / jnp.where(mean > 0, mean, 1.0) ** 2
    I = scv * (1.0 + 2.0 * rho.sum())
    rate = wf / jnp.where(span > 0, span, jnp.inf)
    return I, rate


@functools.partial(jax.jit, static_argnums=(2, 3, 4, 5))
def _predict(x, t_end, m, max_lag, hop, n_steps, period_s, i_th, rate_change):
    n = x.shape[0]
    two_m = 2 * m
    xpad = jnp.concatenate([x, jnp.zeros(two_m)])
    T = jnp.concatenate([jnp.zeros(1), jnp.cumsum(x)])     # T[i]: time from the first arrival to arrival i
    Tpad = jnp.concatenate([T, jnp.full(two_m, jnp.inf)])

    def step(carry, _):
        p, state = carry
        # too few samples arrived: m samples took longer than period_s -> the window grows to 2m
        span_m = Tpad[p + m] - Tpad[p]
        w = jnp.where(span_m > period_s, two_m, m)
        valid = p + w <= n
        I, rate = _window_stats(xpad, p, w, two_m, max_lag)
        # previous arrival rate: the w samples just before this window (a disjoint window)
        span_prev = T[p] - T[jnp.maximum(p - w, 0)]
        prev_rate = jnp.where((p >= w) & (span_prev > 0), w / jnp.where(span_prev > 0, span_prev, 1.0), jnp.nan)
        change = valid & (I >= i_th) & ~jnp.isnan(prev_rate)
        on = change & (rate >= rate_change * prev_rate)
        off = change & (rate * rate_change <= prev_rate)
        new_state = jnp.where(on, True, jnp.where(off, False, state))
        t_dec = jnp.where(valid, t_end[jnp.minimum(p + w, n) - 1], jnp.inf)
        # windows advance by hop < window: every change point lies inside some window
        return (p + hop, new_state), (t_dec, new_state, I, rate, w, valid)

    init = (jnp.int64(0), jnp.bool_(False))
    _, out = jax.lax.scan(step, init, None, length=n_steps)
    return out


def predict_bursts(arrival_times, params: BurstPredictorParams = BurstPredictorParams()) -> BurstPrediction:
    """The on/off burst predictor of thesis Sec. 3.2.2 over a whole arrival stream.

    Monitoring windows of ``m`` consecutive inter-arrival samples are scanned (``lax.scan`` over
    windows), a new window starting every ``hop`` samples. If the ``m`` samples took longer than ``period_s`` to
    arrive ("too few samples" for a reliable I), the window grows to ``2m`` samples (the thesis'
    dynamic window; it makes the end of a burst slower to detect, as the thesis remarks). For each
    window, I is Eq. 2 (``max_lag`` lags) and the rate is samples / elapsed time. Following [74], a
    change is signalled when ``I >= i_threshold``; its direction comes from the current versus the
    previous arrival rate, measured over the ``w`` samples just before the window:
    ``rate >= rate_change * previous`` -> "on" (a burst starts),
    ``rate <= previous / rate_change`` -> "off" (it ends); otherwise the state is kept. The state
    starts "off". The decision is known at the arrival of the window's last sample.

    ``arrival_times``: (n,) non-decreasing seconds. Returns a :class:`BurstPrediction`; use
    :func:`burst_state_at` for the state in force at any instants (e.g. each job's arrival).
    """
    t = np.asarray(arrival_times, dtype=np.float64)
    if t.ndim != 1:
        raise ValueError(f"arrival_times must be 1-D; got shape {t.shape}")
    if t.size and np.any(np.diff(t) < 0):
        i = int(np.flatnonzero(np.diff(t) < 0)[0]) + 1
        raise ValueError(f"arrival_times must be non-decreasing; arrival_times[{i}] < arrival_times[{i - 1}]")
    m, max_lag = int(params.m), int(params.max_lag)
    if t.size < m + 1:
        raise ValueError(f"need more than m = {m} arrivals; got {t.size}")
    x = np.diff(t)                                       # sample i ends at arrival i + 1
    period = params.period_s if params.period_s is not None else m * float(x.mean())
    hop = int(params.hop) if params.hop is not None else max(1, m // 4)
    n_steps = max(1, (x.size - m) // hop + 1)             # windows starting at 0, hop, 2 hop, ... that fit
    out = _predict(jnp.asarray(x), jnp.asarray(t[1:]), m, max_lag, hop, n_steps, jnp.float64(period),
                   jnp.float64(params.i_threshold), jnp.float64(params.rate_change))
    return BurstPrediction(*out)


def burst_state_at(prediction: BurstPrediction, times):
    """Predicted burst state (bool) in force at ``times``: the state of the last window whose
    decision time is <= t (causal); "off" before the first decision."""
    dt = jnp.where(prediction.valid, prediction.decision_time, jnp.inf)
    idx = jnp.searchsorted(dt, jnp.asarray(times, jnp.float64), side="right") - 1
    return jnp.where(idx >= 0, prediction.state[jnp.maximum(idx, 0)], False)
