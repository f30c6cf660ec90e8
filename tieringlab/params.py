"""The schema of ``params.yaml`` and its validation.

Each notebook owns one section of ``params.yaml``, named after the notebook without its number
(``notebooks/00_quickstart.ipynb`` -> ``quickstart``). A section is a frozen dataclass registered
with :func:`section` by its experiment module (:mod:`tieringlab.experiments`, which registers every
section when it is imported; this module, at the bottom of the layers, never imports it); its fields
carry the defaults, the allowed range or choices and a one-line justification (paper section or
documented choice), and its ``__post_init__`` holds the cross-field checks. The top-level ``seed``
feeds every stage.

Validation is strict: an unknown key, a wrong type or an out-of-range value raises
:class:`ParamsError` naming the key path and what is allowed, before any work starts.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from pathlib import Path
from typing import Any, Literal, Mapping

import yaml

__all__ = ["ParamsError", "param", "section", "sections", "load", "check", "validate_section",
           "GLOBAL_KEYS"]


class ParamsError(ValueError):
    """A parameter is unknown, of the wrong type or out of range. The message names it."""


_SECTIONS: dict[str, type] = {}

#: Top-level keys of params.yaml that are not sections, with their checks.
GLOBAL_KEYS: dict[str, tuple[type, tuple[float, float] | None, str]] = {
    "seed": (int, (0, 2**63 - 1), "the one seed every stochastic stage derives its jax.random key from"),
}


def param(default: Any, doc: str, *, bounds: tuple[float | None, float | None] | None = None,
          choices: tuple[Any, ...] | None = None) -> Any:
    """A dataclass field with a default, a justification and optional ``bounds`` (inclusive) or ``choices``.

    List defaults are given as tuples (sections are frozen); YAML lists are converted.
    """
    meta = {"doc": doc, "bounds": bounds, "choices": choices}
    return dataclasses.field(default=default, metadata=meta)


def section(name: str):
    """Class decorator registering a frozen dataclass as the schema of ``params.yaml[name]``."""

    def register(cls: type) -> type:
        if not dataclasses.is_dataclass(cls) or not cls.__dataclass_params__.frozen:  # type: ignore[attr-defined]
            raise TypeError(f"params section {name!r}: {cls.__name__} must be a frozen dataclass")
        if name in _SECTIONS and _SECTIONS[name] is not cls:
            raise TypeError(f"params section {name!r} registered twice ({_SECTIONS[name].__name__}, {cls.__name__})")
        _SECTIONS[name] = cls
        cls.section_name = name  # type: ignore[attr-defined]
        return cls

    return register


def sections() -> dict[str, type]:
    """All registered sections. Importing :mod:`tieringlab.experiments` (or any of its modules) registers
    every notebook's; the command line, the pipeline and the notebooks do."""
    return dict(_SECTIONS)


def _unknown_section(name: str, source: str) -> ParamsError:
    known = ", ".join(sorted(_SECTIONS)) or "none (import tieringlab.experiments first: it registers them)"
    return ParamsError(f"{source}: unknown section {name!r}; known sections: {known}")


def _describe(tp: Any, meta: Mapping[str, Any]) -> str:
    origin = typing.get_origin(tp)
    if meta.get("choices"):
        return "one of " + ", ".join(repr(c) for c in meta["choices"])
    if origin is Literal:
        return "one of " + ", ".join(repr(c) for c in typing.get_args(tp))
    bounds = meta.get("bounds")
    rng = ""
    if bounds:
        lo, hi = bounds
        rng = (f" in [{lo}, {hi}]" if lo is not None and hi is not None
               else f" >= {lo}" if lo is not None else f" <= {hi}")
    if origin is tuple:
        inner = typing.get_args(tp)[0]
        names = {int: "integers", float: "numbers", str: "strings", bool: "booleans"}
        return f"a non-empty list of {names.get(inner, str(inner))}" + (f", each{rng}" if rng else "")
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _describe(args[0], meta) + " or null"
    names = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}
    return names.get(tp, getattr(tp, "__name__", str(tp))) + rng


def _coerce(value: Any, tp: Any, meta: Mapping[str, Any], where: str) -> Any:
    """Check ``value`` against type ``tp`` and ``meta`` (bounds/choices); return it normalised."""
    origin = typing.get_origin(tp)
    want = _describe(tp, meta)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None and type(None) in typing.get_args(tp):
            return None
        return _coerce(value, args[0], meta, where)
    if origin is Literal:
        if value not in typing.get_args(tp):
            raise ParamsError(f"{where}: expected {want}, got {value!r}")
        return value
    if origin is tuple:
        inner = typing.get_args(tp)[0]
        if not isinstance(value, (list, tuple)) or len(value) == 0:
            raise ParamsError(f"{where}: expected {want}, got {value!r}")
        return tuple(_coerce(v, inner, {"bounds": meta.get("bounds"), "choices": meta.get("choices")},
                             f"{where}[{i}]") for i, v in enumerate(value))
    if tp is bool:
        ok = isinstance(value, bool)
    elif tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif tp is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        value = float(value) if ok else value
    elif tp is str:
        ok = isinstance(value, str)
    else:  # pragma: no cover - schema author error
        raise TypeError(f"{where}: unsupported parameter type {tp!r}")
    if not ok:
        raise ParamsError(f"{where}: expected {want}, got {value!r} ({type(value).__name__})")
    choices = meta.get("choices")
    if choices and value not in choices:
        raise ParamsError(f"{where}: expected {want}, got {value!r}")
    bounds = meta.get("bounds")
    if bounds and tp in (int, float):
        lo, hi = bounds
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise ParamsError(f"{where}: expected {want}, got {value!r}")
    return value


def validate_section(name: str, values: Mapping[str, Any], *, source: str = "params.yaml",
                     partial: bool = True) -> Any:
    """Validate one section's mapping and return the section's dataclass instance.

    ``partial=True`` lets missing keys take their defaults; unknown keys are always errors.
    """
    schemas = sections()
    if name not in schemas:
        raise _unknown_section(name, source)
    cls = schemas[name]
    if not isinstance(values, Mapping):
        raise ParamsError(f"{source}: {name}: expected a mapping of parameters, got {type(values).__name__}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise ParamsError(f"{source}: {name}.{unknown[0]}: unknown parameter; allowed: {', '.join(sorted(fields))}")
    if not partial:
        missing = sorted(set(fields) - set(values))
        if missing:
            raise ParamsError(f"{source}: {name}.{missing[0]}: missing parameter")
    kwargs = {k: _coerce(v, hints[k], fields[k].metadata, f"{source}: {name}.{k}") for k, v in values.items()}
    try:
        return cls(**kwargs)
    except (ValueError, TypeError) as exc:  # a cross-field check of the section's __post_init__
        raise ParamsError(f"{source}: {name}: {exc}") from None


def load(path: str | Path = "params.yaml") -> dict[str, Any]:
    """Read and validate a whole ``params.yaml``; return ``{"seed": int, section: dataclass, ...}``."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ParamsError(f"{path}: file not found") from None
    except yaml.YAMLError as exc:
        raise ParamsError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise ParamsError(f"{path}: expected a mapping of sections at the top level")
    out: dict[str, Any] = {}
    schemas = sections()
    for key, value in raw.items():
        if key in GLOBAL_KEYS:
            tp, bounds, doc = GLOBAL_KEYS[key]
            out[key] = _coerce(value, tp, {"bounds": bounds}, f"{path}: {key}")
        elif key in schemas:
            out[key] = validate_section(key, value or {}, source=str(path))
        else:
            allowed = sorted([*GLOBAL_KEYS, *schemas])
            raise ParamsError(f"{path}: {key}: unknown top-level key; allowed: {', '.join(allowed)}")
    for key in GLOBAL_KEYS:
        if key not in out:
            raise ParamsError(f"{path}: {key}: missing ({GLOBAL_KEYS[key][2]})")
    return out


def check(name: str, namespace: Mapping[str, Any]) -> Any:
    """Validate a notebook's parameters: pick section ``name``'s fields out of ``namespace``.

    Notebooks call ``P = tieringlab.params.check("quickstart", globals())`` right after their
    ``parameters`` cell, so papermill-injected values are checked the same way as ``params.yaml``.
    """
    cls = sections().get(name)
    if cls is None:
        raise _unknown_section(name, "notebook parameters")
    values = {f.name: namespace[f.name] for f in dataclasses.fields(cls) if f.name in namespace}
    return validate_section(name, values, source="notebook parameters")


def schema_markdown() -> str:
    """A Markdown table of every section's parameters: default, allowed values, justification."""
    rows = ["| parameter | default | allowed | why |", "| --- | --- | --- | --- |"]
    for key, (tp, bounds, doc) in GLOBAL_KEYS.items():
        rows.append(f"| `{key}` | | {_describe(tp, {'bounds': bounds})} | {doc} |")
    for name, cls in sorted(sections().items()):
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            rows.append(f"| `{name}.{f.name}` | `{f.default!r}` | {_describe(hints[f.name], f.metadata)} | "
                        f"{f.metadata.get('doc', '')} |")
    return "\n".join(rows)
