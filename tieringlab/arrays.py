"""Shared helpers for array code: size classes for jit, padding, concreteness, argument checks.

Every module that pads arrays before a jitted call, or validates only when its inputs are concrete
(not JAX tracers), uses these; none keeps a private copy.

- :func:`bucket`: round a length up to a size class, so runs of similar length share one compilation
  (powers of two, then eight sizes per octave above a threshold: at most 1/8 padding).
- :func:`pad`: extend a 1-D array to a length with a fill value.
- :func:`is_concrete`: True when no argument (or pytree leaf) is a JAX tracer, so values may be read
  and errors raised; under ``jax.jit`` the caller guarantees the preconditions instead.
- :func:`choice`: check that a value is one of the allowed ones, with an error naming the parameter.
- :func:`numpy_rng`: a numpy ``Generator`` seeded from a ``jax.random`` key, for samplers that sort and
  draw on the host (the same key gives the same draws).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["bucket", "pad", "is_concrete", "choice", "whole_bytes", "numpy_rng"]


def bucket(n: int, *, minimum: int = 1, fine_above: int | None = None) -> int:
    """``n`` rounded up to a size class (at least ``minimum``).

    Up to ``fine_above`` (always, when it is None) the class is the next power of two. Above it the
    class is the next multiple of ``2**(floor(log2 n) - 3)``: eight evenly spaced sizes per octave, so
    at most 1/8 of padding on long inputs while still few distinct compilations.
    """
    n = max(int(n), int(minimum))
    if fine_above is None or n <= fine_above:
        return 1 << (n - 1).bit_length()
    step = 1 << (n.bit_length() - 1 - 3)
    return -(-n // step) * step


def pad(x, n_to: int, value):
    """1-D ``x`` extended to length ``n_to`` with ``value`` (a JAX array of ``x``'s dtype)."""
    x = jnp.asarray(x)
    return jnp.concatenate([x, jnp.full((n_to - x.shape[0],), value, dtype=x.dtype)])


def is_concrete(*xs) -> bool:
    """True when no argument, nor any leaf of a pytree argument, is a JAX tracer."""
    return not any(isinstance(x, jax.core.Tracer) for x in jax.tree_util.tree_leaves(xs))


def choice(name: str, value, allowed, *, what: str = ""):
    """``value`` if it is one of ``allowed``; else ``ValueError`` naming ``name`` and the allowed values."""
    if value not in tuple(allowed):
        extra = f" ({what})" if what else ""
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}{extra}; got {value!r}")
    return value


def whole_bytes(values, name: str) -> np.ndarray:
    """``values`` (a number or an array of them) as int64 byte counts of the same shape, or a ``ValueError``
    naming ``name``: numbers (not booleans), whole (a float is accepted when it is one), >= 0 and below
    2^63 (int64: a larger float or uint64 would wrap to a negative size). The one check of byte sizes
    that policies' capacities and the trace statistics' cache sizes share."""
    arr = np.asarray(values)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"{name} must be a number of bytes or an array of numbers of bytes; got {values!r} "
                         f"(dtype {arr.dtype})")
    if np.issubdtype(arr.dtype, np.floating):
        if not np.all(np.isfinite(arr) & (arr == np.floor(arr))):
            raise ValueError(f"{name} must be whole numbers of bytes; got {values!r}")
        if np.any(arr < 0):
            raise ValueError(f"{name} must be >= 0 bytes; got {values!r}")
        too_big = np.any(arr >= 2.0**63)
    else:
        if np.any(arr < 0):
            raise ValueError(f"{name} must be >= 0 bytes; got {values!r}")
        too_big = np.any(arr > np.iinfo(np.int64).max)
    if too_big:
        raise ValueError(f"{name} must be whole numbers of bytes below 2^63 (int64); got {values!r}")
    return arr.astype(np.int64)


def thread_scratch(store, name: str, n: int, dtype=np.float64) -> np.ndarray:
    """The first ``n`` entries of scratch array ``name`` kept in ``store`` (a ``threading.local``): allocated
    with room to spare, grown when ``n`` outgrows it, never shrunk, contents left as the last user left them.
    For temporaries of compiled loops called many times, where fresh arrays cost more in zeroed pages than
    the loops themselves."""
    buf = getattr(store, name, None)
    if buf is None or buf.size < n or buf.dtype != np.dtype(dtype):
        buf = np.empty(int(n * 1.25) + 1024, dtype)
        setattr(store, name, buf)
    return buf[:n]


def numpy_rng(key) -> np.random.Generator:
    """A numpy ``Generator`` seeded from the data of ``jax.random`` key ``key`` (same key -> same draws)."""
    return np.random.default_rng(np.asarray(jax.random.key_data(key)).astype(np.uint64).tolist())
