"""The registry: the papers' names of the systems ("LRU", "vFRM", "G1-vFRM", "Qlen", ...) -> implementations.

Each policy module registers its systems when it is imported (:func:`register`); :func:`get` imports
every module of :mod:`tieringlab.policies` on first use, so the registry is complete whatever was
imported before. Experiments and notebooks name systems (``params.yaml`` lists names) and call them
through :func:`run`; no experiment imports a policy module for its functions, so no experiment adapts
one policy to another, and a new paper system only adds a module here.

Names are matched without regard to case, ``-`` or ``_`` (``"g1_vfrm"`` finds ``"G1-vFRM"``), and a
spec may carry aliases (``"GLB-vFRM"``).
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from tieringlab.arrays import is_concrete
from tieringlab.policies.contract import KINDS

__all__ = ["PolicySpec", "register", "get", "names", "describe", "run", "make_params"]


@dataclass(frozen=True)
class PolicySpec:
    """One registered system: its name, kind (call shape), implementation and parameters.

    ``fixed`` holds the parameter fields the name itself fixes (``"Qlen"`` is ARA's dispatcher with
    ``policy="qlen"``); they are filled in by :meth:`make_params` and checked by :func:`run`.
    """

    name: str                         #: the papers' name, as params.yaml writes it
    kind: str                         #: "trace" | "queueing" | "controller" | "scenario" (policies.contract)
    fn: Callable[..., Any]            #: the implementation, called with the kind's call shape
    params_type: type                 #: its frozen parameter dataclass (paper defaults)
    source: str                       #: where a paper defines it ("vFRM paper Sec. 4.4")
    fixed: Mapping[str, Any] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    random: bool = False              #: takes a jax.random key
    description: str = ""
    #: A small valid call, ``example() -> (inputs, kw)`` so that ``run(name, *inputs, **kw)`` (plus ``key`` for
    #: randomised systems) runs in about a second: the contract test runs every registered name through it.
    example: Callable[[], tuple[tuple, dict]] | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind must be one of {list(KINDS)}; got {self.kind!r}")
        if not (dataclasses.is_dataclass(self.params_type) and self.params_type.__dataclass_params__.frozen):
            raise TypeError(f"{self.name}: params_type must be a frozen dataclass; got {self.params_type!r}")
        fields = {f.name for f in dataclasses.fields(self.params_type)}
        bad = sorted(set(self.fixed) - fields)
        if bad:
            raise ValueError(f"{self.name}: fixed fields {bad} are not fields of {self.params_type.__name__}")
        object.__setattr__(self, "fixed", MappingProxyType(dict(self.fixed)))

    def make_params(self, knobs: Mapping[str, Any] | None = None):
        """The system's params from ``knobs``: each key must be a field of ``params_type`` (an unknown or
        misspelled knob is a :class:`~tieringlab.params.ParamsError` naming it and the fields there are: it
        would otherwise run the paper default silently), ``fixed`` fields are set (a knob may repeat a fixed
        value, not change it), the rest keep their paper defaults. A knob whose value does not have its field's
        declared type (a string for a number, a list for a scalar, a float for an integer) is a
        :class:`~tieringlab.params.ParamsError` naming the system, the knob, the type and the value; values are
        passed on unchanged (an ``int`` for a ``float`` field stays an ``int``)."""
        from tieringlab.params import ParamsError  # noqa: PLC0415  (keeps the registry free of the yaml layer)

        fields = [f.name for f in dataclasses.fields(self.params_type) if f.init]
        knobs = dict(knobs or {})
        problems = [f"{self.name}: unknown knob {k!r}; {self.params_type.__name__} has: {', '.join(fields)}"
                    for k in knobs if k not in fields]
        problems += [f"{self.name}: knob {k!r}={knobs[k]!r} contradicts the name, which fixes {k}={v!r} "
                     f"(use the name registered for that value)"
                     for k, v in self.fixed.items() if k in knobs and not _same(knobs[k], v)]
        if problems:
            raise ParamsError.many(problems)
        kw = {k: v for k, v in knobs.items() if k not in self.fixed}
        hints = _field_types(self.params_type)
        for k, v in kw.items():
            _check_knob(self.name, k, v, hints.get(k, Any))
        return self.params_type(**kw, **self.fixed)

    def check_params(self, params) -> None:
        if not isinstance(params, self.params_type):
            raise TypeError(f"{self.name} takes {self.params_type.__name__} params; got {type(params).__name__}")
        for k, v in self.fixed.items():
            if getattr(params, k) != v:
                raise ValueError(f"{self.name} runs with {k}={v!r}; its params say {k}={getattr(params, k)!r} "
                                 f"(use the name registered for that value)")


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # arrays compare element-wise
        return False


def _field_types(params_type: type) -> dict[str, Any]:
    """The resolved annotations of a params dataclass (``{}`` where they cannot be resolved)."""
    from tieringlab.params import field_types  # noqa: PLC0415  (keeps the registry free of the yaml layer)

    try:
        return field_types(params_type)
    except Exception:  # noqa: BLE001  (an unresolvable annotation: leave the type unchecked)
        return {}


def _type_ok(value: Any, tp: Any) -> bool:
    """Whether ``value`` has type ``tp`` as a knob: numbers by kind (a bool is no number, an int is a
    float, numpy scalars count), ``X | None`` and unions by any member, ``tuple[...]`` as a tuple or
    list of such values; a type that cannot be checked (``Any``, arrays, callables) accepts anything."""
    origin = typing.get_origin(tp)
    if tp is Any or isinstance(tp, typing.TypeVar) or not is_concrete(value):
        return True  # a JAX tracer is checked by the params' own code, if at all: never refused here
    if origin in (typing.Union, types.UnionType):
        return any(_type_ok(value, a) for a in typing.get_args(tp))
    if tp in (bool, int, float) and hasattr(value, "dtype") and getattr(value, "ndim", None) == 0:
        kind = np.dtype(value.dtype).kind  # a 0-d numpy or JAX array: judged by its dtype
        return kind == "b" if tp is bool else kind in ("iu" if tp is int else "iuf")
    if tp is type(None):
        return value is None
    if tp is bool:
        return isinstance(value, (bool, np.bool_))
    if tp is int:
        return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if tp is float:
        return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    if tp is str:
        return isinstance(value, str)
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(value, (tuple, list)):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_type_ok(v, args[0]) for v in value)
        return len(args) == len(value) and all(_type_ok(v, a) for v, a in zip(value, args))
    if origin is not None and isinstance(origin, type) and origin.__module__ == "collections.abc":
        return isinstance(value, origin)
    if isinstance(tp, type) and tp is not np.ndarray and origin is None and tp.__module__ != "typing":
        return isinstance(value, tp)
    return True


def _check_knob(policy: str, knob: str, value: Any, tp: Any) -> None:
    """``ParamsError`` naming ``policy``, ``knob``, the expected type ``tp`` and ``value`` when the types differ."""
    if _type_ok(value, tp):
        return
    from tieringlab.params import ParamsError  # noqa: PLC0415  (keeps the registry free of the yaml layer)

    want = getattr(tp, "__name__", None) if typing.get_origin(tp) is None else None
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    raise ParamsError(f"{policy}: knob {knob!r} must be {want or tp} (its params field's type); "
                      f"got {shown} ({type(value).__name__})")


_REGISTRY: dict[str, PolicySpec] = {}
_LOADED = [False]


def _norm(name: str) -> str:
    return str(name).lower().replace("_", "-").replace(" ", "-")


def register(spec: PolicySpec) -> PolicySpec:
    """Add ``spec`` under its name and aliases; a name registered twice is an error."""
    for key in (spec.name, *spec.aliases):
        k = _norm(key)
        if k in _REGISTRY and _REGISTRY[k] is not spec:
            raise ValueError(f"policy name {key!r} is registered twice ({_REGISTRY[k].name}, {spec.name})")
        _REGISTRY[k] = spec
    return spec


def _load_all() -> None:
    if _LOADED[0]:
        return
    import tieringlab.policies as pkg  # noqa: PLC0415  (same package: importing registers)

    for mod in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        if not mod.name.startswith("_") and mod.name not in ("registry", "contract"):
            importlib.import_module(f"{pkg.__name__}.{mod.name}")
    _LOADED[0] = True


def names(kind: str | None = None) -> list[str]:
    """The registered names (one per system, aliases left out), optionally of one ``kind``."""
    _load_all()
    specs = {id(s): s for s in _REGISTRY.values()}.values()
    return sorted((s.name for s in specs if kind is None or s.kind == kind), key=str.lower)


def describe(kind: str | None = None) -> str:
    """The registered systems by kind, one line each (``kind: name (aliases) - source``): the list the package
    docstrings point to instead of typing it."""
    lines = []
    for k in KINDS if kind is None else (kind,):
        for n in names(k):
            spec = get(n)
            aka = f" ({', '.join(spec.aliases)})" if spec.aliases else ""
            lines.append(f"{k:<10} {n}{aka} - {spec.source}")
    return "\n".join(lines)


def get(name: str) -> PolicySpec:
    """The spec registered as ``name`` (or an alias); ``KeyError`` naming the known names otherwise."""
    _load_all()
    try:
        return _REGISTRY[_norm(name)]
    except KeyError:
        raise KeyError(f"unknown policy {name!r}; known: {', '.join(names())}") from None


def make_params(name: str, knobs: Mapping[str, Any] | None = None):
    """``get(name).make_params(knobs)``."""
    return get(name).make_params(knobs)


def run(name: str, *args, params=None, knobs: Mapping[str, Any] | None = None, key=None, **kw):
    """Run the system registered as ``name`` with its kind's call shape.

    - trace: ``run(name, ds, capacities, params=...)``
    - queueing: ``run(name, arrivals, services, params=..., key=..., **inputs)``
    - controller: ``run(name, observations, params=...)``
    - scenario: ``run(name, workload, params=..., key=...)``

    ``params`` defaults to ``make_params(name, knobs)``; ``key`` is passed to randomised systems only.
    """
    spec = get(name)
    p = spec.make_params(knobs) if params is None else params
    spec.check_params(p)
    if spec.random and key is None:
        raise ValueError(f"{spec.name} is randomised: pass key=jax.random.key(...)")
    rnd = {"key": key} if spec.random else {}
    if spec.kind == "trace":
        ds, capacities = args
        return spec.fn(ds, capacities, p, **rnd, **kw)
    if spec.kind == "queueing":
        arrivals, services = args
        return spec.fn(p, arrivals, services, **rnd, **kw)
    if spec.kind == "scenario":
        (workload,) = args
        return spec.fn(p, workload, **rnd, **kw)
    (observations,) = args
    return spec.fn(p, observations, **rnd, **kw)
