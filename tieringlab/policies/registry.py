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
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

from tieringlab.policies.contract import KINDS

__all__ = ["PolicySpec", "register", "get", "names", "run", "make_params"]


@dataclass(frozen=True)
class PolicySpec:
    """One registered system: its name, kind (call shape), implementation and parameters.

    ``fixed`` holds the parameter fields the name itself fixes (``"Qlen"`` is ARA's dispatcher with
    ``policy="qlen"``); they are filled in by :meth:`make_params` and checked by :func:`run`.
    """

    name: str                         #: the papers' name, as params.yaml writes it
    kind: str                         #: "trace" | "queueing" | "controller" (tieringlab.policies.contract)
    fn: Callable[..., Any]            #: the implementation, called with the kind's call shape
    params_type: type                 #: its frozen parameter dataclass (paper defaults)
    source: str                       #: where a paper defines it ("vFRM paper Sec. 4.4")
    fixed: Mapping[str, Any] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    random: bool = False              #: takes a jax.random key
    description: str = ""

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
        """The system's params from an experiment's ``knobs``: the fields ``params_type`` declares are
        taken from ``knobs`` (other keys are ignored: one experiment's knobs serve all its systems),
        ``fixed`` fields are set, the rest keep their paper defaults."""
        fields = {f.name for f in dataclasses.fields(self.params_type)}
        kw = {k: v for k, v in (knobs or {}).items() if k in fields and k not in self.fixed}
        return self.params_type(**kw, **self.fixed)

    def check_params(self, params) -> None:
        if not isinstance(params, self.params_type):
            raise TypeError(f"{self.name} takes {self.params_type.__name__} params; got {type(params).__name__}")
        for k, v in self.fixed.items():
            if getattr(params, k) != v:
                raise ValueError(f"{self.name} runs with {k}={v!r}; its params say {k}={getattr(params, k)!r} "
                                 f"(use the name registered for that value)")


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
    (observations,) = args
    return spec.fn(p, observations, **rnd, **kw)
