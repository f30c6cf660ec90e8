"""The schema of ``params.yaml`` and its validation.

Each notebook owns one section of ``params.yaml``, named after the notebook without its number
(``notebooks/00_quickstart.ipynb`` -> ``quickstart``). A section is a frozen dataclass registered
with :func:`section` by its experiment module (:mod:`tieringlab.experiments`, which registers every
section when it is imported; this module, at the bottom of the layers, never imports it); its fields
carry the defaults, the allowed range or choices and a one-line justification (paper section or
documented choice), and its ``__post_init__`` holds the cross-field checks. The top-level ``seed``
feeds every stage.

Validation is strict: an unknown key, a key given twice, a wrong type or an out-of-range value raises
:class:`ParamsError` naming the file, the key path and what is allowed, before any work starts. Integers
must fit in int64 and numbers in a float64 (whatever a field's own bounds), since the experiments compute
with both.
"""

from __future__ import annotations

import dataclasses
import math
import re
import types
import typing
from pathlib import Path
from typing import Any, Literal, Mapping

import yaml

__all__ = ["ParamsError", "param", "section", "sections", "load", "read_yaml", "check", "validate_section",
           "GLOBAL_KEYS"]


class ParamsError(ValueError):
    """A parameter is unknown, of the wrong type or out of range. The message names it."""


_SECTIONS: dict[str, type] = {}

#: Top-level keys of params.yaml that are not sections, with their checks.
GLOBAL_KEYS: dict[str, tuple[type, tuple[float, float] | None, str]] = {
    "seed": (int, (0, 2**63 - 1), "the one seed every stochastic stage derives its jax.random key from"),
}

#: Every integer parameter is an int64 (numpy and JAX compute with it), whatever its own bounds say.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


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


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters (a 400-digit number is named, not printed)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit - 20]}...{text[-10:]} ({len(text)} characters)"


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
        if ok and not INT64_MIN <= value <= INT64_MAX:
            raise ParamsError(f"{where}: expected {want}, got {_short(value)} (outside the int64 range "
                              f"[-2^63, 2^63 - 1])")
    elif tp is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if ok:
            try:
                value = float(value)
            except OverflowError:  # a many-digit YAML integer
                raise ParamsError(f"{where}: expected {want}, got {_short(value)} (too large for a float64)") from None
            ok = math.isfinite(value)
    elif tp is str:
        ok = isinstance(value, str)
    else:  # pragma: no cover - schema author error
        raise TypeError(f"{where}: unsupported parameter type {tp!r}")
    if not ok:
        raise ParamsError(f"{where}: expected {want}, got {_short(value)} ({type(value).__name__})")
    choices = meta.get("choices")
    if choices and value not in choices:
        raise ParamsError(f"{where}: expected {want}, got {value!r}")
    bounds = meta.get("bounds")
    if bounds and tp in (int, float):
        lo, hi = bounds
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise ParamsError(f"{where}: expected {want}, got {_short(value)}")
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
        raise ParamsError(f"{source}: {name}: expected a mapping of parameters (key: value lines), got "
                          f"{_short(values)} ({type(values).__name__})")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for key in values:
        if not isinstance(key, str):
            raise ParamsError(f"{source}: {name}.{_short(key)}: parameter names are strings, got a "
                              f"{type(key).__name__} key; allowed: {', '.join(sorted(fields))}")
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
        msg = str(exc)
        first = re.match(r"[A-Za-z_]\w*", msg)
        # "ks: [99] exceed n_sites" -> "ara_load_balancing.ks: [99] exceed n_sites" (the key path)
        where = f"{name}." if first and first.group(0) in fields else f"{name}: "
        raise ParamsError(f"{source}: {where}{msg}") from None


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe YAML loader that refuses a key given twice in one mapping (plain YAML keeps the last)."""


class _DuplicateKey(Exception):
    pass


def _construct_unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False):
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":  # "<<": merged keys may be overridden
            continue
        key = loader.construct_object(key_node, deep=True)
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key ([a, b]: ...); the base constructor names it
            continue
        line = key_node.start_mark.line + 1
        if first is not None:
            raise _DuplicateKey(f"line {line}: key {_short(key)} given twice (lines {first} and {line}); "
                                f"YAML would silently keep the last one")
        seen[key] = line
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)


def read_yaml(path: str | Path) -> Any:
    """The YAML document at ``path`` (safe types only, no key twice), or :class:`ParamsError` naming the file."""
    path = Path(path)
    if path.is_dir():
        raise ParamsError(f"{path}: is a directory; expected a params YAML file")
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ParamsError(f"{path}: file not found") from None
    except OSError as exc:
        raise ParamsError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ParamsError(f"{path}: not a UTF-8 text file (byte {exc.start}: {raw[exc.start:exc.start + 1]!r}); "
                          f"expected a params YAML file") from None
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506  (a SafeLoader subclass)
    except _DuplicateKey as exc:
        raise ParamsError(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise ParamsError(f"{path}: not valid YAML: {exc}") from None
    except RecursionError:
        raise ParamsError(f"{path}: not valid YAML: nested too deeply") from None
    except ValueError as exc:  # int() of a YAML integer beyond Python's digit limit
        raise ParamsError(f"{path}: not valid YAML: {exc}") from None


def load(path: str | Path = "params.yaml") -> dict[str, Any]:
    """Read and validate a whole ``params.yaml``; return ``{"seed": int, section: dataclass, ...}``.

    Each section's cross-field checks (its ``__post_init__``) run here, so ``tieringlab params check``
    and every stage (:mod:`tieringlab.pipeline` loads the whole file first) stop on them, naming the key.
    """
    path = Path(path)
    raw = read_yaml(path)
    if not isinstance(raw, dict):
        raise ParamsError(f"{path}: expected a mapping of sections at the top level, got "
                          f"{type(raw).__name__ if raw is not None else 'an empty document'}")
    out: dict[str, Any] = {}
    schemas = sections()
    for key, value in raw.items():
        if not isinstance(key, str):
            raise ParamsError(f"{path}: {_short(key)}: top-level keys are strings (section names or "
                              f"{', '.join(GLOBAL_KEYS)}), got a {type(key).__name__}")
        if key in GLOBAL_KEYS:
            tp, bounds, doc = GLOBAL_KEYS[key]
            out[key] = _coerce(value, tp, {"bounds": bounds}, f"{path}: {key}")
        elif key in schemas:
            # an empty section (``quickstart:`` alone) takes every default; false, 0, [] or a scalar is an error
            out[key] = validate_section(key, {} if value is None else value, source=str(path))
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
