"""The ledger's honesty audit: claim rows that compute the same quantity, and rows whose value cannot move.

A claims ledger overstates its evidence when two rows report one quantity (a gap and the same gap written
another way; a ratio and that ratio minus one), and when a row's value is fixed by the simulator's construction
(a busy time that is 1 whenever a copy runs): such a row "holds" or "differs" without testing anything. The audit
reads what the runs recorded for each row (:meth:`tieringlab.results.Outputs.claim`): its value under the default
reading, under every other reading the notebook ran (``readings``) and per replication (``samples``), and flags

- **same quantity** (:func:`same_quantity`): two numeric rows of one notebook, recorded at the same points
  (readings and replications), whose values are equal at every point, or related by one exact affine map
  ``y = a x + b`` over at least :data:`MIN_AFFINE_POINTS` distinct values (two points fit any affine map, so they
  prove nothing). Keep one row, or make the second measure what the paper states separately;
- **cannot move** (:func:`cannot_move`): a numeric ``claim`` row recorded over replications (``samples``, at least
  two seeds) whose value is the same at every one of at least :data:`MIN_POINTS` points: nothing the runs vary
  (seeds, readings) moves it, so its verdict cannot change under any reading. A deterministic row (no samples) is
  not judged: a reading that does not touch its quantity leaves it constant legitimately. A flagged row either
  holds by construction (move it to kind ``sanity``) or the run varies nothing the claim is about (add the
  reading or replications that would).

A row with only its default value says nothing either way (it is not flagged). Values are compared to a relative
tolerance of :data:`RTOL` (float noise of one expression computed two ways).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

__all__ = ["Finding", "points", "same_quantity", "cannot_move", "audit", "MIN_POINTS", "MIN_AFFINE_POINTS", "RTOL"]

#: The fewest recorded points (readings + replications) for a row to be judged at all.
MIN_POINTS = 3
#: The fewest distinct values an affine relation must fit to count (two points fit any line).
MIN_AFFINE_POINTS = 3
#: Relative tolerance of "equal" and of an exact affine fit.
RTOL = 1e-9

SAME, CANNOT_MOVE = "same quantity", "cannot move"


@dataclass(frozen=True)
class Finding:
    """One audit flag: ``kind`` (:data:`SAME` or :data:`CANNOT_MOVE`), the row ids and why."""

    kind: str
    ids: tuple[str, ...]
    why: str

    def __str__(self) -> str:
        return f"{self.kind}: {', '.join(self.ids)} ({self.why})"


def points(entry: Mapping) -> tuple[tuple, np.ndarray] | None:
    """A numeric row's recorded points: ``(key, values)`` where ``key`` names the points (the other readings by
    name, the number of samples) and ``values`` are the row's values there, in that order. The default reading's
    value is a point only when the row has no samples: with samples it is a statistic of them (their mean, an
    interval's end), and a mean of two samples lies on the line through them, so it would make any two rows of two
    seeds look affine. None for a boolean or missing value (or a non-finite point)."""
    value = entry.get("value")
    if value is None or isinstance(value, bool):
        return None
    names = sorted((entry.get("readings") or {}).keys())
    samples = list(entry.get("samples") or [])
    vals = [*([] if samples else [value]), *(entry["readings"][n] for n in names), *samples]
    if any(v is None or isinstance(v, bool) for v in vals):
        return None
    arr = np.asarray(vals, np.float64)
    if not np.isfinite(arr).all():
        return None
    return (*names, f"samples:{len(samples)}"), arr


def _close(x: np.ndarray, y: np.ndarray) -> bool:
    scale = max(1.0, float(np.max(np.abs(x))), float(np.max(np.abs(y))))
    return bool(np.all(np.abs(x - y) <= RTOL * scale))


def _affine(x: np.ndarray, y: np.ndarray) -> tuple[float, float] | None:
    """``(a, b)`` when ``y = a x + b`` exactly (to :data:`RTOL`) over at least :data:`MIN_AFFINE_POINTS` distinct
    ``x`` with ``a != 0``; else None. A constant ``y`` (to :data:`RTOL`) is never a match: it fits a line of slope
    0 through any ``x``, and least squares returns that slope as float noise (1e-17), not as 0."""
    if len(np.unique(x)) < MIN_AFFINE_POINTS or _close(y, np.full_like(y, y[0])):
        return None
    a, b = np.polyfit(x, y, 1)
    if a == 0 or not _close(a * x + b, y):
        return None
    return float(a), float(b)


def same_quantity(entries: Mapping[str, Mapping], source: Mapping[str, str]) -> list[Finding]:
    """Pairs of numeric rows of one notebook (``source[id]``) recorded at the same points whose values are equal
    at every point (with at least two distinct values: two constants agreeing is a coincidence), or exactly
    affine over :data:`MIN_AFFINE_POINTS` distinct values."""
    pts = {cid: p for cid, e in entries.items() if (p := points(e)) is not None}
    found = []
    for a, b in itertools.combinations(sorted(pts), 2):
        (ka, xa), (kb, xb) = pts[a], pts[b]
        if source.get(a) != source.get(b) or ka != kb or len(xa) < 2:
            continue
        if _close(xa, xb) and len(np.unique(xa)) >= 2:
            found.append(Finding(SAME, (a, b), f"equal at all {len(xa)} recorded points"))
        elif (fit := _affine(xa, xb)) is not None:
            found.append(Finding(SAME, (a, b), f"{b} = {fit[0]:.6g} x {a} + {fit[1]:.6g} at all {len(xa)} recorded "
                                               f"points"))
    return found


def cannot_move(entries: Mapping[str, Mapping], kinds: Mapping[str, str]) -> list[Finding]:
    """Numeric rows of kind ``claim`` recorded over at least two replications whose value is the same at every one
    of at least :data:`MIN_POINTS` recorded points (readings and replications)."""
    found = []
    for cid in sorted(entries):
        if kinds.get(cid) != "claim" or (p := points(entries[cid])) is None:
            continue
        x = p[1]
        if len(entries[cid].get("samples") or []) >= 2 and len(x) >= MIN_POINTS and _close(x, np.full_like(x, x[0])):
            found.append(Finding(CANNOT_MOVE, (cid,), f"{x[0]:.6g} at all {len(x)} recorded points (readings and "
                                                      f"replications)"))
    return found


def audit(entries: Mapping[str, Mapping], defined: Mapping) -> list[Finding]:
    """Both checks over the recorded ``entries`` (``{claim id: metrics entry}``) of the ``defined`` rows (the claims
    registry: their ``source`` and ``kind``). Precondition, calibration and sanity rows may share quantities with
    claims (a precondition is often a claim's input), so only claim and extension rows are compared."""
    rows = {cid: e for cid, e in entries.items() if cid in defined and defined[cid].kind in ("claim", "extension")}
    source = {cid: defined[cid].source for cid in rows}
    kinds = {cid: defined[cid].kind for cid in rows}
    return same_quantity(rows, source) + cannot_move(rows, kinds)
