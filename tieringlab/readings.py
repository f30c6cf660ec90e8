"""Readings: the alternative interpretations of what a paper leaves open, run side by side.

A paper rarely fixes every setting its system needs (vFRM's idle-bin rule, G2-vFRM's aging period, LMST's
threshold e, AutoTiering's epoch length, OTF-AST's hot-interval rule). tieringlab runs such a setting under
each plausible **reading** and the ledger shows the claim's verdict under each. One mechanism states them:

- :class:`Reading` ``(name, overrides, why)``: the parameter values that reading sets (dotted paths reach
  into nested parameter dataclasses, ``"policy.e"``), and the reason it is plausible (a paper section, the
  notes). The **default** reading sets nothing (its parameters are the documented defaults).
- :func:`axis` builds the readings of one open setting; :func:`grid` crosses several axes.
- :meth:`Reading.apply` gives the parameters a reading runs with; :func:`run_each` runs a function under each.
- :func:`select` cuts one reading out of a labelled result that holds several as dimensions;
- :func:`claim_id` names a claim's row under a reading (the default keeps the bare id:
  ``"vfrm.fig7.cost" -> "vfrm.fig7.cost.idle_recency"``); :func:`verdicts` turns a claim's value under each
  reading into a verdict per reading, and :func:`flips` lists the readings whose verdict differs from the
  default's.

This module sits in the foundations layer: it knows parameters as frozen dataclasses and claims as objects with
``id`` and ``verdict(value)``, nothing of any system.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = ["Reading", "DEFAULT", "axis", "grid", "apply", "run_each", "claim_id", "verdicts", "flips", "select"]


def apply(params: Any, overrides: Mapping[str, Any]) -> Any:
    """``params`` (a frozen dataclass) with ``overrides`` set; a key ``"a.b"`` sets field ``b`` of field ``a``.

    An unknown field is a ``KeyError`` naming it and the fields that exist (a misspelled reading never runs
    the default silently).
    """
    top: dict[str, dict[str, Any]] = {}
    direct: dict[str, Any] = {}
    for path, value in overrides.items():
        head, _, rest = path.partition(".")
        (top.setdefault(head, {}).__setitem__(rest, value) if rest else direct.__setitem__(head, value))
    names = {f.name for f in dataclasses.fields(params)}
    unknown = sorted((set(direct) | set(top)) - names)
    if unknown:
        raise KeyError(f"{type(params).__name__} has no field {', '.join(map(repr, unknown))}; "
                       f"fields: {', '.join(sorted(names))}")
    for head, sub in top.items():
        direct[head] = apply(getattr(params, head), sub)
    return dataclasses.replace(params, **direct) if direct else params


@dataclass(frozen=True)
class Reading:
    """One reading: its ``name`` (a claim-id suffix: letters, digits, ``_``, ``-``), the parameter values it sets
    and why it is plausible. ``overrides`` empty: the default reading."""

    name: str
    overrides: Mapping[str, Any] = field(default_factory=dict)
    why: str = ""

    def __post_init__(self):
        if not self.name or not all(c.isalnum() or c in "_-." for c in self.name) or ".." in self.name \
                or self.name[0] == "." or self.name[-1] == ".":
            raise ValueError(f"a reading's name is letters, digits, '_' or '-', parts joined by '.' (it ends claim "
                             f"ids); got {self.name!r}")
        object.__setattr__(self, "overrides", MappingProxyType(dict(self.overrides)))

    @property
    def is_default(self) -> bool:
        return not self.overrides

    def apply(self, params: Any) -> Any:
        """``params`` under this reading (:func:`apply`)."""
        return apply(params, self.overrides)

    def __hash__(self):
        return hash((self.name, tuple(sorted(self.overrides.items(), key=lambda kv: kv[0]))))

    def __eq__(self, other):
        return isinstance(other, Reading) and (self.name, dict(self.overrides)) == (other.name, dict(other.overrides))


#: The default reading: the documented defaults, nothing overridden.
DEFAULT = Reading("default", {}, "the documented defaults")


def axis(path: str, values: Sequence[Any], why: str, *, default: Any, name: Callable[[Any], str] | None = None,
         reasons: Mapping[Any, str] | None = None) -> tuple[Reading, ...]:
    """The readings of one open setting: ``path`` at each of ``values``. The value equal to ``default`` (the
    documented default, which must be among ``values``) is the default reading (no override); the others set
    ``path``. ``name(value)`` names each (default ``f"{last part of path}_{value}"``); ``reasons`` may give a
    value its own reason instead of ``why``."""
    if default not in values:
        raise ValueError(f"axis {path!r}: the default {default!r} is not among its values {list(values)!r}")
    leaf = path.rsplit(".", 1)[-1]
    name = name or (lambda v: f"{leaf}_{v}")
    out = []
    for v in values:
        why_v = (reasons or {}).get(v, why)
        out.append(Reading(name(v), {}, why_v) if v == default else Reading(name(v), {path: v}, why_v))
    return tuple(out)


def grid(*axes: Iterable[Reading]) -> tuple[Reading, ...]:
    """Every combination of one reading per axis (first axis slowest): names joined by ``.`` leaving out the
    default ones (all default: :data:`DEFAULT`'s name), overrides merged (an axis may not set another's key)."""
    out = []
    for combo in itertools.product(*[tuple(a) for a in axes]):
        merged: dict[str, Any] = {}
        for r in combo:
            clash = set(merged) & set(r.overrides)
            if clash:
                raise ValueError(f"readings {[c.name for c in combo]} set {sorted(clash)} twice")
            merged.update(r.overrides)
        names = [r.name for r in combo if not r.is_default]
        why = "; ".join(r.why for r in combo if not r.is_default) or DEFAULT.why
        out.append(Reading(".".join(names) if names else DEFAULT.name, merged, why))
    return tuple(out)


def run_each(readings: Iterable[Reading], params: Any, fn: Callable[[Any], Any]) -> dict[str, Any]:
    """``{reading.name: fn(reading.apply(params))}`` in the order given (names must be distinct)."""
    out: dict[str, Any] = {}
    for r in readings:
        if r.name in out:
            raise ValueError(f"reading {r.name!r} given twice")
        out[r.name] = fn(r.apply(params))
    return out


def claim_id(base: str, *readings: Reading) -> str:
    """The ledger id of claim ``base`` under ``readings``: the bare id under the default reading, else each
    non-default reading's name appended after a dot."""
    return base + "".join(f".{r.name}" for r in readings if not r.is_default)


def verdicts(claim: Any, values: Mapping[str, Any]) -> dict[str, str]:
    """The verdict of ``claim`` (anything with ``verdict(value)``) under each reading: ``{name: verdict}`` for
    ``values = {reading name: the claim's value under it}``."""
    return {name: claim.verdict(v) for name, v in values.items()}


def flips(by_reading: Mapping[str, str], default: str = DEFAULT.name) -> list[str]:
    """The readings whose verdict differs from the ``default`` reading's (in the order given)."""
    if default not in by_reading:
        raise KeyError(f"no verdict under the default reading {default!r}; readings: {list(by_reading)}")
    base = by_reading[default]
    return [k for k, v in by_reading.items() if k != default and v != base]


def select(res: Any, **choice: Any) -> Any:
    """The labelled result ``res`` (an ``xarray.Dataset`` with one dimension per reading axis) under one reading:
    ``choice`` maps each reading dimension to its value (None: the result's primary reading, ``res.attrs[dim]``).
    The dimensions are dropped and the chosen values recorded in attrs. A value the result did not run is a
    ``ValueError`` listing the values it ran."""
    pick = {dim: (res.attrs[dim] if v is None else v) for dim, v in choice.items()}
    if any(v not in res[dim].values for dim, v in pick.items()):
        asked = ", ".join(f"{dim}={v!r}" for dim, v in pick.items())
        ran = ", ".join(f"{dim} {res[dim].values.tolist()}" for dim in pick)
        raise ValueError(f"no reading {asked} in the sweep ({ran})")
    out = res.sel(pick, drop=True)
    out.attrs = {**res.attrs, **pick}
    return out
