"""AutoTiering's tier speed sensitivity calibration: least-squares lines, the CV confidence rule and the
latency estimate (AutoTiering paper Sec. IV-2, Alg. 1 lines 9-21 and 34-35).

The calibration session (TSSCS) injects a synthetic latency ``x_l`` into a VM's IOs at a few levels
``l = 1 .. L`` and records ``S`` samples of the VM's resulting average IO latency at each level. Then,
for every VM ``v`` on its tier ``t`` (Alg. 1 lines 10-20):

- line 13: ``CV += calCV(samplesWithLatency)``, the coefficient of variation (std / mean) of the ``S``
  samples of one level; line 15: ``CV /= len(sampleSet[t][v])``, the mean over the ``L`` levels;
- lines 16-19: confidence ``VM[v].conf = 0.05`` if ``CV >= 1`` else ``1 - CV``;
- line 14: each level's samples are replaced by their average; line 20: ``(m_v, b_v) = regress(...)``,
  the least-squares line ``y = m x + b`` (Table II: "bv, mv Parameters of TSSCS liner regression
  model (y = mx + b)") of average latency ``y`` against injected latency ``x``.

Lines 34-35 then estimate the VM's average latency on any tier ``t`` without migrating it:
``estimateAvgLat(v, t) = m_v * (tierLatency[t] - tierLatency[VM[v].tier]) + b_v``, and lines 26-29
turn it into IOPS (``10^6 / Lat`` with ``Lat`` in µs; ``1 / Lat`` in this library's seconds; 0 when
``Lat <= 0``).

Everything is vectorized: any leading axes (VMs, tiers, sessions) broadcast, closed-form sums replace
the per-VM loop, and all functions are ``jax.jit``-able.

Documented choices where the paper is silent:

- ``x`` is the *injected* latency (seconds), not the absolute one, so that ``b_v`` is the VM's
  latency on its current tier with nothing injected, which is what line 35 adds to the slope term.
- ``calCV`` uses the population standard deviation (``ddof = 0``): the CV of the samples at hand;
  pass ``ddof=1`` for the sample standard deviation.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

__all__ = [
    "LOW_CONFIDENCE",
    "fit_lines",
    "coefficient_of_variation",
    "cv_confidence",
    "calibrate",
    "estimate_avg_latency",
    "iops_from_latency",
]

#: Confidence given to a VM whose mean CV is >= 1 (Alg. 1 line 17).
LOW_CONFIDENCE = 0.05


@partial(jax.jit, static_argnames=("axis",))
def fit_lines(x, y, axis: int = -1):
    """Least-squares lines ``y = m x + b`` along ``axis``, vectorized over all other axes.

    Closed form with centred sums: ``m = Σ(x - x̄)(y - ȳ) / Σ(x - x̄)²`` and ``b = ȳ - m x̄``
    (Alg. 1 line 20, ``regress``). ``x`` broadcasts against ``y`` (e.g. the same injected-latency levels
    for every VM). Returns ``(m, b)`` as float64 arrays with ``axis`` removed; a line whose ``x`` values
    are all equal is undefined and gives NaN.
    """
    x = jnp.asarray(x, jnp.float64)
    y = jnp.asarray(y, jnp.float64)
    x, y = jnp.broadcast_arrays(x, y)
    xm = jnp.mean(x, axis=axis, keepdims=True)
    ym = jnp.mean(y, axis=axis, keepdims=True)
    dx = x - xm
    sxx = jnp.sum(dx * dx, axis=axis)
    sxy = jnp.sum(dx * (y - ym), axis=axis)
    m = jnp.where(sxx > 0, sxy / jnp.where(sxx > 0, sxx, 1.0), jnp.nan)
    b = jnp.squeeze(ym, axis) - m * jnp.squeeze(xm, axis)
    return m, b


@partial(jax.jit, static_argnames=("axis", "ddof"))
def coefficient_of_variation(samples, axis: int = -1, ddof: int = 0):
    """``calCV`` of Alg. 1 line 13: standard deviation / mean along ``axis`` (``ddof = 0`` default)."""
    s = jnp.asarray(samples, jnp.float64)
    return jnp.std(s, axis=axis, ddof=ddof) / jnp.mean(s, axis=axis)


@partial(jax.jit, static_argnames=("ddof",))
def cv_confidence(samples, ddof: int = 0):
    """The CV confidence rule of Alg. 1 lines 12-19 for samples shaped ``(..., L, S)``.

    ``CV`` is the coefficient of variation of the ``S`` samples at each of the ``L`` injected-latency
    levels, averaged over the levels (lines 13 and 15); the confidence is ``0.05`` if ``CV >= 1`` and
    ``1 - CV`` otherwise (lines 16-19). Returns ``(CV, conf)`` with shape ``(...)``.
    """
    cv = jnp.mean(coefficient_of_variation(samples, axis=-1, ddof=ddof), axis=-1)
    return cv, jnp.where(cv >= 1.0, LOW_CONFIDENCE, 1.0 - cv)


@partial(jax.jit, static_argnames=("ddof",))
def calibrate(injected_latency, samples, ddof: int = 0):
    """Tier speed sensitivity calibration of Alg. 1 lines 10-20, for all VMs at once.

    ``injected_latency``: the ``L`` injected latencies ``x_l`` in seconds, shape ``(L,)`` or broadcast
    against ``samples[..., 0]``; ``samples``: measured average IO latencies in seconds, shape
    ``(..., L, S)`` (``S`` samples per level; leading axes are VMs, tiers, ...).
    Returns ``(m, b, conf, cv)``, each shaped ``(...)``: the slope ``m_v`` (seconds of latency per
    second injected, the VM's sensitivity to tier speed), the intercept ``b_v`` (latency with nothing
    injected, seconds), the confidence ``VM[v].conf`` and the mean CV behind it.
    """
    samples = jnp.asarray(samples, jnp.float64)
    cv, conf = cv_confidence(samples, ddof=ddof)
    y = jnp.mean(samples, axis=-1)  # line 14: samplesWithLatency = avg(samplesWithLatency)
    m, b = fit_lines(injected_latency, y, axis=-1)
    return m, b, conf, cv


@jax.jit
def estimate_avg_latency(m, b, tier_latency, current_tier):
    """``estimateAvgLat(v, t)`` of Alg. 1 lines 34-35 for every tier ``t`` and VM ``v`` at once.

    ``Lat[t, v] = m_v * (tierLatency[t] - tierLatency[VM[v].tier]) + b_v``, where ``m``, ``b`` and
    ``current_tier`` (integer tier index of each VM) have shape ``(V,)`` and ``tier_latency`` (``L_t``,
    the tier's original average IO latency, Table II; seconds) has shape ``(T,)``. Returns ``(T, V)``
    float64, laid out like ``VMCapMat[t][v]``. On its own tier a VM's estimate is ``b_v``.
    """
    m = jnp.asarray(m, jnp.float64)
    b = jnp.asarray(b, jnp.float64)
    lt = jnp.asarray(tier_latency, jnp.float64)
    cur = jnp.asarray(current_tier)
    return m[None, :] * (lt[:, None] - lt[cur][None, :]) + b[None, :]


@jax.jit
def iops_from_latency(latency_s):
    """Alg. 1 lines 26-29 in seconds: ``IOPS = 1 / Lat`` if ``Lat > 0`` else 0 (the paper's
    ``10^6 / Lat`` with ``Lat`` in µs)."""
    lat = jnp.asarray(latency_s, jnp.float64)
    return jnp.where(lat > 0, 1.0 / jnp.where(lat > 0, lat, 1.0), 0.0)
