"""The one way the package compiles numba code: :func:`jit`, a decorator whose functions compile on first call.

A function decorated ``@native.jit(**options)`` stays a plain :class:`Kernel` object at import time: numba is
not imported, nothing is compiled. Its first call (or :meth:`Kernel.dispatcher`) imports numba and builds
``numba.njit(**options)`` of the function, with every other ``@native.jit`` function it names (as a global
name, or a closure variable) replaced by that function's own dispatcher, built first. So helpers and kernels
are written as ordinary module-level functions that call each other by name, whether they live in one module
or in several (``from ... import helper`` works); numba then compiles (or inlines, with ``inline="always"``)
the helpers into the kernel exactly as if the whole module had been decorated with ``numba.njit`` at import.

The options go to ``numba.njit`` unchanged (``inline="always"``, ``_nrt=False``, ``nogil=True`` ...), so a
kernel compiles to the same code it would as a module-level ``@njit(**options)``, except ``cache``, which the
package decides (and ignores when given): **compiled code is cached on disk** under
``<cache dir>/numba`` (:func:`tieringlab.paths.cache_dir`: ``$TIERINGLAB_CACHE``, else the checkout's
``build/cache``; ``TIERINGLAB_CACHE=off`` compiles in every process, as before), never in the source tree.
numba's own cache key (the function's bytecode, its source file's hash, the signature, the CPU and numba's
version) does not see a change in a helper that lives in another file, nor in a constant imported from one,
although numba freezes both into the compiled code; so each kernel gets its own cache folder named by
:meth:`Kernel.source_key`, a hash of the source files of the kernel and of every helper it reaches
(transitively), of the plain values (numbers, strings, arrays) its functions read as globals, of its
options and of numba's version: editing any of them compiles afresh, into a new folder. The folder
is chosen once per process, at the first build (:func:`numba_cache_dir`). A fresh process then loads a kernel
instead of compiling it (measured 2026-11-26, first call in a fresh process, numba's own start-up included:
the OTF-AST event engine 14.3 s -> 0.7 s, ARC 3.0 s -> 0.8 s); a first compile that writes the cache may cost
more (the OTF-AST engine measured 18.2 s on the loaded machine), as numba also emits object code for the file.
numba writes its cache files atomically, so concurrent processes are safe.

Kernels that need many arrays take them grouped, as ``typing.NamedTuple`` instances of arrays (numba passes a
tuple's fields as separate arguments, so this costs nothing per call inside compiled code).

Rules: a helper must be named as a plain global (``helper(x)``) or a closure variable, not as an attribute
(``module.helper(x)``), which numba would see as an untyped Python object; mutually recursive ``jit``
functions are refused.
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
import types
from pathlib import Path

import numpy as np

from tieringlab import paths

__all__ = ["Kernel", "jit", "numba_cache_dir"]

_LOCK = threading.RLock()       # one build at a time; re-entrant, as a kernel builds its helpers first
_UNSET = object()
_NUMBA_DIR = _UNSET             # resolved once per process (numba_cache_dir)


def numba_cache_dir() -> Path | None:
    """The folder of numba's compiled kernels, ``<cache dir>/numba``, or ``None`` (``TIERINGLAB_CACHE=off``).

    ``$TIERINGLAB_NUMBA_CACHE`` names another folder for them alone (the tests keep compiled code in the
    checkout's cache while every test's twins go to a temporary folder; ``off`` turns only this cache off).
    Resolved from the environment at the first call in a process and then kept, so every kernel of one
    process uses one folder even if ``TIERINGLAB_CACHE`` changes later (tests point the twins' cache at a
    temporary folder per test; the compiled code, like ``__pycache__``, stays where the process began)."""
    global _NUMBA_DIR
    if _NUMBA_DIR is _UNSET:
        root = paths.cache_dir()
        own = os.environ.get("TIERINGLAB_NUMBA_CACHE", "").strip()
        if root is None or own.lower() in paths.CACHE_OFF:
            _NUMBA_DIR = None
        else:
            _NUMBA_DIR = Path(own).expanduser().resolve() if own else root / "numba"
    return _NUMBA_DIR


class Kernel:
    """A function compiled by numba on its first call (see the module doc); calls go to the compiled code.

    ``py_func`` is the Python function as written, ``options`` the keywords given to ``numba.njit``."""

    def __init__(self, fn, options: dict):
        self.py_func = fn
        self.options = dict(options)
        self._dispatcher = None
        self._building = False
        functools.update_wrapper(self, fn)

    def __repr__(self) -> str:
        state = "compiled" if self._dispatcher is not None else "not compiled yet"
        return f"<native.Kernel {self.py_func.__module__}.{self.py_func.__qualname__} {self.options} ({state})>"

    def __call__(self, *args, **kwargs):
        d = self._dispatcher
        if d is None:
            d = self.dispatcher()
        return d(*args, **kwargs)

    @property
    def compiled(self) -> bool:
        """Whether the numba dispatcher has been built (numba imported for it)."""
        return self._dispatcher is not None

    def dispatcher(self):
        """The numba dispatcher of this function (built on the first call, helpers first, then kept)."""
        if self._dispatcher is not None:
            return self._dispatcher
        with _LOCK:
            if self._dispatcher is None:
                if self._building:
                    raise RecursionError(f"native.jit: {self.py_func.__qualname__} reaches itself through its "
                                         "helpers (mutually recursive jit functions are not supported)")
                self._building = True
                try:
                    self._dispatcher = self._build()
                finally:
                    self._building = False
        return self._dispatcher

    def _build(self):
        from numba import njit  # noqa: PLC0415  (numba is imported on the first call only)

        fn = self.py_func
        globs = dict(fn.__globals__)
        for name in _names(fn.__code__):
            helper = globs.get(name)
            if isinstance(helper, Kernel):
                globs[name] = helper.dispatcher()
        closure = fn.__closure__
        if closure is not None:
            closure = tuple(types.CellType(_cell(c).dispatcher()) if isinstance(_cell(c), Kernel) else c
                            for c in closure)
        rebound = types.FunctionType(fn.__code__, globs, fn.__name__, fn.__defaults__, closure)
        rebound.__kwdefaults__ = fn.__kwdefaults__
        rebound.__qualname__ = fn.__qualname__
        rebound.__doc__ = fn.__doc__
        options = {k: v for k, v in self.options.items() if k != "cache"}
        disp = njit(**options)(rebound)
        root = numba_cache_dir()
        if root is not None:
            qual = f"{fn.__module__}.{fn.__qualname__}".replace("<", "").replace(">", "")
            key = self.source_key()
            rebound._tieringlab_cache = (root / f"{qual}-{key[:16]}", key)
            cache = _disk_cache(rebound)
            if cache is not None:
                disp._cache = cache
        return disp

    def source_key(self) -> str:
        """A hex hash of everything numba freezes into this kernel's compiled code (see the module doc).

        The source files (whole) and bytecode of this function and of every ``jit`` helper it reaches, the plain values
        its functions read as globals (numbers, strings, tuples of them, numpy scalars and arrays), the
        options and numba's version. Any edit there gives a new key, hence a new cache folder."""
        import numba  # noqa: PLC0415

        h = hashlib.sha256(f"numba {numba.__version__}\n{sorted(self.options.items())!r}\n".encode())
        files: set[str] = set()
        for k in sorted(_reached(self), key=lambda k: (k.py_func.__module__, k.py_func.__qualname__)):
            fn = k.py_func
            files.add(fn.__code__.co_filename)
            h.update(f"{fn.__module__}.{fn.__qualname__} {sorted(k.options.items())!r}\n".encode())
            h.update(_code_bytes(fn.__code__))        # the bytecode too: functions without a source file
            for name in sorted(_names(fn.__code__)):
                if name in fn.__globals__:
                    h.update(name.encode() + b"=" + _value_bytes(fn.__globals__[name]) + b"\n")
        for f in sorted(files):
            h.update(f.encode() + b"\n")
            try:
                h.update(Path(f).read_bytes())
            except OSError:     # no source file (a frozen or interactive function): its bytecode instead
                h.update(b"<no source>")
        return h.hexdigest()


def _reached(kernel: Kernel) -> set[Kernel]:
    """``kernel`` and every ``jit`` helper it names, transitively (as globals or closure variables)."""
    seen: set[Kernel] = set()
    todo = [kernel]
    while todo:
        k = todo.pop()
        if k in seen:
            continue
        seen.add(k)
        fn = k.py_func
        for name in _names(fn.__code__):
            helper = fn.__globals__.get(name)
            if isinstance(helper, Kernel):
                todo.append(helper)
        for c in fn.__closure__ or ():
            if isinstance(_cell(c), Kernel):
                todo.append(_cell(c))
    return seen


def _code_bytes(code: types.CodeType) -> bytes:
    """The bytecode, names and plain constants of ``code`` and its nested functions (stable across processes:
    no hash-ordered containers)."""
    parts = [code.co_code, repr(code.co_names).encode()]
    for c in code.co_consts:
        parts.append(_code_bytes(c) if isinstance(c, types.CodeType) else _value_bytes(c))
    return b"\0".join(parts)


def _value_bytes(v) -> bytes:
    """Bytes that change when a plain global value does (numba freezes such values into compiled code);
    modules, functions and classes contribute only their kind (their source files are hashed elsewhere)."""
    if isinstance(v, np.ndarray):
        return f"ndarray {v.dtype.str} {v.shape}".encode() + hashlib.sha256(np.ascontiguousarray(v).tobytes()).digest()
    if isinstance(v, (bool, int, float, complex, str, bytes, np.generic, type(None))):
        return f"{type(v).__name__} {v!r}".encode()
    if isinstance(v, tuple) and all(isinstance(x, (bool, int, float, str, np.generic)) for x in v):
        return f"tuple {v!r}".encode()
    return type(v).__name__.encode()


@functools.lru_cache(maxsize=1)
def _cache_classes():
    """numba's function cache, with a locator that puts a kernel in its own folder (``_tieringlab_cache``)."""
    from numba.core.caching import CompileResultCacheImpl, FunctionCache, _CacheLocator  # noqa: PLC0415

    class KernelLocator(_CacheLocator):
        def __init__(self, py_func):
            self._path, self._stamp = py_func._tieringlab_cache
            self._lineno = py_func.__code__.co_firstlineno

        def get_cache_path(self):
            return str(self._path)

        def get_source_stamp(self):
            return self._stamp

        def get_disambiguator(self):
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func, py_file):
            if getattr(py_func, "_tieringlab_cache", None) is None:
                return None
            self = cls(py_func)
            try:
                self.ensure_cache_path()
            except OSError:     # a read-only or missing place: compile without a disk cache
                return None
            return self

    class KernelCacheImpl(CompileResultCacheImpl):
        _locator_classes = [KernelLocator]

    class KernelCache(FunctionCache):
        _impl_class = KernelCacheImpl

    return KernelCache


def _disk_cache(py_func):
    """numba's on-disk cache of ``py_func`` in its kernel folder, or ``None`` where that folder is unusable."""
    from numba.core import config  # noqa: PLC0415

    if config.CACHE_LOCATOR_CLASSES:    # the user chose numba's locators (NUMBA_CACHE_LOCATOR_CLASSES): ours step aside
        return None
    try:
        return _cache_classes()(py_func)
    except RuntimeError:                # no locator: the folder could not be created or written
        return None


def _cell(c):
    try:
        return c.cell_contents
    except ValueError:          # an empty cell (a name bound later in the enclosing scope)
        return None


def _names(code: types.CodeType) -> set[str]:
    """The global names ``code`` and the functions nested in it read."""
    out = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            out |= _names(const)
    return out


def jit(fn=None, /, **options):
    """Decorator: ``fn`` compiled by ``numba.njit(**options)`` on its first call (see the module doc).

    ``@jit(nogil=True)``, ``@jit(inline="always")``, ``@jit(_nrt=False)``, or bare ``@jit`` (no options);
    a ``cache`` option is ignored (the package caches every kernel on disk: see the module doc). Returns a
    :class:`Kernel`."""
    if fn is not None:
        return Kernel(fn, options)
    return lambda f: Kernel(f, options)
