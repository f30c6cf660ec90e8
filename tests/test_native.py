"""The numba idiom of :mod:`tieringlab.native`: lazy import and compilation, helpers rebound, options passed."""

from __future__ import annotations

import subprocess
import sys
from typing import NamedTuple

import numpy as np
import pytest

from tieringlab import native


@native.jit(inline="always")
def _twice(x):
    return 2 * x


@native.jit(_nrt=False)
def _plus_one_twice(x):
    return _twice(x) + 1


@native.jit(nogil=True, cache=False)
def _kernel(a, out):
    for i in range(a.size):
        out[i] = _plus_one_twice(a[i])
    return out


class _Pair(NamedTuple):
    a: np.ndarray
    b: np.ndarray


@native.jit(nogil=True, cache=False)
def _sum_pair(state):
    a, b = state
    s = 0.0
    for i in range(a.size):
        s += a[i] * b[i]
    state.b[0] = s
    return s


def test_importing_a_module_of_kernels_neither_imports_numba_nor_compiles():
    code = ("import sys\n"
            "from tieringlab import native\n"
            "@native.jit(nogil=True)\n"
            "def f(x):\n"
            "    return x + 1\n"
            "import tieringlab.policies._arraylist, tieringlab.policies.lru, tieringlab.policies.arc\n"
            "import tieringlab.policies.car, tieringlab.policies._vfrm_kernels, tieringlab.policies._lmst_native\n"
            "import tieringlab.models.workloads._lmst_native\n"
            "assert 'numba' not in sys.modules, 'imported at import time'\n"
            "assert not f.compiled\n"
            "assert f(1) == 2 and f.compiled\n"
            "assert 'numba' in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_kernel_calls_its_helpers_compiled_with_their_options():
    out = _kernel(np.arange(4, dtype=np.int64), np.zeros(4, np.int64))
    np.testing.assert_array_equal(out, [1, 3, 5, 7])
    for k, opts in ((_twice, {"inline": "always"}), (_plus_one_twice, {"_nrt": False}),
                    (_kernel, {"nogil": True, "cache": False})):
        assert k.compiled and k.options == opts
        d = k.dispatcher()
        for key, value in opts.items():
            if key == "cache":                                 # numba keeps it apart: no on-disk cache
                assert type(d._cache).__name__ == "NullCache"
            else:
                assert d.targetoptions[key] == value, (k, key)
        assert d.py_func.__code__ is k.py_func.__code__   # the same code, only the globals rebound
    # the helpers were built first and the kernel's globals name their dispatchers, not the Kernel objects
    globs = _kernel.dispatcher().py_func.__globals__
    assert globs["_plus_one_twice"] is _plus_one_twice.dispatcher()
    assert _plus_one_twice.dispatcher().py_func.__globals__["_twice"] is _twice.dispatcher()
    assert isinstance(globals()["_twice"], native.Kernel)       # the module itself is left as written


def test_kernel_is_a_plain_function_in_python_terms():
    assert _kernel.__name__ == "_kernel" and _kernel.__module__ == __name__
    assert _kernel.__wrapped__ is _kernel.py_func
    assert _kernel.py_func(np.arange(3), np.zeros(3, np.int64)).tolist() == [1, 3, 5]   # runs uncompiled too
    assert "native.Kernel" in repr(_kernel)


def test_a_namedtuple_of_arrays_is_one_argument():
    st = _Pair(np.arange(3.0), np.ones(3))
    assert _sum_pair(st) == 3.0 and st.b[0] == 3.0


def test_closure_helpers_are_rebound_too():
    def make():
        helper = _twice

        @native.jit
        def k(x):
            return helper(x) + 10
        return k

    k = make()
    assert k.options == {}
    assert k(5) == 20


def test_mutual_recursion_is_refused():
    @native.jit
    def ping(x):
        return pong(x)

    @native.jit
    def pong(x):
        return ping(x)

    with pytest.raises(RecursionError, match="reaches itself"):
        ping(1)
