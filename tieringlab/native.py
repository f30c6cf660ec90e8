"""The one way the package compiles numba code: :func:`jit`, a decorator whose functions compile on first call.

A function decorated ``@native.jit(**options)`` stays a plain :class:`Kernel` object at import time: numba is
not imported, nothing is compiled. Its first call (or :meth:`Kernel.dispatcher`) imports numba and builds
``numba.njit(**options)`` of the function, with every other ``@native.jit`` function it names (as a global
name, or a closure variable) replaced by that function's own dispatcher, built first. So helpers and kernels
are written as ordinary module-level functions that call each other by name, whether they live in one module
or in several (``from ... import helper`` works); numba then compiles (or inlines, with ``inline="always"``)
the helpers into the kernel exactly as if the whole module had been decorated with ``numba.njit`` at import.

The options go to ``numba.njit`` unchanged (``inline="always"``, ``_nrt=False``, ``nogil=True``,
``cache=False`` ...), so a kernel compiles to the same code it would as a module-level ``@njit(**options)``.
Compilation is not cached on disk by the package's kernels (``cache=True`` would write ``__pycache__`` files
into the source tree); each process compiles a kernel on its first call (about a second each).

Kernels that need many arrays take them grouped, as ``typing.NamedTuple`` instances of arrays (numba passes a
tuple's fields as separate arguments, so this costs nothing per call inside compiled code).

Rules: a helper must be named as a plain global (``helper(x)``) or a closure variable, not as an attribute
(``module.helper(x)``), which numba would see as an untyped Python object; mutually recursive ``jit``
functions are refused.
"""

from __future__ import annotations

import functools
import threading
import types

__all__ = ["Kernel", "jit"]

_LOCK = threading.RLock()       # one build at a time; re-entrant, as a kernel builds its helpers first


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
        return njit(**self.options)(rebound)


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

    ``@jit(nogil=True, cache=False)``, ``@jit(inline="always")``, ``@jit(_nrt=False)``, or bare ``@jit``
    (no options). Returns a :class:`Kernel`."""
    if fn is not None:
        return Kernel(fn, options)
    return lambda f: Kernel(f, options)
