"""Popularity with memory: vFRM heating and cooling, G2-vFRM aged counters, AutoTiering score aging.

Three ways the papers let old IO activity fade, each as one array function over an
``(epoch, ...)`` matrix (axis 0 is the epoch; any trailing axes: bins, VMs, tiers):

- **vFRM temperature** (vFRM paper Sec. 4.4.2, Eq. 1-3; thesis Sec. 4.2.2, Eq. 18-20): the
  temperature of a bin during epoch ``i`` is ``T_i = sum_{j=1..N} H(M_{i-j}) * C_j`` with heating
  ``H(M) = lambda * M`` and the cooling factor ``C_j`` of Eq. 3. :func:`temperatures` computes every bin
  at every epoch in one call (``N`` shifted, weighted copies of the heat matrix; no loop over bins).
- **G2-vFRM frequency counters** (thesis Sec. 4.3.2): a per-bin access counter, incremented on every
  access and periodically aged by a right shift of one bit. :func:`aged_counters`.
- **AutoTiering performance score aging** (AutoTiering paper Sec. IV-4 Step 3, Eq. 7 and Alg. 2
  line 14): ``score = agingFactor * histScore + currCapScore - wetMig * migCost``. :func:`perf_score`
  (one epoch) and :func:`aged_scores` (all epochs, a linear recurrence solved by a scan).

All functions are pure, take and return arrays, and are ``jax.jit``/``jax.vmap``-able (``n_epochs`` and
``period`` are static Python ints).
"""

from __future__ import annotations

from fractions import Fraction
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "cooling_factors",
    "cooling_factors_exact",
    "heat",
    "temperatures",
    "temperature_from_history",
    "aged_counters",
    "perf_score",
    "aged_scores",
]

#: N of the vFRM paper: "we store the IO statistics for the previous 8 epochs" (vFRM paper Sec. 4.3, heat map).
N_EPOCHS_PAPER = 8


def _check_n_epochs(n_epochs) -> int:
    if isinstance(n_epochs, bool) or not isinstance(n_epochs, (int, np.integer)):
        raise TypeError(f"n_epochs must be a Python int (static), got {type(n_epochs).__name__}")
    n = int(n_epochs)
    if n < 6 or n % 2:
        raise ValueError(
            f"n_epochs must be an even integer >= 6, got {n}: vFRM Eq. 3 cools linearly over the first "
            "half of the N epochs and exponentially over the second half, so N must be even; its "
            "exponential branch 1/2^(j-3) is written for the paper's N = 8 and for N = 2 or 4 it yields "
            "factors that grow with age (N = 4 gives [1, 3/4, 1, 1/2]), which is not a cooling")
    return n


def cooling_factors_exact(n_epochs: int = N_EPOCHS_PAPER) -> list[Fraction]:
    """The cooling factors ``C_1 .. C_N`` of vFRM Eq. 3 as exact fractions.

    ``C_j = (N + 1 - j) / N`` for ``1 <= j < N/2 + 1`` (linear cooling), and ``C_j = 1 / 2^(j-3)`` for
    ``N/2 + 1 <= j <= N`` (exponential cooling), exactly as printed (vFRM paper Eq. 3, thesis Eq. 20).
    Defined here for even ``N >= 6``, where the printed formula decreases strictly with ``j``; other
    ``N`` raise ``ValueError`` (see :func:`cooling_factors`).
    """
    n = _check_n_epochs(n_epochs)
    out = []
    for j in range(1, n + 1):
        if j < n // 2 + 1:
            out.append(Fraction(n + 1 - j, n))
        else:
            out.append(Fraction(1, 2 ** (j - 3)))
    return out


def cooling_factors(n_epochs: int = N_EPOCHS_PAPER) -> np.ndarray:
    """``C_j`` for ``j = 1 .. N`` (vFRM Eq. 3) as float64; ``N = 8`` gives
    ``[1, 7/8, 3/4, 5/8, 1/4, 1/8, 1/16, 1/32]`` (all exact in binary floating point).

    ``n_epochs`` must be an even Python int ``>= 6``: the paper splits the ``N`` epochs into a linear
    and an exponential half (so ``N`` is even), and the exponent ``j - 3`` is fixed in the formula, which
    for ``N`` = 2 or 4 would make old epochs weigh *more* than recent ones.
    """
    return np.array([float(c) for c in cooling_factors_exact(n_epochs)], dtype=np.float64)


def heat(counts, lam=1.0):
    """Heating contribution ``H(M) = lambda * M`` of vFRM Eq. 2 (float64, broadcast).

    ``lam`` (λ) weighs one workload against the others; the paper's experiments use ``λ = 1``
    (vFRM paper Sec. 5.2.1: "setting λ equal to one"). A per-VM λ is an array that broadcasts against
    ``counts`` (e.g. shape ``(n_bins,)`` holding each bin's VM's λ).
    """
    return jnp.asarray(lam, dtype=jnp.float64) * jnp.asarray(counts, dtype=jnp.float64)


@partial(jax.jit, static_argnames=("n_epochs",))
def _temperatures(counts, lam, n_epochs):
    c = jnp.asarray(cooling_factors(n_epochs))
    h = heat(counts, lam)
    n_ep = h.shape[0]
    # epochs before the trace contribute nothing: pad N zero epochs in front
    padded = jnp.concatenate([jnp.zeros((n_epochs,) + h.shape[1:], h.dtype), h], axis=0)
    t = jnp.zeros_like(h)
    for j in range(1, n_epochs + 1):  # N static shifts: T_i += C_j * H(M_{i-j})
        t = t + c[j - 1] * jax.lax.dynamic_slice_in_dim(padded, n_epochs - j, n_ep, axis=0)
    return t


def temperatures(counts, lam=1.0, n_epochs: int = N_EPOCHS_PAPER):
    """vFRM temperature ``T_i`` of every bin at every epoch (vFRM Eq. 1-3), float64, shaped like the
    broadcast of ``counts`` and ``lam``.

    ``counts[i, ...]`` is ``M_i``, the number of IO requests to each bin during epoch ``i`` (axis 0 is
    the epoch; trailing axes are bins, VMs, ...). The result ``T[i, ...] = sum_{j=1..N} λ M_{i-j} C_j``
    is the temperature *during* epoch ``i``, predicted from the ``N`` epochs before it only (so it can
    place data for epoch ``i`` without looking at it); epochs before the trace count as zero, so
    ``T[0] = 0``. The paper ranks bins by ``T`` and keeps the hottest in Flash (Sec. 4.4.2).

    ``lam`` broadcasts against ``counts`` (a scalar, or a per-bin / per-VM array); ``n_epochs`` is the
    paper's ``N`` (8, vFRM paper Sec. 4.3), an even static int ``>= 6`` (see :func:`cooling_factors`).
    Jit-able and vmap-able over ``counts`` and ``lam``.
    """
    n_epochs = _check_n_epochs(n_epochs)
    counts = jnp.asarray(counts)
    if counts.ndim < 1:
        raise ValueError("counts must have an epoch axis (axis 0): shape (n_epochs_in_trace, ...)")
    shape = jnp.broadcast_shapes(counts.shape, jnp.shape(lam))
    if len(shape) != counts.ndim or shape[0] != counts.shape[0]:
        raise ValueError(
            f"lam of shape {jnp.shape(lam)} must broadcast against counts of shape {counts.shape} without "
            "adding or changing the epoch axis 0 (use jax.vmap over lam for a batch of λ values)")
    return _temperatures(counts, lam, n_epochs)


def temperature_from_history(recent_counts, lam=1.0):
    """vFRM Eq. 1 for one epoch from the last ``N`` epochs' counts, for use inside a policy's scan.

    ``recent_counts[j - 1, ...]`` is ``M_{i-j}``, most recent epoch first (``j = 1 .. N``, so ``N`` is
    ``recent_counts.shape[0]``, an even int ``>= 6``); returns ``T_i = sum_j λ M_{i-j} C_j`` with
    the shape of one epoch (broadcast with ``lam``). Equals row ``i`` of :func:`temperatures`.
    """
    h = jnp.asarray(recent_counts)
    if h.ndim < 1:
        raise ValueError("recent_counts must have the N past epochs on axis 0, most recent first")
    c = jnp.asarray(cooling_factors(h.shape[0]))
    # H is linear and λ does not depend on j: sum_j C_j H(M_{i-j}) = H(sum_j C_j M_{i-j})
    return heat(jnp.tensordot(c, h.astype(jnp.float64), axes=1), lam)


def aged_counters(counts, period: int = 1):
    """G2-vFRM per-bin frequency counters with periodic aging by a one-bit right shift (thesis
    Sec. 4.3.2, input ``binFreq`` of Alg. 2), int64, same shape as ``counts``.

    Each counter grows by one per access to its bin; every ``period`` epochs all counters are halved
    by ``>> 1`` "so that we can still preserve the relative frequency". With ``counts[e]`` the accesses
    during epoch ``e`` and ``A_e`` true when ``e > 0`` and ``e % period == 0``:

        F_e = (F_{e-1} >> 1 if A_e else F_{e-1}) + counts[e],   F_{-1} = 0,

    i.e. the shift happens at the epoch boundary before the new epoch's accesses are counted, and
    ``F[e]`` is the value Alg. 2 reads at the end of epoch ``e``. The thesis does not give the aging
    period; ``period = 1`` (age at every 5-minute epoch, the only period the G2-vFRM text names) is
    this library's documented default, and callers pass their own. Counts must be non-negative
    integers. A ``jax.lax.scan`` over epochs (integer shifts are not linear, so no closed form).
    """
    if isinstance(period, bool) or not isinstance(period, (int, np.integer)) or int(period) < 1:
        raise ValueError(f"period must be a positive int (epochs between agings), got {period!r}")
    counts = jnp.asarray(counts)
    if counts.ndim < 1:
        raise ValueError("counts must have an epoch axis (axis 0): shape (n_epochs_in_trace, ...)")
    if not jnp.issubdtype(counts.dtype, jnp.integer):
        raise TypeError(f"counts must be integer access counts, got dtype {counts.dtype}")
    return _aged_counters(counts.astype(jnp.int64), int(period))


@partial(jax.jit, static_argnames=("period",))
def _aged_counters(counts, period):
    def step(f, x):
        e, m = x
        age = (e > 0) & (e % period == 0)
        f = jnp.where(age, jnp.right_shift(f, 1), f) + m
        return f, f

    _, out = jax.lax.scan(step, jnp.zeros(counts.shape[1:], jnp.int64), (jnp.arange(counts.shape[0]), counts))
    return out


def perf_score(hist_score, curr_cap_score, aging_factor, wet_mig=0.0, mig_cost=0.0):
    """AutoTiering Eq. 7 (Alg. 2 line 14), one epoch, broadcast over tiers and VMs:

        tierVMPerfScore = agingFactor * histTierVMPerfScore + currCapScore - wetMig * migCost

    ``curr_cap_score`` is the orthogonal-match score of Eq. 6, ``mig_cost`` the migration time of
    Alg. 2 lines 16-18 (seconds) and ``wet_mig`` its weight. The paper presets ``agingFactor`` without
    giving a value, so it has no default here.
    """
    return (jnp.asarray(aging_factor, jnp.float64) * jnp.asarray(hist_score, jnp.float64)
            + jnp.asarray(curr_cap_score, jnp.float64)
            - jnp.asarray(wet_mig, jnp.float64) * jnp.asarray(mig_cost, jnp.float64))


def aged_scores(curr_cap_score, aging_factor, wet_mig=0.0, mig_cost=0.0, initial=0.0):
    """AutoTiering Eq. 7 over all epochs: ``S_τ = agingFactor * S_{τ-1} + currCapScore_τ - wetMig *
    migCost_τ`` with ``S_{-1} = initial`` (0: no history before the first epoch, a documented choice).

    ``curr_cap_score`` and ``mig_cost`` have the epoch on axis 0 (``mig_cost`` may be a scalar or
    broadcast); ``aging_factor`` and ``wet_mig`` broadcast against one epoch's slice (e.g. per tier).
    Returns float64 ``S`` for every epoch. A ``jax.lax.scan`` over epochs. Use :func:`perf_score` when
    the migration cost depends on the previous epoch's decisions (it then lives in the policy's scan).
    """
    x = jnp.asarray(curr_cap_score, jnp.float64)
    if x.ndim < 1:
        raise ValueError("curr_cap_score must have an epoch axis (axis 0)")
    drive = x - jnp.asarray(wet_mig, jnp.float64) * jnp.broadcast_to(jnp.asarray(mig_cost, jnp.float64), x.shape)
    if drive.ndim != x.ndim or drive.shape[0] != x.shape[0]:
        raise ValueError(
            f"wet_mig of shape {jnp.shape(wet_mig)} must broadcast against one epoch of curr_cap_score "
            f"(shape {x.shape[1:]}) without adding axes in front of the epoch axis")
    a = jnp.asarray(aging_factor, jnp.float64)
    s0 = jnp.broadcast_to(jnp.asarray(initial, jnp.float64), jnp.broadcast_shapes(x.shape[1:], a.shape))
    return _aged_scores(drive, a, s0)


@jax.jit
def _aged_scores(drive, a, s0):
    def step(s, u):
        s = a * s + u
        return s, s

    return jax.lax.scan(step, s0, drive)[1]
