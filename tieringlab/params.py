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
with both. Every error is reported, not only the first: :class:`ParamsError` lists them, one per line
(its ``errors``), for each section and each key (a section's cross-field checks run once its keys are valid).

The YAML reader (:func:`read_yaml`, which :func:`load`, ``tieringlab run``, every DVC stage and ``tieringlab
sweep --params`` go through; :func:`loads` reads a ``sweep -p`` value the same way) is bounded by its input:

- the file is a regular file of at most :data:`MAX_FILE_BYTES` bytes (a FIFO, ``/dev/zero`` or a 1 GB file is
  refused before it is read);
- the document it builds may hold at most :data:`MAX_NODES_FLOOR` + :data:`MAX_NODES_PER_BYTE` x (file
  bytes) values, aliases counted as what they expand to (counted on the composed node graph, each anchored
  node once): a "billion laughs" nest of aliases is refused at the alias that crosses the limit, naming its
  line, before anything is built; a value may nest at most :data:`MAX_DEPTH` levels deep;
- YAML 1.1 scalars that do not mean what they look like are refused, naming the line: ``010`` (octal 8),
  ``0x10``, ``0b10``, ``1_000``, ``1:30`` (base 60: 90) and the booleans ``yes``/``no``/``on``/``off``;
  plain decimals, ``true``/``false``, ``.inf`` and ``.nan`` read as before (the schema refuses the last two
  for numbers), and a quoted scalar is a string. DVC reads ``params.yaml`` as YAML 1.2, where ``010`` is 10:
  refusing keeps both readers in agreement. So are U+0085, U+2028 and U+2029, line breaks to YAML 1.1 only
  (``line_bytes: 4096<U+0085>  max_requests: 7`` looks like one line in an editor but sets two keys).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import re
import stat
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml

__all__ = ["ParamsError", "NotYamlError", "param", "section", "sections", "load", "read_yaml", "loads", "check",
           "validate_section", "build", "field_problems", "is_params", "cross_field", "increasing", "GLOBAL_KEYS",
           "NOTEBOOK_NAMES", "MAX_FILE_BYTES", "field_types"]


class ParamsError(ValueError):
    """A parameter is unknown, of the wrong type or out of range. The message names it.

    ``errors`` lists every problem found (one message each, naming its file and key or line); the message
    is those, one per line. ``ParamsError(message)`` is one error.
    """

    def __init__(self, message: str = "", errors: list[str] | tuple[str, ...] | None = None):
        self.errors = list(errors) if errors else [message]
        super().__init__("\n".join(self.errors) if errors else message)

    def __reduce__(self):  # keep ``errors`` through pickling (Dask workers)
        return (type(self), (str(self), self.errors))

    @classmethod
    def many(cls, errors: list[str]) -> ParamsError:
        """One error listing ``errors`` (at least one), in order."""
        return cls(errors=errors)


class NotYamlError(ParamsError):
    """The text is not valid YAML (a syntax error): ``tieringlab sweep -p`` then takes it as a string."""


_SECTIONS: dict[str, type] = {}

#: Top-level keys of params.yaml that are not sections, with their checks.
GLOBAL_KEYS: dict[str, tuple[type, tuple[float, float] | None, str]] = {
    "seed": (int, (0, 2**63 - 1), "the one seed every stochastic stage derives its jax.random key from"),
}

#: Every integer parameter is an int64 (numpy and JAX compute with it), whatever its own bounds say.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: The largest size parameter in MiB, GiB or GB: the experiments count bytes in int64, so a size x its unit
#: must stay below 2^63 bytes (``[1e300]`` MB used to pass the check and wrap to a negative size at run time).
MAX_MIB, MAX_GIB, MAX_GB = INT64_MAX // 2**20, INT64_MAX // 2**30, INT64_MAX // 10**9

#: The largest params file read: 1 MiB, over 100 times the repository's params.yaml (9 KB), and about a second
#: of parsing; a larger file (or a FIFO, a device such as /dev/zero) is refused before it is read.
MAX_FILE_BYTES = 1 << 20
#: The values (YAML nodes) a document may expand to: 10,000, plus 2 per byte of input. A document without
#: aliases holds fewer than one value per byte (each takes a character and a separator), so only aliases
#: that multiply the input ("billion laughs": 400 bytes expanding to 10^8 values) reach the limit.
MAX_NODES_FLOOR, MAX_NODES_PER_BYTE = 10_000, 2
#: The deepest nesting of a value (aliases expanded): params.yaml nests three levels (section, key, list).
MAX_DEPTH = 32


def param(default: Any, doc: str, *, bounds: tuple[float | None, float | None] | None = None,
          choices: tuple[Any, ...] | None = None, unit: str | None = None) -> Any:
    """A dataclass field with a default, a justification and optional ``bounds`` (inclusive) or ``choices``.

    ``doc`` says where the default comes from (a paper section, or "documented choice: ..."); ``unit`` is the
    field's unit as the library computes with it (``"s"``, ``"bytes"``, ``"bytes/s"``; SI inside the library).
    List defaults are given as tuples (sections are frozen); YAML lists are converted. The default of a field
    whose type is itself a frozen dataclass of ``param`` fields (a policy's parameters embedded in a section)
    is an instance of it: ``params.yaml`` then sets its fields as a nested mapping (``lmst: {policy: {e: 0.05}}``).
    """
    meta = {"doc": doc, "bounds": bounds, "choices": choices, "unit": unit}
    return dataclasses.field(default=default, metadata=meta)


@functools.cache
def field_types(cls: type) -> dict[str, Any]:
    """The resolved annotations of the dataclass ``cls`` (``typing.get_type_hints``, evaluated once per class:
    every params construction checks its fields against them)."""
    return typing.get_type_hints(cls)


def is_params(tp: Any) -> bool:
    """Whether ``tp`` is a frozen dataclass type (a section, or parameters embedded in one)."""
    return isinstance(tp, type) and dataclasses.is_dataclass(tp) and tp.__dataclass_params__.frozen  # type: ignore[attr-defined]


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
        return " or ".join(_describe(a, meta) for a in args) + (" or null" if type(None) in typing.get_args(tp) else "")
    names = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}
    if is_params(tp):
        return f"a mapping of {tp.__name__} fields"
    unit = f" ({meta['unit']})" if meta.get("unit") else ""
    return names.get(tp, getattr(tp, "__name__", str(tp))) + rng + unit


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to about ``limit`` characters (a 400-digit number is named, not printed).

    The cost is O(``limit``) whatever the value holds: containers are walked only until ``limit``
    characters are out (a list that aliases expand to 10^8 values is never printed in full), strings and
    bytes are cut before their repr, an integer too long to print is named by its number of digits.
    """
    text, whole = _bounded_repr(value, limit + 1)
    if whole and len(text) <= limit:
        return text
    if whole:  # a long scalar printed in full (at most a few thousand digits): keep both ends
        return f"{text[:limit - 20]}...{text[-10:]} ({len(text)} characters)"
    if text == "<int>":
        return _size_of(value)
    return f"{text[:limit - 20]}... ({_size_of(value)})"


def _name(key: str) -> str:
    """A key as written, or its repr when it is long or holds characters one cannot see (a BOM, a tab)."""
    return key if len(key) <= 80 and key.isprintable() else _short(key)


def _size_of(value: Any) -> str:
    if isinstance(value, Mapping):
        return f"a mapping of {len(value)} keys"
    if isinstance(value, (list, tuple, set, frozenset)):
        return f"a {type(value).__name__} of {len(value)} items"
    if isinstance(value, (str, bytes)):
        return f"{len(value)} characters" if isinstance(value, str) else f"{len(value)} bytes"
    if isinstance(value, int):
        return f"an integer of about {int((abs(value).bit_length() - 1) * 0.30103) + 1} digits"
    return type(value).__name__


def _bounded_repr(value: Any, room: int) -> tuple[str, bool]:
    """``(text, whole)``: ``repr(value)`` when ``whole``, else a prefix of it of at least ``room`` characters,
    built in O(``room``) steps (recursive and shared values end when the room does)."""
    parts: list[str] = []
    left = room
    cut = False

    def emit(text: str) -> None:
        nonlocal left
        parts.append(text)
        left -= len(text)

    def walk(v: Any) -> None:
        nonlocal cut
        if left <= 0:
            cut = True
            return
        if isinstance(v, (list, tuple, set, frozenset, dict)) and len(v) > 0:
            kind = type(v)
            opening, closing = {list: ("[", "]"), tuple: ("(", ")"), dict: ("{", "}")}.get(
                kind, ("{", "}") if kind is set else (f"{kind.__name__}({{", "})"))
            emit(opening)
            for i, item in enumerate(v.items() if isinstance(v, dict) else v):
                if left <= 0:
                    cut = True
                    return
                if i:
                    emit(", ")
                if isinstance(v, dict):
                    walk(item[0])
                    emit(": ")
                    walk(item[1])
                else:
                    walk(item)
            emit("," + closing if kind is tuple and len(v) == 1 else closing)
        elif isinstance(v, (str, bytes)) and len(v) > left:
            emit(repr(v[:left]))
            cut = True
        elif isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > 14_000:
            emit("<int>")  # beyond Python's 4300-digit str() limit: named, not printed
            cut = True
        else:
            emit(repr(v))

    walk(value)
    return "".join(parts), not cut


def _hint(value: Any, tp: Any) -> str:
    """Why a number came as a string: YAML 1.1 reads ``1e3``, ``1.0e3`` (no sign) and ``0o10`` as strings."""
    if tp not in (int, float) or not isinstance(value, str) or len(value) > 40:
        return ""
    try:
        number: Any = int(value, 0)
    except ValueError:
        try:
            number = float(value)
        except ValueError:
            return ""
    if isinstance(number, float) and not math.isfinite(number):
        return ""
    return f"; YAML 1.1 reads {value} as a string, not a number: write {number!r}"


def _expected(where: str, tp: Any, meta: Mapping[str, Any], value: Any, detail: str = "") -> ParamsError:
    """The error of a value that is not what ``tp``/``meta`` declare (the description is built only here, on
    failure: every params construction runs :func:`_coerce` on every field)."""
    return ParamsError(f"{where}: expected {_describe(tp, meta)}, got {_short(value)}{detail}")


def _coerce(value: Any, tp: Any, meta: Mapping[str, Any], where: str) -> Any:
    """Check ``value`` against type ``tp`` and ``meta`` (bounds/choices); return it normalised."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None and type(None) in typing.get_args(tp):
            return None
        if len(args) == 1:
            return _coerce(value, args[0], meta, where)
        for a in args:  # the first member the value fits (a number, or a list of them)
            try:
                return _coerce(value, a, meta, where)
            except ParamsError:
                pass
        raise _expected(where, tp, meta, value)
    if origin is Literal:
        if value not in typing.get_args(tp):
            raise _expected(where, tp, meta, value)
        return value
    if origin is tuple:
        inner = typing.get_args(tp)[0]
        if not isinstance(value, (list, tuple)) or len(value) == 0:
            raise _expected(where, tp, meta, value)
        return tuple(_coerce(v, inner, {"bounds": meta.get("bounds"), "choices": meta.get("choices")},
                             f"{where}[{i}]") for i, v in enumerate(value))
    if is_params(tp):
        if isinstance(value, tp):  # already built (and checked by its own __post_init__)
            return value
        return build(tp, value, where, base=meta.get("default"))
    if tp is bool:
        ok = isinstance(value, bool)
    elif tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        if ok and not INT64_MIN <= value <= INT64_MAX:
            raise _expected(where, tp, meta, value, " (outside the int64 range [-2^63, 2^63 - 1])")
    elif tp is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if ok:
            try:
                value = float(value)
            except OverflowError:  # a many-digit YAML integer
                raise _expected(where, tp, meta, value, " (too large for a float64)") from None
            ok = math.isfinite(value)
    elif tp is str:
        ok = isinstance(value, str)
    else:  # pragma: no cover - schema author error
        raise TypeError(f"{where}: unsupported parameter type {tp!r}")
    if not ok:
        raise _expected(where, tp, meta, value, f" ({type(value).__name__}){_hint(value, tp)}")
    choices = meta.get("choices")
    if choices and value not in choices:
        raise _expected(where, tp, meta, value)
    bounds = meta.get("bounds")
    if bounds and tp in (int, float):
        lo, hi = bounds
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise _expected(where, tp, meta, value)
    return value


def validate_section(name: str, values: Mapping[str, Any], *, source: str = "params.yaml",
                     partial: bool = True) -> Any:
    """Validate one section's mapping and return the section's dataclass instance.

    ``partial=True`` lets missing keys take their defaults; unknown keys are always errors. Every bad key
    is reported (:class:`ParamsError` ``errors``); the cross-field checks run once every key is valid. A field
    holding embedded parameters (a policy's) is validated the same way, its errors named by their key path
    (``params.yaml: lmst.policy.e: ...``).
    """
    schemas = sections()
    if name not in schemas:
        raise _unknown_section(name, source)
    return build(schemas[name], values, f"{source}: {name}", partial=partial)


def _field_meta(f: dataclasses.Field) -> dict[str, Any]:
    """A field's ``param`` metadata, with its default (the base of an embedded dataclass's partial mapping)."""
    return {**f.metadata, "default": None if f.default is dataclasses.MISSING else f.default}


def build(cls: type, values: Mapping[str, Any], where: str, *, partial: bool = True, base: Any = None) -> Any:
    """An instance of the frozen dataclass ``cls`` from the mapping ``values``, every field checked against its
    type and ``param`` metadata; ``where`` prefixes each error (``"params.yaml: lmst"``). Missing keys keep
    ``base``'s values (an instance of ``cls``: an embedded field's default) or the class defaults; an unknown
    key is an error listing the allowed ones. Cross-field checks (``__post_init__``) run once every key is
    valid; each problem is reported with its key path."""
    if not isinstance(values, Mapping):
        raise ParamsError(f"{where}: expected a mapping of parameters (key: value lines), got "
                          f"{_short(values)} ({type(values).__name__})")
    hints = field_types(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    errors: list[str] = []
    allowed = ", ".join(sorted(fields))
    for key in values:
        if not isinstance(key, str):
            errors.append(f"{where}.{_short(key)}: parameter names are strings, got a "
                          f"{type(key).__name__} key; allowed: {allowed}")
        elif key not in fields:
            errors.append(f"{where}.{_name(key)}: unknown parameter; allowed: {allowed}")
    if not partial:
        errors += [f"{where}.{k}: missing parameter" for k in fields if k not in values]
    kwargs = {}
    for k, v in values.items():
        if isinstance(k, str) and k in fields:
            try:
                kwargs[k] = _coerce(v, hints[k], _field_meta(fields[k]), f"{where}.{k}")
            except ParamsError as exc:
                errors += exc.errors
    if errors:
        raise ParamsError.many(errors)
    try:
        return dataclasses.replace(base, **kwargs) if isinstance(base, cls) else cls(**kwargs)
    except (ValueError, TypeError) as exc:  # the cross-field checks of the dataclass's __post_init__
        problems = exc.problems if isinstance(exc, _CrossFieldError) else [str(exc)]
        out = []
        for msg in problems:
            first = re.match(r"[A-Za-z_]\w*", msg)
            # "ks: [99] exceed n_sites" -> "ara_load_balancing.ks: [99] exceed n_sites" (the key path)
            sep = "." if first and first.group(0) in fields else ": "
            out.append(f"{where}{sep}{msg}")
        raise ParamsError.many(out) from None


def field_problems(obj: Any) -> list[str]:
    """Every field of the frozen dataclass ``obj`` that breaks its declared type, ``bounds`` or ``choices``
    (``param`` metadata), one message each naming the class and field; ``[]`` when all hold. For a
    parameters dataclass's ``__post_init__`` (raise with :func:`cross_field`), so a policy called from Python
    is checked by the same declaration as ``params.yaml``. Values that are not concrete (JAX tracers, arrays
    under ``vmap``) and fields typed ``Any`` are left to the class's own checks."""
    from tieringlab.arrays import is_concrete  # noqa: PLC0415  (arrays imports jax: only when a policy asks)

    hints = field_types(type(obj))
    out = []
    for f in dataclasses.fields(obj):
        tp, v = hints.get(f.name, Any), getattr(obj, f.name)
        if tp is Any or not f.metadata or not is_concrete(v) or is_params(tp):
            continue
        v = v.item() if hasattr(v, "item") and getattr(v, "ndim", None) == 0 else v
        try:
            _coerce(list(v) if isinstance(v, tuple) else v, tp, f.metadata, f"{type(obj).__name__}.{f.name}")
        except ParamsError as exc:
            out += exc.errors
    return out


def increasing(name: str, values: tuple, what: str) -> list[str]:
    """The cross-field problem of a list that must be strictly increasing (``[]`` if it is): a value given
    twice (``"NAME has duplicates: ..."``) or values out of order, ``what`` saying why the order matters."""
    if len(set(values)) != len(values):
        return [f"{name} has duplicates: {_short(list(values))}; {what}: each value once, in increasing order"]
    if any(b <= a for a, b in zip(values, values[1:])):
        return [f"{name} must be in increasing order ({what}); got {_short(list(values))}"]
    return []


class _CrossFieldError(ValueError):
    """Every cross-field problem of a section, one message each (see :func:`cross_field`)."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def cross_field(problems: list[str]) -> None:
    """Raise one ``ValueError`` listing ``problems`` (if any), for a section's ``__post_init__``.

    A section collects every failed cross-field check, each message starting with the parameter it is
    about (``"flash_mb must be ..."``); :func:`validate_section` reports each, naming the key path.
    """
    if problems:
        raise _CrossFieldError(problems)


class _TooLarge(Exception):
    """The document expands past the reader's bounds (aliases, nesting): fatal, reported at once."""


#: YAML 1.1 scalars read as what they look like: plain decimals, true/false (the other forms are refused).
_PLAIN_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")
_PLAIN_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+][0-9]+)?\Z|[-+]?\.(?:inf|Inf|INF)\Z"
                          r"|\.(?:nan|NaN|NAN)\Z")
_PLAIN_BOOL = frozenset({"true", "True", "TRUE", "false", "False", "FALSE"})
_INT_TAG, _FLOAT_TAG, _BOOL_TAG = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool")


class _ParamsLoader(yaml.SafeLoader):
    """The params reader: a safe YAML loader that refuses a key given twice in one mapping (plain YAML keeps
    the last), scalars whose YAML 1.1 meaning is a surprise, and documents that expand past ``budget``
    values or :data:`MAX_DEPTH` levels (see the module docstring). ``problems`` collects the first two kinds
    (every one is reported); the last raises :class:`_TooLarge` at once, before anything is built."""

    def __init__(self, stream: str, budget: int):
        super().__init__(stream)
        self.problems: list[tuple[int, str]] = []
        self._budget = budget
        self._values = 0                      # values of the document as built, an alias counting its target's
        self._shape: dict[int, tuple[int, int]] = {}   # id(node) -> (values, depth) of a finished node
        self._depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            target = self.anchors.get(event.anchor)
            if target is not None:  # an undefined alias: the composer's own error names it
                line = event.start_mark.line + 1
                shape = self._shape.get(id(target))
                if shape is None:
                    raise _TooLarge(f"line {line}: alias *{event.anchor} refers to a value that contains it "
                                    f"(a recursive value has no end)")
                values, depth = shape
                self._values += values
                if self._values > self._budget:
                    raise _TooLarge(f"line {line}: alias *{event.anchor} expands the document to more than "
                                    f"{self._budget:,} values ({MAX_NODES_FLOOR:,} + {MAX_NODES_PER_BYTE} per byte "
                                    f"of input); aliases may repeat a value, not multiply it")
                if self._depth + depth > MAX_DEPTH:
                    raise _TooLarge(f"line {line}: alias *{event.anchor} nests values more than {MAX_DEPTH} "
                                    f"levels deep")
            return super().compose_node(parent, index)
        if self._depth >= MAX_DEPTH:
            raise _TooLarge(f"line {self.peek_event().start_mark.line + 1}: values nested more than {MAX_DEPTH} "
                            f"levels deep")
        self._depth += 1
        node = super().compose_node(parent, index)
        self._depth -= 1
        self._values += 1
        if isinstance(node, yaml.ScalarNode):
            self._shape[id(node)] = (1, 1)
            self._check_scalar(node)
        else:
            kids = [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else node.value
            shapes = [self._shape[id(k)] for k in kids]
            self._shape[id(node)] = (1 + sum(v for v, _ in shapes), 1 + max((d for _, d in shapes), default=0))
        return node

    def _check_scalar(self, node: yaml.ScalarNode) -> None:
        """Record a scalar whose YAML 1.1 reading is not what it looks like (``010`` is 8)."""
        text, tag = node.value, node.tag
        shown = text if len(text) <= 40 else _short(text)
        if tag == _BOOL_TAG:
            if text not in _PLAIN_BOOL:
                value = str(yaml.SafeLoader.construct_yaml_bool(self, node)).lower()
                self._surprise(node, f"{shown} is read by YAML 1.1 as the boolean {value}; write {value}, or quote "
                                     f"it ('{shown}') for a string")
            return
        if tag not in (_INT_TAG, _FLOAT_TAG) or (_PLAIN_INT if tag == _INT_TAG else _PLAIN_FLOAT).match(text):
            return
        number = None
        if len(text) <= 40:  # a long one is not converted (base 60 costs quadratic time)
            try:
                number = (yaml.SafeLoader.construct_yaml_int if tag == _INT_TAG
                          else yaml.SafeLoader.construct_yaml_float)(self, node)
            except ValueError:
                pass
        digits = text.replace("_", "")
        if tag == _INT_TAG and re.match(r"[-+]?0[0-7_]+\Z", text):
            also = f" or {int(digits)}" if number is not None and int(digits) != number else ""
            why = f"octal {number}; write {number}{also}"
        elif ":" in text:
            why = f"sexagesimal (base 60) {number}; write {number}, or quote it for a string"
        elif "0b" in text or "0x" in text:
            why = f"{'binary' if '0b' in text else 'hexadecimal'} {number}; write {number}"
        else:
            why = f"{number} (YAML 1.2 and DVC read the string '{shown}'); write {number}"
        if number is None:
            why = why.split(" ", 1)[0] + " (a number of many digits); write it as a plain decimal"
        self._surprise(node, f"{shown} is read by YAML 1.1 as {why}")

    def _surprise(self, node: yaml.Node, message: str) -> None:
        self.problems.append((node.start_mark.line + 1, message))


def _construct_unique_mapping(loader: _ParamsLoader, node: yaml.MappingNode, deep: bool = False):
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
            loader.problems.append((line, f"key {_short(key)} given twice (lines {first} and {line}); YAML would "
                                          f"silently keep the last one"))
        else:
            seen[key] = line
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_ParamsLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)


#: Characters YAML 1.1 reads as line breaks where editors and YAML 1.2 do not.
_BREAK_NAMES = {"\x85": "next line", "\u2028": "line separator", "\u2029": "paragraph separator"}
_ODD_BREAK = re.compile("[\x85\u2028\u2029]")


def loads(text: str, source: str = "<string>") -> Any:
    """The YAML document in ``text``, read as :func:`read_yaml` reads a file (safe types only, no key twice,
    no YAML 1.1 surprise, bounded by the text's size); errors start with ``source``. A syntax error is a
    :class:`NotYamlError`."""
    budget = MAX_NODES_FLOOR + MAX_NODES_PER_BYTE * len(text.encode("utf-8", "surrogatepass"))
    odd = _ODD_BREAK.search(text)
    if odd:  # YAML 1.1 breaks the line there, an editor (and YAML 1.2) does not: a hidden "key: value" line
        line = text.count("\n", 0, odd.start()) + 1
        raise ParamsError(f"{source}: line {line}: character U+{ord(odd.group()):04X} ({_BREAK_NAMES[odd.group()]}) "
                          f"is a line break to YAML 1.1 but not to an editor or to YAML 1.2 (DVC); remove it")
    loader = None
    try:
        loader = _ParamsLoader(text, budget)  # the reader checks the characters here
        data = loader.get_single_data()
    except _TooLarge as exc:
        raise ParamsError(f"{source}: {exc}") from None
    except yaml.YAMLError as exc:
        raise NotYamlError(f"{source}: not valid YAML: {exc}") from None
    except RecursionError:
        raise ParamsError(f"{source}: not valid YAML: nested too deeply") from None
    except ValueError as exc:  # int() of a YAML integer beyond Python's digit limit
        raise ParamsError(f"{source}: not valid YAML: {exc}") from None
    finally:
        if loader is not None:
            loader.dispose()
    if loader.problems:
        raise ParamsError.many([f"{source}: line {line}: {msg}" for line, msg in sorted(loader.problems)])
    return data


_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _read_bounded(path: Path) -> bytes:
    """The bytes of the regular file ``path`` (at most :data:`MAX_FILE_BYTES`), or :class:`ParamsError`.

    Opened without blocking (a FIFO with no writer would wait forever) and checked before reading: a
    directory, a FIFO, a device (a symlink to /dev/zero never ends) or a file too large is refused."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise ParamsError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise ParamsError(f"{path}: is a directory; expected a params YAML file") from None
    except OSError as exc:
        raise ParamsError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
    except OSError as exc:  # pragma: no cover - fstat of an open descriptor
        os.close(fd)
        raise ParamsError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        if stat.S_ISDIR(st.st_mode):
            raise ParamsError(f"{path}: is a directory; expected a params YAML file")
        kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
        raise ParamsError(f"{path}: is {kind}, not a regular file; expected a params YAML file")
    too_big = ParamsError(f"{path}: larger than {MAX_FILE_BYTES:,} bytes (MAX_FILE_BYTES); a params file is a "
                          f"few KB (the repository's is 9 KB)")
    if st.st_size > MAX_FILE_BYTES:
        os.close(fd)
        raise too_big
    with os.fdopen(fd, "rb") as f:
        try:
            raw = f.read(MAX_FILE_BYTES + 1)  # bounded even where st_size lies (/proc)
        except OSError as exc:
            raise ParamsError(f"{path}: cannot be read ({exc.strerror or exc})") from None
        if len(raw) > MAX_FILE_BYTES:
            raise too_big
    return raw


def read_yaml(path: str | Path) -> Any:
    """The YAML document at ``path`` (safe types only, no key twice, no YAML 1.1 surprise, bounded by the
    file's size: see the module docstring), or :class:`ParamsError` naming the file (and the line)."""
    path = Path(path)
    raw = _read_bounded(path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ParamsError(f"{path}: not a UTF-8 text file (byte {exc.start}: {raw[exc.start:exc.start + 1]!r}); "
                          f"expected a params YAML file") from None
    return loads(text, str(path))


def load(path: str | Path = "params.yaml") -> dict[str, Any]:
    """Read and validate a whole ``params.yaml``; return ``{"seed": int, section: dataclass, ...}``.

    Each section's cross-field checks (its ``__post_init__``) run here, so ``tieringlab params check``
    and every stage (:mod:`tieringlab.pipeline` loads the whole file first) stop on them, naming the key.
    Every error of the file is reported (:class:`ParamsError` ``errors``: each section, each key).
    """
    path = Path(path)
    raw = read_yaml(path)
    if not isinstance(raw, dict):
        raise ParamsError(f"{path}: expected a mapping of sections at the top level, got "
                          f"{type(raw).__name__ if raw is not None else 'an empty document'}")
    out: dict[str, Any] = {}
    errors: list[str] = []
    schemas = sections()
    for key, value in raw.items():
        try:
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
                raise ParamsError(f"{path}: {_name(key)}: unknown top-level key; allowed: {', '.join(allowed)}")
        except ParamsError as exc:
            errors += exc.errors
    for key in GLOBAL_KEYS:
        if key not in raw:
            errors.append(f"{path}: {key}: missing ({GLOBAL_KEYS[key][2]})")
    if errors:
        raise ParamsError.many(errors)
    return out


#: Names a notebook's parameters cell may define besides its section's fields: where outputs go, the seed.
NOTEBOOK_NAMES = ("results_dir", "seed")


#: Names IPython itself puts in a notebook's namespace.
_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython", "display"})
#: The types a parameter value has (what papermill can inject and a parameters cell writes).
_DATA = (bool, int, float, str, list, tuple, dict, type(None))


def check(name: str, namespace: Mapping[str, Any]) -> Any:
    """Validate a notebook's parameters: pick section ``name``'s fields out of ``namespace``.

    Notebooks call ``P = tieringlab.params.check("quickstart", globals())`` right after their
    ``parameters`` cell, so papermill-injected values are checked the same way as ``params.yaml``. Any other
    plain value in ``namespace`` (a number, string, list, tuple, dict, bool or None whose name does not start
    with ``_``) that is neither a field, one of :data:`NOTEBOOK_NAMES` nor a shared section the section
    ``uses`` (``traces``) is an error naming it and the allowed
    names: a misspelled or renamed parameter (``papermill -p tau_h_kbms 5`` after it became a policy field)
    would otherwise run the default (papermill itself only warns).
    """
    cls = sections().get(name)
    if cls is None:
        raise _unknown_section(name, "notebook parameters")
    fields = [f.name for f in dataclasses.fields(cls)]
    allowed = {*fields, *NOTEBOOK_NAMES, *getattr(cls, "uses", ())}  # the shared sections it reads (traces)
    unknown = sorted(k for k, v in namespace.items()
                     if isinstance(k, str) and not k.startswith("_") and k not in _IPYTHON_NAMES
                     and type(v) in _DATA and k not in allowed)
    if unknown:
        raise ParamsError.many([f"notebook parameters: {name}.{_name(k)}: unknown parameter; allowed: "
                                f"{', '.join(sorted(allowed))}" for k in unknown])
    values = {f: namespace[f] for f in fields if f in namespace}
    return validate_section(name, values, source="notebook parameters")


def _schema_rows(prefix: str, cls: type, default: Any = None) -> list[str]:
    hints = field_types(cls)
    rows = []
    for f in dataclasses.fields(cls):
        value = getattr(default, f.name) if default is not None else f.default
        if is_params(hints[f.name]):
            doc = f.metadata.get("doc", "")
            rows.append(f"| `{prefix}.{f.name}` | | {_describe(hints[f.name], f.metadata)} | {doc} |")
            rows += _schema_rows(f"{prefix}.{f.name}", hints[f.name], value)
        elif f.metadata:
            rows.append(f"| `{prefix}.{f.name}` | `{value!r}` | {_describe(hints[f.name], f.metadata)} | "
                        f"{f.metadata.get('doc', '')} |")
    return rows


def schema_markdown(name: str | None = None) -> str:
    """A Markdown table of every section's parameters (or section ``name``'s): default, allowed values with
    units, justification. Embedded parameters are listed field by field under their key path."""
    rows = ["| parameter | default | allowed | why |", "| --- | --- | --- | --- |"]
    if name is None:
        for key, (tp, bounds, doc) in GLOBAL_KEYS.items():
            rows.append(f"| `{key}` | | {_describe(tp, {'bounds': bounds})} | {doc} |")
    schemas = sections()
    if name is not None and name not in schemas:
        raise _unknown_section(name, "tieringlab params schema")
    for sec, cls in sorted(schemas.items()):
        if name is None or sec == name:
            rows += _schema_rows(sec, cls)
    return "\n".join(rows)
