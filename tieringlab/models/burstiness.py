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

from tieringlab.arrays import bucket, is_concrete
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
    "burst_state_per_arrival",
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
    period_s: float | None = param(None, "time in which m samples should arrive; if they take longer the window "
                                         "grows to 2m (thesis Sec. 3.2.2). None: m times the mean inter-arrival "
                                         "time observed so far (causal: up to the window's m-th sample, when the "
                                         "choice between m and 2m is made)", bounds=(0.0, float("inf")))
    i_threshold: float = param(4.0, "index of dispersion (Eq. 2) of a window at or above which a change of phase is "
                                    "signalled (thesis Fig. 6: I is small in stable windows, large in windows that "
                                    "hold a change; no number given; 4 is our choice)", bounds=(1.0, float("inf")))
    rate_change: float = param(1.5, "factor by which the window's arrival rate must exceed (burst on) or fall below "
                                    "(burst off) the previous window's rate, as in [74] (our choice)",
                               bounds=(1.0, float("inf")))
    max_lag: int = param(8, "lags summed in Eq. 2 inside one window (fixed truncation; our choice, m/8)",
                         bounds=(1, 1_000_000))
    hop: int | None = param(None, "samples between the starts of consecutive windows (windows overlap so that every "
                                  "change point lies inside some window). None: m // 4 (our choice)",
                            bounds=(1, 1_000_000))

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
    """One row per monitoring window, **in decision order** (by ``decision_index``, then by ``start``);
    rows with ``valid == False`` are padding and come last. Shapes ``(W,)``, or ``(R, W)`` for R streams."""

    decision_time: jax.Array    # seconds: arrival time at which the decision is known (inf for padding)
    state: jax.Array            # bool: predicted burst state from this decision on (True = "on")
    index_of_dispersion: jax.Array  # Eq. 2 over the window
    rate: jax.Array             # arrivals per second in the window
    window: jax.Array           # samples in the window: m or 2m
    valid: jax.Array            # bool
    decision_index: jax.Array | None = None  # arrival whose arrival completes the window (it and later ones see it)
    start: jax.Array | None = None           # the window's first sample (sample i: arrival i to arrival i + 1)


def _window_stats(xpad, p, w, two_m, max_lag, span):
    """Eq. 2 over the ``w`` samples ``xpad[p : p + w]`` (w <= two_m, masked; mean = span / w); the
    ``max_lag`` autocovariances as one product with a shifted copy of the window (static indices)."""
    xs = jax.lax.dynamic_slice(xpad, (p,), (two_m + max_lag,))
    mask = jnp.arange(two_m + max_lag) < w
    wf = w.astype(jnp.float64)
    mean = span / wf
    d = jnp.where(mask, xs - mean, 0.0)
    shifted = d[np.arange(1, max_lag + 1)[:, None] + np.arange(two_m)[None, :]]      # (max_lag, 2m)
    c0 = jnp.sum(d[:two_m] * d[:two_m]) / wf
    ck = jnp.sum(shifted * d[None, :two_m], axis=1) / wf
    rho = ck / jnp.where(c0 > 0, c0, 1.0)
    scv = c0 / jnp.where(mean > 0, mean, 1.0) ** 2
    return scv * (1.0 + 2.0 * rho.sum())


@functools.partial(jax.jit, static_argnums=(2, 3, 4, 5))
def _windows(t, n, m, max_lag, hop, n_win, period_s, i_th, rate_change):
    """Every monitoring window of R padded streams ``t`` (R, L) with ``n`` (R,) real arrivals each (the
    rest repeats the last arrival), in window (start) order: its size, decision arrival, validity, I,
    rate and signal (+1 on, -1 off, 0 keep). Each is a function of the arrivals up to the window's
    decision only. ``lax.map`` over streams (one stream's windows in memory at a time), vectorised
    over windows."""
    two_m = 2 * m

    def one(args):
        tt, nn = args
        L = tt.shape[0]
        ns = nn - 1                                          # samples: x[i] = t[i + 1] - t[i]
        xpad = jnp.concatenate([jnp.diff(tt), jnp.zeros(two_m + max_lag)])
        tpad = jnp.concatenate([tt, jnp.full(two_m + 1, tt[-1])])
        p = jnp.arange(n_win, dtype=jnp.int64) * hop
        have_m = p + m <= ns
        # the m-or-2m choice is made when the window's m-th sample has arrived (arrival p + m)
        span_m = tpad[p + m] - tpad[p]
        if period_s is None:  # m mean gaps so far: (t[p + m] - t[0]) / (p + m) per sample
            period = m * (tpad[p + m] - tpad[0]) / (p + m).astype(jnp.float64)
        else:
            period = jnp.full(p.shape, period_s)
        w = jnp.where(span_m > period, two_m, m)
        e = p + w                                            # the decision is known at arrival e
        valid = have_m & (e <= ns)
        span = tpad[jnp.minimum(e, L - 1)] - tpad[p]
        I = jax.vmap(lambda pp, ww, sp: _window_stats(xpad, pp, ww, two_m, max_lag, sp))(p, w, span)
        wf = w.astype(jnp.float64)
        rate = jnp.where(span > 0, wf / jnp.where(span > 0, span, 1.0), jnp.inf)
        # previous arrival rate: the w samples just before the window (already arrived)
        span_prev = tpad[p] - tpad[jnp.maximum(p - w, 0)]
        prev = jnp.where(span_prev > 0, wf / jnp.where(span_prev > 0, span_prev, 1.0), jnp.inf)
        change = valid & (p >= w) & (I >= i_th)
        on = change & (rate >= rate_change * prev)
        off = change & ~on & (rate * rate_change <= prev)
        sig = jnp.where(on, 1, jnp.where(off, -1, 0)).astype(jnp.int8)
        t_dec = jnp.where(valid, tpad[jnp.minimum(e, L - 1)], jnp.inf)
        return t_dec, I, rate, w, valid, e, sig

    return jax.lax.map(one, (t, n))


def _in_decision_order(t_dec, I, rate, w, valid, e, sig, hop):
    """Rows sorted by the arrival that completes the window, then by start (the later window, which
    ends at the same arrival, is the more recent evidence and is applied last); the state after each
    decision is the last non-zero signal so far ("off" before any). NumPy: a sort and a running
    maximum over (R, W) integers, no floating-point work."""
    R, W = valid.shape
    start = np.broadcast_to(np.arange(W, dtype=np.int64) * hop, (R, W))
    big = np.iinfo(np.int64).max
    key = np.where(valid, e, big)
    order = np.lexsort((start, key), axis=-1)
    take = lambda x: np.take_along_axis(x, order, axis=-1)  # noqa: E731
    sig_o, valid_o = take(sig), take(valid)
    last = np.maximum.accumulate(np.where(sig_o != 0, np.arange(W), -1), axis=-1)
    state = (last >= 0) & (np.take_along_axis(sig_o, np.maximum(last, 0), axis=-1) == 1) & valid_o
    return BurstPrediction(take(t_dec), state, take(I), take(rate), take(w), valid_o, take(key), take(start))


def predict_bursts(arrival_times, params: BurstPredictorParams = BurstPredictorParams()) -> BurstPrediction:
    """The on/off burst predictor of thesis Sec. 3.2.2 over an arrival stream (or R streams).

    Windows start every ``hop`` samples (sample i is the gap between arrivals i and i + 1). When the
    window's first ``m`` samples have arrived, their span is compared with ``period_s``: if they took
    longer ("too few samples" for a reliable I), the window grows to ``2m`` samples (the thesis' dynamic
    window; it makes the end of a burst slower to detect, as the thesis remarks). The window's
    decision is taken when its last sample has arrived, at arrival ``decision_index = start + w``: I is
    Eq. 2 over the window (``max_lag`` lags), the rate is samples / elapsed time. Following [74], a
    change is signalled when ``I >= i_threshold``; its direction comes from the current versus the
    previous arrival rate, measured over the ``w`` samples just before the window:
    ``rate >= rate_change * previous`` -> "on" (a burst starts),
    ``rate <= previous / rate_change`` -> "off" (it ends); otherwise the state is kept. The state
    starts "off".

    **Causal.** A 2m window decides after windows that start later, so the decisions are applied in
    the order in which they are known (by ``decision_index``, ties by start), never in window order;
    the default ``period_s`` uses only arrivals already seen. Hence the predictor run on a prefix of
    a stream gives the same decisions and states as on the whole stream, up to the prefix's end.

    ``arrival_times``: (n,) or (R, n) non-decreasing seconds (any n >= 0; with fewer than m + 1
    arrivals no decision is made). Returns a :class:`BurstPrediction` (NumPy arrays, rows in decision
    order); :func:`burst_state_per_arrival` gives the state at each arrival, :func:`burst_state_at` at
    given instants.
    """
    t = np.asarray(arrival_times, dtype=np.float64)
    single = t.ndim == 1
    if t.ndim not in (1, 2):
        raise ValueError(f"arrival_times must be 1-D (n,) or 2-D (R, n); got shape {t.shape}")
    t2 = t[None] if single else t
    if t2.size and not np.all(np.isfinite(t2)):
        raise ValueError("arrival_times must be finite seconds")
    bad = np.diff(t2, axis=-1) < 0
    if bad.any():
        r, i = (int(v) for v in np.argwhere(bad)[0])
        where = f"[{i + 1}]" if single else f"[{r}, {i + 1}]"
        raise ValueError(f"arrival_times must be non-decreasing; arrival_times{where} < the arrival before it")
    m, max_lag = int(params.m), int(params.max_lag)
    hop = int(params.hop) if params.hop is not None else max(1, m // 4)
    R, n = t2.shape
    # padded to a size class so that streams of similar length share one compilation; the padding
    # repeats the last arrival (gaps of 0) and no valid window reaches it
    L = bucket(n + 1, minimum=2 * m + 2, fine_above=4096)
    n_win = (L - 1 - m) // hop + 1
    tp = np.empty((R, L))
    tp[:, :n] = t2
    tp[:, n:] = t2[:, -1:] if n else 0.0
    out = _windows(jnp.asarray(tp), jnp.full(R, n, jnp.int64), m, max_lag, hop, n_win,
                   None if params.period_s is None else float(params.period_s),
                   jnp.float64(params.i_threshold), jnp.float64(params.rate_change))
    pred = _in_decision_order(*(np.asarray(x) for x in out), hop)
    return BurstPrediction(*(None if x is None else x[0] for x in pred)) if single else pred


def burst_state_per_arrival(prediction: BurstPrediction, n_arrivals: int) -> np.ndarray:
    """Predicted burst state (bool) in force at each of the first ``n_arrivals`` arrivals: the state
    after the last decision whose ``decision_index`` is <= the arrival's index (causal by index, so
    simultaneous arrivals never see a decision completed by a later one); "off" before the first
    decision. Shape ``(n,)`` or ``(R, n)`` like the prediction (NumPy binary search per stream)."""
    if prediction.decision_index is None:
        raise ValueError("prediction.decision_index is None: pass a prediction made by predict_bursts")
    di, st = np.asarray(prediction.decision_index), np.asarray(prediction.state)
    di2, st2 = np.atleast_2d(di), np.atleast_2d(st)
    j = np.arange(int(n_arrivals))
    idx = np.stack([np.searchsorted(d, j, side="right") - 1 for d in di2])  # a few binary searches per stream
    out = (idx >= 0) & np.take_along_axis(st2, np.maximum(idx, 0), axis=-1)
    return out[0] if di.ndim == 1 else out


def burst_state_at(prediction: BurstPrediction, times):
    """Predicted burst state (bool) in force at ``times`` (seconds): the state after the last decision
    known at or before t (causal); "off" before the first decision. The rows must be in decision order
    (as :func:`predict_bursts` returns them): a ``ValueError`` says so otherwise."""
    dt = jnp.where(jnp.asarray(prediction.valid), jnp.asarray(prediction.decision_time), jnp.inf)
    if dt.ndim != 1:
        raise ValueError(f"burst_state_at takes the prediction of one stream; got decision_time of shape {dt.shape}")
    if is_concrete(dt) and bool(jnp.any(jnp.diff(dt) < 0)):
        raise ValueError("prediction rows must be in decision order (non-decreasing decision_time, padding last)")
    idx = jnp.searchsorted(dt, jnp.asarray(times, jnp.float64), side="right") - 1
    return jnp.where(idx >= 0, jnp.asarray(prediction.state)[jnp.maximum(idx, 0)], False)
